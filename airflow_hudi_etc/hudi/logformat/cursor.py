"""Big-endian integers (Java ``DataOutputStream``) and a reader bounded to one block."""

from __future__ import annotations

import struct

from ..errors import CorruptLogBlockError

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_I32_I32 = struct.Struct(">ii")


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
