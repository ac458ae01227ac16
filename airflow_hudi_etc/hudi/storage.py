"""Storage access for Hudi tables, over fsspec.

All table I/O goes through :class:`Storage`, so the table code never touches ``os`` or a
particular filesystem. Paths given to its methods are *relative to the table base path*
(``.hoodie/hoodie.properties``, ``city=x/.f1_001.log.1_0-1-0``); the one place that turns a
relative path into a filesystem path is :meth:`Storage.full`. That is also where paths that
try to leave the table (``..``, absolute paths, other schemes) are refused.

Writes come in three strengths:

* :meth:`Storage.create_if_absent` — write-once, atomic: readers never see a partial file and
  a second writer gets :class:`InstantExistsError`. Used for timeline files (a completed instant
  must never be overwritten) and for data files (a name is never reused).
* :meth:`Storage.write_atomic` — replace a file as a whole (temp file + rename locally, one PUT
  on object stores). Used only for ``hoodie.properties`` and partition metadata.
* :meth:`Storage.copy` / :meth:`Storage.symlink` — re-exposing log files in a new file slice.

How write-once is made atomic, per store (:attr:`Storage.atomic_create` says which case applies):

* Local/POSIX: the bytes go to a temp file beside the target, fsync'ed, then ``os.link`` to the
  target name — the link fails atomically when the name exists, and a reader sees nothing or the
  whole file.
* S3 (``s3://``, ``s3a://`` through s3fs): an object PUT is atomic (a reader never sees a
  half-written object), and the create is *conditional*: ``PutObject`` with ``If-None-Match: *``
  (s3fs ``pipe_file(..., mode="create")``; a multipart upload sends it on
  ``CompleteMultipartUpload``). S3 answers ``412 Precondition Failed`` when the key exists,
  which becomes :class:`InstantExistsError`; ``409 ConditionalRequestConflict`` (a concurrent
  conditional write of the same key in progress) is reported the same way. AWS S3 supports this
  since August 2024, and moto (the tests' server) implements it; check an S3-compatible store
  before relying on it: one that *ignores* the header silently overwrites, and on such a store
  the single-writer rule below applies.
* Any other fsspec store: existence check, then a put. Not atomic between two writers, so the
  **single-writer rule** applies: at most one process may write to the table's timeline at a time
  (one writer and one compaction service, as Hudi's own single-writer mode; the compaction
  commands already re-list the timeline before they publish: docs/concepts.md, "Retries and
  racing schedulers").

**Links are never followed out of the table by a change.** Locally, every create, replace,
delete, rename target and folder made or removed is refused with :class:`UnsafePathError` when a
folder on its way below the base path is a symbolic link (:meth:`Storage.check_no_links`), and so
is every listing under ``.hoodie/`` (markers, heartbeats, ``.aux``, ``archived``, ``metadata``): a
planted ``.hoodie/.temp/<instant>`` pointing elsewhere must not turn a marker clean-up into a
delete of someone else's files. A symlinked *file* is only ever removed itself, never its target.
:meth:`Storage.links_below` finds the links a folder holds (the mutating commands' first check).

Object stores have no rename and no symlink: there is no temp-file step (a PUT is already
all-or-nothing), :meth:`copy` reads the log and creates the copy conditionally, and
:meth:`symlink` refuses with :class:`UnsupportedFeatureError` (link mode ``auto`` picks copy).
Listings on S3 are never served from s3fs's directory cache (``use_listings_cache=False`` unless
the options say otherwise): the compaction commands and the writer re-list the timeline to see
other processes' instants.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import functools
import hashlib
import os
import posixpath
import stat as _stat
import tempfile
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

import fsspec

from .errors import InstantExistsError, InvalidInputError, UnsafePathError, UnsupportedFeatureError

_TMP_PREFIX = ".hudi-etc-tmp-"
#: temp files end so: no reader takes them for a base file (``*.parquet``) or a log file
#: (``.<id>_<instant>.log.<n>...``), whatever is beside them (hudi-rs refuses a ``*.parquet``
#: it cannot parse, and Java's log pattern would match a dot-name holding the target's name)
_TMP_SUFFIX = ".tmp"
#: the instant of the operation making temp files (see :func:`temp_owner`): in their names, so
#: that a later run can tell a dead operation's leftovers from a live one's files in progress
_TEMP_OWNER: contextvars.ContextVar[str] = contextvars.ContextVar("hudi_etc_temp_owner", default="")



#: environment variable: ``hardlink`` makes local copies hard links (:meth:`Storage.copy`)
LOCAL_COPY_ENV = "HUDI_ETC_LOCAL_COPY"
#: errors of ``os.link`` that mean "no hard link here" (another file system, not supported,
#: not permitted, too many links): the bytes are copied instead
_NO_HARD_LINK = frozenset({errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EOPNOTSUPP, errno.ENOTSUP,
                           errno.EACCES, errno.ENOSYS})


@contextlib.contextmanager
def temp_owner(instant: str | None) -> Iterator[None]:
    """Temp files made in this block carry ``instant`` in their names (only digits are kept)."""
    tok = _TEMP_OWNER.set("".join(c for c in str(instant or "") if c.isdigit())[:20])
    try:
        yield
    finally:
        _TEMP_OWNER.reset(tok)


def temp_file_owner(name: str) -> str | None:
    """The owner instant of a temp file name made by :meth:`Storage._tmp_name` ("" when it has
    none); None for a name of the older layout (``.hudi-etc-tmp-<hex>-<target name>``), which
    carries no owner, or for a name that is no temp file."""
    if not name.startswith(_TMP_PREFIX) or not name.endswith(_TMP_SUFFIX):
        return None
    mid = name[len(_TMP_PREFIX):-len(_TMP_SUFFIX)]
    owner, sep, hexpart = mid.rpartition("-")
    if not sep or not (len(hexpart) == 32 and all(c in "0123456789abcdef" for c in hexpart)):
        return None
    owner = owner[1:] if owner.startswith("i") else owner
    return owner if owner.isdigit() or owner == "" else None

def staged_name(rel: str, owner: str) -> str:
    """The name a copy destined for ``rel`` is written under first (:meth:`Storage.stage_copy`):
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


