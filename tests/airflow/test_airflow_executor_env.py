"""Issue 24 §6: Spark executors whose Python lacks this package's dependencies. Real spark-submit
(local[1]) whose executors run a bare interpreter (``/usr/bin/python3``, no pyarrow) while the
driver runs the venv's: the task fails once (no Spark task retries, no Airflow retries), and the
error names the fix. §7: the same task log has no Spark startup chatter."""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before it is imported)

import shutil
import subprocess
import sys

import pendulum
import pytest

import airflow_table as at
from airflow_hudi_etc.compaction.scheduling import schedule

BARE = shutil.which("python3", path="/usr/bin:/bin")


def bare_python_lacks_pyarrow() -> bool:
    if not BARE:
        return False
    version = subprocess.run([BARE, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True, text=True)
    same_minor = version.stdout.strip() == str(tuple(sys.version_info[:2]))  # PySpark refuses another minor
    return same_minor and subprocess.run([BARE, "-c", "import pyarrow"], capture_output=True).returncode != 0


@pytest.mark.spark
@pytest.mark.skipif(not bare_python_lacks_pyarrow(), reason="needs a python3 of this minor version without pyarrow")
def test_executors_without_dependencies_fail_once_naming_the_fix(table, tmp_path, monkeypatch, capfd):
    import json

    from airflow.sdk import DAG

    from airflow_hudi_etc.notifications.jsonl import JsonLinesNotifier

    from airflow_hudi_etc.operators.compaction import ExecuteCompactionOperator

    plan = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    with DAG("hudi_etc_test_bare_executors", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
        ExecuteCompactionOperator(task_id="execute", table_path=str(table), instant=plan.instant,
                                  conn_id="spark_default", retries=3, retry_delay=0,
                                  on_failure_callback=JsonLinesNotifier(path=str(tmp_path / "alerts.jsonl")),
                                  conf={"spark.ui.enabled": "false", "spark.master": "local[1]",
                                        "spark.pyspark.python": BARE, "spark.pyspark.driver.python": sys.executable})
    airflow_env.register(dag)
    capfd.readouterr()
    dr = dag.test()
    log = "".join(capfd.readouterr())  # the task log, spark-submit's output included
    [ti] = dr.get_task_instances()
    assert (str(ti.state), ti.try_number) == ("failed", 1)  # not retried
    [alert] = [json.loads(x) for x in (tmp_path / "alerts.jsonl").read_text().splitlines()]
    assert alert["exception_type"] == "AirflowFailException"
    assert alert["exception"].startswith("executor_environment: Spark executors cannot import pyarrow")
    for words in ("hudi-etc pack-env", "spark.pyspark.python", BARE):
        assert words in alert["exception"]
    from airflow_hudi_etc.hudi.table.hudi_table import HudiTable

    pending = HudiTable.load(str(table)).timeline.pending_compactions
    assert [(i.timestamp, i.state.name) for i in pending] == [(plan.instant, "REQUESTED")]  # table untouched
    # issue 24 §7: the driver's startup is quiet (Log4j from the JVM's first line, PySpark's pandas
    # warning), while what the job says still reaches the log
    assert "hudi-etc summary:" in log and "ExecutorEnvironmentError" in log
    assert "INFO SparkContext" not in log and "log4j2-defaults.properties" not in log
    assert "does not yet fully support pandas" not in log
