"""Hudi Avro data blocks straight into Arrow columns, decoded with numpy across records.

An AVRO_DATA block's content is ``version, count`` and then ``count`` records, each behind its
own 4-byte length (shared/hudi-format.md §2.1). Knowing where every record starts, one field can
be decoded for *all* records at once: a vector of read positions (one per record) moves through
the records field by field, and each step is a handful of numpy operations over that vector
instead of Python work per record. Strings become Arrow string arrays by one gather of their
bytes, numbers are read with fixed-width views, nullable unions decode their non-null rows only.

It handles what Spark and our writer put in Hudi schemas: null, boolean, int, long, float,
double, bytes, string, enum, fixed, nested records, unions of null and one type, and the logical
types timestamp-micros/millis (also local-), date and decimal (fixed or bytes, up to 38 digits).
Arrays, maps and the other logical types raise :class:`Unsupported`; so does a recursive record.

It only has to be right on good data. Any byte it would not take as the record decoder of
:mod:`.logformat` would (a read past a record's end, an over-long varint, a bad union index,
invalid UTF-8, an int out of range, a date or time outside what Python's datetime holds, a
decimal wider than its precision) raises :class:`Mismatch`, and the caller decodes the block
again with the record decoder, whose result or error is then the answer. Tests compare both on
random schemas, records and damaged bytes.
"""

from __future__ import annotations

import json
import struct
from functools import lru_cache
from typing import Any, Callable

import numpy as np
import pyarrow as pa

try:  # the logical types fastavro converts itself: the ones not listed here are not ours to guess
    from fastavro.read import LOGICAL_READERS as _FASTAVRO_LOGICAL
except ImportError:  # pragma: no cover
    _FASTAVRO_LOGICAL = {}

__all__ = ["Mismatch", "Unsupported", "decode_avro_content", "decode_avro_contents", "arrow_decoder"]

_I32 = struct.Struct(">i")

#: blocks with fewer records go to the record decoder: decoding column-wise has a fixed cost per
#: field (a few dozen numpy and Arrow calls) that only pays from about a hundred records on
MIN_RECORDS = 128


class Unsupported(Exception):
    """The schema has a type this decoder does not handle (use the record decoder)."""


class Mismatch(Exception):
    """Bytes this decoder will not judge (use the record decoder, which decides)."""


# Python's datetime/date range, as the record decoder's conversions need it
_MIN_US, _MAX_US = -62_135_596_800_000_000, 253_402_300_799_999_999
_MIN_DAY, _MAX_DAY = 1 - 719_163, 3_652_059 - 719_163

_U64 = np.uint64
_SEVEN = np.arange(0, 70, 7, dtype=np.uint64)


class _Rows:
    """Read positions of a subset of the block's records and where each record ends."""

    __slots__ = ("buf", "pos", "end")

    def __init__(self, buf: np.ndarray, pos: np.ndarray, end: np.ndarray):
        self.buf, self.pos, self.end = buf, pos, end

    def __len__(self) -> int:
        return len(self.pos)

    def subset(self, idx: np.ndarray) -> "_Rows":
        return _Rows(self.buf, self.pos[idx], self.end[idx])

    def take_bytes(self, width: int) -> np.ndarray:
        """(n, width) uint8: the next ``width`` bytes of every row; positions move on."""
        pos = self.pos
        if width and bool((pos + width > self.end).any()):
            raise Mismatch("read past the end of a record")
        out = self.buf[pos[:, None] + np.arange(width, dtype=np.int64)] if width else np.zeros((len(pos), 0), np.uint8)
        self.pos = pos + width
        return out

    def varint(self, max_bytes: int = 10) -> np.ndarray:
        """Zig-zag varints (Avro int/long) as int64; positions move on."""
        pos, end, buf = self.pos, self.end, self.buf
        n = len(pos)
        raw = np.zeros(n, dtype=np.uint64)
        newpos = pos.copy()
        active = np.arange(n)
        for k in range(max_bytes):
            at = pos[active] + k
            if bool((at >= end[active]).any()):
                raise Mismatch("varint runs past the end of a record")
            b = buf[at]
            if k == 9 and bool((b > 1).any()):
                raise Mismatch("varint overflows 64 bits")
            raw[active] |= (b & 0x7F).astype(np.uint64) << _SEVEN[k]
            more = b >= 0x80
            done = active[~more]
            newpos[done] = pos[done] + k + 1
            active = active[more]
            if not len(active):
                break
        else:
            raise Mismatch("varint too long")
        self.pos = newpos
        return ((raw >> _U64(1)) ^ (_U64(0) - (raw & _U64(1)))).view(np.int64)


