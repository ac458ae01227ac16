"""``ExecuteCompactionOperator``: execute a planned compaction (``hudi-etc execute``), or let
Java's compaction execute it and verify its commit.

Retry-safe: a completed instant is reported (``status: "already completed"``) without Spark; an
inflight one (a crashed or killed run) is rolled back by the job and executed again. A killed or
failed execution leaves an inflight compaction, never a half-visible one: readers ignore it until
its commit, and the next ``execute`` (or ``RollbackCompactionOperator``) cleans up.

Metrics go to Airflow's ``Stats`` (``hudi_etc.<metric>``, tag ``table``) after each run:
``threshold_lag_seconds``, ``remaining_log_files``, ``remaining_log_bytes``, ``pending_compactions``,
``pending_plan_age_seconds``, and after a completed compaction ``execution_seconds``,
``logs_compacted``, ``planning_seconds``, ``link_bytes_written``.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from airflow.sdk.exceptions import AirflowSkipException

from ..failfast import fail_fast
from .base import HudiEtcSparkJobOperator, emit_gauges, none_if_empty
from .scheduling import scheduled_instant

if TYPE_CHECKING:
    from airflow.sdk import Context


class ExecuteCompactionOperator(HudiEtcSparkJobOperator):
    """Execute a planned compaction (``hudi-etc execute``). XCom: the job's metrics (``status``:
    ``completed`` / ``already completed`` / ``nothing to execute``, ``instant``, ``threshold``,
    ``threshold_ms``, logs compacted/remaining, ...) plus ``freshness`` (the table's metrics after).

    Which compaction: ``instant`` when given, else the one this run's schedule task planned (the
    ``instant`` in the XCom of ``schedule_task_id``, default: the upstream schedule task(s) of this
    DAG). When that task planned nothing (covered, another plan pending, no log qualifies), the
    task reports ``nothing to execute`` (XCom) and is **skipped**, so no asset event says the view
    got fresher. It never picks up a plan another run made, unless ``run_oldest_pending=True``
    (any oldest pending plan) or ``adopt_pending_plan=True``: the oldest pending compaction is
    executed when it is *ours and safe* — an event-time plan of this provider (it carries a
    threshold; a Java compactor's plan is not) that is still ``requested`` (an inflight one may be
    executing in another run right now: left alone). Whether the run then holds its threshold is
    for :class:`~airflow_hudi_etc.sensors.freshness.EventTimeFreshnessSensor` to say.

    Assets: after a completed compaction (also one a previous try committed), every outlet that
    is this table's asset (:func:`airflow_hudi_etc.assets.table_asset`) gets an asset event whose
    ``extra`` holds the threshold, the instant and the figures; every ``AssetAlias`` outlet gets
    an event for this table's asset (for DAGs whose table path is only known at run time). An
    outlet that is the asset of another table is refused before anything runs.

    :param instant: the compaction to execute (templated).
    :param schedule_task_id: task whose XCom names the instant.
    :param run_oldest_pending: with no instant from the argument or a schedule task, execute the
        oldest pending compaction (whoever planned it).
    :param java_executes: ``True``: Java's inline/async compaction executes
        the plan; the task waits for C's commit (poking every ``java_poke_seconds``, at most
        ``java_wait_seconds``) and verifies it, no Spark job. ``None`` (default): so where the table
        records ``hoodie.etc.java.compaction=on`` or its timeline shows Java compacting; where
        nobody recorded whether Java compacts (a table Java created), the task fails at once with
        the typed ``java_compaction`` error naming ``hudi-etc configure --java-compaction on|off``
        (no job submitted, no waiting). ``False``: our execute (refused where Java compacts or may).
    :param adopt_pending_plan: with no instant from the argument or a schedule task, execute the
        oldest pending compaction if it is a requested event-time plan (the task group sets it).
    """

    template_fields: Sequence[str] = (*HudiEtcSparkJobOperator.template_fields, "instant")
    command = "execute"

    def __init__(self, *, instant: str | None = None, schedule_task_id: str | None = None,
                 run_oldest_pending: bool = False, adopt_pending_plan: bool = False,
                 java_executes: bool | None = None, java_wait_seconds: float = 3600.0,
                 java_poke_seconds: float = 30.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.instant = instant
        self.schedule_task_id = schedule_task_id
        self.run_oldest_pending = run_oldest_pending
        self.java_executes = java_executes  # True: Java executes our plans, the task waits for its commit
        self.java_wait_seconds = java_wait_seconds
        self.java_poke_seconds = java_poke_seconds
        self.adopt_pending_plan = adopt_pending_plan

    def job_values(self, *, instant: str) -> dict[str, Any]:
        return {"path": self.table_path, "instant": instant}

    def resolve_instant(self, context: Context, hook) -> tuple[str | None, str]:
        inst = none_if_empty(self.instant)
        if inst:
            return str(inst), "argument"
        inst, source = scheduled_instant(self, context)
        if inst:
            return inst, source
        if self.run_oldest_pending or self.adopt_pending_plan:
            plans = hook.pending_plans(self.table_path)
            if plans and self.run_oldest_pending:
                return plans[0]["instant"], "oldest pending compaction"
            if plans and plans[0]["threshold_ms"] is not None and plans[0]["state"] == "requested":
                p = plans[0]
                return p["instant"], f"adopted pending event-time plan (threshold {p['threshold']}); {source}"
            if plans:
                source += f"; pending compaction {plans[0]['instant']} not adopted ({plans[0]['state']}" + (
                    ", not an event-time plan)" if plans[0]["threshold_ms"] is None else ")")
        return None, source

    def _asset_outlets(self) -> tuple[list, list]:
        """(this table's asset outlets, AssetAlias outlets); another table's asset is an error."""
        from ..assets import asset_uri, is_table_asset
        from ..hudi.errors import InvalidInputError

        mine, aliases = [], []
        uri = asset_uri(self.table_path)
        for o in self.outlets or []:
            if type(o).__name__ == "AssetAlias":
                aliases.append(o)
            elif is_table_asset(o):
                if o.uri != uri:
                    raise InvalidInputError(f"outlet {o.uri} is not the asset of table {self.table_path} ({uri})")
                mine.append(o)
        return mine, aliases

    def _emit_asset_events(self, context: Context, result: dict, assets: list, aliases: list) -> list[str]:
        from ..assets import event_extra, table_asset

        events = context.get("outlet_events") if hasattr(context, "get") else None
        if events is None or not (assets or aliases):
            return []
        extra = event_extra(result, self.table_path)
        for a in assets:
            events[a].extra.update(extra)
        for alias in aliases:
            events[alias].add(table_asset(path=self.table_path), extra=extra)
        return sorted({a.uri for a in assets} | ({table_asset(path=self.table_path).uri} if aliases else set()))

    @fail_fast
    def execute(self, context: Context) -> dict:
        from ..hudi.errors import InvalidTimelineError

        assets, aliases = self._asset_outlets()
        hook = self.hudi_hook()
        instant, source = self.resolve_instant(context, hook)
        table = hook.load_table(self.table_path)
        if instant is None:
            self.log.info("nothing to execute: this run scheduled no compaction (%s)", source)
            result = {"instant": None, "status": "nothing to execute", "spark_submitted": False}
        else:
            state = table.compaction.state(instant)
            self.log.info("compaction %s (%s) is %s", instant, source, state)
            if state is None:
                raise InvalidTimelineError(f"no compaction {instant} on the timeline of {self.table_path}")
            if state == "completed":  # a retry after the commit: report it, nothing to run
                result = {**table.compaction.execute(instant).as_dict(), "spark_submitted": False}
            elif wait_for_java(self, table):  # Java's compaction executes it: wait for its commit, verify it
                result = {**await_java_execution(table, instant, self.java_wait_seconds,
                                                 self.java_poke_seconds, log=self.log), "spark_submitted": False}
            else:  # refused here, typed, before a job is submitted: Java compacts, or nobody recorded whether
                table.compaction.check_execute()
                result = self.run_job(self.job_argv(instant=instant), context)
        result["instant_source"] = source
        fresh = hook.metrics(self.table_path)
        result["freshness"] = {k: fresh.get(k) for k in (
            "threshold", "threshold_ms", "threshold_lag_seconds", "remaining_log_files", "remaining_log_bytes",
            "min_event_time", "pending_compactions", "last_compaction_instant")}
        gauges = {k: fresh.get(k) for k in ("threshold_lag_seconds", "remaining_log_files", "remaining_log_bytes")}
        gauges["pending_compactions"] = len(fresh.get("pending_compactions") or [])
        gauges["pending_plan_age_seconds"] = fresh.get("pending_plan_age_seconds")  # None (skipped) when none
        if result.get("status") == "completed":
            gauges["execution_seconds"] = result.get("execution_seconds")
            gauges["logs_compacted"] = result.get("logs_compacted")
            gauges["planning_seconds"] = result.get("planning_seconds")
            gauges["link_bytes_written"] = result.get("link_bytes_written")
        result["metrics_sent"] = emit_gauges(gauges, table=self.table_tag or fresh.get("table"), log=self.log)
        self._lineage_result = result
        if instant is None:
            ti = context.get("ti") if hasattr(context, "get") else None
            if ti is not None:  # the report stays readable although the task is skipped
                ti.xcom_push(key="return_value", value=result)
            raise AirflowSkipException(f"nothing to execute: this run scheduled no compaction ({source})")
        result["asset_events"] = self._emit_asset_events(context, result, assets, aliases)
        return result

    def lineage_writes(self, result: Mapping[str, Any]) -> bool:
        return result.get("status") in ("completed", "already completed")


# ---- "Java executes our plans" ------------------------------------------------------------------
def wait_for_java(op: "ExecuteCompactionOperator", table) -> bool:
    """Whether the execute task lets Java's compaction execute the plan (see ``java_executes``);
    ``table``: an :class:`airflow_hudi_etc.api.Table`."""
    return op.java_executes if op.java_executes is not None else table.compaction.java_compacts()


def await_java_execution(table, instant: str, wait_seconds: float, poke_seconds: float, *, log=None,
                         clock=time.monotonic, sleep=time.sleep) -> dict:
    """Wait until Java committed compaction ``instant`` of ``table`` (an
    :class:`airflow_hudi_etc.api.Table`) and verify the commit
    (:meth:`~airflow_hudi_etc.api.Compaction.java_execution`); a typed error after ``wait_seconds``."""
    from ..hudi.errors import JavaExecutionPendingError

    deadline = clock() + wait_seconds
    while True:
        r = table.compaction.java_execution(instant).as_dict()
        if r["status"] == "completed":
            return r
        if clock() >= deadline:
            raise JavaExecutionPendingError(
                f"compaction {instant} is still {r['state']} after {wait_seconds:.0f} s of waiting for Java to execute "
                f"it: is a Java writer with inline/async compaction running on the table?")
        if log is not None:
            log.info("compaction %s is %s: waiting for Java's compaction", instant, r["state"])
        sleep(poke_seconds)


__all__ = ["ExecuteCompactionOperator", "await_java_execution", "wait_for_java"]
