"""Temp files a killed ``execute`` leaves, once someone else finished (or dropped) its plan.

``execute`` of plan C writes its base files (and commit) through temp files named with their
owner, ``.hudi-etc-tmp-i<C>-<hex>.tmp``; killed mid-file it leaves one. Our next ``execute`` of C
removes it (:func:`~airflow_hudi_etc.hudi.protocol.heartbeat.remove_stale_temp_files` with ``own=C``), but
when Java executes C instead (and archives it later), no execute of ours runs for C again and
the file stayed for good (``validate``: ``temp-file``; found by the real-Java interleavings).

So ``execute`` records, before its first temp file, ``.hoodie/.aux/hudi-etc/executions/<C>.json``
naming the folders it writes in, and drops it at its end (completed or failed; a process that
was killed keeps it). :func:`finish_dead_executions` (run by
every command of ours with the intents' cleanup, one listing of that folder) finishes the record of
an execution whose heartbeat expired once C is no longer pending (completed by anyone, archived or
unscheduled: no execution of C can use the file any more): it deletes C's temp files in those
folders, then the record. A record of a plan still pending is left to the next execute of C.
"""

from __future__ import annotations

import json

from ..hudi.protocol import heartbeat
from ..hudi.errors import InstantExistsError
from ..hudi.storage import Storage
from ..hudi.timeline.active import AUX_DIR, Action, Timeline

EXECUTION_DIR = f"{AUX_DIR}/hudi-etc/executions"


def _path(instant: str) -> str:
    return f"{EXECUTION_DIR}/{instant}.json"


def record_execution(storage: Storage, instant: str, folders) -> None:
    """Before execute's first temp file: where C's temp files may be (replaced by a re-run).
    Only where the storage writes temp files (elsewhere no temp file is ever made in the table)."""
    if not storage.writes_temp_files:
        return
    data = json.dumps({"instant": instant, "folders": sorted(set(folders))}, separators=(",", ":")).encode()
    try:
        storage.create_if_absent(_path(instant), data)
    except InstantExistsError:
        storage.write_atomic(_path(instant), data)


def drop_execution(storage: Storage, instant: str) -> None:
    storage.delete(_path(instant))


def finish_dead_executions(storage: Storage, config=None) -> list[str]:
    """Remove the temp files of dead executions whose plan is no longer pending (see the module
    docstring). Returns what was removed. One listing when there is nothing to do."""
    names = [n for n in storage.list_names(EXECUTION_DIR) if n.endswith(".json")] if storage.writes_temp_files else []
    dead = [n[: -len(".json")] for n in names if not heartbeat.is_alive(storage, n[: -len(".json")])]
    if not dead:
        return []
    if config is None:
        from ..hudi.config.properties import load_table_config

        config = load_table_config(storage)
    tl = Timeline.load(storage, config)
    pending = {i.timestamp for i in tl.pending_compactions}
    removed: list[str] = []
    for c in dead:
        if c in pending or any(i.action is Action.COMPACTION and i.is_pending for i in tl.get(c)):
            continue
        try:
            folders = json.loads(storage.read_bytes(_path(c)))["folders"]
        except FileNotFoundError:
            continue
        except (ValueError, KeyError, TypeError):
            folders = []  # unreadable: nothing known to remove; the record goes
        removed += remove_temps_of(storage, c, folders)
        drop_execution(storage, c)
    return removed


def remove_temps_of(storage: Storage, instant: str, folders) -> list[str]:
    """Delete the temp files owned by ``instant`` in ``folders`` (its process is gone: the caller
    knows). Also used for a dead schedule's copies in flight, once its intent is finished."""
    removed = []
    for d in sorted(set(folders)):
        for rel, owner, _ in storage.temp_files(d):
            if owner == instant and storage.delete(rel):
                removed.append(rel)
    return removed
