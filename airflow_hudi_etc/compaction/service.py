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

import contextlib
import datetime as _dt
import gc
import json
import os
import posixpath
import re
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Mapping

import pyarrow as pa
import pyarrow.compute as pc

from ..hudi import heartbeat, markers
from ..hudi.crash import crashpoint
from ..hudi.rollback import rollback_with_instant
from ..hudi.errors import InstantExistsError, InvalidInputError, InvalidTimelineError, UnsupportedFeatureError
from ..hudi.schema import FILE_NAME, RECORD_KEY, event_time_millis
from ..hudi.stats import iso_ms, log_event_ranges, pending_clustering, scan_event_range
from ..hudi.storage import Storage, safe_relpath, temp_owner
from ..hudi.table import HudiTable, SliceReadSpec
from ..hudi.timeline import (
    AUX_DIR,
    META_DIR,
    format_instant,
    Action,
    Instant,
    State,
    Timeline,
    commit_metadata,
    dump_commit_metadata,
    iter_write_stats,
    next_instant_time,
    write_stat,
)
from ..hudi.writer import LocalEngine
from ..hudi import logformat as lf
from .executor import write_base_table, write_merged_base
from ..hudi.coexistence import symlinks_allowed
from ..hudi.plan import LINK_TOKEN, SPLIT_LOG_VERSION, CompactionPlan, LinkOp, Operation, operation
from ..hudi.plan import read_plan as _read_plan
from .metrics import (
    K_COMPACTED_BYTES,
    K_COMPACTED_LOGS,
    K_EXECUTION,
    K_LINK_BYTES,
    K_PLANNING,
    K_REMAINING_BYTES,
    K_REMAINING_FILES,
    K_REMAINING_MIN_ET,
    K_SPLIT_RECORDS,
)
from .strategy import CompactAllStrategy, EventTimeStrategy
from .trigger import check_readiness, last_threshold, threshold_ms_for

from ..hudi import etc_keys as keys

K_THRESHOLD_MS = keys.THRESHOLD_MS
K_THRESHOLD = keys.THRESHOLD
K_LATENCY_MS = keys.LATENCY_MS
K_COMPACTION_TIME = keys.COMPACTION_TIME
K_STRATEGY = keys.STRATEGY
K_LINK_MODE = keys.LINK_MODE
K_SOURCE = keys.EVENT_TIME_SOURCE
K_LINKS = keys.LINK_OPERATIONS
K_EXACT_SPLIT = keys.EXACT_SPLIT
K_ET_FIELD = keys.EVENT_TIME_FIELD
K_PRECREATED = keys.LINKS_PRECREATED
#: a crashed schedule's links (slice C not on the timeline) are removed once this old
ORPHAN_GRACE = _dt.timedelta(minutes=15)


