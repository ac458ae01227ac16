"""Per-log ordering facts: what schedule's prefix check (``compaction/flips.py``) needs to know of a
log to tell, without reading it, that compacting a prefix cannot change a read.

* ``data``: data records in the log; ``deletes``: delete records (any ordering value);
* ``lo``/``hi``: the smallest/largest ordering value over its data records and its deletes that
  carry a real ordering value (not the natural-order Integer 0); both None when it has none.

Our writer records them in each log's write stat under :data:`STAT_KEY` (an extra field Java's
reader ignores, like ``hoodieEtcLinkTarget``; no log-block header changes); the event-time index
(:mod:`.log_index`) keeps the same facts for logs scanned once. A log whose ordering values
cannot be compared exactly as the check compares them (a null ordering value, a type other
than an integer, a finite float or a string) has no facts: the check then reads it.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.compute as pc

#: the write-stat field (an object: ``{"data": n, "deletes": n, "min": v, "max": v}``)
STAT_KEY = "hoodieEtcOrdering"


class OrderingFacts(NamedTuple):
    data: int
    deletes: int
    lo: Any
    hi: Any

    def to_json(self) -> dict:
        return {"data": self.data, "deletes": self.deletes, "min": self.lo, "max": self.hi}


def _plain(v: Any) -> bool:
    """An ordering value the facts may hold: compared in Python exactly as the read compares it,
    and kept exactly through JSON."""
    c = v.__class__
    return c is int or c is str or (c is float and math.isfinite(v))


_tuple_new = tuple.__new__


def from_json(v: Any) -> OrderingFacts | None:
    """Facts from their JSON form; None for anything malformed (the log is then read)."""
    if not isinstance(v, dict):
        return None
    get = v.get
    data, deletes, lo, hi = get("data"), get("deletes"), get("min"), get("max")
    if data.__class__ is not int or deletes.__class__ is not int or data < 0 or deletes < 0:
        return None
    if lo is None and hi is None:
        return _tuple_new(OrderingFacts, (data, deletes, None, None))
    if lo.__class__ is int and hi.__class__ is int:  # the common case, _plain inline (planning reads one per log)
        return _tuple_new(OrderingFacts, (data, deletes, lo, hi)) if lo <= hi else None
    if not (_plain(lo) and _plain(hi)):
        return None
    try:
        if hi < lo:
            return None
    except TypeError:
        return None
    return OrderingFacts(data, deletes, lo, hi)


_ORDERABLE = (pa.types.is_integer, pa.types.is_floating, pa.types.is_string, pa.types.is_large_string)


def column_range(col) -> tuple[bool, Any, Any]:
    """``(ok, min, max)`` of an ordering column (Arrow array or chunked array); ``ok`` False when
    facts cannot be recorded (a null, a NaN or infinity, or another type)."""
    if len(col) == 0:
        return True, None, None
    if col.null_count or not any(f(col.type) for f in _ORDERABLE):
        return False, None, None
    mm = pc.min_max(col)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    if not (_plain(lo) and _plain(hi)):
        return False, None, None
    if pa.types.is_floating(col.type) and (pc.any(pc.is_nan(col)).as_py() or pc.any(pc.is_inf(col)).as_py()):
        return False, None, None
    return True, lo, hi


def widen(lo: Any, hi: Any, v: Any) -> tuple[bool, Any, Any]:
    """``(ok, lo, hi)`` with one more value; not ok when it cannot be held or compared."""
    if not _plain(v):
        return False, lo, hi
    if lo is None:
        return True, v, v
    try:
        return True, (v if v < lo else lo), (v if v > hi else hi)
    except TypeError:
        return False, lo, hi


def merged(a: OrderingFacts | None, b: OrderingFacts | None) -> OrderingFacts | None:
    """The facts of two parts of one log (Java appending to a log across deltacommits)."""
    if a is None or b is None:
        return None
    lo, hi = a.lo, a.hi
    for v in (b.lo, b.hi):
        if v is not None:
            ok, lo, hi = widen(lo, hi, v)
            if not ok:
                return None
    return OrderingFacts(a.data + b.data, a.deletes + b.deletes, lo, hi)
