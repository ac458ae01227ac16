"""Schedule an event-time (partial) compaction.

The EVENT_TIME trigger and "is there a plan for this threshold already?" are decided in one
place, :func:`plan_decision` (also used by the Airflow sensor and trigger). Then per latest file
slice a *prefix* of its logs to compact, and for the logs that remain link operations
re-exposing them in the new slice C under versions 1..n; the links are made, then the plan
``<C>.compaction.requested`` (and its ``.aux`` copy) is published after a last re-check for
racing schedulers and writes. Every refusal is a typed :class:`~.results.ScheduleResult`
outcome or error; nothing is written before the checks pass, and a retry is answered
``already_scheduled``.
"""

from __future__ import annotations

import contextlib

import functools
import gc
import json
import os
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import pyarrow.compute as pc

from ..hudi.concurrency import jvm_metadata, transaction as commit_path
from ..hudi.concurrency.conflicts import find_conflict
from ..hudi import crash
from ..hudi.protocol import heartbeat
from ..hudi.timeline import layout
from ..hudi import logformat as lf
from ..hudi.crash import crashpoint
from ..hudi.errors import InstantExistsError, InvalidTimelineError, MetadataTablePresentError, UnsupportedFeatureError
from ..hudi.format import JSON_COMMITS
from ..hudi.protocol.plan import CompactionPlan, LINK_TOKEN, LinkOp, Operation, SPLIT_LOG_VERSION, operation
from ..hudi.config.properties import load_table_config
from ..hudi.config.schema import event_time_millis
from ..hudi.index.log_index import LogIndex
from ..hudi.index.stats import LogScanner, iso_ms, log_event_ranges, stats_describe
from ..hudi.storage import Storage
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline.active import AUX_DIR, Action, Instant, State, Timeline, iter_write_stats
from . import guard, intents
from .flips import flip_safe_selection, may_flip
from ..hudi.etc_keys import PLANNING_LISTING as K_LISTING, PLANNING_SECONDS as K_PLANNING
from .plans import (
    K_COMPACTION_TIME,
    K_ET_FIELD,
    K_EXACT_SPLIT,
    K_LATENCY_MS,
    K_LINK_MODE,
    K_PRECREATED,
    K_SOURCE,
    K_STRATEGY,
    K_THRESHOLD,
    K_THRESHOLD_MS,
    M_BASE_FILTERABLE,
    base_records_filterable,
    create_links,
    delete_all,
    is_exact_split,
    java_appends_on,
    plan_link_files,
    read_plan,
    remove_orphan_links,
    split_log_name,
    staged_files,
    stages_copies,
)
from .results import Outcome, PlanDecision, ScheduleResult
from .schedule_request import check_request
from .strategy import CompactAllStrategy, EventTimeStrategy
from .readiness import check_readiness, last_threshold