def parse_duration(s: str) -> _dt.timedelta:
    """``30m``, ``2h``, ``1d``, ``45s``, ``1h30m`` or ISO-8601 ``PT2H``/``P1DT2H``."""
    s = (s or "").strip()
    m = re.fullmatch(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?", s.upper())
    if m and s.upper() not in ("P", "PT"):
        d, h, mi, sec = m.groups()
        try:
            return _dt.timedelta(days=int(d or 0), hours=int(h or 0), minutes=int(mi or 0), seconds=float(sec or 0))
        except (OverflowError, ValueError):
            raise InvalidInputError(f"duration {s!r} is too large") from None
    parts = re.findall(r"(\d+(?:\.\d+)?)([dhms])", s.lower())
    if parts and "".join(a + b for a, b in parts) == s.lower():
        unit = {"d": "days", "h": "hours", "m": "minutes", "s": "seconds"}
        try:
            return sum((_dt.timedelta(**{unit[u]: float(v)}) for v, u in parts), _dt.timedelta())
        except (OverflowError, ValueError):
            raise InvalidInputError(f"duration {s!r} is too large") from None
    raise InvalidInputError(f"duration {s!r}: use e.g. 30m, 2h, 1d or PT2H")


def parse_time(s: str | None) -> _dt.datetime:
    if not s:
        return _dt.datetime.now(_dt.timezone.utc)
    try:
        dt = _dt.datetime.fromisoformat(s.strip().replace("Z", "+00:00"))
        dt = dt if dt.tzinfo else dt.replace(tzinfo=_dt.timezone.utc)
        dt.astimezone(_dt.timezone.utc)  # 0001-01-01T00:30+01:00 is before year 1 in UTC
    except (ValueError, OverflowError):
        raise InvalidInputError(f"compaction time {s!r} is not an ISO-8601 time in years 1..9999") from None
    return dt


#: how far ahead of this machine's clock a compaction time may be (another machine's clock)
CLOCK_SKEW_ENV = "HUDI_ETC_MAX_CLOCK_SKEW"
DEFAULT_CLOCK_SKEW = "5m"


def max_clock_skew() -> _dt.timedelta:
    """``$HUDI_ETC_MAX_CLOCK_SKEW`` (a duration, e.g. ``30s``), default 5 minutes."""
    return parse_duration(os.environ.get(CLOCK_SKEW_ENV, "").strip() or DEFAULT_CLOCK_SKEW)


def check_not_future(ct: _dt.datetime, now: _dt.datetime | None = None) -> None:
    """Refuse a compaction time later than now + the allowed clock skew: its threshold would claim
    event times that have not happened yet (and block every later compaction)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    skew = max_clock_skew()
    if ct > now + skew:
        raise InvalidInputError(
            f"compaction time {ct.isoformat()} is in the future (now {now.isoformat(timespec='seconds')}, "
            f"allowed clock skew {skew}, ${CLOCK_SKEW_ENV}): its threshold would be false")


@dataclass(frozen=True)
class ScheduleResult:
    """What ``schedule`` did. ``outcome`` is the typed answer (``reason`` says it for people):
    ``scheduled``; ``already_scheduled`` (a retry: ``instant`` is the pending plan this request
    made); ``pending`` (another plan, ``pending_instant``, must finish first); ``waiting`` (a
    pending clustering or write); ``covered`` (the threshold is not past the published one);
    ``nothing_qualifies``; ``conflict`` (another scheduler or writer raced this one: try again)."""

    instant: str | None
    threshold: str
    threshold_ms: int
    reason: str
    operations: int = 0
    outcome: str = "scheduled"
    pending_instant: str | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def last_threshold_ms(table: HudiTable) -> int | None:
    """Threshold of the latest completed event-time compaction (None: never compacted)."""
    return last_threshold(table)[0]


def read_plan(table: HudiTable, instant: str) -> CompactionPlan:
    return _read_plan(table.storage, instant)


def links_precreated(plan: CompactionPlan) -> bool:
    return str(plan.extra.get(K_PRECREATED, "")).lower() == "true"


def is_exact_split(plan: CompactionPlan) -> bool:
    return str(plan.extra.get(K_EXACT_SPLIT, "")).lower() == "true"


def split_log_name(op: Operation, instant: str) -> str:
    return lf.format_log_file_name(op.file_id, instant, SPLIT_LOG_VERSION, LINK_TOKEN)


def link_target(storage: Storage, rel: str) -> str | None:
    """Table-relative path a symlink points at (one hop), or None for a regular file."""
    t = storage.readlink(rel)
    if t is None:
        return None
    return safe_relpath(posixpath.normpath(posixpath.join(posixpath.dirname(rel), t)))


def final_target(storage: Storage, rel: str, max_hops: int = 64) -> str:
    """Follow a chain of symlinks to the regular file at its end (table-relative)."""
    for _ in range(max_hops):
        nxt = link_target(storage, rel)
        if nxt is None:
            return rel
        rel = nxt
    raise InvalidTimelineError(f"symlink chain too long at {rel}")


def plan_outputs(plan: CompactionPlan, op: Operation) -> list[str]:
    """Table-relative log paths an execution of ``op`` may create in slice C (split log, links).
    The links of a plan that made them when it was scheduled belong to the requested plan, not to
    its execution: they stay (the split log goes back to its empty placeholder)."""
    out = [op.path(split_log_name(op, plan.instant))] if is_exact_split(plan) else []
    return out if links_precreated(plan) else out + [op.path(lk.link) for lk in op.links]


def pending_plan_groups(table: HudiTable) -> dict[tuple[str, str], str]:
    """(partition, fileId) → instant of the pending compaction that plans it."""
    return table.pending_compaction_groups()


def show_plan(path: str | Storage, *, instant: str, storage_options: Mapping[str, Any] | None = None) -> dict:
    """A compaction plan as JSON: its state, extra metadata and operations (paths table-relative)."""
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    table = HudiTable.load(storage)
    insts = [i for i in table.timeline.get(instant) if i.action is Action.COMPACTION]
    if not insts:
        raise InvalidTimelineError(f"no compaction {instant} on the timeline")
    plan = read_plan(table, instant)
    exact = is_exact_split(plan)
    return {
        "instant": instant,
        "state": "completed" if insts[0].is_completed else insts[0].state.name.lower(),
        "extra_metadata": dict(plan.extra),
        "operations": [
            {
                "partition": op.partition,
                "file_id": op.file_id,
                "base_instant": op.base_instant,
                "base_file": op.base_file,
                "compact_logs": list(op.compact_logs),
                "split_log": split_log_name(op, instant) if exact else None,
                "links": [{"link": lk.link, "target": lk.target} for lk in op.links],
                "metrics": dict(op.metrics),
            }
            for op in plan.operations
        ],
    }


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
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    if link_mode not in ("auto", "copy", "symlink"):
        raise InvalidInputError(f"link mode {link_mode!r}: use auto, copy or symlink")
    if link_mode == "symlink" and not storage.supports_symlinks:
        raise InvalidInputError(f"{storage.protocol} storage has no symlinks: use copy")
    ct = parse_time(compaction_time)
    check_not_future(ct)
    threshold_ms = threshold_ms_for(ct, parse_duration(data_latency))
    table = HudiTable.load_writable(storage)
    # symlinks only by contract: Java's cleaner deletes what they point to (java-coexistence §5.1)
    auto_symlink = storage.supports_symlinks and symlinks_allowed(table.config)
    mode = ("symlink" if auto_symlink else "copy") if link_mode == "auto" else link_mode
    tl = table.timeline
    et_field = event_time_field or table.config.event_time_field
    if event_time_field and event_time_field not in {f.name for f in table.arrow_schema}:
        raise InvalidInputError(f"event-time field {event_time_field!r} is not a column of the table")
    if exact_split and not et_field:
        raise InvalidInputError("exact split needs an event-time field (table property or --event-time-field)")

    def no(reason: str, outcome: str = "conflict", pending: str | None = None) -> ScheduleResult:
        return ScheduleResult(None, iso_ms(threshold_ms), threshold_ms, reason, 0, outcome, pending)

    same = _same_pending_plan(table, threshold_ms=threshold_ms, strategy=strategy, exact_split=exact_split,
                              link_mode=mode, event_time_field=et_field)
    if same is not None:  # a retry of the request that made the pending plan: report that plan
        return ScheduleResult(same.instant, iso_ms(threshold_ms), threshold_ms, "already scheduled",
                              len(same.operations), "already_scheduled")
    ready = check_readiness(table, threshold_ms=threshold_ms, check_pending_writes=True)
    if not ready.ready and not (ready.covered and strategy != "event-time"):
        if ready.pending_compactions:
            return no(ready.reason, "pending", ready.pending_compactions[0])
        return no(ready.reason, "covered" if ready.covered else "waiting")
    strat = EventTimeStrategy(threshold_ms) if strategy == "event-time" else CompactAllStrategy()
    # one listing serves both (orphans sit in slices on no timeline: never among the latest)
    view = table.file_system_view(sizes=not storage.is_local)
    _remove_orphan_links(table, view=view)
    instant = next_instant_time(tl, zone=table.timeline_zone)
    with _gc_paused():
        ops, sources = _plan_operations(table, strat, instant, exact_split=exact_split, threshold_ms=threshold_ms,
                                        et_field=et_field, view=view)
    if not ops:
        return no("no log file qualifies", "nothing_qualifies")
    if any(op.links for op in ops):
        _refuse_mixed_ordering_types(table)
    extra = {
        K_THRESHOLD_MS: threshold_ms,
        K_THRESHOLD: iso_ms(threshold_ms),
        K_LATENCY_MS: int(parse_duration(data_latency).total_seconds() * 1000),
        K_COMPACTION_TIME: ct.isoformat(),
        K_STRATEGY: strat.name,
        K_LINK_MODE: mode,
        K_SOURCE: "+".join(sorted(sources)),
        K_EXACT_SPLIT: "true" if exact_split else "false",
        K_ET_FIELD: et_field or "",
        K_PRECREATED: "true",
    }
    extra[K_PLANNING] = f"{time.monotonic() - t_start:.3f}"
    plan = CompactionPlan(instant, tuple(ops), extra)
    data = plan.to_bytes()
    req = Instant(instant, Action.COMPACTION, State.REQUESTED)
    aux = f"{AUX_DIR}/{req.file_name()}"
    # the re-exposed logs go into slice C before the plan is visible (java-coexistence §2.3):
    # whoever executes the plan, Java's compactor included, then leaves a correct slice C. Until
    # the plan is published slice C is on no timeline: no reader sees these files.
    crashpoint("schedule.before-links")
    try:
        made = _create_links(storage, plan, mode)
    except InstantExistsError as e:
        return no(f"conflict: {e}")
    crashpoint("schedule.before-plan")
    try:
        storage.create_if_absent(aux, data)
    except InstantExistsError:
        _delete_all(storage, made)
        return no("conflict: the instant was taken concurrently")
    crashpoint("schedule.after-aux-plan")
    # re-checked just before the plan becomes visible: another scheduler may have won, and a
    # write that started after the listing may have put a log into a slice this plan closes
    conflict = _planning_conflict(storage, tl, instant)
    if conflict is None:
        try:
            storage.create_if_absent(req.path(), data)
        except InstantExistsError:
            conflict = "conflict: the instant was taken concurrently"
    if conflict is None:
        # two schedulers that both passed the re-check: whoever sees the other's plan withdraws
        # its own (both may withdraw; at most one plan stays)
        others = [i.timestamp for i in Timeline.load(storage).pending_compactions if i.timestamp != instant]
        if not others:
            _create_links(storage, plan, mode, missing_only=True)  # one removed meanwhile is made again
            return ScheduleResult(instant, iso_ms(threshold_ms), threshold_ms, "scheduled", len(ops))
        storage.delete(req.path())
        conflict = f"conflict: compaction {others[0]} was scheduled concurrently"
    storage.delete(aux)
    _delete_all(storage, made)
    return no(conflict)


def _plan_link_files(plan: CompactionPlan) -> list[tuple[str, str | None]]:
    """(link path, target path) of every file a plan creates in slice C before it is published;
    the exact-split placeholder has no target."""
    out: list[tuple[str, str | None]] = []
    for op in plan.operations:
        if is_exact_split(plan):
            out.append((op.path(split_log_name(op, plan.instant)), None))
        out += [(op.path(lk.link), op.path(lk.target)) for lk in op.links]
    return out


def _create_links(storage: Storage, plan: CompactionPlan, mode: str, *, missing_only: bool = False) -> list[str]:
    """Create the plan's re-exposed logs in slice C (copies, or symlinks straight to the real
    file) and, for an exact split, an empty placeholder holding version 1 (the split log's, written
    at execution). Returns what was created; a name that exists is a conflict (unless
    ``missing_only``), and what this call made is removed again."""
    made: list[str] = []
    try:
        for link, target in _plan_link_files(plan):
            if missing_only and storage.exists(link):
                continue
            if target is None:
                storage.create_if_absent(link, b"")
            elif mode == "symlink":
                storage.symlink(final_target(storage, target), link)
            else:
                storage.copy(target, link)
            made.append(link)
            crashpoint("schedule.after-link")
    except BaseException:
        _delete_all(storage, made)
        raise
    return made


def _delete_all(storage: Storage, rels) -> None:
    for rel in rels:
        storage.delete(rel)


def _remove_orphan_links(table: HudiTable, grace: _dt.timedelta = ORPHAN_GRACE,
                         only_instant: str | None = None, view=None) -> list[str]:
    """Delete the links of schedules that crashed before publishing their plan (or of a crashed
    unschedule): files with our link token in a slice whose instant is on no timeline (no reader
    sees them). Without ``only_instant``, only those made more than ``grace`` ago: a schedule
    running now may still publish its plan. With it (``unschedule --instant``: the user says that
    schedule is over), that instant's at once."""
    storage, tl = table.storage, table.timeline
    known = {i.timestamp for i in tl.instants}
    first = tl.instants[0].timestamp if tl.instants else ""
    cutoff = format_instant(_dt.datetime.now(_dt.timezone.utc) - grace, table.timeline_zone)

    def orphan(lg) -> bool:
        if lg.write_token != LINK_TOKEN or lg.base_instant in known or lg.base_instant <= first:
            return False  # (a slice older than the active timeline may be an archived commit's)
        return lg.base_instant == only_instant if only_instant is not None else lg.base_instant < cutoff

    view = view if view is not None else table.file_system_view(sizes=False)
    found = [lg.path for lg in view.all_log_files() if orphan(lg)]
    if found:  # re-checked on a fresh timeline just before deleting: its plan may have been published
        known = {i.timestamp for i in Timeline.load(storage).instants}
        found = [p for p in found if lf.parse_log_file_name(posixpath.basename(p)).base_instant not in known]
    _delete_all(storage, found)
    return found


