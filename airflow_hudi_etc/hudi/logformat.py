"""Hudi log files of table version 6 (Hudi 0.14/0.15): block framing, block contents, file names.

Everything here is specified in ``shared/hudi-format.md``; section numbers below point there.

Block framing (§1)
------------------
A log file is a plain sequence of blocks; there is no file header. Every integer is big-endian
(Java ``DataOutputStream``). One block::

    "#HUDI#"                 6 bytes magic
    block length             int64: every byte after this field, the trailing int64 included
    log format version       int32, always 1 (0 is the pre-2018 legacy layout, not supported)
    block type               int32, ordinal of :class:`BlockType`
    header                   int32 count, then per entry: int32 key ordinal (:class:`HeaderKey`),
                             int32 byte length, that many UTF-8 bytes. No length prefix of its own.
    content length           int64
    content                  type specific, see below
    footer                   same encoding as the header; empty (``00000000``) in practice
    total block size         int64 = block length + 6 (bytes from the magic through the footer)

The trailing size lets Java walk a file backwards, and, with the magic, detects torn writes.

Corrupt and truncated blocks (§1, Java ``HoodieLogFileReader``)
---------------------------------------------------------------
After a magic the reader takes the block length and checks the block *before* parsing it
(``isBlockCorrupt``): the trailing int64 must lie inside the file and equal block length + 6,
and the 6 bytes after it must be another magic or the end of the file. A block that fails is a
corrupt block; reading resumes at the next ``#HUDI#`` found after the corrupt block's magic
(the whole stretch up to there is the corrupt block). :func:`iter_blocks` applies exactly these
rules and reports such stretches as :class:`CorruptBlock` (or raises in ``strict`` mode).
Where this module differs from Java, on purpose, it says so:

* bytes that do not start with a magic at the beginning of the file: Java fails the read
  (``CorruptedLogFileException`` from ``hasNext``); hudi-rs fails too. Here they become a
  :class:`CorruptBlock` and reading resyncs at the next magic (``strict`` raises).
* 1-5 bytes left after the last block (a torn magic): Java's ``readFully`` hits EOF and it
  silently treats the file as ended; the preceding block is valid in both. Here the tail is
  also reported as a :class:`CorruptBlock` with reason ``truncated: ...`` so it is visible;
  which blocks are valid is the same as in Java.
* Java casts the block length to a 32-bit ``int`` before checking it; lengths are taken as the
  full signed 64-bit value here. The two only differ for lengths of 2 GiB or more, which Java
  cannot write (blocks are byte arrays), and such blocks are corrupt in both.
* A block that passes the framing check but whose inside does not parse (header entries or
  content running past the trailer, bytes left over before the trailer) makes Java fail the
  whole read with an exception. Here it raises :class:`~.errors.CorruptLogBlockError` in both
  modes: skipping it silently could drop committed records from a compaction.
* No length field is ever used to allocate memory before it is checked against the bytes that
  are actually there (Java allocates first).

Block contents (§2)
-------------------
* AVRO_DATA (§2.1): int32 version (3), int32 record count, then per record an int32 byte length
  and the record as schemaless Avro binary in the writer schema of the SCHEMA header.
  :func:`encode_avro_records`, :func:`decode_avro_records`. Decoding is the hot path of a
  compaction: it runs a decoder generated per schema (about twice fastavro's per-record speed)
  whose results are checked to be fastavro's, and falls back to fastavro on anything unusual.
* PARQUET_DATA (§2.2): one complete Parquet file. :func:`encode_parquet_content`,
  :func:`decode_parquet_content`.
* DELETE (§2.3): int32 version (3), int32 byte length, then schemaless Avro of
  ``HoodieDeleteRecordList`` whose ordering values use Hudi's wrapper-record union.
  :func:`encode_delete_records`, :func:`decode_delete_records`, :class:`DeleteRecord`.
* COMMAND (§2.4): empty content; a rollback of the blocks of TARGET_INSTANT_TIME.
  :func:`encode_rollback_block`.

Log file names (§3)
-------------------
``.{fileId}_{baseInstant}.log.{version}_{writeToken}`` (optionally ``.cdc``); in table version 6
the instant in the name is the *base instant* of the file slice, not the writing deltacommit.
:func:`parse_log_file_name`, :func:`format_log_file_name`, :func:`log_file_sort_key`.
"""

from __future__ import annotations

import datetime as _dt
import decimal as _decimal
import enum
import io
import json
import os
import re
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Iterator, Mapping, Sequence, Union

import fastavro
from fastavro.read import LOGICAL_READERS as _FASTAVRO_LOGICAL_READERS

from .errors import CorruptLogBlockError, TruncatedLogFileError, UnknownBlockTypeError, UnsupportedFeatureError

__all__ = [
    "MAGIC",
    "FORMAT_VERSION",
    "AVRO_BLOCK_VERSION",
    "DELETE_BLOCK_VERSION",
    "ROLLBACK_COMMAND",
    "BlockType",
    "HeaderKey",
    "V6_WRITABLE_KEYS",
    "LogBlock",
    "CorruptBlock",
    "encode_block",
    "iter_blocks",
    "read_blocks",
    "read_log_file",
    "encode_avro_records",
    "decode_avro_records",
    "decode_parquet_content",
    "encode_parquet_content",
    "DeleteRecord",
    "ORDERING_TYPES",
    "DELETE_RECORD_LIST_SCHEMA",
    "natural_order_delete",
    "encode_delete_records",
    "decode_delete_records",
    "encode_data_block",
    "encode_delete_block",
    "encode_rollback_block",
    "LogFileName",
    "parse_log_file_name",
    "format_log_file_name",
    "log_file_sort_key",
]

MAGIC = b"#HUDI#"
#: the log format version written by every Hudi since 0.5 (``HoodieLogFormat.CURRENT_VERSION``)
FORMAT_VERSION = 1
#: ``HoodieLogBlock.version``: the content version of data and delete blocks written by 0.14/0.15
AVRO_BLOCK_VERSION = 3
DELETE_BLOCK_VERSION = 3
#: value of the COMMAND_BLOCK_TYPE header for ROLLBACK_PREVIOUS_BLOCK (ordinal 0, as a string)
ROLLBACK_COMMAND = "0"