#: fsspec protocols whose conditional create is atomic (``If-None-Match: *`` on PutObject)
_CONDITIONAL_PUT_PROTOCOLS = frozenset({"s3", "s3a"})
#: object stores: no directories, no rename, no symlinks
_OBJECT_STORE_PROTOCOLS = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss"})


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


def _new_file_info(path: str, size: int, is_link: bool) -> FileInfo:
    """``FileInfo(path, size, is_link)`` without the frozen-dataclass ``__init__`` (listings of
    many files)."""
    o = _object_new(FileInfo)
    d = o.__dict__
    d["path"] = path
    d["size"] = size
    d["is_link"] = is_link
    return o


def _scan_local(p: str, rel_dir: str, *, include_temp: bool, sizes: bool) -> tuple[list[FileInfo], list[str]]:
    """One scandir of a local folder: its files (sizes stat'ed through links, -1 for a dangling
    one or when ``sizes`` is off; temp files only with ``include_temp``) and its sub-folders
    (sorted), both table-relative. A missing folder gives nothing."""
    try:
        it = os.scandir(p)
    except (FileNotFoundError, NotADirectoryError):
        return [], []
    prefix = rel_dir + "/" if rel_dir else ""  # rel_dir is normalised: no trailing "/"
    files: list[FileInfo] = []
    dirs: list[str] = []
    append, new = files.append, _new_file_info
    with it:
        for e in it:
            name = e.name
            try:
                if e.is_dir(follow_symlinks=False):
                    dirs.append(prefix + name)
                    continue
                if not include_temp and name.startswith(_TMP_PREFIX):
                    continue
                link = e.is_symlink()
                if sizes:
                    try:
                        size = e.stat(follow_symlinks=True).st_size
                    except FileNotFoundError:  # dangling link
                        size = -1
                else:
                    size = -1
            except FileNotFoundError:
                continue
            append(new(prefix + name, size, link))
    dirs.sort()
    return files, dirs


_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: errors of ``copy_file_range`` that mean "not here" (kernel, file system, or file kind)
_NO_COPY_RANGE = frozenset({errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM,
                            getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)})


def _copy_fd(src: int, dst: int) -> None:
    """Every byte of the open file ``src`` (from its start) written to the new, empty ``dst``:
    ``copy_file_range`` for the size ``fstat`` gives and on to the end of the file, else (not
    available, or refused before a byte was copied) ``read``/``write``."""
    n = os.fstat(src).st_size
    copied = 0
    if _copy_file_range is not None:
        try:
            while True:  # a file that grew since the fstat is copied to its end, as a read would
                k = _copy_file_range(src, dst, max(n - copied, 1 << 16))
                if k == 0:
                    return
                copied += k
        except OSError as e:
            if copied or e.errno not in _NO_COPY_RANGE:
                raise
    while True:
        data = os.read(src, max(n, 1 << 16))
        if not data:
            return
        view = memoryview(data)
        while view:
            view = view[os.write(dst, view):]


_copy_file_range = getattr(os, "copy_file_range", None)