def _refuse_mixed_ordering_types(table: HudiTable) -> None:
    """While a plan is pending its remaining logs are read twice (old slice, then slice C); that is
    harmless under Hudi 0.14's merge rules when the ordering field kept one type, but not when it
    was widened int→long (an Integer and a Long never compare: java-coexistence §2.3)."""
    field_name = table.config.precombine_field
    if not field_name:
        return
    seen = set()
    for inst in table.timeline.completed_writes:
        try:
            schema = table.commit_metadata(inst).get("extraMetadata", {}).get("schema")
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


@contextmanager
def _gc_paused():
    """Planning makes a few hundred thousand small objects (per log file: its name parsed, its
    event range, its place in the plan) and no reference cycles; the cyclic collector would walk
    the growing heap over and over meanwhile (a fifth of the planning time over 10,000 file
    groups). It is paused while planning and resumed as it was; everything planning leaves
    behind is freed by reference counting."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _plan_operations(table: HudiTable, strat, instant: str, *, exact_split: bool, threshold_ms: int,
                     et_field: str | None, view=None) -> tuple[list[Operation], set[str]]:
    """The plan's operations (per latest file slice: the prefix of logs ``strat`` selects, link
    operations for the rest) and the event-time sources used."""
    storage = table.storage
    # sizes only of the logs a plan compacts (its TOTAL_LOG_FILES_SIZE): locally that is a stat
    # of those alone; object-store listings carry sizes anyway
    if view is None:
        view = table.file_system_view(sizes=not storage.is_local)
    slices = view.latest_slices()
    # path → event range of every log with usable write stats; the logs of the slices without
    # them are scanned and added: the strategy looks every log up in it
    ranges = log_event_ranges(table, since=_oldest_log_base_instant(slices))
    get_range = ranges.get
    size_of = _log_sizer(storage)
    ops, sources = [], set()
    add_source = sources.add
    base_index = _base_stats_index(table) if exact_split else {}
    # overwrite-latest with an ordering field: a log replaces the base whatever its ordering value,
    # so a compacted prefix must not hold a larger ordering value than a remaining log for one key
    # (event-time ordering: a key the prefix leaves deleted, re-inserted by a remaining log)
    flips_possible = isinstance(strat, EventTimeStrategy) and bool(table.config.precombine_field)
    decoder = None
    if flips_possible:
        from ..hudi.merge import BlockDecoder

        decoder = BlockDecoder(table.arrow_schema)
    first = SPLIT_LOG_VERSION + 1 if exact_split else 1
    for s in slices:
        logs = s.log_files
        if not logs and not exact_split:
            continue
        for log in logs:
            r = get_range(log.path)
            if r is None:  # no usable write stats: read the log's event times
                r = ranges[log.path] = scan_event_range(table, log.path, et_field)
            add_source(r.source)
        sel = strat.select(s, ranges)
        if flips_possible and sel.compact and sel.remain:
            sel = _flip_safe_selection(table, s, sel, decoder)
        compact = sel.compact
        # an exact split rewrites a slice without logs to compact when its base holds records after
        # the threshold that it may leave out (a write's inserts; not a compaction's base)
        if not compact and not (exact_split and s.base_file and _base_records_filterable(table, s.base_instant)
                                and _base_late(table, s.base_file, base_index, threshold_ms, et_field)):
            continue
        nbytes = 0
        for x in compact:
            n = size_of(x)
            if n > 0:
                nbytes += n
        ops.append(operation(
            s.partition, s.file_id, s.base_instant, s.base_file.name if s.base_file else None,
            tuple([x.name for x in compact]), _link_ops(s.file_id, instant, first, sel.remain),
            {"TOTAL_LOG_FILES": len(compact), "TOTAL_LOG_FILES_SIZE": nbytes},
        ))
    return ops, sources


def _flip_safe_selection(table: HudiTable, s, sel, decoder):
    """The shortest prefix, at least ``sel.compact``, after whose compaction no remaining log
    record replaces a record it lost to before (overwrite-latest payload, Hudi 0.14/0.15 rules:
    log records are pre-combined by ordering value, but any log record replaces the base).

    A key flips when a remaining log holds a data record of it (or a delete carrying an ordering
    value other than the natural-order Integer 0) whose ordering value is smaller than the key's
    largest ordering value among the prefix's data records since the prefix's last natural-order
    delete of it: that record lost to the prefix's before, and would replace the new base after.
    The prefix is extended to that log (and every log before it) until no key is left. Costs
    reading (key, ordering value, delete) of the slice's logs at schedule time — only for these
    tables, and only for slices that keep logs. A null or incomparable ordering value counts as a
    flip (the safe side). Event-time ordering tables: :func:`_eto_flip_safe`."""
    from ..hudi.merge import _is_natural_zero, queue_blocks

    logs = list(s.log_files)
    files = table.read_log_files([lg.path for lg in logs])
    where = {id(b): i for i, f in enumerate(files) for b in f[2]}
    pre = table.config.precombine_field
    events: list[list[tuple]] = [[] for _ in logs]  # per log: (key, ordering, kind) in merge order
    for b in queue_blocks(files, table._filter()):
        i = where[id(b)]
        if b.block_type == lf.BlockType.DELETE:
            for d in lf.decode_delete_records(b.content):
                if d.record_key is not None:
                    natural = _is_natural_zero(d.ordering_value, d.ordering_type)
                    events[i].append((d.record_key, None if natural else d.ordering_value,
                                      "natural" if natural else "delete"))
            continue
        t = decoder.table(b)
        if not t.num_rows:
            continue
        keys = t.column(RECORD_KEY).to_pylist()
        ords = t.column(pre).to_pylist() if pre in t.column_names else [None] * len(keys)
        events[i].extend((k, o, "data") for k, o in zip(keys, ords) if k is not None)
    n = len(sel.compact)
    if table.config.event_time_ordering:
        return _eto_flip_safe(logs, sel, events)
    while n < len(logs):
        best: dict = {}  # key → largest ordering among the prefix's data records since its last natural delete
        for i in range(n):
            for k, o, kind in events[i]:
                if kind == "natural":
                    best.pop(k, None)
                elif kind == "data":
                    cur = best.get(k, _MISSING)
                    best[k] = o if cur is _MISSING else _max_ordering(cur, o)
        flip = None
        for j in range(n, len(logs)):
            for k, o, kind in events[j]:
                if kind == "natural":
                    best.pop(k, None)  # the rest of the remaining logs merge after it either way
                    continue
                cur = best.get(k, _MISSING)
                if cur is not _MISSING and _smaller(o, cur):
                    flip = j
                    break
            if flip is not None:
                break
        if flip is None:
            break
        n = flip + 1
    return _prefix_of(sel, logs, n)


def _eto_flip_safe(logs, sel, events):
    """Event-time ordering (``DefaultHoodieRecordPayload``) compares base and log records by
    ordering value as the log fold does, so a prefix cannot flip a key — except through a
    delete: Hudi 0.14 merges a re-insert after a delete against the *old* base record (the base
    stays when its ordering value is larger), while after compacting a prefix that ends with the
    delete the base no longer has the key and the re-insert shows. So a key whose last event in
    the prefix is a delete and that a remaining log writes again extends the prefix to that log
    (without reading the base: the safe side)."""
    n = len(sel.compact)
    while n < len(logs):
        deleted: set = set()
        for i in range(n):
            for k, _, kind in events[i]:
                if kind == "data":
                    deleted.discard(k)
                else:
                    deleted.add(k)
        flip = next((j for j in range(n, len(logs))
                     if any(kind == "data" and k in deleted for k, _, kind in events[j])), None)
        if flip is None:
            break
        n = flip + 1
    return _prefix_of(sel, logs, n)


def _prefix_of(sel, logs, n: int):
    """``sel`` if it already compacts the first ``n`` logs, else the selection that does."""
    if n == len(sel.compact):
        return sel
    from .strategy import _selection

    return _selection(tuple(logs[:n]), tuple(logs[n:]))


_MISSING = object()


def _max_ordering(a, b):
    if a is None or b is None:
        return None  # unknown: every later record counts as a possible flip
    try:
        return b if b > a else a
    except TypeError:
        return None


def _smaller(o, best) -> bool:
    """Would a remaining record with ordering ``o`` lose to ``best`` (None: unknown → yes)?"""
    if o is None or best is None:
        return True
    try:
        return o < best
    except TypeError:
        return True


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
    if not storage.is_local:
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


def _planning_conflict(storage: Storage, planned_on: Timeline, instant: str) -> str | None:
    """Why the plan made from ``planned_on`` may not be published now (None: it may)."""
    now = Timeline.load(storage)
    other = [i.timestamp for i in now.pending_compactions if i.timestamp != instant]
    if other:
        return f"conflict: compaction {other[0]} was scheduled concurrently"
    seen = {i.timestamp for i in planned_on.instants if i.action in (Action.DELTA_COMMIT, Action.COMMIT, Action.REPLACE_COMMIT)}
    new = [i.timestamp for i in now.instants
           if i.action in (Action.DELTA_COMMIT, Action.COMMIT, Action.REPLACE_COMMIT) and i.timestamp not in seen]
    if new:
        return f"conflict: write {new[0]} started while the plan was being made; schedule again"
    return None


def _same_pending_plan(table: HudiTable, *, threshold_ms: int, strategy: str, exact_split: bool, link_mode: str,
                       event_time_field: str | None) -> CompactionPlan | None:
    """The pending plan a retried ``schedule`` with these settings made, if any."""
    want = {K_THRESHOLD_MS: str(threshold_ms), K_EXACT_SPLIT: "true" if exact_split else "false",
            K_LINK_MODE: link_mode, K_ET_FIELD: event_time_field or ""}
    name = EventTimeStrategy(threshold_ms).name if strategy == "event-time" else CompactAllStrategy().name
    for inst in table.timeline.pending_compactions:
        try:
            plan = read_plan(table, inst.timestamp)
        except (FileNotFoundError, InvalidTimelineError):
            continue
        if plan.extra.get(K_STRATEGY) == name and all(str(plan.extra.get(k, "")) == v for k, v in want.items()):
            return plan
    return None


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
    import pyarrow.parquet as pq

    with table.storage.open(base.path) as f:
        pf = pq.ParquetFile(f)
        if et not in pf.schema_arrow.names:
            return False
        col = pf.read(columns=[et]).column(et)
    mx = pc.max(event_time_millis(col)).as_py()
    return mx is not None and mx > threshold_ms


# ------------------------------------------------------------------ execution
@dataclass(frozen=True)
class CompactTask:
    storage: Storage
    instant: str
    op: Operation
    task_index: int
    link_mode: str
    schema_json: str
    split_threshold_ms: int | None = None  # exact split: records after it go to slice C's split log
    event_time_field: str | None = None
    precreated: bool = False  # the plan's links exist since it was scheduled (verified by execute)


def _create_once(storage: Storage, rel: str, data: bytes) -> None:
    """Create a file; a retried task may find its own identical file from an earlier attempt."""
    try:
        storage.create_if_absent(rel, data)
    except InstantExistsError:
        if storage.read_bytes(rel) != data:
            raise


def compact_task(t: CompactTask) -> list[dict]:
    """Merge one file group's base + selected logs into the new base; re-expose the rest."""
    with temp_owner(t.instant):  # its temp files carry the instant: a crashed run's are known as such
        return _compact_task(t)


