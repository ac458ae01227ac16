"""Schedule, execute, roll back and unschedule event-time (partial) compactions.

* **schedule**: the EVENT_TIME trigger (no pending compaction or clustering, threshold moving
  forward, something qualifies), then per file slice a *prefix* of its logs to compact, and for
  the logs that remain, link operations re-exposing them in the new slice C under versions
  1..n. ``<C>.compaction.requested`` (and its ``.aux`` copy) is the plan.
* **execute**: ``<C>.compaction.inflight``; per operation (one task each; ``engine.map``) merge
  the base file with the selected logs into ``{fileId}_{token}_{C}.parquet`` keeping each
  record's meta fields, and re-expose the remaining logs by relative symlink or copy; then
  ``<C>.commit`` with the threshold and the link operations in its extra metadata.
* **rollback**: remove what an execution wrote (base files of C, links, copies) and the inflight
  file: the plan is requested again. **unschedule**: remove a requested plan.
All are idempotent; every refusal is a typed result or error, and nothing is written before
the checks pass.
"""

from __future__ import annotations

import datetime as _dt
import json
import re
import time
from dataclasses import dataclass
from typing import Any, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from ..hudi.errors import InstantExistsError, InvalidInputError, InvalidTimelineError
from ..hudi.schema import FILE_NAME, event_time_millis
from ..hudi.stats import iso_ms, log_event_range, log_stats_index, pending_clustering
from ..hudi.storage import Storage
from ..hudi.table import HudiTable, SliceReadSpec
from ..hudi.timeline import (
    AUX_DIR,
    Action,
    Instant,
    State,
    commit_metadata,
    dump_commit_metadata,
    next_instant_time,
    write_stat,
)
from ..hudi.writer import LocalEngine, WriteOptions, base_file_bytes
from ..hudi import logformat as lf
from .plan import CompactionPlan, LinkOp, Operation
from .strategy import CompactAllStrategy, EventTimeStrategy
from .trigger import check_readiness, last_threshold

LINK_TOKEN = "1-0-1"
K_THRESHOLD_MS = "hoodie.etc.threshold.ms"
K_THRESHOLD = "hoodie.etc.threshold"
K_LATENCY_MS = "hoodie.etc.data.latency.ms"
K_COMPACTION_TIME = "hoodie.etc.compaction.time"
K_STRATEGY = "hoodie.etc.strategy"
K_LINK_MODE = "hoodie.etc.link.mode"
K_SOURCE = "hoodie.etc.event.time.source"
K_LINKS = "hoodie.etc.link.operations"


