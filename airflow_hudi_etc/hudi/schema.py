"""Schemas: Arrow ↔ Avro as Spark-with-Hudi writes them, meta fields, event-time values.

Hudi records carry five meta fields first (``_hoodie_commit_time`` … ``_hoodie_file_name``),
all ``["null","string"]``. Data fields are nullable unions ``["null", T]`` with a null default;
the record is named ``<table>_record`` in namespace ``hoodie.<table>`` (shared/hudi-format.md §2.1).
Parquet types follow parquet-avro: timestamps as INT64 micros, decimals as fixed, strings UTF8.
"""

from __future__ import annotations

import datetime as _dt
import json
import math
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .errors import InvalidInputError

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"
META_FIELDS = (COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME)
IS_DELETED = "_hoodie_is_deleted"


def _decimal_size(precision: int) -> int:
    """Minimum bytes of a two's-complement fixed holding ``precision`` digits (as Spark sizes it)."""
    n = 1
    while 2 ** (8 * n - 1) < 10**precision:
        n += 1
    return n


def _avro_type(t: pa.DataType, name: str, namespace: str) -> Any:
    if pa.types.is_boolean(t):
        return "boolean"
    if pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_int32(t) or pa.types.is_uint8(t) or pa.types.is_uint16(t):
        return "int"
    if pa.types.is_int64(t) or pa.types.is_uint32(t):
        return "long"
    if pa.types.is_float32(t):
        return "float"
    if pa.types.is_float64(t):
        return "double"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return "bytes"
    if pa.types.is_timestamp(t):
        return {"type": "long", "logicalType": "timestamp-micros"}
    if pa.types.is_date32(t):
        return {"type": "int", "logicalType": "date"}
    if pa.types.is_decimal(t):
        return {
            "type": "fixed",
            "name": "fixed",
            "namespace": f"{namespace}.{name}",
            "size": _decimal_size(t.precision),
            "logicalType": "decimal",
            "precision": t.precision,
            "scale": t.scale,
        }
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"type": "array", "items": _nullable(_avro_type(t.value_type, "array", f"{namespace}.{name}"))}
    if pa.types.is_map(t):
        if not pa.types.is_string(t.key_type):
            raise InvalidInputError(f"field {name}: Avro maps need string keys, got {t.key_type}")
        return {"type": "map", "values": _nullable(_avro_type(t.item_type, name, f"{namespace}.{name}"))}
    if pa.types.is_struct(t):
        ns = f"{namespace}.{name}"
        return {
            "type": "record",
            "name": name,
            "namespace": namespace,
            "fields": [
                {"name": f.name, "type": _nullable(_avro_type(f.type, f.name, ns)), "default": None}
                for f in t
            ],
        }
    raise InvalidInputError(f"field {name}: type {t} has no Avro equivalent here")


def _nullable(t: Any) -> list:
    return ["null", t]


def avro_schema_from_arrow(schema: pa.Schema, table_name: str, *, with_meta: bool = False) -> dict:
    """The table's Avro record schema (without meta fields unless ``with_meta``)."""
    name = f"{table_name}_record"
    ns = f"hoodie.{table_name}"
    fields = []
    if with_meta:
        fields += [{"name": m, "type": ["null", "string"], "doc": "", "default": None} for m in META_FIELDS]
    for f in schema:
        if f.name in META_FIELDS:
            continue
        fields.append({"name": f.name, "type": _nullable(_avro_type(f.type, f.name, f"{ns}.{name}")), "default": None})
    return {"type": "record", "name": name, "namespace": ns, "fields": fields}


def with_meta_fields(avro_schema: dict) -> dict:
    """Prepend the five meta fields to a data schema (idempotent)."""
    data = [f for f in avro_schema["fields"] if f["name"] not in META_FIELDS]
    meta = [{"name": m, "type": ["null", "string"], "doc": "", "default": None} for m in META_FIELDS]
    return {**avro_schema, "fields": meta + data}


def without_meta_fields(avro_schema: dict) -> dict:
    return {**avro_schema, "fields": [f for f in avro_schema["fields"] if f["name"] not in META_FIELDS]}


_ARROW_PRIMITIVES = {
    "boolean": pa.bool_(),
    "int": pa.int32(),
    "long": pa.int64(),
    "float": pa.float32(),
    "double": pa.float64(),
    "string": pa.string(),
    "bytes": pa.binary(),
    "null": pa.null(),
}


def _arrow_type(t: Any) -> pa.DataType:
    if isinstance(t, list):
        non_null = [x for x in t if x != "null"]
        if len(non_null) != 1:
            raise InvalidInputError(f"union {t} is not supported (only [null, T])")
        return _arrow_type(non_null[0])
    if isinstance(t, str):
        if t not in _ARROW_PRIMITIVES:  # a named type referenced by name, or a damaged schema
            raise InvalidInputError(f"Avro type {t!r} is not supported here")
        return _ARROW_PRIMITIVES[t]
    lt = t.get("logicalType")
    typ = t["type"]
    if lt in ("timestamp-micros", "local-timestamp-micros"):
        return pa.timestamp("us", tz="UTC")
    if lt in ("timestamp-millis", "local-timestamp-millis"):
        return pa.timestamp("ms", tz="UTC")
    if lt == "date":
        return pa.date32()
    if lt == "decimal":
        return pa.decimal128(t["precision"], t.get("scale", 0))
    if typ == "array":
        return pa.list_(_arrow_type(t["items"]))
    if typ == "map":
        return pa.map_(pa.string(), _arrow_type(t["values"]))
    if typ == "record":
        return pa.struct([pa.field(f["name"], _arrow_type(f["type"])) for f in t["fields"]])
    if typ == "enum":
        return pa.string()
    if typ == "fixed":
        return pa.binary(t["size"])
    return _arrow_type(typ)