def _compact_task(t: CompactTask) -> list[dict]:
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
            merged, late = _split_at_threshold(table, spec, merged, et, t.split_threshold_ms,
                                               _base_records_filterable(table, op.base_instant if op.base_file else None))
        out = write_base_table(table, rel, merged, name, t.schema_json, et)
    crashpoint("execute.after-base-file")
    log_bytes = sum(t.storage.size(op.path(n)) for n in op.compact_logs)
    st = write_stat(file_id=op.file_id, path=rel, partition_path=op.partition, prev_commit=op.base_instant,
                    num_writes=out.rows, file_size=out.size, min_event_time=out.min_event_time,
                    max_event_time=out.max_event_time)
    st.update(totalLogFilesCompacted=len(op.compact_logs), totalLogSizeCompacted=log_bytes)
    if t.split_threshold_ms is None:
        st["hoodieEtcWriterLogs"] = list(folded)  # writer logs of slice C whose live keys the base keeps
    st["runtimeStats"]["totalUpsertTime"] = int((time.monotonic() - t0) * 1000)
    stats = [st]
    if late is not None:
        stats.append(_write_split_log(t, late, et, name))
    elif t.precreated and t.split_threshold_ms is not None:
        _drop_placeholder(t.storage, op.path(split_log_name(op, t.instant)))
    for lk in op.links:
        link_rel, target_rel = op.path(lk.link), op.path(lk.target)
        if not t.storage.exists(link_rel):
            if t.precreated:
                raise InvalidTimelineError(f"re-exposed log {link_rel} of compaction {t.instant} is missing: "
                                           f"unschedule the plan and schedule again")
            # a plan of an earlier release: its links are made at execution
            markers.mark_create(t.storage, t.instant, link_rel)
            if t.link_mode == "symlink":  # straight to the real file: no chains for the cleaner to follow
                t.storage.symlink(final_target(t.storage, target_rel), link_rel)
            else:
                t.storage.copy(target_rel, link_rel)
        size = t.storage.size(link_rel)
        st = write_stat(file_id=op.file_id, path=link_rel, partition_path=op.partition, prev_commit=t.instant,
                        file_size=size if t.link_mode == "copy" else 0, base_file=name, log_files=[lk.link],
                        log_version=lf.parse_log_file_name(lk.link).version,
                        extra={"hoodieEtcLinkTarget": target_rel, "hoodieEtcLinkMode": t.link_mode})
        stats.append(st)
    return stats


