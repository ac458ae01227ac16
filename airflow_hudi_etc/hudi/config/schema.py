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
import re
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import InvalidInputError

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
            col, t = _timestamp_micros_utc(col, f.name), pa.timestamp("us", tz="UTC")
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


_PER_US = {"s": (1_000_000, 1), "ms": (1_000, 1), "us": (1, 1), "ns": (1, 1_000)}


def _timestamp_micros_utc(col, name: str) -> pa.ChunkedArray | pa.Array:
    """A timestamp column as UTC microseconds. A zone-less timestamp is taken as UTC (its stored
    value is then the UTC epoch value); nanoseconds are floored to the microsecond (as
    :func:`event_time_millis` floors to the millisecond) instead of failing the cast; seconds
    beyond the representable range are an :class:`InvalidInputError`."""
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    mul, div = _PER_US[col.type.unit]
    raw = col.view(pa.int64()) if not isinstance(col, pa.ChunkedArray) else pc.cast(col, pa.int64())
    values = raw.fill_null(0).to_numpy(zero_copy_only=False)
    if mul != 1:
        if values.size and np.abs(values).max() > np.iinfo(np.int64).max // mul:
            raise InvalidInputError(f"column {name!r}: a timestamp is out of range")
        values = values * mul
    elif div != 1:
        values = np.floor_divide(values, div)
    mask = raw.is_null().to_numpy(zero_copy_only=False) if raw.null_count else None
    return pa.array(values, pa.timestamp("us", tz="UTC"), mask=mask)


#: Avro names (https://avro.apache.org/docs/1.11.1/specification/#names): what Hudi's schema
#: converter and hudi-rs accept as field (and nested record) names
_AVRO_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def check_avro_names(schema: pa.Schema) -> None:
    """Refuse column names (nested struct fields included) that are not Avro names: Spark/Hudi
    and hudi-rs cannot read a table whose schema holds one (``my-col``, ``a.b``, ``café``, ``1col``)."""

    def walk(t: pa.DataType, where: str) -> None:
        if pa.types.is_struct(t):
            for f in t:
                check(f.name, f"{where}.{f.name}")
                walk(f.type, f"{where}.{f.name}")
        elif pa.types.is_list(t) or pa.types.is_large_list(t):
            walk(t.value_type, where)
        elif pa.types.is_map(t):
            walk(t.item_type, where)

    def check(name: str, where: str) -> None:
        if not _AVRO_NAME.fullmatch(name):
            raise InvalidInputError(f"column {where!r}: not a valid Avro name (letters, digits and underscores, "
                                    "not starting with a digit): Hudi readers could not read the table")

    for f in schema:
        if f.name in META_FIELDS:
            continue
        check(f.name, f.name)
        walk(f.type, f.name)


def conform(table: pa.Table, schema: pa.Schema) -> pa.Table:
    """Select/cast ``table`` to ``schema`` (missing columns become nulls)."""
    cols = []
    for f in schema:
        if f.name in table.column_names:
            col = table.column(f.name)
            if col.type != f.type:
                # an all-null column (JSON gives it type null, read as string) fits any type
                col = pa.nulls(table.num_rows, f.type) if col.null_count == len(col) else col.cast(f.type)
            cols.append(col)
        else:
            cols.append(pa.nulls(table.num_rows, f.type))
    return pa.Table.from_arrays(cols, schema=schema)


# ------------------------------------------------------------------- event time
EVENT_TIME_SECONDS_LIMIT = 10**11  # |v| below this is epoch seconds (year 5138), above: millis
#: event times must lie in years 1..9999 (what a timestamp, Java's Instant printing and our ISO
#: output all represent): epoch milliseconds of 0001-01-01T00:00Z and 9999-12-31T23:59:59.999Z
EVENT_TIME_MIN_MS = -62_135_596_800_000
EVENT_TIME_MAX_MS = 253_402_300_799_999


def _check_event_range(ms: pa.Array, field: str) -> pa.Array:
    if len(ms) - ms.null_count:
        mm = pc.min_max(ms)
        if mm["min"].as_py() < EVENT_TIME_MIN_MS or mm["max"].as_py() > EVENT_TIME_MAX_MS:
            raise InvalidInputError(f"{field}: a value lies outside years 1..9999")
    return ms


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
            try:
                return _check_event_range(pc.multiply_checked(raw, 1000), field)
            except pa.ArrowInvalid:
                raise InvalidInputError(f"{field}: a value lies outside years 1..9999") from None
        if per_ms == 1:
            return _check_event_range(raw, field)
        # floor to the millisecond (as for a datetime before 1970): a timestamp in micros or
        # nanos with a sub-millisecond part is the common case, not an error
        values = np.floor_divide(raw.fill_null(0).to_numpy(zero_copy_only=False), per_ms)
        return _check_event_range(pa.array(values, pa.int64(), mask=raw.is_null().to_numpy(zero_copy_only=False)
                                           if raw.null_count else None), field)
    if pa.types.is_date32(t) or pa.types.is_date64(t):
        try:
            if pa.types.is_date32(t):
                days = pc.cast(col.view(pa.int32()), pa.int64())
            else:  # floored to the day (a date64 should hold whole days)
                raw = col.view(pa.int64())
                days = pa.array(np.floor_divide(raw.fill_null(0).to_numpy(zero_copy_only=False), 86_400_000),
                                pa.int64(), mask=raw.is_null().to_numpy(zero_copy_only=False) if raw.null_count else None)
            return _check_event_range(pc.multiply_checked(days, 86_400_000), field)
        except pa.ArrowInvalid:
            raise InvalidInputError(f"{field}: a value lies outside years 1..9999") from None
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        if pa.types.is_floating(t):
            v = pc.cast(col, pa.float64())
            if not pc.all(pc.is_finite(v)).as_py() in (True, None):
                raise InvalidInputError(f"{field}: NaN or infinite values are not event times")
        else:
            if pa.types.is_uint64(t) and len(col) - col.null_count and pc.max(col).as_py() > EVENT_TIME_MAX_MS:
                raise InvalidInputError(f"{field}: a value lies outside years 1..9999")
            v = pc.cast(col, pa.int64())
        small = pc.less(pc.abs_checked(v) if not pa.types.is_floating(t) else pc.abs(v), EVENT_TIME_SECONDS_LIMIT)
        ms = pc.if_else(small, pc.multiply(v, 1000), v)
        if pa.types.is_floating(t):
            ms = _check_event_range(pc.floor(ms), field)  # before the cast: 1e300 does not fit
        return _check_event_range(pc.cast(ms, pa.int64()), field)
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
    try:  # floor to the millisecond in integers (before 1970 too; float timestamps truncate)
        ms = (dt - _EPOCH) // _ONE_MS
    except OverflowError:
        raise InvalidInputError(f"{field}: {s!r} lies outside years 1..9999") from None
    if not EVENT_TIME_MIN_MS <= ms <= EVENT_TIME_MAX_MS:
        raise InvalidInputError(f"{field}: {s!r} lies outside years 1..9999")
    return ms


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
        if not math.isfinite(v):
            raise InvalidInputError(f"event time {v!r} is not a finite number")
        return math.floor(v * 1000) if abs(v) < EVENT_TIME_SECONDS_LIMIT else math.floor(v)
    if isinstance(v, int):
        return v * 1000 if abs(v) < EVENT_TIME_SECONDS_LIMIT else v
    if isinstance(v, str):
        return parse_iso_millis(v)
    raise InvalidInputError(f"event time {v!r} has an unsupported type")
