"""``event_time_compaction(...)``: sensor → schedule → execute (→ sync) as one TaskGroup.

One set of arguments, ``data_latency`` given once::

    from airflow_hudi_etc.task_groups import event_time_compaction

    with DAG("trips_compaction", schedule="@daily", ...):
        event_time_compaction(table_path="s3://lake/trips", data_latency="2h",
                              catalog={"database": "lake", "table": "trips"},
                              outlets=[table_asset(path="s3://lake/trips")])

Tasks (ids prefixed with ``group_id``): ``wait`` (:class:`EventTimeCompactionSensor`), ``schedule``,
``execute`` (runs exactly the instant ``schedule`` returned through XCom, or reports "nothing to
execute" and is skipped: no other run's plan), ``sync`` (only with ``catalog``; runs when execute
was skipped too, so a catalog that missed an earlier sync catches up). A failed or killed
execution leaves an inflight compaction that execute's retry (or the next run's, whose sensor
says ``resume``) rolls back and executes again.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any, Mapping

from airflow.sdk import TaskGroup


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
    :param sensor_kwargs, schedule_kwargs, execute_kwargs, sync_kwargs: further arguments of each
        task (``mode``, ``timeout``, ``deferrable``, ``retries``, ``execution_timeout``, ...).
    """
    from .operators.compaction import (
        ExecuteCompactionOperator,
        ScheduleEventTimeCompactionOperator,
        SyncEventTimeThresholdOperator,
    )
    from .sensors.event_time import EventTimeCompactionSensor

    spark = {"table_path": table_path, "conn_id": spark_conn_id, "conf": dict(conf or {}) or None,
             "py_files": py_files, "env_vars": dict(env_vars) if env_vars else None, "hudi_conn_id": hudi_conn_id}
    with TaskGroup(group_id=group_id) as group:
        wait = EventTimeCompactionSensor(task_id="wait", table_path=table_path, data_latency=data_latency,
                                         compaction_time=compaction_time, hudi_conn_id=hudi_conn_id,
                                         **dict(sensor_kwargs or {}))
        schedule = ScheduleEventTimeCompactionOperator(task_id="schedule", data_latency=data_latency,
                                                       compaction_time=compaction_time, link_mode=link_mode,
                                                       exact_split=exact_split, **spark,
                                                       **dict(schedule_kwargs or {}))
        execute = ExecuteCompactionOperator(task_id="execute", schedule_task_id=schedule.task_id,
                                            outlets=list(outlets or []), **spark, **dict(execute_kwargs or {}))
        wait >> schedule >> execute
        if catalog:
            cat = dict(catalog)
            sync = SyncEventTimeThresholdOperator(task_id="sync", table=cat.pop("table"), **cat, **spark,
                                                  trigger_rule="none_failed", **dict(sync_kwargs or {}))
            execute >> sync
    return group


__all__ = ["event_time_compaction"]
