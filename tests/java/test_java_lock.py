"""Hudi's table lock shared with real Java writers in optimistic-concurrency mode.

Java writers configured as a streaming table's are (``hoodie.write.concurrency.mode=
optimistic_concurrency_control``, a lock provider, the LAZY failed-writes policy) and our commands
configured with the same keys (``configure --hoodie``) take one lock: while one of ours holds it a
Java commit waits and, past its retries, fails without committing; Java's writes and ours then go
on, and Java, hudi-rs and our reader agree with the model. The loss the lock closes: a Java commit
between schedule's last re-check and the plan becoming visible (its log, in the slice the plan
closes, dropped when Java executes the plan) happens without the lock and not with it (with it,
Java's commit completes after the plan is visible).
"""

from __future__ import annotations

import threading

import pytest

from airflow_hudi_etc.hudi.concurrency import write_config as wc
from airflow_hudi_etc.hudi.concurrency.fs_lock import FileSystemLock
from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.timeline.active import Timeline
from java_checks import assert_all, judges, new_table, row
from java_hudi import JavaHudiError

pytestmark = pytest.mark.java

FS = "org.apache.hudi.client.transaction.lock.FileSystemBasedLockProvider"
#: the writers' settings (Java's keys), recorded on the table for our commands
OCC = {"hoodie.write.concurrency.mode": "optimistic_concurrency_control", "hoodie.write.lock.provider": FS,
       "hoodie.cleaner.policy.failed.writes": "LAZY"}
#: Java's, with short lock retries so that a refused Java commit is quick
JAVA_OCC = {**OCC, "hoodie.write.lock.client.num_retries": "2", "hoodie.write.lock.client.wait_time_ms_between_retry": "300",
            "hoodie.write.lock.num_retries": "2", "hoodie.write.lock.wait_time_ms_between_retry": "300",
            "hoodie.write.lock.wait_time_ms": "300"}
#: Java's, waiting long enough (about 30 s) for a command of ours to release the lock
JAVA_OCC_PATIENT = {**JAVA_OCC, "hoodie.write.lock.client.num_retries": "60",
                    "hoodie.write.lock.num_retries": "60"}
LINES = [("0.14", 6), ("0.15", 6), ("1.0", 8), ("1.1", 9), ("1.2", 9)]
DAY2 = "2026-01-02T00:00:00Z"


def _completed(path) -> frozenset:
    return Timeline.load(Storage(str(path))).completed_write_times


ZK = "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"
#: CI: the file-system lock on 0.15 and 1.2, ZooKeeper on 1.1; -m slow: every line, ZooKeeper on 0.14 too
CI_CASES = {("fs", "0.15"), ("fs", "1.2"), ("zk", "1.1")}
CASES = [pytest.param(k, line, v, marks=() if (k, line) in CI_CASES else pytest.mark.slow, id=f"{k}-{line}-v{v}")
         for k, line, v in [("fs", line, v) for line, v in LINES] + [("zk", "0.14", 6), ("zk", "1.1", 9)]]


def _provider(kind, zookeeper_url=None, table="t"):
    if kind == "fs":
        return {}
    # Java 0.14 requires both timeouts; its url is the whole connect string (host:port)
    return {"hoodie.write.lock.provider": ZK, "hoodie.write.lock.zookeeper.url": zookeeper_url,
            "hoodie.write.lock.zookeeper.base_path": "/hudi-locks", "hoodie.write.lock.zookeeper.lock_key": table,
            "hoodie.write.lock.zookeeper.session_timeout_ms": "60000",
            "hoodie.write.lock.zookeeper.connection_timeout_ms": "15000"}


def _our_lock(kind, path, conf):
    from airflow_hudi_etc.hudi.concurrency.providers import provider_for

    return provider_for(Storage(str(path)), wc.WriteConfig(conf))


