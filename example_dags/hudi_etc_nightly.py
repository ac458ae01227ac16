"""Nightly event-time compaction of a Hudi MOR table, with the threshold published in the catalog
and an asset event downstream DAGs can be scheduled on.

    compaction.wait → compaction.schedule → compaction.execute → compaction.sync → compaction.check

Built with :func:`airflow_hudi_etc.task_groups.event_time_compaction` (one set of arguments,
``data_latency`` given once). Every run compacts up to ``threshold = data_interval_end −
data_latency``: the run for the day ending at D guarantees that the read-optimized view holds every
record with event time ≤ D − latency. ``execute`` runs the plan its own run's ``schedule`` made; when
there is none (the threshold was already covered, another plan is pending, no log qualifies) it is
skipped and ``sync`` still runs; ``check`` then says whether the table and the catalog hold this run's
threshold (a plan another run made may have been executed instead): the run is green only then. After a completed compaction ``execute`` emits an event on the
asset alias ``hudi_etc_ro_fresh`` for the table's asset (``hudi-etc+file:/…``) with the threshold
in its ``extra``; ``hudi_etc_ro_consumer`` is scheduled on it.

Tables Java created: record once whether its Java writers compact it, before the first run —
``hudi-etc configure --path <table> --java-compaction on`` (``execute`` then waits for Java's
compaction to execute the plan and verifies its commit) or ``off`` (every Java writer runs with
``hoodie.compact.inline=false``; our job executes it). With nothing recorded the execute task fails
at once with the typed ``java_compaction`` error naming this command (tables made by
``hudi-etc init``, the demo's included, record ``off``).

A table whose Java writer never stops (a streaming job with optimistic concurrency control and a
lock provider): record the writers' lock settings once, so that ``schedule`` and ``execute`` take
the same lock — ``hudi-etc configure --path <table> --hoodie
hoodie.write.concurrency.mode=optimistic_concurrency_control --hoodie
hoodie.write.lock.provider=<the writers' class> --hoodie hoodie.write.lock.<its keys>=...``; a run
may add or override keys with the operators' ``hoodie_conf`` argument.

``catchup=False``: unpausing runs the latest day only. Every task runs in the pool
``hudi_etc_hudi_etc_nightly.compaction`` (one run of the table at a time): create it once with
``airflow pools set hudi_etc_hudi_etc_nightly.compaction 1 "hudi-etc"``. Replay missed days (DAG
unpaused) with ``airflow backfill create --dag-id hudi_etc_nightly --from-date ... --to-date ...``;
a day whose threshold a later run
already covered is a no-op (the sensor says ``covered``, nothing is submitted to Spark) and the
catalog threshold never moves back.

Settings: the DAG's params, read at run time (scheduled runs use the defaults below; a manual run
may override them in its conf):

=================  ==========================================  ==========================
param              meaning                                     default
=================  ==========================================  ==========================
table_path         the table's base path (or s3://...)         ``<repo>/.demo/trips``
data_latency       how late events may arrive                  ``2h``
link_mode          auto / copy / symlink                       ``auto``
database           Hive database                               ``hudi_etc``
catalog_table      base name of <name>_ro / <name>_rt          ``trips``
metastore_dir      embedded Derby metastore directory          ``<repo>/.demo/metastore``
metastore_uri      thrift://... (a remote metastore instead)   (empty: Derby)
=================  ==========================================  ==========================

Connections: ``spark_default`` (e.g. ``AIRFLOW_CONN_SPARK_DEFAULT='{"conn_type": "spark", "host":
"local[*]"}'``) and ``hudi_default`` (storage credentials; may be absent for local tables). Failed
tasks, the sensor's timeout included, append an alert line to ``$HUDI_ETC_ALERT_FILE`` (read when
the alert fires). Nothing here touches the metadata database or the table at parse time.
"""

from __future__ import annotations

import os
from datetime import timedelta

import pendulum

from airflow.sdk import DAG, AssetAlias, Param
from airflow_hudi_etc.notifications.jsonl import JsonLinesNotifier
from airflow_hudi_etc.task_groups import event_time_compaction

DEMO = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".demo")
#: the alias downstream DAGs schedule on (the table's own asset is resolved at run time)
RO_FRESH = AssetAlias("hudi_etc_ro_fresh")

alert = JsonLinesNotifier(message="{{ dag.dag_id }}.{{ ti.task_id }} failed in run {{ run_id }}")

with DAG(
    dag_id="hudi_etc_nightly",
    description="event-time compaction of a Hudi MOR table + RO threshold in the catalog + asset event",
    schedule="@daily",
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    max_active_runs=1,
    params={
        "table_path": Param(os.path.join(DEMO, "trips"), type="string", minLength=1),
        "data_latency": Param("2h", type="string", minLength=1),
        "link_mode": Param("auto", enum=["auto", "copy", "symlink"]),
        "database": Param("hudi_etc", type="string"),
        "catalog_table": Param("trips", type="string"),
        "metastore_dir": Param(os.path.join(DEMO, "metastore"), type="string"),
        "metastore_uri": Param("", type="string"),
    },
    default_args={"retries": 1, "retry_delay": timedelta(minutes=5), "on_failure_callback": alert},
    tags=["hudi", "compaction", "freshness"],
    doc_md=__doc__,
) as dag:
    event_time_compaction(
        group_id="compaction",
        table_path="{{ params.table_path }}",
        data_latency="{{ params.data_latency }}",
        link_mode="{{ params.link_mode }}",
        conf={"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"},
        catalog={"database": "{{ params.database }}", "table": "{{ params.catalog_table }}",
                 "metastore_uri": "{{ params.metastore_uri }}", "metastore_dir": "{{ params.metastore_dir }}"},
        outlets=[RO_FRESH],
        sensor_kwargs={"mode": "reschedule", "poke_interval": 300, "timeout": timedelta(hours=6)},
        execute_kwargs={"retries": 2, "execution_timeout": timedelta(hours=2)},
    )