#: Java keeps whole blocks in ``byte[]`` and casts block and content lengths to ``int``
_MAX_BLOCK_LENGTH = 2**31 - 1
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_I32_I32 = struct.Struct(">ii")
#: magic (6) + block length (8): the bytes before a block's own ``block length`` bytes
_PREFIX = 14
#: smallest possible block length of format version 1: version, type, header count, content
#: length, footer count, trailing size
_MIN_BLOCK_LENGTH = 4 + 4 + 4 + 8 + 4 + 8


class BlockType(enum.IntEnum):
    """``HoodieLogBlock.HoodieLogBlockType``; written as its ordinal (§1)."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2  # reader-only: never written to a file
    AVRO_DATA = 3
    HFILE_DATA = 4  # metadata table
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(enum.IntEnum):
    """``HoodieLogBlock.HeaderMetadataType``; written as its ordinal (§1)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


#: Header keys a table-version-6 writer may emit. Hudi 0.14/0.15 readers fail with an array
#: index error on ordinals they do not know (7 and 8 arrived with 1.0), and 0.14/0.15 writers
#: themselves only ever write these four (§1, §9 pitfall 4).
V6_WRITABLE_KEYS = frozenset(
    {HeaderKey.INSTANT_TIME, HeaderKey.TARGET_INSTANT_TIME, HeaderKey.SCHEMA, HeaderKey.COMMAND_BLOCK_TYPE}
)

Metadata = tuple[tuple[HeaderKey, str], ...]


@dataclass(frozen=True)
class LogBlock:
    """One sound block of a log file.

    ``header`` and ``footer`` keep the entries in file order, so
    ``encode_block(b.block_type, b.header, b.content, b.footer)`` gives back the block's bytes.
    Should a key repeat, :attr:`header_dict` keeps the last value, as Java's HashMap does.
    """

    block_type: BlockType
    header: Metadata
    footer: Metadata
    content: bytes
    #: position of the block's magic in the file
    offset: int
    #: total bytes of the block, magic and trailing size included
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

    @property
    def end(self) -> int:
        """Offset just past the block (where the next block's magic is)."""
        return self.offset + self.size

    def encode(self) -> bytes:
        """The block's bytes, re-encoded from its parts (identical to the file's bytes)."""
        return encode_block(self.block_type, self.header, self.content, self.footer, check_v6=False)


@dataclass(frozen=True)
class CorruptBlock:
    """A stretch of a log file that Hudi's reader treats as a corrupt block (§1).

    ``offset`` is where the stretch starts (the magic of the failed block, or the start of
    the file for junk before the first magic); ``size`` runs to the next magic or the end of
    the file. ``reason`` is human-readable and starts with ``truncated`` when the file ends
    inside the block.
    """

    offset: int
    size: int
    reason: str
    block_type: BlockType = BlockType.CORRUPT

    @property
    def end(self) -> int:
        return self.offset + self.size

    @property
    def truncated(self) -> bool:
        return self.reason.startswith("truncated")


# =========================================================================== block framing
def _encode_metadata(entries: Sequence[tuple[HeaderKey | int, str]], *, check_v6: bool, what: str) -> bytes:
    out = [_I32.pack(len(entries))]
    for entry in entries:
        k, v = entry
        try:
            key = HeaderKey(k)
        except ValueError:
            raise ValueError(f"unknown {what} key ordinal {k!r}") from None
        if check_v6 and key not in V6_WRITABLE_KEYS:
            raise ValueError(
                f"{what} key {key.name} (ordinal {int(key)}) must not be written to a table-version-6 log: "
                "Hudi 0.14/0.15 readers only know keys up to their own enum and write only 0-3"
            )
        if not isinstance(v, str):
            raise ValueError(f"{what} value of {key.name} must be a str, got {type(v).__name__}")
        b = v.encode("utf-8")
        out.append(_I32_I32.pack(int(key), len(b)))
        out.append(b)
    return b"".join(out)


def encode_block(
    block_type: BlockType | int,
    header: Sequence[tuple[HeaderKey | int, str]],
    content: bytes,
    footer: Sequence[tuple[HeaderKey | int, str]] = (),
    *,
    check_v6: bool = True,
) -> bytes:
    """One block framed exactly as Hudi's ``HoodieLogFormatWriter`` writes it (§1).

    Header and footer entries are written in the order given. With ``check_v6`` (the default)
    only the header keys of :data:`V6_WRITABLE_KEYS` are allowed; ``check_v6=False`` exists to
    build test files with newer keys. Raises ValueError on an unknown or reader-only block type,
    an unknown key, a non-string value, or a block of 2 GiB or more.
    """
    try:
        bt = BlockType(block_type)
    except ValueError:
        raise ValueError(f"unknown block type {block_type!r}") from None
    if bt == BlockType.CORRUPT:
        raise ValueError("CORRUPT is a reader-only block type and is never written")
    content = bytes(content)
    body = b"".join(
        (
            _I32_I32.pack(FORMAT_VERSION, int(bt)),
            _encode_metadata(header, check_v6=check_v6, what="header"),
            _I64.pack(len(content)),
            content,
            _encode_metadata(footer, check_v6=check_v6, what="footer"),
        )
    )
    block_len = len(body) + 8
    if block_len > _MAX_BLOCK_LENGTH:
        raise ValueError(f"block of {block_len} bytes: Hudi blocks must stay under 2 GiB")
    return b"".join((MAGIC, _I64.pack(block_len), body, _I64.pack(block_len + 6)))


class _Cursor:
    """Bounded big-endian reader over ``data[pos:end]``; overruns raise CorruptLogBlockError."""

    __slots__ = ("data", "pos", "end", "block_offset")

    def __init__(self, data: bytes, pos: int, end: int, block_offset: int):
        self.data, self.pos, self.end, self.block_offset = data, pos, end, block_offset

    def fail(self, what: str) -> CorruptLogBlockError:
        return CorruptLogBlockError(
            f"log block at offset {self.block_offset}: {what} (at offset {self.pos}); the block's framing is "
            "sound but its inside does not parse, Hudi fails on it as well"
        )

    def i32(self, what: str) -> int:
        if self.end - self.pos < 4:
            raise self.fail(f"{what} runs past the block")
        v = _I32.unpack_from(self.data, self.pos)[0]
        self.pos += 4
        return v

    def i64(self, what: str) -> int:
        if self.end - self.pos < 8:
            raise self.fail(f"{what} runs past the block")
        v = _I64.unpack_from(self.data, self.pos)[0]
        self.pos += 8
        return v

    def take(self, n: int, what: str) -> bytes:
        if n < 0 or n > self.end - self.pos:
            raise self.fail(f"{what} of {n} bytes does not fit in the {self.end - self.pos} bytes left of the block")
        b = self.data[self.pos : self.pos + n]
        self.pos += n
        return b


