"""``EventTimeFreshnessSensor``: the last word of a compaction run — does the read-optimized view
(and the catalog) now hold the threshold this run promised?

A run promises ``threshold = compaction_time − data_latency``. Its ``execute`` task may have had
nothing to run although the view is behind: another plan became pending between the sensor and
``schedule`` (another run of the DAG, a backfill, a hand-run ``schedule``, a Java compactor), so
``schedule`` planned nothing. This sensor makes such a run end

* **green** only when the table's latest completed event-time compaction published a threshold
  ≥ the promised one (and, with ``sync_task_id``, the catalog sync reports one ≥ it too), or when
  no compaction is pending and no log holds a record at or before it (nothing needed compacting:
  ``vacuous: true``);
* **waiting** while a pending event-time plan whose threshold reaches the promised one exists
  (another run is executing it; bounded by the sensor's ``timeout``);
* **failed**, without retry, otherwise: ``AirflowFailException`` naming the threshold reached and
  the one promised (the task's ``on_failure_callback`` is the alert).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from airflow.sdk import BaseSensorOperator, PokeReturnValue
from airflow.sdk.exceptions import AirflowFailException

from ..failfast import fail_fast
from .event_time import threshold_for

if TYPE_CHECKING:
    from airflow.sdk import Context


def catalog_threshold_ms(sync_result: Mapping[str, Any] | None) -> int | None:
    """The threshold the catalog holds after a sync (its XCom): the published one after an
    ``updated`` sync (lower than before after ``reset-threshold``), else the higher of the table's
    and the catalog's previous value (``unchanged``: catalog ahead or equal)."""
    if not isinstance(sync_result, Mapping):
        return None
    if sync_result.get("status") == "updated":
        v = sync_result.get("threshold_ms")
        return v if isinstance(v, int) else None
    return max((v for v in (sync_result.get("threshold_ms"), sync_result.get("previous_threshold_ms"))
                if isinstance(v, int) and not isinstance(v, bool)), default=None)


def _iso(ms: int | None) -> str | None:
    from ..api import iso_ms

    return None if ms is None else iso_ms(ms)


class EventTimeFreshnessSensor(BaseSensorOperator):
    """Succeeds when the table's read-optimized view holds this run's threshold or a later one
    (see the module docstring); XCom ``{table_path, promised_threshold(_ms), threshold(_ms),
    instant, catalog_threshold(_ms), compaction_time}``.

    :param table_path: the table's base path (templated).
    :param data_latency: as the schedule task's (templated).
    :param compaction_time: as the schedule task's (templated); default the run's ``data_interval_end``.
    :param sync_task_id: the catalog sync task of this run: its XCom must report a catalog threshold
        ≥ the promised one too (no XCom at all — the task was marked successful by hand —: the
        catalog is not checked, ``catalog_checked: false``).
    :param hudi_conn_id: ``hudi`` connection (storage options).
    """

    template_fields: Sequence[str] = ("table_path", "data_latency", "compaction_time")
    ui_color = "#e4ffe6"

    def __init__(self, *, table_path: str, data_latency: str | timedelta, compaction_time: Any = None,
                 sync_task_id: str | None = None, hudi_conn_id: str | None = "hudi_default", **kwargs: Any) -> None:
        kwargs.setdefault("poke_interval", 60)
        kwargs.setdefault("timeout", 3600)
        super().__init__(**kwargs)
        self.table_path = table_path
        self.data_latency = data_latency
        self.compaction_time = compaction_time
        self.sync_task_id = sync_task_id
        self.hudi_conn_id = hudi_conn_id

    def _hook(self):
        from ..hooks.hudi import HudiTableHook

        return HudiTableHook(self.hudi_conn_id)

    def _catalog(self, context: Context) -> tuple[int | None, str]:
        ti = context.get("ti") if hasattr(context, "get") else None
        result = ti.xcom_pull(task_ids=self.sync_task_id) if ti is not None else None
        status = result.get("status") if isinstance(result, Mapping) else "no result"
        return catalog_threshold_ms(result), str(status)

    @fail_fast
    def poke(self, context: Context) -> PokeReturnValue:
        ct, promised = threshold_for(self.compaction_time, self.data_latency, context)
        hook = self._hook()
        table = hook.load_table(self.table_path)
        # the pending plans are read before the threshold: a plan seen pending here that completes
        # before the threshold is read shows in that threshold, so no plan is missed in between
        pending = table.compaction.pending_plans()
        reached = table.compaction.last_threshold()
        out = {"table_path": str(self.table_path), "compaction_time": ct.isoformat(),
               "promised_threshold_ms": promised, "promised_threshold": _iso(promised),
               "threshold_ms": reached.threshold_ms, "threshold": reached.threshold,
               "instant": reached.instant, "catalog_threshold_ms": None, "catalog_threshold": None}
        head = (f"{self.table_path}: the read-optimized view holds threshold {reached.threshold} "
                f"(compaction {reached.instant}); this run promised {_iso(promised)} "
                f"(compaction time {ct.isoformat()}, latency {self.data_latency})")
        if reached.threshold_ms is not None and reached.threshold_ms >= promised:
            if self.sync_task_id:
                cat, status = self._catalog(context)
                out.update(catalog_threshold_ms=cat, catalog_threshold=_iso(cat), catalog_checked=status != "no result")
                if status == "no result":  # the sync task did not run its job (marked successful by hand)
                    self.log.warning("%s: no result from %s: the catalog is not checked", head, self.sync_task_id)
                elif cat is None or cat < promised:
                    raise AirflowFailException(
                        f"{head}; but the catalog holds {_iso(cat)} (sync {self.sync_task_id}: {status})")
            self.log.info("%s: kept", head)
            return PokeReturnValue(True, out)
        if not pending:
            # nothing published yet reaches it, but no log holds a record at or before it (no log
            # at all, or the smallest event time in the logs is later, from the write stats): the
            # RO view holds the promise as it is — no compaction was needed (schedule said "no log
            # qualifies"), so no catalog threshold was published either
            m = hook.metrics(self.table_path, include_slices=False, allow_scan=False)
            first = m.get("min_event_time_ms")
            if m.get("remaining_log_files") == 0 or (isinstance(first, int) and first > promised):
                out.update(vacuous=True, min_event_time_ms=first)
                self.log.info("%s: kept (no log record at or before it; earliest in the logs: %s)", head,
                              m.get("min_event_time"))
                return PokeReturnValue(True, out)
        reaching = [p for p in pending if (p.threshold_ms or -1) >= promised]
        if reaching:
            p = reaching[0]
            self.log.info("%s; waiting for pending compaction %s (%s, threshold %s)", head, p.instant,
                          p.state, p.threshold)
            return PokeReturnValue(False)
        raise AirflowFailException(
            f"{head}: threshold not reached and no pending event-time compaction reaches it (another plan was "
            f"pending when this run scheduled, or nothing could be planned); run the group again to compact "
            f"up to {_iso(promised)}")


__all__ = ["EventTimeFreshnessSensor", "catalog_threshold_ms"]
