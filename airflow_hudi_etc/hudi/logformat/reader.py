"""Reading a log file (§1): its blocks in order, corrupt and truncated stretches as Java's
``HoodieLogFileReader`` finds them, lenient or strict."""

from __future__ import annotations

import os
from typing import Iterator, Union

from ..errors import CorruptLogBlockError, TruncatedLogFileError
from .framing import MAGIC, CorruptBlock, LogBlock, _frame_problem, _parse_block


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