@pytest.mark.parametrize("kind,line,version", CASES)
def test_java_commits_wait_for_our_lock_and_ours_for_javas(java_hudi, request, tmp_path, kind, line, version):
    """FileSystemBasedLockProvider on every line, ZookeeperBasedLockProvider (a real server) on 0.14
    and 1.1: while one of our commands holds the lock, Java's write fails past its retries and
    commits nothing; then Java and ours write in turn, and every reader agrees."""
    java = java_hudi(line)
    zk = request.getfixturevalue("zookeeper") if kind == "zk" else None
    ours_conf = {**OCC, **_provider(kind, zk)}
    java_conf = {**JAVA_OCC, **_provider(kind, zk)}
    t = new_table(tmp_path, version)
    t.configure(hoodie=ours_conf)
    p = t.path
    t.write([row("k1", 1, 10, 1), row("k2", 1, 10, 2)])
    java.upsert(p, [row("k1", 2, 11, 11)], options=java_conf)
    assert not (tmp_path / "t" / ".hoodie" / "lock").exists()  # Java released its lock (fs)
    ours = _our_lock(kind, p, ours_conf)
    assert ours.try_lock(0)  # one of our commands holds the table lock
    before = _completed(p)
    try:
        with pytest.raises(JavaHudiError) as e:
            java.upsert(p, [row("k2", 2, 11, 22)], options=java_conf)
        assert e.value.mentions("lock") or e.value.mentions("Lock"), e.value
        assert _completed(p) == before  # Java committed nothing while we held it
    finally:
        ours.close()
    java.upsert(p, [row("k2", 3, 12, 23)], options=java_conf)
    t.write([row("k3", 1, 12, 3)])  # ours, next to Java's refused write (LAZY: left to its heartbeat)
    assert_all(java, p, {"k1": 11, "k2": 23, "k3": 3})


def _schedule_with_java_commit_in_the_window(java, t, *, locked: bool):
    """Our schedule; at its last re-check a Java upsert of k1 (whose file group the plan
    compacts). Unlocked: Java commits right there. Locked: Java's write runs in a thread; the
    hook returns once Java's log is written (its commit then waits for our lock)."""
    box = {}

    def java_write():
        try:
            box["instant"] = java.upsert(t.path, [row("k1", 9, 11, 99)], options=JAVA_OCC_PATIENT if locked else None)
        except JavaHudiError as e:
            box["error"] = e

    def at_recheck(_point):
        if box:
            return
        box["started"] = True
        if not locked:
            java_write()
            return
        th = box["thread"] = threading.Thread(target=java_write)
        before = set(Timeline.load(Storage(t.path)).instants)
        th.start()
        box["requested"] = _wait_for_new_write(t, before, th)

    with crash.hooked("schedule.after-recheck", at_recheck):
        res = t.compaction.schedule("2h", compaction_time=DAY2)
    if "thread" in box:
        box["thread"].join(300)
    return res, box


def _wait_for_new_write(t, before, th):
    """The instant of the write Java starts (its requested file: Java 0.14/0.15 create it before
    taking the lock), or None once its thread ended without one. Waits on Java's progress, bounded
    by the thread's own request timeout."""
    import time

    while th.is_alive():
        new = [i.timestamp for i in Timeline.load(Storage(t.path)).pending_writes if i not in before]
        if new:
            return new[0]
        time.sleep(0.05)
    return None


def three_batches(t):
    """Base k0..k3 (10h); a log k1 (11h); a log k2 (23h): the 2h plan at DAY2 compacts the first log."""
    t.write([row(f"k{i}", 1, 10, i) for i in range(4)])
    t.write([row("k1", 2, 11, 11)])
    t.write([row("k2", 2, 23, 22)])


def test_without_the_lock_a_java_commit_at_schedules_last_recheck_is_lost(java_hudi, tmp_path):
    """The hazard (0.15, v6): Java commits k1=99 into slice B between our re-check and the plan;
    Java then executes the plan, which does not list that log: k1=99 is gone from every read."""
    java = java_hudi("0.15")
    t = new_table(tmp_path, 6, java_compaction="on")
    three_batches(t)
    res, box = _schedule_with_java_commit_in_the_window(java, t, locked=False)
    assert box.get("instant") and res.instant, (res, box)
    assert java.run_compaction(t.path, res.instant) == [res.instant]
    got = judges(java, t.path)
    assert got["java"]["k1"] == 11  # Java's committed 99 dropped: the loss