def _decode_metadata(c: _Cursor, what: str) -> Metadata:
    """A header or footer. Unknown key ordinals raise UnknownBlockTypeError (Java fails too)."""
    at = c.pos
    count = c.i32(f"{what} entry count")
    # every entry needs at least 8 bytes (key, length): bounds the loop before it runs
    if count < 0 or count > (c.end - c.pos) // 8:
        c.pos = at
        raise c.fail(f"{what} claims {count} entries")
    out = []
    for _ in range(count):
        key_at = c.pos
        k = c.i32(f"{what} key")
        n = c.i32(f"{what} value length")
        raw = c.take(n, f"{what} value")
        if not 0 <= k < len(HeaderKey):
            raise UnknownBlockTypeError(
                f"log block at offset {c.block_offset}: unknown {what} key ordinal {k} at offset {key_at} "
                f"(known: 0-{len(HeaderKey) - 1}); written by a newer Hudi?"
            )
        # Java decodes with new String(bytes): malformed UTF-8 becomes U+FFFD, never an error
        out.append((HeaderKey(k), raw.decode("utf-8", errors="replace")))
    return tuple(out)


def _frame_problem(data: bytes, pos: int) -> tuple[str | None, int]:
    """Java's ``isBlockCorrupt`` for the block whose magic is at ``pos``.

    Returns ``(reason, block_length)``; reason is None when the block's framing is sound.
    """
    n = len(data)
    if n - pos < _PREFIX:
        return f"truncated: the file ends {n - pos - 6} bytes into the block length field", -1
    block_len = _I64.unpack_from(data, pos + 6)[0]
    if block_len < 8:
        # Java would read its "trailing size" from before the length field: never a match
        return f"block length {block_len} is smaller than the trailing size field", block_len
    trailer_at = pos + _PREFIX + block_len - 8
    if trailer_at + 8 > n:
        return (
            f"truncated: block length {block_len} runs {trailer_at + 8 - n} bytes past the end of the file",
            block_len,
        )
    trailer = _I64.unpack_from(data, trailer_at)[0]
    if trailer != block_len + 6:
        return f"trailing length {trailer} != block length {block_len} + 6", block_len
    after = trailer_at + 8
    if n - after >= 6 and data[after : after + 6] != MAGIC:
        return f"junk after block: the bytes at offset {after} are neither a magic nor the end of the file", block_len
    return None, block_len


def _parse_block(data: bytes, pos: int, block_len: int) -> LogBlock:
    """The inside of a block whose framing is sound."""
    trailer_at = pos + _PREFIX + block_len - 8
    c = _Cursor(data, pos + _PREFIX, trailer_at, pos)
    version = c.i32("log format version")
    if version != FORMAT_VERSION:
        if version == 0:
            raise UnsupportedFeatureError(
                f"log block at offset {pos} uses the legacy log format version 0 (no type, header or footer); "
                "only version 1 is supported"
            )
        raise UnsupportedFeatureError(f"log block at offset {pos} has log format version {version}; only 1 is supported")
    type_at = c.pos
    ordinal = c.i32("block type")
    if not 0 <= ordinal < len(BlockType):
        raise UnknownBlockTypeError(
            f"unknown log block type {ordinal} at offset {type_at} (block at offset {pos}); known: 0-{len(BlockType) - 1}"
        )
    bt = BlockType(ordinal)
    if bt == BlockType.CORRUPT:
        raise UnknownBlockTypeError(
            f"log block type 2 at offset {type_at} is CORRUPT, a reader-only type that is never written; "
            "Hudi rejects it too"
        )
    header = _decode_metadata(c, "header")
    clen = c.i64("content length")
    content = c.take(clen, "content")
    footer = _decode_metadata(c, "footer")
    if c.pos != trailer_at:
        raise c.fail(f"{trailer_at - c.pos} unexplained bytes between the footer and the trailing size")
    return LogBlock(bt, header, footer, content, pos, _PREFIX + block_len, version)


def _as_bytes(data: Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]) -> bytes:
    if isinstance(data, (str, os.PathLike)):
        with open(data, "rb") as f:
            return f.read()
    if isinstance(data, bytes):
        return data
    if isinstance(data, (bytearray, memoryview)):
        return bytes(data)
    raise TypeError(f"expected bytes or a path, got {type(data).__name__}")


def _corrupt(strict: bool, offset: int, size: int, reason: str) -> CorruptBlock:
    if strict:
        cls = TruncatedLogFileError if reason.startswith("truncated") else CorruptLogBlockError
        raise cls(f"corrupt log block at offset {offset}: {reason}")
    return CorruptBlock(offset, size, reason)


def iter_blocks(
    data: Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"], *, strict: bool = False
) -> Iterator[LogBlock | CorruptBlock]:
    """The blocks of one log file, in file order (§1).

    ``data`` is the file's bytes, or a path to read. Lenient mode (the default) yields a
    :class:`CorruptBlock` for each stretch Hudi's reader would turn into a corrupt block and
    resumes at the next magic, as Java does. With ``strict=True`` the first such stretch
    raises instead: :class:`~.errors.TruncatedLogFileError` when the file ends inside a block,
    :class:`~.errors.CorruptLogBlockError` otherwise; the message names the byte offset.

    In both modes these raise, because Java's reader fails on them as well:
    :class:`~.errors.UnknownBlockTypeError` for a block-type ordinal outside 0-6 (or the
    reader-only CORRUPT type) and for a header/footer key ordinal outside 0-8;
    :class:`~.errors.UnsupportedFeatureError` for a log format version other than 1;
    :class:`~.errors.CorruptLogBlockError` for a block whose framing is sound but whose inside
    does not parse (see the module docstring).
    """
    buf = _as_bytes(data)
    n = len(buf)
    pos = 0
    while pos < n:
        if n - pos < 6:
            yield _corrupt(
                strict, pos, n - pos,
                f"truncated: {n - pos} bytes at the end of the file are too short for a magic "
                "(Hudi ignores them as end of file)",
            )
            return
        if buf[pos : pos + 6] != MAGIC:
            # only possible at the start of the file: after a sound block the check above
            # guarantees a magic or the end, after a corrupt one we stand on a magic or the end
            nxt = buf.find(MAGIC, pos + 1)
            nxt = n if nxt < 0 else nxt
            yield _corrupt(strict, pos, nxt - pos, f"no magic at offset {pos}: {nxt - pos} bytes before the first block")
            pos = nxt
            continue
        reason, block_len = _frame_problem(buf, pos)
        if reason is not None:
            nxt = buf.find(MAGIC, pos + 6)  # Java scans from just after the magic
            nxt = n if nxt < 0 else nxt
            yield _corrupt(strict, pos, nxt - pos, reason)
            pos = nxt
            continue
        block = _parse_block(buf, pos, block_len)
        yield block
        pos = block.end


