"""Run our Spark job with another pyspark (e.g. a Spark 3.5 install), judged by hudi-rs.

    python scripts/check_pyspark.py --spark-venv DIR

``DIR`` is a throwaway venv holding ``pyspark==X`` and the executors' dependencies (not Airflow,
not this package): ``python -m venv DIR && DIR/bin/pip install "pyspark==3.5.9" pyarrow fastavro
numpy fsspec msgspec``. This script (run with the project's venv, which has hudi-rs) builds a small
table with late events, schedules a compaction, then runs ``jobs.py execute`` through
``DIR/bin/spark-submit`` on ``local[2]`` with ``DIR/bin/python`` as driver and executor
interpreter and the package only in the shipped ``--py-files`` zip; it also imports the package
in-process under that pyspark. Exit 0 when the read-optimized view then holds every record's last
version with event time ≤ the threshold (hudi-rs) and the snapshot is unchanged.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "tests" / "support")]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spark-venv", required=True)
    a = ap.parse_args()
    venv = Path(a.spark_venv).resolve()
    py = str(venv / "bin" / "python")
    import airflow_table as at
    from oracle import hudi_rs_read

    from airflow_hudi_etc.compaction.scheduling import schedule
    from airflow_hudi_etc.spark.shipping import package_zip

    version = subprocess.run([py, "-c", "import pyspark; print(pyspark.__version__)"], capture_output=True,
                             text=True, check=True).stdout.strip()
    zip_path = package_zip()
    # in-process: the package imports under that pyspark and maps tasks over a local SparkSession
    probe = ("import sys; sys.path.insert(0, %r)\n"
             "from pyspark.sql import SparkSession\n"
             "from airflow_hudi_etc.spark.engines import SparkEngine\n"
             "import airflow_hudi_etc.compaction.scheduling, airflow_hudi_etc.spark.jobs\n"
             "s = SparkSession.builder.master('local[2]').config('spark.ui.enabled', 'false').getOrCreate()\n"
             "print(SparkEngine(s).map(abs, [-1, -2, 3]))\n"
             "s.stop()\n") % zip_path
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SPARK_HOME")}
    env.update({"PYSPARK_PYTHON": py, "SPARK_LOCAL_IP": "127.0.0.1", "PATH": f"{venv / 'bin'}:{env['PATH']}"})
    r = subprocess.run([py, "-c", probe], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip().endswith("[1, 2, 3]"), r.stderr[-3000:]
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "trips"
        batches = at.build(table)
        snap0 = hudi_rs_read(str(table)).num_rows
        instant = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME).instant
        result = Path(tmp) / "result.json"
        cmd = [str(venv / "bin" / "spark-submit"), "--master", "local[2]", "--conf", "spark.ui.enabled=false",
               "--py-files", zip_path, str(REPO / "airflow_hudi_etc" / "spark" / "jobs.py"), "--result-file", str(result),
               "execute", "--path", str(table)]
        r = subprocess.run(cmd, env={**env, "PYSPARK_DRIVER_PYTHON": py}, capture_output=True, text=True,
                           cwd=tmp)
        assert r.returncode == 0, r.stderr[-4000:]
        res = json.loads(result.read_text())
        assert (res["instant"], res["status"], res["engine"]) == (instant, "completed", "spark"), res
        assert at.ro_violations(table, batches, at.THRESHOLD_MS) == []
        assert hudi_rs_read(str(table)).num_rows == snap0
        summary = [x for x in (r.stdout + r.stderr).splitlines() if "hudi-etc summary:" in x]
    print(json.dumps({"pyspark": version, "status": res["status"], "logs_compacted": res["logs_compacted"],
                      "summary": summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
