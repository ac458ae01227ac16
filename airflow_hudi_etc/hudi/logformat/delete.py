"""DELETE block content (§2.3): version 3, schemaless Avro of ``HoodieDeleteRecordList`` whose
ordering values use Hudi's wrapper-record union."""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import io
from dataclasses import dataclass
from typing import Any, Iterable

import fastavro

from ..errors import CorruptLogBlockError, UnsupportedFeatureError
from .cursor import _I32_I32

DELETE_BLOCK_VERSION = 3

_NS = "org.apache.hudi.avro.model"

#: (ordering type name, wrapper record name, Avro type of its ``value`` field in Hudi's
#: HoodieMetadata.avsc). The order is the union order; branch index = position + 1.
_WRAPPERS: tuple[tuple[str, str, Any], ...] = (
    ("boolean", "BooleanWrapper", "boolean"),
    ("int", "IntWrapper", "int"),
    ("long", "LongWrapper", "long"),
    ("float", "FloatWrapper", "float"),
    ("double", "DoubleWrapper", "double"),
    ("bytes", "BytesWrapper", "bytes"),
    ("string", "StringWrapper", "string"),
    ("date", "DateWrapper", "int"),  # days since epoch; Hudi deliberately has no logicalType here
    ("decimal", "DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    ("time_micros", "TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    ("timestamp_micros", "TimestampMicrosWrapper", "long"),  # no logicalType in Hudi's avsc either
)

#: the ordering types of :class:`DeleteRecord`, in union order (union branch index = position + 1)
ORDERING_TYPES: tuple[str, ...] = tuple(k for k, _n, _t in _WRAPPERS)
_BRANCH_BY_KIND = {k: f"{_NS}.{n}" for k, n, _t in _WRAPPERS}
_KIND_BY_BRANCH = {v: k for k, v in _BRANCH_BY_KIND.items()}


def _delete_list_schema(value_type) -> dict:
    return {
        "type": "record",
        "name": "HoodieDeleteRecordList",
        "namespace": _NS,
        "fields": [
            {
                "name": "deleteRecordList",
                "type": {
                    "type": "array",
                    "items": {
                        "type": "record",
                        "name": "HoodieDeleteRecord",
                        "namespace": _NS,
                        "fields": [
                            {"name": "recordKey", "type": ["null", "string"], "default": None},
                            {"name": "partitionPath", "type": ["null", "string"], "default": None},
                            {
                                "name": "orderingVal",
                                "type": ["null"]
                                + [
                                    {
                                        "type": "record",
                                        "name": name,
                                        "namespace": _NS,
                                        "fields": [{"name": "value", "type": value_type(t)}],
                                    }
                                    for _k, name, t in _WRAPPERS
                                ],
                                "default": None,
                            },
                        ],
                    },
                },
            }
        ],
    }


#: ``HoodieDeleteRecordList`` as Hudi 0.14/0.15 defines it (§2.3), wrapper union included.
DELETE_RECORD_LIST_SCHEMA = _delete_list_schema(lambda t: t)
# The same schema with the logical annotations removed: identical bytes, and this module does
# the value conversions itself (fastavro's negative-decimal bytes are not Java's minimal form).
_DELETE_RAW = fastavro.parse_schema(_delete_list_schema(lambda t: t["type"] if isinstance(t, dict) else t))

_EPOCH_DATE = _dt.date(1970, 1, 1)
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_DEC_SCALE = 15
_DEC_PRECISION = 30
_I32_RANGE = (-(2**31), 2**31 - 1)
_I64_RANGE = (-(2**63), 2**63 - 1)
_FLOAT32_MAX = 3.4028234663852886e38


@dataclass(frozen=True)
class DeleteRecord:
    """One deleted key of a DELETE block (Java ``DeleteRecord``).

    ``ordering_type`` names the wrapper record of Hudi's ordering-value union (one of
    :data:`ORDERING_TYPES`), or is None for a null ordering value. ``ordering_value`` is the
    Python value of that wrapper:

    =====================  ==========================================================
    boolean                bool
    int, long              int (32-/64-bit range)
    float, double          float
    bytes                  bytes
    string                 str
    date                   ``datetime.date`` (an int of days since 1970-01-01 is also
                           accepted when encoding)
    decimal                ``decimal.Decimal``, stored at scale 15, precision <= 30
    time_micros            ``datetime.time`` (or int microseconds after midnight)
    timestamp_micros       timezone-aware ``datetime.datetime`` in UTC (or int
                           microseconds since the epoch)
    =====================  ==========================================================

    Integer 0 of type ``int`` is Hudi's natural-order marker: the delete always wins (§2.3,
    §6.4). See :func:`natural_order_delete`.
    """

    record_key: str | None
    partition_path: str | None
    ordering_value: Any
    ordering_type: str | None


def natural_order_delete(key: str, partition: str | None) -> DeleteRecord:
    """A delete carrying Integer 0 (``IntWrapper{value: 0}``): Hudi's "delete always wins"."""
    return DeleteRecord(key, partition, 0, "int")


def _java_decimal_bytes(unscaled: int) -> bytes:
    """Two's-complement big-endian in the fewest bytes, like Java ``BigInteger.toByteArray``."""
    bits = unscaled.bit_length() if unscaled >= 0 else (~unscaled).bit_length()
    return unscaled.to_bytes(bits // 8 + 1, "big", signed=True)


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


class _Misfit(ValueError):
    """Raised by a ``_wrap_*`` converter: the value does not fit; the text says what would."""


def _wrap_boolean(v: Any) -> Any:
    if not isinstance(v, bool):
        raise _Misfit("bool")
    return v


def _wrap_integer(lo: int, hi: int):
    def wrap(v: Any) -> Any:
        if not _is_int(v) or not lo <= v <= hi:
            raise _Misfit(f"int in [{lo}, {hi}]")
        return v

    return wrap


def _wrap_floating(single: bool):
    def wrap(v: Any) -> Any:
        if not (_is_int(v) or isinstance(v, float)):
            raise _Misfit("float")
        try:
            f = float(v)
        except OverflowError:
            raise _Misfit("a finite float") from None
        if single and _FLOAT32_MAX < abs(f) < float("inf"):
            raise _Misfit("a 32-bit float")
        return f

    return wrap


def _wrap_bytes(v: Any) -> Any:
    if not isinstance(v, (bytes, bytearray, memoryview)):
        raise _Misfit("bytes")
    return bytes(v)


def _wrap_string(v: Any) -> Any:
    if not isinstance(v, str):
        raise _Misfit("str")
    return v


def _wrap_date(v: Any) -> Any:
    """Days since 1970-01-01."""
    if _is_int(v):
        days = v
    elif isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
        days = (v - _EPOCH_DATE).days
    else:
        raise _Misfit("datetime.date or int days")
    if not _I32_RANGE[0] <= days <= _I32_RANGE[1]:
        raise _Misfit("32-bit day count")
    return days


def _wrap_decimal(v: Any) -> Any:
    """The unscaled value at scale 15 as Java's ``BigInteger.toByteArray`` bytes."""
    if _is_int(v):
        v = _decimal.Decimal(v)
    if not isinstance(v, _decimal.Decimal) or not v.is_finite():
        raise _Misfit("finite decimal.Decimal")
    sign, digits, exp = v.as_tuple()
    if exp < -_DEC_SCALE:
        raise _Misfit(f"at most {_DEC_SCALE} digits after the point")
    unscaled = int("".join(map(str, digits)) or "0") * 10 ** (exp + _DEC_SCALE)
    if len(str(unscaled)) > _DEC_PRECISION:
        raise _Misfit(f"at most {_DEC_PRECISION} digits in total at scale {_DEC_SCALE}")
    return _java_decimal_bytes(-unscaled if sign else unscaled)


def _wrap_time_micros(v: Any) -> Any:
    """Microseconds after midnight."""
    if _is_int(v):
        micros = v
    elif isinstance(v, _dt.time):
        if v.tzinfo is not None:
            raise _Misfit("a time without a time zone")
        micros = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
    else:
        raise _Misfit("datetime.time or int microseconds")
    if not _I64_RANGE[0] <= micros <= _I64_RANGE[1]:
        raise _Misfit("64-bit microseconds")
    return micros


def _wrap_timestamp_micros(v: Any) -> Any:
    """Microseconds since the epoch (UTC)."""
    if _is_int(v):
        micros = v
    elif isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            raise _Misfit("a timezone-aware datetime (naive ones are ambiguous)")
        delta = v - _EPOCH
        micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    else:
        raise _Misfit("aware datetime.datetime or int microseconds")
    if not _I64_RANGE[0] <= micros <= _I64_RANGE[1]:
        raise _Misfit("64-bit microseconds")
    return micros


#: ordering type -> converter of a Python value to the raw Avro value of its wrapper's ``value``
_WRAP = {
    "boolean": _wrap_boolean,
    "int": _wrap_integer(*_I32_RANGE),
    "long": _wrap_integer(*_I64_RANGE),
    "float": _wrap_floating(True),
    "double": _wrap_floating(False),
    "bytes": _wrap_bytes,
    "string": _wrap_string,
    "date": _wrap_date,
    "decimal": _wrap_decimal,
    "time_micros": _wrap_time_micros,
    "timestamp_micros": _wrap_timestamp_micros,
}


def _wrap_ordering_value(kind: str, v: Any) -> Any:
    """The raw Avro value of the wrapper's ``value`` field; ValueError when ``v`` does not fit."""
    wrap = _WRAP.get(kind)
    if wrap is None:
        raise ValueError(f"unknown ordering type {kind!r}; one of {', '.join(ORDERING_TYPES)} or None")
    try:
        return wrap(v)
    except _Misfit as e:
        raise ValueError(f"ordering value {v!r} does not fit ordering type {kind!r} ({e})") from None


def _unwrap_ordering_value(kind: str, raw: Any) -> Any:
    if kind == "date":
        return _EPOCH_DATE + _dt.timedelta(days=raw)
    if kind == "decimal":
        unscaled = int.from_bytes(raw, "big", signed=True)
        return _decimal.Decimal(unscaled).scaleb(-_DEC_SCALE)
    if kind == "time_micros":
        if not 0 <= raw < 86_400_000_000:
            raise ValueError(f"time-micros {raw} is outside one day")
        secs, us = divmod(raw, 1_000_000)
        return _dt.time(secs // 3600, secs // 60 % 60, secs % 60, us)
    if kind == "timestamp_micros":
        return _EPOCH + _dt.timedelta(microseconds=raw)
    return raw


def encode_delete_records(records: Iterable[DeleteRecord]) -> bytes:
    """DELETE block content, version 3 (§2.3): int32 3, int32 byte length, then the schemaless
    Avro of ``HoodieDeleteRecordList``. Each ordering value goes into exactly the union branch
    its ``ordering_type`` names (an ``int`` never lands in LongWrapper)."""
    items = []
    for d in records:
        if d.ordering_type is None:
            if d.ordering_value is not None:
                raise ValueError(f"ordering value {d.ordering_value!r} needs an ordering_type")
            ov = None
        else:
            if d.ordering_type not in _BRANCH_BY_KIND:
                raise ValueError(f"unknown ordering type {d.ordering_type!r}; one of {', '.join(ORDERING_TYPES)} or None")
            if d.ordering_value is None:
                raise ValueError(f"ordering type {d.ordering_type!r} with a null value: use ordering_type None")
            ov = (_BRANCH_BY_KIND[d.ordering_type], {"value": _wrap_ordering_value(d.ordering_type, d.ordering_value)})
        for name, v in (("record_key", d.record_key), ("partition_path", d.partition_path)):
            if v is not None and not isinstance(v, str):
                raise ValueError(f"{name} must be a str or None, got {type(v).__name__}")
        items.append({"recordKey": d.record_key, "partitionPath": d.partition_path, "orderingVal": ov})
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _DELETE_RAW, {"deleteRecordList": items})
    payload = buf.getvalue()
    return _I32_I32.pack(DELETE_BLOCK_VERSION, len(payload)) + payload


def decode_delete_records(content: bytes) -> list[DeleteRecord]:
    """The deleted keys of DELETE block content (§2.3).

    Version 3 (Avro) only; the Kryo-serialized versions 1 and 2 of Hudi before 0.13 raise
    :class:`~.errors.UnsupportedFeatureError`, anything malformed
    :class:`~.errors.CorruptLogBlockError`.
    """
    content = bytes(content)
    if len(content) < 8:
        raise CorruptLogBlockError(f"delete block content of {len(content)} bytes is too short")
    version, ln = _I32_I32.unpack_from(content, 0)
    if version in (1, 2):
        raise UnsupportedFeatureError(
            f"delete block content version {version} (Kryo-serialized, Hudi < 0.13) is not supported"
        )
    if version != DELETE_BLOCK_VERSION:
        raise CorruptLogBlockError(f"delete block content version {version} (expected {DELETE_BLOCK_VERSION})")
    if ln < 0 or ln > len(content) - 8:
        raise CorruptLogBlockError(f"delete block payload of {ln} bytes runs past the {len(content)}-byte content")
    try:
        rec = fastavro.schemaless_reader(io.BytesIO(content[8 : 8 + ln]), _DELETE_RAW, return_record_name=True)
        out = []
        for d in rec["deleteRecordList"]:
            ov = d["orderingVal"]
            if ov is None:
                out.append(DeleteRecord(d["recordKey"], d["partitionPath"], None, None))
            else:
                branch, wrapper = ov
                kind = _KIND_BY_BRANCH[branch]
                value = _unwrap_ordering_value(kind, wrapper["value"])
                out.append(DeleteRecord(d["recordKey"], d["partitionPath"], value, kind))
    except Exception as e:  # fastavro raises EOFError, ValueError, IndexError, ... on bad bytes
        raise CorruptLogBlockError(f"undecodable delete block: {type(e).__name__}: {e}") from None
    return out