def parse_duration(s: str) -> _dt.timedelta:
    """``30m``, ``2h``, ``1d``, ``45s``, ``1h30m`` or ISO-8601 ``PT2H``/``P1DT2H``."""
    s = (s or "").strip()
    m = re.fullmatch(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", s.upper())
    if m and s.upper() not in ("P", "PT"):
        d, h, mi, sec = m.groups()
        return _dt.timedelta(days=int(d or 0), hours=int(h or 0), minutes=int(mi or 0), seconds=float(sec or 0))
    parts = re.findall(r"(\d+(?:\.\d+)?)([dhms])", s.lower())
    if parts and "".join(a + b for a, b in parts) == s.lower():
        unit = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
        return sum((_dt.timedelta(**{unit[u]: float(v)}) for v, u in parts), _dt.timedelta())
    raise InvalidInputError(f"duration {s!r}: use e.g. 30m, 2h, 1d or PT2H")


def parse_time(s: str | None) -> _dt.datetime:
    if not s:
        return _dt.datetime.now(_dt.timezone.utc)
    try:
        dt = _dt.datetime.fromisoformat(s.strip().replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInputError(f"compaction time {s!r} is not ISO-8601") from None
    return dt if dt.tzinfo else dt.replace(tzinfo=_dt.timezone.utc)


@dataclass(frozen=True)
class ScheduleResult:
    instant: str | None
    threshold: str
    threshold_ms: int
    reason: str
    operations: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def last_threshold_ms(table: HudiTable) -> int | None:
    """Threshold of the latest completed event-time compaction (None: never compacted)."""
    return last_threshold(table)[0]


def read_plan(table: HudiTable, instant: str) -> CompactionPlan:
    data = table.storage.read_bytes(Instant(instant, Action.COMPACTION, State.REQUESTED).path())
    return CompactionPlan.from_bytes(instant, data)


def reserved_log_versions(table: HudiTable) -> dict[tuple[str, str, str], int]:
    """Log versions in slice C that pending plans reserved for their links (writers go after)."""
    out: dict[tuple[str, str, str], int] = {}
    for inst in table.timeline.pending_compactions:
        try:
            plan = read_plan(table, inst.timestamp)
        except (FileNotFoundError, InvalidTimelineError):
            continue
        for op in plan.operations:
            if op.links:
                out[(op.partition, op.file_id, inst.timestamp)] = max(
                    lf.parse_log_file_name(lk.link).version for lk in op.links
                )
    return out


def schedule(
    path: str | Storage,
    *,
    data_latency: str,
    compaction_time: str | None = None,
    link_mode: str = "auto",
    strategy: str = "event-time",
    exact_split: bool = False,
    engine=None,
    storage_options: Mapping[str, Any] | None = None,
) -> ScheduleResult:
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    if link_mode not in ("auto", "copy", "symlink"):
        raise InvalidInputError(f"link mode {link_mode!r}: use auto, copy or symlink")
    if link_mode == "symlink" and not storage.supports_symlinks:
        raise InvalidInputError(f"{storage.protocol} storage has no symlinks: use copy")
    mode = ("symlink" if storage.supports_symlinks else "copy") if link_mode == "auto" else link_mode
    ct = parse_time(compaction_time)
    threshold_ms = int((ct - parse_duration(data_latency)).timestamp() * 1000)
    table = HudiTable.load(storage)
    tl = table.timeline

    def no(reason: str) -> ScheduleResult:
        return ScheduleResult(None, iso_ms(threshold_ms), threshold_ms, reason)

    ready = check_readiness(table, threshold_ms=threshold_ms, check_pending_writes=True)
    if not ready.ready and not (ready.covered and strategy != "event-time"):
        return no(ready.reason)
    strat = EventTimeStrategy(threshold_ms) if strategy == "event-time" else CompactAllStrategy()
    instant = next_instant_time(tl)
    view = table.file_system_view()
    index = log_stats_index(table)
    ops, sources = [], set()
    for s in view.latest_slices():
        if not s.log_files:
            continue
        ranges = {}
        for log in s.log_files:
            r = log_event_range(table, log, index)
            ranges[log.path] = r
            sources.add(r.source)
        sel = strat.select(s, ranges)
        if sel.is_empty:
            continue
        links = tuple(
            LinkOp(lf.format_log_file_name(s.file_id, instant, i + 1, LINK_TOKEN), log.name)
            for i, log in enumerate(sel.remain)
        )
        ops.append(
            Operation(
                s.partition, s.file_id, s.base_instant, s.base_file.name if s.base_file else None,
                tuple(x.name for x in sel.compact), links,
                {"TOTAL_LOG_FILES": len(sel.compact), "TOTAL_LOG_FILES_SIZE": sum(max(0, x.size) for x in sel.compact)},
            )
        )
    if not ops:
        return no("no log file qualifies")
    extra = {
        K_THRESHOLD_MS: threshold_ms,
        K_THRESHOLD: iso_ms(threshold_ms),
        K_LATENCY_MS: int(parse_duration(data_latency).total_seconds() * 1000),
        K_COMPACTION_TIME: ct.isoformat(),
        K_STRATEGY: strat.name,
        K_LINK_MODE: mode,
        K_SOURCE: "+".join(sorted(sources)),
    }
    plan = CompactionPlan(instant, tuple(ops), extra)
    # requirements re-checked just before the plan is written (another scheduler may have won)
    if HudiTable.load(storage).timeline.pending_compactions:
        return no("conflict: another compaction was scheduled concurrently")
    data = plan.to_bytes()
    req = Instant(instant, Action.COMPACTION, State.REQUESTED)
    try:
        storage.create_if_absent(f"{AUX_DIR}/{req.file_name()}", data)
        storage.create_if_absent(req.path(), data)
    except InstantExistsError:
        return no("conflict: the instant was taken concurrently")
    return ScheduleResult(instant, iso_ms(threshold_ms), threshold_ms, "scheduled", len(ops))


# ------------------------------------------------------------------ execution
@dataclass(frozen=True)
class CompactTask:
    storage: Storage
    instant: str
    op: Operation
    task_index: int
    link_mode: str
    schema_json: str


def compact_task(t: CompactTask) -> list[dict]:
    """Merge one file group's base + selected logs into the new base; re-expose the rest."""
    t0 = time.monotonic()
    table = HudiTable.load(t.storage)
    op = t.op
    spec = SliceReadSpec(op.partition, op.file_id, op.path(op.base_file) if op.base_file else None,
                         tuple(op.path(n) for n in op.compact_logs))
    merged = table.read_slice(spec)
    name = f"{op.file_id}_{t.task_index}-2-0_{t.instant}.parquet"
    merged = merged.set_column(merged.schema.get_field_index(FILE_NAME), FILE_NAME,
                               pa.array([name] * merged.num_rows, pa.string()))
    stats = []
    rel = op.path(name)
    # always a base file, even with no rows left: slice C must shadow the old base for RO reads
    if True:
        data = base_file_bytes(merged, t.schema_json, WriteOptions())
        try:
            t.storage.create_if_absent(rel, data)
        except InstantExistsError:
            if t.storage.read_bytes(rel) != data:
                raise
        et = table.config.event_time_field
        lo = hi = None
        if et and et in merged.column_names:
            mm = pc.min_max(event_time_millis(merged.column(et)))
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
        log_bytes = sum(t.storage.size(op.path(n)) for n in op.compact_logs)
        st = write_stat(file_id=op.file_id, path=rel, partition_path=op.partition, prev_commit=op.base_instant,
                        num_writes=merged.num_rows, file_size=len(data), min_event_time=lo, max_event_time=hi)
        st.update(totalLogFilesCompacted=len(op.compact_logs), totalLogSizeCompacted=log_bytes)
        st["runtimeStats"]["totalUpsertTime"] = int((time.monotonic() - t0) * 1000)
        stats.append(st)
    for lk in op.links:
        link_rel, target_rel = op.path(lk.link), op.path(lk.target)
        if not t.storage.exists(link_rel):
            if t.link_mode == "symlink":
                t.storage.symlink(target_rel, link_rel)
            else:
                t.storage.copy(target_rel, link_rel)
        size = t.storage.size(link_rel)
        st = write_stat(file_id=op.file_id, path=link_rel, partition_path=op.partition, prev_commit=t.instant,
                        file_size=size if t.link_mode == "copy" else 0, base_file=name, log_files=[lk.link],
                        log_version=lf.parse_log_file_name(lk.link).version,
                        extra={"hoodieEtcLinkTarget": target_rel, "hoodieEtcLinkMode": t.link_mode})
        stats.append(st)
    return stats


def execute(path: str | Storage, *, instant: str | None = None, engine=None,
            storage_options: Mapping[str, Any] | None = None) -> dict:
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    t0 = time.monotonic()
    table = HudiTable.load(storage)
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
        return {"instant": instant, "status": "already completed", **_metrics(meta)}
    plan = read_plan(table, instant)
    if insts[0].state is State.INFLIGHT:
        rollback(storage, instant=instant)
    inflight = Instant(instant, Action.COMPACTION, State.INFLIGHT)
    storage.create_if_absent(inflight.path(), b"")
    mode = plan.extra.get(K_LINK_MODE, "copy")
    schema_json = json.dumps(table.avro_schema_with_meta, separators=(",", ":"))
    tasks = [CompactTask(storage, instant, op, i, mode, schema_json) for i, op in enumerate(plan.operations)]
    results = (engine or LocalEngine()).map(compact_task, tasks)
    p2s: dict[str, list[dict]] = {}
    for stats in results:
        for st in stats:
            p2s.setdefault(st["partitionPath"], []).append(st)
    links = [{"link": op.path(lk.link), "target": op.path(lk.target)} for op in plan.operations for lk in op.links]
    extra = {k: v for k, v in plan.extra.items() if k.startswith("hoodie.etc.")}
    extra[K_LINKS] = json.dumps(links)
    extra["hoodie.etc.execution.seconds"] = f"{time.monotonic() - t0:.3f}"
    meta = commit_metadata(p2s, operation="COMPACT", schema=json.dumps(table.avro_schema, separators=(",", ":")),
                           compacted=True, extra_metadata=extra)
    storage.create_if_absent(inflight.path(State.COMPLETED), dump_commit_metadata(meta))
    return {"instant": instant, "status": "completed", **_metrics(meta)}


def _metrics(meta: Mapping) -> dict:
    extra = meta.get("extraMetadata") or {}
    stats = [s for v in (meta.get("partitionToWriteStats") or {}).values() for s in v]
    return {
        "threshold": extra.get(K_THRESHOLD),
        "threshold_ms": int(extra[K_THRESHOLD_MS]) if K_THRESHOLD_MS in extra else None,
        "base_files_written": sum(1 for s in stats if s.get("path", "").endswith(".parquet")),
        "logs_compacted": sum(s.get("totalLogFilesCompacted", 0) for s in stats),
        "logs_remaining": sum(1 for s in stats if "hoodieEtcLinkTarget" in s),
        "link_bytes_written": sum(s.get("fileSizeInBytes", 0) for s in stats if "hoodieEtcLinkTarget" in s),
        "execution_seconds": float(extra.get("hoodie.etc.execution.seconds", 0)),
    }


def rollback(path: str | Storage, *, instant: str, storage_options: Mapping[str, Any] | None = None) -> dict:
    """Undo a failed/inflight execution: its base files, links and copies; back to requested."""
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    table = HudiTable.load(storage)
    insts = [i for i in table.timeline.get(instant) if i.action is Action.COMPACTION]
    if not insts:
        return {"instant": instant, "status": "nothing to roll back"}
    if insts[0].is_completed:
        raise InvalidTimelineError(f"compaction {instant} is completed; it cannot be rolled back here")
    plan = read_plan(table, instant)
    removed = 0
    for op in plan.operations:
        for f in storage.list(op.partition):
            if f.name.startswith(op.file_id + "_") and f.name.endswith(f"_{instant}.parquet"):
                removed += storage.delete(f.path)
        for lk in op.links:
            removed += storage.delete(op.path(lk.link))
    storage.delete(Instant(instant, Action.COMPACTION, State.INFLIGHT).path())
    return {"instant": instant, "status": "requested", "files_removed": removed}


def unschedule(path: str | Storage, *, instant: str, storage_options: Mapping[str, Any] | None = None) -> dict:
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    table = HudiTable.load(storage)
    insts = [i for i in table.timeline.get(instant) if i.action is Action.COMPACTION]
    if not insts:
        return {"instant": instant, "status": "not scheduled"}
    if insts[0].state is not State.REQUESTED:
        raise InvalidTimelineError(f"compaction {instant} is {insts[0].state.name.lower()}: roll it back first")
    reserved = reserved_log_versions(table)
    for lg in table.file_system_view().all_log_files():
        if lg.base_instant == instant and lg.version > reserved.get((lg.partition, lg.file_id, instant), 0):
            raise InvalidTimelineError(
                f"writers already wrote into slice {instant} ({lg.path}): execute the plan instead")
    req = Instant(instant, Action.COMPACTION, State.REQUESTED)
    storage.delete(req.path())
    storage.delete(f"{AUX_DIR}/{req.file_name()}")
    return {"instant": instant, "status": "unscheduled"}