def arrow_schema_from_avro(avro_schema: dict | str) -> pa.Schema:
    """The Arrow schema of an Avro record schema; :class:`InvalidInputError` for one that is not
    a record schema of types this layer maps (damaged schema text in a commit included)."""
    try:
        if isinstance(avro_schema, str):
            avro_schema = json.loads(avro_schema)
        return pa.schema([pa.field(f["name"], _arrow_type(f["type"])) for f in avro_schema["fields"]])
    except InvalidInputError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, pa.ArrowException) as e:
        raise InvalidInputError(f"not an Avro record schema this table can use: {type(e).__name__}: {e}") from None


def meta_arrow_schema() -> list[pa.Field]:
    return [pa.field(m, pa.string()) for m in META_FIELDS]


def normalize_input(table: pa.Table) -> pa.Table:
    """Make input columns writable: timestamps to UTC micros, unsigned/small ints widened as Avro sees them."""
    cols, fields = [], []
    for f, col in zip(table.schema, table.columns):
        t = f.type
        if pa.types.is_timestamp(t) and (t.unit != "us" or t.tz != "UTC"):
            if t.tz is None:
                col = pc.assume_timezone(col, "UTC") if t.unit else col
            col = col.cast(pa.timestamp("us", tz="UTC"))
            t = col.type
        elif pa.types.is_int8(t) or pa.types.is_int16(t) or pa.types.is_uint8(t) or pa.types.is_uint16(t):
            col, t = col.cast(pa.int32()), pa.int32()
        elif pa.types.is_uint32(t):
            col, t = col.cast(pa.int64()), pa.int64()
        elif pa.types.is_large_string(t):
            col, t = col.cast(pa.string()), pa.string()
        elif pa.types.is_null(t):
            col, t = col.cast(pa.string()), pa.string()
        cols.append(col)
        fields.append(pa.field(f.name, t))
    return pa.Table.from_arrays(cols, schema=pa.schema(fields))


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Select/cast ``table`` to ``schema`` (missing columns become nulls)."""
    cols = []
    for f in schema:
        if f.name in table.column_names:
            col = table.column(f.name)
            if col.type != f.type:
                col = col.cast(f.type)
            cols.append(col)
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


# ------------------------------------------------------------------- event time
EVENT_TIME_SECONDS_LIMIT = 10**11  # |v| below this is epoch seconds (year 5138), above: millis


def event_time_millis(col: pa.ChunkedArray | pa.Array, field: str = "event time") -> pa.Array:
    """Epoch milliseconds of an event-time column: epoch ms, epoch s, timestamp or ISO-8601 strings.

    Integers are read as seconds when their magnitude is below 10^11 (i.e. before year 5138
    in seconds, or before 1973-03-03 in milliseconds), else as milliseconds.
    """
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    t = col.type
    if pa.types.is_timestamp(t):
        per_ms = {"s": None, "ms": 1, "us": 1_000, "ns": 1_000_000}[t.unit]
        raw = pc.cast(col, pa.int64())
        if per_ms is None:
            return pc.multiply(raw, 1000)
        if per_ms == 1:
            return raw
        # floor to the millisecond (as for a datetime before 1970): a timestamp in micros or
        # nanos with a sub-millisecond part is the common case, not an error
        values = np.floor_divide(raw.fill_null(0).to_numpy(zero_copy_only=False), per_ms)
        return pa.array(values, pa.int64(), mask=raw.is_null().to_numpy(zero_copy_only=False) if raw.null_count else None)
    if pa.types.is_date32(t) or pa.types.is_date64(t):
        return pc.multiply(pc.cast(pc.cast(col, pa.date32()), pa.int64()), 86_400_000)
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        v = pc.cast(col, pa.float64()) if pa.types.is_floating(t) else pc.cast(col, pa.int64())
        small = pc.less(pc.abs(v), EVENT_TIME_SECONDS_LIMIT)
        ms = pc.if_else(small, pc.multiply(v, 1000), v)
        return pc.cast(pc.floor(ms) if pa.types.is_floating(t) else ms, pa.int64())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        out = []
        for s in col.to_pylist():
            out.append(None if s is None else parse_iso_millis(s, field))
        return pa.array(out, pa.int64())
    raise InvalidInputError(f"{field} has type {t}: need epoch ms/s, timestamp or ISO-8601 string")


def parse_iso_millis(s: str, field: str = "event time") -> int:
    try:
        dt = _dt.datetime.fromisoformat(s.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(f"{field}: {s!r} is not an ISO-8601 timestamp") from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=_dt.timezone.utc)
    return int(dt.timestamp() * 1000) if dt.microsecond % 1000 == 0 else int(dt.timestamp() * 1000)


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_ONE_MS = _dt.timedelta(milliseconds=1)


def event_time_value_millis(v: Any) -> int | None:
    """Scalar version of :func:`event_time_millis` (for values decoded from Avro log records)."""
    if v is None:
        return None
    if isinstance(v, bool):
        raise InvalidInputError(f"event time {v!r} is a boolean")
    if isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=_dt.timezone.utc)
        return (v - _EPOCH) // _ONE_MS  # floor, exactly as the column version
    if isinstance(v, _dt.date):
        return (v - _dt.date(1970, 1, 1)).days * 86_400_000
    if isinstance(v, float):  # floor, as the column version
        return math.floor(v * 1000) if abs(v) < EVENT_TIME_SECONDS_LIMIT else math.floor(v)
    if isinstance(v, int):
        return v * 1000 if abs(v) < EVENT_TIME_SECONDS_LIMIT else v
    if isinstance(v, str):
        return parse_iso_millis(v)
    raise InvalidInputError(f"event time {v!r} has an unsupported type")
