"""Named crash points, for the crash-point sweep (tests/test_crash_sweep.py).

``crashpoint("execute.after-base-file")`` ends the process at once (``os._exit``, no cleanup,
no ``finally``) when the environment variable ``HUDI_ETC_CRASH_AT`` names that point, optionally
with ``@N`` to die at its N-th hit (``execute.after-base-file@2``). Unset: a dictionary lookup.
"""

from __future__ import annotations

import os

ENV = "HUDI_ETC_CRASH_AT"
EXIT_CODE = 86

#: every point, in the order a job passes them (the sweep iterates this)
POINTS = (
    "write.after-requested",
    "write.after-inflight",
    "write.after-file",
    "write.before-commit",
    "schedule.before-plan",
    "schedule.after-aux-plan",
    "execute.after-inflight",
    "execute.mid-base-file",
    "execute.after-base-file",
    "execute.after-split-log",
    "execute.after-link",
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
    if not want:
        return
    point, _, nth = want.partition("@")
    if point != name:
        return
    _hits[name] = _hits.get(name, 0) + 1
    if _hits[name] >= int(nth or 1):
        os._exit(EXIT_CODE)
