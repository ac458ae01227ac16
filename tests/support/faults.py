"""Faults injected in process into the compaction service."""

from __future__ import annotations

import contextlib


@contextlib.contextmanager
def second_task_fails():
    """The executor dies on the second compaction task (an in-process stand-in for a lost executor)."""
    import airflow_hudi_etc.compaction.service as svc

    real, calls = svc.compact_task, []

    def dying(task):
        calls.append(task)
        if len(calls) > 1:
            raise OSError("executor lost (injected)")
        return real(task)

    svc.compact_task = dying
    try:
        yield
    finally:
        svc.compact_task = real
