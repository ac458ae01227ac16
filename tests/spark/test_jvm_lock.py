"""A Spark-hosted run takes the table's lock through Hudi's own provider class in the driver's
JVM (airflow_hudi_etc/hudi/concurrency/jvm_lock.py): real spark-submit of ``write --engine spark``
with the Hudi 1.1.1 bundle in ``spark.jars``, the table configured with optimistic concurrency and
the file-system provider. While the lock file exists (one of our Python commands holds it), the
job answers a typed ``conflict`` naming Hudi's class in the driver; once released it commits and
leaves no lock file. A provider class this process cannot take itself (Hudi's
``InProcessLockProvider``) is refused without the JVM and taken by the job with it."""

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


def test_a_spark_hosted_write_takes_hudis_own_lock_class(tmp_path, bundle, monkeypatch):
    p, conf, batch = _table(tmp_path, PKG + "FileSystemBasedLockProvider")
    monkeypatch.setenv(wc.ENV_CONF, json.dumps({"hoodie.write.lock.client.num_retries": "1",
                                                "hoodie.write.lock.client.wait_time_ms_between_retry": "100"}))
    ours = FileSystemLock(Storage(p), wc.WriteConfig(conf))
    assert ours.try_lock(0)
    try:
        with pytest.raises(HudiEtcError) as e:
            run_job(["write", "--path", p, "--input", batch, "--engine", "spark"], master="local[1]",
                    conf={"spark.jars": bundle})
        assert e.value.code == "conflict" and "in the Spark driver" in str(e.value), e.value
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
