"""``EventTimeCompactionTrigger``: the deferrable side of :class:`EventTimeCompactionSensor`.

Runs in the triggerer. Every ``poll_interval`` seconds it makes the very check the sensor's
``poke`` makes (:func:`airflow_hudi_etc.hooks.hudi.event_time_check`, a timeline listing: blocking
I/O, so it runs in a thread) and yields one event:

* ``{"status": "success", "result": <check dict>, "polls": n}`` — ready, covered or resume;
* ``{"status": "timeout", "result": <last check>, "deadline": epoch_s, "polls": n}`` — the wall-clock
  ``deadline`` passed first. The deadline travels with the trigger (kwargs), so it holds when the
  trigger moves to another triggerer and under ``dag.test()``, which does not enforce the
  scheduler's defer timeout;
* ``{"status": "error", "type": ..., "message": ..., "polls": n}`` — the check raised (e.g. no table).

It has no side effects, so running it twice (triggerer HA) is harmless.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator

from airflow.triggers.base import BaseTrigger, TriggerEvent


class EventTimeCompactionTrigger(BaseTrigger):
    """Poll a table until an event-time compaction for ``threshold_ms`` may proceed.

    :param table_path: the table's base path (local path or fsspec URI).
    :param threshold_ms: the event-time threshold (epoch ms) this run needs.
    :param deadline: wall-clock deadline (epoch seconds) after which a ``timeout`` event is sent;
        None: wait for ever.
    :param poll_interval: seconds between checks.
    :param hudi_conn_id: ``hudi`` connection with the storage options (resolved in the triggerer).
    """

    def __init__(self, table_path: str, threshold_ms: int, deadline: float | None = None,
                 poll_interval: float = 60.0, hudi_conn_id: str | None = None) -> None:
        super().__init__()
        self.table_path = table_path
        self.threshold_ms = int(threshold_ms)
        self.deadline = None if deadline is None else float(deadline)
        self.poll_interval = max(0.0, float(poll_interval))
        self.hudi_conn_id = hudi_conn_id
        #: checks made so far by :meth:`run` (also reported in every event)
        self.polls = 0

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "table_path": self.table_path,
                "threshold_ms": self.threshold_ms,
                "deadline": self.deadline,
                "poll_interval": self.poll_interval,
                "hudi_conn_id": self.hudi_conn_id,
            },
        )

    async def _storage_options(self) -> dict:
        if not self.hudi_conn_id:
            return {}
        from ..hooks.hudi import HudiTableHook

        return await HudiTableHook(self.hudi_conn_id).aget_storage_options()

    async def run(self) -> AsyncIterator[TriggerEvent]:
        from ..hooks.hudi import event_time_check

        try:
            options = await self._storage_options()
        except Exception as e:
            yield TriggerEvent({"status": "error", "type": type(e).__name__, "message": str(e), "polls": self.polls})
            return
        while True:
            try:
                result = await asyncio.to_thread(event_time_check, self.table_path, threshold_ms=self.threshold_ms,
                                                 storage_options=options)
            except Exception as e:
                self.polls += 1
                yield TriggerEvent({"status": "error", "type": type(e).__name__, "message": str(e),
                                    "polls": self.polls})
                return
            self.polls += 1
            if result["done"]:
                yield TriggerEvent({"status": "success", "result": result, "polls": self.polls})
                return
            now = time.time()
            if self.deadline is not None and now >= self.deadline:
                yield TriggerEvent({"status": "timeout", "result": result, "deadline": self.deadline,
                                    "polls": self.polls})
                return
            self.log.info("table %s: %s", self.table_path, result["message"])
            wait = self.poll_interval if self.deadline is None else min(self.poll_interval, self.deadline - now)
            await asyncio.sleep(max(0.0, wait))
