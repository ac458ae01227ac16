"""File-name rules of both table-version families, for writers (spec §3.1).

Base files are ``{fileId}_{writeToken}_{instant}.parquet`` in every version
(:func:`.fsview.base_file_name`). Log files share one pattern
(:func:`.logformat.format_log_file_name`) but not its meaning:

* v6: the instant is the **base instant** of the slice the log extends, and the version grows
  across commits (:func:`log_file_name_v6`);
* v8/v9: the instant is the **requested time of the writing instant**, and versions restart at 1
  for every writing instant, growing only to roll over within it (:func:`log_file_name_v8`,
  :func:`next_log_version_v8`).

Which rule a table follows is its profile's ``logs_named_by_writing_instant``.
"""

from __future__ import annotations

from typing import Iterable

from ..logformat import format_log_file_name, parse_log_file_name

#: first log version of a writing instant (Hudi's LOGFILE_BASE_VERSION)
LOG_BASE_VERSION = 1


def log_file_name_v6(file_id: str, base_instant: str, version: int, write_token: str) -> str:
    """``.{fileId}_{baseInstant}.log.{version}_{token}`` (v6: named after the slice's base instant)."""
    return format_log_file_name(file_id, base_instant, version, write_token)


def log_file_name_v8(file_id: str, writing_instant: str, write_token: str, version: int = LOG_BASE_VERSION) -> str:
    """``.{fileId}_{T}.log.{version}_{token}`` of table versions 8/9: ``T`` is the requested time of
    the deltacommit (or log compaction, or a compaction re-exposing logs) that writes the file."""
    return format_log_file_name(file_id, writing_instant, version, write_token)


def next_log_version_v8(existing_names: Iterable[str], file_id: str, writing_instant: str) -> int:
    """The version of the next log of ``file_id`` written by ``writing_instant``: 1, or one more than
    the highest version that instant already wrote to that file group (a roll-over); logs of other
    instants do not count (there is no cross-commit append in 1.x)."""
    top = 0
    for n in existing_names:
        p = parse_log_file_name(n)
        if p is not None and p.file_id == file_id and p.base_instant == writing_instant:
            top = max(top, p.version)
    return top + 1 if top else LOG_BASE_VERSION
