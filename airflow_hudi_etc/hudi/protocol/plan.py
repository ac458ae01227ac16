"""The compaction plan file: Hudi's HoodieCompactionPlan (Avro container, one record) + link ops.

Stock Hudi readers parse it with their own schema: our extra field ``linkOperations`` on each
operation has a default, and Avro resolution drops writer fields the reader does not know.
Plan version 2 stores bare file names (shared/hudi-format.md §4, §7, pitfall 12). The schema is
:data:`.avro_models.COMPACTION_PLAN` (the one definition); this module encodes it directly.
"""

from __future__ import annotations

import io
import re
import struct
from dataclasses import dataclass, field

import fastavro

from ..timeline.avro_models import COMPACTION_PLAN, read_avro_metadata
from ..timeline.instant import read_listed
from ..errors import InvalidTimelineError, TimelineChangedError, UnsafePathError
from ..file_group.fsview import parse_base_file_name
from ..logformat import parse_log_file_name
from ..storage import safe_filename, safe_relpath

_FILE_ID = re.compile(r"[A-Za-z0-9-]+")

_SYNC = b"hudi-etc-plan-v1"  # a fixed sync marker: the same plan always has the same bytes


@dataclass(frozen=True)
class LinkOp:
    link: str  # new log file name in slice C
    target: str  # existing log file name it re-exposes (same partition)


@dataclass(frozen=True)
class Operation:
    partition: str
    file_id: str
    base_instant: str
    base_file: str | None
    compact_logs: tuple[str, ...]
    links: tuple[LinkOp, ...] = ()
    metrics: dict = field(default_factory=dict)

    def path(self, name: str) -> str:
        return f"{self.partition}/{name}" if self.partition else name


_object_new = object.__new__


def operation(partition: str, file_id: str, base_instant: str, base_file: str | None, compact_logs: tuple[str, ...],
              links: tuple[LinkOp, ...], metrics: dict) -> Operation:
    """Fast path of ``Operation(...)`` with every field given: skips the frozen-dataclass
    ``__init__`` (planning makes one per file group). The plain reference is the constructor;
    tests/hudi/test_plan_encoding.py checks both give equal operations."""
    o = _object_new(Operation)
    o.__dict__.update(partition=partition, file_id=file_id, base_instant=base_instant, base_file=base_file,
                      compact_logs=compact_logs, links=links, metrics=metrics)
    return o


class _NotEncodable(Exception):
    """A value of a type the direct encoder does not take: fastavro decides."""


def _long(n: int) -> bytes:
    """Avro ``long``: zig-zag, then base-128 varint."""
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_LONG_SMALL = [_long(i) for i in range(64)]
#: the ``long`` encodings of 0..8191 (one or two bytes): string lengths and array/map counts
_LEN_TABLE = _LONG_SMALL + [bytes(((n << 1) & 0x7F | 0x80, n >> 6)) for n in range(64, 8192)]


def _str(v) -> bytes:
    if v.__class__ is not str:
        raise _NotEncodable
    b = v.encode("utf-8")
    n = len(b)
    return (_LONG_SMALL[n] if n < 64 else _long(n)) + b


def _opt_str(v) -> bytes:
    """``["null", "string"]``."""
    return b"\x00" if v is None else b"\x02" + _str(v)