def schedule(
    path: str | Storage,
    *,
    data_latency: str,
    compaction_time: str | None = None,
    link_mode: str = "auto",
    strategy: str = "event-time",
    exact_split: bool = False,
    event_time_field: str | None = None,
    engine=None,
    storage_options: Mapping[str, Any] | None = None,
) -> ScheduleResult:
    """Plan an event-time compaction (see the module docstring). ``event_time_field`` names
    the event-time column for tables whose ``hoodie.properties`` does not (e.g. written by
    Java): logs without event-time write stats are then scanned for it."""
    t_start = time.monotonic()
    rq = check_request(path, data_latency=data_latency, compaction_time=compaction_time, link_mode=link_mode,
                  strategy=strategy, exact_split=exact_split, event_time_field=event_time_field,
                  storage_options=storage_options)
    table, threshold_ms = rq.table, rq.threshold_ms

    def no(reason: str, outcome: Outcome = Outcome.CONFLICT, pending: str | None = None) -> ScheduleResult:
        return ScheduleResult(None, iso_ms(threshold_ms), threshold_ms, reason, 0, outcome, pending)

    # Wait for a pending write to end, except on a multi-writer (OCC) table of version 6: there, as
    # Java's scheduler under OCC, a write pending now (instant < C) that touches a file group of
    # the plan is refused at its commit by Hudi's conflict rule (ours by find_conflict, Java
    # 0.14/0.15's by its strategy: a pending compaction requested after it), and a failed write
    # (LAZY keeps it pending until its heartbeat expires) does not hold the plan back; one that
    # completes before the plan is visible makes the last re-check withdraw it. Versions
    # 8/9 keep waiting: Java 1.1+ no longer refuses such a write, whose log then completes into
    # slice C, named before our copies (seen with the loop writer: older values read back)
    d = plan_decision(table, threshold_ms=threshold_ms, settings=rq.settings(),
                      check_pending_writes=not (commit_path.table_write_config(rq.storage).multi_writer
                                                and table.profile.occ_refuses_writes_under_new_plan))
    if d.outcome is Outcome.ALREADY_SCHEDULED:  # a retry of the request that made the pending plan
        return ScheduleResult(d.instant, iso_ms(threshold_ms), threshold_ms, d.reason, d.operations, d.outcome)
    if d.outcome is not Outcome.READY and not (d.outcome is Outcome.COVERED and strategy != "event-time"):
        return no(d.reason, d.outcome, d.instant)
    strat = EventTimeStrategy(threshold_ms) if strategy == "event-time" else CompactAllStrategy()
    with _gc_paused():  # the view is most of planning's objects: the collector is paused from its listing on
        # one listing serves both (orphans sit in slices on no timeline: never among the latest)
        # sizes only where the listing carries them (_plan_operations stats the logs it compacts)
        # read only once a plan is to be made: a retry that waits for a write lists nothing
        table.listed = _metadata_listing(rq.storage)
        view = table.file_system_view(sizes=False)
        if remove_orphan_links(table, view=view):  # (an orphan slice C the archiver passed looked latest)
            view = table.file_system_view(sizes=False)
        instant = crash.hook("schedule.instant-time") or layout.new_time(table.timeline, zone=table.timeline_zone)
        schemas: dict[str, str | None] = {}  # the writer schemas of the commits planning decoded
        ops, sources = _plan_operations(table, strat, instant, exact_split=exact_split, threshold_ms=threshold_ms,
                                        et_field=rq.et_field, view=view, engine=engine, schemas=schemas)
        if ops and any(op.links for op in ops):
            _refuse_mixed_ordering_types(table, schemas)
        del view  # freed before the collector resumes: its first pass then walks the plan alone
    if not ops:
        return no("no log file qualifies", Outcome.NOTHING_QUALIFIES)
    if java_appends_on(rq.storage) and (exact_split or any(op.links for op in ops)):
        raise UnsupportedFeatureError(
            f"{rq.storage.scheme}:// is storage Java Hudi appends to existing logs on: a Java writer would append "
            f"its committed blocks into this plan's {'split placeholder' if exact_split else 'copies of the remaining logs'} "
            f"in slice C (StorageSchemes.isAppendSupported), and unschedule, rollback or execute of the plan could not "
            f"remove or replace those files without losing Java's records. Here schedule only plans that re-expose "
            f"nothing (a data latency under which every log qualifies, no --exact-split), or let Java schedule "
            f"and execute the compactions; nothing was written")
    extra = {
        K_THRESHOLD_MS: threshold_ms,
        K_THRESHOLD: iso_ms(threshold_ms),
        K_LATENCY_MS: int(rq.latency.total_seconds() * 1000),
        K_COMPACTION_TIME: rq.compaction_time.isoformat(),
        K_STRATEGY: strat.name,
        K_LINK_MODE: rq.mode,
        K_SOURCE: "+".join(sorted(sources)),
        K_EXACT_SPLIT: "true" if exact_split else "false",
        K_ET_FIELD: rq.et_field or "",
        K_PRECREATED: "true",
    }
    extra[K_PLANNING] = f"{time.monotonic() - t_start:.3f}"
    extra[K_LISTING] = "storage" if table.listed is None else "metadata-table"
    plan = CompactionPlan(instant, tuple(ops), extra)
    with _gc_paused():  # publishing makes a few objects per re-exposed log too (names, staged names, pool chunks)
        conflict = _publish(rq.storage, table.timeline, plan, rq.mode,
                            _MdtFiles(table.timeline_zone, lambda: json.dumps(table.avro_schema)))
    if conflict is not None:
        return no(conflict)
    return ScheduleResult(instant, iso_ms(threshold_ms), threshold_ms, "scheduled", len(ops))


