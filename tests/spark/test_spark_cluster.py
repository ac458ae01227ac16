"""On a real Spark standalone cluster (master + one worker on 127.0.0.1, started here) whose
executors run a Python that has the dependencies but not ``airflow_hudi_etc``, from the worker's
own working directory: the package must be shipped (the cached ``--py-files`` zip), and no
interpreter of ours may be forced on the executors.

* ``hudi-etc execute --engine spark`` with the packed env of ``hudi-etc pack-env`` in
  ``spark.archives`` (``spark.pyspark.python=./environment/bin/python``);
* the ``hudi_etc_nightly`` example DAG (sensor, schedule, execute; the catalog sync is marked
  successful) with the executors' interpreter named only in ``spark-defaults.conf``;
* ``spark-submit spark_jobs/hudi_etc_job.py`` by hand, without ``--py-files``: the job ships it.

Judged by hudi-rs (the read-optimized view holds every key's last version with event time ≤ the
threshold, the snapshot is unchanged), by the master (the applications ran there) and by the
worker's folders (what reached the executors). One cluster per session; about 2 minutes.
"""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before it is imported)

import json
import os
import subprocess
import sys
from pathlib import Path

import pendulum
import pytest

import airflow_table as at
from oracle import hudi_rs_read
from spark_cluster import REPO, bare_env, start_cluster

pytestmark = pytest.mark.spark
DATA = ["trip_id", "region", "fare", "event_time", "updated_at"]


def by_key(path, ro=False):
    t = hudi_rs_read(path, read_optimized=ro)
    rows = t.to_pylist() if t.num_rows else []
    return {r["trip_id"]: {c: r[c] for c in DATA} for r in rows}


@pytest.fixture(scope="session")
def cluster(tmp_path_factory):
    c = start_cluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        # the control: the executors' interpreter, in the workers' environment, lacks the package
        probe = subprocess.run([c.executor_python, "-c", "import pyarrow, fastavro, numpy, fsspec; "
                                "import airflow_hudi_etc"], env=bare_env(""), cwd=c.work_dir,
                               capture_output=True, text=True)
        assert probe.returncode == 1 and "No module named 'airflow_hudi_etc'" in probe.stderr, probe.stderr
        yield c
    finally:
        c.stop()


def new_apps(cluster, before: set[str]) -> dict[str, str]:
    """id → name of the applications the cluster has seen since ``before`` (their ids)."""
    st = cluster.state()
    return {a["id"]: a["name"] for a in (st.get("completedapps") or []) + (st.get("activeapps") or [])
            if a["id"] not in before}


def executor_dirs(cluster, app_ids) -> list[Path]:
    """The executor folders (``<work>/<app id>/<executor id>``) of these applications."""
    return [d for i in app_ids for d in (cluster.work_dir / i).iterdir() if d.is_dir()]


def test_cli_execute_on_cluster_with_packed_env(cluster, tmp_path):
    table = tmp_path / "trips"
    batches = at.build(table)
    snapshot0, ro0 = by_key(table), by_key(table, ro=True)
    assert len(at.ro_violations(table, batches, at.THRESHOLD_MS)) == 30
    from airflow_hudi_etc.compaction.scheduling import schedule

    instant = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME).instant
    before = {a["id"] for a in cluster.completed_apps()}
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.update({
        "PYTHONPATH": str(REPO),  # the driver runs here, with this checkout
        "HUDI_ETC_CACHE_DIR": str(tmp_path / "cache"),  # the zip is built afresh
        "HUDI_ETC_SPARK_MASTER": cluster.master_url,
        "HUDI_ETC_SPARK_CONF": json.dumps({"spark.archives": f"{cluster.env_tar}#environment",
                                           "spark.pyspark.python": "./environment/bin/python",
                                           "spark.executor.memory": "1g"}),
    })
    proc = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", "execute", "--path", str(table),
                           "--engine", "spark"], env=env, cwd=elsewhere, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    res = json.loads(proc.stdout)
    assert (res["instant"], res["status"], res["engine"], res["threshold_ms"]) == (
        instant, "completed", "spark", at.THRESHOLD_MS)
    assert (res["logs_compacted"], res["remaining_log_files"]) == (8, 2)
    [summary] = [x for x in proc.stderr.splitlines() if x.startswith("hudi-etc summary:")]
    assert f"execute {instant}: completed, threshold {at.THRESHOLD_ISO}" in summary
    assert "8 logs compacted, 2 remaining" in summary and "earlier attempt rolled back: no" in summary

    # hudi-rs: the guarantee holds, the snapshot did not change, RO moved
    assert at.ro_violations(table, batches, at.THRESHOLD_MS) == []
    assert by_key(table) == snapshot0 and by_key(table, ro=True) != ro0
    # it ran on the cluster; the executors got the zip and the unpacked environment
    [zip_path] = list((tmp_path / "cache").glob("airflow_hudi_etc-*.zip"))
    apps = new_apps(cluster, before)
    assert sorted(apps.values()) == ["hudi-etc-execute"], apps
    dirs = executor_dirs(cluster, apps)
    assert any((d / zip_path.name).is_file() and (d / "environment" / "bin" / "python").exists() for d in dirs), \
        [sorted(p.name for p in d.iterdir()) for d in dirs]