def _same_local_file(a: str, b: str, chunk: int = 1 << 20) -> bool:
    """Whether two local files hold the same bytes (read in chunks)."""
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(chunk), fb.read(chunk)
            if x != y:
                return False
            if not x:
                return True


@dataclass(repr=False)
class Storage:
    """A table's base location plus an fsspec filesystem.

    ``Storage("/data/t1")``, ``Storage("s3://bucket/t1", {"key": ..., "client_kwargs": ...})``.
    The object is picklable (it is shipped to Spark tasks): the filesystem is rebuilt lazily.
    """

    base_uri: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        uri = self.base_uri.rstrip("/") or "/"
        if uri.startswith("file://"):
            uri = uri[len("file://") :]
        self.protocol = uri.split("://", 1)[0] if "://" in uri else "file"
        if self.protocol == "file":
            uri = os.path.abspath(uri)
        self.base_uri = uri
        self._fs = None

    def __repr__(self) -> str:
        # options carry credentials (keys, secrets, tokens): never print their values, and
        # drop any user:password@ part of the location (this repr ends up in task reprs, logs)
        keys = ", ".join(sorted(map(str, self.options)))
        return f"Storage({redact_uri(self.base_uri)!r}, options=<{len(self.options)} redacted: {keys}>)"

    __str__ = __repr__

    # -- pickling: filesystems hold sockets/locks; rebuild on the other side
    def __getstate__(self) -> dict:
        return {"base_uri": self.base_uri, "options": dict(self.options)}

    def __setstate__(self, state: dict) -> None:
        self.base_uri = state["base_uri"]
        self.options = state["options"]
        self.__post_init__()

    @property
    def fs(self) -> fsspec.AbstractFileSystem:
        if self._fs is None:
            opts = dict(self.options)
            if self.protocol in _CONDITIONAL_PUT_PROTOCOLS:
                # other processes write the timeline: a cached listing would hide their instants
                opts.setdefault("use_listings_cache", False)
            try:
                self._fs = fsspec.filesystem(self.protocol, **opts)
            except ImportError as e:  # e.g. s3:// without s3fs
                extra = " (pip install 'airflow-hudi-etc[s3]')" if self.protocol in _CONDITIONAL_PUT_PROTOCOLS else ""
                raise UnsupportedFeatureError(f"{self.protocol}:// storage needs a package that is not "
                                              f"installed{extra}: {e}") from None
            except ValueError as e:  # unknown protocol
                raise UnsupportedFeatureError(f"no filesystem for {self.protocol}://: {e}") from None
        return self._fs

    @property
    def is_local(self) -> bool:
        return self.protocol == "file"

    @property
    def atomic_create(self) -> bool:
        """Whether :meth:`create_if_absent` is atomic against other writers on this store (local
        files: ``os.link``; S3: conditional PUT). Elsewhere the single-writer rule applies."""
        return self.is_local or self.protocol in _CONDITIONAL_PUT_PROTOCOLS

    @property
    def supports_symlinks(self) -> bool:
        """POSIX filesystems have symlinks; object stores do not (HDFS: via fsspec's arrow fs)."""
        return self.is_local

    def full(self, rel: str) -> str:
        rel = safe_relpath(rel)
        return self.base_uri if not rel else f"{self.base_uri}/{rel}"

    def check_no_links(self, rel: str, *, itself: bool = False) -> str:
        """Refuse (:class:`UnsafePathError`) a path whose folders below the base path include a
        symbolic link (``itself``: ``rel`` too, for a folder about to be listed, made or removed):
        a change through it would land outside the table. Object stores have no links. Returns
        the normalised path."""
        rel = safe_relpath(rel)
        if not self.is_local or not rel:
            return rel
        parts = rel.split("/")
        upto = len(parts) if itself else len(parts) - 1
        p = self.base_uri
        for i in range(upto):
            p = f"{p}/{parts[i]}"
            try:
                st = os.lstat(p)
            except (FileNotFoundError, NotADirectoryError):
                return rel  # nothing further down exists: nothing to follow
            if _stat.S_ISLNK(st.st_mode):
                where = "/".join(parts[: i + 1])
                raise UnsafePathError(f"{where} is a symbolic link (to {os.readlink(p)!r}): refusing to follow it "
                                      f"out of the table; remove the link (and restore the folder) first")
        return rel

    def _check_listing(self, rel_dir: str) -> str:
        """Listings under ``.hoodie/`` go through no link (see :meth:`check_no_links`)."""
        rel_dir = safe_relpath(rel_dir)
        if self.is_local and (rel_dir == ".hoodie" or rel_dir.startswith(".hoodie/")):
            self.check_no_links(rel_dir, itself=True)
        return rel_dir

    def links_below(self, rel_dir: str, *, recursive: bool = True) -> list[str]:
        """Table-relative paths of the symbolic links inside a local folder (and, ``recursive``,
        its sub-folders, never entered through a link); ``rel_dir`` itself when it is one.
        Object stores: none."""
        rel_dir = safe_relpath(rel_dir)
        if not self.is_local:
            return []
        if os.path.islink(self.full(rel_dir)):
            return [rel_dir]
        out: list[str] = []
        stack = [rel_dir]
        while stack:
            d = stack.pop()
            try:
                it = os.scandir(self.full(d))
            except (FileNotFoundError, NotADirectoryError):
                continue
            with it:
                for e in it:
                    rel = f"{d}/{e.name}" if d else e.name
                    try:
                        if e.is_symlink():
                            out.append(rel)
                        elif recursive and e.is_dir(follow_symlinks=False):
                            stack.append(rel)
                    except FileNotFoundError:
                        continue
        return sorted(out)

    def uri(self, rel: str) -> str:
        """A URI for tools outside fsspec (hudi-rs, Spark)."""
        return self.full(rel)

    # ------------------------------------------------------------------ reading
    def exists(self, rel: str) -> bool:
        p = self.full(rel)
        if self.is_local:
            return os.path.lexists(p)
        return self.fs.exists(p)

    def read_bytes(self, rel: str, start: int | None = None, end: int | None = None) -> bytes:
        """Whole file, or the byte range [start, end)."""
        p = self.full(rel)
        if self.is_local:
            with open(p, "rb") as f:
                if start:
                    f.seek(start)
                if end is None:
                    return f.read()
                return f.read(max(0, end - (start or 0)))
        if start is None and end is None:
            return self.fs.cat_file(p)
        return self.fs.cat_file(p, start=start, end=end)

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8")

    def open(self, rel: str, mode: str = "rb"):
        return self.fs.open(self.full(rel), mode)

    def size(self, rel: str) -> int:
        p = self.full(rel)
        if self.is_local:
            return os.stat(p).st_size
        return int(self.fs.size(p))

    def list(self, rel_dir: str = "", *, include_temp: bool = False, sizes: bool = True,
             names_only: bool = False) -> list[FileInfo] | list[str]:
        """Files (not directories) directly inside a table folder; missing folder → [].
        Temp files of writes in progress are left out unless ``include_temp``. ``sizes=False``:
        local files are not stat'ed and get size -1 (unknown); listings that come with sizes
        (object stores) keep them. ``names_only``: the file names alone (:meth:`list_names`)."""
        rel_dir = self._check_listing(rel_dir)
        p = self.full(rel_dir)
        if names_only and self.is_local:
            return self._list_names_local(p, include_temp)
        if self.is_local:
            return _scan_local(p, rel_dir, include_temp=include_temp, sizes=sizes)[0]
        out: list[FileInfo] = []
        try:
            entries = self.fs.ls(p, detail=True)
        except FileNotFoundError:
            return []
        for d in entries:
            if d.get("type") == "directory":
                continue
            name = posixpath.basename(d["name"].rstrip("/"))
            if name.startswith(_TMP_PREFIX) and not include_temp:
                continue
            out.append(FileInfo(posixpath.join(rel_dir, name) if rel_dir else name, int(d.get("size") or 0)))
        if names_only:
            return [posixpath.basename(f.path) for f in out]
        return out

    def list_names(self, rel_dir: str = "", *, include_temp: bool = False) -> list[str]:
        """Names of the files :meth:`list` would return, without their sizes: no stat per file
        locally (the directory entry's type is enough); one listing call on object stores."""
        return self.list(rel_dir, include_temp=include_temp, names_only=True)

    def list_entry_names(self, rel_dir: str = "", *, include_temp: bool = False) -> list[str]:
        """Names of what a folder holds, files and (locally) sub-folders alike, temp files left
        out unless ``include_temp``: one ``os.listdir`` locally, with no per-entry type check
        (:meth:`list_names` reads each entry's type to leave folders out); object stores:
        :meth:`list_names`. For readers that take only names of their own pattern from the
        listing and that no folder has: the timeline's ``<instant>.<action>[.<state>]`` files in
        ``.hoodie/`` (whose folders are ``.aux``, ``.temp``, ``archived``, ``metadata``, ...)."""
        if not self.is_local:
            return self.list_names(rel_dir, include_temp=include_temp)
        try:
            out = os.listdir(self.full(self._check_listing(rel_dir)))
        except (FileNotFoundError, NotADirectoryError):
            return []
        if include_temp or "\x00" + _TMP_PREFIX not in "\x00" + "\x00".join(out):
            return out
        return [n for n in out if not n.startswith(_TMP_PREFIX)]

    def _list_names_local(self, p: str, include_temp: bool) -> list[str]:
        # scandir over a descriptor: the entries carry no joined path (cheaper per entry)
        fd = None
        try:
            if os.scandir in os.supports_fd:
                fd = os.open(p, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
                it = os.scandir(fd)
            else:
                it = os.scandir(p)
        except (FileNotFoundError, NotADirectoryError):
            if fd is not None:
                os.close(fd)
            return []
        out: list[str] = []
        append = out.append
        try:
            with it:
                for e in it:
                    try:
                        if e.is_dir(follow_symlinks=False):
                            continue
                    except FileNotFoundError:
                        continue
                    append(e.name)
        finally:
            if fd is not None:
                os.close(fd)
        if include_temp or "\x00" + _TMP_PREFIX not in "\x00" + "\x00".join(out):
            return out
        return [n for n in out if not n.startswith(_TMP_PREFIX)]

    def list_names_and_dirs(self, rel_dir: str = "") -> tuple[list[str], set[str], list[str]]:
        """From one listing: the names :meth:`list_names` would return, those of them that are
        symlinks, and :meth:`list_dirs`. Locally no stat and no object per file."""
        if not self.is_local:
            files, dirs = self.list_files_and_dirs(rel_dir, sizes=False)
            return [f.name for f in files], {f.name for f in files if f.is_link}, dirs
        rel_dir = self._check_listing(rel_dir)
        try:
            it = os.scandir(self.full(rel_dir))
        except (FileNotFoundError, NotADirectoryError):
            return [], set(), []
        prefix = rel_dir + "/" if rel_dir else ""
        names: list[str] = []
        links: set[str] = set()
        dirs: list[str] = []
        append = names.append
        with it:
            for e in it:
                try:
                    if e.is_dir(follow_symlinks=False):
                        dirs.append(prefix + e.name)
                        continue
                    if e.is_symlink():
                        links.add(e.name)
                except FileNotFoundError:
                    continue
                append(e.name)
        if "\x00" + _TMP_PREFIX in "\x00" + "\x00".join(names):
            names = [n for n in names if not n.startswith(_TMP_PREFIX)]
            links = {n for n in links if not n.startswith(_TMP_PREFIX)}
        dirs.sort()
        return names, links, dirs

    def list_files_and_dirs(self, rel_dir: str = "", *, sizes: bool = True) -> tuple[list[FileInfo], list[str]]:
        """``(self.list(rel_dir, sizes=sizes), self.list_dirs(rel_dir))`` from one listing."""
        rel_dir = self._check_listing(rel_dir)
        p = self.full(rel_dir)
        if not self.is_local:
            try:
                entries = self.fs.ls(p, detail=True)
            except FileNotFoundError:
                return [], []
            files: list[FileInfo] = []
            subs = []
            for d in entries:
                name = posixpath.basename(d["name"].rstrip("/"))
                if d.get("type") == "directory":
                    subs.append(name)
                elif not name.startswith(_TMP_PREFIX):
                    files.append(FileInfo(posixpath.join(rel_dir, name) if rel_dir else name, int(d.get("size") or 0)))
            return files, sorted(posixpath.join(rel_dir, n) if rel_dir else n for n in subs)
        return _scan_local(p, rel_dir, include_temp=False, sizes=sizes)

    def list_dirs(self, rel_dir: str = "") -> list[str]:
        """Sub-folders (table-relative) directly inside a folder."""
        rel_dir = self._check_listing(rel_dir)
        p = self.full(rel_dir)
        if self.is_local:
            try:
                with os.scandir(p) as it:
                    names = [e.name for e in it if e.is_dir(follow_symlinks=False)]
            except (FileNotFoundError, NotADirectoryError):
                return []
        else:
            try:
                names = [
                    posixpath.basename(d["name"].rstrip("/"))
                    for d in self.fs.ls(p, detail=True)
                    if d.get("type") == "directory"
                ]
            except FileNotFoundError:
                return []
        return sorted(posixpath.join(rel_dir, n) if rel_dir else n for n in names)

    def walk_files(self, rel_dir: str = "", skip_dirs: tuple[str, ...] = (".hoodie",)) -> Iterator[FileInfo]:
        """Every file below a folder, skipping the named top-level folders."""
        stack = [safe_relpath(rel_dir)]
        while stack:
            d = stack.pop()
            yield from self.list(d)
            for sub in self.list_dirs(d):
                if sub.split("/")[0] in skip_dirs and not d:
                    continue
                stack.append(sub)

    def readlink(self, rel: str) -> str | None:
        """Target of a symlink (as stored), or None for a regular file / non-local storage."""
        if not self.is_local:
            return None
        p = self.full(rel)
        return os.readlink(p) if os.path.islink(p) else None

    # ------------------------------------------------------------------ writing
    def mkdirs(self, rel_dir: str) -> None:
        p = self.full(self.check_no_links(rel_dir, itself=True))
        if self.is_local:
            os.makedirs(p, exist_ok=True)
        elif self.protocol in _OBJECT_STORE_PROTOCOLS:
            return  # no directories on object stores (and s3fs would *create a bucket* for a missing one)
        else:
            self.fs.makedirs(p, exist_ok=True)

    def _tmp_name(self, rel: str) -> str:
        """``.hudi-etc-tmp-i<owner instant>-<hex>.tmp`` beside ``rel``: a dot-name without the
        target's name, ending in ``.tmp`` (see ``_TMP_SUFFIX``)."""
        d = posixpath.dirname(safe_relpath(rel))
        tmp = f"{_TMP_PREFIX}i{_TEMP_OWNER.get()}-{uuid.uuid4().hex}{_TMP_SUFFIX}"
        return posixpath.join(d, tmp) if d else tmp

    def temp_files(self, rel_dir: str = "") -> list[tuple[str, str | None, float]]:
        """Temp files directly in a folder: (table-relative path, owner instant as
        :func:`temp_file_owner` gives it, modification time). Local storage only (elsewhere no
        temp file is ever made in the table)."""
        if not self.is_local:
            return []
        rel_dir = safe_relpath(rel_dir)
        out = []
        for name in self.list_entry_names(rel_dir, include_temp=True):
            if not name.startswith(_TMP_PREFIX):
                continue
            rel = posixpath.join(rel_dir, name) if rel_dir else name
            try:
                mtime = os.lstat(self.full(rel)).st_mtime
            except FileNotFoundError:
                continue
            out.append((rel, temp_file_owner(name), mtime))
        return out

    def mtime(self, rel: str) -> float | None:
        """Modification time (seconds since the epoch) of a file, None when it is missing."""
        p = self.full(rel)
        if self.is_local:
            try:
                return os.stat(p).st_mtime
            except FileNotFoundError:
                return None
        try:
            info = self.fs.info(p)
        except FileNotFoundError:
            return None
        m = info.get("LastModified") or info.get("mtime") or info.get("last_modified") or info.get("created")
        if m is None:
            return None
        if hasattr(m, "timestamp"):
            return m.timestamp()
        return float(m)

    def touch(self, rel: str) -> bool:
        """Set a local file's modification time to now (False: it is gone). Object stores: the
        object is written again with its own bytes (its LastModified moves). A symlink's own
        time is set, never its target's."""
        p = self.full(self.check_no_links(rel))
        if self.is_local:
            try:
                os.utime(p, follow_symlinks=False)
                return True
            except FileNotFoundError:
                return False
        try:
            data = self.read_bytes(rel)
        except FileNotFoundError:
            return False
        self._put_object(p, data, if_absent=False)
        return True

    def _write_local_tmp(self, rel: str, data: bytes) -> tuple[str, str]:
        """Write ``data`` durably to a temp file beside ``rel``; return (target, temp) paths."""
        target = self.full(self.check_no_links(rel))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = self.full(self._tmp_name(rel))
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return target, tmp

    def create_if_absent(self, rel: str, data: bytes) -> None:
        """Write a new file atomically; raise :class:`InstantExistsError` if it exists.

        Local: the bytes go to a temp file in the same folder, which is then hard-linked to
        the target name (``link`` fails atomically when the name exists), so a reader sees
        either nothing or the whole file. Object stores: a conditional put where available.
        """
        rel = safe_relpath(rel)
        if self.is_local:
            target, tmp = self._write_local_tmp(rel, data)
            try:
                os.link(tmp, target)
            except FileExistsError:
                raise InstantExistsError(f"{rel} already exists") from None
            finally:
                os.unlink(tmp)
            return
        self._put_object(self.full(rel), data, if_absent=True)

    def _put_object(self, target: str, data: bytes, if_absent: bool) -> None:
        """One PUT of the whole object (atomic on object stores). ``if_absent``: a conditional
        create — ``If-None-Match: *`` on S3; fsspec's exists-then-put elsewhere."""
        try:
            self.fs.pipe_file(target, bytes(data), mode="create" if if_absent else "overwrite")
        except FileExistsError:
            raise InstantExistsError(f"{self._rel_of(target)} already exists") from None
        except FileNotFoundError:  # S3 NoSuchBucket: the table's location itself is missing
            raise InvalidInputError(f"cannot write {self._rel_of(target)}: the location "
                                    f"{redact_uri(self.base_uri)} does not exist (missing bucket?)") from None
        except OSError as e:
            # S3: 409 ConditionalRequestConflict, another conditional write of this key in flight
            said = f"{e} {e.__cause__ or ''}"
            if if_absent and "ConditionalRequestConflict" in said:
                raise InstantExistsError(f"{self._rel_of(target)}: a concurrent write of the same name") from None
            raise

    def _rel_of(self, target: str) -> str:
        return target[len(self.base_uri) + 1 :] if target.startswith(self.base_uri + "/") else target

    @contextlib.contextmanager
    def create_streamed(self, rel: str, *, same_ok: bool = False) -> Iterator[Any]:
        """Write a new file through a binary file object; it appears under ``rel`` whole, and
        only when the block ends without an error (atomically, as :meth:`create_if_absent`).

        Raises :class:`InstantExistsError` if ``rel`` exists, unless ``same_ok`` and its bytes
        equal the new ones (a retried task that finds its own file). Local: a temp file beside
        the target, hard-linked into place. Object stores: the bytes are spooled (in memory up
        to 64 MiB, then a local temp file) and sent as one conditional PUT at the end.
        """
        rel = self.check_no_links(rel)
        if self.is_local:
            target = self.full(rel)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            tmp = self.full(self._tmp_name(rel))
            try:
                with open(tmp, "wb") as f:
                    yield f
                    f.flush()
                    os.fsync(f.fileno())
                try:
                    os.link(tmp, target)
                except FileExistsError:
                    if not (same_ok and _same_local_file(tmp, target)):
                        raise InstantExistsError(f"{rel} already exists") from None
            finally:
                try:
                    os.unlink(tmp)
                except FileNotFoundError:
                    pass
            return
        with tempfile.SpooledTemporaryFile(max_size=64 << 20) as f:
            yield f
            f.seek(0)
            data = f.read()
        try:
            self._put_object(self.full(rel), data, if_absent=True)
        except InstantExistsError:
            if not (same_ok and self.read_bytes(rel) == data):
                raise

    def write_atomic(self, rel: str, data: bytes) -> None:
        """Replace a file as a whole (temp + rename locally; a single put on object stores)."""
        rel = safe_relpath(rel)
        if self.is_local:
            target, tmp = self._write_local_tmp(rel, data)
            os.replace(tmp, target)
            return
        self._put_object(self.full(rel), data, if_absent=False)

    def remove_empty_dir(self, rel_dir: str) -> bool:
        """Remove a folder if it exists and is empty (object stores have no folders: a no-op).
        Returns whether it was removed."""
        if not self.is_local:
            return False
        try:
            os.rmdir(self.full(self.check_no_links(rel_dir, itself=True)))
            return True
        except OSError:  # missing, not empty, or not a folder
            return False

    def delete(self, rel: str, missing_ok: bool = True) -> bool:
        """Remove a file (a symlink itself, never its target; never through a linked folder,
        :meth:`check_no_links`). Returns whether it existed."""
        p = self.full(self.check_no_links(rel))
        if self.is_local:
            try:
                os.unlink(p)
                return True
            except FileNotFoundError:
                if missing_ok:
                    return False
                raise
        if not self.fs.exists(p):
            if missing_ok:
                return False
            raise FileNotFoundError(p)
        self.fs.rm_file(p)
        return True

    def copy(self, src_rel: str, dst_rel: str) -> None:
        """Copy a file to a new name inside the table; the new name must not exist.

        Local, with ``HUDI_ETC_LOCAL_COPY=hardlink`` (:data:`LOCAL_COPY_ENV`): a hard link to the
        file (symlinks followed) where the file system allows one — a second name of the same
        bytes, atomic, nothing written, and unlike a symlink it keeps the bytes when the original
        name is deleted (Java's cleaner); else, and by default, the bytes are copied
        (:meth:`create_if_absent`). Opt-in: a hard link shares the original's bytes, so a tool
        that wrote into the copy in place would change the original too (Java Hudi does not append
        on local storage, ``StorageSchemes``; our writers make new files)."""
        dst_rel = self.check_no_links(dst_rel)
        if self.copies_hard_link:
            # the file a symlink chain ends at (os.link does not follow symlinks on Linux before 3.13)
            src, dst = os.path.realpath(self.full(src_rel)), self.full(dst_rel)
            try:
                os.link(src, dst, follow_symlinks=False)
                return
            except FileExistsError:
                raise InstantExistsError(f"{dst_rel} already exists") from None
            except FileNotFoundError:
                if not os.path.isdir(os.path.dirname(dst)):
                    os.makedirs(os.path.dirname(dst), exist_ok=True)
                    return self.copy(src_rel, dst_rel)
                raise
            except OSError as e:
                if e.errno not in _NO_HARD_LINK:
                    raise
        if self.exists(dst_rel):
            raise InstantExistsError(f"{dst_rel} already exists")
        if self.is_local:
            self.create_if_absent(dst_rel, self.read_bytes(src_rel))
            return
        # not a server-side CopyObject: that would overwrite; the copy is created only if absent
        self._put_object(self.full(dst_rel), self.read_bytes(src_rel), if_absent=True)

    @property
    def copies_hard_link(self) -> bool:
        """Local storage with ``HUDI_ETC_LOCAL_COPY=hardlink``: :meth:`copy` makes hard links."""
        return self.is_local and os.environ.get(LOCAL_COPY_ENV, "").strip().lower() == "hardlink"

    def stage_copy(self, src_rel: str | None, staged_rel: str, *, durable: bool = True, checked: bool = False) -> None:
        """Local storage only: write a copy of ``src_rel`` (``None``: an empty file) under
        ``staged_rel``, a name of :func:`staged_name` that must not exist (:class:`InstantExistsError`),
        for :meth:`promote_staged` to give it its final name. One open, write (and fsync unless
        ``durable`` is off: then :meth:`sync_staged` before the renames), no temp file of its own:
        the staged name is already invisible to every reader. ``checked``: the caller made sure
        (:meth:`check_no_links`) that no folder on the way is a link and that both paths are safe.

        The bytes go from file to file in the kernel (``copy_file_range``, the source's size from
        its open descriptor: six system calls a copy, against about ten through a Python file
        object), else by ``read`` and ``write`` where the kernel or file system refuses it."""
        if not self.is_local:
            raise UnsupportedFeatureError(f"{self.protocol}:// has no rename: copies are made under their final names")
        src = None if src_rel is None else os.open(self.full(src_rel), os.O_RDONLY | _O_CLOEXEC)
        try:
            p = f"{self.base_uri}/{staged_rel}" if checked else self.full(self.check_no_links(staged_rel))
            try:
                fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_CLOEXEC, 0o644)
            except FileExistsError:
                raise InstantExistsError(f"{staged_rel} already exists") from None
            except FileNotFoundError:
                os.makedirs(os.path.dirname(p), exist_ok=True)
                return self.stage_copy(src_rel, staged_rel, durable=durable, checked=checked)
            try:
                if src is not None:
                    _copy_fd(src, fd)
                if durable:
                    os.fsync(fd)
            except BaseException:  # (a source that cannot be read: no half-made staged file stays)
                os.close(fd)
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(p)
                raise
            os.close(fd)
        finally:
            if src is not None:
                os.close(src)

    def sync_staged(self, staged_rels) -> None:
        """Make files written by ``stage_copy(..., durable=False)`` durable: one ``syncfs`` of the
        table's file system where the C library has it (Linux), else an fsync per file."""
        try:
            import ctypes

            syncfs = ctypes.CDLL(None, use_errno=True).syncfs
        except (OSError, AttributeError):
            syncfs = None
        if syncfs is not None:
            fd = os.open(self.base_uri, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                if syncfs(fd) == 0:
                    return
            finally:
                os.close(fd)
        for rel in staged_rels:
            fd = os.open(self.full(rel), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def promote_staged(self, staged_rel: str, final_rel: str, *, checked: bool = False) -> None:
        """Give a staged file (:meth:`stage_copy`) its final name, which must not exist
        (:class:`InstantExistsError`; the staged file then stays): a hard link and an unlink, two
        metadata operations, and a reader sees either no file or the whole one. ``checked``: as
        for :meth:`stage_copy`."""
        if checked:
            src, dst = f"{self.base_uri}/{staged_rel}", f"{self.base_uri}/{final_rel}"
        else:
            src, dst = self.full(safe_relpath(staged_rel)), self.full(self.check_no_links(final_rel))
        try:
            os.link(src, dst, follow_symlinks=False)
        except FileExistsError:
            raise InstantExistsError(f"{final_rel} already exists") from None
        os.unlink(src)

    def symlink(self, target_rel: str, link_rel: str) -> None:
        """Create ``link_rel`` as a *relative* symlink to ``target_rel`` (both table-relative)."""
        if not self.supports_symlinks:
            raise UnsupportedFeatureError(f"{self.protocol} storage has no symlinks: use link mode copy (or auto)")
        target_rel, link_rel = safe_relpath(target_rel), self.check_no_links(link_rel)
        link_dir = posixpath.dirname(link_rel)
        rel_target = posixpath.relpath(target_rel, link_dir or ".")
        p = self.full(link_rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        try:
            os.symlink(rel_target, p)
        except FileExistsError:
            raise InstantExistsError(f"{link_rel} already exists") from None