def _metadata_listing(storage: Storage) -> dict[str, dict[str, int]] | None:
    """Planning's file listing from the table's metadata table, where this run can read it
    (Spark-hosted, its ``files`` partition built): one read of the metadata table instead of a
    listing of every partition folder (on an object store a request per 1,000 files and per
    folder level; bench/RESULTS.md, M2). It holds the files of completed instants only, which is
    all a plan is made of: a write pending at planning is handled through the timeline, and the
    leftovers a killed command of ours left (on no timeline, so in no committed slice) are not
    seen here (the intents of killed schedules name their files; validate, listing storage,
    reports any other). ``HUDI_ETC_FILE_LISTING=storage``: list storage anyway. None: list storage."""
    if os.environ.get("HUDI_ETC_FILE_LISTING", "").strip().lower() == "storage":
        return None
    if not jvm_metadata.listing_readable(storage):
        return None
    for _ in range(2):
        try:
            return jvm_metadata.listing(storage)
        except MetadataTablePresentError:
            # Hudi's reader reads the data timeline's instants (rollbacks among them) as it goes:
            # one archived by a Java writer meanwhile fails it (seen with 0.15 in the loop, seed
            # 105: "Could not read commit details from ...rollback"); a fresh reader sees the new
            # timeline. Then storage is listed, as before (the plan says so: planning.listing)
            continue
    return None


def plan_decision(table: HudiTable, *, threshold_ms: int, settings: Mapping[str, str] | None = None,
                  check_pending_writes: bool = False) -> PlanDecision:
    """The one answer to "may a plan for this threshold be made now, or is there one already?",
    for ``schedule``, the Airflow sensor and its trigger (``hooks.hudi.event_time_check``).

    ``already_scheduled``: a pending plan (requested or inflight) carries this threshold — and
    ``settings`` (plan extra metadata key → value: strategy, exact split, link mode, event-time
    field) when given, as a retried ``schedule`` does; ``instant`` is that plan. Otherwise the
    EVENT_TIME trigger (:func:`~.readiness.check_readiness`): ``pending`` (another compaction,
    ``instant``), ``waiting`` (a clustering, or a pending write with ``check_pending_writes``),
    ``covered`` (the threshold is not past the published one) or ``ready``."""
    ready = check_readiness(table, threshold_ms=threshold_ms, check_pending_writes=check_pending_writes)
    own = _pending_plan_for(table, threshold_ms, settings)
    if own is not None:
        return PlanDecision(Outcome.ALREADY_SCHEDULED, "already scheduled", ready, own.instant, len(own.operations))
    if ready.ready:
        return PlanDecision(Outcome.READY, ready.reason, ready)
    if ready.pending_compactions:
        return PlanDecision(Outcome.PENDING, ready.reason, ready, ready.pending_compactions[0])
    return PlanDecision(Outcome.COVERED if ready.covered else Outcome.WAITING, ready.reason, ready)


def _pending_plan_for(table: HudiTable, threshold_ms: int, settings: Mapping[str, str] | None) -> CompactionPlan | None:
    """The oldest pending plan carrying ``threshold_ms`` (and ``settings``), if any."""
    want = {K_THRESHOLD_MS: str(threshold_ms), **(settings or {})}
    for inst in table.timeline.pending_compactions:
        try:
            plan = read_plan(table, inst.timestamp)
        except (FileNotFoundError, InvalidTimelineError):  # unreadable: still pending (and blocking)
            continue  # (one naming a path outside the table raises UnsafePathError, as every command does)
        if all(str(plan.extra.get(k, "")) == v for k, v in want.items()):
            return plan
    return None


@dataclass(frozen=True)
class _MdtFiles:
    """What registering slice C's files in a metadata table needs (:func:`_register_slice_c`)."""

    zone: object
    schema: Callable[[], str]


def _register_slice_c(storage: Storage, plan: CompactionPlan, mdt: "_MdtFiles | None") -> str | None:
    """A table with a metadata table: the files made in slice C enter it before the plan is
    visible (shared/metadata-table.md §3: unknown to it, every reader misses them, and a Java
    writer names its own log of slice C so that it sorts before them). Under the lock."""
    if mdt is None or not jvm_metadata.present(storage):
        return None
    split = is_exact_split(plan)
    files = []
    for op in plan.operations:
        if split:
            files.append((op.path(split_log_name(op, plan.instant)), op.partition, op.file_id))
        files += [(op.path(lk.link), op.partition, op.file_id) for lk in op.links]
    return jvm_metadata.register_files(storage, commit_path.table_write_config(storage), files,
                                       schema=mdt.schema(), zone=mdt.zone, what=f"compaction plan {plan.instant}")


