"""``hudi-etc repair-instant``: a completed commit file of 0 bytes, made whole.

A writer killed while it wrote its completed file (Java 1.0.2 was seen doing it) leaves
``<T>.deltacommit`` (layout 2: ``<T>_<C>.deltacommit``) empty. Measured with real Java (0.14, 0.15,
1.0, 1.1; tests/java/test_java_robust_reads.py): Java reads T as committed with empty commit
metadata — its records are in snapshot reads, not in incremental ones (no write stats) — and writes
on; this package reads it the same way. hudi-rs refuses the whole table (it cannot parse the
file). The repair writes the file as what every reader already takes it for: commit metadata with
no write stats, naming the table's schema (readers take the schema from the latest commit), as
JSON (layout 1) or Avro (layout 2). Java's reads do not change; hudi-rs reads the table again.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any, Mapping

from ..hudi.concurrency import transaction as commit_path
from ..hudi.errors import InvalidInputError, InvalidTimelineError
from ..hudi.storage import Storage
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline import layout
from ..hudi.timeline.active import WRITE_ACTIONS, Action, State
from ..hudi.timeline.commits import CommitMetadata

#: the completed actions whose file is commit metadata (a completed compaction is a commit)
_COMMIT_ACTIONS = WRITE_ACTIONS | {Action.COMPACTION, Action.LOG_COMPACTION}


def empty_commit_detail(instant: str) -> str:
    return (f"the completed file of {instant} is 0 bytes (its writer was killed while writing it): Java reads "
            f"{instant} as committed with no commit metadata (its records in snapshot reads, none in incremental "
            f"ones), and so does this package; hudi-rs cannot read the table. Repair: `hudi-etc repair-instant "
            f"--instant {instant}` (writes it as the same empty commit, naming the table's schema; Java's reads do "
            f"not change)")


def repair_instant(path: str | Storage, *, instant: str, storage_options: Mapping[str, Any] | None = None) -> dict:
    """Rewrite the 0-byte completed commit file of ``instant`` (see the module docstring);
    ``nothing to repair`` when it is not empty. Refused (typed, nothing written) for an instant
    that is not a completed commit."""
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    table = HudiTable.load_writable(storage)
    insts = [i for i in table.timeline.get(instant) if i.is_completed and i.action in _COMMIT_ACTIONS]
    if not insts:
        raise InvalidInputError(f"no completed commit {instant} on the active timeline: nothing to repair")
    inst = insts[0]
    rel = inst.path(State.COMPLETED)
    if table.instant_bytes(inst, State.COMPLETED):
        return {"instant": instant, "status": "nothing to repair", "file": rel}
    try:
        schema = json.dumps(table.avro_schema, separators=(",", ":"))
    except InvalidTimelineError:
        schema = None  # no schema anywhere: the commit names none either
    compacted = inst.action in (Action.COMPACTION, Action.LOG_COMPACTION)
    meta = CommitMetadata(partitionToWriteStats={}, compacted=compacted,
                          extraMetadata={"schema": schema} if schema else {},
                          operationType="COMPACT" if compacted else "UNKNOWN")
    folder, name = posixpath.split(rel)
    # Hadoop's checksum file of the empty file (Java on a local file system) would not match the
    # new bytes and make Java's read fail: gone first, so no reader sees new bytes under an old one
    with commit_path.transaction(storage, what=f"repair-instant {instant}"):  # the writers' lock, if they share one
        storage.delete(f"{folder}/.{name}.crc")
        storage.write_atomic(rel, layout.commit_data(table.timeline, meta))
    return {"instant": instant, "status": "repaired", "file": rel, "schema": bool(schema)}
