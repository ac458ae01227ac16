"""Commit metadata, typed, and its two encodings (JSON in table version 6, Avro in 8/9: a profile's
``commit_encoding``).

* :class:`WriteStat` / :class:`CommitMetadata`: frozen dataclasses of Hudi's ``HoodieWriteStat`` /
  ``HoodieCommitMetadata``, the one way the product builds commit metadata
  (:meth:`WriteStat.for_base` / :meth:`WriteStat.for_log`, keyword construction of
  :class:`CommitMetadata`); ``to_json`` gives layout 1's JSON object, ``to_avro`` layout 2's
  record, ``from_dict`` reads either back.
* :func:`commit_bytes`: the one function from a :class:`CommitMetadata` to the bytes of a
  commit file in a profile's encoding, JSON (version 6) or Avro (8/9); :func:`load_commit` back.
* Layout 2 (table versions 8/9, shared/hudi-format-v8-v9.md §2.3): every instant file is an Avro
  object container with exactly one record, codec null; an empty file is an empty object.
  :data:`COMMIT_METADATA_SCHEMA` is written here from the spec's field table (namespace
  ``org.apache.hudi.avro.model``, every field nullable with default null, ``version`` int|null=1).
* :func:`load_commit` decodes either encoding to the dict form (JSON with the checks of
  :mod:`.commit_json`, whose msgspec fast path serves planning).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass, field, fields, replace
from typing import Any, Mapping

from ..errors import InvalidTimelineError
from ..format import AVRO_COMMITS, JSON_COMMITS, FormatProfile
from .commit_json import load_commit_metadata

_NS = "org.apache.hudi.avro.model"


def _opt(t: Any) -> list:
    return ["null", t]


_STR = {"type": "string", "avro.java.string": "String"}

#: HoodieWriteStat fields in schema order: (name, Avro type without the null branch)
WRITE_STAT_FIELDS: tuple[tuple[str, Any], ...] = (
    ("fileId", _STR), ("path", _STR), ("prevCommit", _STR), ("numWrites", "long"), ("numDeletes", "long"),
    ("numUpdateWrites", "long"), ("totalWriteBytes", "long"), ("totalWriteErrors", "long"),
    ("partitionPath", _STR), ("totalLogRecords", "long"), ("totalLogFiles", "long"),
    ("totalUpdatedRecordsCompacted", "long"), ("numInserts", "long"), ("totalLogBlocks", "long"),
    ("totalCorruptLogBlock", "long"), ("totalRollbackBlocks", "long"), ("fileSizeInBytes", "long"),
    ("logVersion", "int"), ("logOffset", "long"), ("baseFile", _STR),
    ("logFiles", {"type": "array", "items": _STR, "default": None}),
    ("cdcStats", {"type": "map", "values": "long", "avro.java.string": "String", "default": None}),
    ("prevBaseFile", _STR), ("minEventTime", "long"), ("maxEventTime", "long"),
    ("runtimeStats", {"type": "record", "name": f"{_NS}.HoodieRuntimeStats", "fields": [
        {"name": n, "type": _opt("long"), "default": None}
        for n in ("totalScanTime", "totalCreateTime", "totalUpsertTime")]}),
    ("totalLogFilesCompacted", "long"), ("totalLogReadTimeMs", "long"), ("totalLogSizeCompacted", "long"),
    ("tempPath", _STR), ("numUpdates", "long"),
)

WRITE_STAT_SCHEMA = {
    "type": "record", "name": f"{_NS}.HoodieWriteStat",
    "fields": [{"name": n, "type": _opt(t), "default": None} for n, t in WRITE_STAT_FIELDS],
}

COMMIT_METADATA_SCHEMA = {
    "type": "record", "name": f"{_NS}.HoodieCommitMetadata",
    "fields": [
        {"name": "partitionToWriteStats", "default": None, "type": _opt(
            {"type": "map", "avro.java.string": "String", "values": {"type": "array", "items": WRITE_STAT_SCHEMA}})},
        {"name": "compacted", "type": _opt("boolean"), "default": None},
        {"name": "extraMetadata", "default": None, "type": _opt(
            {"type": "map", "avro.java.string": "String", "values": _STR, "default": None})},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": _opt(_STR), "default": None},
    ],
}


def _parsed():
    global _PARSED
    if _PARSED is None:
        import fastavro

        _PARSED = fastavro.parse_schema(COMMIT_METADATA_SCHEMA)
    return _PARSED


_PARSED = None


# ------------------------------------------------------------------ typed model
@dataclass(frozen=True)
class RuntimeStats:
    totalScanTime: int | None = None
    totalCreateTime: int | None = None
    totalUpsertTime: int | None = None


@dataclass(frozen=True)
class WriteStat:
    """One ``HoodieWriteStat`` (field names as in Hudi's schema and JSON)."""

    fileId: str | None = None
    path: str | None = None
    prevCommit: str | None = None
    numWrites: int | None = None
    numDeletes: int | None = None
    numUpdateWrites: int | None = None
    totalWriteBytes: int | None = None
    totalWriteErrors: int | None = None
    partitionPath: str | None = None
    totalLogRecords: int | None = None
    totalLogFiles: int | None = None
    totalUpdatedRecordsCompacted: int | None = None
    numInserts: int | None = None
    totalLogBlocks: int | None = None
    totalCorruptLogBlock: int | None = None
    totalRollbackBlocks: int | None = None
    fileSizeInBytes: int | None = None
    logVersion: int | None = None
    logOffset: int | None = None
    baseFile: str | None = None
    logFiles: tuple[str, ...] | None = None
    cdcStats: Mapping[str, int] | None = None
    prevBaseFile: str | None = None
    minEventTime: int | None = None
    maxEventTime: int | None = None
    runtimeStats: RuntimeStats | None = None
    totalLogFilesCompacted: int | None = None
    totalLogReadTimeMs: int | None = None
    totalLogSizeCompacted: int | None = None
    tempPath: str | None = None
    numUpdates: int | None = None
    #: JSON-only or product-specific keys (e.g. ``recordsStats``, ``hoodieEtcLinkTarget``): kept in
    #: layout 1's JSON, not representable in the Avro schema
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "WriteStat":
        names = _STAT_NAMES
        kw = {k: d.get(k) for k in names if k in d}
        rs = kw.get("runtimeStats")
        if isinstance(rs, Mapping):
            kw["runtimeStats"] = RuntimeStats(**{k: rs.get(k) for k in ("totalScanTime", "totalCreateTime",
                                                                     "totalUpsertTime")})
        if kw.get("logFiles") is not None:
            kw["logFiles"] = tuple(kw["logFiles"])
        return cls(**kw, extra={k: v for k, v in d.items() if k not in names})

    def to_avro(self) -> dict:
        out = {k: getattr(self, k) for k in _STAT_NAMES}
        if self.runtimeStats is not None:
            out["runtimeStats"] = dict(self.runtimeStats.__dict__)
        if self.logFiles is not None:
            out["logFiles"] = list(self.logFiles)
        if self.cdcStats is not None:
            out["cdcStats"] = dict(self.cdcStats)
        return out

    @classmethod
    def for_base(cls, *, file_size: int = 0, extra: Mapping[str, Any] | None = None, **fields_: Any) -> "WriteStat":
        """A ``HoodieWriteStat`` as our writers fill it (Hudi's field names as keywords): the
        counters 0 unless given, ``prevCommit`` Hudi's ``"null"`` when there is none,
        ``totalWriteBytes`` = ``fileSizeInBytes`` = ``file_size``, runtime stats 0 unless given."""
        kw: dict[str, Any] = {**dict.fromkeys(_ZERO_COUNTERS, 0), "totalWriteBytes": file_size,
                              "fileSizeInBytes": file_size, "runtimeStats": RuntimeStats(0, 0, 0), **fields_}
        kw["prevCommit"] = kw.get("prevCommit") or _NULL_COMMIT
        return cls(**kw, extra=dict(extra or {}))

    @classmethod
    def for_log(cls, *, logFiles: tuple[str, ...] | list[str], extra: Mapping[str, Any] | None = None,
                **fields_: Any) -> "WriteStat":
        """A ``HoodieDeltaWriteStat`` (a log file's stat), as :meth:`for_base` fills it plus
        ``logVersion`` (1 unless given), ``logOffset`` 0, ``baseFile`` ("" for none), ``logFiles``
        and the JSON-only ``recordsStats`` Java 0.14 writes."""
        kw = {"logVersion": fields_.pop("logVersion", None) or 1, "logOffset": 0,
              "baseFile": fields_.pop("baseFile", None) or "", **fields_}
        return cls.for_base(logFiles=tuple(logFiles), extra={"recordsStats": {"val": None}, **(extra or {})}, **kw)

    def updated(self, **changes: Any) -> "WriteStat":
        """A copy with ``changes``: Hudi's fields by name, any other key into :attr:`extra`."""
        own = {k: v for k, v in changes.items() if k in _STAT_NAMES}
        more = {k: v for k, v in changes.items() if k not in _STAT_NAMES}
        return replace(self, **own, extra={**self.extra, **more}) if more else replace(self, **own)

    @property
    def is_delta(self) -> bool:
        """A log file's stat (Java's ``HoodieDeltaWriteStat``): it names its log files."""
        return self.logFiles is not None

    def to_json(self) -> dict:
        """The stat as layout 1's JSON has it: Hudi 0.14's ``HoodieWriteStat`` keys in the order
        our writers have always written them (nulls included), a delta stat's keys when it names
        log files, any other schema field that is set, then :attr:`extra`."""
        out: dict[str, Any] = {k: getattr(self, k) for k in _JSON_KEYS}
        if self.is_delta:
            out.update((k, getattr(self, k)) for k in _JSON_DELTA_KEYS)
            out["logFiles"] = list(self.logFiles)
        out.update((k, v) for k in _STAT_NAMES if k not in out and (v := getattr(self, k)) is not None)
        if self.runtimeStats is not None:  # JSON order of Java's HoodieRuntimeStats
            rs = self.runtimeStats
            out["runtimeStats"] = {"totalScanTime": rs.totalScanTime, "totalUpsertTime": rs.totalUpsertTime,
                                   "totalCreateTime": rs.totalCreateTime}
        if self.cdcStats is not None:
            out["cdcStats"] = dict(self.cdcStats)
        return {**out, **self.extra}


_STAT_NAMES = tuple(n for n, _ in WRITE_STAT_FIELDS)
_NULL_COMMIT = "null"  # Hudi's HoodieWriteStat.NULL_COMMIT
#: the counters :meth:`WriteStat.for_base` starts at 0
_ZERO_COUNTERS = ("numWrites", "numDeletes", "numUpdateWrites", "numInserts", "totalWriteErrors", "totalLogRecords",
                  "totalLogFilesCompacted", "totalLogSizeCompacted", "totalUpdatedRecordsCompacted", "totalLogBlocks",
                  "totalCorruptLogBlock", "totalRollbackBlocks")
#: layout 1: the keys every stat has, in the order we write them
_JSON_KEYS = ("fileId", "path", "cdcStats", "prevCommit", "numWrites", "numDeletes", "numUpdateWrites", "numInserts",
              "totalWriteBytes", "totalWriteErrors", "tempPath", "partitionPath", "totalLogRecords",
              "totalLogFilesCompacted", "totalLogSizeCompacted", "totalUpdatedRecordsCompacted", "totalLogBlocks",
              "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes", "minEventTime", "maxEventTime",
              "runtimeStats")
#: layout 1: the keys a delta stat adds (then ``recordsStats``, from ``extra``)
_JSON_DELTA_KEYS = ("logVersion", "logOffset", "baseFile", "logFiles")


@dataclass(frozen=True)
class CommitMetadata:
    """One ``HoodieCommitMetadata``."""

    partitionToWriteStats: Mapping[str, tuple[WriteStat, ...]] = field(default_factory=dict)
    compacted: bool | None = None
    extraMetadata: Mapping[str, str] = field(default_factory=dict)
    operationType: str | None = None
    version: int | None = None
    #: JSON-only keys (e.g. ``partitionToReplaceFileIds`` of a replacecommit)
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "CommitMetadata":
        p2s = {p: tuple(WriteStat.from_dict(s) for s in stats)
               for p, stats in (d.get("partitionToWriteStats") or {}).items()}
        known = {"partitionToWriteStats", "compacted", "extraMetadata", "operationType", "version"}
        return cls(p2s, d.get("compacted"), dict(d.get("extraMetadata") or {}), d.get("operationType"),
                   d.get("version"), {k: v for k, v in d.items() if k not in known})

    def write_stats(self) -> list[WriteStat]:
        return [s for stats in self.partitionToWriteStats.values() for s in stats]

    def to_avro(self) -> dict:
        return {
            "partitionToWriteStats": {p: [s.to_avro() for s in st] for p, st in self.partitionToWriteStats.items()},
            "compacted": self.compacted,
            "extraMetadata": dict(self.extraMetadata),
            "version": self.version,
            "operationType": self.operationType,
        }

    def to_json(self) -> dict:
        """The commit as layout 1's JSON object (stats by :meth:`WriteStat.to_json`)."""
        d = {"partitionToWriteStats": {p: [s.to_json() for s in st] for p, st in self.partitionToWriteStats.items()},
             "compacted": self.compacted, "extraMetadata": dict(self.extraMetadata),
             "operationType": self.operationType}
        if self.version is not None:
            d["version"] = self.version
        return {**d, **self.extra}


# ------------------------------------------------------------------ Avro container (layout 2)
def encode_avro_commit(meta: CommitMetadata | Mapping[str, Any]) -> bytes:
    """Layout-2 bytes of a commit: an Avro object container, one record, codec null."""
    import fastavro

    if not isinstance(meta, CommitMetadata):
        meta = CommitMetadata.from_dict(meta)
    buf = io.BytesIO()
    fastavro.writer(buf, _parsed(), [meta.to_avro()], codec="null")
    return buf.getvalue()


def decode_avro_single(data: bytes, what: str = "timeline file") -> dict:
    """The one record of a single-record Avro container (an empty file is an empty object)."""
    import fastavro

    if not data:
        return {}
    try:
        records = list(fastavro.reader(io.BytesIO(data)))
    except Exception as e:  # noqa: BLE001 - fastavro raises many types on bad bytes
        raise InvalidTimelineError(f"{what} is not an Avro container: {str(e)[:200]}") from None
    if len(records) != 1:
        raise InvalidTimelineError(f"{what}: {len(records)} records in the Avro container (need exactly 1)")
    return records[0]


def decode_avro_commit(data: bytes, what: str = "commit metadata") -> dict:
    """A layout-2 commit file as the dict the JSON path gives (see :func:`.commit_json.load_commit_metadata`)."""
    rec = decode_avro_single(data, what)
    if not rec:
        return {}
    if not isinstance(rec.get("partitionToWriteStats", None) or {}, dict):
        raise InvalidTimelineError(f"{what}: partitionToWriteStats is malformed")
    rec["partitionToWriteStats"] = rec.get("partitionToWriteStats") or {}
    rec["extraMetadata"] = rec.get("extraMetadata") or {}
    return rec


def _json_commit_bytes(meta: CommitMetadata) -> bytes:
    """The JSON Java's Jackson and hudi-rs read (indent 2, :meth:`CommitMetadata.to_json`)."""
    return json.dumps(meta.to_json(), indent=2).encode("utf-8")


#: each commit encoding (a profile's ``commit_encoding``) → (encode a CommitMetadata, decode bytes
#: to the dict form): JSON with its checks (:mod:`.commit_json`), or an Avro container
_COMMIT_CODECS = {
    JSON_COMMITS: (_json_commit_bytes, load_commit_metadata),
    AVRO_COMMITS: (encode_avro_commit, decode_avro_commit),
}


def load_commit(data: bytes, profile: FormatProfile, what: str = "commit metadata") -> dict:
    """Commit metadata in ``profile``'s encoding as a dict (JSON: with its checks; Avro)."""
    return _COMMIT_CODECS[profile.commit_encoding][1](data, what)


def commit_bytes(meta: CommitMetadata, profile: FormatProfile) -> bytes:
    """The bytes of a commit file (completed, or an inflight's workload profile) in ``profile``'s
    encoding: JSON (:meth:`CommitMetadata.to_json`) or an Avro container (never JSON; keys the
    schema lacks, e.g. ``hoodieEtc*``, left out)."""
    if not isinstance(meta, CommitMetadata):
        raise TypeError(f"commit_bytes takes a CommitMetadata, not {type(meta).__name__}")
    return _COMMIT_CODECS[profile.commit_encoding][0](meta)


def stat_field_names() -> tuple[str, ...]:
    return tuple(f.name for f in fields(WriteStat) if f.name != "extra")
