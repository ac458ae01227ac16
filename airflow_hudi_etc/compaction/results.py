"""What the compaction service answers: ``schedule``'s :class:`ScheduleResult` with its typed
:class:`Outcome`, the one plan decision (:class:`PlanDecision`), and the figures ``execute``
reports from a commit (:func:`commit_figures`). No I/O here."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Mapping

from ..hudi.services.etc_metadata import CompactionExtra
from ..hudi.index.stats import iso_ms


if TYPE_CHECKING:
    from .trigger import Readiness


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