def _publish(storage: Storage, planned_on: Timeline, plan: CompactionPlan, mode: str,
             mdt: _MdtFiles | None = None) -> str | None:
    """:func:`_publish_files` under an intent naming every file it makes in slice C and C's
    heartbeat (:mod:`.intents`): should the process die before the plan is visible, the next
    command of ours or sensor poke removes those files, whatever the timeline's start by then. A
    failure in the process removes them at once (the plan not visible)."""
    instant = plan.instant
    files = tuple(plan_link_files(plan))
    staged = staged_files(instant, files) if stages_copies(storage, mode) else ()
    # v6: a savepoint of ours on S < C keeps Java's archiver before C and its cleaner off slice B
    # while files exist in slice C without a visible plan (:mod:`.guard`); chosen before anything is made
    guard_s = guard.guard_time(planned_on, instant) if files and guard.needed(planned_on) else None
    hold = contextlib.ExitStack()
    try:  # a scheduler that took the same instant time holds it: this one withdraws
        hold.enter_context(heartbeat.hold(storage, instant, what="schedule"))
    except InstantExistsError as e:
        return str(e) if str(e).startswith("conflict") else f"conflict: {e}"
    with hold:
        try:
            intents.record(storage, intents.Intent(instant, "schedule", files, staged, guard_s))
        except InstantExistsError as e:
            return f"conflict: {e}"
        made_guard: list[str] = []  # S once this process made the guard's inflight file (then it is ours)
        make_guard = None if guard_s is None else functools.partial(_make_guard, storage, guard_s, plan, made_guard)
        try:
            # under the table's lock, as Java schedules a table service: no writer of the table
            # completes an instant between the last re-check and the plan becoming visible
            with commit_path.transaction(storage, what=f"schedule {instant}"):
                out = _publish_files(storage, planned_on, plan, mode, files, staged, make_guard, mdt)
        except BaseException:
            if not any(i.action is Action.COMPACTION for i in Timeline.load(storage).get(instant)):
                intents.remove_staged(storage, staged)
                _, kept = intents.remove_copies(storage, files)
                if not kept:
                    storage.delete(f"{AUX_DIR}/{Instant(instant, Action.COMPACTION, State.REQUESTED).file_name()}")
                    if made_guard:
                        guard.remove(storage, guard_s, instant)
                    intents.drop(storage, instant)
            raise
        if made_guard:  # the plan is visible (or withdrawn with its files): the guard goes
            guard.remove(storage, guard_s, instant)
        intents.drop(storage, instant)
        return out


def _make_guard(storage: Storage, s: str, plan: CompactionPlan, made: list) -> None:
    """Complete the guard savepoint on S for ``plan`` (:func:`.guard.make`), just before the first
    file of slice C gets its final name."""
    guard.make(storage, s, plan.instant, guard.slice_b_files(plan, is_exact_split(plan)), made, what="scheduled")
    crashpoint("schedule.after-guard")


