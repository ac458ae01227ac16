"""Block headers and footers (§1): int32 count, then per entry int32 key ordinal, int32 length,
UTF-8 value; which keys a table-version-6 writer may write."""

from __future__ import annotations

import enum
from typing import Sequence

from ..errors import UnknownBlockTypeError
from .cursor import _I32, _I32_I32, _Cursor


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