def _writer_logs_in_slice(storage: Storage, op: Operation, instant: str, listing: list | None = None) -> tuple[str, ...]:
    """Logs writers put into slice C while the plan was pending (after the reserved versions)."""
    reserved = {lk.link for lk in op.links} | {split_log_name(op, instant)}
    out = []
    for f in storage.list(op.partition) if listing is None else listing:
        p = lf.parse_log_file_name(f.name)
        if p is not None and p.file_id == op.file_id and p.base_instant == instant and f.name not in reserved:
            out.append((lf.log_file_sort_key(f.name), op.path(f.name)))
    return tuple(rel for _, rel in sorted(out))


def _committed_writer_logs(table: HudiTable, op: Operation, instant: str,
                           listing: list | None = None) -> tuple[str, ...]:
    """Writer logs of slice C (see :func:`_writer_logs_in_slice`) holding a block committed on
    ``table``'s timeline: the ones a merge over that timeline reads."""
    accept = table._filter()
    out = []
    for rel in _writer_logs_in_slice(table.storage, op, instant, listing):
        try:
            data = table.storage.read_bytes(rel)
        except FileNotFoundError:  # its writer failed and was rolled back meanwhile
            continue
        if any(isinstance(b, lf.LogBlock) and b.instant_time and accept.accepts(b.instant_time)
               for b in lf.read_blocks(data)):
            out.append(rel)
    return tuple(out)


def _stale_plan_logs(table: HudiTable, plan: CompactionPlan) -> list[str]:
    """Committed logs of a planned slice that the plan neither compacts nor re-exposes.

    Only a write that raced the scheduler (it did not see the plan, so it wrote into the old
    slice, after the plan's listing) leaves one; executing would drop it from the new slice.
    """
    accept = table._filter()
    listings: dict[str, list] = {}
    out = []
    for op in plan.operations:
        if op.partition not in listings:
            listings[op.partition] = table.storage.list(op.partition)
        known = set(op.compact_logs) | {lk.target for lk in op.links}
        for f in listings[op.partition]:
            p = lf.parse_log_file_name(f.name)
            if p is None or p.file_id != op.file_id or p.base_instant != op.base_instant or f.name in known:
                continue
            try:
                blocks = lf.read_blocks(table.storage.read_bytes(f.path))
            except FileNotFoundError:
                continue
            if any(isinstance(b, lf.LogBlock) and b.instant_time and accept.accepts(b.instant_time) for b in blocks):
                out.append(f.path)
    return out


def _base_records_filterable(table: HudiTable, base_instant: str | None) -> bool:
    """May an exact split leave this slice's base records after the threshold out of the new base?

    Only for a base file a write made (inserts: each record is its key's first version here). A
    base file a compaction made (ours, plain or exact, or Java's) stands for its keys' folded
    history: a plain compaction kept only each key's merged record, so a record there after the
    threshold may be the only one left of versions up to it. It stays (RO then holds a version
    newer than the threshold for that key, never none: the guarantee is kept, exactness is not
    for those keys)."""
    if not base_instant:
        return True
    return not any(i.timestamp == base_instant for i in table.timeline.completed_compactions)


def _split_at_threshold(table: HudiTable, spec: SliceReadSpec, merged: pa.Table, et: str, threshold_ms: int,
                        base_filterable: bool = True):
    """Exact split of one merged slice: (rows for the base file, blocks for the split log or None).

    Keys whose merged record has event time > threshold are *late*. The base file gets instead
    their latest version with event time ≤ threshold, i.e. the merge of only those records
    (deletes still apply), if any. The split log gets, per late key and in log order, what a later
    split needs to find its latest version up to any later threshold, and what makes its merge
    the key's merged record: its delete records, the version the base keeps (when it is a log
    record) and its data records after the threshold — records in between up to the threshold
    lose to the kept version under the merge rules, so they may go. A late record of a base file
    a write made goes first when no later record of the key has a smaller ordering value (it then
    merges as it did as a base record). The split log precedes the remaining logs in slice C, so
    the snapshot is unchanged while the base holds nothing after the threshold (see
    :func:`_base_records_filterable` for the exception).
    """
    et_ms = event_time_millis(merged.column(et))
    is_late = pc.fill_null(pc.greater(et_ms, pa.scalar(threshold_ms, pa.int64())), False)
    if not pc.any(is_late).as_py():
        return merged, None
    th = pa.scalar(threshold_ms, pa.int64())
    late = merged.filter(is_late)
    late_keys = late.column(RECORD_KEY)
    keep = merged.filter(pc.invert(is_late))

    def log_ok(t: pa.Table) -> pa.Array:
        ms = event_time_millis(t.column(et))
        return pc.fill_null(pc.less_equal(ms, th), True)

    def base_ok(base: pa.Table) -> pa.Table:
        if et not in base.column_names:
            return base
        ms = event_time_millis(base.column(et))
        return base.filter(pc.fill_null(pc.less_equal(ms, th), True))

    earlier = table.read_slice(spec, log_record_filter=log_ok, base_filter=base_ok if base_filterable else None,
                               skip_base_columns=(FILE_NAME,))
    earlier = earlier.filter(pc.fill_null(pc.is_in(earlier.column(RECORD_KEY), value_set=late_keys), False))
    base_rows = pa.concat_tables([keep, earlier.select(keep.column_names).cast(keep.schema)])
    return base_rows, _split_log_blocks(table, spec, late, earlier, et, threshold_ms, base_filterable)


