"""Running a job of :mod:`airflow_hudi_etc.spark.jobs` through a real ``spark-submit`` (CLI engine spark).

The Airflow operators go through the Spark provider's SparkSubmitHook instead; this module is
for the command line and tests. Arguments are passed as a list, never through a shell; the job's
argv and its result file are those of :mod:`airflow_hudi_etc.contract`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from ..contract import SUMMARY_PREFIX, job_argv, read_result, unwrap
from ..hudi.errors import HudiEtcError, InvalidInputError
from .shipping import spark_defaults, submit_settings

#: our defaults for every job, below the user's conf and spark-defaults.conf
DEFAULT_CONF = {"spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4"}

JOB_SCRIPT = str(Path(__file__).with_name("jobs.py"))


class SparkJobError(HudiEtcError):
    code = "spark_job_failed"


def spark_submit_binary() -> str:
    """``$SPARK_HOME/bin/spark-submit`` when SPARK_HOME is set (e.g. a cluster's Spark 3.5
    install), else the venv's (pyspark wheel), else the one on PATH."""
    home = os.environ.get("SPARK_HOME")
    if home and os.path.isfile(os.path.join(home, "bin", "spark-submit")):
        return os.path.join(home, "bin", "spark-submit")
    here = Path(sys.executable).parent / "spark-submit"
    if here.exists():
        return str(here)
    found = shutil.which("spark-submit")
    if not found:
        raise SparkJobError("spark-submit not found: install pyspark or put Spark's bin on PATH")
    return found


def job_env() -> dict[str, str]:
    """spark-submit's environment: ours, with this venv's ``bin`` first on PATH (the pip
    ``spark-submit`` finds SPARK_HOME with the ``python3`` on PATH). Interpreters are chosen by
    :func:`airflow_hudi_etc.spark.shipping.submit_settings`, per master."""
    env = dict(os.environ)
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = venv_bin + os.pathsep + env.get("PATH", "")
    env.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    return env


def user_conf() -> dict[str, str]:
    """``HUDI_ETC_SPARK_CONF``: a JSON object of Spark properties for ``--engine spark``."""
    raw = os.environ.get("HUDI_ETC_SPARK_CONF")
    if not raw:
        return {}
    try:
        conf = json.loads(raw)
    except ValueError as e:
        raise InvalidInputError(f"HUDI_ETC_SPARK_CONF is not JSON: {e}") from None
    if not isinstance(conf, dict):
        raise InvalidInputError("HUDI_ETC_SPARK_CONF must be a JSON object of Spark properties")
    return {str(k): str(v) for k, v in conf.items()}


def build_command(cli_argv: list[str], result_file: str, *, master: str | None = None,
                  conf: dict | None = None, env: dict | None = None) -> tuple[list[str], dict[str, str]]:
    """(spark-submit argv, environment) of one job. Conf precedence: ``conf`` argument, then
    ``HUDI_ETC_SPARK_CONF``, then our defaults (UI off, ``spark.log.level=WARN``, ...), with
    ``spark-defaults.conf`` below those it does not set. ``--py-files``: ``HUDI_ETC_PY_FILES``
    (``none`` ships nothing), else the cached zip of this package."""
    env = job_env() if env is None else env
    master = master or env.get("HUDI_ETC_SPARK_MASTER") or "local[*]"
    given = {**user_conf(), **{str(k): str(v) for k, v in (conf or {}).items()}}
    defaults = spark_defaults(env)
    ours = {k: v for k, v in DEFAULT_CONF.items() if k not in defaults}
    merged = {**ours, **given}
    s = submit_settings(master, deploy_mode=merged.get("spark.submit.deployMode"), conf=merged, env=env,
                        py_files=env.get("HUDI_ETC_PY_FILES"))
    merged.update({k: v for k, v in s["conf"].items() if k not in merged})
    env = {**env, **s["env"]}
    cmd = [spark_submit_binary(), "--master", master]
    for k, v in merged.items():
        cmd += ["--conf", f"{k}={v}"]
    if s["py_files"]:
        cmd += ["--py-files", s["py_files"]]
    cmd += [JOB_SCRIPT, *job_argv(result_file, cli_argv)]
    return cmd, env


def run_job(cli_argv: list[str], *, master: str | None = None, conf: dict | None = None) -> dict:
    """Run ``hudi-etc <cli_argv>`` inside spark-submit; return the job's result JSON."""
    with tempfile.TemporaryDirectory(prefix="hudi-etc-job-") as tmp:
        result_file = os.path.join(tmp, "result.json")
        cmd, env = build_command(cli_argv, result_file, master=master, conf=conf)
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        for line in (proc.stdout or "").splitlines() + (proc.stderr or "").splitlines():
            if line.startswith(SUMMARY_PREFIX):  # the job's one human line: pass it on
                print(line, file=sys.stderr)
        result = read_result(result_file)
        if result is not None:
            result = unwrap(result)  # the job's typed error (the error envelope), as if raised here
            if proc.returncode == 0:
                return result
        tail = "\n".join((proc.stderr or "").splitlines()[-25:])
        raise SparkJobError(f"spark-submit exited with {proc.returncode}:\n{tail}")
