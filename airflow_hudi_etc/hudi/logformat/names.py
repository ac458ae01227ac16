"""Log file names (§3): parse, format, Hudi's sort order."""

from __future__ import annotations

import re
from dataclasses import dataclass


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


def is_checksum_file(name: str) -> bool:
    """Hadoop's checksum file of a log file (``..<log name>.crc``), which Java's writers leave
    next to every file on local storage; Hadoop's file system hides them from Java's listings
    (``ChecksumFileSystem.isChecksumFile``), and no file id starts with a dot: never a log file."""
    return name[:2] == ".." and name.endswith(".crc")


def parse_log_file_name(name: str) -> LogFileName | None:
    """The parts of a log file name, or None when Hudi would not take it for one.

    ``name`` is a file name, not a path. Matching follows Java (see ``_LOG_FILE_RE``): a name
    without a write token parses with ``write_token=None``; a checksum file is none.
    """
    if is_checksum_file(name):
        return None
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
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
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
