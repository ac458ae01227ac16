"""Shipping the package to executors (no JVM): the cached zip, the interpreter rules per master,
spark-defaults parsing, the job's summary line. The cluster itself: test_spark_cluster.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest

from airflow_hudi_etc.spark import shipping
from airflow_hudi_etc.spark.jobs import summary_line
from paths import REPO

def test_package_zip_is_the_package_and_is_cached(tmp_path, monkeypatch):
    monkeypatch.setenv("HUDI_ETC_CACHE_DIR", str(tmp_path / "c"))
    z = Path(shipping.package_zip())
    assert z.parent == tmp_path / "c" and z.name.startswith("airflow_hudi_etc-")
    want = sorted(f"airflow_hudi_etc/{p.relative_to(REPO / 'airflow_hudi_etc').as_posix()}"
                  for p in (REPO / "airflow_hudi_etc").rglob("*.py") if "__pycache__" not in p.parts)
    with zipfile.ZipFile(z) as zf:
        assert sorted(zf.namelist()) == want
        assert zf.read("airflow_hudi_etc/spark/jobs.py") == (REPO / "airflow_hudi_etc" / "spark" / "jobs.py").read_bytes()
    assert oct(z.stat().st_mode & 0o777) == "0o644"
    mtime = z.stat().st_mtime_ns
    assert shipping.package_zip() == str(z) and z.stat().st_mtime_ns == mtime  # reused, not rebuilt
    # a fresh interpreter that imports only from the zip gets a working package
    code = "import airflow_hudi_etc.compaction.scheduling as s, sys; print(s.__file__)"
    r = subprocess.run([sys.executable, "-S", "-c", f"import sys; sys.path.insert(0, {str(z)!r}); "
                        "sys.path += [p for p in " + repr(_site_paths()) + "]; " + code],
                       capture_output=True, text=True, cwd=tmp_path, env={"PATH": os.environ["PATH"]})
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().startswith(str(z))


def _site_paths() -> list[str]:
    """site-packages of this venv without our checkout (the zip must provide the package)."""
    import site

    return [p for p in site.getsitepackages()]


def test_package_zip_key_follows_the_content(tmp_path, monkeypatch):
    pkg = tmp_path / "src" / "airflow_hudi_etc"
    shutil.copytree(REPO / "airflow_hudi_etc", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(shipping, "package_root", lambda: pkg)
    cache = tmp_path / "c"
    a = shipping.package_zip(cache)
    (pkg / "__pycache__").mkdir(exist_ok=True)
    (pkg / "__pycache__" / "x.pyc").write_bytes(b"junk")  # bytecode is not part of the key
    assert shipping.package_zip(cache) == a
    (pkg / "spark" / "engines.py").write_text((pkg / "spark" / "engines.py").read_text() + "\n# changed\n")
    b = shipping.package_zip(cache)
    assert b != a and Path(a).is_file() and Path(b).is_file()
    with zipfile.ZipFile(b) as zf:
        assert zf.read("airflow_hudi_etc/spark/engines.py").endswith(b"# changed\n")


def test_concurrent_builds_leave_one_complete_zip(tmp_path, monkeypatch):
    cache = tmp_path / "c"
    out, errors = [], []

    def build():
        try:
            out.append(shipping.package_zip(cache))
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=build) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and len(set(out)) == 1
    assert [p.name for p in cache.iterdir()] == [Path(out[0]).name]  # no temp file left
    with zipfile.ZipFile(out[0]) as zf:
        assert zf.testzip() is None


def test_unwritable_cache_is_a_typed_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(shipping.ShippingError, match="HUDI_ETC_CACHE_DIR"):
        shipping.package_zip(blocker / "sub")


def _settings(master, *, conf=None, env=None, deploy_mode=None, py_files="none"):
    return shipping.submit_settings(master, conf=conf, env=env or {}, deploy_mode=deploy_mode, py_files=py_files)


def test_interpreters_local_master_default_to_this_python():
    s = _settings("local[2]")
    assert s["env"] == {"PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    assert s["conf"] == {"spark.log.level": "WARN"} and s["py_files"] is None
    # the user's choice wins: environment, conf, spark.log.level
    s = _settings("local[*]", env={"PYSPARK_PYTHON": "/opt/py"}, conf={"spark.log.level": "INFO"})
    assert s["env"] == {"PYSPARK_DRIVER_PYTHON": "/opt/py"} and s["conf"] == {}
    assert _settings("local", conf={"spark.pyspark.python": "/opt/py"})["env"] == {}


def test_interpreters_cluster_master_never_forced_on_executors():
    for master in ("spark://h:7077", "yarn", "k8s://https://k:443"):
        s = _settings(master)
        assert s["env"] == {}, master  # nothing for executors: theirs is the cluster's business
        assert s["conf"] == {"spark.log.level": "WARN", "spark.pyspark.driver.python": sys.executable}
        assert "spark.pyspark.python" not in s["conf"]
    # the driver runs on the cluster too: nothing at all
    assert _settings("yarn", deploy_mode="cluster")["conf"] == {"spark.log.level": "WARN"}
    assert _settings("yarn", conf={"spark.submit.deployMode": "cluster"})["conf"] == {"spark.log.level": "WARN"}
    assert _settings("spark://h:7077", conf={"spark.pyspark.driver.python": "/d"})["conf"] == {
        "spark.log.level": "WARN"}
    assert _settings("spark://h:7077", env={"PYSPARK_DRIVER_PYTHON": "/d"})["conf"][
        "spark.pyspark.driver.python"] == "/d"


def test_spark_defaults_are_honoured(tmp_path):
    (tmp_path / "spark-defaults.conf").write_text(
        "# comment\n\nspark.pyspark.python   /opt/env/bin/python\nspark.log.level=ERROR\n"
        "spark.executor.memory: 2g\nspark.pyspark.driver.python\t/usr/bin/python3\n")
    env = {"SPARK_CONF_DIR": str(tmp_path)}
    assert shipping.spark_defaults(env) == {"spark.pyspark.python": "/opt/env/bin/python", "spark.log.level": "ERROR",
                                            "spark.executor.memory": "2g",
                                            "spark.pyspark.driver.python": "/usr/bin/python3"}
    assert _settings("local[2]", env=env) == {"py_files": None, "conf": {}, "env": {}}
    assert _settings("spark://h:7077", env=env)["conf"] == {}
    assert shipping.spark_defaults({"SPARK_CONF_DIR": str(tmp_path / "none")}) == {}


def test_py_files_default_opt_out_and_own(tmp_path, monkeypatch):
    monkeypatch.setenv("HUDI_ETC_CACHE_DIR", str(tmp_path))
    assert _settings("yarn", py_files=None)["py_files"] == shipping.package_zip()
    assert _settings("yarn", py_files="NONE")["py_files"] is None
    assert _settings("yarn", py_files="s3://b/deps.zip,x.py")["py_files"] == "s3://b/deps.zip,x.py"


def test_cli_command_line_of_a_cluster_job(tmp_path, monkeypatch):
    """What ``--engine spark`` hands spark-submit for a cluster master (fixed expectations)."""
    from airflow_hudi_etc.spark import spark_submit

    monkeypatch.setenv("HUDI_ETC_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path / "no-conf"))
    monkeypatch.setenv("HUDI_ETC_SPARK_CONF", json.dumps({"spark.pyspark.python": "./environment/bin/python",
                                                          "spark.archives": "env.tar.gz#environment"}))
    monkeypatch.delenv("PYSPARK_PYTHON", raising=False)
    monkeypatch.delenv("PYSPARK_DRIVER_PYTHON", raising=False)
    cmd, env = spark_submit.build_command(["execute", "--path", "/t"], "/r.json", master="spark://h:7077")
    confs = [cmd[i + 1] for i, x in enumerate(cmd) if x == "--conf"]
    assert sorted(confs) == sorted([
        "spark.ui.enabled=false", "spark.sql.shuffle.partitions=4", "spark.log.level=WARN",
        "spark.pyspark.python=./environment/bin/python", "spark.archives=env.tar.gz#environment",
        f"spark.pyspark.driver.python={sys.executable}"])
    assert cmd[cmd.index("--py-files") + 1] == shipping.package_zip()
    assert cmd[-6:] == [spark_submit.JOB_SCRIPT, "--result-file", "/r.json", "execute", "--path", "/t"]
    assert "PYSPARK_PYTHON" not in env
    monkeypatch.setenv("HUDI_ETC_SPARK_CONF", "[1]")
    from airflow_hudi_etc.hudi.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match="JSON object"):
        spark_submit.build_command(["execute"], "/r.json", master="local[1]")


def test_summary_line_fixed_values():
    res = {"instant": "20260102000000000", "status": "completed", "threshold": "2026-01-01T22:00:00.000Z",
           "threshold_ms": 1_767_304_800_000, "logs_compacted": 8, "remaining_log_files": 2,
           "remaining_log_bytes": 3 * 2**20}
    now = 1_767_304_800_000 + (3 * 3600 + 5 * 60) * 1000
    assert summary_line("execute", res, rolled_back=True, seconds=12.34, now_ms=now) == (
        "hudi-etc summary: execute 20260102000000000: completed, threshold 2026-01-01T22:00:00.000Z "
        "(read-optimized lag 3h05m), 8 logs compacted, 2 remaining (3.0 MiB), earlier attempt rolled back: yes, "
        "12.3 s")
    assert summary_line("schedule", {"instant": None, "reason": "no log qualifies", "threshold_ms": None},
                        rolled_back=None, seconds=1, now_ms=now) == (
        "hudi-etc summary: schedule -: nothing scheduled, no threshold, reason: no log qualifies, 1.0 s")
    assert summary_line("execute", {"error": {"type": "InvalidTimelineError", "message": "stale"}},
                        rolled_back=False, seconds=2) == (
        "hudi-etc summary: execute failed: InvalidTimelineError: stale (2.0 s)")


def test_earlier_attempt_seen_before_execute(tmp_path):
    """An execution that died leaves an inflight compaction: the job says it rolls it back."""
    import airflow_table as at

    from airflow_hudi_etc.contract import build_parser
    from airflow_hudi_etc.compaction.scheduling import schedule
    from airflow_hudi_etc.spark.jobs import _earlier_attempt

    table = tmp_path / "t"
    at.build(table)
    instant = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME).instant
    args = build_parser().parse_args(["execute", "--path", str(table)])
    assert _earlier_attempt(args) is False
    env = {**os.environ, "HUDI_ETC_CRASH_AT": "execute.before-commit", "PYTHONPATH": str(REPO)}
    r = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", "execute", "--path", str(table)],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 86, r.stderr
    assert _earlier_attempt(args) is True
    assert _earlier_attempt(build_parser().parse_args(["execute", "--path", str(table), "--instant", instant])) is True
    assert _earlier_attempt(build_parser().parse_args(["schedule", "--path", str(table), "--data-latency", "1h"])) is None


def test_pack_env_refuses_bad_arguments_before_building(tmp_path):
    from airflow_hudi_etc.hudi.errors import InvalidInputError

    with pytest.raises(InvalidInputError, match=r"\.tar\.gz"):
        shipping.pack_env(str(tmp_path / "env.zip"))
    with pytest.raises(InvalidInputError, match="does not exist"):
        shipping.pack_env(str(tmp_path / "no" / "env.tar.gz"))
    with pytest.raises(InvalidInputError, match="unknown extra"):
        shipping.pack_env(str(tmp_path / "env.tar.gz"), extras=("gpu",))
    r = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", "pack-env", "--output", str(tmp_path / "e.tgz"),
                        "--python", str(tmp_path / "no-python")], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": str(REPO)})
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["code"] == "invalid_input", r.stdout
    assert list(tmp_path.iterdir()) == []  # nothing written
    pins = shipping.dependency_pins(("s3",))
    assert [p.split("==")[0] for p in pins] == ["pyarrow", "fastavro", "numpy", "fsspec", "msgspec", "s3fs"]
    from importlib.metadata import version

    assert pins[0] == f"pyarrow=={version('pyarrow')}"  # the driver's versions
