"""Running a job of :mod:`airflow_hudi_etc.jobs` through a real ``spark-submit`` (CLI engine spark).

The Airflow operators go through the Spark provider's SparkSubmitHook instead; this module is
for the command line and tests. Arguments are passed as a list, never through a shell.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .hudi.errors import HudiEtcError

JOB_SCRIPT = str(Path(__file__).with_name("jobs.py"))


class SparkJobError(HudiEtcError):
    code = "spark_job_failed"


def spark_submit_binary() -> str:
    """The venv's spark-submit (pyspark wheel), else the one on PATH."""
    here = Path(sys.executable).parent / "spark-submit"
    if here.exists():
        return str(here)
    found = shutil.which("spark-submit")
    if not found:
        raise SparkJobError("spark-submit not found: install pyspark or put Spark's bin on PATH")
    return found


def job_env() -> dict[str, str]:
    env = dict(os.environ)
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")
    env.setdefault("PYSPARK_PYTHON", sys.executable)
    env.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env


def run_job(cli_argv: list[str], *, master: str | None = None, conf: dict | None = None) -> dict:
    """Run ``hudi-etc <cli_argv>`` inside spark-submit; return the job's result JSON."""
    master = master or os.environ.get("HUDI_ETC_SPARK_MASTER", "local[*]")
    conf = {
        "spark.ui.enabled": "false",
        "spark.sql.shuffle.partitions": "4",
        "spark.pyspark.python": sys.executable,
        **(conf or {}),
    }
    with tempfile.TemporaryDirectory(prefix="hudi-etc-job-") as tmp:
        result_file = os.path.join(tmp, "result.json")
        cmd = [spark_submit_binary(), "--master", master]
        for k, v in conf.items():
            cmd += ["--conf", f"{k}={v}"]
        cmd += [JOB_SCRIPT, "--result-file", result_file, *cli_argv]
        proc = subprocess.run(cmd, env=job_env(), capture_output=True, text=True)
        if os.path.exists(result_file):
            with open(result_file) as f:
                result = json.load(f)
            if "error" in result:
                err = result["error"]
                e = SparkJobError(f"{err['type']}: {err['message']}")
                e.code = err.get("code", e.code)
                raise e
            if proc.returncode == 0:
                return result
        tail = "\n".join((proc.stderr or "").splitlines()[-25:])
        raise SparkJobError(f"spark-submit exited with {proc.returncode}:\n{tail}")
