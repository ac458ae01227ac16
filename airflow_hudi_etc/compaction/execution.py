"""Execute a compaction plan.

``<C>.compaction.inflight``; per operation (one task each; ``engine.map``) merge the base file
with the selected logs into ``{fileId}_{token}_{C}.parquet`` keeping each record's meta fields
(an exact split also writes the split log); the plan's re-exposed logs, made when it was
scheduled, are verified first. Then ``<C>.commit`` with the threshold and the link operations
in its extra metadata. One execution of a plan at a time (heartbeat); an inflight plan of a
crashed run is rolled back first; a completed one is reported again (idempotent).
"""

from __future__ import annotations

import contextlib
import json
import posixpath
import time
from typing import Any, Mapping

import pyarrow as pa

from .intents import finish_stale_intents
from .leftovers import drop_execution, record_execution
from ..hudi import etc_keys as keys
from ..hudi import crash
from ..hudi.protocol import heartbeat
from ..hudi.concurrency import transaction as commit_path
from ..hudi.timeline import layout
from ..hudi.protocol import markers
from ..hudi import logformat as lf
from ..hudi.crash import crashpoint
from ..hudi.errors import InvalidTimelineError, UnsupportedFeatureError
from ..hudi.protocol.plan import CompactionPlan, Operation
from ..hudi.config.schema import FILE_NAME
from ..hudi.index.stats import log_event_ranges
from ..hudi.storage import Storage, temp_owner
from ..hudi.table.hudi_table import HudiTable, SliceReadSpec
from ..hudi.timeline.active import Action, Instant, META_DIR, State
from ..hudi.timeline.commits import CommitMetadata, RuntimeStats, WriteStat
from ..hudi.write.writer import LocalEngine
from .base_merge import write_base_table, write_merged_base
from .java_compaction import check_execute
from .lifecycle import rollback
from ..hudi.etc_keys import (  # noqa: E402  (the commit's figures; typed view: hudi.etc_metadata)
    COMPACTED_LOG_BYTES as K_COMPACTED_BYTES,
    COMPACTED_LOG_FILES as K_COMPACTED_LOGS,
    EXECUTION_SECONDS as K_EXECUTION,
    LINK_BYTES_WRITTEN as K_LINK_BYTES,
    REMAINING_LOG_BYTES as K_REMAINING_BYTES,
    REMAINING_LOG_FILES as K_REMAINING_FILES,
    REMAINING_MIN_EVENT_TIME_MS as K_REMAINING_MIN_ET,
    SPLIT_LOG_RECORDS as K_SPLIT_RECORDS,
)
from .plans import (
    K_ET_FIELD,
    K_LINKS,
    K_LINK_MODE,
    K_THRESHOLD_MS,
    op_base_filterable,
    drop_placeholder,
    final_target,
    is_exact_split,
    link_target,
    links_precreated,
    plan_link_files,
    read_plan,
    refuse_foreign_data,
    split_log_name,
)
from .results import commit_figures
from .split import CompactTask, split_at_threshold, write_split_log


def execute(path: str | Storage, *, instant: str | None = None, engine=None,
            storage_options: Mapping[str, Any] | None = None) -> dict:
    """Run compaction plan ``instant`` (default: the oldest pending one); see the module docstring."""
    with contextlib.ExitStack() as held:  # the execution's heartbeat, released at its end
        return _execute(path, instant=instant, engine=engine, storage_options=storage_options, held=held)


