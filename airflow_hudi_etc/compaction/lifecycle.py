"""The lifecycle of a plan after scheduling, besides execution: **rollback** removes what an
execution wrote (base files of C, split log, links or copies of plans of earlier releases) and
the inflight file, so the plan is requested again (a crashed writer's pending deltacommit is
rolled back too); **unschedule** removes a requested plan and its links. Both are idempotent."""

from __future__ import annotations

import posixpath
import re
from typing import Any, Mapping

from . import guard, intents
from ..hudi.concurrency import jvm_metadata, transaction as commit_path
from ..hudi.protocol import heartbeat
from ..hudi.timeline import layout
from ..hudi.protocol import markers
from ..hudi.crash import crashpoint
from ..hudi.errors import InvalidInputError, InvalidTimelineError
from ..hudi.protocol.plan import CompactionPlan
from ..hudi.protocol.rollback import rollback_with_instant
from ..hudi.storage import Storage
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline.active import AUX_DIR, Action, Instant, State, Timeline
from .plans import (
    K_LINK_MODE,
    create_links,
    delete_all,
    is_exact_split,
    is_placeholder,
    links_precreated,
    plan_link_files,
    plan_outputs,
    read_plan,
    refuse_foreign_data,
    remove_orphan_links,
)


def rollback(path: str | Storage, *, instant: str, storage_options: Mapping[str, Any] | None = None) -> dict:
    """Undo a failed/inflight execution: its base files, links and copies; back to requested."""
    storage, table, insts = _compaction_instants(path, instant, storage_options)
    intents.finish_stale_intents(storage, table.config)
    if not insts:
        writes = [i for i in table.timeline.get(instant) if i.action is Action.DELTA_COMMIT and i.is_pending]
        if writes:  # a crashed writer's deltacommit: what the next write would roll back
            from ..hudi.write.writer import rollback_write

            removed = rollback_write(storage, instant)
            return {"instant": instant, "status": "rolled back", "action": "deltacommit", "files_removed": removed}
        return {"instant": instant, "status": "nothing to roll back"}
    if insts[0].is_completed:
        raise InvalidTimelineError(f"compaction {instant} is completed; it cannot be rolled back here")
    plan = read_plan(table, instant)
    with heartbeat.hold(storage, instant, what="compaction execution"):  # not under a running execution
        refuse_foreign_data(storage, _output_pairs(plan), instant, "rollback")
        return _rollback_execution(storage, instant, plan, requested=insts[0].state is State.REQUESTED)


def _output_pairs(plan: CompactionPlan) -> list[tuple[str, str | None]]:
    """(path, target) of the log files a rollback of ``plan``'s execution deletes (see plan_outputs)."""
    targets = dict(plan_link_files(plan))
    return [(rel, targets.get(rel)) for op in plan.operations for rel in plan_outputs(plan, op)]


def _rollback_execution(storage: Storage, instant: str, plan: CompactionPlan, *, requested: bool = False) -> dict:
    files: dict[str, list[str]] = {}
    listings: dict[str, list] = {}
    for op in plan.operations:
        if op.partition not in listings:
            listings[op.partition] = storage.list(op.partition)
        names = {f.name: f.path for f in listings[op.partition]}
        out = files.setdefault(op.partition, [])
        out += [rel for name, rel in names.items()
                if name.startswith(op.file_id + "_") and name.endswith(f"_{instant}.parquet")]
        out += [rel for rel in plan_outputs(plan, op)  # not filtered by the listing: a dangling link must go too
                if not (links_precreated(plan) and is_placeholder(storage, rel))]
    if requested:
        # never executed, or already rolled back (a retry): execute writes its inflight file
        # before any data file and a rollback removes it last, so there is nothing to undo and
        # no rollback instant to record (the plan's paths were checked above all the same)
        return {"instant": instant, "status": "requested", "files_removed": 0, "rollback_instant": None}
    for rel in markers.files_to_roll_back(storage, instant, owned_only=False):  # what its markers name
        out = files.setdefault(posixpath.dirname(rel), [])
        if rel not in out:
            out.append(rel)
    # recorded as a rollback instant, as Hudi does (hudi/protocol/rollback.py); then back to requested
    rb, removed = rollback_with_instant(storage, instant=instant, action=Action.COMPACTION, files=files,
                                       after_delete=lambda: crashpoint("rollback.after-file-removed"))
    if links_precreated(plan):  # the requested plan's split placeholder (and any link lost) again
        create_links(storage, plan, plan.extra.get(K_LINK_MODE, "copy"), missing_only=True)
    crashpoint("rollback.before-inflight-removed")
    markers.remove_markers(storage, instant)
    heartbeat.remove_stale_temp_files(storage, sorted(files), own=instant)
    storage.delete(layout.instant(Timeline.load(storage), instant, Action.COMPACTION, State.INFLIGHT).path())
    return {"instant": instant, "status": "requested", "files_removed": removed, "rollback_instant": rb}


