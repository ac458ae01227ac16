"""``ScheduleEventTimeCompactionOperator``: plan an event-time compaction (``hudi-etc schedule``).

Retry-safe with as few JVM starts as possible: the table's timeline is checked here first, in this
process. A pending plan for the same threshold (an earlier attempt made it) is reused without
Spark; a covered threshold (a backfill run) returns ``instant: null`` without Spark. If the job
itself answers ``outcome: pending`` with ``pending_instant`` X and X's threshold is ours, X is the
result. :func:`scheduled_instant` is how the execute and rollback tasks find what this run planned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from airflow.sdk import BaseOperator
from airflow.sdk.exceptions import AirflowException

from ..failfast import fail_fast
from .base import HudiEtcSparkJobOperator, none_if_empty

if TYPE_CHECKING:
    from airflow.sdk import Context


class ScheduleEventTimeCompactionOperator(HudiEtcSparkJobOperator):
    """Plan an event-time compaction (``hudi-etc schedule``) for
    ``threshold = compaction_time − data_latency``.

    XCom: ``{instant, threshold, threshold_ms, reason, operations, compaction_time, state, covered,
    reused, spark_submitted}`` — ``instant`` is null when nothing was planned (``reason`` says why:
    covered, another plan pending, no log qualifies).

    :param data_latency: ``2h``, ``30m``, ``PT2H`` (templated).
    :param compaction_time: ISO-8601 (templated); default the run's ``data_interval_end``.
    :param link_mode: ``auto`` | ``copy`` | ``symlink``: how remaining logs are re-exposed.
    :param exact_split: records after the threshold stay out of the base file.
    :param event_time_field: event-time column for tables whose properties name none.
    """

    template_fields: Sequence[str] = (*HudiEtcSparkJobOperator.template_fields, "data_latency", "compaction_time",
                                      "link_mode", "event_time_field")
    command = "schedule"

    def __init__(self, *, data_latency: str, compaction_time: str | None = None, link_mode: str = "auto",
                 exact_split: bool = False, event_time_field: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_latency = data_latency
        self.compaction_time = compaction_time
        self.link_mode = link_mode
        self.exact_split = exact_split
        self.event_time_field = event_time_field

    def job_values(self, *, compaction_time: str) -> dict[str, Any]:
        return {"path": self.table_path, "data_latency": str(self.data_latency), "compaction_time": compaction_time,
                "link_mode": self.link_mode, "exact_split": bool(self.exact_split),
                "event_time_field": none_if_empty(self.event_time_field)}

    @fail_fast
    def execute(self, context: Context) -> dict:
        from ..api import parse_duration
        from ..hudi.errors import InvalidInputError
        from ..sensors.event_time import threshold_for

        if self.link_mode not in ("auto", "copy", "symlink"):
            raise InvalidInputError(f"link mode {self.link_mode!r}: use auto, copy or symlink")
        parse_duration(str(self.data_latency))
        ct, threshold_ms = threshold_for(none_if_empty(self.compaction_time), self.data_latency, context)
        table = self.hudi_hook().load_table(self.table_path)
        pre = table.compaction.check(threshold_ms)
        base = {"threshold": pre.readiness.threshold, "threshold_ms": threshold_ms, "compaction_time": ct.isoformat(),
                "state": pre.state, "covered": pre.state == "covered", "reused": False,
                "spark_submitted": False, "operations": 0}
        if pre.state == "resume":
            self.log.info("reusing compaction %s planned for this threshold by an earlier attempt", pre.pending_plan)
            self._lineage_result = {**base, **_reused(pre)}
            return self._lineage_result
        if pre.state != "ready":
            self.log.info("not scheduling: %s", pre.message)
            self._lineage_result = {**base, "instant": None, "reason": pre.readiness.reason}
            return self._lineage_result
        res = self.run_job(self.job_argv(compaction_time=ct.isoformat()), context)
        if res.get("threshold_ms") not in (None, threshold_ms):
            raise AirflowException(f"the job planned threshold {res.get('threshold_ms')}, expected {threshold_ms}")
        out = {**base, **res}
        if res.get("instant") is None and res.get("outcome") == "pending":
            # lost a race with a retry of ourselves (or another scheduler with our threshold): the
            # same one decision (plan_decision, through the table's check) says whether it is ours
            again = table.compaction.check(threshold_ms)
            if again.state == "resume":
                out.update(_reused(again))
        self.log.info("schedule: instant %s (%s)", out.get("instant"), out.get("reason"))
        self._lineage_result = out
        return out

    def lineage_writes(self, result: Mapping[str, Any]) -> bool:
        return bool(result.get("instant"))  # a plan on the timeline (made by this try or an earlier one)


def _reused(check) -> dict[str, Any]:
    """The schedule XCom fields for a pending plan that already carries this run's threshold
    (``check``: the table's :class:`~airflow_hudi_etc.api.EventTimeCheck` in state ``resume``)."""
    return {"instant": check.pending_plan, "reason": "already scheduled", "reused": True,
            "operations": check.operations or 0}


def scheduled_instant(op: BaseOperator, context: Context) -> tuple[str | None, str]:
    """The instant a schedule task of this run planned: ``op.schedule_task_id``, else every upstream
    :class:`ScheduleEventTimeCompactionOperator` (direct or not)."""
    ids = [op.schedule_task_id] if op.schedule_task_id else []
    if not ids and op.has_dag():
        ids = sorted(t.task_id for t in op.get_flat_relatives(upstream=True)
                     if isinstance(t, ScheduleEventTimeCompactionOperator))
    ti = context.get("ti") if hasattr(context, "get") else None
    nothing = []
    for task_id in ids:
        x = ti.xcom_pull(task_ids=task_id) if ti is not None else None
        if isinstance(x, Mapping) and x.get("instant"):
            return str(x["instant"]), f"XCom of {task_id}"
        if isinstance(x, Mapping):
            nothing.append(f"{task_id} planned nothing: {x.get('reason')}")
    return None, "; ".join(nothing) or "no schedule XCom"


__all__ = ["ScheduleEventTimeCompactionOperator", "scheduled_instant"]
