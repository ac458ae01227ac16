"""The contract with Java Hudi on a shared table (shared/java-coexistence.md).

Every mutating command (write, schedule, execute, rollback, unschedule, clean) first calls
:func:`check_writable`, which refuses, before anything is written:

* **a symbolic link anywhere under ``.hoodie/``** (``.temp/<instant>``, ``.heartbeat``, ``.aux``,
  ``archived``, ``metadata``, ...): markers, heartbeats and the metadata folder are removed by
  these commands, and a planted link would carry the removal out of the table (typed
  ``unsafe_path``; :func:`require_no_links_under_meta`). The storage layer refuses a change
  through a linked folder as well (:meth:`~airflow_hudi_etc.hudi.storage.Storage.check_no_links`).
* **a metadata table** (MDT): ``hoodie.table.metadata.partitions`` or ``...partitions.inflight``
  non-empty, or a ``.hoodie/metadata`` folder. Java writers list files through it and never
  re-sync, so anything we write, compact or clean would be invisible to them or deleted under
  them (§1). :func:`drop_metadata_table` removes it exactly as a Java writer does when
  ``hoodie.metadata.enable=false`` (§1.4).
* **a timeline time zone we cannot reproduce**: Java makes instants in
  ``hoodie.table.timeline.timezone`` (absent means LOCAL: the JVM's zone). Instants must sort
  after every Java instant, so we write in the table's zone: UTC when the table says so, else the
  Java writers' JVM zone as ``hudi-etc configure --timeline-zone`` recorded it in
  ``hoodie.etc.timeline.zone`` (``HUDI_ETC_TIMELINE_TIMEZONE`` overrides it); without either the
  table is refused (§6.3). Instant times are read back in the same zone (:func:`timeline_zone`).
* **a key generator we cannot reproduce**: simple, non-partitioned, complex (several key
  fields: ``f1:v1,f2:v2``; several partition fields joined by ``/``) and timestamp-based (its
  ``hoodie.keygen.timebased.*`` settings read from ``hoodie.properties``; the common
  ``SimpleDateFormat`` letters) are honoured; everything else (custom, a complex generator with a
  single key field, whose encoding differs between Hudi releases) is refused, since keys or
  partition paths written differently would be duplicates (§6.5).

Symlink link mode is only safe when no Java cleaner runs on the table (§5.1): ``auto`` picks
copies unless the table carries ``hoodie.etc.exclusive.cleaner=true`` (see :func:`symlinks_allowed`).
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import dataclass
from typing import Mapping

from ..etc_keys import EXCLUSIVE_CLEANER, TIMELINE_ZONE as K_TIMELINE_ZONE
from ..errors import InvalidInputError, InvalidPropertiesError, MetadataTablePresentError, UnsupportedFeatureError
from ..config.properties import BACKUP_FILE, PROPERTIES_FILE, TableConfig, dumps, loads, read_table_properties
from ..format import PROFILES

from ..concurrency.jvm_metadata import K_INFLIGHT as K_MDT_INFLIGHT, K_PARTITIONS as K_MDT_PARTITIONS, MDT_DIR
from ..concurrency.jvm_metadata import folder_exists, split_partitions
K_TIMEZONE = "hoodie.table.timeline.timezone"
K_KEYGEN = "hoodie.table.keygenerator.class"
K_KEYGEN_TYPE = "hoodie.table.keygenerator.type"
#: ``hoodie.table.keygenerator.type`` (KeyGeneratorType) → the class it stands for
_KEYGEN_TYPES = {"SIMPLE": "SimpleKeyGenerator", "NON_PARTITION": "NonpartitionedKeyGenerator",
                 "COMPLEX": "ComplexKeyGenerator", "TIMESTAMP": "TimestampBasedKeyGenerator"}
K_EXCLUSIVE_CLEANER = EXCLUSIVE_CLEANER
#: the Java writers' JVM time zone, for tables whose timeline zone is LOCAL (or unset)
TIMEZONE_ENV = "HUDI_ETC_TIMELINE_TIMEZONE"


# ------------------------------------------------------------------------ metadata table
@dataclass(frozen=True)
class MetadataTableState:
    partitions: tuple[str, ...]
    inflight: tuple[str, ...]
    folder: bool

    @property
    def present(self) -> bool:
        return bool(self.partitions or self.inflight or self.folder)

    def as_dict(self) -> dict:
        return {"present": self.present, "partitions": list(self.partitions),
                "inflight_partitions": list(self.inflight), "folder": self.folder}


def metadata_table_state(storage, config: TableConfig) -> MetadataTableState:
    return MetadataTableState(split_partitions(config.raw.get(K_MDT_PARTITIONS)),
                              split_partitions(config.raw.get(K_MDT_INFLIGHT)), folder_exists(storage))


def require_no_links_under_meta(storage) -> None:
    """Refuse (``unsafe_path``) a table with a symbolic link anywhere under ``.hoodie/``."""
    from ..errors import UnsafePathError

    links = storage.links_below(".hoodie")
    if links:
        shown = ", ".join(links[:5]) + (f" and {len(links) - 5} more" if len(links) > 5 else "")
        raise UnsafePathError(f"{shown}: a symbolic link under .hoodie/; hudi-etc never follows one out of the "
                              f"table (nothing was written). Remove the link (and restore the folder) first")


def update_table_properties(storage, updates: Mapping[str, str]) -> dict[str, str]:
    """Rewrite ``hoodie.properties`` as Hudi's ``HoodieTableConfig.modify`` does: finish a
    leftover backup, back the current file up, replace it, verify it reads back with its
    checksum, then drop the backup. Returns the new properties."""
    from ..config.properties import TableConfig as _TC

    props, source = read_table_properties(storage, with_source=True)
    if source == BACKUP_FILE:  # a crash mid-update (or a Java rewrite under way): the backup is the table's
        storage.write_atomic(PROPERTIES_FILE, dumps(props, comment="Recovered by airflow-hudi-etc").encode("utf-8"))
    old = storage.read_bytes(PROPERTIES_FILE)
    new = {**props, **updates}
    _TC.from_properties(new)  # still a valid config (checksum of the unchanged name included)
    storage.write_atomic(BACKUP_FILE, old)
    storage.write_atomic(PROPERTIES_FILE, dumps(new, comment="Updated by airflow-hudi-etc").encode("utf-8"))
    back = loads(storage.read_text(PROPERTIES_FILE))
    if any(back.get(k) != v for k, v in updates.items()):
        raise InvalidPropertiesError("hoodie.properties did not read back as written; the backup is kept")
    _TC.from_properties(back)
    storage.delete(BACKUP_FILE)
    return back


def drop_metadata_table(storage) -> dict:
    """Drop the metadata table as a Java writer with ``hoodie.metadata.enable=false`` does:
    properties first (both partition lists set empty), then the ``.hoodie/metadata`` folder.
    Idempotent; a crash between the two is finished by the next run (Hudi would not)."""
    from ..config.properties import load_table_config

    from ..timeline.active import Action, Timeline

    config = load_table_config(storage)
    timeline = Timeline.load(storage, config)  # a half-upgraded table is refused first (spec §8)
    require_no_links_under_meta(storage)  # .hoodie/metadata a link: never removed through it
    st = metadata_table_state(storage, config)
    if st.present:
        building = [i.timestamp for i in timeline.instants
                    if i.action is Action.INDEXING and i.is_pending]
        if building:
            raise MetadataTablePresentError(
                f"an indexing instant is pending ({', '.join(building)}): a Java writer is building metadata-table "
                f"indexes; let it finish (or roll it back) before dropping the metadata table")
    props_changed = bool(st.partitions or st.inflight)
    if props_changed:
        update_table_properties(storage, {K_MDT_PARTITIONS: "", K_MDT_INFLIGHT: ""})
    removed = 0
    if st.folder:
        removed = storage.delete_tree(MDT_DIR)
    return {"status": "dropped" if st.present else "no metadata table", "before": st.as_dict(),
            "properties_updated": props_changed, "files_removed": removed}


# ------------------------------------------------------------------------ time zone
def zone_named(name: str, where: str) -> _dt.tzinfo:
    """The ``tzinfo`` of an IANA zone name (``UTC``, ``Europe/Paris``); ``where`` names the
    source in the typed error of an unknown one."""
    name = (name or "").strip()
    if name.upper() == "UTC":
        return _dt.timezone.utc
    try:
        from zoneinfo import ZoneInfo

        if not name or name.startswith("/") or ".." in name:
            raise ValueError(name)
        return ZoneInfo(name)
    except Exception:
        raise UnsupportedFeatureError(f"{where}={name!r} is not a known time zone (an IANA name such as "
                                      f"UTC or Europe/Paris)") from None


def timeline_zone_source(config: TableConfig) -> tuple[_dt.tzinfo | None, str | None]:
    """(zone, where it comes from) of the table's instant times, or (None, None) when unknown:

    1. ``hoodie.table.timeline.timezone=UTC`` → UTC (``"table"``): Java writes UTC then;
    2. else (LOCAL or unset: the Java writers' JVM zone) ``$HUDI_ETC_TIMELINE_TIMEZONE`` (``"env"``)
       — it wins over the recorded zone, to correct a wrong record without writing the table;
    3. else the zone ``hudi-etc configure --timeline-zone`` recorded in ``hoodie.etc.timeline.zone``
       (``"recorded"``)."""
    tz = (config.raw.get(K_TIMEZONE) or "LOCAL").strip()
    if tz.upper() == "UTC":
        return _dt.timezone.utc, "table"
    override = os.environ.get(TIMEZONE_ENV, "").strip()
    if override:
        return zone_named(override, TIMEZONE_ENV), "env"
    recorded = str(config.raw.get(K_TIMELINE_ZONE) or "").strip()
    if recorded:
        return zone_named(recorded, K_TIMELINE_ZONE), "recorded"
    return None, None


def timeline_zone(config: TableConfig) -> _dt.tzinfo:
    """The zone of the table's instant times, the one new instants are made in and every instant
    time is read in (:func:`timeline_zone_source`); a typed refusal when it is unknown."""
    zone, _ = timeline_zone_source(config)
    if zone is None:
        tz = (config.raw.get(K_TIMEZONE) or "LOCAL").strip()
        raise UnsupportedFeatureError(
            f"the table's timeline time zone is {tz} ({K_TIMEZONE} "
            f"{'unset: Java uses the JVM zone' if K_TIMEZONE not in config.raw else 'is ' + tz}): instants we "
            f"make must sort after the Java writers'. Record the Java writers' JVM time zone once with "
            f"`hudi-etc configure --path P --timeline-zone ZONE` (e.g. UTC or Europe/Paris), or set "
            f"{TIMEZONE_ENV}, or set {K_TIMEZONE}=UTC on the table and its writers")
    return zone


def known_timeline_zone(config: TableConfig) -> _dt.tzinfo | None:
    """:func:`timeline_zone`, or None when it is unknown (for reads that can go without it)."""
    return timeline_zone_source(config)[0]


# ------------------------------------------------------------------------ key generators
_SIMPLE = {"SimpleKeyGenerator", "SimpleAvroKeyGenerator"}
_NONPART = {"NonpartitionedKeyGenerator", "NonpartitionedAvroKeyGenerator"}
_COMPLEX = {"ComplexKeyGenerator", "ComplexAvroKeyGenerator"}
_TIMESTAMP = {"TimestampBasedKeyGenerator", "TimestampBasedAvroKeyGenerator"}


@dataclass(frozen=True)
class KeyGen:
    """How record keys and partition paths are made from a record (see the module docstring)."""

    kind: str  # simple | nonpartitioned | complex | timestamp
    key_fields: tuple[str, ...]
    partition_fields: tuple[str, ...]
    timestamp: "TimestampPartitioning | None" = None

    @property
    def composite_key(self) -> bool:
        return self.kind == "complex" or len(self.key_fields) > 1


def key_generator(config: TableConfig) -> KeyGen:
    cls = (config.raw.get(K_KEYGEN) or config.raw.get("hoodie.datasource.write.keygenerator.class") or "").strip()
    if not cls and config.raw.get(K_KEYGEN_TYPE):  # v8/v9 write only the type (spec §1.1)
        kt = config.raw[K_KEYGEN_TYPE].strip().upper()
        cls = _KEYGEN_TYPES.get(kt, "")
        if not cls:
            raise UnsupportedFeatureError(
                f"key generator type {kt}: this release reproduces SIMPLE, NON_PARTITION, COMPLEX and TIMESTAMP only; "
                f"keys made differently would duplicate the table's")
    short = cls.rsplit(".", 1)[-1]
    kf, pf = config.record_key_fields, config.partition_fields
    if not short:  # our own tables before this property was honoured, and Java's defaults
        short = "SimpleKeyGenerator" if pf else "NonpartitionedKeyGenerator"
    if short in _NONPART:
        if pf:
            raise UnsupportedFeatureError(f"{cls} with partition fields {','.join(pf)}: not a valid table")
        return KeyGen("nonpartitioned", kf, ())
    if short in _SIMPLE:
        if len(kf) != 1 or len(pf) > 1:
            raise UnsupportedFeatureError(f"{cls} takes one record key field and at most one partition field; "
                                          f"the table has keys {','.join(kf)} and partitions {','.join(pf)}")
        return KeyGen("simple", kf, pf)
    if short in _COMPLEX:
        if len(kf) == 1:
            raise UnsupportedFeatureError(
                f"{cls} with a single record key field: Hudi 0.14/0.15 encode such keys differently by write "
                f"path (with or without the field name, HUDI-9666), so keys written here could duplicate "
                f"existing ones; not supported")
        return KeyGen("complex", kf, pf)
    if short in _TIMESTAMP:
        if len(kf) != 1 or len(pf) != 1:
            raise UnsupportedFeatureError(f"{cls} takes one record key field and one partition field")
        return KeyGen("timestamp", kf, pf, timestamp_partitioning(config))
    raise UnsupportedFeatureError(
        f"key generator {cls}: this release reproduces simple, non-partitioned, complex (several key "
        f"fields) and timestamp-based key generators only; keys made differently would duplicate the table's")


# ------------------------------------------------------------------------ timestamp key generator
_TS_TYPES = {"EPOCHMILLISECONDS": 1, "UNIX_TIMESTAMP": 1000, "EPOCHMICROSECONDS": 0.001, "DATE_STRING": None}
_JAVA_TOKENS = (("yyyy", "%Y"), ("SSS", "%f"), ("yy", "%y"), ("MM", "%m"), ("dd", "%d"), ("HH", "%H"),
                ("mm", "%M"), ("ss", "%S"), ("Z", "%z"), ("X", "%z"))


def java_date_format(fmt: str, *, parsing: bool) -> str:
    """A Java ``SimpleDateFormat`` pattern of the common tokens as a ``strftime``/``strptime``
    format; anything else is refused (a partition path made differently would split keys)."""
    out, i = [], 0
    while i < len(fmt):
        if fmt[i] == "'":
            j = fmt.index("'", i + 1) if "'" in fmt[i + 1:] else -1
            if j < 0:
                raise UnsupportedFeatureError(f"date format {fmt!r}: unbalanced quote")
            out.append(fmt[i + 1:j].replace("%", "%%") or "'")
            i = j + 1
            continue
        for tok, py in _JAVA_TOKENS:
            if fmt.startswith(tok, i):
                if (tok == "SSS" or tok in ("Z", "X")) and not parsing:
                    raise UnsupportedFeatureError(f"output date format {fmt!r}: {tok} is not supported")
                out.append(py)
                i += len(tok)
                break
        else:
            c = fmt[i]
            if c.isalpha():
                raise UnsupportedFeatureError(f"date format {fmt!r}: pattern letter {c!r} is not supported")
            out.append(c.replace("%", "%%"))
            i += 1
    return "".join(out)


@dataclass(frozen=True)
class TimestampPartitioning:
    """``TimestampBasedKeyGenerator``'s partition path: the field's time in ``output_format``."""

    ts_type: str
    output_format: str  # strftime
    input_format: str | None  # strptime (DATE_STRING)
    output_zone: _dt.tzinfo

    def values(self, col) -> list[str]:
        import pyarrow as pa
        import pyarrow.compute as pc

        out = []
        unit = _TS_TYPES[self.ts_type]
        for v in col.to_pylist():
            if v is None:
                raise InvalidInputError("the timestamp partition field has null values")
            if isinstance(v, _dt.datetime):
                t = v if v.tzinfo else v.replace(tzinfo=_dt.timezone.utc)
            elif unit is None:
                try:
                    t = _dt.datetime.strptime(str(v), self.input_format)
                except ValueError:
                    raise InvalidInputError(f"partition value {v!r} does not match the table's input date format") from None
                t = t if t.tzinfo else t.replace(tzinfo=_dt.timezone.utc)
            else:
                t = _dt.datetime.fromtimestamp(int(v) * unit / 1000, _dt.timezone.utc)
            out.append(t.astimezone(self.output_zone).strftime(self.output_format))
        return out


def timestamp_partitioning(config: TableConfig) -> TimestampPartitioning:
    raw = config.raw
    ts_type = (raw.get("hoodie.keygen.timebased.timestamp.type") or "").strip().upper()
    out_fmt = raw.get("hoodie.keygen.timebased.output.dateformat") or ""
    if ts_type not in _TS_TYPES or not out_fmt:
        raise UnsupportedFeatureError(
            "TimestampBasedKeyGenerator: the table's hoodie.properties must name "
            "hoodie.keygen.timebased.timestamp.type (EPOCHMILLISECONDS, UNIX_TIMESTAMP, EPOCHMICROSECONDS or "
            "DATE_STRING) and hoodie.keygen.timebased.output.dateformat; without them the partition paths "
            "Java makes cannot be reproduced")
    in_fmt = raw.get("hoodie.keygen.timebased.input.dateformat") or ""
    if ts_type == "DATE_STRING" and (not in_fmt or "," in in_fmt):
        raise UnsupportedFeatureError("TimestampBasedKeyGenerator DATE_STRING needs one "
                                      "hoodie.keygen.timebased.input.dateformat")
    zone_name = (raw.get("hoodie.keygen.timebased.output.timezone") or raw.get("hoodie.keygen.timebased.timezone")
                 or "UTC").strip()
    try:
        from zoneinfo import ZoneInfo

        zone = _dt.timezone.utc if zone_name.upper() in ("UTC", "GMT") else ZoneInfo(zone_name)
    except Exception:
        raise UnsupportedFeatureError(f"TimestampBasedKeyGenerator time zone {zone_name!r} is not known") from None
    return TimestampPartitioning(ts_type, java_date_format(out_fmt, parsing=False),
                                 java_date_format(in_fmt, parsing=True) if in_fmt else None, zone)


# ------------------------------------------------------------------------ link mode
def symlinks_allowed(config: TableConfig) -> bool:
    if config.profile.reexposed_logs_are_copies:  # v8/v9 (spec §3.6)
        return False
    return str(config.raw.get(K_EXCLUSIVE_CLEANER, "")).strip().lower() == "true"


# ------------------------------------------------------------------------ the guard
#: table versions the mutating commands (write, schedule, execute, rollback, clean) support: those
#: whose profile says ``writable``
WRITABLE_TABLE_VERSIONS = frozenset(v for v, p in PROFILES.items() if p.writable)


def require_reproduced_payload(config: TableConfig) -> None:
    """Version 6: the payload class in ``hoodie.compaction.payload.class`` decides how Java merges
    an update with the older value. Only ``OverwriteWithLatestAvroPayload`` and
    ``DefaultHoodieRecordPayload`` are merged as Java merges them; any other
    (``PartialUpdateAvroPayload``, ``OverwriteNonDefaultsWithLatestAvroPayload``, the Debezium and
    AWS DMS payloads, a user's own) is refused (``unsupported_feature``, nothing written): merged
    as the default, ``execute`` would write values Java keeps into the base file,
    where every reader would lose them."""
    from ..config.properties import DEFAULT_PAYLOAD, OVERWRITE_LATEST_PAYLOAD

    if config.profile.merge_modes:  # v8/v9: merge modes, refused by the table config
        return
    if config.payload_class not in (OVERWRITE_LATEST_PAYLOAD, DEFAULT_PAYLOAD):
        raise UnsupportedFeatureError(
            f"hoodie.compaction.payload.class={config.payload_class}: hudi-etc merges "
            "OverwriteWithLatestAvroPayload and DefaultHoodieRecordPayload exactly as Java does, and no other "
            "payload (its merge would differ from Java's, and execute would write that into the base file); "
            "nothing was written. Let Java compact this table")


def check_writable(storage, config: TableConfig) -> None:
    """Refuse, before anything is written, a table a mutating command must not touch."""
    require_no_links_under_meta(storage)
    # a metadata table is kept exact by Hudi's own writer in a Spark-hosted run; refused otherwise
    from ..concurrency.jvm_metadata import require_writable

    require_writable(storage, dict(config.raw))
    if not config.profile.writable:
        from ..errors import UnsupportedTableVersionError

        raise UnsupportedTableVersionError(
            f"table version {config.version}: reading is supported, writing v8/v9 is not wired yet "
            f"(this release writes table version {', '.join(map(str, sorted(WRITABLE_TABLE_VERSIONS)))} only)")
    require_reproduced_payload(config)
    timeline_zone(config)
