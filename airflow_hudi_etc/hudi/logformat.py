"""Hudi log files (table version 6): block framing, block contents, log file names.

A log file is a sequence of blocks, no file header (shared/hudi-format.md §1). Each block, all
integers big-endian::

    magic "#HUDI#" (6) | block length (int64: everything after this field, trailer included)
    | format version (int32 = 1) | block type (int32) | header | content length (int64)
    | content | footer | total block size (int64 = block length + 6)

Header and footer are ``int32 count`` then per entry ``int32 key ordinal, int32 length, UTF-8
bytes`` (no length prefix of their own). A block is corrupt when its trailer does not equal
block length + 6, when it runs past the end of the file, or when what follows it is neither
the end of the file nor another magic; readers then resync at the next magic (§1, Java's
``HoodieLogFileReader.isBlockCorrupt``). Block contents: §2.
"""

from __future__ import annotations

import enum
import io
import json
import re
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Iterator, Sequence

import fastavro

from .errors import CorruptLogBlockError, TruncatedLogFileError, UnknownBlockTypeError, UnsupportedFeatureError

MAGIC = b"#HUDI#"
FORMAT_VERSION = 1
AVRO_BLOCK_VERSION = 3
DELETE_BLOCK_VERSION = 3
ROLLBACK_COMMAND = "0"
_RESYNC_CHUNK = 1 << 20


class BlockType(enum.IntEnum):
    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(enum.IntEnum):
    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


#: header keys a table-version-6 writer may emit (later ordinals break 0.14/0.15 readers)
V6_WRITABLE_KEYS = frozenset({HeaderKey.INSTANT_TIME, HeaderKey.TARGET_INSTANT_TIME, HeaderKey.SCHEMA,
                              HeaderKey.COMMAND_BLOCK_TYPE})


@dataclass(frozen=True)
class LogBlock:
    block_type: BlockType
    header: tuple[tuple[HeaderKey, str], ...]
    footer: tuple[tuple[HeaderKey, str], ...]
    content: bytes
    offset: int
    size: int
    format_version: int = FORMAT_VERSION

    @property
    def header_dict(self) -> dict[HeaderKey, str]:
        return dict(self.header)

    @property
    def instant_time(self) -> str | None:
        return self.header_dict.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        return self.header_dict.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema_json(self) -> str | None:
        return self.header_dict.get(HeaderKey.SCHEMA)


@dataclass(frozen=True)
class CorruptBlock:
    offset: int
    size: int
    reason: str
    block_type: BlockType = BlockType.CORRUPT


# --------------------------------------------------------------------------- framing
def _encode_map(entries: Sequence[tuple[HeaderKey, str]], *, check_v6: bool) -> bytes:
    out = [struct.pack(">i", len(entries))]
    for k, v in entries:
        k = HeaderKey(k)
        if check_v6 and k not in V6_WRITABLE_KEYS:
            raise ValueError(f"header key {k.name} must not be written to a table-version-6 log")
        b = v.encode("utf-8")
        out.append(struct.pack(">ii", int(k), len(b)) + b)
    return b"".join(out)


def encode_block(
    block_type: BlockType | int,
    header: Sequence[tuple[HeaderKey, str]],
    content: bytes,
    footer: Sequence[tuple[HeaderKey, str]] = (),
    *,
    check_v6: bool = True,
) -> bytes:
    """One block, framed exactly as Hudi's ``HoodieLogFormatWriter`` writes it."""
    body = (
        struct.pack(">ii", FORMAT_VERSION, int(block_type))
        + _encode_map(header, check_v6=check_v6)
        + struct.pack(">q", len(content))
        + content
        + _encode_map(footer, check_v6=check_v6)
    )
    block_len = len(body) + 8
    return MAGIC + struct.pack(">q", block_len) + body + struct.pack(">q", block_len + 6)


class _Cursor:
    __slots__ = ("data", "pos", "end")

    def __init__(self, data: bytes, pos: int, end: int):
        self.data, self.pos, self.end = data, pos, end

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise CorruptLogBlockError(f"field of {n} bytes runs past the block at offset {self.pos}")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b

    def i32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def i64(self) -> int:
        return struct.unpack(">q", self.take(8))[0]


