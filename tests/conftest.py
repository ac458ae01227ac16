"""Shared test fixtures: the Java-written fixture tables, temp tables, one SparkSession."""

from __future__ import annotations

import os
import shutil
import zipfile
from pathlib import Path

import pytest

# tests/support/ holds what the tests share (the model, hudi-rs oracle, scenario, Java simulator...)
import sys  # noqa: E402
sys.path.insert(0, str(Path(__file__).resolve().parent / "support"))

from paths import FIXTURES, OTHER_FIXTURES, V6_MOR_FIXTURES  # noqa: E402

# The Java-written fixture tables have no hoodie.table.timeline.timezone (Java's LOCAL): they were
# written by JVMs on UTC (their instants are the UTC times in the fixtures' README), so the Java
# writers' zone is UTC. Tests of the refusal without it delete this variable.
os.environ["HUDI_ETC_TIMELINE_TIMEZONE"] = "UTC"


def extract_fixture(name: str, dest: Path) -> Path:
    """Unzip a fixture table into ``dest`` and return its base path (skips when absent)."""
    rel = V6_MOR_FIXTURES.get(name) or OTHER_FIXTURES[name]
    z = FIXTURES / rel
    if not z.exists():
        pytest.skip(f"fixture {z} not available (../shared absent)")
    stage = dest / f".unzip-{name}"
    with zipfile.ZipFile(z) as zf:
        members = [m for m in zf.namelist() if not m.startswith("__MACOSX/")]
        zf.extractall(stage, members=members)
        top = members[0].split("/")[0]
    (stage / top).rename(dest / name)  # two zips share a top folder name: key by our name
    stage.rmdir()
    return dest / name


@pytest.fixture(scope="session")
def fixture_root(tmp_path_factory) -> Path:
    """All fixture tables extracted once, read-only by convention."""
    if not FIXTURES.exists():
        pytest.skip("../shared/fixtures/hudi-rs-tables not available")
    root = tmp_path_factory.mktemp("fixtures")
    for name in {**V6_MOR_FIXTURES, **OTHER_FIXTURES}:
        extract_fixture(name, root)
    return root


@pytest.fixture
def fixture_copy(fixture_root, tmp_path):
    """A writable copy of one fixture table: ``fixture_copy("v6_trips_8i1u")``."""

    def make(name: str) -> Path:
        src = fixture_root / name
        dst = tmp_path / name
        shutil.copytree(src, dst, symlinks=True)
        return dst

    return make


@pytest.fixture(scope="session")
def spark():
    """One SparkSession for the whole run (the JVM starts once)."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    import sys

    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    s = (
        SparkSession.builder.master("local[2]")
        .appName("hudi-etc-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "1g")
        .getOrCreate()
    )
    yield s
    s.stop()


@pytest.fixture(scope="session")
def java_hudi():
    """Real Java Hudi: ``java_hudi("0.14")`` is that line's long-lived server (tests/support/
    java_hudi.py), started once per session. Skips only when Java or the cache made by
    scripts/java_hudi.sh is missing — and fails instead when HUDI_ETC_JAVA_REQUIRED=1
    (scripts/test.sh sets it after installing)."""
    from java_hudi import JavaHudiPool, unavailable_reason

    why = unavailable_reason()
    if why:
        if os.environ.get("HUDI_ETC_JAVA_REQUIRED") == "1":
            pytest.fail(f"real Java Hudi required but unavailable: {why}")
        pytest.skip(why)
    pool = JavaHudiPool()
    yield pool
    report = pool.cost_report()
    pool.close()
    if report and os.environ.get("HUDI_ETC_JAVA_COSTS"):
        with open(os.environ["HUDI_ETC_JAVA_COSTS"], "a", encoding="utf-8") as f:
            f.write(report + "\n")


@pytest.fixture(scope="session")
def zookeeper():
    """A real ZooKeeper server on 127.0.0.1 (tests/support/zookeeper_server.py): its url
    ``127.0.0.1:<port>``. Skips without Debian's zookeeper package, or fails when
    HUDI_ETC_JAVA_REQUIRED=1 (scripts/test.sh installs it)."""
    from zookeeper_server import ZooKeeperServer, unavailable_reason

    why = unavailable_reason()
    if why:
        if os.environ.get("HUDI_ETC_JAVA_REQUIRED") == "1":
            pytest.fail(f"ZooKeeper required but unavailable: {why}")
        pytest.skip(why)
    server = ZooKeeperServer().start()
    yield server.url
    server.stop()
