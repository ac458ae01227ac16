"""What the timeline's files say about the zone its instants were made in (``configure
--timeline-zone``'s check: a zone other than the Java writers' own sorts our instants
wrongly among theirs, and Java's next write fails while our plan is pending).

A Java writer on a LOCAL timeline names its instants with its JVM's wall clock, and writes the
instant's file at once: the file's modification time (local storage: mtime; object stores:
LastModified) is the moment the name's time was taken, give or take the clock skew between the
writer and the storage. So ``wall-clock time of the name - modification time`` is the writers'
UTC offset at that moment. Files used: layout 1 (table version 6), each instant's
``.requested`` file against its instant time; layout 2 (8, 9), also each completed file against
the completion time in its name. A zone whose offsets disagree with every file by more than the
allowed clock skew, the same way for all, is not the writers' zone (a zone west of theirs is not
caught by the future check: its instants read as past times, and our plans would sort after
Java's next instants). Evidence that does not agree with itself (files copied later, a restore,
instants of two zones) refuses nothing.
"""

from __future__ import annotations

import datetime as _dt
import statistics
from typing import Iterable

from ..hudi.timeline.active import State, parse_instant_time

#: how many of the latest instants are looked at (a HEAD request each on an object store)
MAX_EVIDENCE = 20
#: zones named as examples of an offset (the first few that have it at the moment in question)
EXAMPLE_ZONES = (
    "Europe/London", "Europe/Paris", "Europe/Helsinki", "Europe/Moscow", "Asia/Dubai", "Asia/Karachi", "Asia/Kolkata",
    "Asia/Kathmandu", "Asia/Dhaka", "Asia/Yangon", "Asia/Bangkok", "Asia/Shanghai", "Asia/Singapore", "Asia/Tokyo",
    "Asia/Seoul", "Australia/Darwin", "Australia/Adelaide", "Australia/Brisbane", "Australia/Sydney",
    "Pacific/Auckland", "Atlantic/Cape_Verde", "Atlantic/Azores", "America/St_Johns", "America/Sao_Paulo",
    "America/Halifax", "America/Caracas", "America/New_York", "America/Bogota", "America/Chicago",
    "America/Mexico_City", "America/Denver", "America/Phoenix", "America/Los_Angeles", "America/Anchorage",
    "Pacific/Honolulu", "Africa/Lagos", "Africa/Johannesburg", "Africa/Nairobi", "Asia/Tehran", "Asia/Kabul",
)
#: UTC offsets real zones have (beyond them the files' times are no evidence of a zone)
MIN_OFFSET, MAX_OFFSET = _dt.timedelta(hours=-12), _dt.timedelta(hours=14)


def timeline_evidence(table, limit: int = MAX_EVIDENCE) -> list[tuple[str, float]]:
    """``(time named by a timeline file, its modification time in epoch seconds)`` of the latest
    ``limit`` instants (see the module docstring for the files)."""
    storage = table.storage
    out: list[tuple[str, float]] = []
    for inst in sorted(table.timeline.instants, key=lambda i: i.timestamp)[-limit:]:
        files = [(inst.timestamp, inst.path(State.REQUESTED))]
        if inst.is_completed and inst.completion_time:  # (completion times are in layout-2 names only)
            files.append((inst.completion_time, inst.path(State.COMPLETED)))
        for ts, rel in files:
            m = storage.mtime(rel)
            if m is not None:
                out.append((ts, m))
    return out


def _offset(ts: str, mtime: float) -> _dt.timedelta:
    """The UTC offset of a clock that read ``ts`` at the moment ``mtime``."""
    wall = parse_instant_time(ts, _dt.timezone.utc)
    return wall - _dt.datetime.fromtimestamp(mtime, _dt.timezone.utc)


def zone_disagreement(evidence: Iterable[tuple[str, float]], zone: _dt.tzinfo,
                      skew: _dt.timedelta) -> tuple[_dt.timedelta, _dt.datetime] | None:
    """``(the writers' UTC offset the files suggest, the moment of the latest file)`` when every
    file disagrees with ``zone`` by more than ``skew``, all the same way (within ``skew`` of one
    another) and the offset is one a zone has; None: no such evidence against ``zone``."""
    ev = sorted(evidence, key=lambda e: e[1])
    if not ev:
        return None
    # per file: its offset, and how far it is from the zone's offset at that moment
    offs = [_offset(ts, m) for ts, m in ev]
    misses = [o - parse_instant_time(ts, zone).utcoffset() for o, (ts, _) in zip(offs, ev)]
    mid = statistics.median_low(misses)
    if abs(mid) <= skew or any(abs(x - mid) > skew for x in misses):
        return None
    suggested = offs[-1]
    if not MIN_OFFSET - skew <= suggested <= MAX_OFFSET + skew:
        return None
    return _round_quarter(suggested), _dt.datetime.fromtimestamp(ev[-1][1], _dt.timezone.utc)


def _round_quarter(d: _dt.timedelta) -> _dt.timedelta:
    q = _dt.timedelta(minutes=15)
    return round(d / q) * q


def describe_offset(offset: _dt.timedelta, at: _dt.datetime) -> str:
    """``UTC+02:00 (e.g. Europe/Paris at that time)``: the offset, and zones that had it at ``at``."""
    sign = "-" if offset < _dt.timedelta(0) else "+"
    minutes = abs(offset) // _dt.timedelta(minutes=1)
    text = f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"
    try:
        from zoneinfo import ZoneInfo

        names = [n for n in EXAMPLE_ZONES if at.astimezone(ZoneInfo(n)).utcoffset() == offset][:3]
    except Exception:  # no zone database: the offset alone
        names = []
    if offset == _dt.timedelta(0):
        names = ["UTC", *names][:3]
    return f"{text} (e.g. {', '.join(names)} at that time)" if names else text


__all__ = ["timeline_evidence", "zone_disagreement", "describe_offset", "MAX_EVIDENCE"]