def _decode_map(c: _Cursor) -> tuple[tuple[HeaderKey, str], ...]:
    n = c.i32()
    if n < 0 or n > 64:
        raise CorruptLogBlockError(f"metadata map of {n} entries")
    out = []
    for _ in range(n):
        k = c.i32()
        ln = c.i32()
        v = c.take(ln).decode("utf-8", errors="replace")
        try:
            key = HeaderKey(k)
        except ValueError:
            raise UnknownBlockTypeError(f"unknown log block header key {k} at offset {c.pos}") from None
        out.append((key, v))
    return tuple(out)


def _next_magic(data: bytes, start: int) -> int:
    i = data.find(MAGIC, start)
    return len(data) if i < 0 else i


def _corrupt_reason(data: bytes, pos: int) -> str | None:
    """Java's isBlockCorrupt for the block whose magic is at ``pos`` (None when sound)."""
    n = len(data)
    if pos + 14 > n:
        return "truncated: no block length"
    block_len = struct.unpack(">q", data[pos + 6 : pos + 14])[0]
    if block_len < 8 + 8 + 8:
        return f"block length {block_len} too small"
    trailer_at = pos + 14 + block_len - 8
    if trailer_at + 8 > n:
        return f"truncated: block length {block_len} runs past the end of the file"
    trailer = struct.unpack(">q", data[trailer_at : trailer_at + 8])[0]
    if trailer - 6 != block_len:
        return f"trailing length {trailer} != block length {block_len} + 6"
    after = trailer_at + 8
    if after != n and data[after : after + 6] != MAGIC:
        return "junk after block"
    return None


def iter_blocks(data: bytes, *, strict: bool = False) -> Iterator[LogBlock | CorruptBlock]:
    """Blocks of a log file's bytes; corrupt stretches become :class:`CorruptBlock` (or raise)."""
    data = bytes(data)
    n = len(data)
    pos = 0
    while pos < n:
        if data[pos : pos + 6] != MAGIC:
            nxt = _next_magic(data, pos + 1)
            reason = "truncated: partial magic" if n - pos < 6 and MAGIC.startswith(data[pos:]) else "bytes without a magic"
            if strict:
                raise (TruncatedLogFileError if "truncated" in reason else CorruptLogBlockError)(
                    f"{reason} at offset {pos}")
            yield CorruptBlock(pos, nxt - pos, reason)
            pos = nxt
            continue
        reason = _corrupt_reason(data, pos)
        if reason is not None:
            nxt = _next_magic(data, pos + 6)
            if strict:
                raise (TruncatedLogFileError if reason.startswith("truncated") else CorruptLogBlockError)(
                    f"corrupt log block at offset {pos}: {reason}")
            yield CorruptBlock(pos, nxt - pos, reason)
            pos = nxt
            continue
        block_len = struct.unpack(">q", data[pos + 6 : pos + 14])[0]
        end = pos + 14 + block_len - 8
        c = _Cursor(data, pos + 14, end)
        version = c.i32()
        if version != FORMAT_VERSION:
            raise UnsupportedFeatureError(f"log format version {version} at offset {pos} is not supported")
        btype = c.i32()
        try:
            bt = BlockType(btype)
        except ValueError:
            raise UnknownBlockTypeError(f"unknown log block type {btype} at offset {pos}") from None
        try:
            header = _decode_map(c)
            clen = c.i64()
            content = c.take(clen)
            footer = _decode_map(c)
            if c.pos != end:
                raise CorruptLogBlockError(f"{end - c.pos} unexplained bytes in block")
        except CorruptLogBlockError as e:
            if strict:
                raise CorruptLogBlockError(f"corrupt log block at offset {pos}: {e}") from None
            yield CorruptBlock(pos, end + 8 - pos, str(e))
            pos = end + 8
            continue
        yield LogBlock(bt, header, footer, content, pos, end + 8 - pos, version)
        pos = end + 8


def read_blocks(data: bytes, *, strict: bool = False) -> list[LogBlock | CorruptBlock]:
    return list(iter_blocks(data, strict=strict))


def read_log_file(path: str, *, strict: bool = False) -> list[LogBlock | CorruptBlock]:
    with open(path, "rb") as f:
        return read_blocks(f.read(), strict=strict)


# --------------------------------------------------------------------------- avro data
@lru_cache(maxsize=256)
def _parsed_schema(schema_json: str):
    return fastavro.parse_schema(json.loads(schema_json))


def _schema_key(schema: dict | str) -> str:
    return schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":"))


