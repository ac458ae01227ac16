"""Event-time compaction with alerting: a deferrable sensor with a short timeout, an alert line
per failed task, and a rollback of a failed execution.

    wait_for_compaction_window ─→ schedule_compaction ─→ execute_compaction ─┬→ rollback_failed_execution (one_failed)
                                                                            └→ fail_run (one_failed)

* The sensor waits in the triggerer (``deferrable=True``) and gives up after
  ``HUDI_ETC_SENSOR_TIMEOUT`` seconds (default 900): a compaction or clustering that blocks the
  table that long is worth a page. The timeout fails the task without retry
  (``AirflowSensorTimeout``).
* Every failed task appends one JSON line to the file named by ``HUDI_ETC_ALERT_FILE`` (read when
  the alert fires) through :class:`~airflow_hudi_etc.notifications.jsonl.JsonLinesNotifier`; swap
  in ``SmtpNotifier`` / ``SlackNotifier`` for a real channel.
* If execute fails (executor lost, task killed, timeout), ``rollback_failed_execution`` removes what
  it wrote and puts the plan back to requested, so the table never stays with an inflight
  compaction; the next run's sensor sees the plan is its own (same threshold) and executes it.
  ``fail_run`` keeps the run failed (otherwise the successful rollback, a leaf, would make it green).

Table settings as in ``hudi_etc_nightly`` (Variables ``hudi_etc_table_path``,
``hudi_etc_data_latency``; env defaults). Poll interval: ``HUDI_ETC_POLL_INTERVAL`` (60 s).
"""

from __future__ import annotations

import os
from datetime import timedelta

import pendulum

from airflow.sdk import DAG, task
from airflow.sdk.exceptions import AirflowException
from airflow_hudi_etc.notifications.jsonl import JsonLinesNotifier
from airflow_hudi_etc.operators.compaction import (
    ExecuteCompactionOperator,
    RollbackCompactionOperator,
    ScheduleEventTimeCompactionOperator,
)
from airflow_hudi_etc.sensors.event_time import EventTimeCompactionSensor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def setting(name: str, default: str) -> str:
    fallback = os.environ.get(name.upper(), default)
    return "{{ var.value.get(%r, %r) }}" % (name, fallback)


TABLE_PATH = setting("hudi_etc_table_path", os.path.join(REPO, ".demo", "trips"))
LATENCY = setting("hudi_etc_data_latency", "2h")
SPARK_CONN = os.environ.get("HUDI_ETC_SPARK_CONN_ID", "spark_default")
HUDI_CONN = os.environ.get("HUDI_ETC_HUDI_CONN_ID") or None
SPARK_CONF = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"}

alert = JsonLinesNotifier(message="{{ dag.dag_id }}.{{ ti.task_id }} failed for the run ending {{ data_interval_end }}")

with DAG(
    dag_id="hudi_etc_alerting",
    description="event-time compaction with a sensor timeout alert and rollback of a failed execution",
    schedule="@daily",
    start_date=pendulum.parse(os.environ.get("HUDI_ETC_START_DATE", "2026-01-01")),
    catchup=False,
    max_active_runs=1,
    default_args={"retries": 0, "on_failure_callback": alert},
    tags=["hudi", "compaction", "alerting"],
    doc_md=__doc__,
) as dag:
    wait = EventTimeCompactionSensor(
        task_id="wait_for_compaction_window",
        table_path=TABLE_PATH,
        data_latency=LATENCY,
        hudi_conn_id=HUDI_CONN,
        deferrable=True,
        poke_interval=float(os.environ.get("HUDI_ETC_POLL_INTERVAL", "60")),
        timeout=float(os.environ.get("HUDI_ETC_SENSOR_TIMEOUT", "900")),
    )
    schedule = ScheduleEventTimeCompactionOperator(
        task_id="schedule_compaction",
        table_path=TABLE_PATH,
        data_latency=LATENCY,
        conn_id=SPARK_CONN,
        conf=SPARK_CONF,
        hudi_conn_id=HUDI_CONN,
    )
    execute = ExecuteCompactionOperator(
        task_id="execute_compaction",
        table_path=TABLE_PATH,
        conn_id=SPARK_CONN,
        conf=SPARK_CONF,
        hudi_conn_id=HUDI_CONN,
        execution_timeout=timedelta(hours=2),
    )
    rollback = RollbackCompactionOperator(
        task_id="rollback_failed_execution",
        table_path=TABLE_PATH,
        conn_id=SPARK_CONN,
        conf=SPARK_CONF,
        hudi_conn_id=HUDI_CONN,
        trigger_rule="one_failed",
        retries=2,
    )

    @task(trigger_rule="one_failed", on_failure_callback=None)
    def fail_run() -> None:
        raise AirflowException("compaction failed (see the alert file); a failed execution was rolled back")

    wait >> schedule >> execute >> [rollback, fail_run()]
