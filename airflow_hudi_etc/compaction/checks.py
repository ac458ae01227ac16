"""The read-only questions the Airflow side asks of a table (through ``table.compaction``): the
event-time check of the sensor and its trigger, the pending plans with their thresholds, one
compaction's state, the published threshold. Each reads one loaded :class:`HudiTable`."""

from __future__ import annotations

from ..hudi.index.stats import iso_ms
from ..hudi.protocol.etc_metadata import PlanExtra
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline.active import Action, State
from .intents import finish_stale_intents
from .plans import read_plan
from .results import EventTimeCheck, Outcome, PendingPlan, PublishedThreshold
from .scheduling import plan_decision
from .readiness import last_threshold


def event_time_check(table: HudiTable, *, threshold_ms: int) -> EventTimeCheck:
    """The sensor's answer for ``threshold_ms``, made by the one decision ``schedule`` makes
    (:func:`~.scheduling.plan_decision`). It first finishes what a killed schedule left (one listing
    of the intent folder when there is nothing to do): Java's archiver may pass slice C before our
    next command runs."""
    finish_stale_intents(table.storage, table.config)
    d = plan_decision(table, threshold_ms=threshold_ms)
    r = d.readiness
    if d.outcome is Outcome.ALREADY_SCHEDULED:
        return EventTimeCheck("resume", f"resume: compaction {d.instant} was planned for this very threshold by an "
                                        f"earlier attempt; it will be reused and executed", r, d.instant, d.operations)
    if d.outcome is Outcome.READY:
        return EventTimeCheck("ready", "ready: no pending compaction or clustering, threshold moves forward", r)
    if d.outcome is Outcome.COVERED:
        return EventTimeCheck("covered", f"covered: the last event-time compaction ({r.last_compaction_instant}) "
                                         f"already published threshold {r.last_threshold} >= {r.threshold}; nothing "
                                         f"to do for this run (backfill no-op)", r)
    return EventTimeCheck("waiting", f"waiting: {r.reason}", r)


def pending_plans(table: HudiTable) -> list[PendingPlan]:
    """Pending compactions, oldest first, with the threshold their plan carries (None: not ours)."""
    out = []
    for inst in table.timeline.pending_compactions:
        state = inst.state.name.lower()
        try:
            plan = read_plan(table, inst.timestamp)
        except Exception:  # unreadable plan: still pending (and blocking); the job will report it
            out.append(PendingPlan(inst.timestamp, state))
            continue
        x = PlanExtra.from_extra(plan.extra)
        out.append(PendingPlan(inst.timestamp, state, x.threshold_ms, iso_ms(x.threshold_ms), x.strategy,
                               x.exact_split, len(plan.operations)))
    return out


def compaction_state(table: HudiTable, instant: str) -> str | None:
    """``requested`` / ``inflight`` / ``completed`` of compaction ``instant``; None when absent."""
    for i in table.timeline.get(instant):
        if i.action is Action.COMPACTION:
            return {State.REQUESTED: "requested", State.INFLIGHT: "inflight", State.COMPLETED: "completed"}[i.state]
    return None


def read_published_threshold(table: HudiTable) -> PublishedThreshold:
    """The threshold of the latest completed event-time compaction, resets applied."""
    ms, inst = last_threshold(table)
    return PublishedThreshold(ms, iso_ms(ms), inst)
