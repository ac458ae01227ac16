"""Rollback instants: what Hudi writes on the timeline when it undoes a failed instant.

Undoing a crashed deltacommit or an inflight compaction deletes the files it wrote; Hudi records
that as a ``rollback`` action of its own (shared/hudi-format.md, timeline actions):

1. ``<R>.rollback.requested`` — Avro ``HoodieRollbackPlan``: the instant to roll back and, per
   partition, the files to delete (full paths, as Java writes them);
2. ``<R>.rollback.inflight`` — empty;
3. the deletes;
4. ``<R>.rollback`` — Avro ``HoodieRollbackMetadata``: ``commitsRollback``, the files deleted per
   partition, the time taken.

``R`` is a new instant time after every instant on the timeline. A rollback that crashed is
finished by the next one for the same instant (its pending ``R`` is reused), so a retry never
leaves a second pending rollback behind. Readers ignore rollback instants; they are the record
of what was undone, and what Hudi's own tooling (``commits show``, archival) expects to find.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping

from ..timeline import avro_models as am
from ..errors import InvalidTimelineError
from ..storage import Storage
from ..timeline.active import Action, Instant, State, Timeline, next_instant_time


def _uri(storage: Storage, rel: str) -> str:
    return storage.base_uri.rstrip("/") + "/" + rel


def pending_rollback_of(storage: Storage, timeline: Timeline, instant: str) -> str | None:
    """The pending rollback instant whose plan rolls back ``instant``, if any."""
    for inst in timeline.instants:
        if inst.action is not Action.ROLLBACK or not inst.is_pending:
            continue
        try:
            plan = am.read_avro_metadata(storage.read_bytes(inst.path(State.REQUESTED)), am.ROLLBACK_PLAN)
        except (FileNotFoundError, InvalidTimelineError):
            continue  # not ours to judge here (validate reports a broken one)
        target = (plan or {}).get("instantToRollback") or {}
        if target.get("commitTime") == instant:
            return inst.timestamp
    return None


def rollback_with_instant(
    storage: Storage,
    *,
    instant: str,
    action: Action,
    files: Mapping[str, Iterable[str]],
    after_delete: Callable[[], None] | None = None,
    before_complete: Callable[[], None] | None = None,
) -> tuple[str, int]:
    """Delete ``files`` (partition → table-relative paths) under a rollback instant for
    ``instant`` (of ``action``). Returns ``(rollback instant, files deleted)``; missing files are
    fine (an earlier, crashed attempt deleted them)."""
    t0 = time.monotonic()
    files = {part: list(rels) for part, rels in files.items()}
    from ..timeline import layout
    from .coexistence import timeline_zone
    from ..config.properties import load_table_config

    timeline = Timeline.load(storage)
    zone = timeline_zone(load_table_config(storage))
    r = pending_rollback_of(storage, timeline, instant)
    if r is None:
        r = layout.new_time(timeline, zone=zone)
        # every file goes in filesToBeDeleted, logBlocksToBeDeleted is an empty map, as Java's
        # listing-based requests have it: Java 1.0/1.1 finish a pending rollback of ours from this
        # plan and fail on a null map (NullPointerException in Map.size; the v8/v9 notes' "null" was
        # read in code, not run: tests/java/test_java_findings.py::test_java_finishes_our_crashed_rollback)
        requests = [am.rollback_request(part, None, None, [_uri(storage, rel) for rel in rels])
                    for part, rels in files.items()]
        plan = am.rollback_plan((instant, action.value), requests)
        storage.create_if_absent(layout.instant(timeline, r, Action.ROLLBACK, State.REQUESTED).path(),
                                 am.write_avro_metadata(am.ROLLBACK_PLAN, plan))
    inflight = layout.instant(timeline, r, Action.ROLLBACK, State.INFLIGHT)
    if not storage.exists(inflight.path()):
        storage.create_if_absent(inflight.path(), b"")
    deleted: dict[str, list[str]] = {}
    count = 0
    for part, rels in files.items():
        ok = deleted.setdefault(part, [])
        for rel in rels:
            if storage.delete(rel):
                ok.append(_uri(storage, rel))
                count += 1
                if after_delete is not None:
                    after_delete()
    if before_complete is not None:
        before_complete()
    meta = am.rollback_metadata(r, [instant], {p: {"successDeleteFiles": d} for p, d in deleted.items()},
                                [(instant, action.value)], int((time.monotonic() - t0) * 1000))
    from ..concurrency import transaction as commit_path

    commit_path.complete(storage, timeline, r, Action.ROLLBACK, am.write_avro_metadata(am.ROLLBACK_METADATA, meta),
                         what=f"rollback {r} of {instant}", zone=zone)
    return r, count
