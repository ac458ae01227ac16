"""Block framing (§1): magic, block length, format version, block type, header, content, footer,
trailing size; Java's ``isBlockCorrupt`` check; the parsed :class:`LogBlock` and the
:class:`CorruptBlock` stretch."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Sequence

from ..errors import UnknownBlockTypeError, UnsupportedFeatureError
from .cursor import _I32_I32, _I64, _Cursor
from .metadata import HeaderKey, Metadata, _decode_metadata, _encode_metadata

MAGIC = b"#HUDI#"
#: the log format version written by every Hudi since 0.5 (``HoodieLogFormat.CURRENT_VERSION``)
FORMAT_VERSION = 1

#: Java keeps whole blocks in ``byte[]`` and casts block and content lengths to ``int``
_MAX_BLOCK_LENGTH = 2**31 - 1
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
