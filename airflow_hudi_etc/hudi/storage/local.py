"""Local (POSIX) files: ``os`` calls on the OS paths below the base path.

Write-once is atomic: the bytes go to a temp file beside the target, fsync'ed, then ``os.link``
to the target name — the link fails atomically when the name exists, and a reader sees nothing
or the whole file. A replace is a temp file and ``os.replace``.

**Links are never followed out of the table by a change.** Every create, replace, delete,
rename target and folder made or removed is refused with :class:`UnsafePathError` when a folder
on its way below the base path is a symbolic link (:meth:`LocalFiles.check_no_links`), and so is
every listing under ``.hoodie/`` (markers, heartbeats, ``.aux``, ``archived``, ``metadata``): a
planted ``.hoodie/.temp/<instant>`` pointing elsewhere must not turn a marker clean-up into a
delete of someone else's files. A symlinked *file* is only ever removed itself, never its target.
"""

from __future__ import annotations

import contextlib
import errno
import os
import posixpath
import shutil
import stat as _stat
from typing import Any, Iterator

import fsspec

from ..errors import InstantExistsError, UnsafePathError
from .base import Backend
from .names import _TMP_PREFIX, FileInfo, drop_temp_names, new_file_info, safe_relpath, temp_file_owner, tmp_name

#: environment variable: ``hardlink`` makes local copies hard links (:meth:`LocalFiles.copy`)
LOCAL_COPY_ENV = "HUDI_ETC_LOCAL_COPY"
#: errors of ``os.link`` that mean "no hard link here" (another file system, not supported,
#: not permitted, too many links): the bytes are copied instead
_NO_HARD_LINK = frozenset({errno.EXDEV, errno.EPERM, errno.EMLINK, errno.EOPNOTSUPP, errno.ENOTSUP,
                           errno.EACCES, errno.ENOSYS})
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: errors of ``copy_file_range`` that mean "not here" (kernel, file system, or file kind)
_NO_COPY_RANGE = frozenset({errno.ENOSYS, errno.EXDEV, errno.EINVAL, errno.EOPNOTSUPP, errno.EPERM,
                            getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)})
_copy_file_range = getattr(os, "copy_file_range", None)


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
    append, new = files.append, new_file_info
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


