"""Readiness, the EVENT_TIME trigger: may an event-time compaction with this threshold be planned now?

One pure decision, shared by ``schedule`` (which then plans), the Airflow sensor's ``poke`` and
its deferrable trigger. It needs one listing of ``.hoodie/`` plus reads of the pending
replacecommit requests (to tell clustering from other replaces) and of the newest completed
compaction commits (until one carries a threshold): never a per-instant scan of the timeline.
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import asdict, dataclass
from typing import Any, Mapping

from ..hudi.protocol.etc_metadata import PlanExtra
from ..hudi.errors import InvalidInputError
from ..hudi.format import ARCHIVED_LOG, LSM_HISTORY
from ..hudi.index.stats import iso_ms, pending_clustering
from ..hudi.storage import Storage
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline.active import AUX_DIR, INSTANT_TIME


#: where ``hudi-etc reset-threshold`` (:mod:`.threshold_reset`) records a lowered threshold
RESET_DIR = f"{AUX_DIR}/hudi-etc/threshold-resets"
_RESET_NAME = re.compile(rf"({INSTANT_TIME})_(-?\d{{1,19}})\.json")


def resets_of(storage: Storage, instant: str) -> list[int]:
    """The thresholds (ms) recorded for compaction ``instant`` by resets (one listing)."""
    out = []
    for name in storage.list(RESET_DIR, names_only=True):
        m = _RESET_NAME.fullmatch(name)
        if m and m.group(1) == instant:
            out.append(int(m.group(2)))
    return out


def published_threshold(table: HudiTable) -> tuple[int | None, str | None, dict]:
    """(threshold ms, instant, extra metadata) the latest completed event-time compaction
    published in its commit, or (None, None, {}); resets not applied."""
    for inst in table.timeline.completed_compactions_newest_first():
        extra = table.commit_metadata(inst).get("extraMetadata") or {}
        v = PlanExtra.from_extra(extra).threshold_ms
        if v is None:
            v = _plan_threshold(table, inst.timestamp)
        if v is not None:
            return v, inst.timestamp, extra
    return _ARCHIVED_THRESHOLD[table.profile.archive_format](table)


def _archived_threshold_v6(table: HudiTable) -> tuple[int | None, str | None, dict]:
    """Version 6: the threshold of the latest compaction Java archived into ``.hoodie/archived/``
    (our commit's extra metadata, else its archived plan's), when no active compaction carries
    one. Only an instant the archive holds as completed counts."""
    from ..hudi.timeline.archive_v6 import archive_dir, read_archived_entries

    entries = read_archived_entries(table.storage, archive_dir(table.config))
    done = {e.instant for e in entries if e.is_completed and e.action == "commit"}
    best: tuple[int | None, str | None, dict] = (None, None, {})
    for e in entries:
        if e.instant not in done or e.action not in ("commit", "compaction"):
            continue
        v = PlanExtra.from_extra(e.extra).threshold_ms
        if v is not None and (best[1] is None or e.instant > best[1]):
            best = (v, e.instant, dict(e.extra))
    return best


def _archived_threshold_lsm(table: HudiTable) -> tuple[int | None, str | None, dict]:
    """Versions 8/9: the threshold of the latest compaction Java archived into the LSM history
    (``.hoodie/timeline/history/``, spec §2.6), when no active compaction carries one: its row's
    ``metadata`` is the Avro commit (our extra metadata), its ``plan`` the requested plan."""
    from ..hudi.timeline.commits import decode_avro_commit
    from ..hudi.errors import HudiEtcError
    from ..hudi.protocol.plan import CompactionPlan
    from ..hudi.timeline.timeline_v2 import read_lsm_instants

    hist = table.config.history_dir
    if not hist:
        return None, None, {}
    rows = [r for r in read_lsm_instants(table.storage, hist)
            if r.get("instantTime") and r.get("action") in ("commit", "compaction")]
    for r in sorted(rows, key=lambda r: r["instantTime"], reverse=True):
        extra: dict = {}
        compacted = r.get("plan") is not None
        if r.get("metadata"):
            try:
                meta = decode_avro_commit(r["metadata"], f"archived commit {r['instantTime']}")
            except (HudiEtcError, ValueError):
                meta = {}
            extra = dict(meta.get("extraMetadata") or {})
            compacted = compacted or bool(meta.get("compacted")) or meta.get("operationType") == "COMPACT"
        if not compacted:
            continue
        v = PlanExtra.from_extra(extra).threshold_ms
        if v is None and r.get("plan"):
            try:
                v = PlanExtra.from_extra(CompactionPlan.from_bytes(r["instantTime"], r["plan"]).extra).threshold_ms
            except (HudiEtcError, ValueError, TypeError):
                v = None
        if v is not None:
            return v, r["instantTime"], extra
    return None, None, {}


#: the archive format of the table's profile → the reader of the latest archived threshold
_ARCHIVED_THRESHOLD = {ARCHIVED_LOG: _archived_threshold_v6, LSM_HISTORY: _archived_threshold_lsm}


def threshold_info(table: HudiTable) -> tuple[int | None, str | None, int | None]:
    """(threshold ms, instant, published ms if a reset lowered it else None) of the latest
    completed event-time compaction, resets (``hudi-etc reset-threshold``) applied."""
    ms, inst, _ = published_threshold(table)
    if ms is None:
        return None, None, None
    lowered = min([ms] + resets_of(table.storage, inst))
    return lowered, inst, (ms if lowered < ms else None)


def last_threshold(table: HudiTable) -> tuple[int | None, str | None]:
    """(threshold ms, instant) of the latest completed event-time compaction, or (None, None);
    a threshold lowered by ``hudi-etc reset-threshold`` counts as lowered."""
    ms, inst, _ = threshold_info(table)
    return ms, inst


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MIN_MS = -62_135_596_800_000  # 0001-01-01T00:00:00Z


def _plan_threshold(table: HudiTable, instant: str) -> int | None:
    """The threshold in the plan of a compaction whose commit does not carry one: our plan,
    executed by Java's compactor (its slice C is correct: the re-exposed logs were created before
    the plan was published, so the threshold holds as planned)."""
    from ..hudi.errors import HudiEtcError
    from ..hudi.protocol.plan import read_plan

    try:
        return PlanExtra.from_extra(read_plan(table.storage, instant).extra).threshold_ms
    except (FileNotFoundError, HudiEtcError):
        return None


def threshold_ms_for(compaction_time: _dt.datetime, data_latency: _dt.timedelta) -> int:
    """``compaction_time − data_latency`` in epoch ms (integer arithmetic: exact before 1970 too);
    :class:`InvalidInputError` when it falls before year 1."""
    ct = compaction_time  # plain datetime/timedelta arithmetic (pendulum's types divide differently)
    ct = _dt.datetime(ct.year, ct.month, ct.day, ct.hour, ct.minute, ct.second, ct.microsecond,
                      tzinfo=ct.tzinfo or _dt.timezone.utc)
    if type(data_latency) is not _dt.timedelta:
        data_latency = _dt.timedelta(seconds=data_latency.total_seconds())
    try:
        ms = (ct - _EPOCH) // _dt.timedelta(milliseconds=1) - data_latency // _dt.timedelta(milliseconds=1)
    except OverflowError:
        raise InvalidInputError(f"threshold {ct.isoformat()} − {data_latency} is out of range") from None
    if ms < _MIN_MS:
        raise InvalidInputError(f"threshold {ct.isoformat()} − {data_latency} falls before year 1")
    return ms


@dataclass(frozen=True)
class Readiness:
    """Outcome of the trigger check. ``ready``: a plan may be made now. ``covered``: the last
    completed compaction's threshold is already ≥ the requested one (a backfill run that has
    nothing to do: done, not waiting)."""

    ready: bool
    covered: bool
    reason: str
    threshold_ms: int
    threshold: str
    last_threshold_ms: int | None
    last_threshold: str | None
    last_compaction_instant: str | None
    pending_compactions: tuple[str, ...]
    pending_clustering: tuple[str, ...]

    def as_dict(self) -> dict:
        d = asdict(self)
        d["pending_compactions"] = list(self.pending_compactions)
        d["pending_clustering"] = list(self.pending_clustering)
        return d


def check_readiness(
    path: str | Storage | HudiTable,
    *,
    threshold_ms: int,
    storage_options: Mapping[str, Any] | None = None,
    check_pending_writes: bool = False,
) -> Readiness:
    """Pending compaction or clustering → wait; threshold not past the last one → covered;
    otherwise ready. (Whether any log qualifies is known only while planning.) A table with a
    metadata table is ready like any other: the Spark-hosted jobs keep it exact, other runs refuse.

    Resets (``hudi-etc reset-threshold``) only lower the last threshold, so they are looked up
    (one more, small listing) only when the requested threshold is not past the published one:
    otherwise the poke stays one listing of ``.hoodie/`` and ``last_threshold`` is the published
    value."""
    table = path if isinstance(path, HudiTable) else HudiTable.load(path, storage_options)
    tl = table.timeline
    pc = tuple(i.timestamp for i in tl.pending_compactions)
    cl = tuple(pending_clustering(table))
    last, last_inst, _ = published_threshold(table)
    if last is not None and threshold_ms <= last:
        last = min([last] + resets_of(table.storage, last_inst))

    def r(ready: bool, covered: bool, reason: str) -> Readiness:
        return Readiness(ready, covered, reason, threshold_ms, iso_ms(threshold_ms), last, iso_ms(last),
                         last_inst, pc, cl)

    if pc:
        return r(False, False, f"pending compaction {pc[0]}")
    if cl:
        return r(False, False, f"pending clustering {cl[0]}")
    if check_pending_writes and tl.pending_writes:
        from ..hudi.write.undo import stuck_write_detail, stuck_writes

        stuck = stuck_writes(table.storage, tl)
        if stuck:  # Java's next write will not roll it back: say what will
            return r(False, False, stuck_write_detail(stuck[0][0].timestamp, stuck[0][1]))
        return r(False, False, f"pending write {tl.pending_writes[0].timestamp}: roll it back or let it finish first")
    if last is not None and threshold_ms <= last:
        return r(False, True, f"threshold {iso_ms(threshold_ms)} is not past the last compacted threshold {iso_ms(last)}")
    return r(True, False, "ready")