def encode_avro_records(schema: dict | str, records: Iterable[dict]) -> bytes:
    """Avro data block content: int32 version 3, int32 count, then length-prefixed datums."""
    parsed = _parsed_schema(_schema_key(schema))
    parts = []
    buf = io.BytesIO()
    count = 0
    for r in records:
        buf.seek(0)
        buf.truncate()
        fastavro.schemaless_writer(buf, parsed, r)
        b = buf.getvalue()
        parts.append(struct.pack(">i", len(b)) + b)
        count += 1
    return struct.pack(">ii", AVRO_BLOCK_VERSION, count) + b"".join(parts)


def decode_avro_records(content: bytes, writer_schema: dict | str, reader_schema: dict | None = None) -> list[dict]:
    if writer_schema is None:
        raise CorruptLogBlockError("Avro data block without a SCHEMA header")
    parsed = _parsed_schema(_schema_key(writer_schema))
    rparsed = fastavro.parse_schema(reader_schema) if reader_schema is not None else None
    n = len(content)
    if n < 8:
        raise CorruptLogBlockError("Avro data block content too short")
    version, count = struct.unpack(">ii", content[:8])
    if version != AVRO_BLOCK_VERSION:
        raise CorruptLogBlockError(f"Avro data block version {version} (expected 3)")
    if count < 0 or count > (n - 8) // 4:
        raise CorruptLogBlockError(f"Avro data block claims {count} records in {n} bytes")
    out = []
    bio = io.BytesIO(content)
    pos = 8
    for _ in range(count):
        if pos + 4 > n:
            raise CorruptLogBlockError("Avro data block ends inside a record length")
        ln = struct.unpack(">i", content[pos : pos + 4])[0]
        pos += 4
        if ln < 0 or pos + ln > n:
            raise CorruptLogBlockError(f"Avro record of {ln} bytes runs past the block")
        bio.seek(pos)
        try:
            rec = fastavro.schemaless_reader(bio, parsed, rparsed) if rparsed else fastavro.schemaless_reader(bio, parsed)
        except Exception as e:  # fastavro raises many types on garbage
            raise CorruptLogBlockError(f"undecodable Avro record: {e}") from None
        if bio.tell() != pos + ln:
            raise CorruptLogBlockError("Avro record length does not match its datum")
        out.append(rec)
        pos += ln
    return out


# --------------------------------------------------------------------------- parquet data
def decode_parquet_content(content: bytes):
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(io.BytesIO(content))
    except (pa.ArrowInvalid, OSError) as e:
        raise CorruptLogBlockError(f"undecodable Parquet data block: {e}") from None


def encode_parquet_content(table, compression: str = "gzip") -> bytes:
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    pq.write_table(table, sink, compression=compression)
    return sink.getvalue()


# --------------------------------------------------------------------------- delete
_NS = "org.apache.hudi.avro.model"
_WRAPPERS = [
    ("boolean", "BooleanWrapper", "boolean"),
    ("int", "IntWrapper", "int"),
    ("long", "LongWrapper", "long"),
    ("float", "FloatWrapper", "float"),
    ("double", "DoubleWrapper", "double"),
    ("bytes", "BytesWrapper", "bytes"),
    ("string", "StringWrapper", "string"),
    ("date", "DateWrapper", {"type": "int", "logicalType": "date"}),
    ("decimal", "DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15}),
    ("time_micros", "TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}),
    ("timestamp_micros", "TimestampMicrosWrapper", "long"),
]
_WRAPPER_BY_KIND = {k: f"{_NS}.{n}" for k, n, _ in _WRAPPERS}
_KIND_BY_WRAPPER = {v: k for k, v in _WRAPPER_BY_KIND.items()}

DELETE_RECORD_LIST_SCHEMA = {
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
                                {"type": "record", "name": n, "namespace": _NS, "fields": [{"name": "value", "type": t}]}
                                for _k, n, t in _WRAPPERS
                            ],
                            "default": None,
                        },
                    ],
                },
            },
        }
    ],
}
_DELETE_PARSED = fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA)


@dataclass(frozen=True)
class DeleteRecord:
    record_key: str | None
    partition_path: str | None
    ordering_value: Any = 0
    ordering_type: str | None = "int"


def natural_order_delete(key: str, partition: str | None) -> DeleteRecord:
    """A delete carrying Integer 0, Hudi's natural-order marker: it wins over earlier logs."""
    return DeleteRecord(key, partition, 0, "int")