def _gather(rows: _Rows, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Variable-length byte strings at the rows' positions: (int64 offsets, data)."""
    if bool((lengths < 0).any()):
        raise Mismatch("negative length")
    pos = rows.pos
    if bool((pos + lengths > rows.end).any()):
        raise Mismatch("bytes run past the end of a record")
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    if total:
        idx = np.repeat(pos - offsets[:-1], lengths) + np.arange(total, dtype=np.int64)
        data = rows.buf[idx]
    else:
        data = np.zeros(0, np.uint8)
    rows.pos = pos + lengths
    return offsets, data


def _binary_array(typ: pa.DataType, offsets: np.ndarray, data: np.ndarray) -> pa.Array:
    n = len(offsets) - 1
    if offsets[-1] < 2**31:
        arr = pa.Array.from_buffers(typ, n, [None, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data)])
    else:
        large = pa.large_string() if typ == pa.string() else pa.large_binary()
        arr = pa.Array.from_buffers(large, n, [None, pa.py_buffer(offsets), pa.py_buffer(data)]).cast(typ)
    if typ == pa.string():
        try:
            arr.validate(full=True)  # UTF-8, as bytes.decode() checks it
        except pa.ArrowInvalid:
            raise Mismatch("invalid UTF-8") from None
    return arr


def _from_numpy(typ: pa.DataType, values: np.ndarray) -> pa.Array:
    return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(np.ascontiguousarray(values))])


# ----------------------------------------------------------------- decoders of one schema node
Decoder = Callable[[_Rows], pa.Array]


def _read_long(rows: _Rows) -> np.ndarray:
    return rows.varint()


def _read_int(rows: _Rows) -> np.ndarray:
    v = rows.varint()
    if bool(((v < -(2**31)) | (v >= 2**31)).any()):
        raise Mismatch("int out of range")
    return v


def _primitive(name: str) -> tuple[pa.DataType, Decoder]:
    if name == "null":
        return pa.null(), lambda rows: pa.nulls(len(rows))
    if name == "boolean":
        def dec(rows):
            return pa.array(rows.take_bytes(1)[:, 0] != 0, pa.bool_())
        return pa.bool_(), dec
    if name == "int":
        return pa.int32(), lambda rows: _from_numpy(pa.int32(), _read_int(rows).astype(np.int32))
    if name == "long":
        return pa.int64(), lambda rows: _from_numpy(pa.int64(), _read_long(rows))
    if name == "float":
        return pa.float32(), lambda rows: _from_numpy(pa.float32(), rows.take_bytes(4).view("<f4")[:, 0])
    if name == "double":
        return pa.float64(), lambda rows: _from_numpy(pa.float64(), rows.take_bytes(8).view("<f8")[:, 0])
    if name in ("string", "bytes"):
        typ = pa.string() if name == "string" else pa.binary()

        def dec(rows):
            offsets, data = _gather(rows, rows.varint())
            return _binary_array(typ, offsets, data)

        return typ, dec
    raise Unsupported(name)


