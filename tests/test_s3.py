"""Tables on ``s3://``: writer, event-time compaction (copy links chosen by ``auto``), rollback,
the sensor's readiness check through a ``hudi`` connection, and one ``--engine spark`` run, all
against moto's S3-compatible server started here on 127.0.0.1. The judge is hudi-rs reading the
same bucket through its own object-store client, compared with hand-written expected rows.
"""

from __future__ import annotations

import json
import logging
import pickle
import re
import socket
import time

import pyarrow as pa
import pytest

pytest.importorskip("s3fs")
moto_server = pytest.importorskip("moto.server")

from airflow_hudi_etc.compaction.execution import execute  # noqa: E402

from airflow_hudi_etc.compaction.lifecycle import rollback

from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.errors import (  # noqa: E402
    InstantExistsError,
    InvalidInputError,
    UnsupportedFeatureError,
)
from airflow_hudi_etc.hudi.concurrency import write_config as wc  # noqa: E402
from airflow_hudi_etc.hudi.concurrency.locks import LockProviderError  # noqa: E402
from airflow_hudi_etc.hudi.concurrency.storage_lock import LOCK_FILE, StorageLock  # noqa: E402
from airflow_hudi_etc.hudi.storage import Storage  # noqa: E402
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable  # noqa: E402
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch  # noqa: E402

KEY_ID, SECRET, REGION = "AKIDTESTTEST", "moto-secret-value-not-a-real-one", "us-east-1"
BUCKET = "hudi-etc-test"
H = 3_600_000
T0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z


def _wait_for_port(host: str, port: int, attempts: int = 200) -> None:
    """Poll until the server accepts a TCP connection (no sleeps: each try blocks in connect)."""
    last = None
    for _ in range(attempts):
        try:
            with socket.create_connection((host, port), timeout=1.0):
                return
        except OSError as e:
            last = e
    raise RuntimeError(f"moto server on {host}:{port} never accepted a connection: {last}")