def _execute(path: str | Storage, *, instant: str | None, engine, storage_options: Mapping[str, Any] | None,
             held: contextlib.ExitStack) -> dict:
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    t0 = time.monotonic()
    table = HudiTable.load_writable(storage)
    finish_stale_intents(storage, table.config)  # a crashed schedule's copies (intents module)
    tl = table.timeline
    if instant is None:
        if not tl.pending_compactions:
            done = tl.completed_compactions
            if not done:
                return {"instant": None, "status": "nothing to execute"}
            instant = done[-1].timestamp
        else:
            instant = tl.pending_compactions[0].timestamp
    insts = [i for i in tl.get(instant) if i.action is Action.COMPACTION]
    if not insts:
        raise InvalidTimelineError(f"no compaction {instant} on the timeline")
    if insts[0].is_completed:  # a retry: report the earlier result
        meta = table.commit_metadata(insts[0])
        markers.remove_markers(storage, instant)  # a run that died right after its commit left them
        drop_execution(storage, instant)
        return {"instant": instant, "status": "already completed", **commit_figures(meta)}
    plan = read_plan(table, instant)
    _preflight(table, plan)
    check_execute(table)  # not while Java compacts (java_compaction.py)
    # one execution of a plan at a time: another one's live heartbeat is a typed conflict (an
    # inflight plan is a crashed run's only once its heartbeat expired)
    hb = held.enter_context(heartbeat.hold(storage, instant, what="compaction execution"))
    folders = [META_DIR, table.config.timeline_dir, *sorted({op.partition for op in plan.operations})]
    record_execution(storage, instant, folders)  # its temp files, for when someone else finishes C
    held.callback(drop_execution, storage, instant)  # at its end, failed or not (a killed one keeps it)
    heartbeat.remove_stale_temp_files(storage, folders, own=instant)
    if links_precreated(plan):
        verify_links(storage, plan)
    # every commit file this execution reads, read before it writes anything: one Java's archiver
    # moved since the listing is then a conflict that changed nothing (TimelineChangedError)
    ranges = log_event_ranges(table)
    _ = table.avro_schema  # (cached for the tasks and the commit)
    if insts[0].state is State.INFLIGHT:
        rollback(storage, instant=instant)
    inflight = layout.instant(tl, instant, Action.COMPACTION, State.INFLIGHT)
    storage.create_if_absent(inflight.path(), b"")
    crashpoint("execute.after-inflight")
    results = _run_tasks(table, plan, engine or LocalEngine())
    meta = _commit_metadata(table, plan, results, t0, ranges)
    markers.verify_written(storage, instant, [st for stats in results for st in stats])  # all there, as written
    hb.check()  # and this is still the one execution of the plan
    crash.hook("execute.before-commit-file")
    commit_path.complete(storage, tl, instant, Action.COMPACTION, layout.commit_data(tl, meta),
                         what=f"compaction {instant}", zone=table.timeline_zone)
    markers.remove_markers(storage, instant)
    return {"instant": instant, "status": "completed", **commit_figures(meta.to_json())}


def _preflight(table: HudiTable, plan: CompactionPlan) -> None:
    """The checks that refuse a plan before anything is written: a stale plan, inputs that are
    gone or leave the table, symlinks the storage does not have."""
    storage, instant = table.storage, plan.instant
    stale = _stale_plan_logs(table, plan)
    if stale:
        raise InvalidTimelineError(
            f"compaction plan {instant} is stale: {stale[0]} was committed into a planned slice after the plan "
            f"was made (a write raced the scheduler); executing would drop it. Readers still see it while the "
            f"plan is pending: unschedule the plan and schedule again")
    early = _writes_straddling(table, plan)
    if early:
        t, state = early[0]
        raise InvalidTimelineError(
            f"compaction plan {instant}: write {t} was requested before it and {state}: its logs would sort "
            f"before the re-exposed copies named {instant} in the new slice (a writer whose clock is behind "
            f"ours raced the scheduler). Let the write finish or roll it back, then unschedule the plan and "
            f"schedule again")
    listed: dict[str, set[str]] = {}  # one listing per folder, to find inputs that are gone
    for op in plan.operations:  # a planted symlink must not make the compaction read outside the table
        for name in ([op.base_file] if op.base_file else []) + list(op.compact_logs) + [lk.target for lk in op.links]:
            final = final_target(storage, op.path(name))  # UnsafePathError for a link that leaves the table
            _check_input_file(storage, final, listed, is_base=name == op.base_file)  # before inflight
    if (plan.extra.get(K_LINK_MODE) == "symlink" and not storage.supports_symlinks
            and any(op.links for op in plan.operations)):  # refused before anything is written
        raise UnsupportedFeatureError(f"compaction plan {instant} re-exposes logs by symlink, which "
                                      f"{storage.scheme} storage does not have: unschedule it and schedule "
                                      f"again with link mode copy (or auto)")