def read_blocks(
    data: Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"], *, strict: bool = False
) -> list[LogBlock | CorruptBlock]:
    """All blocks of one log file; see :func:`iter_blocks`."""
    return list(iter_blocks(data, strict=strict))


def read_log_file(path: Union[str, "os.PathLike[str]"], *, strict: bool = False) -> list[LogBlock | CorruptBlock]:
    """Read a log file from disk and return its blocks; see :func:`iter_blocks`."""
    with open(path, "rb") as f:
        return read_blocks(f.read(), strict=strict)


# =========================================================================== Avro data blocks
def _schema_key(schema: Mapping[str, Any] | str) -> str:
    return schema if isinstance(schema, str) else json.dumps(schema, separators=(",", ":"))


class _SchemaError(ValueError):
    pass


@lru_cache(maxsize=128)
def _parsed_schema(schema_json: str):
    """``fastavro.parse_schema`` of a schema JSON string, cached: the SCHEMA header repeats in
    every block of a table. Raises _SchemaError (a ValueError) for an invalid schema."""
    try:
        return fastavro.parse_schema(json.loads(schema_json))
    except Exception as e:  # json or fastavro schema errors
        raise _SchemaError(f"invalid Avro schema: {e}") from None


def _reader_schemas(writer_schema, reader_schema):
    try:
        w = _parsed_schema(_schema_key(writer_schema))
        r = None if reader_schema is None else _parsed_schema(_schema_key(reader_schema))
    except _SchemaError as e:
        raise CorruptLogBlockError(f"Avro data block: {e}") from None
    return w, r


def encode_avro_records(schema: Mapping[str, Any] | str, records: Iterable[Mapping[str, Any]]) -> bytes:
    """AVRO_DATA block content (§2.1): int32 version 3, int32 count, then per record an int32
    length and the record as schemaless Avro binary in ``schema``.

    ``schema`` must be exactly the schema that goes into the block's SCHEMA header. Records
    that do not fit the schema raise fastavro's ValueError/TypeError.
    """
    parsed = _parsed_schema(_schema_key(schema))
    buf = io.BytesIO()
    ends = []
    write = fastavro.schemaless_writer
    for r in records:
        write(buf, parsed, r)
        ends.append(buf.tell())
    if len(ends) > 2**31 - 1:
        raise ValueError("too many records for one block")
    data = memoryview(buf.getvalue())
    parts = [_I32_I32.pack(AVRO_BLOCK_VERSION, len(ends))]
    prev = 0
    for e in ends:
        parts.append(_I32.pack(e - prev))
        parts.append(data[prev:e])
        prev = e
    return b"".join(parts)


def _avro_block_header(content: bytes) -> int:
    """Checks the version and returns the record count of AVRO_DATA content."""
    if len(content) < 8:
        raise CorruptLogBlockError(f"Avro data block content of {len(content)} bytes is too short")
    version, count = _I32_I32.unpack_from(content, 0)
    # Java reads the version without checking it: versions 1-3 share this layout
    # (HoodieAvroDataBlockVersion: every version has a record count). Others are refused.
    if not 1 <= version <= AVRO_BLOCK_VERSION:
        raise CorruptLogBlockError(f"Avro data block content version {version} (expected {AVRO_BLOCK_VERSION})")
    # each record takes at least its 4-byte length: bounds the count before any loop
    if count < 0 or count > (len(content) - 8) // 4:
        raise CorruptLogBlockError(f"Avro data block claims {count} records in {len(content)} bytes")
    return count


def _decode_avro_with_fastavro(content: bytes, count: int, writer, reader) -> list[dict]:
    """Reference decoder: one ``fastavro.schemaless_reader`` call per record, each bounded to
    its own bytes as Java's ``BinaryDecoder`` is. A datum shorter than its length prefix is
    accepted (Java skips by the prefix), one needing more bytes is corrupt."""
    n = len(content)
    out = []
    pos = 8
    mv = memoryview(content)
    read = fastavro.schemaless_reader
    for i in range(count):
        if n - pos < 4:
            raise CorruptLogBlockError(f"Avro data block ends inside the length of record {i} (of {count})")
        ln = _I32.unpack_from(content, pos)[0]
        pos += 4
        if ln < 0 or ln > n - pos:
            raise CorruptLogBlockError(
                f"Avro record {i} of {ln} bytes at content offset {pos} runs past the block ({n} bytes)"
            )
        bio = io.BytesIO(mv[pos : pos + ln])
        try:
            rec = read(bio, writer, reader) if reader is not None else read(bio, writer)
        except Exception as e:  # fastavro raises EOFError, ValueError, IndexError, ... on bad bytes
            raise CorruptLogBlockError(
                f"Avro record {i} at content offset {pos} does not decode: {type(e).__name__}: {e}"
            ) from None
        out.append(rec)
        pos += ln
    return out