def _publish_files(storage: Storage, planned_on: Timeline, plan: CompactionPlan, mode: str,
                   files=None, staged=None, make_guard=None, mdt: _MdtFiles | None = None) -> str | None:
    """Make the plan's re-exposed logs, then publish the plan (``.aux`` copy, then the requested
    instant) unless another scheduler or a write raced this one: the conflict's reason (None:
    published). A conflict leaves nothing behind."""
    instant, data = plan.instant, plan.to_bytes()
    req = layout.instant(planned_on, instant, Action.COMPACTION, State.REQUESTED)
    # version 6 keeps a copy in .aux (0.x readers want it); 8/9 have none (spec §5.1)
    aux = f"{AUX_DIR}/{req.file_name()}" if planned_on.profile.plan_aux_copy else None
    # the re-exposed logs go into slice C before the plan is visible (java-coexistence §2.3):
    # whoever executes the plan, Java's compactor included, then leaves a correct slice C. Until
    # the plan is published slice C is on no timeline: no reader sees these files, until Java's
    # archiver passes C (then every reader takes slice C as committed). So byte copies are
    # written under staged names first and renamed at the end (create_links): a kill while the
    # bytes are written leaves nothing a reader sees, only one among the renames does.
    crashpoint("schedule.before-links")
    try:
        made = create_links(storage, plan, mode, files=files, staged=staged, before_visible=make_guard)
    except InstantExistsError as e:
        return f"conflict: {e}"
    crashpoint("schedule.before-plan")
    if aux is not None:
        try:
            storage.create_if_absent(aux, data)
        except InstantExistsError:
            delete_all(storage, made)
            return "conflict: the instant was taken concurrently"
    crashpoint("schedule.after-aux-plan")
    # re-checked just before the plan becomes visible: another scheduler may have won, and a
    # write that started after the listing may have put a log into a slice this plan closes
    conflict = _planning_conflict(storage, planned_on, plan)
    registered = None
    if conflict is None:
        registered = _register_slice_c(storage, plan, mdt)
        if registered is not None:
            # and again once the metadata table knows slice C: Hudi's metadata writer takes
            # seconds, and a Java write requested meanwhile (0.14/0.15 take no lock to start one)
            # writes into the slice the plan closes without seeing the plan; its instant is after
            # C, so Java's conflict check at its commit skips the plan, and Java executing the plan
            # drops its log (0.14 loop with the metadata table, seed 103). What is left is the
            # moment between this listing and the plan's file (see _publish_files' end)
            conflict = _planning_conflict(storage, planned_on, plan, own=registered)
    crash.hook("schedule.after-recheck")
    if conflict is None:
        try:
            storage.create_if_absent(req.path(), data)
        except InstantExistsError:
            conflict = "conflict: the instant was taken concurrently"
    if conflict is None:
        # two schedulers that both passed the re-check: whoever sees the other's plan withdraws
        # its own (both may withdraw; at most one plan stays). Layout 2: a write requested after
        # the re-check under an instant <= C (a writer whose clock is behind ours, or the same
        # millisecond) would sort its log before the copies named C, or leave it in the slice C
        # closes (spec v8 §3.6 condition 1): the plan is withdrawn too (the write's logs are named
        # with its own instant, so none is orphaned). Layout 1 keeps the plan: a log appended to
        # slice C by a writer that saw it would be orphaned, and execute refuses a stale plan.
        now = Timeline.load(storage)
        others = [i.timestamp for i in now.pending_compactions if i.timestamp != instant]
        racing = ([t for t in _new_writes(planned_on, now) if t <= instant and t != registered]
                  if planned_on.profile.logs_named_by_writing_instant else [])
        if not others and not racing:
            create_links(storage, plan, mode, missing_only=True, files=files)  # one removed meanwhile is made again
            return None
        storage.delete(req.path())
        conflict = (f"conflict: compaction {others[0]} was scheduled concurrently" if others else
                    f"conflict: write {racing[0]} started while the plan was being published; schedule again")
    if aux is not None:
        storage.delete(aux)
    if registered is not None:  # the metadata table lists them: removed through a clean instant
        jvm_metadata.delete_files(storage, commit_path.table_write_config(storage), made,
                                  lambda: delete_all(storage, made) or list(made), zone=mdt.zone,
                                  what=f"withdrawn compaction plan {instant}")
    else:
        delete_all(storage, made)
    return conflict


def last_threshold_ms(table: HudiTable) -> int | None:
    """Threshold of the latest completed event-time compaction (None: never compacted)."""
    return last_threshold(table)[0]


def _planning_conflict(storage: Storage, planned_on: Timeline, plan: CompactionPlan,
                       own: str | None = None) -> str | None:
    """Why ``plan``, made from ``planned_on``, may not be published now (None: it may). ``own``:
    the empty deltacommit that registered slice C in the metadata table (not a racing write)."""
    instant = plan.instant
    now = Timeline.load(storage)
    other = [i.timestamp for i in now.pending_compactions if i.timestamp != instant]
    if other:
        return f"conflict: compaction {other[0]} was scheduled concurrently"
    new = [t for t in _new_writes(planned_on, now) if t != own]
    if new:
        return f"conflict: write {new[0]} started while the plan was being made; schedule again"
    # a write pending when the plan was made (version 6 under OCC does not wait for one) that
    # completed since on a file group the plan closes: its log is neither in the plan's prefix nor
    # among the copies in slice C (both were chosen among committed logs), and Hudi's conflict rule
    # no longer stops it (it completed before the plan was visible): Java executing the plan would
    # drop it (0.14 loop, seed 139: a Java write's log in slice B, lost)
    if now.completed_write_times - planned_on.completed_write_times - {own}:
        table = HudiTable(storage, load_table_config(storage), now)  # its config only in this rare branch
        reason = find_conflict(table, planned_on, instant, {(op.partition, op.file_id) for op in plan.operations})
        if reason:
            return f"{reason} (it was pending when the plan was made); schedule again"
    return None


