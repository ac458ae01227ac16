"""``Storage``: a table's base location and the backend its URL's scheme picks (:data:`SCHEME_TO_BACKEND`).

The rest of the code asks the storage what it can do (its capabilities, :class:`~.base.Backend`)
and never which store it is.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping

from .base import Backend
from .fsspec_store import FsspecStore, ObjectStore
from .local import LocalFiles
from .names import FileInfo, redact_uri, safe_relpath
from .s3 import S3

#: URL scheme → backend; a scheme not listed is any fsspec filesystem (:data:`DEFAULT_BACKEND`)
SCHEME_TO_BACKEND: dict[str, type[Backend]] = {
    "file": LocalFiles,
    "s3": S3,
    "s3a": S3,
    "gs": ObjectStore,
    "gcs": ObjectStore,
    "az": ObjectStore,
    "abfs": ObjectStore,
    "abfss": ObjectStore,
}
DEFAULT_BACKEND: type[Backend] = FsspecStore


def backend_for(base_uri: str, options: Mapping[str, Any], scheme: str) -> Backend:
    return SCHEME_TO_BACKEND.get(scheme, DEFAULT_BACKEND)(base_uri, options, scheme)


class _Capability:
    """A capability of the storage: its backend's attribute of the same name (documented there)."""

    def __set_name__(self, owner, name: str) -> None:
        self.name = name
        self.__doc__ = f"The backend's :attr:`~.base.Backend.{name}`."

    def __get__(self, obj, owner=None):
        return self if obj is None else getattr(obj.backend, self.name)


