"""The core (format layer, compaction service, Python API, CLI) works without Airflow or Spark:
its declared dependencies name neither, and a process in which importing them fails runs a
table's whole life cycle through the CLI and the Python API."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib

from paths import REPO

BLOCKER = r'''
import sys
class _Blocked:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("airflow", "pyspark", "pendulum"):
            raise ImportError(f"{name} is not installed in this environment (core only)")
        return None
sys.meta_path.insert(0, _Blocked())
'''

SCRIPT = BLOCKER + r'''
import datetime as dt, json, sys, tempfile
from airflow_hudi_etc import Table
from airflow_hudi_etc.cli import main
path = tempfile.mkdtemp() + "/t"
assert main(["init", "--path", path, "--table-name", "t", "--record-key", "k", "--precombine-field", "ts",
             "--event-time-field", "et"]) == 0
t = Table.open(path)
at = lambda h: dt.datetime(2026, 1, 1, h, tzinfo=dt.timezone.utc)
t.write([{"k": "a", "ts": 1, "et": at(1)}, {"k": "b", "ts": 1, "et": at(2)}])
t.write([{"k": "a", "ts": 2, "et": at(3)}])
t.write([{"k": "b", "ts": 2, "et": at(9)}])
plan = t.compaction.schedule("1h", compaction_time="2026-01-01T05:00:00Z")
assert plan.reason == "scheduled", plan
assert t.compaction.execute().status == "completed"
assert main(["validate", "--path", path]) == 0
assert main(["status", "--path", path, "--json"]) == 0
assert not [m for m in sys.modules if m.split(".")[0] in ("airflow", "pyspark")]
print("CORE-OK")
'''


def test_core_dependencies_name_neither_airflow_nor_spark():
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    names = {d.split("[")[0].split(">")[0].split("=")[0].split("<")[0].strip().lower() for d in deps}
    assert not {n for n in names if "airflow" in n or "spark" in n or n == "pendulum"}, names
    extras = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(d.startswith("apache-airflow>") for d in extras["airflow"]) and extras["spark"]


def test_life_cycle_without_airflow_or_spark_importable():
    p = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, cwd=REPO)
    assert p.returncode == 0 and "CORE-OK" in p.stdout, (p.stdout[-2000:], p.stderr[-4000:])


def test_the_blocker_blocks():
    p = subprocess.run([sys.executable, "-c", BLOCKER + "import airflow"], capture_output=True, text=True)
    assert p.returncode != 0 and "core only" in p.stderr
