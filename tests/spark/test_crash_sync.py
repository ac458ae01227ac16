"""Crash points of the catalog sync, hit in a real process.

``hudi-etc sync-catalog`` runs a Hive-enabled Spark session on the embedded Derby metastore; with
HUDI_ETC_CRASH_AT it dies (``os._exit``) after registering the tables, then (next run) just before
it sets the RO table's properties. The documented recovery is to run the sync again: it finds the
tables registered, no threshold published (the crashes left none), and publishes it. Three JVM
starts (about 70 s on 2 cores), hence one test for both points.
"""

from __future__ import annotations

import json

import pytest

import airflow_table as at
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi import crash
from scenario import cli


@pytest.mark.spark
def test_sync_crashes_at_each_point_then_a_rerun_publishes_once(tmp_path):
    table, metastore = tmp_path / "trips", tmp_path / "metastore"
    at.build(table)
    planned = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    assert execute(str(table), instant=planned.instant)["status"] == "completed"
    args = ("sync-catalog", "--path", table, "--database", "crash_db", "--table", "trips",
            "--metastore-dir", metastore)

    for point in ("sync.after-register", "sync.before-properties"):
        proc = cli(*args, crash=f"{point}@1")
        assert proc.returncode == crash.EXIT_CODE, f"{point} not reached: {proc.returncode}\n{proc.stderr[-2000:]}"
        assert proc.stdout == ""

    out = json.loads(cli(*args).stdout)
    # the first crashed run registered both tables; neither crashed run published a threshold
    assert (out["status"], out["registered"], out["previous_threshold_ms"]) == ("updated", [], None)
    assert (out["threshold_ms"], out["threshold"], out["instant"]) == (at.THRESHOLD_MS, at.THRESHOLD_ISO,
                                                                        planned.instant)