@dataclass(repr=False)
class Storage:
    """A table's base location plus the backend its scheme picks.

    ``Storage("/data/t1")``, ``Storage("s3://bucket/t1", {"key": ..., "client_kwargs": ...})``.
    The object is picklable (it is shipped to Spark tasks): the backend and its filesystem are
    rebuilt on the other side. ``backend`` may be replaced (a test seeing a local table as on
    another store).
    """

    base_uri: str
    options: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        uri = self.base_uri.rstrip("/") or "/"
        if uri.startswith("file://"):
            uri = uri[len("file://") :]
        scheme = uri.split("://", 1)[0] if "://" in uri else "file"
        if scheme == "file":
            uri = os.path.abspath(uri)
        self.base_uri = uri
        self.backend = backend_for(uri, self.options, scheme)

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

    # ------------------------------------------------------------------ capabilities
    atomic_create = _Capability()
    supports_symlinks = _Capability()
    hard_links = _Capability()
    atomic_rename = _Capability()
    in_place_append = _Capability()
    local_paths = _Capability()
    listing_has_sizes = _Capability()
    writes_temp_files = _Capability()
    copy_workers = _Capability()
    conditional_replace = _Capability()
    copies_hard_link = _Capability()

    @property
    def scheme(self) -> str:
        """The URL scheme (``file`` for local paths): for messages; ask a capability to decide."""
        return self.backend.scheme

    @property
    def fs(self):
        """The backend's fsspec filesystem."""
        return self.backend.fs

    # ------------------------------------------------------------------ paths
    def full(self, rel: str) -> str:
        """The one place a table-relative path becomes a path of the store; a path that leaves
        the table (``..``, absolute, another scheme) is refused (:func:`~.names.safe_relpath`)."""
        return self.backend.full(rel)

    def uri(self, rel: str) -> str:
        """A URI for tools outside fsspec (hudi-rs, Spark, a JVM)."""
        return self.backend.uri(rel)

    def check_no_links(self, rel: str, *, itself: bool = False) -> str:
        """Refuse (:class:`UnsafePathError`) a path whose folders below the base path include a
        symbolic link (``itself``: ``rel`` too, for a folder about to be listed, made or removed):
        a change through it would land outside the table. Stores without links: nothing to check.
        Returns the normalised path."""
        return self.backend.check_no_links(rel, itself=itself)

    def links_below(self, rel_dir: str, *, recursive: bool = True) -> list[str]:
        """Table-relative paths of the symbolic links inside a folder (and, ``recursive``, its
        sub-folders, never entered through a link); ``rel_dir`` itself when it is one. The
        mutating commands' first check. Stores without links: none."""
        return self.backend.links_below(rel_dir, recursive=recursive)

    def readlink(self, rel: str) -> str | None:
        """Target of a symlink (as stored), or None for a regular file / a store without links."""
        return self.backend.readlink(rel)

    # ------------------------------------------------------------------ reading
    def exists(self, rel: str) -> bool:
        return self.backend.exists(rel)

    def is_dir(self, rel: str) -> bool:
        """Is there a folder (object stores: any key below the prefix)?"""
        return self.backend.is_dir(rel)

    def read_bytes(self, rel: str, start: int | None = None, end: int | None = None) -> bytes:
        """Whole file, or the byte range [start, end)."""
        return self.backend.read_bytes(rel, start, end)

    def read_text(self, rel: str) -> str:
        return self.read_bytes(rel).decode("utf-8")

    def open(self, rel: str, mode: str = "rb"):
        return self.backend.open(rel, mode)

    def size(self, rel: str) -> int:
        return self.backend.size(rel)

    def mtime(self, rel: str) -> float | None:
        """Modification time (seconds since the epoch) of a file, None when it is missing."""
        return self.backend.mtime(rel)

    def list(self, rel_dir: str = "", *, include_temp: bool = False, sizes: bool = True,
             names_only: bool = False) -> list[FileInfo] | list[str]:
        """Files (not directories) directly inside a table folder; missing folder → [].
        Temp files of writes in progress are left out unless ``include_temp``. ``sizes=False``:
        local files are not stat'ed and get size -1 (unknown); listings that come with sizes
        (object stores) keep them. ``names_only``: the file names alone (:meth:`list_names`)."""
        return self.backend.list(rel_dir, include_temp=include_temp, sizes=sizes, names_only=names_only)

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
        return self.backend.list_entry_names(rel_dir, include_temp=include_temp)

    def list_names_and_dirs(self, rel_dir: str = "") -> tuple[list[str], set[str], list[str]]:
        """From one listing: the names :meth:`list_names` would return, those of them that are
        symlinks, and :meth:`list_dirs`. Locally no stat and no object per file."""
        return self.backend.list_names_and_dirs(rel_dir)

    def list_files_and_dirs(self, rel_dir: str = "", *, sizes: bool = True) -> tuple[list[FileInfo], list[str]]:
        """``(self.list(rel_dir, sizes=sizes), self.list_dirs(rel_dir))`` from one listing."""
        return self.backend.list_files_and_dirs(rel_dir, sizes=sizes)

    def list_dirs(self, rel_dir: str = "") -> list[str]:
        """Sub-folders (table-relative) directly inside a folder."""
        return self.backend.list_dirs(rel_dir)

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

    def temp_files(self, rel_dir: str = "") -> list[tuple[str, str | None, float]]:
        """Temp files directly in a folder: (table-relative path, owner instant as
        :func:`~.names.temp_file_owner` gives it, modification time); none where the store's
        writes make no temp files (:attr:`writes_temp_files`)."""
        return self.backend.temp_files(rel_dir)

    # ------------------------------------------------------------------ writing
    def mkdirs(self, rel_dir: str) -> None:
        """Make a folder and its parents (object stores have no folders: a no-op)."""
        self.backend.mkdirs(rel_dir)

    def touch(self, rel: str) -> bool:
        """Set a file's modification time to now (False: it is gone). Object stores: the object
        is written again with its own bytes (its LastModified moves). A symlink's own time is
        set, never its target's."""
        return self.backend.touch(rel)

    def create_if_absent(self, rel: str, data: bytes) -> None:
        """Write a new file atomically (readers never see part of it); raise
        :class:`InstantExistsError` if it exists. Atomic against a second writer where
        :attr:`atomic_create` (local: temp file hard-linked into place; S3: conditional PUT);
        elsewhere the single-writer rule applies (:mod:`.fsspec_store`). Used for timeline files
        (a completed instant must never be overwritten) and data files (a name is never reused)."""
        self.backend.create_if_absent(rel, data)

    def read_versioned(self, rel: str) -> tuple[bytes, str] | None:
        """A small file's bytes and its version (S3: the ETag), or None if it does not exist.
        Only where :attr:`conditional_replace`."""
        return self.backend.read_versioned(rel)

    def put_if_version(self, rel: str, data: bytes, version: str | None) -> str | None:
        """Replace ``rel`` whole if it is still at ``version`` (None: create it if absent); the new
        version, or None when another writer changed it first. Only where :attr:`conditional_replace`."""
        return self.backend.put_if_version(rel, data, version)

    def create_streamed(self, rel: str, *, same_ok: bool = False):
        """A context manager: write a new file through a binary file object; it appears under
        ``rel`` whole, and only when the block ends without an error (atomically, as
        :meth:`create_if_absent`). Raises :class:`InstantExistsError` if ``rel`` exists, unless
        ``same_ok`` and its bytes equal the new ones (a retried task that finds its own file)."""
        return self.backend.create_streamed(rel, same_ok=same_ok)

    def write_atomic(self, rel: str, data: bytes) -> None:
        """Replace a file as a whole (temp + rename locally; a single put on object stores).
        Used only for ``hoodie.properties`` and partition metadata."""
        self.backend.write_atomic(rel, data)

    def remove_empty_dir(self, rel_dir: str) -> bool:
        """Remove a folder if it exists and is empty (object stores have no folders: a no-op).
        Returns whether it was removed."""
        return self.backend.remove_empty_dir(rel_dir)

    def remove_empty_dirs(self, rel_dir: str) -> None:
        """Remove the empty folders of a tree, deepest first (as :meth:`remove_empty_dir`)."""
        self.backend.remove_empty_dirs(rel_dir)

    def delete(self, rel: str, missing_ok: bool = True) -> bool:
        """Remove a file (a symlink itself, never its target; never through a linked folder,
        :meth:`check_no_links`). Returns whether it existed."""
        return self.backend.delete(rel, missing_ok)

    def delete_tree(self, rel_dir: str) -> int:
        """Remove a folder and everything below it (never through a linked folder, nor a link in
        it followed); returns the number of files removed."""
        return self.backend.delete_tree(rel_dir)

    def rename(self, src_rel: str, dst_rel: str) -> None:
        """Rename a file atomically, replacing ``dst_rel`` (only where :attr:`atomic_rename`)."""
        self.backend.rename(src_rel, dst_rel)

    def hard_link(self, src_rel: str, dst_rel: str) -> None:
        """Give a file a second name (only where :attr:`hard_links`); the name must not exist
        (:class:`InstantExistsError`)."""
        self.backend.hard_link(src_rel, dst_rel)

    def copy(self, src_rel: str, dst_rel: str) -> None:
        """Copy a file to a new name inside the table; the new name must not exist. Local files:
        the bytes, or a hard link (:attr:`copies_hard_link`); object stores: the file read and
        created conditionally, never a server-side copy (which would overwrite)."""
        self.backend.copy(src_rel, dst_rel)

    def stage_copy(self, src_rel: str | None, staged_rel: str, *, durable: bool = True, checked: bool = False) -> None:
        """Where :attr:`hard_links` (a staged file is promoted by a link): write a copy of
        ``src_rel`` (``None``: an empty file) under ``staged_rel``, a name of
        :func:`~.names.staged_name` that must not exist (:class:`InstantExistsError`), for
        :meth:`promote_staged` to give it its final name. Unless ``durable``, :meth:`sync_staged`
        before the renames. ``checked``: the caller made sure (:meth:`check_no_links`) that no
        folder on the way is a link and that both paths are safe."""
        self.backend.stage_copy(src_rel, staged_rel, durable=durable, checked=checked)

    def sync_staged(self, staged_rels) -> None:
        """Make files written by ``stage_copy(..., durable=False)`` durable."""
        self.backend.sync_staged(staged_rels)

    def promote_staged(self, staged_rel: str, final_rel: str, *, checked: bool = False) -> None:
        """Give a staged file (:meth:`stage_copy`) its final name, which must not exist
        (:class:`InstantExistsError`; the staged file then stays); a reader sees either no file
        or the whole one. ``checked``: as for :meth:`stage_copy`."""
        self.backend.promote_staged(staged_rel, final_rel, checked=checked)

    def symlink(self, target_rel: str, link_rel: str) -> None:
        """Create ``link_rel`` as a *relative* symlink to ``target_rel`` (both table-relative)."""
        self.backend.symlink(target_rel, link_rel)
