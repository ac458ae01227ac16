"""Named crash points, for the crash-point sweep (tests/compaction/test_crash_sweep.py).

``crashpoint("execute.after-base-file")`` ends the process at once (``os._exit``, no cleanup,
no ``finally``) when the environment variable ``HUDI_ETC_CRASH_AT`` names that point, optionally
with ``@N`` to die at its N-th hit (``execute.after-base-file@2``). Unset: a dictionary lookup.

``HUDI_ETC_PAUSE_AT`` (same syntax) pauses the process there instead, for tests that overlap
real processes (tests/compaction/test_overlap.py): it prints ``HUDI_ETC_PAUSED <point>`` on stderr and
waits for a line on stdin (its heartbeat thread keeps running meanwhile).
"""

from __future__ import annotations

import os

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
    "schedule.before-links",
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

_hits: dict[str, int] = {}


def crashpoint(name: str) -> None:
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
