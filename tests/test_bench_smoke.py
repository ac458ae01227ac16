"""The benchmark suite runs end to end at tiny sizes and reports every figure (not how fast)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from paths import REPO

FIGURES = ("P1", "P2", "P2j", "S3", "P3", "P4", "P5", "P6")


def _run(tmp_path: Path, *extra: str, env: dict | None = None) -> dict:
    out = tmp_path / "RESULTS.md"
    r = subprocess.run([sys.executable, "-m", "bench", "--smoke", "--output", str(out),
                        "--data-dir", str(tmp_path / "data"), *extra],
                       cwd=REPO, capture_output=True, text=True, timeout=300,
                       env=None if env is None else {**os.environ, **env})
    assert r.returncode == 0, r.stderr[-3000:]
    assert out.exists()
    res = json.loads((tmp_path / "RESULTS.json").read_text())
    res["_md"] = out.read_text()
    return res


def test_bench_smoke_writes_every_figure(tmp_path):
    res = _run(tmp_path, "--no-spark")
    figs = {f["key"]: f for f in res["figures"]}
    assert tuple(figs) == FIGURES
    for key, f in figs.items():
        assert f["value"] is not None, (key, f["notes"])
        assert f["target"] and f["ratio_to_target"] is not None, key
        assert f"| {key} |" in res["_md"]
    m = res["machine"]
    assert m["cores"] and m["cpu"] and m["ram_gib"] and m["python"] and m["pyarrow"]
    # the correctness side of the figures holds at any size
    assert figs["P5"]["met"] is True
    assert figs["P5"]["details"]["symlink"]["log bytes written on disk"] == 0
    p2 = figs["P2"]["details"]
    assert p2["plan"]["event time source"] == "write-stats"
    scan_plans = [v for k, v in p2.items() if k.startswith("scan fallback, logs of") and k.endswith(": plan")]
    assert len(scan_plans) == 2 and all(v["event time source"] == "scan" for v in scan_plans), p2
    calls = figs["P3"]["details"]["storage calls per check"]
    assert sum(calls.get(k, 0) for k in ("list", "list_names", "list_entry_names")) == 1, calls  # one listing
    assert figs["P3"]["details"]["poke / listing floor"] > 0
    for v in ("MET", "NOT MET"):
        res["_md"].count(v)  # statuses are written; their values are not checked here
    assert "Machine:" in res["_md"]


def test_bench_p7_without_java_hudi_is_a_skipped_figure(tmp_path):
    """No fetched Java Hudi: P7 says what to run, and the bench still succeeds (the real P7 takes
    minutes: python -m bench --only P7)."""
    empty = tmp_path / "no-java-hudi"
    empty.mkdir()
    res = _run(tmp_path, "--only", "P7", env={"HUDI_ETC_JAVA_CACHE": str(empty)})
    (f,) = res["figures"]
    assert f["key"] == "P7" and f["value"] is None and f["met"] is None
    assert "scripts/java_hudi.sh" in f["details"]["skipped"], f["details"]
    assert "| P7 |" in res["_md"] and "SKIPPED" in res["_md"]
    assert _run(tmp_path, "--only", "P7", "--no-java")["figures"] == []


@pytest.mark.slow
@pytest.mark.spark
def test_bench_smoke_spark(tmp_path):
    res = _run(tmp_path, "--only", "Spark")
    (f,) = res["figures"]
    assert f["key"] == "Spark" and f["value"] is not None, f["notes"]
    assert "fixed start-up s (trivial table)" in f["details"]


@pytest.mark.slow
@pytest.mark.spark
def test_bench_smoke_cluster(tmp_path):
    res = _run(tmp_path, "--only", "Cluster")
    (f,) = res["figures"]
    assert f["key"] == "Cluster" and f["value"] is not None, f["notes"]
    assert "per-row µs, cluster (large − small)" in f["details"]


@pytest.mark.slow
@pytest.mark.java
def test_bench_smoke_l1(tmp_path):
    """L1 with one attempt per line (two JVMs: minutes): it runs and reports both sides."""
    res = _run(tmp_path, "--only", "L1")
    (f,) = res["figures"]
    assert f["key"] == "L1" and f["value"] is not None, f["notes"]
    assert any(k.endswith("java writes per hour") for k in f["details"]), f["details"]