def encode_delete_records(records: Iterable[DeleteRecord]) -> bytes:
    items = []
    for d in records:
        if d.ordering_type is None or d.ordering_value is None:
            ov = None
        else:
            if d.ordering_type not in _WRAPPER_BY_KIND:
                raise ValueError(f"unknown ordering value type {d.ordering_type!r}")
            ov = (_WRAPPER_BY_KIND[d.ordering_type], {"value": d.ordering_value})
        items.append({"recordKey": d.record_key, "partitionPath": d.partition_path, "orderingVal": ov})
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, _DELETE_PARSED, {"deleteRecordList": items})
    b = buf.getvalue()
    return struct.pack(">ii", DELETE_BLOCK_VERSION, len(b)) + b


def decode_delete_records(content: bytes) -> list[DeleteRecord]:
    if len(content) < 8:
        raise CorruptLogBlockError("delete block content too short")
    version, ln = struct.unpack(">ii", content[:8])
    if version in (1, 2):
        raise UnsupportedFeatureError(f"delete block version {version} (Kryo) is not supported")
    if version != DELETE_BLOCK_VERSION:
        raise CorruptLogBlockError(f"delete block version {version}")
    if ln < 0 or 8 + ln > len(content):
        raise CorruptLogBlockError(f"delete block payload of {ln} bytes runs past the block")
    try:
        rec = fastavro.schemaless_reader(io.BytesIO(content[8 : 8 + ln]), _DELETE_PARSED, return_record_name=True)
    except Exception as e:
        raise CorruptLogBlockError(f"undecodable delete block: {e}") from None
    out = []
    for d in rec["deleteRecordList"]:
        ov = d.get("orderingVal")
        if ov is None:
            out.append(DeleteRecord(d.get("recordKey"), d.get("partitionPath"), None, None))
        else:
            name, val = ov
            out.append(DeleteRecord(d.get("recordKey"), d.get("partitionPath"), val["value"], _KIND_BY_WRAPPER[name]))
    return out


# --------------------------------------------------------------------------- whole blocks
def encode_data_block(instant_time: str, schema_json: str, records: Iterable[dict]) -> bytes:
    content = encode_avro_records(schema_json, records)
    return encode_block(BlockType.AVRO_DATA, [(HeaderKey.INSTANT_TIME, instant_time), (HeaderKey.SCHEMA, schema_json)], content)


def encode_delete_block(instant_time: str, schema_json: str, records: Iterable[DeleteRecord]) -> bytes:
    content = encode_delete_records(records)
    return encode_block(BlockType.DELETE, [(HeaderKey.INSTANT_TIME, instant_time), (HeaderKey.SCHEMA, schema_json)], content)


def encode_rollback_block(instant_time: str, target_instant_time: str) -> bytes:
    header = [  # the order Hudi 0.14/0.15 writes (a real rollback block of the fixtures)
        (HeaderKey.INSTANT_TIME, instant_time),
        (HeaderKey.COMMAND_BLOCK_TYPE, ROLLBACK_COMMAND),
        (HeaderKey.TARGET_INSTANT_TIME, target_instant_time),
    ]
    return encode_block(BlockType.COMMAND, header, b"")


# --------------------------------------------------------------------------- file names
_LOG_RE = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(\.cdc)?)?$")
_ID_RE = re.compile(r"^[A-Za-z0-9-]+$")


@dataclass(frozen=True)
class LogFileName:
    file_id: str
    base_instant: str
    version: int
    write_token: str | None
    extension: str = "log"
    suffix: str = ""


def parse_log_file_name(name: str) -> LogFileName | None:
    m = _LOG_RE.match(name)
    if not m:
        return None
    return LogFileName(m.group(1), m.group(2), int(m.group(4)), m.group(6), m.group(3), m.group(10) or "")


def format_log_file_name(file_id: str, base_instant: str, version: int, write_token: str, extension: str = "log") -> str:
    if not _ID_RE.match(file_id) or not _ID_RE.match(write_token or ""):
        raise ValueError(f"file id {file_id!r} and write token {write_token!r} may only hold [A-Za-z0-9-]")
    if version < 1:
        raise ValueError("log versions start at 1")
    return f".{file_id}_{base_instant}.{extension}.{version}_{write_token}"


def log_file_sort_key(name: str) -> tuple:
    """Hudi's LogFileComparator: base instant, version, write token (None first), suffix."""
    p = parse_log_file_name(name)
    if p is None:
        return ("", 0, (0, ""), name)
    return (p.base_instant, p.version, (0, "") if p.write_token is None else (1, p.write_token), p.suffix)
