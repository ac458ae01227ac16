"""Hudi's table lock as our commands take it, without a Java process: the file-system provider's
lock file (Java's name, place and content), Java's retry rule, the recorded write settings
(``configure --hoodie``), and the one commit path — a commit of ours waits for a lock another
writer holds and gives up with a typed ``conflict`` leaving the table as it was; a write whose
file group another writer committed meanwhile is withdrawn and written again (Hudi's OCC rule).
The same against real Java: tests/java/test_java_lock.py."""

from __future__ import annotations

import json
import os
import threading
import time

import pyarrow as pa
import pytest

from airflow_hudi_etc.api import Table
from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.hudi.concurrency import write_config as wc
from airflow_hudi_etc.hudi.concurrency.fs_lock import FileSystemLock
from airflow_hudi_etc.hudi.concurrency.locks import LockProviderError, LockTimeoutError, held
from airflow_hudi_etc.hudi.concurrency.transaction import table_write_config
from airflow_hudi_etc.hudi.config.etc_settings import SETTINGS_PATH
from airflow_hudi_etc.hudi.errors import HudiEtcError, InvalidInputError
from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.timeline.active import Timeline
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch

FS = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
OCC_FS = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control", "hoodie.write.lock.provider": FS,
          "hoodie.write.lock.client.num_retries": "2", "hoodie.write.lock.client.wait_time_ms_between_retry": "10"}


def _table(tmp_path, **conf):
    p = str(tmp_path / "t")
    init_table(p, table_name="t", record_key="id", precombine_field="ts", event_time_field="et", java_compaction="off")
    if conf:
        Table(p).configure(hoodie=conf)
    return p


def _rows(*ids, ts=1, v="a"):
    return pa.table({"id": [str(i) for i in ids], "ts": [ts] * len(ids), "et": [1_700_000_000_000] * len(ids),
                     "v": [v] * len(ids)})


def test_lock_file_is_javas_name_place_and_content(tmp_path):
    """``<table>/.hoodie/lock`` by default, ``<dir>/lock`` with hoodie.write.lock.filesystem.path;
    Jackson's pretty-printed LockInfo; a second holder is refused until the first releases."""
    p = _table(tmp_path)
    st = Storage(p)
    a, b = (FileSystemLock(st, wc.WriteConfig({wc.K_LOCK_PROVIDER: FS})) for _ in range(2))
    assert a.try_lock(0) and not b.try_lock(0)
    raw = (tmp_path / "t" / ".hoodie" / "lock").read_text()
    assert raw.startswith('{\n  "lockCreateTime" : "') and '"lockThreadName" : "hudi-etc {' in raw
    assert set(json.loads(raw)) == {"lockCreateTime", "lockThreadName", "lockStacksInfo"}
    assert f'"pid":{os.getpid()}' in b.owner()
    a.unlock()
    assert not (tmp_path / "t" / ".hoodie" / "lock").exists() and b.try_lock(0)
    b.unlock()
    elsewhere = tmp_path / "locks"
    c = FileSystemLock(st, wc.WriteConfig({wc.K_LOCK_PROVIDER: FS, "hoodie.write.lock.filesystem.path": str(elsewhere)}))
    assert c.try_lock(0) and (elsewhere / "lock").is_file()
    c.unlock()


def test_expired_lock_is_taken_and_a_taken_over_lock_is_not_deleted(tmp_path):
    p = _table(tmp_path)
    st = Storage(p)
    lock = tmp_path / "t" / ".hoodie" / "lock"
    lock.write_text("{}")  # a writer that died holding it
    cfg = wc.WriteConfig({wc.K_LOCK_PROVIDER: FS, "hoodie.write.lock.filesystem.expire": "1"})
    a = FileSystemLock(st, cfg)
    assert not a.try_lock(0)  # fresh: not expired
    old = time.time() - 120
    os.utime(lock, (old, old))
    assert a.try_lock(0)
    lock.write_text('{"lockThreadName": "someone else"}')  # ours expired and another took it
    a.unlock()
    assert lock.read_text() == '{"lockThreadName": "someone else"}'
    never = FileSystemLock(st, wc.WriteConfig({wc.K_LOCK_PROVIDER: FS}))  # expire 0: never expires
    os.utime(lock, (0, 0))
    assert not never.try_lock(0)


def test_retries_as_javas_lock_manager_then_a_typed_conflict(tmp_path):
    p = _table(tmp_path)
    (tmp_path / "t" / ".hoodie" / "lock").write_text("{}")
    slept = []
    cfg = wc.WriteConfig({wc.K_LOCK_PROVIDER: FS, "hoodie.write.lock.client.num_retries": "3",
                          "hoodie.write.lock.client.wait_time_ms_between_retry": "250"})
    with pytest.raises(LockTimeoutError, match="not acquired after 4 tries") as e:
        with held(FileSystemLock(Storage(p), cfg), cfg, what="test", sleep=slept.append):
            pass
    assert e.value.code == "conflict" and slept == [0.25, 0.25, 0.25]


