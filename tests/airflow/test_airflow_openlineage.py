"""Issue 24 §4: OpenLineage with the provider installed and a file transport, the events read
back. The OpenLineage listener is registered when Airflow's plugins load, and only if a transport
is configured then: the DAG runs happen in a child process whose environment configures it
(``lineage_child.py``-style script below, real ``dag.test()`` runs, jobs in process)."""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before it is imported)

import json
import os
import subprocess
import sys

import pytest

import airflow_table as at
from airflow_hudi_etc.assets import asset_uri
from paths import REPO

CHILD = r"""
import json, sys
sys.path[:0] = [{support!r}, {repo!r}]
import airflow_env
import pendulum
import pytest
import airflow_table as at
from airflow.sdk import DAG
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.operators.compaction import RollbackCompactionOperator
from airflow_hudi_etc.task_groups import event_time_compaction

mp = pytest.MonkeyPatch()
submitted = airflow_env.jobs_in_process(mp)
at.build({table!r})
start = pendulum.datetime(2026, 1, 1, tz="UTC")
with DAG("hudi_etc_ol", schedule=None, start_date=start) as dag:
    event_time_compaction(table_path={table!r}, data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME,
                          group_id="c", catalog={{"database": "lake", "table": "trips", "metastore_dir": {meta!r}}},
                          conf={{"spark.ui.enabled": "false"}}, sensor_kwargs={{"poke_interval": 0.1}})
airflow_env.register(dag)
states = []
for _ in range(2):  # the second run is covered: execute skipped
    dr = dag.test()
    states.append({{ti.task_id: str(ti.state) for ti in dr.get_task_instances()}})
plan = schedule({table!r}, data_latency="1h", compaction_time="2026-01-02T06:00:00Z")
with DAG("hudi_etc_ol_rollback", schedule=None, start_date=start) as rb:
    RollbackCompactionOperator(task_id="rollback", table_path={table!r}, instant=plan.instant)
airflow_env.register(rb)
states.append({{ti.task_id: str(ti.state) for ti in rb.test().get_task_instances()}})
print("RESULT " + json.dumps({{"states": states, "submitted": submitted}}))
"""


@pytest.mark.spark
def test_openlineage_events_of_the_task_group(tmp_path):
    table, events = tmp_path / "trips", tmp_path / "events.jsonl"
    code = CHILD.format(support=str(REPO / "tests" / "support"), repo=str(REPO), table=str(table),
                        meta=str(tmp_path / "metastore"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "HUDI_ETC_TEST"))}
    env.update({
        "AIRFLOW__OPENLINEAGE__TRANSPORT": json.dumps({"type": "file", "log_file_path": str(events), "append": True}),
        "AIRFLOW__OPENLINEAGE__NAMESPACE": "hudi_etc_test",
        "AIRFLOW__OPENLINEAGE__SPARK_INJECT_PARENT_JOB_INFO": "true",
        "AIRFLOW__OPENLINEAGE__EXECUTE_IN_THREAD": "false",
    })
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = json.loads(next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))[7:])
    first, second, rollback = out["states"]
    assert set(first.values()) == {"success"}, first
    assert (second["c.execute"], second["c.check"]) == ("skipped", "success"), second
    assert rollback == {"rollback": "success"}

    table_ds = {"namespace": "file", "name": str(table)}
    assert asset_uri(str(table)) == f"hudi-etc+file:{table}"
    complete: dict[str, list] = {}
    for line in events.read_text().splitlines():
        e = json.loads(line)
        if e.get("eventType") in ("COMPLETE", "FAIL", "ABORT"):
            complete.setdefault(e["job"]["name"], []).append(e)

    def io(job, i):
        e = complete[job][i]
        return ([{k: d[k] for k in ("namespace", "name")} for d in e.get("inputs", [])],
                [{k: d[k] for k in ("namespace", "name")} for d in e.get("outputs", [])])

    # run 1: schedule planned, execute committed, sync wrote the two catalog tables
    assert io("hudi_etc_ol.c.schedule", 0) == ([table_ds], [table_ds])
    assert io("hudi_etc_ol.c.execute", 0) == ([table_ds], [table_ds])
    catalog = [{"namespace": "hive://localhost", "name": f"lake.trips{s}"} for s in ("_ro", "_rt")]
    assert io("hudi_etc_ol.c.sync", 0) == ([table_ds], catalog)
    # run 2 (covered): schedule read the table and planned nothing; the skipped execute reports nothing
    assert io("hudi_etc_ol.c.schedule", 1) == ([table_ds], [])
    assert io("hudi_etc_ol.c.execute", 1) == ([], [])
    # a requested plan: nothing to undo, nothing written
    assert io("hudi_etc_ol_rollback.rollback", 0) == ([table_ds], [])
    # the Spark jobs got this task's OpenLineage parent job (as the Spark provider injects it)
    by_command = {job["argv"][0]: job["cmd"] for job in out["submitted"]}
    assert set(by_command) == {"schedule", "execute", "sync-catalog"}
    for command, task in (("schedule", "c.schedule"), ("execute", "c.execute"), ("sync-catalog", "c.sync")):
        confs = dict(c.split("=", 1) for c in by_command[command][1::] if c.startswith("spark.openlineage."))
        assert confs["spark.openlineage.parentJobName"] == f"hudi_etc_ol.{task}"
        assert confs["spark.openlineage.parentJobNamespace"] == "hudi_etc_test"
        run_ids = {e["run"]["runId"] for e in complete[f"hudi_etc_ol.{task}"]}
        assert confs["spark.openlineage.parentRunId"] in run_ids