def decode_avro_records(
    content: bytes,
    writer_schema: Mapping[str, Any] | str | None,
    reader_schema: Mapping[str, Any] | str | None = None,
) -> list[dict]:
    """Records of AVRO_DATA content (§2.1), decoded with the block's SCHEMA header.

    Without ``reader_schema`` the records are exactly what ``fastavro.schemaless_reader`` gives
    for ``writer_schema`` (logical types converted the same way), but decoded by a decoder
    generated for the schema, 1.5-2.5x faster than calling fastavro per record (more for
    strings and doubles, less for timestamps and decimals, whose conversion dominates).
    Anything the fast decoder does not like is decoded again with fastavro, so results and
    errors are fastavro's. With ``reader_schema`` fastavro's schema resolution is used.

    As in Java, each record is decoded from its own length-prefixed bytes: a datum shorter than
    its prefix and bytes after the last record are accepted, a datum needing more is corrupt.

    Raises :class:`~.errors.CorruptLogBlockError` on bad content: a version outside 1-3, a
    count or record length that overruns the content, a record that does not decode, or a
    missing/invalid writer schema.
    """
    if writer_schema is None:
        raise CorruptLogBlockError("Avro data block without a SCHEMA header")
    content = bytes(content)
    count = _avro_block_header(content)
    writer, reader = _reader_schemas(writer_schema, reader_schema)
    fast = _fast_decoder(_schema_key(writer_schema))
    if reader is not None:
        if fast is not None and fast.zero_size_arrays:
            fast.run_final(content, count)  # only as a guard, see _FastDecoder
        return _decode_avro_with_fastavro(content, count, writer, reader)
    if fast is not None:
        if fast.zero_size_arrays:
            return fast.run_final(content, count)
        try:
            return fast.decode(content, count, len(content))
        except _DefiniteCorruption as e:
            raise CorruptLogBlockError(str(e)) from None
        except Exception:  # noqa: BLE001 - any doubt: let fastavro decide (result or error)
            pass
    return _decode_avro_with_fastavro(content, count, writer, None)


# --------------------------------------------------------------------------- fast Avro decoder
#
# A schema is compiled once into Python source: one function per named record, everything
# else inlined, reading straight from the content ``bytes`` with an integer cursor instead of
# fastavro's per-byte file reads. It only has to be right on valid data: on any exception the
# caller decodes the block again with fastavro (except for schemas with arrays of zero-byte
# items, see _FastDecoder). Logical types are converted with fastavro's own converters or the
# same formulas, so values are identical to fastavro's; tests compare the two on random schemas.

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


class _Unsupported(Exception):
    """The schema uses something the generator does not handle: use fastavro."""


class _DefiniteCorruption(CorruptLogBlockError):
    """Bytes no valid datum can have (e.g. a 2**60-item array); no fastavro retry."""


#: logical types converted inline by the generated decoder, with the formulas of fastavro's
#: own readers (``fastavro/_logical_readers_py.py``); the others call fastavro's converter
_INLINE_LOGICAL = {
    "long-timestamp-micros": "_EPOCH + _td(0, 0, {0})",
    "long-timestamp-millis": "_EPOCH + _td(0, 0, {0} * 1000)",
    "long-local-timestamp-micros": "_EPOCH_NAIVE + _td(0, 0, {0})",
    "long-local-timestamp-millis": "_EPOCH_NAIVE + _td(0, 0, {0} * 1000)",
    "int-date": "_fromordinal({0} + 719163)",
}


_ZERO_SIZE_ITEMS_LIMIT = 10_000_000


