"""``hoodie.properties``: Java properties encoding and the table configuration.

The file is written by ``java.util.Properties.store``: ``key=value`` lines, ``#`` comments,
backslash escapes for ``: = # !`` and ``\\``, ``\\uXXXX`` for non-ASCII. Hudi validates
``hoodie.table.checksum`` = CRC32 of ``"<database>.<table>"`` when present (shared/hudi-format.md §5).
"""

from __future__ import annotations

import datetime as _dt
import json
import time
from dataclasses import dataclass, field
from typing import Mapping

from ..errors import (
    InvalidPropertiesError,
    TableNotFoundError,
    UnsupportedFeatureError,
    UnsupportedTableTypeError,
    UnsupportedTableVersionError,
)
from ..format import PROFILES, V6, FormatProfile, profile_of_properties
from ..format.keys import (  # the hoodie.properties vocabulary, also reachable from here
    COMMIT_TIME_ORDERING, CUSTOM_MERGE, DEFAULT_HISTORY_PATH, DEFAULT_MERGER_STRATEGY, DEFAULT_PAYLOAD,
    DEFAULT_TIMELINE_PATH, EVENT_TIME_FIELD_KEY, EVENT_TIME_ORDERING, HISTORY_PATH_KEY, HUDI_EVENT_TIME_FIELD_KEY,
    KEYGEN_TYPE_KEY, MERGE_MODE_KEY, MERGE_STRATEGY_KEYS, META_FOLDER, ORDERING_FIELDS_KEY, OVERWRITE_LATEST_PAYLOAD,
    PARTIAL_UPDATE_MODE_KEY, PRECOMBINE_KEY, STRATEGY_MODES, TIMELINE_PATH_KEY, URLENCODE_KEY, table_checksum,
)

PROPERTIES_FILE = ".hoodie/hoodie.properties"
BACKUP_FILE = ".hoodie/hoodie.properties.backup"

PAYLOAD_ALIASES = {"overwrite-latest": OVERWRITE_LATEST_PAYLOAD, "event-time-ordering": DEFAULT_PAYLOAD}


