"""Any fsspec filesystem (``hdfs://``, ``memory://``, ...) and the object stores among them
(``gs://``, ``abfs://``, ...): no symlinks, no rename, no temp files.

A write is one PUT of the whole object (``pipe_file``): a reader never sees part of it. The
write-once create is fsspec's existence check, then the put: not atomic between two writers,
so the **single-writer rule** applies here: at most one process may write to the table's
timeline at a time (one writer and one compaction service, as Hudi's own single-writer mode;
the compaction commands already re-list the timeline before they publish: docs/concepts.md,
"Retries and racing schedulers"). S3 has a conditional PUT instead (:mod:`.s3`).

A copy reads the file and creates the copy conditionally (never a server-side copy, which would
overwrite); ``symlink`` refuses with :class:`UnsupportedFeatureError` (link mode ``auto`` picks
copy).
"""

from __future__ import annotations

import contextlib
import posixpath
import tempfile
from typing import Any, Iterator

import fsspec

from ..errors import InstantExistsError, InvalidInputError, UnsupportedFeatureError
from .base import JAVA_APPEND_SCHEMES, Backend
from .names import _TMP_PREFIX, FileInfo, redact_uri, safe_relpath


class FsspecStore(Backend):
    """A table on a filesystem fsspec knows by the URL's scheme; ``fs``: one to use instead of
    building it from the scheme and the options."""

    #: folders exist apart from the files in them (``mkdirs`` makes them)
    folders = True
    #: ``pip install`` hint when the scheme's fsspec package is missing
    install_hint = ""

    def __init__(self, base_uri: str, options, scheme: str, *, fs: fsspec.AbstractFileSystem | None = None) -> None:
        super().__init__(base_uri, options, scheme)
        self._fs = fs

    @property
    def in_place_append(self) -> bool:
        return self.scheme in JAVA_APPEND_SCHEMES

    def _fs_options(self) -> dict:
        return dict(self.options)

    @property
    def fs(self) -> fsspec.AbstractFileSystem:
        if self._fs is None:
            try:
                self._fs = fsspec.filesystem(self.scheme, **self._fs_options())
            except ImportError as e:  # e.g. s3:// without s3fs
                raise UnsupportedFeatureError(f"{self.scheme}:// storage needs a package that is not "
                                              f"installed{self.install_hint}: {e}") from None
            except ValueError as e:  # unknown protocol
                raise UnsupportedFeatureError(f"no filesystem for {self.scheme}://: {e}") from None
        return self._fs

    # ------------------------------------------------------------------ reading
    def exists(self, rel: str) -> bool:
        return self.fs.exists(self.full(rel))

    def is_dir(self, rel: str) -> bool:
        """A folder, or (object stores) a prefix with any key under it."""
        return bool(self.list_dirs(rel) or self.list(rel)) or self.exists(rel)

    def read_bytes(self, rel: str, start: int | None = None, end: int | None = None) -> bytes:
        p = self.full(rel)
        if start is None and end is None:
            return self.fs.cat_file(p)
        return self.fs.cat_file(p, start=start, end=end)

    def open(self, rel: str, mode: str = "rb"):
        return self.fs.open(self.full(rel), mode)

    def size(self, rel: str) -> int:
        return int(self.fs.size(self.full(rel)))

    def mtime(self, rel: str) -> float | None:
        try:
            info = self.fs.info(self.full(rel))
        except FileNotFoundError:
            return None
        m = info.get("LastModified") or info.get("mtime") or info.get("last_modified") or info.get("created")
        if m is None:
            return None
        if hasattr(m, "timestamp"):
            return m.timestamp()
        return float(m)

    def _entries(self, rel_dir: str) -> list[dict] | None:
        """One detailed listing of a folder (None: it is missing)."""
        try:
            return self.fs.ls(self.full(rel_dir), detail=True)
        except FileNotFoundError:
            return None

    def list(self, rel_dir: str = "", *, include_temp: bool = False, sizes: bool = True,
             names_only: bool = False) -> list[FileInfo] | list[str]:
        """Sizes come with the listing (``sizes`` changes nothing)."""
        rel_dir = safe_relpath(rel_dir)
        out: list[FileInfo] = []
        for d in self._entries(rel_dir) or ():
            if d.get("type") == "directory":
                continue
            name = posixpath.basename(d["name"].rstrip("/"))
            if name.startswith(_TMP_PREFIX) and not include_temp:
                continue
            out.append(FileInfo(posixpath.join(rel_dir, name) if rel_dir else name, int(d.get("size") or 0)))
        if names_only:
            return [posixpath.basename(f.path) for f in out]
        return out

    def list_entry_names(self, rel_dir: str = "", *, include_temp: bool = False) -> list[str]:
        return self.list(rel_dir, include_temp=include_temp, names_only=True)

    def list_names_and_dirs(self, rel_dir: str = "") -> tuple[list[str], set[str], list[str]]:
        files, dirs = self.list_files_and_dirs(rel_dir, sizes=False)
        return [f.name for f in files], {f.name for f in files if f.is_link}, dirs

    def list_files_and_dirs(self, rel_dir: str = "", *, sizes: bool = True) -> tuple[list[FileInfo], list[str]]:
        rel_dir = safe_relpath(rel_dir)
        entries = self._entries(rel_dir)
        if entries is None:
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

    def list_dirs(self, rel_dir: str = "") -> list[str]:
        rel_dir = safe_relpath(rel_dir)
        names = [posixpath.basename(d["name"].rstrip("/")) for d in self._entries(rel_dir) or ()
                 if d.get("type") == "directory"]
        return sorted(posixpath.join(rel_dir, n) if rel_dir else n for n in names)

    # ------------------------------------------------------------------ writing
    def mkdirs(self, rel_dir: str) -> None:
        p = self.full(rel_dir)
        if self.folders:  # (on object stores s3fs would *create a bucket* for a missing one)
            self.fs.makedirs(p, exist_ok=True)

    def touch(self, rel: str) -> bool:
        """The object is written again with its own bytes (its LastModified moves)."""
        try:
            data = self.read_bytes(rel)
        except FileNotFoundError:
            return False
        self._put_object(self.full(rel), data, if_absent=False)
        return True

    def create_if_absent(self, rel: str, data: bytes) -> None:
        self._put_object(self.full(rel), data, if_absent=True)

    def _put_object(self, target: str, data: bytes, if_absent: bool) -> None:
        """One PUT of the whole object (atomic on object stores). ``if_absent``: a conditional
        create (fsspec's exists-then-put; S3's own, see :mod:`.s3`)."""
        try:
            self.fs.pipe_file(target, bytes(data), mode="create" if if_absent else "overwrite")
        except FileExistsError:
            raise InstantExistsError(f"{self._rel_of(target)} already exists") from None
        except FileNotFoundError:  # S3 NoSuchBucket: the table's location itself is missing
            raise InvalidInputError(f"cannot write {self._rel_of(target)}: the location "
                                    f"{redact_uri(self.base_uri)} does not exist (missing bucket?)") from None

    @contextlib.contextmanager
    def create_streamed(self, rel: str, *, same_ok: bool = False) -> Iterator[Any]:
        """The bytes are spooled (in memory up to 64 MiB, then a local temp file) and sent as
        one conditional PUT at the end."""
        rel = safe_relpath(rel)
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
        self._put_object(self.full(rel), data, if_absent=False)

    def delete(self, rel: str, missing_ok: bool = True) -> bool:
        p = self.full(rel)
        if not self.fs.exists(p):
            if missing_ok:
                return False
            raise FileNotFoundError(p)
        self.fs.rm_file(p)
        return True

    def delete_tree(self, rel_dir: str) -> int:
        """Each file below (no recursive delete of a prefix we did not list), then what is left
        of the folder."""
        rel_dir = safe_relpath(rel_dir)
        files = []
        stack = [rel_dir]
        while stack:
            sub_files, subs = self.list_files_and_dirs(stack.pop())
            files += sub_files
            stack += subs
        for f in files:
            self.delete(f.path)
        try:
            self.fs.rm(self.full(rel_dir), recursive=True)
        except FileNotFoundError:
            pass
        return len(files)

    def copy(self, src_rel: str, dst_rel: str) -> None:
        dst_rel = safe_relpath(dst_rel)
        if self.exists(dst_rel):
            raise InstantExistsError(f"{dst_rel} already exists")
        # not a server-side CopyObject: that would overwrite; the copy is created only if absent
        self._put_object(self.full(dst_rel), self.read_bytes(src_rel), if_absent=True)


class ObjectStore(FsspecStore):
    """An object store through fsspec (``gs://``, ``abfs://``, ...): no folders, only keys."""

    folders = False