def test_with_the_lock_a_java_write_racing_schedule_commits_after_the_plan(java_hudi, tmp_path):
    """The same race under the shared lock (0.15, v6; our execute, java-compaction off): Java's
    write starts (its requested instant) after our re-check, while schedule holds the lock; its
    commit cannot complete before the plan is visible (the completed file is newer than the plan).
    What remains is Java's: it reads its timeline before it takes the lock (``initTable`` before
    ``preWrite``), so its log may still land in the slice the plan closes — as next to Java's own
    scheduler on 0.x. Our execute finds such a log (a stale plan, refused with nothing written);
    unschedule and schedule again list it: k1=99 stays for Java, hudi-rs and our reader."""
    import os

    java = java_hudi("0.15")
    t = new_table(tmp_path, 6)
    three_batches(t)
    t.configure(hoodie=OCC)
    res, box = _schedule_with_java_commit_in_the_window(java, t, locked=True)
    assert "error" not in box, box["error"]
    assert res.instant and box["requested"] and box["instant"] == box["requested"] > res.instant, (res, box)
    hoodie = tmp_path / "t" / ".hoodie"
    plan_at = os.stat(hoodie / f"{res.instant}.compaction.requested").st_mtime_ns
    assert os.stat(hoodie / f"{box['instant']}.deltacommit").st_mtime_ns > plan_at  # the lock's guarantee
    from airflow_hudi_etc.hudi.errors import InvalidTimelineError

    try:
        done = t.compaction.execute(res.instant)
        how = f"executed ({done.status}): Java's log went to slice C"
    except InvalidTimelineError as e:
        assert "stale" in str(e), e
        t.compaction.unschedule(res.instant)
        again = t.compaction.schedule("2h", compaction_time=DAY2)
        t.compaction.execute(again.instant)
        how = "stale plan refused, scheduled again"
    print(how)
    assert_all(java, t.path, {"k0": 0, "k1": 99, "k2": 22, "k3": 3})


def _java_write_while_ours_is_in_flight(java, t, options):
    """Our write of k3=33; just before it commits, a Java insert of k9=99 into another partition
    (no file group in common with ours) with ``options``."""
    box = {}

    def java_write(_point):
        if not box:
            box["started"] = True
            try:
                box["instant"] = java.upsert(t.path, [row("k9", 5, 12, 99, city="la")], options=options)
            except JavaHudiError as e:
                box["error"] = e

    out = {}
    with crash.hooked("write.before-commit", java_write):
        try:
            out["ours"] = t.write([row("k3", 5, 12, 33)])
        except Exception as e:  # noqa: BLE001 - what happened is what the test states
            out["error"] = e
    return out, box


def test_without_lazy_a_java_write_rolls_back_ours_in_flight_and_ours_writes_again(java_hudi, tmp_path):
    """The hazard (0.15, v6, Java's defaults: the eager failed-writes policy): Java's write, in
    another partition, rolls back our write in progress as a failed one (its rollback instant
    names ours). Before our commit path checked for it, ours then completed its instant anyway:
    Java read k3=33, hudi-rs and our reader k3=3. Now the commit finds its instant rolled back and
    the batch is written again under a new instant; every reader agrees. (Without the lock a Java
    rollback between that check and our commit is still possible: hence LAZY + the lock.)"""
    java = java_hudi("0.15")
    t = new_table(tmp_path, 6)
    t.write([row("k1", 1, 10, 1), row("k2", 1, 10, 2), row("k3", 1, 10, 3)])
    out, box = _java_write_while_ours_is_in_flight(java, t, None)
    assert box.get("instant") and "ours" in out, (out, box)
    rollbacks = [i for i in Timeline.load(Storage(t.path)).instants if i.action.value == "rollback"]
    assert rollbacks and out["ours"].instant > box["instant"]  # Java rolled ours back; ours came again
    assert_all(java, t.path, {"k1": 1, "k2": 2, "k3": 33, "k9": 99})


def test_with_the_lock_and_lazy_policy_java_leaves_our_write_in_flight_alone(java_hudi, tmp_path):
    """Under OCC + LAZY (the writers' settings recorded for ours): Java's write leaves our
    in-flight write alone (its heartbeat is alive), both commit, every reader sees both."""
    java = java_hudi("0.15")
    t = new_table(tmp_path, 6)
    t.configure(hoodie=OCC)
    t.write([row("k1", 1, 10, 1), row("k2", 1, 10, 2), row("k3", 1, 10, 3)])
    out, box = _java_write_while_ours_is_in_flight(java, t, JAVA_OCC_PATIENT)
    assert "error" not in out and "error" not in box, (out, box)
    assert_all(java, t.path, {"k1": 1, "k2": 2, "k3": 33, "k9": 99})