def _timestamp(unit: str, scale: int) -> tuple[pa.DataType, Decoder]:
    typ = pa.timestamp(unit, tz="UTC")
    lo, hi = -(-_MIN_US // scale), _MAX_US // scale

    def dec(rows):
        v = _read_long(rows)
        if bool(((v < lo) | (v > hi)).any()):
            raise Mismatch("timestamp outside Python's datetime range")
        return _from_numpy(typ, v)

    return typ, dec


def _date() -> tuple[pa.DataType, Decoder]:
    def dec(rows):
        v = _read_int(rows)
        if bool(((v < _MIN_DAY) | (v > _MAX_DAY)).any()):
            raise Mismatch("date outside Python's date range")
        return _from_numpy(pa.date32(), v.astype(np.int32))

    return pa.date32(), dec


def _decimal_array(typ: pa.DataType, be: np.ndarray) -> pa.Array:
    """(n, 16) big-endian two's complement → decimal128 (checked against its precision)."""
    arr = pa.Array.from_buffers(typ, be.shape[0], [None, pa.py_buffer(np.ascontiguousarray(be[:, ::-1]))])
    try:
        arr.validate(full=True)
    except pa.ArrowInvalid:
        raise Mismatch("decimal wider than its precision") from None
    return arr


def _sign_extend(be: np.ndarray, width: np.ndarray | int) -> np.ndarray:
    """Big-endian (n, 16) bytes holding each value in its last ``width`` bytes: the bytes before
    them take the value's sign (two's complement)."""
    n = be.shape[0]
    w = np.broadcast_to(np.asarray(width, np.int64), (n,))
    negative = be[np.arange(n), 16 - w] >= 0x80
    pad = np.arange(16)[None, :] < (16 - w)[:, None]
    be[pad & negative[:, None]] = 0xFF
    return be


def _decimal_fixed(size: int, precision: int, scale: int) -> tuple[pa.DataType, Decoder]:
    if not 0 < size <= 16 or not 0 < precision <= 38:
        raise Unsupported("decimal size")
    typ = pa.decimal128(precision, scale)

    def dec(rows):
        raw = rows.take_bytes(size)
        be = np.zeros((len(raw), 16), np.uint8)
        be[:, 16 - size:] = raw
        return _decimal_array(typ, _sign_extend(be, size))

    return typ, dec


def _decimal_bytes(precision: int, scale: int) -> tuple[pa.DataType, Decoder]:
    if not 0 < precision <= 38:
        raise Unsupported("decimal precision")
    typ = pa.decimal128(precision, scale)

    def dec(rows):
        lengths = rows.varint()
        if bool(((lengths <= 0) | (lengths > 16)).any()):  # (an empty one is 0 to fastavro: rare, let it say)
            raise Mismatch("decimal bytes length")
        offsets, data = _gather(rows, lengths)
        n = len(lengths)
        be = np.zeros((n, 16), np.uint8)
        # right-align each value: byte j of value i goes to column 16 - len_i + j
        row_of = np.repeat(np.arange(n), lengths)
        col = np.arange(len(data)) - np.repeat(offsets[:-1], lengths) + np.repeat(16 - lengths, lengths)
        be[row_of, col] = data
        return _decimal_array(typ, _sign_extend(be, lengths))

    return typ, dec


class _Compiler:
    def __init__(self, named: dict[str, Any]):
        self.named = named
        self.stack: list[str] = []

    def resolve(self, s: Any) -> Any:
        if isinstance(s, str) and s not in ("null", "boolean", "int", "long", "float", "double", "bytes", "string"):
            if s not in self.named:
                raise Unsupported(f"unknown named type {s}")
            return self.named[s]
        return s

    def node(self, s: Any) -> tuple[pa.DataType, Decoder]:
        s = self.resolve(s)
        if isinstance(s, str):
            return _primitive(s)
        if isinstance(s, list):
            return self.union(s)
        if not isinstance(s, dict):
            raise Unsupported(repr(s))
        typ = s.get("type")
        lt = s.get("logicalType")
        if isinstance(typ, (dict, list)):
            return self.node(typ)
        if lt is not None and isinstance(typ, str):
            key = f"{typ}-{lt}"
            if key in ("long-timestamp-micros", "long-local-timestamp-micros"):
                return _timestamp("us", 1)
            if key in ("long-timestamp-millis", "long-local-timestamp-millis"):
                return _timestamp("ms", 1000)
            if key == "int-date":
                return _date()
            if key == "fixed-decimal":
                return _decimal_fixed(int(s["size"]), int(s["precision"]), int(s.get("scale", 0)))
            if key == "bytes-decimal":
                return _decimal_bytes(int(s["precision"]), int(s.get("scale", 0)))
            if key in _FASTAVRO_LOGICAL:
                raise Unsupported(f"logical type {lt}")  # converted to objects Arrow columns do not take
        if typ in ("record", "error"):
            return self.record(s)
        if typ == "enum":
            return self.enum(s)
        if typ == "fixed":
            return self.fixed(int(s["size"]))
        if isinstance(typ, str) and typ in ("null", "boolean", "int", "long", "float", "double", "bytes", "string"):
            return _primitive(typ)
        raise Unsupported(f"type {typ!r}")

    def enum(self, s: dict) -> tuple[pa.DataType, Decoder]:
        symbols = pa.array(list(s["symbols"]), pa.string())
        k = len(symbols)

        def dec(rows):
            v = rows.varint()
            if bool(((v < 0) | (v >= k)).any()):
                raise Mismatch("enum index")
            return symbols.take(pa.array(v))

        return pa.string(), dec

    def fixed(self, size: int) -> tuple[pa.DataType, Decoder]:
        typ = pa.binary(size)

        def dec(rows):
            raw = rows.take_bytes(size)
            return pa.Array.from_buffers(typ, len(raw), [None, pa.py_buffer(np.ascontiguousarray(raw).ravel())])

        return typ, dec

    def union(self, branches: list) -> tuple[pa.DataType, Decoder]:
        non_null = [i for i, b in enumerate(branches) if self.resolve(b) != "null"]
        nulls = [i for i, b in enumerate(branches) if self.resolve(b) == "null"]
        if len(non_null) != 1 or len(nulls) > 1 or len(branches) > 2:
            raise Unsupported("only unions of null and one type")
        vi = non_null[0]
        vtype, vdec = self.node(branches[vi])

        ni = nulls[0] if nulls else None

        def dec(rows):
            b = rows.take_bytes(1)[:, 0]
            bad = (b != 2 * vi) if ni is None else ((b != 2 * vi) & (b != 2 * ni))
            if bool(bad.any()):
                raise Mismatch("union index")
            valid = b == 2 * vi
            n = len(rows)
            if bool(valid.all()):
                return vdec(rows)
            idx = np.flatnonzero(valid)
            sub = rows.subset(idx)
            child = vdec(sub)
            rows.pos[idx] = sub.pos
            take = np.zeros(n, np.int64)
            take[idx] = np.arange(len(idx))
            return child.take(pa.array(take, mask=~valid))

        return vtype, dec

    def record(self, s: dict) -> tuple[pa.DataType, Decoder]:
        name = s.get("name") or ""
        if name in self.stack:
            raise Unsupported("recursive record")
        self.stack.append(name)
        try:
            fields = [(f["name"], *self.node(f["type"])) for f in s.get("fields", [])]
        finally:
            self.stack.pop()
        typ = pa.struct([pa.field(n, t) for n, t, _ in fields])

        if not fields:
            raise Unsupported("record without fields")

        def dec(rows):
            return pa.StructArray.from_arrays([d(rows) for _, _, d in fields], fields=list(typ))

        return typ, dec


@lru_cache(maxsize=128)
def arrow_decoder(schema_json: str) -> tuple[pa.Schema, Callable[[_Rows], list[pa.Array]]]:
    """The Arrow schema of a top-level record schema and the function decoding its fields.

    Raises :class:`Unsupported` when the schema has anything this module does not decode."""
    import fastavro

    named: dict[str, Any] = {}
    try:
        parsed = fastavro.parse_schema(json.loads(schema_json), named_schemas=named)
    except Exception as e:  # the record decoder reports bad schemas
        raise Unsupported(f"schema: {e}") from None
    if not isinstance(parsed, dict) or parsed.get("type") not in ("record", "error"):
        raise Unsupported("not a record schema")
    comp = _Compiler(named)
    comp.stack.append(parsed.get("name") or "")
    fields = [(f["name"], *comp.node(f["type"])) for f in parsed.get("fields", [])]
    schema = pa.schema([pa.field(n, t) for n, t, _ in fields])

    def decode(rows: _Rows) -> list[pa.Array]:
        return [d(rows) for _, _, d in fields]

    return schema, decode


def record_bounds(content: bytes, count: int) -> tuple[np.ndarray, np.ndarray]:
    """(start, end) of every record after its 4-byte length; :class:`Mismatch` on an overrun.

    Each length says where the next one is, so this is one step per record; the step does
    only what it must (read the length, note the start), the ends follow from the starts."""
    if count <= 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    starts = [0] * count
    unpack = _I32.unpack_from
    pos = 8
    try:
        for i in range(count):
            ln = unpack(content, pos)[0]  # struct.error past the end
            pos += 4
            starts[i] = pos
            pos += ln
            if ln < 0:
                raise Mismatch("record length")
    except struct.error:
        raise Mismatch("record length") from None
    if pos > len(content):
        raise Mismatch("record length")
    s = np.array(starts, np.int64)
    e = np.empty(count, np.int64)
    e[:-1] = s[1:] - 4
    e[-1] = pos
    return s, e


def decode_avro_content(content: bytes, count: int, schema_json: str) -> pa.Table:
    """The ``count`` records of AVRO_DATA ``content`` (header already checked) as an Arrow table
    of the writer schema's columns. Raises :class:`Unsupported` or :class:`Mismatch` when the
    record decoder must decide, and :class:`Unsupported` for fewer than :data:`MIN_RECORDS`
    records, where it is the faster one."""
    return decode_avro_contents([content], [count], schema_json)


def decode_avro_contents(contents: list[bytes], counts: list[int], schema_json: str) -> pa.Table:
    """The records of several AVRO_DATA contents written with one schema, decoded together (the
    fixed cost of decoding column-wise is paid once: many small blocks, as streaming writers
    make them, decode as fast as one large one): one table, the blocks' records in order."""
    total = sum(counts)
    if total < MIN_RECORDS:
        raise Unsupported(f"{total} records: the record decoder is faster")
    schema, decode = arrow_decoder(schema_json)
    starts, ends, offset = [], [], 0
    for content, count in zip(contents, counts):
        s, e = record_bounds(content, count)
        starts.append(s + offset)
        ends.append(e + offset)
        offset += len(content)
    buf = contents[0] if len(contents) == 1 else b"".join(contents)
    rows = _Rows(np.frombuffer(buf, np.uint8), np.concatenate(starts), np.concatenate(ends))
    try:
        cols = decode(rows)
    except (IndexError, ValueError, OverflowError, pa.ArrowException) as e:  # anything odd: not ours to judge
        raise Mismatch(f"{type(e).__name__}: {e}") from None
    return pa.Table.from_arrays(cols, schema=schema)
