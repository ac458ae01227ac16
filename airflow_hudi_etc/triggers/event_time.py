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

:class:`EventTimeThresholdTrigger` is an event trigger (``BaseEventTrigger``) for an
``AssetWatcher``: it fires each time a table's published RO threshold advances, so a DAG can be
scheduled on "the RO view is fresh up to T" without a worker polling.

Neither trigger imports the Hudi layer (pyarrow, fastavro, ...) on the triggerer's event loop: the
checks, and their imports, run in a worker thread.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncIterator

from airflow.triggers.base import BaseEventTrigger, BaseTrigger, TriggerEvent

DEFAULT_CONN_ID = "hudi_default"  # as hooks.hudi.DEFAULT_CONN_ID (kept literal: no import here)


def _check(table_path: str, threshold_ms: int, options: dict) -> dict:
    """The sensor's check; runs in a worker thread (its imports too)."""
    from ..hooks.hudi import event_time_check

    return event_time_check(table_path, threshold_ms=threshold_ms, storage_options=options)


def _published(table_path: str, options: dict) -> dict:
    """The table's published threshold; runs in a worker thread (its imports too)."""
    from ..hooks.hudi import published_threshold

    return published_threshold(table_path, options)


async def _storage_options(hudi_conn_id: str | None) -> dict:
    if not hudi_conn_id:
        return {}
    from ..hooks.hudi import HudiTableHook  # light: the hook module imports no Hudi layer

    return await HudiTableHook(hudi_conn_id).aget_storage_options()


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
                 poll_interval: float = 60.0, hudi_conn_id: str | None = DEFAULT_CONN_ID) -> None:
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

    async def run(self) -> AsyncIterator[TriggerEvent]:
        try:
            options = await _storage_options(self.hudi_conn_id)
        except Exception as e:
            yield TriggerEvent({"status": "error", "type": type(e).__name__, "message": str(e), "polls": self.polls})
            return
        while True:
            try:
                result = await asyncio.to_thread(_check, self.table_path, self.threshold_ms, options)
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


class EventTimeThresholdTrigger(BaseEventTrigger):
    """Fires when the table's published RO threshold advances (for an ``AssetWatcher``).

    Every ``poll_interval`` seconds it reads the threshold of the table's latest completed
    event-time compaction (a timeline listing, in a thread). The first time it is above the last
    one seen, it yields ``{"status": "advanced", "table_path", "threshold_ms", "threshold",
    "instant", "previous_threshold_ms", "polls"}`` — the asset event's ``extra["payload"]`` — and
    goes on watching (an event trigger runs for as long as a DAG watches the asset).

    The last threshold seen starts at ``after_threshold_ms`` when given, else at the one already
    published when the watch starts (no event for it). When the triggerer provides the watched
    asset's state store, the last threshold seen is kept there too, so a restarted or moved
    triggerer neither fires twice for a threshold nor misses one that was published meanwhile.

    Errors (no table yet, an unreadable timeline) are logged and retried at the next poll: a
    watcher must outlive a table that is being created or repaired.

    :param table_path: the table's base path (local path or fsspec URI).
    :param poll_interval: seconds between reads.
    :param after_threshold_ms: fire only for thresholds above this (epoch ms); None: the current one.
    :param hudi_conn_id: ``hudi`` connection with the storage options (default ``hudi_default``,
        which may be absent).
    """

    STATE_KEY = "hudi_etc.threshold_ms"

    def __init__(self, table_path: str, poll_interval: float = 60.0, after_threshold_ms: int | None = None,
                 hudi_conn_id: str | None = DEFAULT_CONN_ID) -> None:
        super().__init__()
        self.table_path = str(table_path)
        self.poll_interval = max(0.0, float(poll_interval))
        self.after_threshold_ms = None if after_threshold_ms is None else int(after_threshold_ms)
        self.hudi_conn_id = hudi_conn_id
        #: reads made so far by :meth:`run`
        self.polls = 0
        self._last_error: str | None = None

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return (
            f"{type(self).__module__}.{type(self).__qualname__}",
            {
                "table_path": self.table_path,
                "poll_interval": self.poll_interval,
                "after_threshold_ms": self.after_threshold_ms,
                "hudi_conn_id": self.hudi_conn_id,
            },
        )

    async def _state_get(self) -> int | None:
        store = getattr(self, "asset_state_store", None)
        if store is None:
            return None
        try:
            v = await store.aget(self.STATE_KEY)
        except Exception as e:  # no store for this asset, or an API that differs: memory only
            self.log.debug("asset state store unavailable: %s", e)
            return None
        return int(v) if isinstance(v, (int, float, str)) and str(v).lstrip("-").isdigit() else None

    async def _state_set(self, value: int) -> None:
        store = getattr(self, "asset_state_store", None)
        if store is None:
            return
        try:
            await store.aset(self.STATE_KEY, int(value))
        except Exception as e:
            self.log.debug("asset state store unavailable: %s", e)

    async def _read(self, options: dict | None) -> tuple[dict | None, dict | None]:
        """(published threshold, options): None on an error (logged), to be tried again."""
        try:
            if options is None:
                options = await _storage_options(self.hudi_conn_id)
            pub = await asyncio.to_thread(_published, self.table_path, options)
        except Exception as e:
            said = f"{type(e).__name__}: {e}"
            if said != self._last_error:  # once per distinct error, not once per poll
                self.log.warning("table %s: threshold not readable (%s); trying again every %s s",
                                 self.table_path, said, self.poll_interval)
            self._last_error = said
            return None, options
        self._last_error = None
        self.polls += 1
        return pub, options

    async def run(self) -> AsyncIterator[TriggerEvent]:
        options: dict | None = None
        seen = self.after_threshold_ms
        stored = await self._state_get()
        if stored is not None and (seen is None or stored > seen):
            seen = stored
        first = seen is None
        while True:
            pub, options = await self._read(options)
            ms = None if pub is None else pub["threshold_ms"]
            if pub is not None and first:
                seen, first = (ms if ms is not None else -1), False
                self.log.info("table %s: watching from threshold %s", self.table_path, pub["threshold"])
                await self._state_set(seen)
            elif ms is not None and ms > seen:
                previous, seen = seen, ms
                await self._state_set(ms)
                yield TriggerEvent({"status": "advanced", "table_path": self.table_path, "threshold_ms": ms,
                                    "threshold": pub["threshold"], "instant": pub["instant"],
                                    "previous_threshold_ms": previous if previous >= 0 else None,
                                    "polls": self.polls})
            await asyncio.sleep(self.poll_interval)