class LocalFiles(Backend):
    """A table on the local file system (``/data/t1``, ``file:///data/t1``)."""

    atomic_create = True
    supports_symlinks = True
    hard_links = True
    atomic_rename = True
    local_paths = True
    listing_has_sizes = False
    writes_temp_files = True
    copy_workers = 8

    def __init__(self, base_uri: str, options, scheme: str = "file") -> None:
        super().__init__(base_uri, options, scheme)
        self._fs = None

    @property
    def fs(self) -> fsspec.AbstractFileSystem:
        if self._fs is None:
            self._fs = fsspec.filesystem("file", **dict(self.options))
        return self._fs

    @property
    def copies_hard_link(self) -> bool:
        """With ``HUDI_ETC_LOCAL_COPY=hardlink``: :meth:`copy` makes hard links."""
        return os.environ.get(LOCAL_COPY_ENV, "").strip().lower() == "hardlink"

    # ------------------------------------------------------------------ links
    def check_no_links(self, rel: str, *, itself: bool = False) -> str:
        rel = safe_relpath(rel)
        if not rel:
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
        if rel_dir == ".hoodie" or rel_dir.startswith(".hoodie/"):
            self.check_no_links(rel_dir, itself=True)
        return rel_dir

    def links_below(self, rel_dir: str, *, recursive: bool = True) -> list[str]:
        rel_dir = safe_relpath(rel_dir)
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

    def readlink(self, rel: str) -> str | None:
        p = self.full(rel)
        return os.readlink(p) if os.path.islink(p) else None

    # ------------------------------------------------------------------ reading
    def exists(self, rel: str) -> bool:
        return os.path.lexists(self.full(rel))

    def is_dir(self, rel: str) -> bool:
        return os.path.isdir(self.full(rel))

    def read_bytes(self, rel: str, start: int | None = None, end: int | None = None) -> bytes:
        with open(self.full(rel), "rb") as f:
            if start:
                f.seek(start)
            if end is None:
                return f.read()
            return f.read(max(0, end - (start or 0)))

    def open(self, rel: str, mode: str = "rb"):
        return self.fs.open(self.full(rel), mode)

    def size(self, rel: str) -> int:
        return os.stat(self.full(rel)).st_size

    def mtime(self, rel: str) -> float | None:
        try:
            return os.stat(self.full(rel)).st_mtime
        except FileNotFoundError:
            return None

    def list(self, rel_dir: str = "", *, include_temp: bool = False, sizes: bool = True,
             names_only: bool = False) -> list[FileInfo] | list[str]:
        rel_dir = self._check_listing(rel_dir)
        p = self.full(rel_dir)
        if names_only:
            return self._list_names(p, include_temp)
        return _scan_local(p, rel_dir, include_temp=include_temp, sizes=sizes)[0]

    def _list_names(self, p: str, include_temp: bool) -> list[str]:
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
        return out if include_temp else drop_temp_names(out)

    def list_entry_names(self, rel_dir: str = "", *, include_temp: bool = False) -> list[str]:
        """One ``os.listdir``, with no per-entry type check: files and sub-folders alike."""
        try:
            out = os.listdir(self.full(self._check_listing(rel_dir)))
        except (FileNotFoundError, NotADirectoryError):
            return []
        return out if include_temp else drop_temp_names(out)

    def list_names_and_dirs(self, rel_dir: str = "") -> tuple[list[str], set[str], list[str]]:
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
        kept = drop_temp_names(names)
        if kept is not names:
            names, links = kept, {n for n in links if not n.startswith(_TMP_PREFIX)}
        dirs.sort()
        return names, links, dirs

    def list_files_and_dirs(self, rel_dir: str = "", *, sizes: bool = True) -> tuple[list[FileInfo], list[str]]:
        rel_dir = self._check_listing(rel_dir)
        return _scan_local(self.full(rel_dir), rel_dir, include_temp=False, sizes=sizes)

    def list_dirs(self, rel_dir: str = "") -> list[str]:
        rel_dir = self._check_listing(rel_dir)
        try:
            with os.scandir(self.full(rel_dir)) as it:
                names = [e.name for e in it if e.is_dir(follow_symlinks=False)]
        except (FileNotFoundError, NotADirectoryError):
            return []
        return sorted(posixpath.join(rel_dir, n) if rel_dir else n for n in names)

    def temp_files(self, rel_dir: str = "") -> list[tuple[str, str | None, float]]:
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

    # ------------------------------------------------------------------ writing
    def mkdirs(self, rel_dir: str) -> None:
        os.makedirs(self.full(self.check_no_links(rel_dir, itself=True)), exist_ok=True)

    def touch(self, rel: str) -> bool:
        try:
            os.utime(self.full(self.check_no_links(rel)), follow_symlinks=False)
            return True
        except FileNotFoundError:
            return False

    def _write_tmp(self, rel: str, data: bytes) -> tuple[str, str]:
        """Write ``data`` durably to a temp file beside ``rel``; return (target, temp) paths."""
        target = self.full(self.check_no_links(rel))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = self.full(tmp_name(rel))
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return target, tmp

    def create_if_absent(self, rel: str, data: bytes) -> None:
        """A temp file in the same folder, hard-linked to the target name."""
        rel = safe_relpath(rel)
        target, tmp = self._write_tmp(rel, data)
        try:
            os.link(tmp, target)
        except FileExistsError:
            raise InstantExistsError(f"{rel} already exists") from None
        finally:
            os.unlink(tmp)

    @contextlib.contextmanager
    def create_streamed(self, rel: str, *, same_ok: bool = False) -> Iterator[Any]:
        """A temp file beside the target, hard-linked into place."""
        rel = self.check_no_links(rel)
        target = self.full(rel)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        tmp = self.full(tmp_name(rel))
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

    def write_atomic(self, rel: str, data: bytes) -> None:
        target, tmp = self._write_tmp(safe_relpath(rel), data)
        os.replace(tmp, target)

    def remove_empty_dir(self, rel_dir: str) -> bool:
        try:
            os.rmdir(self.full(self.check_no_links(rel_dir, itself=True)))
            return True
        except OSError:  # missing, not empty, or not a folder
            return False

    def remove_empty_dirs(self, rel_dir: str) -> None:
        root = self.full(self.check_no_links(rel_dir, itself=True))
        for dirpath, _dirs, _files in sorted(os.walk(root), key=lambda t: -len(t[0])):
            try:
                os.rmdir(dirpath)
            except OSError:
                pass

    def delete(self, rel: str, missing_ok: bool = True) -> bool:
        try:
            os.unlink(self.full(self.check_no_links(rel)))
            return True
        except FileNotFoundError:
            if missing_ok:
                return False
            raise

    def delete_tree(self, rel_dir: str) -> int:
        p = self.full(self.check_no_links(rel_dir, itself=True))
        n = sum(len(files) for _, _, files in os.walk(p))
        shutil.rmtree(p)
        return n

    def rename(self, src_rel: str, dst_rel: str) -> None:
        """``os.rename``: atomic, and replaces ``dst_rel`` if it exists."""
        src, dst = self.check_no_links(src_rel), self.check_no_links(dst_rel)
        os.rename(self.full(src), self.full(dst))

    def hard_link(self, src_rel: str, dst_rel: str) -> None:
        """``os.link`` (a symlink is linked itself, not followed); InstantExistsError when
        ``dst_rel`` exists."""
        src, dst = self.full(safe_relpath(src_rel)), self.full(self.check_no_links(dst_rel))
        try:
            os.link(src, dst, follow_symlinks=False)
        except FileExistsError:
            raise InstantExistsError(f"{dst_rel} already exists") from None

    def copy(self, src_rel: str, dst_rel: str) -> None:
        """With ``HUDI_ETC_LOCAL_COPY=hardlink`` (:data:`LOCAL_COPY_ENV`): a hard link to the
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
        self.create_if_absent(dst_rel, self.read_bytes(src_rel))

    def stage_copy(self, src_rel: str | None, staged_rel: str, *, durable: bool = True, checked: bool = False) -> None:
        """One open, write (and fsync unless ``durable`` is off) of the staged name, no temp file
        of its own: the staged name is already invisible to every reader. The bytes go from file
        to file in the kernel (``copy_file_range``, the source's size from its open descriptor:
        six system calls a copy, against about ten through a Python file object), else by
        ``read`` and ``write`` where the kernel or file system refuses it."""
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
        """One ``syncfs`` of the table's file system where the C library has it (Linux), else an
        fsync per file."""
        try:
            import ctypes

            syncfs = ctypes.CDLL(None, use_errno=True).syncfs
        except (OSError, AttributeError):
            syncfs = None
        if syncfs is not None:
            fd = os.open(self.base_uri, os.O_RDONLY | _O_CLOEXEC)
            try:
                if syncfs(fd) == 0:
                    return
            finally:
                os.close(fd)
        for rel in staged_rels:
            fd = os.open(self.full(rel), os.O_RDONLY | _O_CLOEXEC)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)

    def promote_staged(self, staged_rel: str, final_rel: str, *, checked: bool = False) -> None:
        """A hard link and an unlink: two metadata operations."""
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
        target_rel, link_rel = safe_relpath(target_rel), self.check_no_links(link_rel)
        link_dir = posixpath.dirname(link_rel)
        rel_target = posixpath.relpath(target_rel, link_dir or ".")
        p = self.full(link_rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        try:
            os.symlink(rel_target, p)
        except FileExistsError:
            raise InstantExistsError(f"{link_rel} already exists") from None