def _new_writes(planned_on: Timeline, now: Timeline) -> list[str]:
    """Write instants (any state) on ``now`` that ``planned_on`` did not have."""
    kinds = (Action.DELTA_COMMIT, Action.COMMIT, Action.REPLACE_COMMIT)
    seen = {i.timestamp for i in planned_on.instants if i.action in kinds}
    return [i.timestamp for i in now.instants if i.action in kinds and i.timestamp not in seen]


def _refuse_mixed_ordering_types(table: HudiTable, schemas: Mapping[str, str | None] | None = None) -> None:
    """While a plan is pending its remaining logs are read twice (old slice, then slice C); that is
    harmless under Hudi 0.14's merge rules when the ordering field kept one type, but not when it
    was widened int→long (an Integer and a Long never compare: java-coexistence §2.3).
    ``schemas``: writer schemas already decoded (:func:`log_event_ranges`'s), by completed file."""
    field_name = table.config.precombine_field
    if not field_name:
        return
    seen = set()
    for inst in table.timeline.completed_writes:
        try:
            schema = _commit_schema(table, inst, schemas)
        except InvalidTimelineError:
            continue
        if not schema:
            continue
        try:
            fields = json.loads(schema).get("fields") or []
        except (ValueError, AttributeError):
            continue
        for f in fields:
            if isinstance(f, dict) and f.get("name") == field_name:
                t = f.get("type")
                ts = t if isinstance(t, list) else [t]
                seen |= {x if isinstance(x, str) else (x or {}).get("type") for x in ts} & {"int", "long"}
    if len(seen) > 1:
        raise UnsupportedFeatureError(
            f"the ordering field {field_name!r} was both int and long in this table's history: re-exposed logs "
            f"read twice while a plan is pending could then change a query's result. Compact all logs first "
            f"(strategy all), or rewrite the table with one type")


def _commit_schema(table: HudiTable, inst, known: Mapping[str, str | None] | None = None) -> str | None:
    """The writer schema in a commit's extra metadata: ``known``'s entry for its completed file
    when it has one (decoded with the write stats). Layout 1: only ``extraMetadata`` is decoded
    (msgspec skips the write stats, most of a large commit's bytes); anything it does not take
    goes through the full, checked decoding."""
    if known:
        done = inst.path(State.COMPLETED)
        if done in known:
            return known[done]
    if table.profile.commit_encoding == JSON_COMMITS and _EXTRA_DECODER is not None:
        try:
            extra = _EXTRA_DECODER.decode(table.storage.read_bytes(inst.path(State.COMPLETED))).extraMetadata
            return (extra or {}).get("schema")
        except Exception:  # noqa: BLE001 - the checked path decides
            pass
    return (table.commit_metadata(inst).get("extraMetadata") or {}).get("schema")


def _extra_decoder():
    try:
        import msgspec
    except ImportError:  # pragma: no cover - without Airflow
        return None
    from typing import Optional

    return msgspec.json.Decoder(msgspec.defstruct(
        "_CommitExtra", [("extraMetadata", Optional[dict[str, Optional[str]]], None)], gc=False))


_EXTRA_DECODER = _extra_decoder()


