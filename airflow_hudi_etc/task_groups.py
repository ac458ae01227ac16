"""``event_time_compaction(...)``: sensor → schedule → execute (→ sync) as one TaskGroup.

One set of arguments, ``data_latency`` given once::

    from airflow_hudi_etc.task_groups import event_time_compaction

    with DAG("trips_compaction", schedule="@daily", ...):
        event_time_compaction(table_path="s3://lake/trips", data_latency="2h",
                              catalog={"database": "lake", "table": "trips"},
                              outlets=[table_asset(path="s3://lake/trips")])

Tasks (ids prefixed with ``group_id``): ``wait`` (:class:`EventTimeCompactionSensor`), ``schedule``,
``execute`` (runs the instant ``schedule`` returned through XCom; when ``schedule`` planned nothing
because another plan became pending after ``wait``, it executes that plan if it is ours and safe —
a ``requested`` event-time plan — else it reports "nothing to execute" and is skipped), ``sync``
(only with ``catalog``; runs when execute was skipped too, so a catalog that missed an earlier sync
catches up) and ``check`` (:class:`EventTimeFreshnessSensor`, the last word: the run is green only
when the table — and the catalog, with ``catalog`` — holds this run's threshold or a later one; it
waits while a pending event-time plan that reaches it exists, else fails, naming the threshold
reached and the one promised). A failed or killed execution leaves an inflight compaction that
execute's retry (or the next run's, whose sensor says ``resume``) rolls back and executes again.

One run of a table at a time: every task runs in the table's pool (:func:`table_pool`: one slot,
create it with ``airflow pools set <name> 1 "..."``; a task in a missing pool is never scheduled)
with ``weight_rule="upstream"`` (a run's later tasks go before another run's first) and the two
sensors in ``mode="reschedule"`` unless told otherwise (a waiting sensor holds no slot), so a backfill
(``--max-active-runs`` defaults to 10, whatever the DAG's ``max_active_runs``) cannot run two
compactions of one table side by side.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Mapping

from airflow.sdk import TaskGroup

#: prefix of the pools :func:`table_pool` names
POOL_PREFIX = "hudi_etc_"


def table_pool(table_path: str, *, dag_id: str | None = None, group_id: str | None = None) -> str:
    """The pool of a table's compaction tasks, shared by every DAG naming that table:
    ``hudi_etc_<the path's last characters, [A-Za-z0-9_.-]>_<8 hex digits of the asset URI's
    SHA-1>`` (``/lake/trips`` → ``hudi_etc_lake_trips_1a2b3c4d``: readable, one per table, and a
    name the REST API and the UI can address — no ``/``). A templated path is only known at run
    time (a pool is not templated): then ``hudi_etc_<dag_id>.<group_id>``."""
    import hashlib
    import re

    from .assets import asset_uri

    if "{{" in str(table_path) or "{%" in str(table_path):
        return f"{POOL_PREFIX}{dag_id}.{group_id}"
    uri = asset_uri(table_path)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", uri.split("://", 1)[-1].split(":", 1)[-1]).strip("_")[-60:]
    return f"{POOL_PREFIX}{slug}_{hashlib.sha1(uri.encode()).hexdigest()[:8]}"


def event_time_compaction(
    *,
    table_path: str,
    data_latency: str | timedelta,
    group_id: str = "event_time_compaction",
    compaction_time: str | None = None,
    hudi_conn_id: str | None = "hudi_default",
    spark_conn_id: str = "spark_default",
    conf: Mapping[str, Any] | None = None,
    py_files: str | None = None,
    env_vars: Mapping[str, Any] | None = None,
    link_mode: str = "auto",
    exact_split: bool = False,
    catalog: Mapping[str, Any] | None = None,
    outlets: list | None = None,
    sensor_kwargs: Mapping[str, Any] | None = None,
    schedule_kwargs: Mapping[str, Any] | None = None,
    execute_kwargs: Mapping[str, Any] | None = None,
    sync_kwargs: Mapping[str, Any] | None = None,
    check_kwargs: Mapping[str, Any] | None = None,
    pool: str | None = None,
) -> TaskGroup:
    """Build the group in the current DAG context and return it (chain it with ``>>``).

    :param table_path: the table's base path (templated in every task).
    :param data_latency: how late events may arrive (``2h``, ``PT2H``; templated), for the sensor
        and the schedule task alike.
    :param compaction_time: ISO-8601 (templated); default each run's ``data_interval_end``.
    :param catalog: ``{"table": ..., "database": ..., "metastore_uri" | "metastore_dir": ...}``:
        add the catalog sync task.
    :param outlets: assets of the execute task (this table's asset and/or an ``AssetAlias``): an
        asset event with the threshold after each completed compaction.
    :param sensor_kwargs, schedule_kwargs, execute_kwargs, sync_kwargs, check_kwargs: further
        arguments of each task (``mode``, ``timeout``, ``deferrable``, ``retries``,
        ``execution_timeout``, ...).
    :param pool: the pool of every task (one slot); default :func:`table_pool`; ``"default_pool"``
        opts out of the serialization.
    """
    from .operators.catalog_sync import SyncEventTimeThresholdOperator
    from .operators.execution import ExecuteCompactionOperator
    from .operators.scheduling import ScheduleEventTimeCompactionOperator
    from .sensors.event_time import EventTimeCompactionSensor
    from .sensors.freshness import EventTimeFreshnessSensor

    if pool is None:
        from airflow.sdk.definitions._internal.contextmanager import DagContext

        dag = DagContext.get_current()
        pool = table_pool(table_path, dag_id=getattr(dag, "dag_id", None), group_id=group_id)
    common = {"pool": pool, "weight_rule": "upstream"}
    # a waiting sensor must not hold the table's one pool slot (another run's execute may need it)
    sensing = {**common, "mode": "reschedule"}
    spark = {"table_path": table_path, "conn_id": spark_conn_id, "conf": dict(conf or {}) or None,
             "py_files": py_files, "env_vars": dict(env_vars) if env_vars else None, "hudi_conn_id": hudi_conn_id,
             **common}
    with TaskGroup(group_id=group_id) as group:
        wait = EventTimeCompactionSensor(task_id="wait", table_path=table_path, data_latency=data_latency,
                                         compaction_time=compaction_time, hudi_conn_id=hudi_conn_id,
                                         **{**sensing, **dict(sensor_kwargs or {})})
        schedule = ScheduleEventTimeCompactionOperator(task_id="schedule", data_latency=data_latency,
                                                       compaction_time=compaction_time, link_mode=link_mode,
                                                       exact_split=exact_split, **spark,
                                                       **dict(schedule_kwargs or {}))
        execute = ExecuteCompactionOperator(task_id="execute", schedule_task_id=schedule.task_id,
                                            adopt_pending_plan=True, outlets=list(outlets or []), **spark,
                                            **dict(execute_kwargs or {}))
        wait >> schedule >> execute
        last, sync_id = execute, None
        if catalog:
            cat = dict(catalog)
            sync = SyncEventTimeThresholdOperator(task_id="sync", table=cat.pop("table"), **cat, **spark,
                                                  trigger_rule="none_failed", **dict(sync_kwargs or {}))
            execute >> sync
            last, sync_id = sync, sync.task_id
        check = EventTimeFreshnessSensor(task_id="check", table_path=table_path, data_latency=data_latency,
                                         compaction_time=compaction_time, hudi_conn_id=hudi_conn_id,
                                         sync_task_id=sync_id, trigger_rule="none_failed",
                                         **{**sensing, **dict(check_kwargs or {})})
        last >> check
    return group


__all__ = ["event_time_compaction", "table_pool"]
