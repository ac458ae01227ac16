"""What the compaction service answers: ``schedule``'s :class:`ScheduleResult` with its typed
:class:`Outcome`, the one plan decision (:class:`PlanDecision`), the event-time check the Airflow
sensor makes from it (:class:`EventTimeCheck`), a pending plan with what it carries
(:class:`PendingPlan`), the published threshold (:class:`PublishedThreshold`), and the figures
``execute`` reports from a commit (:func:`commit_figures`). No I/O here."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Mapping

from ..hudi.protocol.etc_metadata import CompactionExtra
from ..hudi.index.stats import iso_ms


if TYPE_CHECKING:
    from .readiness import Readiness


class Outcome(str, Enum):
    """The typed answers of ``schedule`` and :func:`~.scheduling.plan_decision` (a ``str``: it
    compares equal to, and serialises as, its value)."""

    SCHEDULED = "scheduled"
    ALREADY_SCHEDULED = "already_scheduled"
    PENDING = "pending"
    WAITING = "waiting"
    COVERED = "covered"
    NOTHING_QUALIFIES = "nothing_qualifies"
    CONFLICT = "conflict"
    READY = "ready"  # plan_decision only: a plan may be made now

    def __str__(self) -> str:
        return self.value


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
    outcome: Outcome = Outcome.SCHEDULED
    pending_instant: str | None = None

    def as_dict(self) -> dict:
        """JSON-able: ``outcome`` as its plain string."""
        d = dict(self.__dict__)
        d["outcome"] = Outcome(self.outcome).value
        return d


@dataclass(frozen=True)
class PlanDecision:
    """:func:`~.scheduling.plan_decision`'s answer: ``outcome`` is ``ready``,
    ``already_scheduled`` (``instant``: the pending plan for this threshold, with ``operations``),
    ``pending`` (``instant``: the other pending compaction), ``waiting`` or ``covered``;
    ``readiness`` is the EVENT_TIME trigger's check it was made from."""

    outcome: Outcome
    reason: str
    readiness: Readiness
    instant: str | None = None
    operations: int = 0


@dataclass(frozen=True)
class EventTimeCheck:
    """May an event-time compaction with this threshold go ahead? (``table.compaction.check``: what
    the Airflow sensor and its trigger decide.) ``state``: ``ready`` (a plan may be made now),
    ``covered`` (the last completed event-time compaction already published a threshold ≥ this
    one: a backfill run with nothing to do), ``resume`` (``pending_plan``, of ``operations`` file
    groups, was planned for exactly this threshold by an earlier attempt: it is reused and
    executed) or ``waiting`` (another pending compaction or clustering must finish first);
    ``message`` says it for people; ``readiness`` is the EVENT_TIME trigger's check it was made from."""

    state: str
    message: str
    readiness: Readiness
    pending_plan: str | None = None
    operations: int = 0

    @property
    def done(self) -> bool:
        """True except while ``waiting``."""
        return self.state != "waiting"

    def as_dict(self) -> dict:
        """The readiness fields with ``state``, ``done``, ``pending_plan`` and ``message`` (the
        sensor's XCom)."""
        return {**self.readiness.as_dict(), "state": self.state, "done": self.done, "pending_plan": self.pending_plan,
                "message": self.message}


@dataclass(frozen=True)
class PendingPlan:
    """A pending compaction, oldest first in ``table.compaction.pending_plans()``. ``state``:
    ``requested`` or ``inflight``; ``threshold_ms`` (and ``threshold``, ``strategy``,
    ``exact_split``, ``operations``) as its plan carries them: None for a plan that is not an
    event-time plan of ours (a Java compactor's), and all but the first two for one that cannot
    be read (still pending, and blocking)."""

    instant: str
    state: str
    threshold_ms: int | None = None
    threshold: str | None = None
    strategy: str | None = None
    exact_split: bool | None = None
    operations: int | None = None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class PublishedThreshold:
    """The threshold the read-optimized view holds: that of the latest completed event-time
    compaction (``instant``; lowered where ``reset-threshold`` lowered it); all None when there
    is none."""

    threshold_ms: int | None
    threshold: str | None
    instant: str | None

    def as_dict(self) -> dict:
        return dict(self.__dict__)


def commit_figures(meta: Mapping) -> dict:
    """What ``execute`` reports of a compaction, read back from its commit metadata (so a retry
    of a completed execution reports the same figures)."""
    x = CompactionExtra.from_extra(meta.get("extraMetadata"))
    stats = [s for v in (meta.get("partitionToWriteStats") or {}).values() for s in v]
    return {
        "threshold": x.plan.threshold,
        "threshold_ms": x.plan.threshold_ms,
        "exact_split": x.plan.exact_split,
        "link_mode": x.plan.link_mode,
        "event_time_source": x.plan.event_time_source,
        "base_files_written": sum(1 for s in stats if s.get("path", "").endswith(".parquet")),
        "logs_compacted": sum(s.get("totalLogFilesCompacted", 0) for s in stats),
        "logs_compacted_bytes": x.figures.compacted_log_bytes,
        "logs_remaining": sum(1 for s in stats if "hoodieEtcLinkTarget" in s),
        "split_log_records": x.figures.split_log_records or 0,
        "remaining_log_files": x.figures.remaining_log_files,
        "remaining_log_bytes": x.figures.remaining_log_bytes,
        "remaining_min_event_time_ms": x.figures.remaining_min_event_time_ms,
        "remaining_min_event_time": iso_ms(x.figures.remaining_min_event_time_ms),
        "link_bytes_written": sum(s.get("fileSizeInBytes", 0) for s in stats if "hoodieEtcLinkTarget" in s),
        "planning_seconds": x.plan.planning_seconds,
        "execution_seconds": x.figures.execution_seconds or 0.0,
    }
