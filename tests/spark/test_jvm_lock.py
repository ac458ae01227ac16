"""A Spark-hosted run takes the table's lock next to Java's writers: real spark-submit of ``write
--engine spark`` with the Hudi 1.1.1 bundle in ``spark.jars``, the table configured with optimistic
concurrency. The file-system provider is ours there too (an exclusive create; Hudi's class is not
exclusive and its ``close()`` deletes whoever's lock file is there, see docs/java-writers.md):
while the lock file exists (one of our Python commands holds it) the job answers a typed
``conflict`` naming the provider, not Hudi's class in the driver, and leaves the holder's lock file
as it was; once released it commits and leaves no lock file. A provider class this process cannot
take itself (Hudi's ``InProcessLockProvider``) is refused without the JVM and taken by the job
through Hudi's own class in the driver's JVM (airflow_hudi_etc/hudi/concurrency/jvm_lock.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_hudi_etc.api import Table
from airflow_hudi_etc.hudi.concurrency import write_config as wc
from airflow_hudi_etc.hudi.concurrency.fs_lock import FileSystemLock
from airflow_hudi_etc.hudi.concurrency.locks import LockProviderError
from airflow_hudi_etc.hudi.errors import HudiEtcError
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.write.writer import init_table
from airflow_hudi_etc.spark.spark_submit import run_job

pytestmark = pytest.mark.spark

PKG = "org.apache.hudi.client.transaction.lock."
BUNDLE = "hudi-spark3.5-bundle_2.12-1.1.1.jar"


@pytest.fixture(scope="module")
def bundle() -> str:
    cache = os.environ.get("HUDI_ETC_JAVA_CACHE") or str(Path(__file__).resolve().parents[2] / ".java-hudi")
    jar = Path(cache) / "jars" / BUNDLE
    if not jar.is_file():
        if os.environ.get("HUDI_ETC_JAVA_REQUIRED") == "1":
            pytest.fail(f"no {jar} (scripts/java_hudi.sh fetches it)")
        pytest.skip(f"no {jar} (scripts/java_hudi.sh fetches it)")
    return str(jar)


def _table(tmp_path, provider):
    p = str(tmp_path / "t")
    init_table(p, table_name="t", record_key="id", precombine_field="ts", event_time_field="et")
    conf = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control", "hoodie.write.lock.provider": provider}
    if provider.endswith("FileSystemBasedLockProvider"):
        Table(p).configure(hoodie=conf)
    batch = tmp_path / "b.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "ts": [1, 1], "et": [1_700_000_000_000] * 2}), batch)
    return p, conf, str(batch)


def test_a_spark_hosted_write_takes_the_exclusive_file_system_lock(tmp_path, bundle, monkeypatch):
    p, conf, batch = _table(tmp_path, PKG + "FileSystemBasedLockProvider")
    monkeypatch.setenv(wc.ENV_CONF, json.dumps({"hoodie.write.lock.client.num_retries": "1",
                                                "hoodie.write.lock.client.wait_time_ms_between_retry": "100"}))
    ours = FileSystemLock(Storage(p), wc.WriteConfig(conf))
    assert ours.try_lock(0)
    try:
        with pytest.raises(HudiEtcError) as e:
            run_job(["write", "--path", p, "--input", batch, "--engine", "spark"], master="local[1]",
                    conf={"spark.jars": bundle})
        assert e.value.code == "conflict" and "FileSystemBasedLockProvider" in str(e.value), e.value
        assert "in the Spark driver" not in str(e.value), e.value  # ours, not Hudi's class
        # the refused job left the lock it did not get as it was (Hudi's provider's close() deletes
        # the lock file whoever holds it: a Java writer's, here ours)
        assert (Path(p) / ".hoodie" / "lock").read_bytes() == ours._mine
    finally:
        ours.unlock()
    res = run_job(["write", "--path", p, "--input", batch, "--engine", "spark"], master="local[1]",
                  conf={"spark.jars": bundle})
    assert res["inserts"] == 2 and res["engine"] == "spark"
    assert not (Path(p) / ".hoodie" / "lock").exists()
    assert sorted(Table(p).read().column("id").to_pylist()) == ["a", "b"]


def test_a_provider_only_hudi_has_is_taken_in_the_driver_jvm(tmp_path, bundle, monkeypatch):
    p, conf, batch = _table(tmp_path, PKG + "InProcessLockProvider")
    monkeypatch.setenv(wc.ENV_CONF, json.dumps(conf))  # (configure refuses it: this process cannot take it)
    with pytest.raises(LockProviderError, match="Spark-hosted run"):
        Table(p).write(pa.table({"id": ["a"], "ts": [1], "et": [1_700_000_000_000]}))
    res = run_job(["write", "--path", p, "--input", batch, "--engine", "spark"], master="local[1]",
                  conf={"spark.jars": bundle})
    assert res["inserts"] == 2


@pytest.mark.java
def test_a_spark_job_keeps_javas_metadata_table_exact(tmp_path, bundle, java_hudi):
    """The operators' way (issue 34): spark-submit of ``write --engine spark`` with the 1.1.1 bundle
    in ``spark.jars`` on a table Java 1.1 made with its defaults (metadata table on, column and
    partition stats): Hudi's metadata writer in the job's driver registers our files; Hudi's own
    listing (Java's procedures) then equals storage and Java's read through it holds our rows.
    The same write without the JVM is refused, nothing written."""
    java = java_hudi("1.1")
    p = str(tmp_path / "m")
    java.upsert(p, [{"id": "a", "ts": 1, "et": 1_700_000_000_000, "v": 1.0}], schema="id string, ts bigint, et bigint, v double",
                options={"hoodie.table.name": "m", "hoodie.datasource.write.recordkey.field": "id",
                         "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "",
                         "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
                         "hoodie.metadata.enable": "true"})
    assert "column_stats" in (Path(p) / ".hoodie" / "hoodie.properties").read_text()
    Table(p).configure(timeline_zone="UTC", java_compaction="off")
    batch = tmp_path / "mb.parquet"
    pq.write_table(pa.table({"id": ["a", "b"], "ts": [2, 1], "et": [1_700_000_000_000] * 2, "v": [2.0, 3.0]}), batch)
    with pytest.raises(HudiEtcError) as e:
        Table.open(p).write(pq.read_table(batch))
    assert e.value.code == "metadata_table_present" and "Spark-hosted" in str(e.value)
    res = run_job(["write", "--path", p, "--input", str(batch), "--engine", "spark"], master="local[1]",
                  conf={"spark.jars": bundle})
    assert res["updates"] == 1 and res["inserts"] == 1
    md = java.metadata_files(p)
    on_disk = sorted(f.name for f in Path(p).iterdir() if f.is_file() and not f.name.endswith(".crc")
                     and (f.name.endswith(".parquet") or ".log." in f.name))
    assert md["differences"] == [] and sorted(md["partitions"][""] if "" in md["partitions"] else
                                              md["partitions"].get(".", [])) == on_disk, (md, on_disk)
    rows = java.read(p, options={"hoodie.metadata.enable": "true", "hoodie.enable.data.skipping": "true"})
    assert sorted((r["id"], r["v"]) for r in rows) == [("a", 2.0), ("b", 3.0)]
