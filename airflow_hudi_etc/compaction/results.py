"""What the compaction service answers: ``schedule``'s :class:`ScheduleResult` with its typed
:class:`Outcome`, the one plan decision (:class:`PlanDecision`), and the figures ``execute``
reports from a commit (:func:`commit_figures`). No I/O here."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Mapping

from ..hudi import etc_keys as keys
from ..hudi.stats import iso_ms
from .metrics import (
    K_COMPACTED_BYTES,
    K_EXECUTION,
    K_PLANNING,
    K_REMAINING_BYTES,
    K_REMAINING_FILES,
    K_REMAINING_MIN_ET,
    K_SPLIT_RECORDS,
)


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
    extra = meta.get("extraMetadata") or {}
    stats = [s for v in (meta.get("partitionToWriteStats") or {}).values() for s in v]

    def num(key: str, cast=int):
        v = extra.get(key)
        return cast(v) if v not in (None, "") else None

    th = num(keys.THRESHOLD_MS)
    return {
        "threshold": extra.get(keys.THRESHOLD),
        "threshold_ms": th,
        "exact_split": extra.get(keys.EXACT_SPLIT) == "true",
        "link_mode": extra.get(keys.LINK_MODE),
        "event_time_source": extra.get(keys.EVENT_TIME_SOURCE),
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
