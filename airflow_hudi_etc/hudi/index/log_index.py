"""The event-time index: what a scan of a log without write stats found (min/max event time and
its ordering facts, :mod:`.ordering_facts`), kept so that the next schedule does not read the
log again.

One JSON file, :data:`INDEX_PATH` under the table's ``.hoodie/.aux/`` (no Hudi reader looks
there), replaced atomically as a whole. Entries are keyed by the log's table-relative path and
its size: a log is immutable once its deltacommit completed, but on stores that append (HDFS)
it grows until then, so an entry whose size differs from the file's is never used. The index is
a cache: a missing, unreadable or malformed file (or entry) is ignored and the logs are read;
an index made for another event-time or ordering field is ignored as a whole. Two schedules
writing it at once lose one's entries, nothing else.
"""

from __future__ import annotations

import json
from typing import Iterable

from .ordering_facts import from_json
from .stats import SOURCE_SCAN, EventRange
from ..timeline.active import AUX_DIR

INDEX_PATH = f"{AUX_DIR}/hudi-etc/log-event-index.json"
VERSION = 1


def _int_or_none(v) -> bool:
    return v is None or v.__class__ is int


class LogIndex:
    """Path → (size, event range with ordering facts) of scanned logs."""

    def __init__(self, storage, event_time_field: str | None, ordering_field: str | None):
        self.storage = storage
        self.fields = (event_time_field or None, ordering_field or None)
        self.entries: dict[str, tuple[int, EventRange]] = {}
        self.changed = False
        self._load()

    def _load(self) -> None:
        try:
            doc = json.loads(self.storage.read_bytes(INDEX_PATH))
        except (FileNotFoundError, OSError, ValueError):
            return
        if not isinstance(doc, dict) or doc.get("version") != VERSION:
            return
        if (doc.get("eventTimeField"), doc.get("orderingField")) != self.fields:
            return
        logs = doc.get("logs")
        if not isinstance(logs, dict):
            return
        for path, e in logs.items():
            if not (isinstance(e, list) and len(e) == 4):
                continue
            size, lo, hi, of = e
            if size.__class__ is not int or size < 0 or not (_int_or_none(lo) and _int_or_none(hi)):
                continue
            if (lo is None) != (hi is None) or (lo is not None and hi < lo):
                continue
            facts = from_json(of) if of is not None else None
            if of is not None and facts is None:
                continue
            self.entries[path] = (size, EventRange(lo, hi, SOURCE_SCAN, facts))

    def get(self, path: str, size: int) -> EventRange | None:
        """The entry of ``path`` when it was made for a file of exactly ``size`` bytes."""
        e = self.entries.get(path)
        if e is None or size < 0 or e[0] != size:
            return None
        return e[1]

    def put(self, path: str, size: int, r: EventRange) -> None:
        if size < 0 or self.entries.get(path) == (size, r):
            return
        self.entries[path] = (size, r)
        self.changed = True

    def save(self, keep: Iterable[str]) -> bool:
        """Write the entries of the paths in ``keep`` (the current logs; the others are dropped),
        when anything changed. A failed write is ignored (the index is a cache)."""
        if not self.changed and not self.entries:  # nothing to write or drop (the paths unread)
            return False
        keep = set(keep)
        if not self.changed and keep >= self.entries.keys():
            return False
        logs = {}
        for p, (size, r) in self.entries.items():
            if p in keep:
                logs[p] = [size, r.min_ms, r.max_ms, r.ordering.to_json() if r.ordering is not None else None]
        doc = {"version": VERSION, "eventTimeField": self.fields[0], "orderingField": self.fields[1], "logs": logs}
        try:
            self.storage.write_atomic(INDEX_PATH, json.dumps(doc, separators=(",", ":")).encode())
        except OSError:
            return False
        self.changed = False
        return True