class _AvroDecoderGenerator:
    def __init__(self, named: dict[str, Any]):
        self.named = named
        self.ns: dict[str, Any] = {
            "_EPOCH": _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc),
            "_EPOCH_NAIVE": _dt.datetime(1970, 1, 1),
            "_td": _dt.timedelta,
            "_fromordinal": _dt.date.fromordinal,
            "_uf": struct.Struct("<f").unpack_from,
            "_ud": struct.Struct("<d").unpack_from,
            "_ui32": _I32.unpack_from,
            "_Definite": _DefiniteCorruption,
            "_ZLIMIT": _ZERO_SIZE_ITEMS_LIMIT,
        }
        self.record_funcs: dict[str, str] = {}
        self.functions: list[str] = []
        self.counter = 0
        self.zero_size_arrays = False

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, obj: Any, prefix: str = "_k") -> str:
        name = self.fresh(prefix)
        self.ns[name] = obj
        return name

    # -- schema helpers
    def resolve(self, s: Any) -> Any:
        if isinstance(s, str) and s not in _PRIMITIVES:
            if s not in self.named:
                raise _Unsupported(f"unknown named type {s}")
            return self.named[s]
        return s

    def min_size(self, s: Any, seen: frozenset = frozenset()) -> int:
        """Fewest bytes a datum of ``s`` can take (0 or at least 1)."""
        s = self.resolve(s)
        if isinstance(s, str):
            return 0 if s == "null" else 1
        if isinstance(s, list):
            return 1
        t = s["type"]
        if t in ("record", "error"):
            name = s.get("name")
            if name in seen:
                return 1  # a recursive record needs a union to end, which takes a byte
            return min(1, sum(self.min_size(f["type"], seen | {name}) for f in s["fields"]))
        if t == "fixed":
            return min(1, int(s["size"]))
        if t == "null":
            return 0
        return 1

    # -- emitters: append source lines that decode one datum of ``s`` into variable ``t``
    def emit_long(self, t: str, out: list[str], p: str) -> None:
        """Zig-zag varint; values needing more than 64 bits raise (fastavro would wrap them)."""
        out += [
            f"{p}_b = buf[pos]",
            f"{p}pos += 1",
            f"{p}if _b < 128:",
            f"{p}    {t} = (_b >> 1) ^ -(_b & 1)",
            f"{p}else:",
            f"{p}    _x = _b & 127",
            f"{p}    _s = 7",
            f"{p}    while True:",
            f"{p}        _b = buf[pos]",
            f"{p}        pos += 1",
            f"{p}        _x |= (_b & 127) << _s",
            f"{p}        if _b < 128:",
            f"{p}            break",
            f"{p}        _s += 7",
            f"{p}    if _x >> 64:",
            f"{p}        raise ValueError('varint overflows 64 bits')",
            f"{p}    {t} = (_x >> 1) ^ -(_x & 1)",
        ]

    def emit_primitive(self, name: str, t: str, out: list[str], p: str) -> None:
        if name == "null":
            out.append(f"{p}{t} = None")
        elif name == "boolean":
            out += [f"{p}{t} = buf[pos] != 0", f"{p}pos += 1"]
        elif name in ("int", "long"):
            self.emit_long(t, out, p)
        elif name == "float":
            out += [f"{p}{t} = _uf(buf, pos)[0]", f"{p}pos += 4"]
        elif name == "double":
            out += [f"{p}{t} = _ud(buf, pos)[0]", f"{p}pos += 8"]
        elif name in ("bytes", "string"):
            self.emit_long("_n", out, p)
            out += [f"{p}if _n < 0:", f"{p}    raise ValueError('negative length')"]
            if name == "bytes":
                out.append(f"{p}{t} = buf[pos:pos + _n]")
            else:
                out.append(f"{p}{t} = buf[pos:pos + _n].decode()")
            out.append(f"{p}pos += _n")
        else:  # pragma: no cover - guarded by _PRIMITIVES
            raise _Unsupported(name)

    def emit(self, s: Any, t: str, out: list[str], p: str) -> None:
        if isinstance(s, str):
            if s in _PRIMITIVES:
                return self.emit_primitive(s, t, out, p)
            return self.emit(self.resolve(s), t, out, p)
        if isinstance(s, list):
            return self.emit_union(s, t, out, p)
        if not isinstance(s, dict):
            raise _Unsupported(repr(s))
        typ = s.get("type")
        if typ in ("record", "error"):
            fn = self.record_function(s)
            out.append(f"{p}{t}, pos = {fn}(buf, pos)")
        elif typ == "enum":
            syms = self.const(tuple(s["symbols"]), "_syms")
            self.emit_long("_e", out, p)
            out += [
                f"{p}if _e < 0 or _e >= {len(s['symbols'])}:",
                f"{p}    raise ValueError('enum index')",
                f"{p}{t} = {syms}[_e]",
            ]
        elif typ == "fixed":
            size = int(s["size"])
            out += [f"{p}{t} = buf[pos:pos + {size}]", f"{p}pos += {size}"]
        elif typ == "array":
            self.emit_block_loop(s, t, out, p, is_map=False)
        elif typ == "map":
            self.emit_block_loop(s, t, out, p, is_map=True)
        elif isinstance(typ, str) and typ in _PRIMITIVES:
            self.emit_primitive(typ, t, out, p)
        else:
            raise _Unsupported(f"type {typ!r}")
        logical = s.get("logicalType")
        if logical and isinstance(typ, str):
            key = f"{typ}-{logical}"
            inline = _INLINE_LOGICAL.get(key)
            if inline is not None:  # the same formula as fastavro's converter, without the call
                out.append(f"{p}{t} = {inline.format(t)}")
            else:
                fn = _FASTAVRO_LOGICAL_READERS.get(key)
                if fn is not None:
                    f_name = self.const(fn, "_lr")
                    s_name = self.const(s, "_ls")
                    out.append(f"{p}{t} = {f_name}({t}, {s_name}, None)")

    def emit_union(self, branches: list, t: str, out: list[str], p: str) -> None:
        if not branches or len(branches) > 64:  # index 64+ takes two varint bytes
            raise _Unsupported("union size")
        out += [f"{p}_b = buf[pos]", f"{p}pos += 1"]
        for i, br in enumerate(branches):
            out.append(f"{p}{'if' if i == 0 else 'elif'} _b == {2 * i}:")
            self.emit(br, t, out, p + "    ")
        out += [f"{p}else:", f"{p}    raise ValueError('union index')"]

    def emit_block_loop(self, s: dict, t: str, out: list[str], p: str, *, is_map: bool) -> None:
        item_schema = s["values"] if is_map else s["items"]
        c = self.fresh("_c")
        item = self.fresh("_i")
        zero = not is_map and self.min_size(item_schema) == 0
        self.zero_size_arrays |= zero
        out.append(f"{p}{t} = {{}}" if is_map else f"{p}{t} = []")
        out.append(f"{p}while True:")
        q = p + "    "
        self.emit_long(c, out, q)
        out += [f"{q}if {c} == 0:", f"{q}    break", f"{q}if {c} < 0:", f"{q}    {c} = -{c}"]
        self.emit_long("_skip", out, q + "    ")
        if zero:  # items of no bytes: only a fixed limit bounds the loop
            out += [
                f"{q}if {c} > _ZLIMIT:",
                f"{q}    raise _Definite('Avro data block: an array of %d zero-byte items' % {c})",
            ]
        else:  # every item takes a byte or more
            out += [
                f"{q}if {c} > len(buf) - pos:",
                f"{q}    raise _Definite('Avro data block: %d items cannot fit in the bytes left' % {c})",
            ]
        out.append(f"{q}for _ in range({c}):")
        r = q + "    "
        if is_map:
            key = self.fresh("_mk")
            self.emit_primitive("string", key, out, r)
            self.emit(item_schema, item, out, r)
            out.append(f"{r}{t}[{key}] = {item}")
        else:
            self.emit(item_schema, item, out, r)
            out.append(f"{r}{t}.append({item})")

    def record_body(self, s: dict, out: list[str], p: str) -> str:
        """Decode the fields of record ``s`` into locals; returns the dict expression."""
        names = []
        for f in s["fields"]:
            v = self.fresh("_f")
            self.emit(f["type"], v, out, p)
            names.append(f"{f['name']!r}: {v}")
        return "{" + ", ".join(names) + "}"

    def record_function(self, s: dict) -> str:
        name = s["name"]
        fn = self.record_funcs.get(name)
        if fn is not None:
            return fn
        fn = self.record_funcs[name] = self.fresh("_rec")
        out = [f"def {fn}(buf, pos):"]
        expr = self.record_body(s, out, "    ")
        out.append(f"    return {expr}, pos")
        self.functions.append("\n".join(out))
        return fn

    def driver(self, top: Any) -> str:
        out = [
            "def _decode_all(buf, count, n):",
            "    out = []",
            "    append = out.append",
            "    pos = 8",
            "    for _ in range(count):",
            "        if n - pos < 4:",
            "            raise ValueError('record length')",
            "        _ln = _ui32(buf, pos)[0]",
            "        pos += 4",
            "        _end = pos + _ln",
            "        if _ln < 0 or _end > n:",
            "            raise ValueError('record length')",
        ]
        top_r = self.resolve(top)
        if isinstance(top_r, dict) and top_r.get("type") in ("record", "error") and "logicalType" not in top_r:
            self.record_function(top_r)  # recursive references need the function too
            expr = self.record_body(top_r, out, "        ")
            out.append(f"        _v = {expr}")
        else:
            self.emit(top, "_v", out, "        ")
        out += [
            "        if pos > _end:",
            "            raise ValueError('record overruns its length')",
            "        append(_v)",
            "        pos = _end",
            "    return out",
        ]
        return "\n".join(out)


