"""Which log files of a file slice a compaction merges into the base file.

Only a **prefix** of a slice's logs (in Hudi's log order) may be compacted: Hudi merges log
records in log order with ordering-value rules, so compacting a later log while leaving an
earlier one would reorder updates. The logs after the prefix *remain* and are re-exposed in the
new file slice.

* :class:`EventTimeStrategy` (the product): the prefix ends at the **last** log whose min event
  time is ≤ the threshold, so after the compaction the base file holds every record with event
  time ≤ threshold (the remaining logs only hold records with event time > threshold... or
  later writes of keys whose first record in that log was late, which is why the guarantee is
  stated on *min* event times).
* :class:`CompactAllStrategy`: every log (Hudi's default behaviour), the baseline.

A log whose min event time is unknown (a delete-only log whose input carried no event time)
counts as qualifying: applying deletes to the read-optimized view early never breaks the
guarantee, and leaving them would keep deleted records in RO indefinitely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Protocol, Sequence

from ..hudi.file_group.fsview import FileSlice, LogFile
from ..hudi.index.stats import EventRange


@dataclass(frozen=True)
class Selection:
    compact: tuple[LogFile, ...]
    remain: tuple[LogFile, ...]

    @property
    def is_empty(self) -> bool:
        return not self.compact


_object_new = object.__new__


def _selection(compact: tuple[LogFile, ...], remain: tuple[LogFile, ...]) -> Selection:
    """``Selection(compact, remain)`` without the frozen-dataclass ``__init__`` (one per slice)."""
    s = _object_new(Selection)
    d = s.__dict__
    d["compact"] = compact
    d["remain"] = remain
    return s


class CompactionStrategy(Protocol):
    name: str

    def select(self, s: FileSlice, ranges: Mapping[str, EventRange]) -> Selection: ...


@dataclass(frozen=True)
class CompactAllStrategy:
    name: str = "compact-all"

    def select(self, s: FileSlice, ranges: Mapping[str, EventRange]) -> Selection:
        return Selection(tuple(s.log_files), ())


@dataclass(frozen=True)
class EventTimeStrategy:
    threshold_ms: int
    name: str = "event-time"

    def qualifies(self, r: EventRange | None) -> bool:
        return r is None or r.min_ms is None or r.min_ms <= self.threshold_ms

    def select(self, s: FileSlice, ranges: Mapping[str, EventRange]) -> Selection:
        logs: Sequence[LogFile] = s.log_files  # already in Hudi's log order
        get = ranges.get
        return self.select_ranges(logs, [get(lf.path) for lf in logs])

    def select_ranges(self, logs: Sequence[LogFile], rs: Sequence[EventRange | None]) -> Selection:
        """:meth:`select` of a slice's ``logs`` (in Hudi's log order) given their ranges ``rs``
        (in the same order; None: none known)."""
        th = self.threshold_ms
        last = -1
        for i, r in enumerate(rs):
            if r is None or r.min_ms is None or r.min_ms <= th:  # self.qualifies(r)
                last = i
        if last == len(logs) - 1:
            return _selection(tuple(logs), ())
        return _selection(tuple(logs[: last + 1]), tuple(logs[last + 1 :]))
