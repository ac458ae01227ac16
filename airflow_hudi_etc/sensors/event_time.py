"""``EventTimeCompactionSensor``: wait until an event-time compaction for this run may proceed."""

from __future__ import annotations

import datetime as _dt
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Sequence

from airflow.sdk import BaseSensorOperator, PokeReturnValue, conf
from airflow.sdk.exceptions import AirflowException, AirflowSensorTimeout

from ..failfast import fail_fast

if TYPE_CHECKING:
    from airflow.sdk import Context


def resolve_compaction_time(value: Any, context: Any) -> _dt.datetime:
    """The run's compaction time: the rendered argument, else ``data_interval_end``, else the logical
    date / run_after of the run, else now (UTC)."""
    from ..api import parse_time

    if isinstance(value, str) and value.strip() in ("", "None", "null"):
        value = None
    if value is None:
        ctx = context or {}
        value = ctx.get("data_interval_end") or ctx.get("logical_date")
        if value is None:
            dr = ctx.get("dag_run")
            value = getattr(dr, "run_after", None) if dr is not None else None
    if value in (None, ""):
        return _dt.datetime.now(_dt.timezone.utc)
    if isinstance(value, _dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=_dt.timezone.utc)
    return parse_time(str(value))


def threshold_for(compaction_time: Any, data_latency: Any, context: Any = None) -> tuple[_dt.datetime, int]:
    """(compaction time, threshold ms) exactly as ``hudi-etc schedule`` computes them."""
    from ..api import parse_duration, threshold_ms_for

    ct = resolve_compaction_time(compaction_time, context)
    latency = data_latency if isinstance(data_latency, timedelta) else parse_duration(str(data_latency))
    return ct, threshold_ms_for(ct, latency)


def _raise_typed(type_name: str, message: str) -> None:
    """Re-raise an error reported by the trigger as the typed error it was (if it is one of ours)."""
    from ..hudi import errors

    cls = getattr(errors, type_name or "", None)
    if isinstance(cls, type) and issubclass(cls, errors.HudiEtcError):
        raise cls(message)
    raise AirflowException(f"event-time check failed: {type_name}: {message}")


class EventTimeCompactionSensor(BaseSensorOperator):
    """Succeeds when an event-time compaction with ``threshold = compaction_time − data_latency``
    may be planned now (**ready**), or is not needed because a completed one already published a
    threshold at least as late (**covered**: a backfill run with nothing to do), or was already
    planned for exactly this threshold by an earlier attempt (**resume**). Waits while another
    compaction or a clustering is pending.

    The XCom (return value) is the check: ``{state, done, threshold, threshold_ms, covered, ready,
    reason, message, last_threshold, last_threshold_ms, last_compaction_instant,
    pending_compactions, pending_clustering, pending_plan, compaction_time, data_latency_seconds}``.

    Modes: ``poke`` and ``reschedule`` (the base class's loop around :meth:`poke`), or
    ``deferrable=True``: one check in the worker, then :class:`EventTimeCompactionTrigger` in the
    triggerer, carrying a wall-clock deadline of ``timeout`` seconds. A timeout raises
    :class:`AirflowSensorTimeout` in every mode (no retries); with ``soft_fail=True`` the task is
    skipped instead.

    :param table_path: base path of the Hudi MOR table (templated).
    :param data_latency: how late events may arrive: ``2h``, ``30m``, ``PT2H`` (templated).
    :param compaction_time: ISO-8601 time (templated); default: the run's ``data_interval_end``.
    :param hudi_conn_id: ``hudi`` connection with fsspec storage options (default ``hudi_default``,
        which may be absent; None: the filesystem's defaults).

    Errors a retry cannot fix (no table, bad input, unsupported table: see
    :mod:`airflow_hudi_etc.failfast`) fail the task at once (``AirflowFailException``).
    :param deferrable: wait in the triggerer instead of a worker slot
        (default ``[operators] default_deferrable``).
    :param poll_interval: seconds between checks in the trigger (default: ``poke_interval``).
    """

    template_fields: Sequence[str] = ("table_path", "data_latency", "compaction_time")
    ui_color = "#f0e4ff"

    def __init__(
        self,
        *,
        table_path: str,
        data_latency: str | timedelta,
        compaction_time: str | _dt.datetime | None = None,
        hudi_conn_id: str | None = "hudi_default",
        deferrable: bool = conf.getboolean("operators", "default_deferrable", fallback=False),
        poll_interval: float | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.table_path = table_path
        self.data_latency = data_latency
        self.compaction_time = compaction_time
        self.hudi_conn_id = hudi_conn_id
        self.deferrable = deferrable
        self.poll_interval = self.poke_interval if poll_interval is None else float(poll_interval)

    def _hook(self):
        from ..hooks.hudi import HudiTableHook

        return HudiTableHook(self.hudi_conn_id)

    def _threshold(self, context: Context) -> tuple[_dt.datetime, int]:
        return threshold_for(self.compaction_time, self.data_latency, context)

    def _xcom(self, result: dict, ct: _dt.datetime) -> dict:
        from ..api import parse_duration

        latency = self.data_latency if isinstance(self.data_latency, timedelta) else parse_duration(str(self.data_latency))
        return {**result, "compaction_time": ct.isoformat(), "data_latency_seconds": latency.total_seconds()}

    @fail_fast
    def poke(self, context: Context) -> PokeReturnValue:
        ct, threshold_ms = self._threshold(context)
        result = self._hook().check(self.table_path, threshold_ms=threshold_ms)
        self.log.info("%s: %s", self.table_path, result["message"])
        return PokeReturnValue(result["done"], self._xcom(result, ct) if result["done"] else None)

    def execute(self, context: Context) -> Any:
        if not self.deferrable:
            return super().execute(context)
        first = self.poke(context)
        if first.is_done:
            return first.xcom_value
        from ..triggers.event_time import EventTimeCompactionTrigger

        ct, threshold_ms = self._threshold(context)
        self.defer(
            trigger=EventTimeCompactionTrigger(
                table_path=self.table_path,
                threshold_ms=threshold_ms,
                deadline=time.time() + self.timeout,
                poll_interval=self.poll_interval,
                hudi_conn_id=self.hudi_conn_id,
            ),
            method_name="execute_complete",
            kwargs={"compaction_time": ct.isoformat()},
            timeout=timedelta(seconds=self.timeout),
        )

    @fail_fast
    def execute_complete(self, context: Context, event: dict[str, Any] | None = None,
                         compaction_time: str | None = None) -> dict:
        """Resumed from the trigger: success → the XCom; timeout → :class:`AirflowSensorTimeout`
        (the base class's ``resume_execution`` turns it into a skip under ``soft_fail``)."""
        event = event or {}
        status = event.get("status")
        ct = resolve_compaction_time(compaction_time, context)
        if status == "success":
            self.log.info("%s: %s (after %s checks)", self.table_path, event["result"]["message"], event.get("polls"))
            return self._xcom(event["result"], ct)
        if status == "timeout":
            last = (event.get("result") or {}).get("message", "")
            raise AirflowSensorTimeout(
                f"Sensor has timed out: no event-time compaction window for {self.table_path} "
                f"before the deadline ({self.timeout} s); last check: {last}")
        if status == "error":
            _raise_typed(event.get("type", ""), event.get("message", ""))
        raise AirflowException(f"unexpected trigger event: {event!r}")
