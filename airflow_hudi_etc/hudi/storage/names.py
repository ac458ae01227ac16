"""Paths and names every backend shares: table-relative paths that cannot leave the table, the
listed-file record, and the names of temp files (which carry the instant of the operation making
them, so that a later run can tell a dead operation's leftovers from a live one's)."""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import posixpath
import uuid
from dataclasses import dataclass
from typing import Iterator

from ..errors import UnsafePathError

_TMP_PREFIX = ".hudi-etc-tmp-"
#: temp files end so: no reader takes them for a base file (``*.parquet``) or a log file
#: (``.<id>_<instant>.log.<n>...``), whatever is beside them (hudi-rs refuses a ``*.parquet``
#: it cannot parse, and Java's log pattern would match a dot-name holding the target's name)
_TMP_SUFFIX = ".tmp"
#: the instant of the operation making temp files (see :func:`temp_owner`): in their names, so
#: that a later run can tell a dead operation's leftovers from a live one's files in progress
_TEMP_OWNER: contextvars.ContextVar[str] = contextvars.ContextVar("hudi_etc_temp_owner", default="")


@contextlib.contextmanager
def temp_owner(instant: str | None) -> Iterator[None]:
    """Temp files made in this block carry ``instant`` in their names (only digits are kept)."""
    tok = _TEMP_OWNER.set("".join(c for c in str(instant or "") if c.isdigit())[:20])
    try:
        yield
    finally:
        _TEMP_OWNER.reset(tok)


def temp_file_owner(name: str) -> str | None:
    """The owner instant of a temp file name made by :func:`tmp_name` ("" when it has none);
    None for a name of the older layout (``.hudi-etc-tmp-<hex>-<target name>``), which carries
    no owner, or for a name that is no temp file."""
    if not name.startswith(_TMP_PREFIX) or not name.endswith(_TMP_SUFFIX):
        return None
    mid = name[len(_TMP_PREFIX):-len(_TMP_SUFFIX)]
    owner, sep, hexpart = mid.rpartition("-")
    if not sep or not (len(hexpart) == 32 and all(c in "0123456789abcdef" for c in hexpart)):
        return None
    owner = owner[1:] if owner.startswith("i") else owner
    return owner if owner.isdigit() or owner == "" else None


def tmp_name(rel: str) -> str:
    """``.hudi-etc-tmp-i<owner instant>-<hex>.tmp`` beside ``rel``: a dot-name without the
    target's name, ending in ``.tmp`` (see ``_TMP_SUFFIX``)."""
    d = posixpath.dirname(safe_relpath(rel))
    tmp = f"{_TMP_PREFIX}i{_TEMP_OWNER.get()}-{uuid.uuid4().hex}{_TMP_SUFFIX}"
    return posixpath.join(d, tmp) if d else tmp


def staged_name(rel: str, owner: str) -> str:
    """The name a copy destined for ``rel`` is written under first (``Storage.stage_copy``):
    a temp-file name beside ``rel`` owned by ``owner`` (``.hudi-etc-tmp-i<owner>-<md5 of rel's
    name>.tmp``), the same for the same (rel, owner). No reader, cleaner, rollback or archiver
    of Hudi's takes it for a data file: no ``_`` and no ``.log.`` in it (Java's
    ``LOG_FILE_PATTERN``, hudi-rs' log-name parser), and ``.tmp`` is no base-file extension."""
    d, _, name = rel.rpartition("/")
    tmp = f"{_staged_head(owner)}{hashlib.md5(name.encode(), usedforsecurity=False).hexdigest()}{_TMP_SUFFIX}"
    return f"{d}/{tmp}" if d else tmp


@functools.lru_cache(maxsize=8)
def _staged_head(owner) -> str:
    """``.hudi-etc-tmp-i<owner's digits, at most 20>-``: the same for every file of a plan."""
    return f"{_TMP_PREFIX}i{''.join(c for c in str(owner) if c.isdigit())[:20]}-"


def drop_temp_names(names: list[str]) -> list[str]:
    """``names`` without temp files (the list itself when it holds none: one scan of a joined
    string instead of a test per name)."""
    if "\x00" + _TMP_PREFIX not in "\x00" + "\x00".join(names):
        return names
    return [n for n in names if not n.startswith(_TMP_PREFIX)]


def safe_relpath(rel: str) -> str:
    """Normalise a table-relative path and refuse anything that escapes the table.

    >>> safe_relpath("city=x/.f_1.log.1_0-0-0")
    'city=x/.f_1.log.1_0-0-0'
    >>> safe_relpath("../other/table")
    Traceback (most recent call last):
    ...
    airflow_hudi_etc.hudi.errors.UnsafePathError: path leaves the table: '../other/table'
    """
    if not isinstance(rel, str):
        raise UnsafePathError(f"path is not a string: {rel!r}")
    if "://" in rel or rel.startswith("/") or rel.startswith("\\") or "\x00" in rel:
        raise UnsafePathError(f"path is not relative to the table: {rel!r}")
    if rel in ("", "."):
        return ""
    parts = [p for p in rel.replace("\\", "/").split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise UnsafePathError(f"path leaves the table: {rel!r}")
    return "/".join(parts)


def safe_filename(name: str) -> str:
    """A single path component: no separators, no ``..``."""
    if not name or "/" in name or "\\" in name or name in (".", "..") or "\x00" in name:
        raise UnsafePathError(f"not a plain file name: {name!r}")
    return name


def redact_uri(uri: str) -> str:
    """``scheme://user:secret@host/path`` → ``scheme://***@host/path``; other URIs unchanged."""
    scheme, sep, rest = uri.partition("://")
    if not sep:
        return uri
    authority, slash, path = rest.partition("/")
    if "@" in authority:
        authority = "***@" + authority.rsplit("@", 1)[1]
    return f"{scheme}://{authority}{slash}{path}"


@dataclass(frozen=True)
class FileInfo:
    """One listed file: table-relative path, size in bytes, and whether it is a symlink."""

    path: str
    size: int
    is_link: bool = False

    @property
    def name(self) -> str:
        return self.path.rpartition("/")[2]  # posixpath.basename


_object_new = object.__new__


def new_file_info(path: str, size: int, is_link: bool) -> FileInfo:
    """``FileInfo(path, size, is_link)`` without the frozen-dataclass ``__init__`` (listings of
    many files)."""
    o = _object_new(FileInfo)
    d = o.__dict__
    d["path"] = path
    d["size"] = size
    d["is_link"] = is_link
    return o