def encode_plan_fast(operations, extra: dict) -> bytes:
    """The datum of :data:`COMPACTION_PLAN` for version 2, no strategy, preserveHoodieMetadata,
    no missingSchedulePartitions.

    One pass over the operations appending byte strings to one list; a string is its UTF-8 bytes
    after their length (a ``long``), taken from a table below 8192 bytes; the encodings of values
    that repeat across operations (partitions, instants, metric keys) are remembered."""
    parts: list[bytes] = []
    add = parts.append
    lens = _LEN_TABLE
    memo: dict[str, bytes] = {}  # str → its "string" encoding, for the values that repeat
    string = str

    def enc(v) -> bytes:  # "string", remembered
        if v.__class__ is not string:
            raise _NotEncodable
        b = memo.get(v)
        if b is None:
            u = v.encode("utf-8")
            n = len(u)
            b = memo[v] = (lens[n] if n < 8192 else _long(n)) + u
        return b

    def once(v) -> bytes:  # "string" of a value that does not repeat (file names): not remembered
        if v.__class__ is not string:
            raise _NotEncodable
        u = v.encode("utf-8")
        n = len(u)
        return (lens[n] if n < 8192 else _long(n)) + u

    add(b"\x02")  # operations: the array branch
    if operations:
        add(lens[len(operations)] if len(operations) < 8192 else _long(len(operations)))
        double = _DOUBLE
        for o in operations:
            v = o.base_instant
            add(b"\x00" if v is None else b"\x02" + enc(v))
            logs = o.compact_logs
            add(b"\x02")  # deltaFilePaths: array
            if logs:
                add(lens[len(logs)] if len(logs) < 8192 else _long(len(logs)))
                for n in logs:
                    add(once(n))
            v = o.base_file
            add(b"\x00\x00" if v is None else b"\x00\x02" + once(v))  # end of deltaFilePaths; dataFilePath
            v = o.file_id
            add(b"\x00" if v is None else b"\x02" + once(v))
            v = o.partition
            add(b"\x00" if v is None else b"\x02" + enc(v))
            metrics = o.metrics
            add(b"\x02")  # metrics: map of double
            if metrics:
                add(lens[len(metrics)] if len(metrics) < 8192 else _long(len(metrics)))
                for k, v in metrics.items():
                    add(enc(k))
                    add(double(float(v)))
            add(b"\x00\x00\x02")  # end of metrics; bootstrapFilePath: null; linkOperations: array
            links = o.links
            if links:
                add(lens[len(links)] if len(links) < 8192 else _long(len(links)))
                for lk in links:
                    for v in (lk.link, lk.target):
                        add(b"\x00" if v is None else b"\x02" + once(v))
            add(b"\x00")
    add(b"\x00")  # end of operations
    add(b"\x02")  # extraMetadata: map of string
    if extra:
        add(_long(len(extra)))
        for k, v in extra.items():
            add(_str(k))
            add(_str(v))
    add(b"\x00")
    add(b"\x00\x04")  # version: the int branch, 2
    add(b"\x00")  # strategy: null
    add(b"\x00\x01")  # preserveHoodieMetadata: the boolean branch, true
    add(b"\x00")  # missingSchedulePartitions: null
    return b"".join(parts)


_DOUBLE = struct.Struct("<d").pack
_HEADER: list[bytes] = []


def _container_header() -> bytes:
    """Magic, metadata (schema, codec null) and sync marker, as fastavro writes them."""
    if not _HEADER:
        buf = io.BytesIO()
        fastavro.writer(buf, COMPACTION_PLAN, [], codec="null", sync_marker=_SYNC)
        _HEADER.append(buf.getvalue())
    return _HEADER[0]


