"""Hudi 1.1+'s ``StorageBasedLockProvider`` shared with real Java: Hudi's own provider class of
1.1.1 and 1.2.0 (taking, renewing, releasing, the lease's JSON) and ours
(airflow_hudi_etc/hudi/concurrency/storage_lock.py) on one table's lock file in moto's S3 server
on 127.0.0.1. Java's S3 requests are made by a stand-in for hudi-aws's client
(tests/support/java/HttpConditionalLockClient.java: the registry here refuses hudi-aws 1.1.1 and
1.2.0), the same conditional PUTs, unsigned, to a bucket open to anonymous requests.

Judged: Java's lease bytes are the ones our writer makes for the same fields, and Java takes over a
lease ours released (it parsed ours); while either holds the lock the other is refused; taking
turns from two threads, whoever believes it holds the lock is the lease's owner in storage."""

from __future__ import annotations

import logging
import re
import socket
import threading
import time

import pytest

moto_server = pytest.importorskip("moto.server")
pytest.importorskip("s3fs")

from airflow_hudi_etc.hudi.concurrency import write_config as wc  # noqa: E402
from airflow_hudi_etc.hudi.concurrency.storage_lock import LOCK_FILE, StorageLock, lease_bytes  # noqa: E402
from airflow_hudi_etc.hudi.storage import Storage  # noqa: E402

pytestmark = pytest.mark.java

KEY_ID, SECRET, REGION, BUCKET = "AKIDTESTTEST", "moto-secret-value-not-a-real-one", "us-east-1", "hudi-etc-locks"
LEASE = re.compile(rb'\{"expired":(true|false),"validUntil":(\d+),"owner":"([0-9a-f-]{36})"\}')
CONFIG = wc.WriteConfig({wc.K_CONCURRENCY_MODE: "optimistic_concurrency_control", wc.K_LOCK_PROVIDER: wc.STORAGE_BASED})


@pytest.fixture(scope="module")
def s3():
    """moto's S3 server on 127.0.0.1 with one bucket open to anonymous requests (Java's stand-in
    client does not sign), and the options our storage takes."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    for _ in range(200):
        try:
            socket.create_connection((host, port), timeout=1.0).close()
            break
        except OSError:
            continue
    endpoint = f"http://{host}:{port}"
    import boto3

    boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
                 region_name=REGION).create_bucket(Bucket=BUCKET, ACL="public-read-write")
    yield endpoint, {"key": KEY_ID, "secret": SECRET, "endpoint_url": endpoint, "client_kwargs": {"region_name": REGION}}
    server.stop()


def _lease(storage) -> tuple[bytes, bool, int, str]:
    data = storage.read_bytes(LOCK_FILE)
    m = LEASE.fullmatch(data)
    assert m, data
    return data, m.group(1) == b"true", int(m.group(2)), m.group(3).decode()


@pytest.mark.parametrize("line", ["1.1", "1.2"])
def test_java_and_our_storage_locks_exclude_each_other(java_hudi, s3, line):
    endpoint, opts = s3
    java = java_hudi(line)
    uri = f"s3://{BUCKET}/t{line.replace('.', '')}"
    st = Storage(uri, opts)
    theirs = java.storage_lock(endpoint, uri)
    ours = StorageLock(st, CONFIG)
    try:
        # Java holds: ours is refused; Java's lease is byte for byte what our writer makes of its fields
        assert theirs.try_lock(0) or theirs.try_lock(2000)
        data, expired, until, owner = _lease(st)
        assert not expired and owner != ours.owner_id
        assert data == lease_bytes(False, until, owner)
        assert not ours.try_lock(0)
        assert owner in ours.owner()
        theirs.unlock()
        data, expired, until2, owner2 = _lease(st)  # released: written back expired, never deleted
        assert (expired, until2, owner2) == (True, until, owner) and data == lease_bytes(True, until, owner)

        # ours takes Java's released lease; Java is refused; once ours is released Java takes it
        # over (it read our bytes as its own StorageLockData)
        assert ours.try_lock(0)
        assert _lease(st)[3] == ours.owner_id
        assert not theirs.try_lock(1500)
        ours.unlock()
        assert _lease(st)[1:4:2] == (True, ours.owner_id)
        assert theirs.try_lock(2000)
        assert _lease(st)[3] == owner
        theirs.unlock()

        # a lease of ours whose holder died (validUntil passed beyond the 500 ms for clock drift) is
        # taken over by Java
        version = st.read_versioned(LOCK_FILE)[1]
        assert st.put_if_version(LOCK_FILE, lease_bytes(False, int(time.time() * 1000) - 5_000, ours.owner_id),
                                 version) is not None
        assert theirs.try_lock(2000)
        assert _lease(st)[1:4:2] == (False, owner)
        theirs.unlock()
    finally:
        ours.unlock()
        theirs.close()


def test_taking_turns_with_java_whoever_holds_the_lock_owns_the_lease(java_hudi, s3):
    """Java (1.1) and ours contend from two threads, eight turns each: inside its turn each side
    finds itself the lease's owner in storage and the other side outside."""
    endpoint, opts = s3
    java = java_hudi("1.1")
    uri = f"s3://{BUCKET}/turns"
    st = Storage(uri, opts)
    theirs = java.storage_lock(endpoint, uri)
    ours = StorageLock(st, CONFIG)
    inside: list[str] = []
    faults: list[str] = []
    turns = {"java": 0, "ours": 0}

    def turn(who: str, take, release, mine) -> None:
        for _ in range(8):
            while not take():
                pass
            inside.append(who)
            _, expired, _, owner = _lease(st)
            if len(inside) != 1 or expired or not mine(owner):
                faults.append(f"{who}: inside={inside} expired={expired} owner={owner}")
            turns[who] += 1
            inside.remove(who)
            release()

    java_owner: dict = {}

    def java_take() -> bool:
        if not theirs.try_lock(3000):
            return False
        java_owner.setdefault("id", _lease(st)[3])
        return True

    t = threading.Thread(target=turn, args=("java", java_take, theirs.unlock,
                                            lambda o: o != ours.owner_id and o == java_owner["id"]))
    t.start()
    try:
        turn("ours", lambda: ours.try_lock(3), ours.unlock, lambda o: o == ours.owner_id)
    finally:
        t.join(300)
        theirs.close()
    assert not t.is_alive()
    assert faults == [] and turns == {"java": 8, "ours": 8}