def _run_tasks(table: HudiTable, plan: CompactionPlan, engine) -> list[list[WriteStat]]:
    """One task per operation on ``engine``; then (plain compactions) the ones whose slice C got a
    committed writer log meanwhile again. Per task, its write stats."""
    storage, instant = table.storage, plan.instant
    mode = plan.extra.get(K_LINK_MODE, "copy")
    schema_json = json.dumps(table.avro_schema_with_meta, separators=(",", ":"))
    split_ms = int(plan.extra[K_THRESHOLD_MS]) if is_exact_split(plan) and K_THRESHOLD_MS in plan.extra else None
    et_field = plan.extra.get(K_ET_FIELD) or None
    pre = links_precreated(plan)
    tasks = [CompactTask(storage, instant, op, i, mode, schema_json, split_ms, et_field, pre)
             for i, op in enumerate(plan.operations)]
    results = engine.map(compact_task, tasks)
    crashpoint("execute.before-commit")
    if split_ms is None:
        results = _refold_writer_logs(storage, instant, engine, tasks, results)
    return results


def _commit_metadata(table: HudiTable, plan: CompactionPlan, results: list[list[WriteStat]],
                     t0: float, ranges: Mapping[str, Any]) -> CommitMetadata:
    """The compaction commit: the tasks' write stats, the plan's extra metadata, its links and the
    figures metrics and the report read. ``ranges``: :func:`log_event_ranges` of the table."""
    if table.profile.compaction_stats_name_prev_base:  # spec §2.3: the old base file of each new one
        results = [[stats[0].updated(prevBaseFile=op.base_file, totalLogFiles=len(op.compact_logs)), *stats[1:]]
                   for op, stats in zip(plan.operations, results)]
    # a re-exposed log keeps its target's event range (the next plan needs it): merged over every
    # stat of the target (a log appended to across deltacommits has one per append)
    all_stats = []
    for st in (st for stats in results for st in stats):
        src = ranges.get(st.extra.get("hoodieEtcLinkTarget") or "")
        if src is not None and src.min_ms is not None:
            st = st.updated(minEventTime=src.min_ms, maxEventTime=src.max_ms)
        all_stats.append(st)
    p2s: dict[str, list[WriteStat]] = {}
    for st in all_stats:
        p2s.setdefault(st.partitionPath, []).append(st)
    links = [{"link": op.path(lk.link), "target": op.path(lk.target)} for op in plan.operations for lk in op.links]
    links += [{"link": st.path, "target": None, "kind": "split"} for st in all_stats if st.extra.get("hoodieEtcSplitLog")]
    extra = {k: v for k, v in plan.extra.items() if k.startswith(keys.PREFIX)}
    extra[K_LINKS] = json.dumps(links)
    extra.update(_execution_figures(table, plan, all_stats, ranges))
    extra[K_EXECUTION] = f"{time.monotonic() - t0:.3f}"
    extra["schema"] = json.dumps(table.avro_schema, separators=(",", ":"))
    return CommitMetadata(partitionToWriteStats={p: tuple(s) for p, s in p2s.items()}, compacted=True,
                          extraMetadata=extra, operationType="COMPACT")


def _check_input_file(storage: Storage, rel: str, listed: dict[str, set[str]], *, is_base: bool) -> None:
    """An input of the plan that is gone (a deleted log, a symlink whose target is gone) is a
    typed error before execute writes anything (one listing per folder); so is, where the storage
    has local paths, a base file whose Parquet footer does not read (on object stores that costs
    a request per file: a damaged base file is then found by its task, a typed error too)."""
    import pyarrow.parquet as pq

    from ..hudi.errors import CorruptDataFileError, MissingDataFileError

    folder, name = posixpath.split(rel)
    if folder not in listed:
        listed[folder] = set(storage.list(folder, names_only=True))
    if name not in listed[folder]:
        raise MissingDataFileError(f"{rel} is missing (deleted, or a symlink whose target is gone): "
                                   f"the plan cannot be executed; unschedule it and schedule again")
    if is_base and storage.local_paths:
        try:
            pq.read_metadata(storage.full(rel))
        except (pa.ArrowInvalid, OSError) as e:
            raise CorruptDataFileError(f"base file {rel} is not readable Parquet: {str(e)[:200]}") from None