@dataclass(frozen=True)
class CompactionPlan:
    instant: str
    operations: tuple[Operation, ...]
    extra: dict

    def to_bytes(self) -> bytes:
        """The plan file: an Avro container with one record, no compression, a fixed sync marker.
        Encoded here directly (fastavro's generic writer is the slow part of planning big
        tables); :meth:`to_bytes_reference` is the reference the tests compare with."""
        extra = {k: str(v) for k, v in self.extra.items()}
        try:
            datum = encode_plan_fast(self.operations, extra)
        except _NotEncodable:
            return self.to_bytes_reference()
        return b"".join((_container_header(), _long(1), _long(len(datum)), datum, _SYNC))

    def to_bytes_reference(self) -> bytes:
        ops = [
            {
                "baseInstantTime": o.base_instant,
                "deltaFilePaths": list(o.compact_logs),
                "dataFilePath": o.base_file,
                "fileId": o.file_id,
                "partitionPath": o.partition,
                "metrics": {k: float(v) for k, v in o.metrics.items()},
                "bootstrapFilePath": None,
                "linkOperations": [{"link": lk.link, "target": lk.target} for lk in o.links],
            }
            for o in self.operations
        ]
        rec = {"operations": ops, "extraMetadata": {k: str(v) for k, v in self.extra.items()}, "version": 2,
               "strategy": None, "preserveHoodieMetadata": True, "missingSchedulePartitions": None}
        buf = io.BytesIO()
        fastavro.writer(buf, COMPACTION_PLAN, [rec], codec="null", sync_marker=_SYNC)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, instant: str, data: bytes) -> "CompactionPlan":
        # the bounded reader: size cap, and no array of zero-size items whose count alone would
        # make fastavro build a list of billions of entries (a 100-byte file exhausting memory)
        try:
            rec = read_avro_metadata(data)
        except InvalidTimelineError as e:
            raise InvalidTimelineError(f"compaction plan {instant}: {e}") from None

        def bad(what: str) -> InvalidTimelineError:
            return InvalidTimelineError(f"compaction plan {instant}: {what}")

        raw_ops = rec.get("operations") or []
        extra = rec.get("extraMetadata") or {}
        if not isinstance(raw_ops, list) or not all(isinstance(o, dict) for o in raw_ops):
            raise bad("operations is not a list of records")
        if not isinstance(extra, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in extra.items()):
            raise bad("extraMetadata is not a map of strings")
        ops = []
        for o in raw_ops:
            try:
                part = safe_relpath(o.get("partitionPath") or "")
            except UnsafePathError as e:
                raise UnsafePathError(f"compaction plan {instant}: {e}") from None
            if part.split("/")[0] == ".hoodie":
                raise UnsafePathError(f"compaction plan {instant}: partition {part!r} is inside .hoodie")
            fid = o.get("fileId")
            if not isinstance(fid, str) or not _FILE_ID.fullmatch(fid):
                raise bad(f"an operation has no usable fileId ({fid!r})")
            base_instant = o.get("baseInstantTime") or ""
            metrics = o.get("metrics") or {}
            if not isinstance(base_instant, str) or not isinstance(metrics, dict):
                raise bad(f"operation {fid}: baseInstantTime or metrics has the wrong type")
            try:
                links = tuple(LinkOp(safe_filename(x["link"]), safe_filename(x["target"])) for x in o.get("linkOperations") or [])
                logs = tuple(safe_filename(n) for n in o.get("deltaFilePaths") or [])
                base = safe_filename(o["dataFilePath"]) if o.get("dataFilePath") else None
            except (UnsafePathError, KeyError, TypeError) as e:
                raise UnsafePathError(f"compaction plan {instant}: {e}") from None
            for name in logs + tuple(n for lk in links for n in (lk.link, lk.target)):
                p = parse_log_file_name(name)
                if p is None or p.file_id != fid:
                    raise bad(f"operation {fid}: {name!r} is not a log file of that file group")
            b = parse_base_file_name(base) if base else None
            if base and (b is None or b.file_id != fid):
                raise bad(f"operation {fid}: {base!r} is not a base file of that file group")
            ops.append(Operation(part, fid, base_instant, base, logs, links, dict(metrics)))
        return cls(instant, tuple(ops), dict(extra))


# ------------------------------------------------------------------ plans on a table's timeline
#: write token of the logs a plan re-exposes in slice C (and of the exact-split log). Java writes
#: ``partition-stage-attempt`` (Spark), ``subtask-parallelism-attempt`` (Flink) and ``1-0-1``
#: (rollback and rollover blocks): none of them has a middle 0 together with a partition id of
#: a billion minus one, so no Java file can take one of these names.
LINK_TOKEN = "999999999-0-0"
#: exact split: slice C's first log holds the merged records after the threshold
SPLIT_LOG_VERSION = 1


def read_plan(storage, instant: str, meta_dir: str | None = None) -> CompactionPlan:
    """The plan of pending or completed compaction ``instant``: ``<meta_dir>/<C>.compaction.requested``
    (``.hoodie`` in layout 1, ``.hoodie/timeline`` in layout 2). Without ``meta_dir``: layout 1's
    file, else layout 2's default folder."""
    if meta_dir is not None:
        return CompactionPlan.from_bytes(instant, storage.read_bytes(f"{meta_dir}/{instant}.compaction.requested"))
    try:
        data = storage.read_bytes(f".hoodie/{instant}.compaction.requested")
    except FileNotFoundError:
        data = storage.read_bytes(f".hoodie/timeline/{instant}.compaction.requested")
    return CompactionPlan.from_bytes(instant, data)


def pending_plan_groups(storage, pending_instants, meta_dir: str | None = None,
                        timeline=None) -> dict[tuple[str, str], str]:
    """(partition, fileId) → instant of the pending compaction that plans it: new logs of such a
    file group belong to slice C. An unreadable or missing plan is refused, never guessed around;
    one ``timeline``'s listing held is a :class:`TimelineChangedError` (the table changed)."""
    out: dict[tuple[str, str], str] = {}
    for ts in pending_instants:
        try:
            if timeline is not None and meta_dir is not None:
                plan = CompactionPlan.from_bytes(ts, read_listed(storage, f"{meta_dir}/{ts}.compaction.requested",
                                                                 timeline))
            else:
                plan = read_plan(storage, ts, meta_dir)
        except TimelineChangedError:
            raise
        except FileNotFoundError:
            raise InvalidTimelineError(f"compaction plan {ts} is missing") from None
        for op in plan.operations:
            out[(op.partition, op.file_id)] = ts
    return out