@contextmanager
def _gc_paused():
    """Planning makes a few hundred thousand small objects (per log file: its listed name parsed,
    its file group and slice, its event range, its place in the plan) and no reference cycles;
    the cyclic collector would walk the growing heap over and over meanwhile (a third of the
    planning time over 10,000 file groups when it ran during the view's listing). It is paused
    from the listing to the plan, and again while the plan is published (its per-file names, a
    second pass over the plan's objects), and resumed as it was; everything planning leaves
    behind is freed by reference counting."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _plan_operations(table: HudiTable, strat, instant: str, *, exact_split: bool, threshold_ms: int,
                     et_field: str | None, view=None, engine=None,
                     schemas: dict[str, str | None] | None = None) -> tuple[list[Operation], set[str]]:
    """The plan's operations (per latest file slice: the prefix of logs ``strat`` selects, link
    operations for the rest) and the event-time sources used. ``schemas``: receives the writer
    schemas of the commits read for their write stats (:func:`log_event_ranges`)."""
    storage = table.storage
    # sizes only of the logs a plan compacts (its TOTAL_LOG_FILES_SIZE): locally that is a stat
    # of those alone; object-store listings carry sizes anyway
    if view is None:
        view = table.file_system_view(sizes=False)
    slices = view.latest_slices()
    # path → event range of every log with usable write stats; the logs without them are taken
    # from the event-time index or scanned (once, all together: an engine may spread the scans)
    # (only when the stats' event times are of the plan's field: stats_describe)
    usable = stats_describe(table.config, et_field)
    ranges = log_event_ranges(table, since=_oldest_log_base_instant(slices), schemas=schemas) if usable else {}
    size_of = _log_sizer(storage)
    ops, sources = [], set()
    add_source = sources.add
    # the write stats of base files: whether an exact split may filter one; their event times
    # only where they are of the plan's field
    base_stats = _base_stats_index(table) if exact_split else {}
    base_index = base_stats if usable else {}
    # overwrite-latest with an ordering field: a log replaces the base whatever its ordering value,
    # so a compacted prefix must not hold a larger ordering value than a remaining log for one key
    # (event-time ordering: a key the prefix leaves deleted, re-inserted by a remaining log)
    flips_possible = isinstance(strat, EventTimeStrategy) and bool(table.config.precombine_field)
    eto = table.config.event_time_ordering
    index = LogIndex(storage, et_field, table.config.precombine_field)
    # ordering facts come with every scan (the same read), so an index entry always has them;
    # made when a log is first scanned (it needs the table's schema: the latest commit decoded)
    scanner = functools.cache(lambda: LogScanner.of(table, et_field, ordering=True))
    get_range = ranges.get
    missing = []
    for s in slices:
        for lg in s.log_files:
            if get_range(lg.path) is None:
                missing.append(lg)
    _complete_ranges(ranges, missing, index, size_of, scanner, engine)
    # the event-time strategy selects from the slice's ranges, looked up once per log
    select_ranges = strat.select_ranges if isinstance(strat, EventTimeStrategy) else None
    decoder = None
    first = SPLIT_LOG_VERSION + 1 if exact_split else 1
    for s in slices:
        logs = s.log_files
        if not logs and not exact_split:
            continue
        rs = [get_range(x.path) for x in logs]
        for r in rs:
            add_source(r.source)
        sel = strat.select(s, ranges) if select_ranges is None else select_ranges(logs, rs)
        if flips_possible and sel.compact and sel.remain:
            facts = [r.ordering for r in rs]
            if None in facts:  # logs with event-time write stats but no ordering facts (Java's)
                _complete_ranges(ranges, [x for x, f in zip(logs, facts) if f is None], index, size_of, scanner,
                                 None, ordering_only=True)
                facts = [get_range(x.path).ordering for x in logs]
            n = len(sel.compact)
            if may_flip(eto, facts[:n], facts[n:]):  # only then are the slice's logs read
                if decoder is None:
                    from ..hudi.file_group.merge import BlockDecoder

                    decoder = BlockDecoder(table.arrow_schema)
                sel = flip_safe_selection(table, s, sel, decoder)
        compact = sel.compact
        # an exact split rewrites a slice without logs to compact when its base holds records after
        # the threshold that it may leave out (a write's inserts; not a compaction's base, nor one
        # a Java write merged into)
        filterable = bool(exact_split and s.base_file
                          and base_records_filterable(table, s.base_instant, base_stats.get(s.base_file.path)))
        if not compact and not (filterable and _base_late(table, s.base_file, base_index, threshold_ms, et_field)):
            continue
        nbytes = 0
        for x in compact:
            n = size_of(x)
            if n > 0:
                nbytes += n
        metrics = {"TOTAL_LOG_FILES": len(compact), "TOTAL_LOG_FILES_SIZE": nbytes}
        if exact_split and s.base_file:
            metrics[M_BASE_FILTERABLE] = 1.0 if filterable else 0.0
        ops.append(operation(
            s.partition, s.file_id, s.base_instant, s.base_file.name if s.base_file else None,
            tuple([x.name for x in compact]), _link_ops(s.file_id, instant, first, sel.remain), metrics,
        ))
    index.save(lg.path for s in slices for lg in s.log_files)
    return ops, sources


def _complete_ranges(ranges: dict, logs, index: LogIndex, size_of, scanner: Callable[[], LogScanner], engine, *,
                     ordering_only: bool = False) -> None:
    """Event ranges (with ordering facts when ``scanner`` reads them) of ``logs`` into ``ranges``:
    from the event-time index when it has an entry for the file at its present size, else
    scanned (on ``engine`` when given; ``scanner()`` gives the scanner) and recorded in the
    index. ``ordering_only``: the logs
    have event ranges from write stats; only their ordering facts are added."""
    todo = []
    for lg in logs:
        size = size_of(lg)
        r = index.get(lg.path, size)
        if r is not None:
            ranges[lg.path] = ranges[lg.path]._replace(ordering=r.ordering) if ordering_only else r
        else:
            todo.append((lg.path, size))
    if not todo:
        return
    paths = [p for p, _ in todo]
    scanner = scanner()
    found = engine.map(scanner, paths) if engine is not None and len(paths) > 1 else [scanner(p) for p in paths]
    for (p, size), r in zip(todo, found):
        index.put(p, size, r)
        ranges[p] = ranges[p]._replace(ordering=r.ordering) if ordering_only else r


def _oldest_log_base_instant(slices) -> str | None:
    """The oldest base instant named by the slices' logs: no commit before it wrote one of them
    (see :func:`log_event_ranges`). None (read every commit) when a log names something other
    than a 14- or 17-digit instant."""
    bases = {log.base_instant for s in slices for log in s.log_files}
    if not bases or not all((len(b) == 17 or len(b) == 14) and b.isdecimal() for b in bases):
        return None
    return min(bases)


_PLAIN_FILE_ID = re.compile(r"[A-Za-z0-9-]+")


def _link_ops(file_id: str, instant: str, first: int, remain) -> tuple[LinkOp, ...]:
    """Link operations re-exposing ``remain`` in slice ``instant`` under versions first, first+1, ...
    (names as :func:`lf.format_log_file_name` makes them, which checks the file id and instant)."""
    if not remain:
        return ()
    if file_id.__class__ is str and _PLAIN_FILE_ID.fullmatch(file_id) and instant.isascii() and instant.isdigit():
        head = f".{file_id}_{instant}.log."  # a name format_log_file_name would make (and accept)
    else:  # raises as format_log_file_name does, or makes the name
        name0 = lf.format_log_file_name(file_id, instant, first, LINK_TOKEN)
        head = name0[: name0.rindex(".log.") + 5]
    out = []
    add, new, cls = out.append, _object_new, LinkOp
    for i, log in enumerate(remain, first):
        o = new(cls)
        o.__dict__.update(link=f"{head}{i}_{LINK_TOKEN}", target=log.name)  # LinkOp(link, target)
        add(o)
    return tuple(out)


_object_new = object.__new__


def _log_sizer(storage: Storage):
    """``log → size`` for the plan's TOTAL_LOG_FILES_SIZE: the listed size, else (a local listing
    without sizes) one ``os.stat`` now, following a symlink as a listing does (-1 for a dangling
    one, as a listing reports it).

    Not the write stats' ``fileSizeInBytes``: Java appending to a log across deltacommits (HDFS)
    records the bytes of each append there, not the file's size, and a rollback command block
    appended later is in no stat at all; the plan records what is on storage."""
    if storage.listing_has_sizes:
        return lambda log: log.size
    root = storage.base_uri.rstrip("/") + "/"  # the listed paths are table-relative and normalised
    stat = os.stat

    def size(log) -> int:
        if log.size >= 0:
            return log.size
        try:
            return stat(root + log.path).st_size
        except FileNotFoundError:
            return -1

    return size


def _base_stats_index(table: HudiTable) -> dict[str, dict]:
    """Table-relative base file path → the write stat of the completed commit that wrote it."""
    out: dict[str, dict] = {}
    for inst in table.timeline.completed_writes:
        for st in iter_write_stats(table.commit_metadata(inst)):
            p = st.get("path")
            if p and p.endswith(".parquet"):
                out[p] = st
    return out


def _base_late(table: HudiTable, base, index: Mapping[str, dict], threshold_ms: int, et: str | None) -> bool:
    """Does this base file hold a record with event time after the threshold? (exact split)"""
    st = index.get(base.path) or {}
    if st.get("maxEventTime") is not None:
        return int(st["maxEventTime"]) > threshold_ms
    if not et:
        return False
    from ..hudi.logformat.parquet_data import open_parquet_file

    with open_parquet_file(table.storage, base.path) as (pf, threads):
        if et not in pf.schema_arrow.names:
            return False
        col = pf.read(columns=[et], use_threads=threads).column(et)
    mx = pc.max(event_time_millis(col)).as_py()
    return mx is not None and mx > threshold_ms