def test_nightly_dag_on_cluster_with_spark_defaults(cluster, tmp_path, monkeypatch):
    table, metastore = tmp_path / "trips", tmp_path / "metastore"
    batches = at.build(table)
    snapshot0 = by_key(table)
    conf_dir = tmp_path / "spark-conf"
    conf_dir.mkdir()
    # the executors' interpreter comes from spark-defaults.conf only: nothing of ours may override it
    (conf_dir / "spark-defaults.conf").write_text(
        f"spark.pyspark.python  {cluster.logged_python}\nspark.executor.memory=1g\n")
    host, port = cluster.master_url.rsplit(":", 1)
    # the DAG's settings are its params (run conf)
    run_conf = {"table_path": str(table), "data_latency": at.LATENCY, "metastore_dir": str(metastore),
                "database": "hudi_etc_cluster", "catalog_table": "trips"}
    for k, v in {"HUDI_ETC_CACHE_DIR": str(tmp_path / "cache"), "SPARK_CONF_DIR": str(conf_dir),
                 "AIRFLOW_CONN_SPARK_DEFAULT": json.dumps({"conn_type": "spark", "host": host,
                                                          "port": int(port)})}.items():
        monkeypatch.setenv(k, v)
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
    before = {a["id"] for a in cluster.completed_apps()}
    starts = len(cluster.python_starts())

    # the catalog sync (a Hive/Derby job on the driver, about 45 s here; the executors do nothing
    # in it) is covered by test_airflow_e2e.py on local[2]: marked successful to keep this short
    dr = airflow_env.example_dag("hudi_etc_nightly").test(logical_date=pendulum.datetime(2026, 1, 2, tz="UTC"),
                                                          run_conf=run_conf, mark_success_pattern=r"compaction\.sync")
    states = {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}
    assert str(dr.state) == "success", states
    sched = airflow_env.xcom(dr, "compaction.schedule")
    assert (sched["threshold_ms"], sched["spark_submitted"]) == (at.THRESHOLD_MS, True)
    done = airflow_env.xcom(dr, "compaction.execute")
    assert (done["instant"], done["status"], done["engine"]) == (sched["instant"], "completed", "spark")
    assert (done["logs_compacted"], done["remaining_log_files"]) == (8, 2)

    assert at.ro_violations(table, batches, at.THRESHOLD_MS) == []  # hudi-rs
    assert by_key(table) == snapshot0
    apps = new_apps(cluster, before)  # each operator's spark-submit went to the cluster
    assert sorted(apps.values()) == ["hudi-etc-execute", "hudi-etc-schedule"], apps
    [zip_path] = list((tmp_path / "cache").glob("airflow_hudi_etc-*.zip"))
    dirs = executor_dirs(cluster, [i for i, n in apps.items() if n == "hudi-etc-execute"])
    assert any((d / zip_path.name).is_file() for d in dirs)
    assert not any((d / "environment").exists() for d in dirs)  # no archive here: the path from spark-defaults
    # the executors ran the interpreter spark-defaults.conf names (nothing of ours overrode it), in
    # the worker's folders
    ran = cluster.python_starts()[starts:]
    assert ran and all(Path(cwd).is_relative_to(cluster.work_dir) for _, cwd in ran), ran


def test_job_submitted_by_hand_ships_the_package_itself(cluster, tmp_path):
    """``spark-submit spark_jobs/hudi_etc_job.py`` without ``--py-files``: the driver has the package,
    the executors get it from the driver (``addPyFile`` of the cached zip)."""
    from airflow_hudi_etc.compaction.scheduling import schedule
    from airflow_hudi_etc.spark.spark_submit import job_env, spark_submit_binary

    table = tmp_path / "trips"
    batches = at.build(table)
    snapshot0 = by_key(table)
    instant = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME).instant
    before = {a["id"] for a in cluster.completed_apps()}
    starts = len(cluster.python_starts())
    env = {k: v for k, v in job_env().items() if k not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    env.update({"PYTHONPATH": str(REPO), "HUDI_ETC_CACHE_DIR": str(tmp_path / "cache")})
    result = tmp_path / "result.json"
    cmd = [spark_submit_binary(), "--master", cluster.master_url, "--conf", "spark.ui.enabled=false",
           "--conf", f"spark.pyspark.python={cluster.logged_python}",
           "--conf", f"spark.pyspark.driver.python={sys.executable}", "--conf", "spark.executor.memory=1g",
           str(REPO / "spark_jobs" / "hudi_etc_job.py"), "--result-file", str(result), "execute", "--path", str(table)]
    proc = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-4000:]
    res = json.loads(result.read_text())
    assert (res["instant"], res["status"], res["engine"]) == (instant, "completed", "spark")
    assert at.ro_violations(table, batches, at.THRESHOLD_MS) == []  # hudi-rs
    assert by_key(table) == snapshot0
    apps = new_apps(cluster, before)
    assert sorted(apps.values()) == ["hudi-etc-execute"], apps
    [zip_path] = list((tmp_path / "cache").glob("airflow_hudi_etc-*.zip"))
    assert any((d / zip_path.name).is_file() for d in executor_dirs(cluster, apps))
    ran = cluster.python_starts()[starts:]
    assert ran and all(Path(cwd).is_relative_to(cluster.work_dir) for _, cwd in ran), ran