def _writes_straddling(table: HudiTable, plan: CompactionPlan) -> list[tuple[str, str]]:
    """Slices by completion time (8/9), a plan with copies: writes requested before C that are still
    pending or completed after C (spec v8 §3.6 condition 1; schedule refuses while one is pending, so
    only a writer that listed the timeline before the plan was published, with a clock behind ours,
    leaves one)."""
    tl = table.timeline
    if not tl.profile.slices_by_completion_time or not any(op.links for op in plan.operations):
        return []
    out = []
    for i in tl.instants:
        if i.action not in (Action.DELTA_COMMIT, Action.COMMIT) or i.timestamp >= plan.instant:
            continue
        if i.is_pending:
            out.append((i.timestamp, "is still pending"))
        elif (tl.completion_time(i.timestamp) or "") > plan.instant:
            out.append((i.timestamp, "completed after it"))
    return out


def _stale_plan_logs(table: HudiTable, plan: CompactionPlan) -> list[str]:
    """Committed logs of a planned slice that the plan neither compacts nor re-exposes.

    Only a write that raced the scheduler (it did not see the plan, so it wrote into the old
    slice, after the plan's listing) leaves one; executing would drop it from the new slice.
    """
    accept = table._filter()
    listings: dict[str, list] = {}
    out = []
    tl = table.timeline
    by_writer = tl.profile.logs_named_by_writing_instant
    for op in plan.operations:
        if op.partition not in listings:
            listings[op.partition] = table.storage.list(op.partition)
        known = set(op.compact_logs) | {lk.target for lk in op.links}
        for f in listings[op.partition]:
            p = lf.parse_log_file_name(f.name)
            if p is None or p.file_id != op.file_id or f.name in known:
                continue
            if by_writer:  # a log of the planned slice: completed at or after its key, before C (spec §3.2)
                done = tl.completion_time(p.base_instant)
                if p.base_instant == plan.instant or done is None or not (op.base_instant <= done < plan.instant):
                    continue
                out.append(f.path)
                continue
            if p.base_instant != op.base_instant:
                continue
            try:
                blocks = lf.read_blocks(table.storage.read_bytes(f.path))
            except FileNotFoundError:
                continue
            if any(isinstance(b, lf.LogBlock) and b.instant_time and accept.accepts(b.instant_time) for b in blocks):
                out.append(f.path)
    return out


def compact_task(t: CompactTask) -> list[WriteStat]:
    """Merge one file group's base + selected logs into the new base; re-expose the rest."""
    with temp_owner(t.instant):  # its temp files carry the instant: a crashed run's are known as such
        return _compact_task(t)