def _split_log_blocks(table: HudiTable, spec: SliceReadSpec, late: pa.Table, kept: pa.Table, et: str,
                      threshold_ms: int, base_filterable: bool) -> list[tuple[str, Any]]:
    """The split log's blocks (see :func:`_split_at_threshold`): ``("data", table)`` and
    ``("delete", [DeleteRecord])`` in log order."""
    from ..hudi.merge import BlockDecoder, queue_blocks
    from ..hudi.schema import COMMIT_SEQNO, COMMIT_TIME

    schema = late.schema
    late_keys = set(late.column(RECORD_KEY).to_pylist())
    kept_ids = set(zip(kept.column(RECORD_KEY).to_pylist(), kept.column(COMMIT_TIME).to_pylist(),
                       kept.column(COMMIT_SEQNO).to_pylist()))
    pre = table.config.precombine_field
    decoder = BlockDecoder(table.arrow_schema)
    out: list[tuple[str, Any]] = []
    has_log: set = set()
    min_ord: dict = {}
    for b in queue_blocks(table.read_log_files(spec.log_paths), table._filter()):
        if b.block_type == lf.BlockType.DELETE:
            ds = [d for d in lf.decode_delete_records(b.content) if d.record_key in late_keys]
            if ds:
                has_log.update(d.record_key for d in ds)
                out.append(("delete", ds))
            continue
        t = decoder.table(b)
        if not t.num_rows:
            continue
        t = t.filter(pc.fill_null(pc.is_in(t.column(RECORD_KEY), value_set=late.column(RECORD_KEY)), False))
        if not t.num_rows:
            continue
        after = pc.fill_null(pc.greater(event_time_millis(t.column(et)), pa.scalar(threshold_ms, pa.int64())), False) \
            if et in t.column_names else pa.array([True] * t.num_rows)
        ids = zip(t.column(RECORD_KEY).to_pylist(), t.column(COMMIT_TIME).to_pylist(), t.column(COMMIT_SEQNO).to_pylist())
        mask = [a or i in kept_ids for a, i in zip(after.to_pylist(), ids)]
        t = t.filter(pa.array(mask, pa.bool_()))
        if not t.num_rows:
            continue
        keys = t.column(RECORD_KEY).to_pylist()
        has_log.update(keys)
        if pre and pre in t.column_names:
            for k, o in zip(keys, t.column(pre).to_pylist()):
                if o is not None and (k not in min_ord or o < min_ord[k]):
                    min_ord[k] = o
        out.append(("data", conform_to(t, schema)))
    # late records of the slice's base file: first, where they merge as they did as base records
    from_base = []
    for r in late.to_pylist():
        k = r[RECORD_KEY]
        if k not in has_log:
            from_base.append(r)  # no log record of the key: the merged record is the base record
    if base_filterable and spec.base_path and et:
        base = table._read_base(spec.base_path, (FILE_NAME,))
        base = base.filter(pc.fill_null(pc.is_in(base.column(RECORD_KEY), value_set=late.column(RECORD_KEY)), False))
        if base.num_rows and et in base.column_names:
            base = base.filter(pc.fill_null(pc.greater(event_time_millis(base.column(et)),
                                                       pa.scalar(threshold_ms, pa.int64())), False))
            eto = table.config.event_time_ordering
            for r in conform_to(base, schema).to_pylist():
                k, o = r[RECORD_KEY], r.get(pre) if pre else None
                # event-time ordering compares base and log records as the log fold does; with
                # overwrite-latest a log record replaces the base whatever its ordering value
                if k in has_log and (eto or (o is not None and (k not in min_ord or o <= min_ord[k]))):
                    from_base.append(r)
    if from_base:
        out.insert(0, ("data", pa.Table.from_pylist(from_base, schema=schema)))
    return out