# --------------------------------------------------------------------------- codec
def _unescape(s: str) -> str:
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        i += 1
        if i >= n:
            break
        c = s[i]
        if c == "u":
            hexdigits = s[i + 1 : i + 5]
            if len(hexdigits) != 4:
                raise InvalidPropertiesError(f"malformed \\u escape: {s[i - 1 : i + 5]!r}")
            try:
                out.append(chr(int(hexdigits, 16)))
            except ValueError:
                raise InvalidPropertiesError(f"malformed \\u escape: \\u{hexdigits}") from None
            i += 5
            continue
        out.append({"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c))
        i += 1
    return "".join(out)


def loads(text: str) -> dict[str, str]:
    """Parse Java properties text (logical lines, continuations, both separators)."""
    props: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].lstrip(" \t\f")
        i += 1
        if not line or line[0] in "#!":
            continue
        # continuation: odd number of trailing backslashes
        while True:
            k = len(line) - len(line.rstrip("\\"))
            if k % 2 == 1 and i < len(lines):
                line = line[:-1] + lines[i].lstrip(" \t\f")
                i += 1
            else:
                break
        # split key / value at the first unescaped '=', ':' or whitespace
        j, n = 0, len(line)
        while j < n:
            c = line[j]
            if c == "\\":
                j += 2
                continue
            if c in "=: \t\f":
                break
            j += 1
        key = line[:j]
        rest = line[j:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        props[_unescape(key)] = _unescape(rest)
    return props


def _escape(s: str, is_key: bool) -> str:
    out: list[str] = []
    for idx, c in enumerate(s):
        o = ord(c)
        if c == "\\":
            out.append("\\\\")
        elif c in "=:#!":
            out.append("\\" + c)
        elif c == " " and (is_key or idx == 0):
            out.append("\\ ")
        elif c == "\t":
            out.append("\\t")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\f":
            out.append("\\f")
        elif o < 0x20 or o > 0x7E:
            if o > 0xFFFF:  # Java chars are UTF-16 code units
                b = c.encode("utf-16-be")
                out.append("\\u%04X\\u%04X" % (int.from_bytes(b[:2], "big"), int.from_bytes(b[2:], "big")))
            else:
                out.append("\\u%04X" % o)
        else:
            out.append(c)
    return "".join(out)


def dumps(props: Mapping[str, str], comment: str | None = "Updated by airflow-hudi-etc") -> str:
    """Serialise like ``Properties.store`` (sorted keys, for stable diffs)."""
    lines = []
    if comment:
        lines.append("#" + comment)
    lines.append("#" + _dt.datetime.now(_dt.timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y"))
    for k in sorted(props):
        lines.append(f"{_escape(k, True)}={_escape(str(props[k]), False)}")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- table config
@dataclass(frozen=True)
class TableConfig:
    """The parts of ``hoodie.properties`` this product relies on, validated."""

    name: str
    table_type: str
    version: int
    record_key_fields: tuple[str, ...]
    precombine_field: str | None
    partition_fields: tuple[str, ...]
    payload_class: str
    event_time_field: str | None
    hive_style_partitioning: bool
    create_schema: dict | None
    database: str | None
    raw: Mapping[str, str] = field(repr=False, default_factory=dict)
    #: folder of the active timeline: ``.hoodie`` (layout 1) or ``.hoodie/<hoodie.timeline.path>``
    timeline_dir: str = ".hoodie"
    #: folder of the LSM archived timeline (layout 2), else None
    history_dir: str | None = None
    #: ordering fields (v9 ``hoodie.table.ordering.fields``, else ``hoodie.table.precombine.field``)
    ordering_fields: tuple[str, ...] = ()
    #: EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING (v8/v9); None for v6 (payload-based)
    merge_mode: str | None = None
    #: ``hoodie.table.keygenerator.type`` (v8/v9) when present, else None
    key_generator_type: str | None = None
    #: ``hoodie.datasource.write.partitionpath.urlencode``: partition values stored escaped as
    #: Hudi's ``escapePathName`` escapes them (Java records its writer's setting there)
    partition_urlencode: bool = False

    @property
    def profile(self) -> FormatProfile:
        """The format profile of the table's version: what differs between versions is asked of it."""
        return PROFILES[self.version]

    @property
    def layout_version(self) -> int:
        """The table's timeline layout (``hoodie.timeline.layout.version``, of its profile)."""
        return self.profile.timeline_layout

    @property
    def record_key_field(self) -> str:
        return self.record_key_fields[0]

    @property
    def event_time_ordering(self) -> bool:
        """True for DefaultHoodieRecordPayload-style merging (base kept if its ordering is larger)."""
        return self.payload_class != OVERWRITE_LATEST_PAYLOAD

    @property
    def deletes_compare_base(self) -> bool:
        """Hudi 1.x EVENT_TIME_ORDERING (table versions 8/9): a delete with a real ordering value
        is compared with the base record too, which stays when its value is larger (spec v8-v9
        §1.2); on version 6 a delete in the logs always removes the key."""
        return self.profile.deletes_compare_base and self.merge_mode == EVENT_TIME_ORDERING

    @property
    def partitioned(self) -> bool:
        return bool(self.partition_fields)

    @classmethod
    def from_properties(cls, props: Mapping[str, str], *, require_mor: bool = True) -> "TableConfig":
        for k in ("hoodie.table.name", "hoodie.table.type"):
            if not props.get(k):
                raise InvalidPropertiesError(f"hoodie.properties lacks {k}")
        profile = profile_of_properties(props)
        ttype = props["hoodie.table.type"].upper()
        if ttype in ("COW",):
            ttype = "COPY_ON_WRITE"
        if ttype in ("MOR",):
            ttype = "MERGE_ON_READ"
        if require_mor and ttype != "MERGE_ON_READ":
            raise UnsupportedTableTypeError(
                f"table type {ttype}: event-time compaction needs a MERGE_ON_READ table"
            )
        if props.get("hoodie.table.checksum"):
            want = table_checksum(props["hoodie.table.name"], props.get("hoodie.database.name"))
            if props["hoodie.table.checksum"].strip() != str(want):
                raise InvalidPropertiesError(
                    f"hoodie.table.checksum {props['hoodie.table.checksum']} != {want} "
                    f"(CRC32 of database.table name)"
                )
        rk = tuple(f.strip() for f in props.get("hoodie.table.recordkey.fields", "").split(",") if f.strip())
        if not rk:
            raise InvalidPropertiesError("hoodie.properties lacks hoodie.table.recordkey.fields")
        # v8+: CUSTOM key generators may type each partition field ("city:simple"); readers strip it
        pf = tuple(f.strip().split(":", 1)[0] for f in props.get("hoodie.table.partition.fields", "").split(",")
                   if f.strip())
        schema = None
        if props.get("hoodie.table.create.schema"):
            try:
                schema = json.loads(props["hoodie.table.create.schema"])
            except ValueError:
                raise InvalidPropertiesError("hoodie.table.create.schema is not valid JSON") from None
        ordering = ordering_fields(props)
        payload = props.get("hoodie.compaction.payload.class")
        mode = None
        precombine = props.get(PRECOMBINE_KEY) or None
        if profile.merge_modes:
            mode = merge_mode(props, ordering)
            # the payload that stands for the merge mode (v9 drops the key for built-in payloads)
            payload = DEFAULT_PAYLOAD if mode == EVENT_TIME_ORDERING else OVERWRITE_LATEST_PAYLOAD
            precombine = ordering[0] if ordering else None
        return cls(
            name=props["hoodie.table.name"],
            table_type=ttype,
            version=profile.table_version,
            record_key_fields=rk,
            precombine_field=precombine,
            partition_fields=pf,
            payload_class=payload or OVERWRITE_LATEST_PAYLOAD,
            event_time_field=props.get(EVENT_TIME_FIELD_KEY) or props.get(HUDI_EVENT_TIME_FIELD_KEY) or None,
            hive_style_partitioning=props.get("hoodie.datasource.write.hive_style_partitioning", "false").lower()
            == "true",
            create_schema=schema,
            database=props.get("hoodie.database.name") or None,
            raw=dict(props),
            timeline_dir=profile.timeline_dir(props),
            history_dir=profile.history_dir(props),
            ordering_fields=ordering,
            merge_mode=mode,
            key_generator_type=(props.get(KEYGEN_TYPE_KEY) or "").strip().upper() or None,
            partition_urlencode=props.get(URLENCODE_KEY, "false").strip().lower() == "true",
        )


# --------------------------------------------------------------------------- merge settings
def ordering_fields(props: Mapping[str, str]) -> tuple[str, ...]:
    """Ordering (precombine) fields: v9's ``hoodie.table.ordering.fields``, else the v6/v8 key."""
    raw = props.get(ORDERING_FIELDS_KEY) or props.get(PRECOMBINE_KEY) or ""
    return tuple(f.strip() for f in raw.split(",") if f.strip())


def merge_mode(props: Mapping[str, str], ordering: tuple[str, ...] | None = None) -> str:
    """The v8/v9 merge mode (spec §1.2): ``hoodie.record.merge.mode``, else from the merge strategy
    id, else EVENT_TIME when an ordering field is set (COMMIT_TIME otherwise). CUSTOM and partial
    updates are refused (:class:`UnsupportedFeatureError`)."""
    ordering = ordering_fields(props) if ordering is None else ordering
    mode = (props.get(MERGE_MODE_KEY) or "").strip().upper()
    if not mode:
        sid = next((props[k].strip() for k in MERGE_STRATEGY_KEYS if props.get(k)), "")
        mode = STRATEGY_MODES.get(sid, "") if sid else ""
        if sid and not mode:
            mode = CUSTOM_MERGE
    if not mode:
        mode = EVENT_TIME_ORDERING if ordering else COMMIT_TIME_ORDERING
    if mode == CUSTOM_MERGE:
        raise UnsupportedFeatureError(
            "hoodie.record.merge.mode=CUSTOM (a custom merger or payload class): this release merges with "
            "EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING only")
    if mode not in (EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING):
        raise InvalidPropertiesError(f"{MERGE_MODE_KEY}={mode!r} is not a Hudi merge mode")
    partial = (props.get(PARTIAL_UPDATE_MODE_KEY) or "NONE").strip().upper()
    if partial != "NONE":
        raise UnsupportedFeatureError(f"{PARTIAL_UPDATE_MODE_KEY}={partial}: partial updates are not supported")
    if mode == EVENT_TIME_ORDERING and not ordering:
        raise InvalidPropertiesError("EVENT_TIME_ORDERING without an ordering field")
    if len(ordering) > 1:
        raise UnsupportedFeatureError(f"several ordering fields ({','.join(ordering)}) are not supported")
    return mode


#: rounds over (``hoodie.properties``, its backup) while the pair changes under the read (Java's
#: ``fetchConfigs``: MAX_READ_RETRIES 5), and the pause before the third and later rounds
READ_ROUNDS = 5
ROUND_PAUSE_S = 0.1
REQUIRED_KEYS = ("hoodie.table.name", "hoodie.table.type")


def _checksum_fault(props: Mapping[str, str]) -> str | None:
    """Java's check of a properties file that carries ``hoodie.table.checksum`` (``fetchConfigs`` →
    ``validateChecksum``: a number equal to the CRC32 of ``<database>.<table>``, the name
    required); None when it passes or the key is absent."""
    raw = props.get("hoodie.table.checksum")
    if raw is None:
        return None
    if not props.get("hoodie.table.name"):
        return "it has hoodie.table.checksum but no hoodie.table.name"
    want = table_checksum(props["hoodie.table.name"], props.get("hoodie.database.name"))
    try:
        ok = int(raw.strip()) == want
    except ValueError:
        ok = False
    return None if ok else f"hoodie.table.checksum {raw!r} != {want} (CRC32 of database.table name)"


def _judge(data: bytes, *, backup_exists: bool) -> tuple[dict | None, str | None]:
    """(properties, None) when Java's reader takes this file, else (None, why not). Java takes a
    file that loads and whose checksum, if present, is right. Beside a backup (a rewrite under
    way: ``HoodieTableConfig.modify`` backs the file up, deletes it, writes it anew, then drops the
    backup), a file that is not whole is skipped for the backup too: empty, not ending its last
    line, lacking the checksum Java always writes, or lacking a required key."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None, "it is not text"
    try:
        props = loads(text)
    except InvalidPropertiesError as e:
        return None, str(e)
    fault = _checksum_fault(props)
    if fault is not None:
        return None, fault
    if backup_exists:
        if not text.strip():
            return None, "it is empty (being rewritten)"
        if not text.endswith(("\n", "\r")):
            return None, "its last line is cut (being rewritten)"
        missing = [k for k in ("hoodie.table.checksum", *REQUIRED_KEYS) if not props.get(k)]
        if missing:
            return None, f"it lacks {', '.join(missing)} (being rewritten)"
    return props, None


def _read_or_none(storage, rel: str) -> bytes | None:
    try:
        return storage.read_bytes(rel)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def read_table_properties(storage, *, with_source: bool = False):
    """The table's properties as Java's ``HoodieTableConfig`` reads them (``fetchConfigs``):
    ``hoodie.properties``, else ``hoodie.properties.backup`` when the file is missing, fails its
    checksum, or (a rewrite under way, :func:`_judge`) is empty or cut short. Read again, up to
    :data:`READ_ROUNDS` times, while the two files change under the read; then
    :class:`InvalidPropertiesError` (a file is there, neither is usable) or
    :class:`TableNotFoundError`. ``with_source``: ``(properties, file read)``."""
    seen = None
    faults: list[str] = []
    for round_ in range(READ_ROUNDS):
        if round_ >= 2:
            time.sleep(ROUND_PAUSE_S)
        main = _read_or_none(storage, PROPERTIES_FILE)
        if main is not None:  # whole by the strictest rule: taken without a look at the backup
            props, _ = _judge(main, backup_exists=True)
            if props is not None:
                return (props, PROPERTIES_FILE) if with_source else props
        backup = _read_or_none(storage, BACKUP_FILE)
        faults = []
        for rel, data in ((PROPERTIES_FILE, main), (BACKUP_FILE, backup)):
            if data is None:
                continue
            props, why = _judge(data, backup_exists=rel == PROPERTIES_FILE and backup is not None)
            if props is not None:
                return (props, rel) if with_source else props
            faults.append(f"{rel}: {why}")
        if main is None and backup is None:
            # the pair may be between two steps of a rewrite (the backup dropped after our read of
            # a missing file): one more look before calling the table missing
            if seen == (None, None):
                break
        elif seen == (main, backup):
            break  # unchanged: reading again tells nothing new
        seen = (main, backup)
    if faults:
        raise InvalidPropertiesError("the table's properties are unusable (" + "; ".join(faults) + ")")
    raise TableNotFoundError(f"no Hudi table at {storage.base_uri}: {PROPERTIES_FILE} is missing")


def load_table_config(storage, *, require_mor: bool = True) -> TableConfig:
    """Read (:func:`read_table_properties`: the backup too, as Hudi does) and validate
    ``.hoodie/hoodie.properties``, with the settings we recorded beside it (:mod:`.etc_settings`)
    over its ``hoodie.etc.*`` keys."""
    props = read_table_properties(storage)
    from .etc_settings import overlay, read_recorded

    # our recorded settings (.hoodie/.aux/hudi-etc/settings.json) over the hoodie.etc.* keys a
    # Java CREATE TABLE ... LOCATION may have dropped from hoodie.properties
    return TableConfig.from_properties(overlay(props, read_recorded(storage)), require_mor=require_mor)


def new_table_properties(
    *,
    table_name: str,
    record_key: str,
    precombine_field: str,
    event_time_field: str,
    partition_field: str | None,
    payload: str,
    schema: dict | None,
    database: str = "default",
    hive_style: bool = True,
    urlencode: bool = False,
) -> dict[str, str]:
    """The ``hoodie.properties`` of a new v6 MOR table, as Spark with Hudi 0.15 writes it
    (:meth:`~airflow_hudi_etc.hudi.format.FormatProfile.new_table_properties` of version 6)."""
    return V6.new_table_properties(
        table_name=table_name, record_key=record_key, ordering_field=precombine_field,
        event_time_field=event_time_field, partition_field=partition_field, payload=payload, schema=schema,
        database=database, hive_style=hive_style, urlencode=urlencode)


def new_table_properties_v8(
    *,
    version: int,
    table_name: str,
    record_key: str,
    ordering_field: str,
    event_time_field: str,
    partition_field: str | None,
    schema: dict | None,
    database: str = "default",
    hive_style: bool = True,
    merge_mode: str = EVENT_TIME_ORDERING,
    urlencode: bool = False,
) -> dict[str, str]:
    """The ``hoodie.properties`` of a NEW table of a merge-mode version, 8 (Hudi 1.0) or 9 (Hudi
    1.1), with ``merge_mode`` (:meth:`~airflow_hudi_etc.hudi.format.FormatProfile.new_table_properties`)."""
    profile = PROFILES.get(version)
    if profile is None or not profile.merge_modes:
        raise UnsupportedTableVersionError(f"new tables of version {version}: only 8 and 9 (or 6, new_table_properties)")
    if merge_mode not in (EVENT_TIME_ORDERING, COMMIT_TIME_ORDERING):
        raise UnsupportedFeatureError(f"merge mode {merge_mode!r}: EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING")
    return profile.new_table_properties(
        table_name=table_name, record_key=record_key, ordering_field=ordering_field,
        event_time_field=event_time_field, partition_field=partition_field,
        payload=DEFAULT_PAYLOAD if merge_mode == EVENT_TIME_ORDERING else OVERWRITE_LATEST_PAYLOAD, schema=schema,
        database=database, hive_style=hive_style, urlencode=urlencode)
