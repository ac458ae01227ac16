"""Faults injected in process into the compaction service."""

from __future__ import annotations

from airflow_hudi_etc.hudi.write.writer import LocalEngine


class SecondTaskFails(LocalEngine):
    """The executor dies on the second compaction task (an in-process stand-in for a lost executor)."""

    def map(self, fn, items):
        items = list(items)
        if len(items) > 1:
            fn(items[0])
            raise OSError("executor lost (injected)")
        return super().map(fn, items)
