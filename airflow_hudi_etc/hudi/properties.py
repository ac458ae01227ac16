"""``hoodie.properties``: Java properties encoding and the table configuration.

The file is written by ``java.util.Properties.store``: ``key=value`` lines, ``#`` comments,
backslash escapes for ``: = # !`` and ``\\``, ``\\uXXXX`` for non-ASCII. Hudi validates
``hoodie.table.checksum`` = CRC32 of ``"<database>.<table>"`` when present (shared/hudi-format.md §5).
"""

from __future__ import annotations

import datetime as _dt
import json
import zlib
from dataclasses import dataclass, field
from typing import Mapping

from . import etc_keys as _keys
from .errors import (
    InvalidPropertiesError,
    TableNotFoundError,
    UnsupportedTableTypeError,
    UnsupportedTableVersionError,
)

PROPERTIES_FILE = ".hoodie/hoodie.properties"
BACKUP_FILE = ".hoodie/hoodie.properties.backup"

OVERWRITE_LATEST_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
PAYLOAD_ALIASES = {"overwrite-latest": OVERWRITE_LATEST_PAYLOAD, "event-time-ordering": DEFAULT_PAYLOAD}
DEFAULT_MERGER_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"

#: our own table property naming the event-time field (Hudi ignores unknown keys)
EVENT_TIME_FIELD_KEY = _keys.EVENT_TIME_FIELD
#: Hudi's own key for the event-time field of the payload (used by DefaultHoodieRecordPayload)
HUDI_EVENT_TIME_FIELD_KEY = "hoodie.payload.event.time.field"


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


def table_checksum(table_name: str, database: str | None) -> int:
    """CRC32 of ``"<db>.<table>"`` (leading dot when there is no database)."""
    return zlib.crc32(f"{database or ''}.{table_name}".encode("utf-8")) & 0xFFFFFFFF


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

    @property
    def record_key_field(self) -> str:
        return self.record_key_fields[0]

    @property
    def event_time_ordering(self) -> bool:
        """True for DefaultHoodieRecordPayload-style merging (base kept if its ordering is larger)."""
        return self.payload_class != OVERWRITE_LATEST_PAYLOAD

    @property
    def partitioned(self) -> bool:
        return bool(self.partition_fields)

    @classmethod
    def from_properties(cls, props: Mapping[str, str], *, require_mor: bool = True) -> "TableConfig":
        for k in ("hoodie.table.name", "hoodie.table.type"):
            if not props.get(k):
                raise InvalidPropertiesError(f"hoodie.properties lacks {k}")
        raw_version = props.get("hoodie.table.version")
        try:
            version = int(raw_version) if raw_version is not None else 0
        except ValueError:
            raise InvalidPropertiesError(f"hoodie.table.version is not a number: {raw_version!r}") from None
        if version != 6:
            raise UnsupportedTableVersionError(
                f"table version {version} is not supported: this release reads and writes "
                f"Hudi table version 6 only (Hudi 0.14/0.15)"
            )
        layout = props.get("hoodie.timeline.layout.version")
        if layout is not None and layout != "1":
            raise UnsupportedTableVersionError(f"timeline layout version {layout} is not supported (need 1)")
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
        pf = tuple(f.strip() for f in props.get("hoodie.table.partition.fields", "").split(",") if f.strip())
        schema = None
        if props.get("hoodie.table.create.schema"):
            try:
                schema = json.loads(props["hoodie.table.create.schema"])
            except ValueError:
                raise InvalidPropertiesError("hoodie.table.create.schema is not valid JSON") from None
        return cls(
            name=props["hoodie.table.name"],
            table_type=ttype,
            version=version,
            record_key_fields=rk,
            precombine_field=props.get("hoodie.table.precombine.field") or None,
            partition_fields=pf,
            payload_class=props.get("hoodie.compaction.payload.class", OVERWRITE_LATEST_PAYLOAD),
            event_time_field=props.get(EVENT_TIME_FIELD_KEY) or props.get(HUDI_EVENT_TIME_FIELD_KEY) or None,
            hive_style_partitioning=props.get("hoodie.datasource.write.hive_style_partitioning", "false").lower()
            == "true",
            create_schema=schema,
            database=props.get("hoodie.database.name") or None,
            raw=dict(props),
        )


def load_table_config(storage, *, require_mor: bool = True) -> TableConfig:
    """Read and validate ``.hoodie/hoodie.properties`` (falling back to the backup, as Hudi does)."""
    text = None
    for rel in (PROPERTIES_FILE, BACKUP_FILE):
        try:
            text = storage.read_text(rel)
            break
        except FileNotFoundError:
            continue
        except UnicodeDecodeError:
            raise InvalidPropertiesError(f"{rel} is not text") from None
    if text is None:
        raise TableNotFoundError(f"no Hudi table at {storage.base_uri}: {PROPERTIES_FILE} is missing")
    return TableConfig.from_properties(loads(text), require_mor=require_mor)


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
) -> dict[str, str]:
    """The ``hoodie.properties`` of a new v6 MOR table, as Spark with Hudi 0.15 writes it."""
    props = {
        "hoodie.table.name": table_name,
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1",
        "hoodie.table.recordkey.fields": record_key,
        "hoodie.table.precombine.field": precombine_field,
        "hoodie.table.keygenerator.class": (
            "org.apache.hudi.keygen.SimpleKeyGenerator"
            if partition_field
            else "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
        ),
        "hoodie.compaction.payload.class": payload,
        "hoodie.compaction.record.merger.strategy": DEFAULT_MERGER_STRATEGY,
        "hoodie.archivelog.folder": "archived",
        "hoodie.table.base.file.format": "PARQUET",
        "hoodie.populate.meta.fields": "true",
        "hoodie.table.timeline.timezone": "UTC",
        "hoodie.datasource.write.hive_style_partitioning": "true" if hive_style else "false",
        "hoodie.datasource.write.partitionpath.urlencode": "false",
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.database.name": database,
        HUDI_EVENT_TIME_FIELD_KEY: event_time_field,
        EVENT_TIME_FIELD_KEY: event_time_field,
        "hoodie.table.checksum": str(table_checksum(table_name, database)),
    }
    if partition_field:
        props["hoodie.table.partition.fields"] = partition_field
    if schema is not None:
        props["hoodie.table.create.schema"] = json.dumps(schema, separators=(",", ":"))
    return props
