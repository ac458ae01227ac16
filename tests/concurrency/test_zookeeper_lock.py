"""Our ZooKeeper contender against a real ZooKeeper server: Curator's node names and order (a
foreign ``_c_<uuid>-lock-<seq>`` node before ours holds the mutex, one after ours waits), two of
ours exclude each other, a killed holder's session releases it, a server that does not answer is a
typed refusal. Against Java's ZookeeperBasedLockProvider: tests/java/test_java_lock.py."""

from __future__ import annotations

import threading

import pytest

from airflow_hudi_etc.api import Table
from airflow_hudi_etc.hudi.concurrency import write_config as wc
from airflow_hudi_etc.hudi.concurrency.locks import LockProviderError
from airflow_hudi_etc.hudi.concurrency.zookeeper import ZookeeperLock, sequence_of
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.write.writer import init_table

ZK = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"


def _conf(url, **more):
    return wc.WriteConfig({wc.K_LOCK_PROVIDER: ZK, "hoodie.write.lock.zookeeper.url": url,
                           "hoodie.write.lock.zookeeper.base_path": "/hudi-locks", **more})


@pytest.fixture
def table(tmp_path):
    p = str(tmp_path / "orders")
    init_table(p, table_name="orders", record_key="id", precombine_field="ts", event_time_field="et")
    return Storage(p)


def test_curator_names_and_order(zookeeper, table):
    from kazoo.client import KazooClient

    assert sequence_of("_c_8f0e-lock-0000000007") == "0000000007"
    a = ZookeeperLock(table, _conf(zookeeper))
    assert a.path == "/hudi-locks/orders"  # base_path/lock_key, the key inferred from the table name
    zk = KazooClient(hosts=zookeeper)
    zk.start()
    try:
        # a Java writer's contender (Curator's protected ephemeral sequential node) holds it
        java = zk.create("/hudi-locks/orders/_c_0b1d-lock-", b"", ephemeral=True, sequence=True, makepath=True)
        assert not a.try_lock(0.2)
        assert "_c_0b1d-lock-" in a.owner()
        assert zk.get_children("/hudi-locks/orders") == [java.rsplit("/", 1)[1]]  # ours withdrew its node
        got = threading.Event()
        t = threading.Thread(target=lambda: a.try_lock(30) and got.set())
        t.start()
        while len(zk.get_children("/hudi-locks/orders")) < 2:  # ours waits behind Java's
            got.wait(0.05)
        ours = [c for c in zk.get_children("/hudi-locks/orders") if c != java.rsplit("/", 1)[1]][0]
        assert ours.startswith("_c_") and "-lock-" in ours and sequence_of(ours) > sequence_of(java)
        zk.delete(java)  # Java releases
        t.join(30)
        assert got.is_set()
        b = ZookeeperLock(table, _conf(zookeeper))
        assert not b.try_lock(0.2)  # one of ours holds it: another of ours waits
        a.close()
        assert b.try_lock(5)
        b.close()
        assert zk.get_children("/hudi-locks/orders") == []
    finally:
        zk.stop()
        zk.close()


def test_configure_checks_the_server_answers(zookeeper, table, tmp_path):
    t = Table(table.base_uri)
    with pytest.raises(LockProviderError, match="no ZooKeeper server answered"):
        t.configure(hoodie={wc.K_LOCK_PROVIDER: ZK, "hoodie.write.lock.zookeeper.url": "127.0.0.1:1",
                            "hoodie.write.lock.zookeeper.base_path": "/hudi-locks",
                            "hoodie.write.lock.zookeeper.connection_timeout_ms": "1500"})
    with pytest.raises(LockProviderError, match="base_path"):
        t.configure(hoodie={wc.K_LOCK_PROVIDER: ZK, "hoodie.write.lock.zookeeper.url": zookeeper})
    out = t.configure(hoodie={wc.K_LOCK_PROVIDER: ZK, "hoodie.write.lock.zookeeper.url": zookeeper,
                              "hoodie.write.lock.zookeeper.base_path": "/hudi-locks",
                              wc.K_CONCURRENCY_MODE: "optimistic_concurrency_control"})
    assert out["status"] == "configured"
    import pyarrow as pa

    t.write(pa.table({"id": ["a"], "ts": [1], "et": [1_700_000_000_000]}))  # under the ZooKeeper lock
    assert t.read().column("id").to_pylist() == ["a"]