@dataclass(frozen=True)
class _FastDecoder:
    #: ``decode(content, count, len(content)) -> records``
    decode: Any
    #: The schema has arrays whose items can take zero bytes (null, empty records, fixed(0)).
    #: On such an array with a hostile item count fastavro loops and allocates without bound,
    #: so for these schemas the generated decoder's refusals are final and fastavro never sees
    #: bytes it refused. (Spark/Hudi schemas never have such arrays.)
    zero_size_arrays: bool

    def run_final(self, content: bytes, count: int) -> list[dict]:
        try:
            return self.decode(content, count, len(content))
        except _DefiniteCorruption as e:
            raise CorruptLogBlockError(str(e)) from None
        except Exception as e:  # noqa: BLE001 - generated code raises IndexError, ValueError, ...
            raise CorruptLogBlockError(f"Avro data block does not decode: {type(e).__name__}: {e}") from None


@lru_cache(maxsize=128)
def _fast_decoder(schema_json: str) -> _FastDecoder | None:
    """Generated decoder for ``schema_json``, or None when only fastavro can do it."""
    named: dict[str, Any] = {}
    try:
        parsed = fastavro.parse_schema(json.loads(schema_json), named_schemas=named)
    except Exception:  # already reported by _parsed_schema
        return None
    gen = _AvroDecoderGenerator(named)
    try:
        driver = gen.driver(parsed)
        source = "\n\n".join(gen.functions + [driver]) + "\n"
        # deeply nested arrays can exceed CPython's limits on nested blocks and indentation
        code = compile(source, f"<hudi avro decoder {hash(schema_json) & 0xFFFFFFFF:08x}>", "exec")
    except (_Unsupported, KeyError, TypeError, ValueError, SyntaxError, RecursionError, MemoryError):
        return None
    exec(code, gen.ns)  # noqa: S102 - source generated above from the schema's structure only
    return _FastDecoder(gen.ns["_decode_all"], gen.zero_size_arrays)


# =========================================================================== Parquet data blocks
def decode_parquet_content(content: bytes):
    """PARQUET_DATA content (§2.2): a whole Parquet file, read into a ``pyarrow.Table``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(pa.BufferReader(content))
    except (pa.ArrowException, OSError, ValueError) as e:
        raise CorruptLogBlockError(f"undecodable Parquet data block: {e}") from None


def encode_parquet_content(
    table, compression: str = "gzip", key_value_metadata: Mapping[str, str] | None = None
) -> bytes:
    """A complete Parquet file holding ``table``, for a PARQUET_DATA block (§2.2).

    Hudi writes these GZIP-compressed by default. ``key_value_metadata`` is added to the file
    footer (e.g. ``parquet.avro.schema``).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if key_value_metadata:
        meta = dict(table.schema.metadata or {})
        meta.update({k.encode(): v.encode() for k, v in key_value_metadata.items()})
        table = table.replace_schema_metadata(meta)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression)
    return sink.getvalue().to_pybytes()


# =========================================================================== delete blocks
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


def _wrap_ordering_value(kind: str, v: Any) -> Any:
    """The raw Avro value of the wrapper's ``value`` field; ValueError when ``v`` does not fit."""
    def bad(expected: str) -> ValueError:
        return ValueError(f"ordering value {v!r} does not fit ordering type {kind!r} ({expected})")

    if kind == "boolean":
        if not isinstance(v, bool):
            raise bad("bool")
        return v
    if kind in ("int", "long"):
        lo, hi = _I32_RANGE if kind == "int" else _I64_RANGE
        if not _is_int(v) or not lo <= v <= hi:
            raise bad(f"int in [{lo}, {hi}]")
        return v
    if kind in ("float", "double"):
        if not (_is_int(v) or isinstance(v, float)):
            raise bad("float")
        try:
            f = float(v)
        except OverflowError:
            raise bad("a finite float") from None
        if kind == "float" and _FLOAT32_MAX < abs(f) < float("inf"):
            raise bad("a 32-bit float")
        return f
    if kind == "bytes":
        if not isinstance(v, (bytes, bytearray, memoryview)):
            raise bad("bytes")
        return bytes(v)
    if kind == "string":
        if not isinstance(v, str):
            raise bad("str")
        return v
    if kind == "date":
        if _is_int(v):
            days = v
        elif isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
            days = (v - _EPOCH_DATE).days
        else:
            raise bad("datetime.date or int days")
        if not _I32_RANGE[0] <= days <= _I32_RANGE[1]:
            raise bad("32-bit day count")
        return days
    if kind == "decimal":
        if _is_int(v):
            v = _decimal.Decimal(v)
        if not isinstance(v, _decimal.Decimal) or not v.is_finite():
            raise bad("finite decimal.Decimal")
        sign, digits, exp = v.as_tuple()
        if exp < -_DEC_SCALE:
            raise bad(f"at most {_DEC_SCALE} digits after the point")
        unscaled = int("".join(map(str, digits)) or "0") * 10 ** (exp + _DEC_SCALE)
        if len(str(unscaled)) > _DEC_PRECISION:
            raise bad(f"at most {_DEC_PRECISION} digits in total at scale {_DEC_SCALE}")
        return _java_decimal_bytes(-unscaled if sign else unscaled)
    if kind == "time_micros":
        if _is_int(v):
            micros = v
        elif isinstance(v, _dt.time):
            if v.tzinfo is not None:
                raise bad("a time without a time zone")
            micros = ((v.hour * 60 + v.minute) * 60 + v.second) * 1_000_000 + v.microsecond
        else:
            raise bad("datetime.time or int microseconds")
        if not _I64_RANGE[0] <= micros <= _I64_RANGE[1]:
            raise bad("64-bit microseconds")
        return micros
    if kind == "timestamp_micros":
        if _is_int(v):
            micros = v
        elif isinstance(v, _dt.datetime):
            if v.tzinfo is None:
                raise bad("a timezone-aware datetime (naive ones are ambiguous)")
            delta = v - _EPOCH
            micros = (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        else:
            raise bad("aware datetime.datetime or int microseconds")
        if not _I64_RANGE[0] <= micros <= _I64_RANGE[1]:
            raise bad("64-bit microseconds")
        return micros
    raise ValueError(f"unknown ordering type {kind!r}; one of {', '.join(ORDERING_TYPES)} or None")


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


# =========================================================================== whole blocks
def encode_data_block(instant_time: str, schema_json: str, records: Iterable[Mapping[str, Any]]) -> bytes:
    """An AVRO_DATA block with header INSTANT_TIME, SCHEMA (in that order)."""
    content = encode_avro_records(schema_json, records)
    return encode_block(
        BlockType.AVRO_DATA, [(HeaderKey.INSTANT_TIME, instant_time), (HeaderKey.SCHEMA, schema_json)], content
    )


def encode_delete_block(instant_time: str, schema_json: str, delete_records: Iterable[DeleteRecord]) -> bytes:
    """A DELETE block with header INSTANT_TIME, SCHEMA (in that order), as Spark writes them."""
    content = encode_delete_records(delete_records)
    return encode_block(
        BlockType.DELETE, [(HeaderKey.INSTANT_TIME, instant_time), (HeaderKey.SCHEMA, schema_json)], content
    )


def encode_rollback_block(instant_time: str, target_instant_time: str) -> bytes:
    """A COMMAND block rolling back the blocks of ``target_instant_time`` (§2.4).

    Header order INSTANT_TIME, COMMAND_BLOCK_TYPE, TARGET_INSTANT_TIME, as in the rollback
    block Hudi 0.14/0.15 wrote in the ``v6_nonpartitioned_rollback`` fixture; empty content.
    """
    header = [
        (HeaderKey.INSTANT_TIME, instant_time),
        (HeaderKey.COMMAND_BLOCK_TYPE, ROLLBACK_COMMAND),
        (HeaderKey.TARGET_INSTANT_TIME, target_instant_time),
    ]
    return encode_block(BlockType.COMMAND, header, b"")


# =========================================================================== log file names
#: ``FSUtils.LOG_FILE_PATTERN`` of Hudi 0.14/0.15, used like Java's ``Matcher.find()``: anchored
#: at the start only, so text after the write token does not stop a match (Java lists such a
#: file as a log file too). Groups: 1 fileId, 2 base instant, 3 extension, 4 version,
#: 6 write token, 10 suffix. The unescaped ``.`` before ``cdc`` is Java's.
_LOG_FILE_RE = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(.cdc)?)?")
_FILE_ID_RE = re.compile(r"^[A-Za-z0-9-]+$")
_WRITE_TOKEN_RE = re.compile(r"^[0-9]+-[0-9]+-[0-9]+$")
_INSTANT_RE = re.compile(r"^[0-9]+$")


