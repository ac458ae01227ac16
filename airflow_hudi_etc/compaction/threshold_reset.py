"""Withdrawing a threshold published by mistake (``hudi-etc reset-threshold``).

A completed event-time compaction publishes its threshold in its commit's extra metadata
(``hoodie.etc.threshold.ms``); the trigger, the metrics and the catalog sync read it from there,
and thresholds only move forward. A threshold that was false when published (e.g. a compaction
time in the future, which ``schedule`` now refuses but older releases or a wrong clock accepted)
would block every later compaction and promise readers records that were not compacted.

Commit files are immutable, so a reset is recorded beside the timeline, never on it (Java
readers and writers see nothing new): an empty-of-logic JSON file
``.hoodie/.aux/hudi-etc/threshold-resets/<C>_<ms>.json`` saying "the threshold of compaction C
is at most <ms>". The effective threshold of C is the smallest of its published value and its
resets; a later compaction publishes its own threshold and makes C's resets moot. Resets only
lower a threshold, so a stray file can make the guarantee weaker, never false.
"""

from __future__ import annotations

import datetime as _dt
import json
from typing import Any, Mapping

from ..hudi.errors import InvalidInputError
from ..hudi.index.stats import iso_ms
from ..hudi.storage import Storage
from ..hudi.etc_keys import LATENCY_MS as K_LATENCY_MS
from ..hudi.timeline.active import parse_instant_time
from .readiness import RESET_DIR, resets_of


def reset_threshold(path: str | Storage, *, to: str | None = None, instant: str | None = None,
                    storage_options: Mapping[str, Any] | None = None,
                    now: _dt.datetime | None = None) -> dict:
    """Lower the threshold of the latest event-time compaction to ``to`` (ISO-8601; default: the
    threshold it could truly claim when it ran, its instant time − its data latency, if that is
    lower). Idempotent: a retry, or a ``to`` equal to the current threshold, writes nothing.
    Refused (typed, nothing written): no threshold published, ``instant`` not that compaction,
    ``to`` above the current threshold (thresholds move forward only by compacting) or in the
    future."""
    from ..hudi.table.hudi_table import HudiTable
    from .times import check_not_future, parse_time
    from .readiness import published_threshold

    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    table = HudiTable.load(storage)
    published, inst, extra = published_threshold(table)
    if published is None:
        raise InvalidInputError("no event-time compaction has published a threshold: nothing to reset")
    if instant is not None and instant != inst:
        raise InvalidInputError(f"the published threshold is compaction {inst}'s, not {instant!r}: "
                                "only the latest one is read")
    current = min([published] + resets_of(storage, inst))
    if to is None:
        try:
            latency = max(0, int(extra.get(K_LATENCY_MS) or 0))
        except (TypeError, ValueError):
            latency = 0
        ran = parse_instant_time(inst, table.timeline_zone)  # a wall-clock time of the table's zone
        to_ms = min(published, (ran - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc))
                    // _dt.timedelta(milliseconds=1) - latency)
    else:
        at = parse_time(to)
        check_not_future(at, now)
        to_ms = (at - _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)) // _dt.timedelta(milliseconds=1)
    out = {"instant": inst, "published_threshold_ms": published, "published_threshold": iso_ms(published),
           "threshold_ms": current, "threshold": iso_ms(current)}
    if to_ms > current:
        raise InvalidInputError(f"threshold {iso_ms(to_ms)} is above the current one {iso_ms(current)} of "
                                f"compaction {inst}: a reset only lowers it (schedule a compaction to move on)")
    if to_ms == current:
        return {**out, "status": "unchanged", "reason": "the threshold is already there"}
    record = {"instant": inst, "threshold_ms": to_ms, "threshold": iso_ms(to_ms),
              "published_threshold_ms": published,
              "reset_at": (now or _dt.datetime.now(_dt.timezone.utc)).isoformat(timespec="milliseconds")}
    from ..hudi.errors import InstantExistsError

    try:
        storage.create_if_absent(f"{RESET_DIR}/{inst}_{to_ms}.json", json.dumps(record, indent=1).encode())
    except InstantExistsError:
        pass  # the same reset, made concurrently
    return {**out, "threshold_ms": to_ms, "threshold": iso_ms(to_ms), "status": "reset",
            "reason": f"threshold of {inst} lowered; run sync-catalog to republish it"}