@pytest.fixture(scope="session")
def s3_endpoint():
    """moto's S3 server on a free port of 127.0.0.1 (port 0: the OS picks), with one bucket."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    _wait_for_port(host, port)
    endpoint = f"http://{host}:{port}"
    import boto3

    boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
                 region_name=REGION).create_bucket(Bucket=BUCKET)
    yield endpoint
    server.stop()


@pytest.fixture(autouse=True)
def _no_ambient_aws(monkeypatch):
    """Only the explicit options may point anywhere: no endpoint or key from the environment
    (so a Spark executor that did not receive the pickled options would fail)."""
    for k in ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY",
              "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_REGION", "HUDI_ETC_STORAGE_OPTIONS"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


@pytest.fixture
def s3_options(s3_endpoint):
    """fsspec/s3fs options, as a ``hudi`` connection would give them."""
    return {"key": KEY_ID, "secret": SECRET, "endpoint_url": s3_endpoint, "client_kwargs": {"region_name": REGION}}


def hudi_rs_s3(uri: str, endpoint: str, *, read_optimized: bool = False) -> dict:
    """hudi-rs reads the table through its own object-store client: ``{id: (v, et)}``."""
    from hudi import HudiReadOptions, HudiTableBuilder

    t = (HudiTableBuilder.from_base_uri(uri)
         .with_storage_options({"aws_endpoint_url": endpoint, "aws_access_key_id": KEY_ID,
                                "aws_secret_access_key": SECRET, "aws_region": REGION, "aws_allow_http": "true"})
         .build())
    opts = HudiReadOptions(hudi_options={"hoodie.read.use.read_optimized.mode": "true"} if read_optimized else {})
    batches = t.read(opts)
    rows = pa.Table.from_batches(batches).to_pylist() if batches else []
    out = {r["id"]: (r["v"], r["et"]) for r in rows}
    assert len(out) == len(rows), "duplicate keys"
    return out


def _batch(rows: list[tuple]) -> pa.Table:
    ids, ts, et, region, v = zip(*rows)
    return pa.table({"id": list(ids), "ts": pa.array(ts, pa.int64()), "et": pa.array(et, pa.int64()),
                     "region": list(region), "v": list(v)})


# the history every S3 table gets; the expected rows below are written by hand from it
BATCHES = [
    [("a", 1, T0 + 1 * H, "x", "a1"), ("b", 1, T0 + 1 * H, "x", "b1"), ("c", 1, T0 + 1 * H, "x", "c1"),
     ("d", 1, T0 + 1 * H, "y", "d1")],                                 # inserts: one base file per partition
    [("a", 2, T0 + 2 * H, "x", "a2"), ("d", 2, T0 + 90 * 60_000, "y", "d2")],  # a log in each group
    [("b", 3, T0 + 5 * H, "x", "b3"), ("a", 3, T0 + 6 * H, "x", "a3")],        # a 2nd log in group x: late
]
COMPACTION_TIME = "2026-01-01T04:00:00Z"
THRESHOLD_MS = T0 + 3 * H  # compaction time − 1h
SNAPSHOT = {"a": ("a3", T0 + 6 * H), "b": ("b3", T0 + 5 * H), "c": ("c1", T0 + H), "d": ("d2", T0 + 90 * 60_000)}
# group x compacts its 1st log (min event time 02:00 ≤ 03:00) and re-exposes the 2nd (05:00);
# group y compacts its only log
RO_AFTER = {"a": ("a2", T0 + 2 * H), "b": ("b1", T0 + H), "c": ("c1", T0 + H), "d": ("d2", T0 + 90 * 60_000)}
RO_BEFORE = {"a": ("a1", T0 + H), "b": ("b1", T0 + H), "c": ("c1", T0 + H), "d": ("d1", T0 + H)}


def make_table(uri: str, options: dict, *, exclusive_cleaner: bool = False) -> None:
    init_table(uri, table_name="trips", record_key="id", precombine_field="ts", event_time_field="et",
               partition_field="region", storage_options=options, exclusive_cleaner=exclusive_cleaner)
    for b in BATCHES:
        write_batch(uri, _batch(b), storage_options=options)


def _keys(options: dict, prefix: str) -> set[str]:
    import fsspec

    fs = fsspec.filesystem("s3", skip_instance_cache=True, use_listings_cache=False, **options)
    return {p[len(prefix) + 1:] for p in fs.find(prefix)}


class DiesAfterFirstTask:
    """An engine whose executor is lost after the first compaction task (a crashed run)."""

    name = "local"

    def map(self, fn, items):
        items = list(items)
        fn(items[0])
        raise OSError("executor lost (injected by the test)")


# ----------------------------------------------------------------------------------- tests
def test_conditional_create_on_s3(s3_options):
    """Timeline files are created with ``If-None-Match: *``: a second create of the name fails and
    leaves the object as it was (empty ``.requested`` files included)."""
    st = Storage(f"s3://{BUCKET}/cond", s3_options)
    assert st.atomic_create and not st.supports_symlinks
    st.create_if_absent(".hoodie/20260101000000000.deltacommit.requested", b"")
    st.create_if_absent(".hoodie/20260101000000000.deltacommit", b'{"v": 1}')
    other = Storage(f"s3://{BUCKET}/cond", dict(s3_options))  # another writer (own client)
    with pytest.raises(InstantExistsError):
        other.create_if_absent(".hoodie/20260101000000000.deltacommit.requested", b"x")
    with pytest.raises(InstantExistsError):
        other.create_if_absent(".hoodie/20260101000000000.deltacommit", b'{"v": 2}')
    assert st.read_bytes(".hoodie/20260101000000000.deltacommit.requested") == b""
    assert st.read_bytes(".hoodie/20260101000000000.deltacommit") == b'{"v": 1}'
    # the server itself refuses (moto implements S3's conditional PutObject), not only a client check
    import boto3
    from botocore.exceptions import ClientError

    c = boto3.client("s3", endpoint_url=s3_options["endpoint_url"], aws_access_key_id=KEY_ID,
                     aws_secret_access_key=SECRET, region_name=REGION)
    with pytest.raises(ClientError) as e:
        c.put_object(Bucket=BUCKET, Key="cond/.hoodie/20260101000000000.deltacommit", Body=b"z", IfNoneMatch="*")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 412
    # whole-object replace, copy (refuses an existing name), no symlinks, options survive pickling
    st.write_atomic(".hoodie/hoodie.properties", b"a=1\n")
    st.write_atomic(".hoodie/hoodie.properties", b"a=2\n")
    assert st.read_bytes(".hoodie/hoodie.properties") == b"a=2\n"
    st.copy(".hoodie/20260101000000000.deltacommit", "p/copy")
    assert st.read_bytes("p/copy") == b'{"v": 1}'
    with pytest.raises(InstantExistsError):
        st.copy(".hoodie/hoodie.properties", "p/copy")
    with pytest.raises(UnsupportedFeatureError):
        st.symlink(".hoodie/hoodie.properties", "p/link")
    back = pickle.loads(pickle.dumps(st))
    assert back.options == s3_options and back.read_bytes("p/copy") == b'{"v": 1}'
    assert SECRET not in repr(st) and KEY_ID not in repr(st)


def test_write_compact_rollback_on_s3_read_by_hudi_rs(s3_options, s3_endpoint):
    uri = f"s3://{BUCKET}/t"
    make_table(uri, s3_options)
    assert hudi_rs_s3(uri, s3_endpoint) == SNAPSHOT
    assert hudi_rs_s3(uri, s3_endpoint, read_optimized=True) == RO_BEFORE

    with pytest.raises(InvalidInputError, match="no symlinks"):
        schedule(uri, data_latency="1h", compaction_time=COMPACTION_TIME, link_mode="symlink",
                 storage_options=s3_options)
    plan = schedule(uri, data_latency="1h", compaction_time=COMPACTION_TIME, storage_options=s3_options)
    assert plan.instant is not None and plan.threshold_ms == THRESHOLD_MS

    # a run that dies mid-way, on S3: rollback removes what it wrote, execute runs it again
    before = _keys(s3_options, f"{BUCKET}/t")
    with pytest.raises(OSError, match="executor lost"):
        execute(uri, engine=DiesAfterFirstTask(), storage_options=s3_options)
    written = _keys(s3_options, f"{BUCKET}/t") - before
    assert f".hoodie/{plan.instant}.compaction.inflight" in written
    assert any(k.endswith(f"_{plan.instant}.parquet") for k in written)
    assert hudi_rs_s3(uri, s3_endpoint) == SNAPSHOT  # readers never see the half-done run
    rb = rollback(uri, instant=plan.instant, storage_options=s3_options)
    assert rb["status"] == "requested"
    after_rb = _keys(s3_options, f"{BUCKET}/t")
    assert not any(k.endswith(f"_{plan.instant}.parquet") for k in after_rb)
    assert f".hoodie/{plan.instant}.compaction.inflight" not in after_rb
    assert f".hoodie/{plan.instant}.compaction.requested" in after_rb
    assert rollback(uri, instant=plan.instant, storage_options=s3_options)["files_removed"] == 0

    out = execute(uri, storage_options=s3_options)
    assert out["status"] == "completed" and out["link_mode"] == "copy"  # auto → copy on S3
    assert out["logs_compacted"] == 2 and out["logs_remaining"] == 1 and out["threshold_ms"] == THRESHOLD_MS
    assert out["link_bytes_written"] > 0

    # the judge: hudi-rs over S3 against the hand-written rows
    assert hudi_rs_s3(uri, s3_endpoint) == SNAPSHOT
    ro = hudi_rs_s3(uri, s3_endpoint, read_optimized=True)
    assert ro == RO_AFTER
    for k, (v, et) in SNAPSHOT.items():  # every record with event time ≤ threshold is in RO
        last_ok = [r for b in BATCHES for r in b if r[0] == k and r[2] <= THRESHOLD_MS][-1]
        assert ro[k] == (last_ok[4], last_ok[2])
    # the re-exposed log is a real copy (S3 has no links) with the bytes of the log it re-exposes
    st = Storage(uri, s3_options)
    meta = HudiTable.load(st).commit_metadata(HudiTable.load(st).timeline.completed_compactions[-1])
    links = json.loads(meta["extraMetadata"]["hoodie.etc.link.operations"])
    assert len(links) == 1 and st.read_bytes(links[0]["link"]) == st.read_bytes(links[0]["target"])
    assert f"_{plan.instant}.log." in links[0]["link"]
    # our reader agrees; retry is a no-op; nothing is left over
    ours = HudiTable.load(uri, s3_options).read().to_pylist()
    assert {r["id"]: (r["v"], r["et"]) for r in ours} == SNAPSHOT
    assert execute(uri, storage_options=s3_options)["status"] == "already completed"
    from airflow_hudi_etc.compaction.validate import validate

    assert validate(uri, storage_options=s3_options)["problems"] == []


def test_readiness_check_on_s3_through_a_hudi_connection(s3_options, s3_endpoint, monkeypatch):
    import airflow_env  # noqa: F401  (configures Airflow before it is imported)
    from airflow_hudi_etc.hooks.hudi import HudiTableHook

    uri = f"s3://{BUCKET}/ready"
    make_table(uri, s3_options)
    monkeypatch.setenv("AIRFLOW_CONN_HUDI_S3", json.dumps({
        "conn_type": "hudi", "login": KEY_ID, "password": SECRET, "host": s3_endpoint,
        "extra": {"region_name": REGION}}))
    hook = HudiTableHook("hudi_s3")
    assert hook.get_storage_options() == s3_options
    first = hook.check(uri, threshold_ms=THRESHOLD_MS)
    assert first["state"] == "ready" and first["threshold"] == "2026-01-01T03:00:00.000Z"
    plan = schedule(uri, data_latency="1h", compaction_time=COMPACTION_TIME, storage_options=s3_options)
    assert hook.check(uri, threshold_ms=THRESHOLD_MS)["state"] == "resume"
    later = hook.check(uri, threshold_ms=THRESHOLD_MS + H)
    assert later["state"] == "waiting" and plan.instant in later["message"]
    assert [p["instant"] for p in hook.pending_plans(uri)] == [plan.instant]
    execute(uri, storage_options=s3_options)
    covered = hook.check(uri, threshold_ms=THRESHOLD_MS)
    assert covered["state"] == "covered" and covered["last_threshold_ms"] == THRESHOLD_MS
    assert hook.check(uri, threshold_ms=THRESHOLD_MS + H)["state"] == "ready"
    m = hook.metrics(uri)
    assert m["threshold_ms"] == THRESHOLD_MS and m["remaining_log_files"] == 1


def test_cli_storage_options_from_the_environment(s3_options, monkeypatch, capsys):
    from airflow_hudi_etc.cli import main

    uri = f"s3://{BUCKET}/cli"
    monkeypatch.setenv("HUDI_ETC_STORAGE_OPTIONS", "{not json")
    assert main(["status", "--path", uri, "--json"]) == 2
    out = json.loads(capsys.readouterr().out)
    assert out["error"]["code"] == "invalid_input" and "not json" not in out["error"]["message"]
    monkeypatch.setenv("HUDI_ETC_STORAGE_OPTIONS", json.dumps(s3_options))
    assert main(["init", "--path", uri, "--table-name", "cli", "--record-key", "id", "--precombine-field", "ts",
                 "--event-time-field", "et"]) == 0
    assert json.loads(capsys.readouterr().out)["created"] is True
    assert main(["status", "--path", uri, "--json"]) == 0
    st = json.loads(capsys.readouterr().out)
    assert st["path"] == uri and st["table"] == "cli" and st["remaining_log_files"] == 0
    assert main(["schedule", "--path", uri, "--data-latency", "1h", "--link-mode", "symlink"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "invalid_input"
    # a table that is not there, a bucket that is not there: typed errors, no credentials echoed
    assert main(["status", "--path", f"s3://{BUCKET}/nothing-here"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "table_not_found"
    assert main(["init", "--path", "s3://no-such-bucket/t", "--table-name", "t", "--record-key", "id",
                 "--precombine-field", "ts", "--event-time-field", "et"]) == 2
    err = json.loads(capsys.readouterr().out)["error"]
    assert err["code"] == "invalid_input" and "missing bucket" in err["message"] and SECRET not in err["message"]


@pytest.mark.spark
def test_execute_with_engine_spark_on_s3(s3_options, s3_endpoint, monkeypatch, capsys):
    """``hudi-etc execute --engine spark``: a real spark-submit whose executors reach S3 with the
    options the driver pickled into their tasks (the environment carries none: see the autouse
    fixture; only the driver reads ``$HUDI_ETC_STORAGE_OPTIONS``)."""
    from airflow_hudi_etc.cli import main

    uri = f"s3://{BUCKET}/spark"
    make_table(uri, s3_options)
    plan = schedule(uri, data_latency="1h", compaction_time=COMPACTION_TIME, storage_options=s3_options)
    monkeypatch.setenv("HUDI_ETC_STORAGE_OPTIONS", json.dumps(s3_options))
    capsys.readouterr()
    assert main(["execute", "--path", uri, "--engine", "spark"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["instant"] == plan.instant and out["status"] == "completed" and out["engine"] == "spark"
    assert out["link_mode"] == "copy" and out["logs_remaining"] == 1
    assert hudi_rs_s3(uri, s3_endpoint) == SNAPSHOT
    assert hudi_rs_s3(uri, s3_endpoint, read_optimized=True) == RO_AFTER


def test_a_symlink_plan_moved_to_s3_is_refused_before_anything_is_written(s3_options, tmp_path):
    """A plan made on POSIX storage with symlink links, its table then copied to S3: execute
    refuses it with a typed error and writes nothing (unschedule, schedule again: copy)."""
    import fsspec

    from airflow_hudi_etc.compaction.lifecycle import unschedule

    local = tmp_path / "t"
    make_table(str(local), {}, exclusive_cleaner=True)
    plan = schedule(str(local), data_latency="1h", compaction_time=COMPACTION_TIME, link_mode="symlink")
    assert plan.instant is not None
    uri = f"s3://{BUCKET}/moved"
    fs = fsspec.filesystem("s3", skip_instance_cache=True, use_listings_cache=False, **s3_options)
    fs.put(str(local) + "/", f"{BUCKET}/moved", recursive=True)
    before = _keys(s3_options, f"{BUCKET}/moved")
    assert f".hoodie/{plan.instant}.compaction.requested" in before
    with pytest.raises(UnsupportedFeatureError, match="symlink"):
        execute(uri, storage_options=s3_options)
    assert _keys(s3_options, f"{BUCKET}/moved") == before
    unschedule(uri, instant=plan.instant, storage_options=s3_options)
    again = schedule(uri, data_latency="1h", compaction_time=COMPACTION_TIME, storage_options=s3_options)
    out = execute(uri, instant=again.instant, storage_options=s3_options)
    assert out["status"] == "completed" and out["link_mode"] == "copy"


# ---------------------------------------------------------------- Hudi 1.1+'s StorageBasedLockProvider

LEASE = re.compile(rb'\{"expired":(true|false),"validUntil":(\d+),"owner":"([0-9a-f-]{36})"\}')


def _lock_config(**extra) -> "wc.WriteConfig":
    return wc.WriteConfig({wc.K_CONCURRENCY_MODE: "optimistic_concurrency_control",
                           wc.K_LOCK_PROVIDER: wc.STORAGE_BASED, **extra})


def _lease(storage) -> tuple[bool, int, str]:
    m = LEASE.fullmatch(storage.read_bytes(LOCK_FILE))
    assert m, storage.read_bytes(LOCK_FILE)
    return m.group(1) == b"true", int(m.group(2)), m.group(3).decode()


def test_the_storage_lock_is_a_lease_replaced_on_a_condition(s3_options):
    """Two of our providers on one table: the lease file is Jackson's compact JSON of Java's
    StorageLockData (fixed pattern); the second cannot take a live lease; release writes it back
    expired (never deleted); the second then takes it over on its ETag."""
    uri = f"s3://{BUCKET}/lock-lease"
    init_table(uri, table_name="t", record_key="id", precombine_field="ts", event_time_field="et",
               partition_field="region", storage_options=s3_options)
    st = Storage(uri, s3_options)
    a, b = StorageLock(st, _lock_config()), StorageLock(st, _lock_config())
    t0 = int(time.time() * 1000)
    assert a.try_lock(0)
    try:
        expired, until, owner = _lease(st)
        assert (expired, owner) == (False, a.owner_id)
        assert t0 + 300_000 <= until <= int(time.time() * 1000) + 300_000  # the default validity, 300 s
        assert not b.try_lock(0)
        assert a.owner_id in b.owner()
        assert a.try_lock(0)  # re-entrant, as Java's
        assert a.renew() and _lease(st)[1] >= until  # the heartbeat's step: the same lease, later
    finally:
        a.unlock()
    expired, until2, owner = _lease(st)
    assert (expired, owner) == (True, a.owner_id) and until2 >= until
    assert b.try_lock(0)
    assert _lease(st)[0:3:2] == (False, b.owner_id)
    b.unlock()


def test_a_lease_of_a_dead_holder_is_taken_once_it_expired(s3_options, monkeypatch):
    """A lease whose holder stopped renewing (a killed writer: validUntil passed, beyond Java's
    500 ms for clock drift) is taken over; a live one is a typed, retryable conflict through the
    commit path with nothing written; a file that is no lease is never taken."""
    uri = f"s3://{BUCKET}/lock-dead"
    init_table(uri, table_name="t", record_key="id", precombine_field="ts", event_time_field="et",
               partition_field="region", storage_options=s3_options)
    st = Storage(uri, s3_options)
    now = int(time.time() * 1000)
    other = "0123abcd-0000-4000-8000-000000000000"
    st.write_atomic(LOCK_FILE, b'{"expired":false,"validUntil":%d,"owner":"%s"}' % (now + 60_000, other.encode()))
    ours = StorageLock(st, _lock_config())
    assert not ours.try_lock(0)
    monkeypatch.setenv(wc.ENV_CONF, json.dumps({wc.K_CONCURRENCY_MODE: "optimistic_concurrency_control",
                                                wc.K_LOCK_PROVIDER: wc.STORAGE_BASED,
                                                "hoodie.write.lock.client.num_retries": "1",
                                                "hoodie.write.lock.client.wait_time_ms_between_retry": "10",
                                                "hoodie.write.lock.wait_time_ms": "0"}))
    before = _keys(s3_options, f"{BUCKET}/lock-dead")
    with pytest.raises(InstantExistsError) as e:
        write_batch(uri, _batch([("a", 1, T0, "x", "a1")]), storage_options=s3_options)
    assert e.value.code == "conflict" and other in str(e.value), e.value
    # no data file and no instant left (a partition's metadata file, as Java's writers make it
    # before their commit takes the lock, may stay)
    assert {k for k in _keys(s3_options, f"{BUCKET}/lock-dead") if not k.endswith("/.hoodie_partition_metadata")} == before
    st.write_atomic(LOCK_FILE, b'{"expired":false,"validUntil":%d,"owner":"%s"}' % (now - 1_000, other.encode()))
    assert ours.try_lock(0)
    ours.unlock()
    st.write_atomic(LOCK_FILE, b"not a lease")
    assert not StorageLock(st, _lock_config()).try_lock(0)


def test_a_lease_taken_from_its_holder_is_left_to_the_new_one(s3_options):
    """Our lease replaced behind our back (we failed to renew in time and another writer took it
    over): our renewal fails on its condition, and our release does not touch the new lease."""
    uri = f"s3://{BUCKET}/lock-lost"
    init_table(uri, table_name="t", record_key="id", precombine_field="ts", event_time_field="et",
               partition_field="region", storage_options=s3_options)
    st = Storage(uri, s3_options)
    ours = StorageLock(st, _lock_config())
    assert ours.try_lock(0)
    theirs = b'{"expired":false,"validUntil":%d,"owner":"feedbeef-0000-4000-8000-000000000000"}' % (
        int(time.time() * 1000) + 60_000)
    st.write_atomic(LOCK_FILE, theirs)
    assert not ours.renew() and ours.lost
    ours.unlock()
    assert st.read_bytes(LOCK_FILE) == theirs


def test_the_storage_lock_is_refused_where_java_has_no_client(tmp_path):
    """Local files: Java's StorageBasedLockProvider has no client for file:// (nor hdfs://), and
    local files have no conditional replace here: refused before anything is written; Java's
    bounds on the settings are checked as Java checks them."""
    p = str(tmp_path / "t")
    init_table(p, table_name="t", record_key="id", precombine_field="ts", event_time_field="et")
    with pytest.raises(LockProviderError, match="no implementation|has none here"):
        StorageLock(Storage(p), _lock_config())


def test_the_storage_lock_settings_are_checked_as_java_checks_them(s3_options):
    st = Storage(f"s3://{BUCKET}/lock-settings", s3_options)
    with pytest.raises(LockProviderError, match="10x"):
        StorageLock(st, _lock_config(**{"hoodie.write.lock.storage.validity.timeout.secs": "100",
                                         "hoodie.write.lock.storage.renew.interval.secs": "30"}))
    lock = StorageLock(st, _lock_config(**{"hoodie.write.lock.storage.validity.timeout.secs": "20",
                                           "hoodie.write.lock.storage.heartbeat.poll.secs": "2"}))
    assert (lock.validity_s, lock.renew_s) == (20, 2)


def test_a_spark_hosted_run_takes_the_storage_lock_on_s3_itself(s3_options, monkeypatch):
    """Hudi's class in a Spark driver needs hudi-aws (not in the Spark bundle) for its S3 client:
    on S3 the provider is ours, whether or not a driver JVM is registered."""
    from airflow_hudi_etc.hudi.concurrency import jvm_lock, providers

    def no_jvm(*a, **k):
        raise AssertionError("the driver's JVM was asked for the storage-based lock on S3")

    monkeypatch.setattr(jvm_lock, "provider", no_jvm)
    lock = providers.provider_for(Storage(f"s3://{BUCKET}/lock-hosted", s3_options), _lock_config())
    assert isinstance(lock, StorageLock)
