"""What every backend has: its base location, its capabilities, and the defaults of the
operations only some stores can do (links, renames, temp files: nothing there, or refused).

A **capability** is what the rest of the code asks of a store instead of which store it is:
the code that needs a real OS path asks :attr:`Backend.local_paths`, the code that would rename
asks :attr:`Backend.atomic_rename`, and so on. Each backend sets them as class attributes (or
properties, where they depend on the scheme or the environment).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..errors import UnsupportedFeatureError
from .names import safe_relpath

#: the schemes Java Hudi appends to an existing log on (``StorageSchemes.isAppendSupported``, 0.14.1):
#: a Java writer (and a Java rollback's command block) goes *into* a slice's latest log there
JAVA_APPEND_SCHEMES = ("hdfs", "viewfs", "maprfs", "afs", "igfs", "ofs", "jfs", "cfs", "dfs")


class Backend:
    """One kind of store under a table's base location (``base_uri``: an absolute OS path for
    local files, ``scheme://...`` elsewhere). Paths given to its methods are table-relative;
    :meth:`full` is the one place that joins them to the base and refuses those that leave it."""

    # ------------------------------------------------------------------ capabilities
    #: a write-once create is atomic against other writers (:meth:`create_if_absent`: a second
    #: writer gets InstantExistsError, never an overwrite); elsewhere the single-writer rule applies
    atomic_create: bool = False
    #: symbolic links exist (``Storage.symlink``, :meth:`readlink`, links a change must not follow)
    supports_symlinks: bool = False
    #: a second name for the same bytes, made atomically and refused when the name exists
    #: (``os.link``): a staged copy gets its final name so, a heartbeat taken aside by mistake is
    #: put back so, and ``HUDI_ETC_LOCAL_COPY=hardlink`` copies are made so
    hard_links: bool = False
    #: a rename is one atomic metadata operation (of two processes renaming the same file, one gets
    #: it), not a copy and a delete
    atomic_rename: bool = False
    #: Java Hudi's writers append their blocks into an existing log file on this storage
    #: (``StorageSchemes.isAppendSupported``): a file of ours in a slice may grow Java's records
    in_place_append: bool = False
    #: :meth:`full` is an OS path: pyarrow opens it by path (memory-mapped, its own threads), an
    #: ``os.stat`` or a Parquet footer costs no request, a JVM on this machine reads it as is
    local_paths: bool = False
    #: a listing carries each file's size at no extra cost (object stores); else a size is a stat
    listing_has_sizes: bool = True
    #: writes in progress are temp files in the table (temp file, then a link or rename), which a
    #: crashed writer leaves behind; elsewhere a write is one PUT and no temp file is ever made
    writes_temp_files: bool = False
    #: a file can be replaced on the condition that it is still the version read before
    #: (:meth:`read_versioned`, :meth:`put_if_version`): S3's ``If-Match`` on the ETag. What Hudi
    #: 1.1+'s ``StorageBasedLockProvider`` needs; Java has it only on object stores too
    conditional_replace: bool = False
    #: threads that make a plan's copies in parallel: a local copy is a read, a write and an fsync;
    #: an object-store copy is two requests, each mostly waiting
    copy_workers: int = 32

    def __init__(self, base_uri: str, options: Mapping[str, Any], scheme: str) -> None:
        self.base_uri, self.options, self.scheme = base_uri, options, scheme

    @property
    def copies_hard_link(self) -> bool:
        """``copy`` makes hard links (local files with ``HUDI_ETC_LOCAL_COPY=hardlink``)."""
        return False

    # ------------------------------------------------------------------ paths
    def full(self, rel: str) -> str:
        rel = safe_relpath(rel)
        return self.base_uri if not rel else f"{self.base_uri}/{rel}"

    def _rel_of(self, target: str) -> str:
        return target[len(self.base_uri) + 1 :] if target.startswith(self.base_uri + "/") else target

    def uri(self, rel: str) -> str:
        """The location of a table file for tools outside fsspec (hudi-rs, Spark, a JVM)."""
        return self.full(rel)

    def check_no_links(self, rel: str, *, itself: bool = False) -> str:
        """A store without links: only the normalised path."""
        return safe_relpath(rel)

    def links_below(self, rel_dir: str, *, recursive: bool = True) -> list[str]:
        safe_relpath(rel_dir)
        return []

    def readlink(self, rel: str) -> str | None:
        return None

    # ------------------------------------------------------------------ what only some stores do
    def read_versioned(self, rel: str) -> tuple[bytes, str] | None:
        """A small file's bytes and the version that a conditional replace names (None: absent)."""
        self._refuse("conditional replace")

    def put_if_version(self, rel: str, data: bytes, version: str | None) -> str | None:
        """Write ``rel`` whole if it is still at ``version`` (None: if it does not exist); the new
        version, or None when the condition failed (another writer got there first)."""
        self._refuse("conditional replace")

    def _refuse(self, what: str, hint: str = ""):
        raise UnsupportedFeatureError(f"{self.scheme}:// has no {what}{hint}")

    def temp_files(self, rel_dir: str = "") -> list[tuple[str, str | None, float]]:
        safe_relpath(rel_dir)
        return []  # no temp file is ever made in the table (see writes_temp_files)

    def remove_empty_dir(self, rel_dir: str) -> bool:
        return False  # no folders apart from the files in them

    def remove_empty_dirs(self, rel_dir: str) -> None:
        return None

    def symlink(self, target_rel: str, link_rel: str) -> None:
        raise UnsupportedFeatureError(f"{self.scheme} storage has no symlinks: use link mode copy (or auto)")

    def stage_copy(self, src_rel: str | None, staged_rel: str, *, durable: bool = True, checked: bool = False) -> None:
        self._refuse("rename", ": copies are made under their final names")

    def sync_staged(self, staged_rels) -> None:
        self._refuse("rename", ": copies are made under their final names")

    def promote_staged(self, staged_rel: str, final_rel: str, *, checked: bool = False) -> None:
        self._refuse("rename", ": copies are made under their final names")

    def rename(self, src_rel: str, dst_rel: str) -> None:
        self._refuse("atomic rename")

    def hard_link(self, src_rel: str, dst_rel: str) -> None:
        self._refuse("hard links")
