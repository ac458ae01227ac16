"""Storage access for Hudi tables: one small facade, one backend per kind of store.

All table I/O goes through :class:`Storage`, so the table code never touches ``os`` or a
particular filesystem. Paths given to its methods are *relative to the table base path*
(``.hoodie/hoodie.properties``, ``city=x/.f1_001.log.1_0-1-0``); the one place that turns a
relative path into a path of the store is :meth:`Storage.full`. That is also where paths that
try to leave the table (``..``, absolute paths, other schemes) are refused.

The URL's scheme picks the backend (:data:`SCHEME_TO_BACKEND`): local files (:mod:`.local`),
S3 (:mod:`.s3`), other object stores and any other fsspec filesystem (:mod:`.fsspec_store`).
The rest of the code never asks which one it has: it asks a **capability**
(:class:`~.base.Backend`: atomic create, symlinks, hard links, atomic rename, Java's in-place
append, local OS paths, sizes in listings, temp files, copy workers).

Writes come in three strengths:

* :meth:`Storage.create_if_absent` — write-once: readers never see a partial file and a second
  writer gets :class:`InstantExistsError`. Used for timeline files (a completed instant must
  never be overwritten) and for data files (a name is never reused). Atomic between writers
  where :attr:`Storage.atomic_create` (local files: ``os.link``; S3: conditional PUT);
  elsewhere the single-writer rule applies.
* :meth:`Storage.write_atomic` — replace a file as a whole (temp file + rename locally, one PUT
  on object stores). Used only for ``hoodie.properties`` and partition metadata.
* :meth:`Storage.copy` / :meth:`Storage.symlink` — re-exposing log files in a new file slice.
"""

from __future__ import annotations

from .base import JAVA_APPEND_SCHEMES, Backend
from .facade import DEFAULT_BACKEND, SCHEME_TO_BACKEND, Storage, backend_for
from .fsspec_store import FsspecStore, ObjectStore
from .local import LOCAL_COPY_ENV, LocalFiles
from .names import (
    _TMP_PREFIX,
    _TMP_SUFFIX,
    FileInfo,
    redact_uri,
    safe_filename,
    safe_relpath,
    staged_name,
    temp_file_owner,
    temp_owner,
)
from .s3 import S3

__all__ = [
    "Backend", "DEFAULT_BACKEND", "FileInfo", "FsspecStore", "JAVA_APPEND_SCHEMES", "LOCAL_COPY_ENV", "LocalFiles",
    "ObjectStore", "S3", "SCHEME_TO_BACKEND", "Storage", "_TMP_PREFIX", "_TMP_SUFFIX", "backend_for", "redact_uri",
    "safe_filename", "safe_relpath", "staged_name", "temp_file_owner", "temp_owner",
]
