"""Event-time compaction with alerting: a deferrable sensor with a short timeout, an alert line
per failed task, and a rollback of a failed execution.

    wait_for_compaction_window ─→ schedule_compaction ─→ execute_compaction ─┬→ rollback_failed_execution (one_failed)
                                                                            └→ fail_run (one_failed)

* The sensor waits in the triggerer (``deferrable=True``) and gives up after 15 minutes: a
  compaction or clustering that blocks the table that long is worth a page. The timeout fails the
  task without retry (``AirflowSensorTimeout``).
* Every failed task appends one JSON line to the file named by ``HUDI_ETC_ALERT_FILE`` (read when
  the alert fires) through :class:`~airflow_hudi_etc.notifications.jsonl.JsonLinesNotifier`; swap
  in ``SmtpNotifier`` / ``SlackNotifier`` for a real channel. Its message uses only fields every
  run has (a manually triggered run has no data interval).
* If execute fails (executor lost, task killed, timeout), ``rollback_failed_execution`` removes what
  it wrote and puts the plan back to requested, so the table never stays with an inflight
  compaction; the next run's sensor sees the plan is its own (same threshold) and executes it.
  ``fail_run`` keeps the run failed (otherwise the successful rollback, a leaf, would make it green).

Settings: the DAG's params ``table_path`` and ``data_latency`` (as in ``hudi_etc_nightly``), read at
run time. ``catchup=False``: unpausing runs the latest day only.
"""

from __future__ import annotations

import os
from datetime import timedelta

import pendulum

from airflow.sdk import DAG, Param, task
from airflow.sdk.exceptions import AirflowException
from airflow_hudi_etc.notifications.jsonl import JsonLinesNotifier
from airflow_hudi_etc.operators.compaction import (
    ExecuteCompactionOperator,
    RollbackCompactionOperator,
    ScheduleEventTimeCompactionOperator,
)
from airflow_hudi_etc.sensors.event_time import EventTimeCompactionSensor

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".demo")
TABLE_PATH = "{{ params.table_path }}"
LATENCY = "{{ params.data_latency }}"
SPARK_CONF = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"}

alert = JsonLinesNotifier(message="{{ dag.dag_id }}.{{ ti.task_id }} failed in run {{ run_id }}")

with DAG(
    dag_id="hudi_etc_alerting",
    description="event-time compaction with a sensor timeout alert and rollback of a failed execution",
    schedule="@daily",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    params={
        "table_path": Param(os.path.join(DEMO, "trips"), type="string", minLength=1),
        "data_latency": Param("2h", type="string", minLength=1),
    },
    default_args={"retries": 0, "on_failure_callback": alert},
    tags=["hudi", "compaction", "alerting"],
    doc_md=__doc__,
) as dag:
    wait = EventTimeCompactionSensor(
        task_id="wait_for_compaction_window",
        table_path=TABLE_PATH,
        data_latency=LATENCY,
        deferrable=True,
        poke_interval=60,
        timeout=timedelta(minutes=15),
    )
    schedule = ScheduleEventTimeCompactionOperator(
        task_id="schedule_compaction",
        table_path=TABLE_PATH,
        data_latency=LATENCY,
        conf=SPARK_CONF,
    )
    execute = ExecuteCompactionOperator(
        task_id="execute_compaction",
        table_path=TABLE_PATH,
        schedule_task_id="schedule_compaction",
        conf=SPARK_CONF,
        execution_timeout=timedelta(hours=2),
    )
    rollback = RollbackCompactionOperator(
        task_id="rollback_failed_execution",
        table_path=TABLE_PATH,
        schedule_task_id="schedule_compaction",
        conf=SPARK_CONF,
        trigger_rule="one_failed",
        retries=2,
    )

    @task(trigger_rule="one_failed", on_failure_callback=None)
    def fail_run() -> None:
        raise AirflowException("compaction failed (see the alert file); a failed execution was rolled back")

    wait >> schedule >> execute >> [rollback, fail_run()]