def _compact_task(t: CompactTask) -> list[WriteStat]:
    t0 = time.monotonic()
    table = HudiTable.load(t.storage)
    op = t.op
    spec = SliceReadSpec(op.partition, op.file_id, op.path(op.base_file) if op.base_file else None,
                         tuple(op.path(n) for n in op.compact_logs))
    et = t.event_time_field or table.config.event_time_field
    name = f"{op.file_id}_{t.task_index}-2-0_{t.instant}.parquet"
    rel = op.path(name)
    late = None
    folded: tuple[str, ...] = ()
    markers.mark_create(t.storage, t.instant, rel)  # Java's marker, before the file
    # always a base file, even with no rows left: slice C must shadow the old base for RO reads
    if t.split_threshold_ms is None:
        folded = _committed_writer_logs(table, op, t.instant)
        later = tuple(op.path(lk.target) for lk in op.links) + folded
        out = write_merged_base(table, spec, later, rel, name, t.schema_json, et)
    else:
        merged = table.read_slice(spec, skip_base_columns=(FILE_NAME,))  # rewritten: not read
        if et and et in merged.column_names and merged.num_rows:
            merged, late = split_at_threshold(table, spec, merged, et, t.split_threshold_ms,
                                               op_base_filterable(op))
        out = write_base_table(table, rel, merged, name, t.schema_json, et)
    crashpoint("execute.after-base-file")
    log_bytes = sum(t.storage.size(op.path(n)) for n in op.compact_logs)
    st = WriteStat.for_base(fileId=op.file_id, path=rel, partitionPath=op.partition, prevCommit=op.base_instant,
                            numWrites=out.rows, file_size=out.size, minEventTime=out.min_event_time,
                            maxEventTime=out.max_event_time, totalLogFilesCompacted=len(op.compact_logs),
                            totalLogSizeCompacted=log_bytes,
                            # writer logs of slice C whose live keys the base keeps
                            extra={"hoodieEtcWriterLogs": list(folded)} if t.split_threshold_ms is None else None,
                            runtimeStats=RuntimeStats(totalScanTime=0, totalCreateTime=0,
                                                      totalUpsertTime=int((time.monotonic() - t0) * 1000)))
    stats = [st]
    if late is not None:
        stats.append(write_split_log(t, late, et, name))
    elif t.precreated and t.split_threshold_ms is not None:
        drop_placeholder(t.storage, op.path(split_log_name(op, t.instant)))
    for lk in op.links:
        link_rel, target_rel = op.path(lk.link), op.path(lk.target)
        if not t.storage.exists(link_rel):
            if t.precreated:
                raise InvalidTimelineError(f"re-exposed log {link_rel} of compaction {t.instant} is missing: "
                                           f"unschedule the plan and schedule again")
            # a plan of an earlier release: its links are made at execution (no CREATE marker for a
            # log file: see split.write_split_log; our rollback removes them as plan outputs)
            if t.link_mode == "symlink":  # straight to the real file: no chains for the cleaner to follow
                t.storage.symlink(final_target(t.storage, target_rel), link_rel)
            else:
                t.storage.copy(target_rel, link_rel)
        size = t.storage.size(link_rel)
        stats.append(WriteStat.for_log(
            fileId=op.file_id, path=link_rel, partitionPath=op.partition, prevCommit=t.instant,
            file_size=size if t.link_mode == "copy" else 0, baseFile=name, logFiles=[lk.link],
            logVersion=lf.parse_log_file_name(lk.link).version,
            extra={"hoodieEtcLinkTarget": target_rel, "hoodieEtcLinkMode": t.link_mode}))
    return stats


def _writer_logs_in_slice(storage: Storage, op: Operation, instant: str, listing: list | None = None, *,
                          by_writer: bool = False) -> tuple[str, ...]:
    """Logs writers put into slice C while the plan was pending (after the reserved versions)."""
    reserved = {lk.link for lk in op.links} | {split_log_name(op, instant)}
    out = []
    for f in storage.list(op.partition) if listing is None else listing:
        p = lf.parse_log_file_name(f.name)
        # v6: named with C; v8/v9: named with their own instant, requested after C (so completed after it)
        in_c = p is not None and (p.base_instant > instant if by_writer else p.base_instant == instant)
        if p is not None and p.file_id == op.file_id and in_c and f.name not in reserved:
            out.append((lf.log_file_sort_key(f.name), op.path(f.name)))
    return tuple(rel for _, rel in sorted(out))


def _committed_writer_logs(table: HudiTable, op: Operation, instant: str,
                           listing: list | None = None) -> tuple[str, ...]:
    """Writer logs of slice C (see :func:`_writer_logs_in_slice`) holding a block committed on
    ``table``'s timeline: the ones a merge over that timeline reads."""
    accept = table._filter()
    out = []
    for rel in _writer_logs_in_slice(table.storage, op, instant, listing,
                                     by_writer=table.profile.logs_named_by_writing_instant):
        try:
            data = table.storage.read_bytes(rel)
        except FileNotFoundError:  # its writer failed and was rolled back meanwhile
            continue
        if any(isinstance(b, lf.LogBlock) and b.instant_time and accept.accepts(b.instant_time)
               for b in lf.read_blocks(data)):
            out.append(rel)
    return tuple(out)