def conform_to(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """``t`` with ``schema``'s columns (missing ones null), in its order and types."""
    cols = [t.column(f.name).cast(f.type) if f.name in t.column_names else pa.nulls(t.num_rows, f.type)
            for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def _is_placeholder(storage: Storage, rel: str) -> bool:
    """An empty regular file: the split placeholder a plan holds version 1 with."""
    try:
        return storage.readlink(rel) is None and storage.size(rel) == 0
    except FileNotFoundError:
        return False


def _drop_placeholder(storage: Storage, rel: str) -> None:
    """No record of this slice is after the threshold: its empty split placeholder goes (a
    rollback of this execution makes it again)."""
    try:
        if storage.readlink(rel) is None and storage.size(rel) == 0:
            storage.delete(rel)
    except FileNotFoundError:
        pass


def _write_split_log(t: CompactTask, blocks: list[tuple[str, Any]], et: str, base_name: str) -> dict:
    op = t.op
    name = split_log_name(op, t.instant)
    rel = op.path(name)
    parts, rows, ets = [], 0, []
    for kind, content in blocks:
        if kind == "delete":
            parts.append(lf.encode_delete_block(t.instant, t.schema_json, content))
            continue
        content = content.set_column(content.schema.get_field_index(FILE_NAME), FILE_NAME,
                                     pa.array([op.file_id] * content.num_rows, pa.string()))
        parts.append(lf.encode_data_block(t.instant, t.schema_json, content.to_pylist(maps_as_pydicts="strict")))
        rows += content.num_rows
        ets.append(event_time_millis(content.column(et)))
    data = b"".join(parts)
    markers.mark_create(t.storage, t.instant, rel)
    if t.precreated:  # replaces the empty placeholder that has held version 1 since scheduling
        if t.storage.exists(rel) and t.storage.size(rel) not in (0, len(data)):
            raise InvalidTimelineError(f"{rel} holds something other than this plan's placeholder")
        t.storage.write_atomic(rel, data)
    else:
        _create_once(t.storage, rel, data)
    crashpoint("execute.after-split-log")
    # the event-time range of what the base lacks: the records after the threshold (the versions
    # up to it that the log also holds are in the base too)
    all_et = pa.chunked_array(ets, pa.int64()) if ets else pa.chunked_array([], pa.int64())
    after = all_et.filter(pc.fill_null(pc.greater(all_et, pa.scalar(t.split_threshold_ms, pa.int64())), False))
    mm = pc.min_max(after if len(after) else all_et)
    return write_stat(file_id=op.file_id, path=rel, partition_path=op.partition, prev_commit=t.instant,
                      num_writes=rows, file_size=len(data), base_file=base_name, log_files=[name],
                      log_version=SPLIT_LOG_VERSION, min_event_time=mm["min"].as_py(), max_event_time=mm["max"].as_py(),
                      extra={"hoodieEtcSplitLog": True})


def _verify_links(storage: Storage, plan: CompactionPlan) -> None:
    """Execute verifies, never trusts: every link name must hold our byte-identical copy of its
    target, or be our symlink to it; the exact-split placeholder must be empty (or hold a split
    log an earlier attempt wrote). Anything else (a Java rollback block, a file put there by hand)
    is a typed error, before anything is written."""
    mode = plan.extra.get(K_LINK_MODE, "copy")
    for link, target in _plan_link_files(plan):
        if target is None:
            continue  # the split placeholder (an earlier attempt may have dropped it): checked when written
        if not storage.exists(link):
            raise InvalidTimelineError(f"re-exposed log {link} of compaction {plan.instant} is missing: unschedule "
                                       f"the plan and schedule again")
        if mode == "symlink":
            got = link_target(storage, link)
            if got is not None and final_target(storage, link) == final_target(storage, target):
                continue
        elif storage.readlink(link) is None and storage.size(link) == storage.size(target) \
                and storage.read_bytes(link) == storage.read_bytes(target):
            continue
        raise InvalidTimelineError(
            f"{link} is not this plan's {'symlink' if mode == 'symlink' else 'copy'} of {target}: another writer put "
            f"a different file under that name; nothing was executed. Unschedule the plan and schedule again")


def execute(path: str | Storage, *, instant: str | None = None, engine=None,
            storage_options: Mapping[str, Any] | None = None) -> dict:
    with contextlib.ExitStack() as held:  # the execution's heartbeat, released at its end
        return _execute(path, instant=instant, engine=engine, storage_options=storage_options, held=held)


def _execute(path: str | Storage, *, instant: str | None, engine, storage_options: Mapping[str, Any] | None,
             held: contextlib.ExitStack) -> dict:
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    t0 = time.monotonic()
    table = HudiTable.load_writable(storage)
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
        return {"instant": instant, "status": "already completed", **_metrics(meta)}
    plan = read_plan(table, instant)
    stale = _stale_plan_logs(table, plan)
    if stale:
        raise InvalidTimelineError(
            f"compaction plan {instant} is stale: {stale[0]} was committed into a planned slice after the plan "
            f"was made (a write raced the scheduler); executing would drop it. Readers still see it while the "
            f"plan is pending: unschedule the plan and schedule again")
    listed: dict[str, set[str]] = {}  # one listing per folder, to find inputs that are gone
    for op in plan.operations:  # a planted symlink must not make the compaction read outside the table
        for name in ([op.base_file] if op.base_file else []) + list(op.compact_logs) + [lk.target for lk in op.links]:
            final = final_target(storage, op.path(name))  # UnsafePathError for a link that leaves the table
            _check_input_file(storage, final, listed, is_base=name == op.base_file)  # before inflight
    if (plan.extra.get(K_LINK_MODE) == "symlink" and not storage.supports_symlinks
            and any(op.links for op in plan.operations)):  # refused before anything is written
        raise UnsupportedFeatureError(f"compaction plan {instant} re-exposes logs by symlink, which "
                                      f"{storage.protocol} storage does not have: unschedule it and schedule "
                                      f"again with link mode copy (or auto)")
    # one execution of a plan at a time: another one's live heartbeat is a typed conflict (an
    # inflight plan is a crashed run's only once its heartbeat expired)
    hb = held.enter_context(heartbeat.hold(storage, instant, what="compaction execution"))
    heartbeat.remove_stale_temp_files(storage, [META_DIR, *sorted({op.partition for op in plan.operations})],
                                      own=instant)
    if links_precreated(plan):
        _verify_links(storage, plan)
    if insts[0].state is State.INFLIGHT:
        rollback(storage, instant=instant)
    inflight = Instant(instant, Action.COMPACTION, State.INFLIGHT)
    storage.create_if_absent(inflight.path(), b"")
    crashpoint("execute.after-inflight")
    mode = plan.extra.get(K_LINK_MODE, "copy")
    schema_json = json.dumps(table.avro_schema_with_meta, separators=(",", ":"))
    split_ms = int(plan.extra[K_THRESHOLD_MS]) if is_exact_split(plan) and K_THRESHOLD_MS in plan.extra else None
    et_field = plan.extra.get(K_ET_FIELD) or None
    pre = links_precreated(plan)
    tasks = [CompactTask(storage, instant, op, i, mode, schema_json, split_ms, et_field, pre)
             for i, op in enumerate(plan.operations)]
    engine = engine or LocalEngine()
    results = engine.map(compact_task, tasks)
    crashpoint("execute.before-commit")
    if split_ms is None:
        results = _refold_writer_logs(storage, instant, engine, tasks, results)
    p2s: dict[str, list[dict]] = {}
    for stats in results:
        for st in stats:
            p2s.setdefault(st["partitionPath"], []).append(st)
    links = [{"link": op.path(lk.link), "target": op.path(lk.target)} for op in plan.operations for lk in op.links]
    all_stats = [st for stats in results for st in stats]
    # a re-exposed log keeps its target's event range (the next plan needs it): merged over every
    # stat of the target (a log appended to across deltacommits has one per append)
    ranges = log_event_ranges(table)
    for st in all_stats:
        src = ranges.get(st.get("hoodieEtcLinkTarget") or "")
        if src is not None and src.min_ms is not None:
            st["minEventTime"], st["maxEventTime"] = src.min_ms, src.max_ms
    links += [{"link": st["path"], "target": None, "kind": "split"} for st in all_stats if st.get("hoodieEtcSplitLog")]
    extra = {k: v for k, v in plan.extra.items() if k.startswith(keys.PREFIX)}
    extra[K_LINKS] = json.dumps(links)
    extra.update(_execution_figures(table, plan, all_stats, ranges))
    extra[K_EXECUTION] = f"{time.monotonic() - t0:.3f}"
    meta = commit_metadata(p2s, operation="COMPACT", schema=json.dumps(table.avro_schema, separators=(",", ":")),
                           compacted=True, extra_metadata=extra)
    markers.verify_written(storage, instant, all_stats)  # every file the commit names is there, as written
    hb.check()  # and this is still the one execution of the plan
    storage.create_if_absent(inflight.path(State.COMPLETED), dump_commit_metadata(meta))
    markers.remove_markers(storage, instant)
    return {"instant": instant, "status": "completed", **_metrics(meta)}


def _check_input_file(storage: Storage, rel: str, listed: dict[str, set[str]], *, is_base: bool) -> None:
    """An input of the plan that is gone (a deleted log, a symlink whose target is gone) is a
    typed error before execute writes anything (one listing per folder); so is, on local storage,
    a base file whose Parquet footer does not read (on object stores that costs a request per
    file: a damaged base file is then found by its task, a typed error too)."""
    import pyarrow.parquet as pq

    from ..hudi.errors import CorruptDataFileError, MissingDataFileError

    folder, name = posixpath.split(rel)
    if folder not in listed:
        listed[folder] = set(storage.list(folder, names_only=True))
    if name not in listed[folder]:
        raise MissingDataFileError(f"{rel} is missing (deleted, or a symlink whose target is gone): "
                                   f"the plan cannot be executed; unschedule it and schedule again")
    if is_base and storage.is_local:
        try:
            pq.read_metadata(storage.full(rel))
        except (pa.ArrowInvalid, OSError) as e:
            raise CorruptDataFileError(f"base file {rel} is not readable Parquet: {str(e)[:200]}") from None


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
            if now != set(stats[0].get("hoodieEtcWriterLogs") or ()):
                redo.append(i)
        if not redo:
            return results
        for i in redo:
            storage.delete(results[i][0]["path"])  # the base file (not visible: the compaction is inflight)
        for i, stats in zip(redo, engine.map(compact_task, [tasks[i] for i in redo])):
            results[i] = stats
    raise InvalidTimelineError(f"writers kept committing into slice {instant} during its execution: run execute again")


def _execution_figures(table: HudiTable, plan: CompactionPlan, stats: list[dict],
                       ranges: Mapping[str, Any]) -> dict[str, str]:
    """What the commit records for metrics and the report (extra metadata is string → string).
    ``ranges``: :func:`~airflow_hudi_etc.hudi.stats.log_event_ranges` of the table."""
    remaining = [op.path(lk.target) for op in plan.operations for lk in op.links]
    los = []
    for rel in remaining:
        r = ranges.get(rel)
        if r is not None and r.min_ms is not None:
            los.append(int(r.min_ms))
    split = [s for s in stats if s.get("hoodieEtcSplitLog")]
    los += [int(s["minEventTime"]) for s in split if s.get("minEventTime") is not None]
    return {
        K_COMPACTED_LOGS: str(sum(len(op.compact_logs) for op in plan.operations)),
        K_COMPACTED_BYTES: str(sum(s.get("totalLogSizeCompacted", 0) for s in stats)),
        K_REMAINING_FILES: str(len(remaining) + len(split)),
        K_REMAINING_BYTES: str(sum(s.get("fileSizeInBytes", 0) for s in split)
                               + sum(table.storage.size(r) for r in remaining)),
        K_REMAINING_MIN_ET: str(min(los)) if los else "",
        K_LINK_BYTES: str(sum(s.get("fileSizeInBytes", 0) for s in stats if "hoodieEtcLinkTarget" in s)),
        K_SPLIT_RECORDS: str(sum(s.get("numWrites", 0) for s in split)),
    }


def _metrics(meta: Mapping) -> dict:
    extra = meta.get("extraMetadata") or {}
    stats = [s for v in (meta.get("partitionToWriteStats") or {}).values() for s in v]

    def num(key: str, cast=int):
        v = extra.get(key)
        return cast(v) if v not in (None, "") else None

    th = num(K_THRESHOLD_MS)
    return {
        "threshold": extra.get(K_THRESHOLD),
        "threshold_ms": th,
        "exact_split": extra.get(K_EXACT_SPLIT) == "true",
        "link_mode": extra.get(K_LINK_MODE),
        "event_time_source": extra.get(K_SOURCE),
        "base_files_written": sum(1 for s in stats if s.get("path", "").endswith(".parquet")),
        "logs_compacted": sum(s.get("totalLogFilesCompacted", 0) for s in stats),
        "logs_compacted_bytes": num(K_COMPACTED_BYTES),
        "logs_remaining": sum(1 for s in stats if "hoodieEtcLinkTarget" in s),
        "split_log_records": num(K_SPLIT_RECORDS) or 0,
        "remaining_log_files": num(K_REMAINING_FILES),
        "remaining_log_bytes": num(K_REMAINING_BYTES),
        "remaining_min_event_time_ms": num(K_REMAINING_MIN_ET),
        "remaining_min_event_time": iso_ms(num(K_REMAINING_MIN_ET)),
        "link_bytes_written": sum(s.get("fileSizeInBytes", 0) for s in stats if "hoodieEtcLinkTarget" in s),
        "planning_seconds": num(K_PLANNING, float),
        "execution_seconds": num(K_EXECUTION, float) or 0.0,
    }


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


def rollback(path: str | Storage, *, instant: str, storage_options: Mapping[str, Any] | None = None) -> dict:
    """Undo a failed/inflight execution: its base files, links and copies; back to requested."""
    storage, table, insts = _compaction_instants(path, instant, storage_options)
    if not insts:
        writes = [i for i in table.timeline.get(instant) if i.action is Action.DELTA_COMMIT and i.is_pending]
        if writes:  # a crashed writer's deltacommit: what the next write would roll back
            from ..hudi.writer import rollback_write

            removed = rollback_write(storage, instant)
            return {"instant": instant, "status": "rolled back", "action": "deltacommit", "files_removed": removed}
        return {"instant": instant, "status": "nothing to roll back"}
    if insts[0].is_completed:
        raise InvalidTimelineError(f"compaction {instant} is completed; it cannot be rolled back here")
    plan = read_plan(table, instant)
    with heartbeat.hold(storage, instant, what="compaction execution"):  # not under a running execution
        return _rollback_execution(storage, instant, plan, requested=insts[0].state is State.REQUESTED)


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
                if not (links_precreated(plan) and _is_placeholder(storage, rel))]
    if requested:
        # never executed, or already rolled back (a retry): execute writes its inflight file
        # before any data file and a rollback removes it last, so there is nothing to undo and
        # no rollback instant to record (the plan's paths were checked above all the same)
        return {"instant": instant, "status": "requested", "files_removed": 0, "rollback_instant": None}
    for rel in markers.files_to_roll_back(storage, instant, owned_only=False):  # what its markers name
        out = files.setdefault(posixpath.dirname(rel), [])
        if rel not in out:
            out.append(rel)
    # recorded as a rollback instant, as Hudi does (hudi/rollback.py); then back to requested
    rb, removed = rollback_with_instant(storage, instant=instant, action=Action.COMPACTION, files=files,
                                       after_delete=lambda: crashpoint("rollback.after-file-removed"))
    if links_precreated(plan):  # the requested plan's split placeholder (and any link lost) again
        _create_links(storage, plan, plan.extra.get(K_LINK_MODE, "copy"), missing_only=True)
    crashpoint("rollback.before-inflight-removed")
    markers.remove_markers(storage, instant)
    heartbeat.remove_stale_temp_files(storage, sorted(files), own=instant)
    storage.delete(Instant(instant, Action.COMPACTION, State.INFLIGHT).path())
    return {"instant": instant, "status": "requested", "files_removed": removed, "rollback_instant": rb}


def unschedule(path: str | Storage, *, instant: str, storage_options: Mapping[str, Any] | None = None) -> dict:
    storage, table, insts = _compaction_instants(path, instant, storage_options)
    if not insts:
        # a crashed unschedule (or schedule) may have left the plan's .aux copy and its links in
        # slice C (on no timeline, so invisible): finish the job
        storage.delete(f"{AUX_DIR}/{Instant(instant, Action.COMPACTION, State.REQUESTED).file_name()}")
        orphans = _remove_orphan_links(table, only_instant=instant)
        return {"instant": instant, "status": "not scheduled", "links_removed": len(orphans)}
    if insts[0].state is not State.REQUESTED:
        raise InvalidTimelineError(f"compaction {instant} is {insts[0].state.name.lower()}: roll it back first")
    plan = read_plan(table, instant)
    ours = {link for link, _ in _plan_link_files(plan)} if links_precreated(plan) else set()
    others = [lg.path for lg in table.file_system_view().all_log_files()
              if lg.base_instant == instant and lg.path not in ours]
    if others:
        raise InvalidTimelineError(
            f"slice {instant} holds {len(others)} log file(s) other writers wrote while the plan was pending "
            f"({', '.join(others[:5])}{'...' if len(others) > 5 else ''}): unscheduling would hide them from every "
            f"reader. Execute the plan instead")
    req = Instant(instant, Action.COMPACTION, State.REQUESTED)
    storage.delete(req.path())
    crashpoint("unschedule.after-requested-removed")
    storage.delete(f"{AUX_DIR}/{req.file_name()}")
    # slice C is on no timeline now: its links are invisible; remove them (a crash here leaves
    # orphans that validate reports and the next schedule removes)
    _delete_all(storage, sorted(ours))
    return {"instant": instant, "status": "unscheduled", "links_removed": len(ours)}
