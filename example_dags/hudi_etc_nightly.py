"""Nightly event-time compaction of a Hudi MOR table, with the threshold published in the catalog.

    wait_for_compaction_window → schedule_compaction → execute_compaction → sync_catalog

Every run compacts up to ``threshold = data_interval_end − data_latency``: the run for the day
ending at D guarantees that the read-optimized view holds every record with event time
≤ D − latency. ``catchup=True`` + ``max_active_runs=1`` replay missed days in order; a run whose
threshold an earlier (later-dated) run already covered is a no-op (the sensor says ``covered``,
nothing is submitted to Spark) and the catalog threshold never moves back.

Settings, read at run time from Airflow Variables (defaults: environment variables of the same
name in upper case at parse time, else the local demo table that ``scripts/demo.sh`` builds):

=========================  ==========================================  ==========================
Variable                   meaning                                     default
=========================  ==========================================  ==========================
hudi_etc_table_path        the table's base path (or s3://...)         ``<repo>/.demo/trips``
hudi_etc_data_latency      how late events may arrive                  ``2h``
hudi_etc_link_mode         auto / copy / symlink                       ``auto``
hudi_etc_database          Hive database                               ``hudi_etc``
hudi_etc_catalog_table     base name of <name>_ro / <name>_rt          ``trips``
hudi_etc_metastore_dir     embedded Derby metastore directory          ``<repo>/.demo/metastore``
hudi_etc_metastore_uri     thrift://... (a remote metastore instead)   (empty: Derby)
=========================  ==========================================  ==========================

Parse-time environment only: ``HUDI_ETC_SPARK_CONN_ID`` (``spark_default``; e.g.
``AIRFLOW_CONN_SPARK_DEFAULT='{"conn_type": "spark", "host": "local[*]"}'``), ``HUDI_ETC_HUDI_CONN_ID``
(a ``hudi`` connection with storage credentials; none by default), ``HUDI_ETC_START_DATE``
(``2026-01-01``). Nothing here touches the metadata database or the table at parse time.
"""

from __future__ import annotations

import os
from datetime import timedelta

import pendulum

from airflow.sdk import DAG
from airflow_hudi_etc.operators.compaction import (
    ExecuteCompactionOperator,
    ScheduleEventTimeCompactionOperator,
    SyncEventTimeThresholdOperator,
)
from airflow_hudi_etc.sensors.event_time import EventTimeCompactionSensor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(REPO, ".demo")


def setting(name: str, default: str) -> str:
    """A Jinja expression: Variable ``name`` at run time, else env ``NAME`` / ``default`` (parse time)."""
    fallback = os.environ.get(name.upper(), default)
    return "{{ var.value.get(%r, %r) }}" % (name, fallback)


TABLE_PATH = setting("hudi_etc_table_path", os.path.join(DEMO, "trips"))
LATENCY = setting("hudi_etc_data_latency", "2h")
SPARK_CONN = os.environ.get("HUDI_ETC_SPARK_CONN_ID", "spark_default")
HUDI_CONN = os.environ.get("HUDI_ETC_HUDI_CONN_ID") or None
SPARK_CONF = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"}

with DAG(
    dag_id="hudi_etc_nightly",
    description="event-time compaction of a Hudi MOR table + RO threshold in the catalog",
    schedule="@daily",
    start_date=pendulum.parse(os.environ.get("HUDI_ETC_START_DATE", "2026-01-01")),
    catchup=True,
    max_active_runs=1,
    default_args={"retries": 1, "retry_delay": timedelta(minutes=5)},
    tags=["hudi", "compaction", "freshness"],
    doc_md=__doc__,
) as dag:
    wait = EventTimeCompactionSensor(
        task_id="wait_for_compaction_window",
        table_path=TABLE_PATH,
        data_latency=LATENCY,
        hudi_conn_id=HUDI_CONN,
        mode="reschedule",
        poke_interval=300,
        timeout=timedelta(hours=6),
    )
    schedule = ScheduleEventTimeCompactionOperator(
        task_id="schedule_compaction",
        table_path=TABLE_PATH,
        data_latency=LATENCY,
        link_mode=setting("hudi_etc_link_mode", "auto"),
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
        retries=2,
        execution_timeout=timedelta(hours=2),
    )
    sync = SyncEventTimeThresholdOperator(
        task_id="sync_catalog",
        table_path=TABLE_PATH,
        database=setting("hudi_etc_database", "hudi_etc"),
        table=setting("hudi_etc_catalog_table", "trips"),
        metastore_uri=setting("hudi_etc_metastore_uri", ""),
        metastore_dir=setting("hudi_etc_metastore_dir", os.path.join(DEMO, "metastore")),
        conn_id=SPARK_CONN,
        conf=SPARK_CONF,
        hudi_conn_id=HUDI_CONN,
    )
    wait >> schedule >> execute >> sync