@dataclass(frozen=True, order=False)
class LogFileName:
    """The parts of a log file name (§3); ``str()`` formats it back."""

    file_id: str
    base_instant: str
    version: int
    write_token: str | None
    extension: str = "log"
    suffix: str = ""

    def __str__(self) -> str:
        token = "" if self.write_token is None else f"_{self.write_token}"
        return f".{self.file_id}_{self.base_instant}.{self.extension}.{self.version}{token}{self.suffix}"

    @property
    def sort_key(self) -> tuple:
        """Hudi's ``LogFileComparator`` order; see :func:`log_file_sort_key`."""
        return (
            self.base_instant,
            self.version,
            (0, "") if self.write_token is None else (1, self.write_token),
            self.suffix,
        )


def parse_log_file_name(name: str) -> LogFileName | None:
    """The parts of a log file name, or None when Hudi would not take it for one.

    ``name`` is a file name, not a path. Matching follows Java (see ``_LOG_FILE_RE``): a name
    without a write token parses with ``write_token=None``.
    """
    m = _LOG_FILE_RE.match(name)
    if m is None:
        return None
    return LogFileName(
        file_id=m.group(1),
        base_instant=m.group(2),
        version=int(m.group(4)),
        write_token=m.group(6),
        extension=m.group(3),
        suffix=m.group(10) or "",
    )


def format_log_file_name(
    file_id: str,
    base_instant: str,
    version: int,
    write_token: str | None,
    extension: str = "log",
    suffix: str = "",
) -> str:
    """``.{file_id}_{base_instant}.{extension}.{version}_{write_token}{suffix}`` (§3).

    Raises ValueError unless the name is one Hudi parses back to the same parts: file id of
    ``[A-Za-z0-9-]`` only (a ``_`` or ``.`` breaks ``FSUtils.getFileId``), base instant of
    digits, version >= 1 (``LOGFILE_BASE_VERSION``), write token ``digits-digits-digits``
    (``FSUtils.makeWriteToken``; anything else is not matched by Hudi's pattern), extension
    ``log`` or ``archive``, suffix ``""`` or ``".cdc"``.
    """
    if not isinstance(file_id, str) or not _FILE_ID_RE.match(file_id):
        raise ValueError(f"file id {file_id!r} may only hold [A-Za-z0-9-]")
    if not isinstance(base_instant, str) or not _INSTANT_RE.match(base_instant):
        raise ValueError(f"base instant {base_instant!r} must be digits")
    if not _is_int(version) or version < 1:
        raise ValueError(f"log version {version!r}: versions start at 1")
    if not isinstance(write_token, str) or not _WRITE_TOKEN_RE.match(write_token):
        raise ValueError(f"write token {write_token!r} must look like 0-12-345 (digits-digits-digits)")
    if extension not in ("log", "archive"):
        raise ValueError(f"extension {extension!r} must be 'log' or 'archive'")
    if suffix not in ("", ".cdc"):
        raise ValueError(f"suffix {suffix!r} must be '' or '.cdc'")
    return f".{file_id}_{base_instant}.{extension}.{version}_{write_token}{suffix}"


def log_file_sort_key(name: str | LogFileName) -> tuple:
    """Sort key of Hudi's ``HoodieLogFile.LogFileComparator`` (ascending, §3): base instant
    (string order), version (number), write token (string order, a missing token first),
    suffix. Raises ValueError for a name that is not a log file name."""
    p = name if isinstance(name, LogFileName) else parse_log_file_name(name)
    if p is None:
        raise ValueError(f"not a log file name: {name!r}")
    return p.sort_key
