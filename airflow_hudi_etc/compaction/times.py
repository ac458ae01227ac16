"""Durations and compaction times as the service's callers give them: ``parse_duration``
(``30m``, ``2h``, ``PT2H``), ``parse_time`` (ISO-8601, default now) and the clock-skew refusal
of a compaction time in the future (``$HUDI_ETC_MAX_CLOCK_SKEW``)."""

from __future__ import annotations

import datetime as _dt
import math
import os
import re

from ..hudi.errors import InvalidInputError


def parse_duration(s: str | _dt.timedelta | int | float) -> _dt.timedelta:
    """``30m``, ``2h``, ``1d``, ``45s``, ``1h30m`` or ISO-8601 ``PT2H``/``P1DT2H``; from Python
    also a ``timedelta`` or a number of seconds (not negative). Anything else: a typed error."""
    if isinstance(s, _dt.timedelta):
        if s < _dt.timedelta(0):
            raise InvalidInputError(f"duration {s} is negative")
        return s
    if isinstance(s, (int, float)) and not isinstance(s, bool):
        if not math.isfinite(s) or s < 0:
            raise InvalidInputError(f"duration {s!r}: give a number of seconds >= 0")
        try:
            return _dt.timedelta(seconds=s)
        except OverflowError:
            raise InvalidInputError(f"duration {s!r} is too large") from None
    if not isinstance(s, str):
        raise InvalidInputError(f"duration {s!r}: give a string such as 30m, 2h, PT2H, a timedelta or seconds, "
                                f"not {type(s).__name__}")
    s = s.strip()
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


def parse_time(s: str | _dt.datetime | None) -> _dt.datetime:
    """An ISO-8601 string or (from Python) a ``datetime`` — naive ones are UTC —; None or empty:
    now. Anything else: a typed error."""
    if s is None or s == "":
        return _dt.datetime.now(_dt.timezone.utc)
    if isinstance(s, _dt.datetime):
        dt = s if s.tzinfo else s.replace(tzinfo=_dt.timezone.utc)
        try:
            dt.astimezone(_dt.timezone.utc)
        except (ValueError, OverflowError):
            raise InvalidInputError(f"compaction time {s!r} is not in years 1..9999 in UTC") from None
        return dt
    if not isinstance(s, str):
        raise InvalidInputError(f"compaction time {s!r}: give an ISO-8601 string or a datetime, "
                                f"not {type(s).__name__}")
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