@pytest.mark.parametrize("line", [pytest.param("1.1", marks=pytest.mark.slow), "1.2"])
def test_java_rolls_back_a_killed_write_of_ours_on_v9(java_hudi, tmp_path, line):
    """A write of ours killed after its log file (v9): Java's next write rolls it back from our
    markers. Hudi 1.2 refuses an APPEND marker on versions 8/9 ("V8+ should not have APPEND
    markers"): our writes mark logs with CREATE markers, as Java 1.x does, and Java writes on."""
    import os
    import subprocess
    import sys

    import pyarrow as pa
    import pyarrow.parquet as pq

    java = java_hudi(line)
    t = new_table(tmp_path, 9)
    t.write([row("k1", 1, 10, 1), row("k2", 1, 10, 2)])
    batch = tmp_path / "b.parquet"
    pq.write_table(pa.Table.from_pylist([row("k1", 2, 11, 11)]), batch)
    env = dict(os.environ, HUDI_ETC_CRASH_AT="write.after-file@1")
    r = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", "write", "--path", t.path, "--input", str(batch)],
                       env=env, capture_output=True, text=True)
    assert r.returncode == crash.EXIT_CODE, r.stderr
    marks = [f for _, _, fs in os.walk(tmp_path / "t" / ".hoodie" / ".temp") for f in fs]
    assert marks and all(f.endswith(".marker.CREATE") for f in marks), marks
    java.upsert(t.path, [row("k2", 3, 12, 22)])  # Java's eager rollback of ours, then its write
    assert_all(java, t.path, {"k1": 1, "k2": 22})


def test_java_014_run_compaction_takes_the_writers_lock_only_from_its_own_options(java_hudi, tmp_path):
    """Hudi 0.14 (0.15 the same, measured once by hand): ``CALL run_compaction`` on a table with a
    metadata table sets, when its own ``options`` argument names no lock provider, the file-system
    lock on ``<table>/.hoodie/.aux`` over the session's settings (its RunCompactionProcedure): a
    lock no writer shares. While one of ours holds the writers' lock, Java's compaction completes
    anyway (the race behind loop seed 137: it and a write of ours in the metadata table's commit at
    once, its entry rolled back); with the lock settings in ``options`` it waits for ours. Java's
    refused attempt then deletes our lock file (its provider's close(), on every line), which our
    commands notice before they commit (tests/concurrency/test_table_lock.py)."""
    java = java_hudi("0.14")
    t = new_table(tmp_path, 6, java_compaction="on")
    t.configure(hoodie=OCC)
    p, lock_file = t.path, tmp_path / "t" / ".hoodie" / "lock"
    opts = {**JAVA_OCC, "hoodie.metadata.enable": "true"}
    java.upsert(p, [row("k0", 1, 10, 1), row("k1", 1, 10, 1)], options=opts)
    for n in (2, 3):
        java.upsert(p, [row("k1", n, 11, n)], options=opts)
    assert (tmp_path / "t" / ".hoodie" / "metadata").is_dir()

    def plan():
        java.run_compaction(p, mode="schedule", options=opts)
        return [i.timestamp for i in Timeline.load(Storage(p)).pending_compactions][0]

    first = plan()
    ours = _our_lock("fs", p, OCC)
    assert ours.try_lock(0)
    try:
        assert java.run_compaction(p, first, options=opts, lock_in_procedure=False) == [first]
        assert ours.still_held()  # ours untouched: Java took another lock
    finally:
        ours.close()
    java.upsert(p, [row("k1", 4, 12, 4)], options=opts)
    second = plan()
    ours = _our_lock("fs", p, OCC)
    assert ours.try_lock(0)
    try:
        with pytest.raises(JavaHudiError) as e:
            java.run_compaction(p, second, options=opts)
        assert e.value.mentions("HoodieLockException") and str(lock_file) in str(e.value), e.value
        assert second not in _completed(p)
        assert not lock_file.exists() and not ours.still_held()  # Java's close() deleted ours
    finally:
        ours.close()