def _refold_writer_logs(storage: Storage, instant: str, engine, tasks: list[CompactTask], results: list,
                        rounds: int = 3) -> list:
    """Redo the operations whose slice C got a committed writer log since their task read it.

    A writer that committed into slice C while a task ran may hold a key the new base lacks
    (deleted by the compacted prefix, re-inserted by the writer); base-file indexes would then
    miss it and the next upsert would insert it again elsewhere. Re-running the task folds it.
    (A writer committing between this check and the commit is not seen: the writer itself
    re-checks the pending plans just before it commits, and retries when one completed.)
    """
    results = list(results)
    for _ in range(rounds):
        table = HudiTable.load(storage)
        listings: dict[str, list] = {}
        redo = []
        for i, (task, stats) in enumerate(zip(tasks, results)):
            part = task.op.partition
            if part not in listings:
                listings[part] = storage.list(part)
            now = set(_committed_writer_logs(table, task.op, instant, listings[part]))
            if now != set(stats[0].extra.get("hoodieEtcWriterLogs") or ()):
                redo.append(i)
        if not redo:
            return results
        for i in redo:
            storage.delete(results[i][0].path)  # the base file (not visible: the compaction is inflight)
        for i, stats in zip(redo, engine.map(compact_task, [tasks[i] for i in redo])):
            results[i] = stats
    raise InvalidTimelineError(f"writers kept committing into slice {instant} during its execution: run execute again")


def verify_links(storage: Storage, plan: CompactionPlan) -> None:
    """Execute verifies, never trusts: every link name must hold our byte-identical copy of its
    target, or be our symlink to it; the exact-split placeholder must be empty (or hold a split
    log an earlier attempt wrote). Anything else (a Java writer's or rollback's blocks appended on
    storage Java appends on, a file put there by hand) is a typed error, before anything is
    written, naming the repair (:func:`~.plans.refuse_foreign_data`)."""
    mode = plan.extra.get(K_LINK_MODE, "copy")
    for link, target in plan_link_files(plan):
        if target is None:
            continue  # the split placeholder: by refuse_foreign_data below
        if not storage.exists(link):
            raise InvalidTimelineError(f"re-exposed log {link} of compaction {plan.instant} is missing: unschedule "
                                       f"the plan and schedule again")
        if mode == "symlink":
            got = link_target(storage, link)
            if got is not None and final_target(storage, link) == final_target(storage, target):
                continue
            raise InvalidTimelineError(
                f"{link} is not this plan's symlink to {target}: another writer put a different file under that "
                f"name; nothing was executed. Unschedule the plan and schedule again")
    refuse_foreign_data(storage, plan_link_files(plan), plan.instant, "execute")


def _execution_figures(table: HudiTable, plan: CompactionPlan, stats: list[WriteStat],
                       ranges: Mapping[str, Any]) -> dict[str, str]:
    """What the commit records for metrics and the report (extra metadata is string → string).
    ``ranges``: :func:`~airflow_hudi_etc.hudi.index.stats.log_event_ranges` of the table."""
    remaining = [op.path(lk.target) for op in plan.operations for lk in op.links]
    los = []
    for rel in remaining:
        r = ranges.get(rel)
        if r is not None and r.min_ms is not None:
            los.append(int(r.min_ms))
    split = [s for s in stats if s.extra.get("hoodieEtcSplitLog")]
    los += [int(s.minEventTime) for s in split if s.minEventTime is not None]
    return {
        K_COMPACTED_LOGS: str(sum(len(op.compact_logs) for op in plan.operations)),
        K_COMPACTED_BYTES: str(sum(s.totalLogSizeCompacted or 0 for s in stats)),
        K_REMAINING_FILES: str(len(remaining) + len(split)),
        K_REMAINING_BYTES: str(sum(s.fileSizeInBytes or 0 for s in split)
                               + sum(table.storage.size(r) for r in remaining)),
        K_REMAINING_MIN_ET: str(min(los)) if los else "",
        K_LINK_BYTES: str(sum(s.fileSizeInBytes or 0 for s in stats if "hoodieEtcLinkTarget" in s.extra)),
        K_SPLIT_RECORDS: str(sum(s.numWrites or 0 for s in split)),
    }