def unschedule(path: str | Storage, *, instant: str, storage_options: Mapping[str, Any] | None = None) -> dict:
    """Withdraw pending plan ``instant`` and its files in slice C, under the table's lock (the
    checks that no writer put data into slice C are made there, where no writer can commit)."""
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    _check_instant(instant)
    with commit_path.transaction(storage, what=f"unschedule {instant}"):
        return _unschedule(storage, instant)


def _unschedule(storage: Storage, instant: str) -> dict:
    storage, table, insts = _compaction_instants(storage, instant, None)
    profile = table.profile
    if not insts:
        # a crashed unschedule (or schedule) may have left the plan's .aux copy and its links in
        # slice C (on no timeline, so invisible): finish the job
        if profile.plan_aux_copy:
            storage.delete(f"{AUX_DIR}/{Instant(instant, Action.COMPACTION, State.REQUESTED).file_name()}")
        orphans = remove_orphan_links(table, only_instant=instant)
        return {"instant": instant, "status": "not scheduled", "links_removed": len(orphans)}
    if insts[0].state is not State.REQUESTED:
        raise InvalidTimelineError(f"compaction {instant} is {insts[0].state.name.lower()}: roll it back first")
    plan = read_plan(table, instant)
    files = tuple(plan_link_files(plan)) if links_precreated(plan) else ()
    ours = {link for link, _ in files}
    # v6: writers name their logs with the pending plan's instant, slice C; unscheduling would hide
    # them. v8/v9: writers name logs with their own instants, which fall into the old slice again
    others = [] if profile.logs_named_by_writing_instant else [
        lg.path for lg in table.file_system_view().all_log_files()
        if lg.base_instant == instant and lg.path not in ours]
    if others:
        raise InvalidTimelineError(
            f"slice {instant} holds {len(others)} log file(s) other writers wrote while the plan was pending "
            f"({', '.join(others[:5])}{'...' if len(others) > 5 else ''}): unscheduling would hide them from every "
            f"reader. Execute the plan instead")
    # a copy that no longer holds exactly its original's bytes (or a placeholder that is not empty)
    # has blocks a Java writer put there (java-coexistence-2 findings 2, 4): deleting it would
    # lose them
    refuse_foreign_data(storage, files, instant, "unschedule")
    # v6: between withdrawing the plan and deleting its copies, slice C holds files without a plan
    # (schedule's residual window, docs/concepts.md): the guard savepoint keeps Java's archiver before C and
    # its cleaner off slice B until the copies are gone (:mod:`.guard`)
    guard_s = guard.guard_time(table.timeline, instant) if files and guard.needed(table.timeline) else None
    with heartbeat.hold(storage, instant, what="unschedule"):  # not while the plan is being executed
        intents.record(storage, intents.Intent(instant, "unschedule", files, (), guard_s))
        if guard_s is not None:  # (made whole or not at all: make removes what it made before raising)
            try:
                guard.make(storage, guard_s, instant, guard.slice_b_files(plan, is_exact_split(plan)), [],
                           what="unscheduled")
            except BaseException:
                intents.drop(storage, instant)
                raise
        req = layout.instant(table.timeline, instant, Action.COMPACTION, State.REQUESTED)
        storage.delete(req.path())
        crashpoint("unschedule.after-requested-removed")
        if profile.plan_aux_copy:
            storage.delete(f"{AUX_DIR}/{req.file_name()}")
        # slice C is on no timeline now: its files go (a crash here leaves them to the intent,
        # finished by the next command of ours); one a Java writer changed meanwhile stays, and
        # so does the intent, which validate reports
        # (a metadata table learns of the removal through a clean instant: it listed the copies)
        removed, kept = jvm_metadata.delete_files(
            storage, commit_path.table_write_config(storage), [f for f, _ in files],
            lambda: intents.remove_copies(storage, files), zone=table.timeline_zone, what=f"unschedule {instant}")
        if not kept:  # (a kept file holds Java's data: the guard stays with the intent, validate reports both)
            if guard_s is not None:
                guard.remove(storage, guard_s, instant)
            intents.drop(storage, instant)
    out = {"instant": instant, "status": "unscheduled", "links_removed": len(removed)}
    if kept:
        out["kept"] = kept
    return out


def _check_instant(instant: str) -> None:
    if not isinstance(instant, str) or not re.fullmatch(r"\d{14}(?:\d{3})?", instant):
        raise InvalidInputError(f"instant {instant!r}: give a 14- or 17-digit instant time")


def _compaction_instants(path: str | Storage, instant: str, storage_options: Mapping[str, Any] | None
                         ) -> tuple[Storage, HudiTable, list[Instant]]:
    """The table and the timeline entries of compaction ``instant`` (checked to be an instant time)."""
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    _check_instant(instant)
    table = HudiTable.load_writable(storage)
    return storage, table, [i for i in table.timeline.get(instant) if i.action is Action.COMPACTION]