def test_storage_without_exclusive_create_is_refused():
    st = Storage("memory://lockless/t")
    with pytest.raises(LockProviderError, match="creates a file exclusively"):
        FileSystemLock(st, wc.WriteConfig({wc.K_LOCK_PROVIDER: FS}))


def test_configure_hoodie_records_checks_and_removes(tmp_path, capsys):
    p = _table(tmp_path)
    settings = tmp_path / "t" / SETTINGS_PATH
    before = settings.read_bytes()
    for bad, err in ((["hoodie.table.name=x"], InvalidInputError), (["nokey"], InvalidInputError),
                     (["hoodie.write.lock.provider=com.example.MyLock"], LockProviderError),
                     (["hoodie.write.concurrency.mode=sometimes"], InvalidInputError),
                     (["hoodie.write.concurrency.mode=optimistic_concurrency_control"], LockProviderError)):
        rc = cli_main(["configure", "--path", p, *sum((["--hoodie", x] for x in bad), [])])
        out = json.loads(capsys.readouterr().out)
        assert rc == 2 and out["error"]["type"] == err.__name__, (bad, out)
        assert settings.read_bytes() == before  # nothing written
    rc = cli_main(["configure", "--path", p, "--hoodie", f"hoodie.write.lock.provider={FS}",
                   "--hoodie", "hoodie.write.concurrency.mode=optimistic_concurrency_control"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["status"] == "configured"
    doc = json.loads(settings.read_text())
    assert doc["hoodie"] == {"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
                             "hoodie.write.lock.provider": FS}
    assert doc["settings"]["hoodie.etc.java.compaction"] == "off"  # the other settings kept
    cfg = table_write_config(Storage(p))
    assert cfg.multi_writer and cfg.lazy_failed_writes and cfg.lock_provider == FS
    assert Table(p).configure(hoodie={"hoodie.write.lock.provider": FS})["status"] == "unchanged"
    # the run's settings win: $HUDI_ETC_HOODIE_CONF
    os.environ[wc.ENV_CONF] = json.dumps({"hoodie.write.concurrency.mode": "single_writer"})
    try:
        assert not table_write_config(Storage(p)).multi_writer
    finally:
        del os.environ[wc.ENV_CONF]
    Table(p).configure(hoodie={"hoodie.write.concurrency.mode": "", "hoodie.write.lock.provider": ""})
    assert "hoodie" not in json.loads(settings.read_text())


def test_a_commit_waits_for_the_lock_and_gives_up_leaving_the_table_as_it_was(tmp_path):
    p = _table(tmp_path, **OCC_FS)
    write_batch(p, _rows(1, 2))
    before = Timeline.load(Storage(p)).completed_write_times
    (tmp_path / "t" / ".hoodie" / "lock").write_text('{"lockThreadName" : "a Java writer"}')
    with pytest.raises(HudiEtcError) as e:
        write_batch(p, _rows(1, ts=2, v="b"))
    assert e.value.code == "conflict" and "a Java writer" in str(e.value)
    tl = Timeline.load(Storage(p))
    assert tl.completed_write_times == before and not tl.pending_writes  # withdrawn, nothing left
    assert sorted(Table(p).read().column("v").to_pylist()) == ["a", "a"]
    (tmp_path / "t" / ".hoodie" / "lock").unlink()
    write_batch(p, _rows(1, ts=2, v="b"))
    assert sorted(Table(p).read().column("v").to_pylist()) == ["a", "b"]
    assert not (tmp_path / "t" / ".hoodie" / "lock").exists()  # released after the commit


@pytest.mark.parametrize("same_group", [True, False])
def test_occ_withdraws_a_write_whose_file_group_another_writer_committed(tmp_path, same_group):
    """Two writers of ours under OCC: the second commits (to the same file group, or to a new
    one) while the first is about to commit. Same group: Hudi's rule finds the conflict, the first
    is withdrawn and written again after the second (its instant is newer, its value wins). Other
    group: no conflict, the first commits its original instant."""
    p = _table(tmp_path, **OCC_FS)
    write_batch(p, _rows(1))
    inner = {}

    def other_writer(_point):
        if not inner:
            inner["busy"] = True  # (its own commit passes this point too)
            inner["r"] = write_batch(p, _rows(1 if same_group else "new", ts=3, v="other"))

    with crash.hooked("write.before-commit", other_writer):
        first = write_batch(p, _rows(1, ts=4, v="first"))
    tl = Timeline.load(Storage(p))
    assert inner["r"].instant in tl.completed_write_times and first.instant in tl.completed_write_times
    got = dict(zip(Table(p).read().column("id").to_pylist(), Table(p).read().column("v").to_pylist()))
    if same_group:
        assert first.instant > inner["r"].instant  # written again after the other's commit
        assert got == {"1": "first"}
    else:
        assert first.instant < inner["r"].instant
        assert got == {"1": "first", "new": "other"}


def test_a_lock_left_by_a_killed_process_of_ours_is_taken_at_once(tmp_path):
    """A command of ours killed while it held the lock (a crash point inside the commit path)
    leaves the lock file; its owner is gone, so the next command takes it (Java's stays)."""
    import subprocess
    import sys

    p = _table(tmp_path)
    code = ("import os, sys\n"
            "from airflow_hudi_etc.hudi.concurrency import write_config as wc\n"
            "from airflow_hudi_etc.hudi.concurrency.fs_lock import FileSystemLock\n"
            "from airflow_hudi_etc.hudi.storage import Storage\n"
            f"l = FileSystemLock(Storage({p!r}), wc.WriteConfig({{wc.K_LOCK_PROVIDER: {FS!r}}}))\n"
            "assert l.try_lock(0)\nos._exit(9)\n")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 9
    lock = tmp_path / "t" / ".hoodie" / "lock"
    assert lock.exists()
    ours = FileSystemLock(Storage(p), wc.WriteConfig({wc.K_LOCK_PROVIDER: FS}))
    assert ours.try_lock(0)
    ours.unlock()
    lock.write_bytes(b"")  # Java 0.15+'s: no owner, never taken
    assert not ours.try_lock(0) and "no owner recorded" in ours.owner()


def test_a_transaction_inside_one_runs_under_its_lock_and_other_threads_still_wait(tmp_path):
    """A step of a command that holds the lock (unschedule's orphan removal, which may tell the
    metadata table of a clean) opens its own transaction: it runs under the held lock instead of
    waiting for itself; another thread still waits for the lock, and after the outer block the
    lock file is gone."""
    import threading

    from airflow_hudi_etc.hudi.concurrency.transaction import transaction

    p = str(tmp_path / "t")
    init_table(p, table_name="t", record_key="id", precombine_field="ts", event_time_field="et")
    Table(p).configure(hoodie={wc.K_CONCURRENCY_MODE: "optimistic_concurrency_control", wc.K_LOCK_PROVIDER: wc.FILE_SYSTEM,
                               "hoodie.write.lock.client.num_retries": "1",
                               "hoodie.write.lock.client.wait_time_ms_between_retry": "100",
                               "hoodie.write.lock.wait_time_ms": "100"})
    storage = Storage(p)
    other: list = []

    def contender():
        try:
            with transaction(storage, what="another process"):
                other.append("took it")
        except HudiEtcError as e:
            other.append(e.code)

    with transaction(storage, what="outer"):
        with transaction(storage, what="inner"):  # no wait: the same thread holds it
            assert os.path.exists(os.path.join(p, ".hoodie", "lock"))
        t = threading.Thread(target=contender)
        t.start()
        t.join(30)
        assert os.path.exists(os.path.join(p, ".hoodie", "lock"))  # the inner block did not release it
    assert other == ["conflict"]
    assert not os.path.exists(os.path.join(p, ".hoodie", "lock"))


def test_a_lock_deleted_under_its_holder_completes_nothing(tmp_path, monkeypatch):
    """A Java writer releasing Hudi's file-system lock deletes the lock file twice (its
    LockManager.unlock(): the provider's unlock(), then close(), which deletes whatever lock file is
    there): a lock taken by ours in between is deleted under it and the next writer takes it too.
    Our write notices before the metadata table and the completed instant (here: the lock file
    replaced by another writer's while our write's commit ran), withdraws with a typed conflict,
    completes nothing and leaves the other writer's lock alone."""
    from airflow_hudi_etc.hudi.concurrency import jvm_metadata

    p = _table(tmp_path, **OCC_FS)
    write_batch(p, _rows(1))
    lock = tmp_path / "t" / ".hoodie" / "lock"
    theirs = b'{\n  "lockCreateTime" : "2026-01-01 00:00:00.000",\n  "lockThreadName" : "java",\n  "lockStacksInfo" : [ ]\n}'

    calls = []

    def stolen(storage, config, action, ts, data):
        calls.append(1)
        lock.unlink()  # the releasing Java writer's close()
        lock.write_bytes(theirs)  # and the next writer's lock
        return False

    monkeypatch.setattr(jvm_metadata, "apply", stolen)
    before = sorted(os.listdir(tmp_path / "t" / ".hoodie"))
    with pytest.raises(HudiEtcError) as e:
        write_batch(p, _rows(2))
    # withdrawn at once; its retries then wait for the other writer's lock, which stays held here
    assert e.value.code == "conflict", e.value
    assert calls == [1]
    assert lock.read_bytes() == theirs
    done = [f for f in sorted(os.listdir(tmp_path / "t" / ".hoodie")) if f not in before and f.endswith(".deltacommit")]
    assert done == []
    assert sorted(Table(p).read().column("id").to_pylist()) == ["1"]


def test_schedule_withdraws_a_plan_whose_pending_write_completed_before_it_was_visible(tmp_path):
    """Version 6 under OCC: schedule does not wait for a pending write (Hudi's rule refuses it at
    its commit once the plan is visible). One that completes between the planning and the plan's
    last re-check, on a file group the plan closes, has its log neither in the plan's prefix nor
    among slice C's copies (both are chosen among committed logs), and no rule stops it any more:
    Java executing that plan drops it (0.14 loop, seed 139: a Java write's value lost). The
    re-check withdraws the plan with a conflict naming the write; the next schedule plans with its
    log, and the executed plan keeps its value."""
    p = _table(tmp_path, **OCC_FS)
    write_batch(p, _rows(1, 2))
    write_batch(p, _rows(1, ts=2, v="log1"))
    gate, done = threading.Event(), {}

    def paused(_point):
        if not done:
            done["paused"] = True
            assert gate.wait(60)

    def pending_write():
        with crash.hooked("write.before-commit", paused):
            done["w"] = write_batch(p, _rows(1, ts=3, v="pending"))

    w = threading.Thread(target=pending_write)
    w.start()
    while not done.get("paused"):
        assert w.is_alive()
        time.sleep(0.01)
    pending = [i.timestamp for i in Timeline.load(Storage(p)).pending_writes]
    assert len(pending) == 1

    def complete_the_write(_point):  # planning's view is listed; the write completes, then it plans
        gate.set()
        w.join(60)

    try:
        with crash.hooked("schedule.instant-time", complete_the_write):
            first = Table(p).compaction.schedule("1h")
    finally:
        gate.set()
        w.join(60)
    assert done["w"].instant == pending[0] in Timeline.load(Storage(p)).completed_write_times
    assert first.instant is None and first.reason.startswith("conflict") and pending[0] in first.reason, first
    assert not Timeline.load(Storage(p)).pending_compactions  # nothing published
    again = Table(p).compaction.schedule("1h")
    assert again.instant and again.reason == "scheduled", again
    Table(p).compaction.execute(again.instant)
    got = dict(zip(Table(p).read().column("id").to_pylist(), Table(p).read().column("v").to_pylist()))
    assert got == {"1": "pending", "2": "a"}


def test_a_write_completed_after_the_listing_is_not_rolled_back_as_failed(tmp_path):
    """Found by the Java 1.2 loop writer (slow seed 102, two runs on two cores): a write of ours
    listed the timeline while a Java write was pending; the Java write completed, its heartbeat
    ending with it; our write's rollback of failed writes (the LAZY policy: pending, heartbeat not
    alive) then rolled the committed Java write back, on its listing, and the value was lost. The
    rollback is now judged under the table's lock on the timeline as it is then: the write is left
    alone. (Here the completed write is one of ours, its heartbeat removed as Java's writer removes
    its own at the end of a commit.)"""
    from airflow_hudi_etc.hudi.protocol import heartbeat
    from airflow_hudi_etc.hudi.write.writer import rollback_failed_writes

    p = _table(tmp_path, **OCC_FS, **{"hoodie.cleaner.policy.failed.writes": "LAZY"})
    write_batch(p, _rows(1, 2))
    seen = {}
    with crash.hooked("write.before-commit", lambda _p: seen.setdefault("listing", Timeline.load(Storage(p)))):
        w = write_batch(p, _rows(1, ts=2, v="committed"))
    stale = seen["listing"]
    assert [i.timestamp for i in stale.pending_writes] == [w.instant]
    heartbeat.delete(Storage(p), w.instant)
    assert not heartbeat.is_alive(Storage(p), w.instant)
    assert rollback_failed_writes(Storage(p), stale, lazy=True) == []
    assert w.instant in Timeline.load(Storage(p)).completed_write_times
    assert not [f for f in os.listdir(tmp_path / "t" / ".hoodie") if ".rollback" in f]
    t = Table(p).read()
    assert dict(zip(t.column("id").to_pylist(), t.column("v").to_pylist())) == {"1": "committed", "2": "a"}
