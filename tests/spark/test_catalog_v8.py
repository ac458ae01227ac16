"""sync-catalog on a table version 8 table: the threshold our Avro compaction commit published
(a fixed value of the Airflow test table) lands in a real embedded-Derby Hive metastore, and a
second sync reads it back from there (two JVM starts)."""

from __future__ import annotations

import json

import pyarrow as pa

import airflow_table as at
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from scenario import cli


def test_sync_catalog_publishes_the_v8_threshold(tmp_path):
    table, metastore = tmp_path / "trips", tmp_path / "metastore"
    init_table(str(table), table_name="trips", record_key="trip_id", precombine_field="updated_at",
               event_time_field="event_time", partition_field="region", table_version=8)
    for b in at.batches():
        write_batch(str(table), pa.Table.from_pylist(b, schema=at.SCHEMA))
    planned = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    assert execute(str(table), instant=planned.instant)["status"] == "completed"
    args = ("sync-catalog", "--path", table, "--database", "v8_db", "--table", "trips", "--metastore-dir", metastore)
    first = json.loads(cli(*args).stdout)
    assert (first["status"], first["threshold_ms"], first["threshold"], first["instant"]) == \
        ("updated", at.THRESHOLD_MS, at.THRESHOLD_ISO, planned.instant)
    second = json.loads(cli(*args).stdout)
    assert (second["status"], second["reason"], second["previous_threshold_ms"]) == \
        ("unchanged", "already synced", at.THRESHOLD_MS)
