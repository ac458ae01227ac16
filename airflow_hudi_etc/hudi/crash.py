"""Named crash points, for the crash-point sweep (tests/compaction/test_crash_sweep.py).

``crashpoint("execute.after-base-file")`` ends the process at once (``os._exit``, no cleanup,
no ``finally``) when the environment variable ``HUDI_ETC_CRASH_AT`` names that point, optionally
with ``@N`` to die at its N-th hit (``execute.after-base-file@2``). Unset: a dictionary lookup.

``HUDI_ETC_PAUSE_AT`` (same syntax) pauses the process there instead, for tests that overlap
real processes (tests/compaction/test_overlap.py): it prints ``HUDI_ETC_PAUSED <point>`` on stderr and
waits for a line on stdin (its heartbeat thread keeps running meanwhile).

**Hook points**: in-process callbacks at the same named points, for tests that interleave work
with a job (a write between a check and a commit, two schedulers paused at chosen points)::

    with crash.hooked("schedule.after-recheck", lambda point: write_batch(...)):
        schedule(...)

Every crash point is a hook point; :data:`HOOK_POINTS` are hook points only (no crash or pause
there). A callback gets the point's name; at ``schedule.instant-time`` its answer (not None) is
the instant time the schedule uses instead of the clock's. Callbacks run in the thread that
reaches the point, in registration order; what they raise propagates. With none registered a
point costs one dictionary lookup.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import Callable, Iterable, Iterator

ENV = "HUDI_ETC_CRASH_AT"
PAUSE_ENV = "HUDI_ETC_PAUSE_AT"
PAUSED = "HUDI_ETC_PAUSED"
EXIT_CODE = 86

#: every point, in the order a job passes them (the sweep iterates this)
POINTS = (
    "write.after-requested",
    "write.after-inflight",
    "write.after-file",
    "write.before-commit",
    "commit.after-metadata",  # any completion: the metadata table told, the instant not yet complete
    "schedule.before-links",
    "schedule.after-staged",
    "schedule.after-guard",
    "schedule.after-link",
    "schedule.before-plan",
    "schedule.after-aux-plan",
    "execute.after-inflight",
    "execute.mid-base-file",
    "execute.after-base-file",
    "execute.after-split-log",
    "execute.before-commit",
    "rollback.after-file-removed",
    "rollback.before-inflight-removed",
    "unschedule.after-requested-removed",
    "clean.after-requested",
    "clean.after-inflight",
    "clean.after-delete",
    "clean.before-complete",
    "sync.before-properties",
    "sync.after-register",
)

#: hook points that are not crash points
HOOK_POINTS = (
    "schedule.instant-time",  # answer: the instant time to plan under (default: the clock's)
    "schedule.after-recheck",  # the last planning-conflict re-check done, the plan not yet published
    "execute.before-commit-file",  # every re-check done, the commit file not yet written
)
#: every point a callback may be registered at
ALL = POINTS + HOOK_POINTS

_hits: dict[str, int] = {}
_hooks: dict[str, list[Callable[[str], object]]] = {}


@contextmanager
def hooked(points: str | Iterable[str], callback: Callable[[str], object]) -> Iterator[None]:
    """Call ``callback(point)`` at each of ``points`` (a name or several, from :data:`ALL`) while
    the block runs; removed again at its end."""
    names = (points,) if isinstance(points, str) else tuple(points)
    unknown = [n for n in names if n not in ALL]
    if unknown:
        raise ValueError(f"unknown hook point(s) {unknown}: see airflow_hudi_etc.hudi.crash.ALL")
    for n in names:
        _hooks.setdefault(n, []).append(callback)
    try:
        yield
    finally:
        for n in names:
            fns = _hooks.get(n, [])
            if callback in fns:
                fns.remove(callback)
            if not fns:
                _hooks.pop(n, None)


def hook(name: str) -> object:
    """Run the callbacks registered at ``name``; the last answer that is not None (None when no
    callback is registered or none answered)."""
    fns = _hooks.get(name)
    if not fns:
        return None
    answer = None
    for fn in tuple(fns):
        got = fn(name)
        if got is not None:
            answer = got
    return answer


def crashpoint(name: str) -> None:
    if _hooks:
        hook(name)
    want = os.environ.get(ENV)
    pause = os.environ.get(PAUSE_ENV)
    if not want and not pause:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if pause:
        point, _, nth = pause.partition("@")
        if point == name and _hits[name] == int(nth or 1):
            import sys

            sys.stderr.write(f"{PAUSED} {name}\n")
            sys.stderr.flush()
            sys.stdin.readline()
    if want:
        point, _, nth = want.partition("@")
        if point == name and _hits[name] >= int(nth or 1):
            os._exit(EXIT_CODE)
