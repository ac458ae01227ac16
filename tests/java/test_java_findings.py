"""The findings of shared/java-coexistence-2.md §1 (and issue 22 item 5) with real Java Hudi.

Each test states what issue 22 asks for — no record lost, duplicated or resurrected, Java's own
jobs not failing, our status and validate keeping track — and is marked
``xfail(strict=True)`` while today's code fails it: the fix of a finding turns its test into a
pass (strict: an unexpected pass fails the run until the mark goes). Tables are small, Java's
processes are the session's (one per Hudi line), nothing sleeps.

What real Java runs here differently, or not at all, with the reason:
* finding 2 (Java appends into our last copy) runs below with real Java 0.14 over ``viewfs``
  (one of the append schemes of Java's ``StorageSchemes``), mounted on the test's folder through
  Hadoop's raw local file system (``JavaHudi.mount_viewfs``); no HDFS is needed. The premise is
  measured (``test_f2_premise_…``: one log grows over viewfs, a new version over ``file://``).
* finding 4 (``unschedule`` while a Java task already chose our copy's name) needs a Java task
  paused between ``HoodieAppendHandle.init`` and its first flush; the harness has no hook inside
  a Java write task (only its input DataFrame). Not attempted; it stays with the simulator.
* finding 5 (incrementally synced view): a plain test below, passing — batch writes with
  incremental sync and a reused embedded timeline server still put Java's log after our copies.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys

import pytest

from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.errors import HudiEtcError
from airflow_hudi_etc.api import Table
from java_checks import assert_all, judges, new_table, row, timeline_names, values
from java_hudi import JavaHudiError

pytestmark = pytest.mark.java

#: Java settings that archive after about every commit (java-coexistence-2.md §3, finding 1)
ARCHIVE_OFTEN = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2",
                 "hoodie.keep.max.commits": "3", "hoodie.clean.automatic": "true"}
DAY2 = "2026-01-02T00:00:00Z"  # with a 2h latency: threshold 2026-01-01T22:00Z


def cli(path, *args, crash_at=None, check=True):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.getcwd(), os.environ.get("PYTHONPATH", "")]))
    if crash_at:
        env[crash.ENV] = crash_at
    r = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", *args, "--path", str(path)],
                       env=env, capture_output=True, text=True, timeout=300)
    if crash_at:
        assert r.returncode == crash.EXIT_CODE, (r.returncode, r.stdout, r.stderr)
    elif check:
        assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    return r


def three_batches(t):
    """Base k0..k3 (10h); a log k1 (11h); a log k2 (23h): the 2h plan at DAY2 compacts the first log."""
    t.write([row(f"k{i}", 1, 10, i) for i in range(4)])
    t.write([row("k1", 2, 11, 11)])
    t.write([row("k2", 2, 23, 22)])


def crashed_schedule(t, point="schedule.after-staged"):
    """A schedule killed in its copy phase: by default while the copies' bytes are written
    (``schedule.after-staged``: every copy under its staged name, none renamed); with
    ``schedule.after-link@1`` among the renames (the residual window: one copy under its final
    name). Returns C (named by the dead schedule's intent)."""
    cli(t.path, "schedule", "--data-latency", "2h", "--compaction-time", DAY2, crash_at=point)
    files = os.listdir(f"{t.path}/city=sf")
    copies = [f for f in files if f.endswith("999999999-0-0")]
    staged = [f for f in files if f.startswith(".hudi-etc-tmp-")]
    if point == "schedule.after-staged":
        assert staged and not copies, files
    else:
        assert copies, files
    (intent,) = os.listdir(f"{t.path}/.hoodie/.aux/hudi-etc/intents")
    return intent.split(".")[0]  # C


def archived_past(path, instant) -> bool:
    first = min(n.split(".")[0].split("_")[0] for n in timeline_names(path))
    return first > instant


def java_inline_compacting_upsert(java, t, rows):
    """A Java upsert with inline compaction after it (Spark's default for MOR batch writers)."""
    return java.upsert(t.path, rows, inline_compaction=True, options={"hoodie.compact.inline.max.delta.commits": "1"})


def java_writes_elsewhere(java, t, n, start_ts=10, path=None, options=ARCHIVE_OFTEN):
    """``n`` Java upserts of a key in another partition (they touch no file group of city=sf);
    ``path``: the table's path for Java (default: its local path)."""
    for i in range(n):
        java.upsert(path or t.path, [row("n1", start_ts + i, 12, 100 + i, "nyc")], options=options)


def guard_holds_archival_until_a_command_of_ours(java, t, s, c, want) -> None:
    """After Java wrote on past a kill that left copies in slice C without a plan: the guard
    savepoint on S holds Java's archiver at S (the start is S at most after 6 > 3 commits) and every
    judge reads ``want``; one command of ours removes the copies, then the guard, and Java's
    archiver passes C with every judge still reading ``want``."""
    assert savepoints(t.path) == [f"{s}.savepoint", f"{s}.savepoint.inflight"]
    assert not archived_past(t.path, s), timeline_names(t.path)
    assert os.listdir(f"{t.path}/.hoodie/archived"), "Java archived nothing before S: the test shows nothing"
    assert_all(java, t.path, want)
    cli(t.path, "clean")  # a command of ours: the dead command's copies, then its guard, go
    assert not savepoints(t.path)
    java_writes_elsewhere(java, t, 6, start_ts=20)
    assert archived_past(t.path, c), timeline_names(t.path)
    assert_all(java, t.path, want)


#: a schedule killed while its copies' bytes are written (every copy staged, none renamed); and
#: among the renames, the residual window the guard savepoint closes (docs/concepts.md): one copy under its
#: final name, then Java first
KILLED_IN_COPY_PHASE = pytest.mark.parametrize("point", [
    "schedule.after-staged", pytest.param("schedule.after-link@1", id="renaming")])


def savepoints(path) -> list[str]:
    return sorted(n for n in timeline_names(path) if ".savepoint" in n)


@KILLED_IN_COPY_PHASE
def test_f1_crashed_schedule_then_java_archival(java_hudi, tmp_path, point):
    """Finding 1. Killed while the copies' bytes are written: they are staged under names no Java
    reader, cleaner or archiver takes for a log, no guard was made yet, so Java archives past C
    (no command of ours in between) and every reader reads the model. Killed among the renames:
    the guard savepoint on S (the newest write before C) stops Java's archiver at S, after
    keep.max.commits Java commits and more, so slice C stays uncommitted; one command of ours then
    removes the copy and the guard, and Java's archiver passes C with every judge reading the model."""
    java = java_hudi("0.14")
    t = new_table(tmp_path, 6)
    three_batches(t)
    s = max(n.split(".")[0] for n in timeline_names(t.path) if n.endswith(".deltacommit"))
    c = crashed_schedule(t, point)
    want = {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 3.0, "n1": 105.0}
    java_writes_elsewhere(java, t, 6)
    if point == "schedule.after-staged":
        assert not savepoints(t.path)
        assert archived_past(t.path, c), timeline_names(t.path)
        assert_all(java, t.path, want)
        return
    guard_holds_archival_until_a_command_of_ours(java, t, s, c, want)


def test_f1_unschedule_killed_between_the_plan_and_its_copies(java_hudi, tmp_path):
    """Finding 1 through unschedule: it withdraws the plan first (Java must not execute a plan whose
    copies are going), then deletes the copies; killed in between, slice C holds copies without a
    plan. The guard savepoint unschedule completes before withdrawing keeps Java 0.14's archiver at
    S (the newest write before C) through more than keep.max.commits Java commits, every judge reads
    the model; one command of ours removes the copies, then the guard, and archival passes C."""
    java = java_hudi("0.14")
    t = new_table(tmp_path, 6)
    three_batches(t)
    s = max(n.split(".")[0] for n in timeline_names(t.path) if n.endswith(".deltacommit"))
    c = t.compaction.schedule("2h", compaction_time=DAY2).instant
    cli(t.path, "unschedule", "--instant", c, crash_at="unschedule.after-requested-removed")
    assert [f for f in os.listdir(f"{t.path}/city=sf") if f.endswith("999999999-0-0")]
    want = {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 3.0, "n1": 105.0}
    java_writes_elsewhere(java, t, 6)
    guard_holds_archival_until_a_command_of_ours(java, t, s, c, want)


@pytest.mark.parametrize("line,version", [("0.14", 6), ("1.1", 9)])
def test_f3_java_inline_compaction_during_our_execute(java_hudi, tmp_path, line, version):
    """Finding 3: Java's inline compaction (Spark's default for MOR batch writers) rolls back an
    inflight compaction, ours included, with no heartbeat check, and reconciles against its markers;
    no protocol makes our execute safe next to it. On a table Java created (nothing recorded about
    Java's compaction) on which Java has not compacted yet, our execute is refused, typed, naming
    Java's settings and the configure command, and writes nothing (no inflight, no base file); Java's
    inline compaction then executes our plan and every judge reads the model."""
    from airflow_hudi_etc.compaction.java_compaction import java_execution
    from airflow_hudi_etc.hudi.errors import JavaCompactionError

    java = java_hudi(line)
    t = new_table(tmp_path, version, java_compaction=None)  # what a table Java created looks like
    three_batches(t)
    s = t.compaction.schedule("2h", compaction_time=DAY2)
    before = tree(t.path)
    with pytest.raises(JavaCompactionError, match="configure --java-compaction on") as e:
        t.compaction.execute(s.instant)
    assert e.value.code == "java_compaction" and "hoodie.compact.inline" in str(e.value), e.value
    assert tree(t.path) == before
    assert not [n for n in timeline_names(t.path) if n.startswith(s.instant) and ".inflight" in n]
    java_inline_compacting_upsert(java, t, [row("k3", 3, 12, 33)])
    assert java_execution(t.path, instant=s.instant)["executed_by"] == "java"
    bases = [f for f in os.listdir(f"{t.path}/city=sf") if f.endswith(f"_{s.instant}.parquet")]
    assert len(bases) == 1, bases
    assert_all(java, t.path, {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 33.0})


def tree(path) -> dict:
    return {os.path.relpath(os.path.join(d, f), path): os.path.getsize(os.path.join(d, f))
            for d, _dirs, files in os.walk(path) for f in files}


def test_f5_incrementally_synced_java_view(java_hudi, tmp_path):
    """Finding 5 does not reproduce with batch datasource writes: with incremental view sync and a
    reused embedded timeline server, Java 0.14's second write still lists slice C and writes its
    log after our copies (log.3_<token> after log.1/2_999999999-0-0); a streaming writer's
    long-lived view is not exercised here."""
    java = java_hudi("0.14")
    t = new_table(tmp_path, 6)
    three_batches(t)
    incr = {"hoodie.filesystem.view.incr.timeline.sync.enable": "true", "hoodie.embed.timeline.server": "true",
            "hoodie.embed.timeline.server.reuse.enabled": "true"}
    java.upsert(t.path, [row("k3", 3, 23, 33)], options=incr)  # Java's view is built (and kept); 23h: stays out
    s = t.compaction.schedule("2h", compaction_time=DAY2)
    assert s.instant
    java.upsert(t.path, [row("k2", 2, 23, 222)], options=incr)  # same ordering value as our copy's k2: later wins
    assert_all(java, t.path, {"k0": 0.0, "k1": 11.0, "k2": 222.0, "k3": 33.0}, hudi_rs=False)


@KILLED_IN_COPY_PHASE
def test_f6_savepoint_restore_with_unpublished_slice(java_hudi, tmp_path, point):
    """Finding 6. Killed while the copies' bytes are written: Java's savepoint sees no slice C
    (staged names are no log files) and keeps slice B; restore reads the model. Killed among the
    renames: the user's savepoint lists slice C's copy instead of slice B, but the guard savepoint
    lists slice B, so Java's cleaner keeps it and the restore reads the model."""
    java = java_hudi("0.14")
    t = new_table(tmp_path, 6)
    three_batches(t)
    c = crashed_schedule(t, point)
    w = java.upsert(t.path, [row("n1", 1, 12, 100, "nyc")])
    java.savepoint(t.path, w)
    java.upsert(t.path, [row("k3", 3, 12, 33)])
    java.run_compaction(t.path)
    java.upsert(t.path, [row("k0", 3, 12, 0.5)])
    java.run_clean(t.path, retain_commits=1)
    assert not archived_past(t.path, c), "archival would make this finding 1"
    java.restore(t.path, w)
    assert_all(java, t.path, {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 3.0, "n1": 100.0})


@pytest.mark.parametrize("line", ["1.0", "1.1"])
def test_f7_1x_writer_on_v6_rolls_back_our_exact_split(java_hudi, tmp_path, line):
    """Finding 7, fixed: the split log carries no CREATE marker, so a Hudi 1.x writer on a v6 table
    rolls our crashed exact-split execution back and compacts; nothing lost."""
    java = java_hudi(line)
    t = new_table(tmp_path, 6)
    t.write([row(f"k{i}", 1, 10, i) for i in range(4)])
    t.write([row("k1", 2, 11, 11), row("k2", 2, 23, 22)])  # one log across the threshold: split
    s = t.compaction.schedule("2h", compaction_time=DAY2, exact_split=True)
    cli(t.path, "execute", "--instant", s.instant, crash_at="execute.after-split-log")
    java_inline_compacting_upsert(java, t, [row("k3", 3, 12, 33)])
    assert_all(java, t.path, {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 33.0})


def _compacted_then_archived(java, tmp_path):
    t = new_table(tmp_path, 6)
    three_batches(t)
    s = t.compaction.schedule("2h", compaction_time=DAY2)
    assert t.compaction.execute(s.instant).status == "completed"
    assert t.status().threshold == "2026-01-01T22:00:00.000Z"
    java_writes_elsewhere(java, t, 6)
    assert archived_past(t.path, s.instant), timeline_names(t.path)
    return t


def test_f8_status_and_validate_after_java_archives_our_compaction(java_hudi, tmp_path):
    """Finding 8, fixed: the threshold and validate read `.hoodie/archived/` after Java archives our
    compaction commit (v6)."""
    java = java_hudi("0.14")
    t = _compacted_then_archived(java, tmp_path)
    assert t.status().threshold == "2026-01-01T22:00:00.000Z"
    report = t.validate()
    assert report.ok, report.problems


def test_i5_reinserted_key_written_once(java_hudi, tmp_path):
    java = java_hudi("0.14")
    t = new_table(tmp_path, 6)
    t.write([row(f"k{i}", 1, 10, i) for i in range(4)])
    t.delete([row("k1", 2, 11, 0)])
    t.write([row("k2", 2, 23, 22)])
    s = t.compaction.schedule("2h", compaction_time=DAY2)
    java.upsert(t.path, [row("k1", 3, 12, 111)])  # re-inserted while the plan is pending
    assert java.run_compaction(t.path, s.instant) == [s.instant]
    t.write([row("k1", 4, 12, 1111)])
    got = judges(java, t.path)
    want = {"k0": 0.0, "k1": 1111.0, "k2": 22.0, "k3": 3.0}
    assert got == {"java": want, "hudi-rs": want, "ours": want}


def test_i5_hudi_itself_reads_the_key_twice_after_a_full_compaction(java_hudi, tmp_path):
    """What item 5's state is without us: the same history with a plan that compacts every log (a
    plan Hudi itself would make), the re-insert and the last upsert both written by Java 0.14.
    Java's bloom index confirms the key against base C only, where the compacted delete removed
    it, so its own upsert inserts the key into a new file group: every reader reads it twice.
    Issue 22 item 5 is Hudi's behaviour, not a consequence of compacting a prefix (measured on
    2026-11-26; should a Hudi line stop doing this, this test says so)."""
    java = java_hudi("0.14")
    t = new_table(tmp_path, 6)
    t.write([row(f"k{i}", 1, 10, i) for i in range(4)])
    t.delete([row("k1", 2, 11, 0)])
    s = t.compaction.schedule("1h", compaction_time=DAY2)  # the only log qualifies: nothing remains
    assert s.operations == 1
    java.upsert(t.path, [row("k1", 3, 12, 111)])  # re-inserted while the plan is pending
    assert java.run_compaction(t.path, s.instant) == [s.instant]
    java.upsert(t.path, [row("k1", 4, 12, 1111)])
    got = judges(java, t.path)
    for judge in ("java", "hudi-rs", "ours"):  # (the two rows come in either order)
        assert got[judge]["k1"][0] == "read twice" and sorted(got[judge]["k1"][1:]) == [111.0, 1111.0], got


def _temp_files(path) -> list[str]:
    return sorted(os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs if f.startswith(".hudi-etc-tmp-"))


def test_killed_execute_temp_file_goes_once_java_executed_and_archived_the_plan(java_hudi, tmp_path):
    """Issue 22 (c), found by the interleavings (v9 seed 2): our execute killed mid-base-file
    leaves ``.hudi-etc-tmp-i<C>-….tmp``; Java 0.14 then executes plan C and archives it, so no
    execute of ours runs for C again. The cleanup every command of ours runs (here: the next
    schedule) removes it, and validate finds nothing."""
    java = java_hudi("0.14")
    t = new_table(tmp_path, 6)
    three_batches(t)
    s = t.compaction.schedule("2h", compaction_time=DAY2)
    cli(t.path, "execute", "--instant", s.instant, crash_at="execute.mid-base-file")
    left = _temp_files(t.path)
    assert left and all(f"-i{s.instant}-" in f for f in left), left
    assert java.run_compaction(t.path, s.instant, options=ARCHIVE_OFTEN) == [s.instant]
    java_writes_elsewhere(java, t, 6)
    assert archived_past(t.path, s.instant), timeline_names(t.path)
    assert _temp_files(t.path) == left  # Java leaves our temp file alone
    t.compaction.schedule("2h", compaction_time="2026-01-03T00:00:00Z")
    assert _temp_files(t.path) == []
    report = t.validate()
    assert report.ok, report.problems
    assert_all(java, t.path, {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 3.0, "n1": 105.0}, hudi_rs=False)


def test_v8_java_rollback_of_our_killed_write_is_reported_as_rolled_back(java_hudi, tmp_path):
    """Issue 22 (b), measured with the real Java 1.0.2 (v8): the eager rollback of our write T,
    killed before its commit. Our writes mark a v8/v9 log with a CREATE marker, as Java 1.x marks
    its own (Hudi 1.2 refuses APPEND markers there): Java's rollback R deletes T's log, where with
    the APPEND marker of earlier releases it kept the log and added a rollback block named with T
    (both then classified ``rolled_back_files`` by validate, not ``orphan-log``). T's rows are read
    by no reader (Java, hudi-rs, ours); validate is clean; any file of T left is classified as
    rolled back by R."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    java = java_hudi("1.0")
    t = new_table(tmp_path, 8)
    t.write([row(f"k{i}", 1, 10, i) for i in range(4)])
    t.write([row("k1", 2, 11, 11)])
    batch = tmp_path / "b.parquet"
    pq.write_table(pa.Table.from_pylist([row("k2", 3, 12, 222), row("k0", 3, 12, 100)]), batch)
    cli(t.path, "write", "--input", str(batch), crash_at="write.before-commit")
    dead = next(n.split(".")[0] for n in timeline_names(t.path) if n.endswith(".deltacommit.inflight")
                and not any(m.startswith(n.split(".")[0] + "_") for m in timeline_names(t.path)))
    java.upsert(t.path, [row("k3", 4, 12, 33)])
    r = next(n.split("_")[0] for n in timeline_names(t.path) if n.endswith(".rollback") and "_" in n)
    of_t = sorted(f for f in os.listdir(f"{t.path}/city=sf") if f"_{dead}.log." in f and not f.endswith(".crc"))
    assert of_t == [], of_t  # the killed write's log deleted by Java's rollback (its CREATE marker)
    want = {"k0": 0.0, "k1": 11.0, "k2": 2.0, "k3": 33.0}
    assert_all(java, t.path, want)
    report = t.validate()
    assert report.ok, report.problems
    classified = {(os.path.basename(f["path"]), f["instant"], f["rollback"]) for f in report.details["rolled_back_files"]}
    assert classified == {(f, dead, r) for f in of_t}


def test_guard_savepoint_reads_like_javas_own(java_hudi, tmp_path):
    """The guard savepoint next to one real Java 0.14 writes (``CALL create_savepoint``): the same
    writer schema (record and field names, types), file names without folders keyed by partition
    path, ``savepointedAt`` in the same unit; Java lists both (``show_savepoints``), and its
    cleaner and archiver run with ours on the timeline."""
    import io

    import fastavro

    java = java_hudi("0.14")
    t = new_table(tmp_path, 6)
    three_batches(t)
    s = max(n.split(".")[0] for n in timeline_names(t.path) if n.endswith(".deltacommit"))
    cli(t.path, "schedule", "--data-latency", "2h", "--compaction-time", DAY2, crash_at="schedule.after-guard")
    w = java.upsert(t.path, [row("n1", 1, 12, 100, "nyc")])
    java.savepoint(t.path, w)

    def read(ts):
        rdr = fastavro.reader(io.BytesIO(open(f"{t.path}/.hoodie/{ts}.savepoint", "rb").read()))
        return rdr.writer_schema, next(iter(rdr))

    def shape(schema):  # names and types, docs and defaults aside
        if isinstance(schema, dict):
            return {k: shape(v) for k, v in schema.items() if k in ("type", "name", "fields", "items", "values")}
        if isinstance(schema, list):
            return [shape(x) for x in schema]
        return schema

    (ours_schema, ours), (java_schema, theirs) = read(s), read(w)
    assert shape(ours_schema) == shape(java_schema), (ours_schema, java_schema)
    assert abs(ours["savepointedAt"] - theirs["savepointedAt"]) < 3_600_000, (ours["savepointedAt"], theirs["savepointedAt"])
    assert ours["version"] == theirs["version"]
    assert set(ours["partitionMetadata"]) <= set(theirs["partitionMetadata"])
    for part, pm in ours["partitionMetadata"].items():
        assert pm["partitionPath"] == part == theirs["partitionMetadata"][part]["partitionPath"]
        assert all("/" not in n for n in pm["savepointDataFile"] + theirs["partitionMetadata"][part]["savepointDataFile"])
    listed = java.sql("CALL show_savepoints(table => '{table}')", path=t.path)
    assert {s, w} <= {str(v) for r in listed for v in r.values()}, listed
    java.run_clean(t.path, retain_commits=1)
    java_writes_elsewhere(java, t, 6)
    assert not archived_past(t.path, s), timeline_names(t.path)


# ---------------------------------------------------------------- finding 2: storage Java appends on
# ``viewfs`` is one of the schemes of Java's ``StorageSchemes`` with append support: the harness
# mounts ``viewfs://<name>/<name>`` on a test's folder (its target is Hadoop's raw local file
# system, which appends; java_hudi_server.py). Java writes the table over viewfs, this project
# works on the local path of the same files (a local scheme: schedule makes its byte copies).

def mounted(java, tmp_path) -> str:
    """The viewfs path of ``tmp_path`` (a mount name new to the session's JVM)."""
    prefix = java.mount_viewfs(tmp_path, "m" + hashlib.sha1(str(tmp_path).encode()).hexdigest()[:10])
    assert java.viewfs_file_systems == ["org.apache.hadoop.fs.RawLocalFileSystem"], java.viewfs_file_systems
    return prefix


def files(path) -> dict:
    """``{relative path: sha1}`` of every file under ``path``."""
    out = {}
    for d, _, fs in os.walk(path):
        for f in fs:
            with open(os.path.join(d, f), "rb") as fh:
                out[os.path.relpath(os.path.join(d, f), path)] = hashlib.sha1(fh.read()).hexdigest()
    return out


def logs(t) -> list[str]:
    return sorted(f for f in os.listdir(f"{t.path}/city=sf") if ".log." in f and not f.endswith(".crc"))


def test_f2_premise_java_appends_over_viewfs_and_rolls_over_on_file(java_hudi, tmp_path):
    """The premise, measured: two Java 0.14 upserts of one file group's key over viewfs grow one
    log file; the same over ``file://`` make a second log version."""
    java = java_hudi("0.14")
    v = mounted(java, tmp_path)
    grown = {}
    for where, path in (("viewfs", f"{v}/a"), ("file", str(tmp_path / "b"))):
        t = new_table(tmp_path, 6, name=os.path.basename(path))
        t.write([row("k0", 1, 10, 0)])
        sizes = []
        for ts in (2, 3):
            java.upsert(path, [row("k0", ts, 11, ts)])
            sizes.append({f: os.path.getsize(f"{t.path}/city=sf/{f}") for f in logs(t)})
        grown[where] = sizes
        assert values(java.snapshot(path)) == {"k0": 3.0}
    (a1,), (a2,) = (s.items() for s in grown["viewfs"])
    assert a1[0] == a2[0] and a2[1] > a1[1], grown  # one log, appended to
    assert len(grown["file"][0]) == 1 and len(grown["file"][1]) == 2, grown  # a new version


def test_f2_java_appends_into_our_last_copy_which_nothing_of_ours_deletes(java_hudi, tmp_path):
    """Finding 2 with real Java 0.14: our plan (local path) byte-copies the log it leaves out into
    slice C; Java's upsert over viewfs appends its committed block into that copy. ``execute`` and
    ``unschedule`` (which once deleted the copy with Java's record) refuse with a typed error
    naming the repair and change nothing; validate says ``foreign-copy``; every reader reads the
    model; the repair (Java executes the plan) keeps Java's record."""
    java = java_hudi("0.14")
    vt = mounted(java, tmp_path) + "/t"
    t = new_table(tmp_path, 6)
    three_batches(t)
    s = t.compaction.schedule("2h", compaction_time=DAY2)
    (copy,) = [f for f in logs(t) if f.endswith("_999999999-0-0")]
    assert f"_{s.instant}.log." in copy
    ours = (tmp_path / "t/city=sf" / copy).read_bytes()
    java.upsert(vt, [row("k3", 3, 12, 33)])
    assert [f for f in logs(t) if f"_{s.instant}.log." in f] == [copy]  # no log of Java's own: appended
    grown = (tmp_path / "t/city=sf" / copy).read_bytes()
    assert len(grown) > len(ours) and grown.startswith(ours)
    model = {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 33.0}
    assert_all(java, t.path, model, hudi_rs=False)
    assert values(java.snapshot(vt)) == model
    before = files(t.path)
    for refused in (lambda: t.compaction.execute(s.instant), lambda: t.compaction.unschedule(s.instant)):
        with pytest.raises(HudiEtcError, match="let Java execute the plan") as e:
            refused()
        assert copy in str(e.value) and e.value.code == "invalid_timeline"
        assert files(t.path) == before  # nothing changed
    problems = t.validate().problems
    assert [p["kind"] for p in problems] == ["foreign-copy"], problems
    assert copy in problems[0]["detail"] and "let Java execute the plan" in problems[0]["detail"]
    assert java.run_compaction(vt, s.instant) == [s.instant]  # the repair
    assert_all(java, t.path, model)
    assert values(java.snapshot(vt)) == model
    report = t.validate()
    assert report.ok, report.problems


def test_f2_killed_schedules_copy_is_never_appended_to_while_its_guard_stands(java_hudi, tmp_path):
    """Finding 2 after a schedule killed among its renames (one copy under its final name, the
    plan never published): Java writing over viewfs, archiving after about every commit (no Java
    clean), stops archiving at the guard savepoint S < C, so slice C stays uncommitted for Java
    and its upsert appends into slice B, never into our orphan copy. The orphan cleanup
    (``unschedule --instant C``, the repair validate names) then removes the copy and the guard,
    and every judge reads the model. (Before the guard, archival passed C, Java appended into the
    orphan copy and slice B's keys were read by no reader: finding 1's residual window.)"""
    java = java_hudi("0.14")
    vt = mounted(java, tmp_path) + "/t"
    t = new_table(tmp_path, 6)
    three_batches(t)
    c = crashed_schedule(t, "schedule.after-link@1")
    (copy,) = [f for f in logs(t) if f.endswith("_999999999-0-0")]
    ours = (tmp_path / "t/city=sf" / copy).read_bytes()
    # (Java writing one table over both paths would leave stale .crc files of its file://; ours make
    # none.)
    java_writes_elsewhere(java, t, 6, path=vt, options={**ARCHIVE_OFTEN, "hoodie.clean.automatic": "false"})
    assert not archived_past(t.path, c), timeline_names(t.path)
    java.upsert(vt, [row("k3", 3, 12, 33)])
    assert (tmp_path / "t/city=sf" / copy).read_bytes() == ours  # Java appended elsewhere (slice B)
    want = {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 33.0, "n1": 105.0}
    assert values(java.snapshot(vt)) == want
    assert_all(java, t.path, want)
    cli(t.path, "unschedule", "--instant", c)
    assert copy not in logs(t)
    assert not [n for n in timeline_names(t.path) if n.endswith(".savepoint")], timeline_names(t.path)
    assert t.validate().ok, t.validate().problems
    assert_all(java, t.path, want)


@pytest.mark.parametrize("line,version", [("1.0", 8), ("1.1", 9)])
def test_java_finishes_our_crashed_rollback(java_hudi, tmp_path, line, version):
    """Found by the slow real-Java interleavings (v9 seed 102 with Java 1.1, 2026-11-26): our
    rollback of a crashed execution, itself killed after deleting a file, leaves its rollback plan
    pending; Java's compaction first finishes a pending rollback from its plan. Our plan left
    ``logBlocksToBeDeleted`` null on v8/v9 and Java 1.1 failed on it (``NullPointerException:
    Cannot invoke "java.util.Map.size()" because "m" is null``); Java writes an empty map there."""
    java = java_hudi(line)
    t = new_table(tmp_path, version)
    three_batches(t)
    s = t.compaction.schedule("2h", compaction_time=DAY2)
    cli(t.path, "execute", "--instant", s.instant, crash_at="execute.after-base-file")
    cli(t.path, "rollback", "--instant", s.instant, crash_at="rollback.after-file-removed@1")
    assert any(n.endswith(".rollback.requested") for n in timeline_names(t.path))
    java.run_compaction(t.path)
    assert not [n for n in timeline_names(t.path) if n.endswith((".rollback.requested", ".rollback.inflight"))
                and not any(m.startswith(n.split(".")[0] + "_") for m in timeline_names(t.path))]
    assert_all(java, t.path, {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 3.0})


@pytest.mark.parametrize("line,version", [("0.14", 6), ("1.1", 9)])
def test_exact_split_keeps_what_a_java_merged_base_holds(java_hudi, tmp_path, line, version):
    """Found by the slow interleavings (0.15 seed 153, 0.14 seed 154): a Java upsert that brings an
    insert to a small file group without logs merges its updates into a new base file there
    (prevCommit the slice before, numUpdateWrites > 0). That base holds k1's version after the
    threshold in place of the one before it; an exact split that took it for a write's inserts
    left k1 out of the new base, and RO lost k1. It must stay: RO may hold a newer version than
    the threshold, never none."""
    java = java_hudi(line)
    t = new_table(tmp_path, version)
    t.write([row("k0", 1, 10, 0), row("k1", 1, 10, 1)])  # a new file group: the base holds inserts
    java.upsert(t.path, [row("k1", 2, 23, 11), row("k2", 1, 10, 2)])  # an update after 22h, an insert
    names = sorted(os.listdir(os.path.join(t.path, "city=sf")))
    assert [n for n in names if n.endswith(".parquet")].__len__() == 2 and not [n for n in names if ".log." in n], names
    t.write([row("k0", 2, 11, 100)])  # a log before the threshold: the slice is compacted
    s = t.compaction.schedule("2h", compaction_time=DAY2, exact_split=True)
    assert s.instant
    assert t.compaction.execute(s.instant).status == "completed"
    assert_all(java, t.path, {"k0": 100.0, "k1": 11.0, "k2": 2.0})
    # RO: k1's only version left is after the threshold; it stays in the base
    assert_all(java, t.path, {"k0": 100.0, "k1": 11.0, "k2": 2.0}, ro=True)


def test_java_10_reads_no_reinserted_key_on_event_time_ordering(java_hudi, tmp_path):
    """Java 1.0.2's own limit, found by the slow interleavings (v8 seeds 117, 125, 127, 129, 131
    failed on it after our re-insert): on an event-time-ordering table of version 8, a key deleted
    and then re-inserted — here by Java's own writes alone — makes Java's snapshot read fail
    (``ClassCastException``: the delete's Integer 0 against the record's Long ordering value).
    The interleavings make no such re-insert on that line; this test fails when Java reads it."""
    from java_hudi import JavaHudiError

    java = java_hudi("1.0")
    t = Table.create(str(tmp_path / "t"), table_name="t", record_key="k", precombine_field="ts",
                     event_time_field="event_time", partition_field="city", table_version=8,
                     payload="event-time-ordering")
    java.insert(t.path, [row("k0", 1, 10, 0), row("k1", 1, 10, 1)])
    java.delete(t.path, [row("k0", 2, 10, 0)])
    java.upsert(t.path, [row("k0", 3, 11, 30)])
    with pytest.raises(JavaHudiError) as e:
        java.snapshot(t.path)
    assert e.value.mentions("ClassCastException")


@pytest.mark.parametrize("plan", ["ours", pytest.param("javas", marks=pytest.mark.slow)])
def test_java_10_compaction_needs_the_ordering_field(java_hudi, tmp_path, plan):
    """Java 1.0.2's own, found by the 1.0 loop writer with the metadata table (slow seeds 101 and
    105, Java executing our plans): on an event-time-ordering table, ``CALL run_compaction``
    without ``hoodie.datasource.write.precombine.field`` in its session merges a file group's logs
    in commit order — a later log's lower ordering value wins over an earlier log's higher one,
    though Java's snapshot read before it (and our reader, and the model) keep the higher. The
    procedure does not take the field from hoodie.properties. It is the same for a plan Java
    schedules itself (``javas``), so not our plan's doing; with the field set (what a compaction
    job configured like the table's writers has, and what the harness now gives every procedure)
    the higher value stays. Hudi 1.1 keeps it either way (measured once, both plans)."""
    java = java_hudi("1.0")
    got = {}
    for given in (False, True):
        t = Table.create(str(tmp_path / f"t{int(given)}"), table_name="t", record_key="k", precombine_field="ts",
                         event_time_field="event_time", partition_field="city", table_version=8,
                         payload="event-time-ordering", java_compaction="on")
        t.write([row("k1", 1, 1, 10), row("k2", 1, 1, 20)])
        java.upsert(t.path, [row("k1", 5, 1, 50)])  # an earlier log, the higher ordering value
        t.write([row("k1", 4, 1, 47)])  # a later log, a lower one
        assert values(java.snapshot(t.path)) == {"k1": 50.0, "k2": 20.0}
        if plan == "ours":
            s = t.compaction.schedule("0s", compaction_time=DAY2)
            assert s.instant
            java.run_compaction(t.path, s.instant, ordering_from_table=given)
        else:
            assert java.run_compaction(t.path, ordering_from_table=given)
        got[given] = values(java.snapshot(t.path))["k1"]
    assert got == {False: 47.0, True: 50.0}


@pytest.mark.parametrize("line,version", [("1.0", 8), ("1.1", 9)])
def test_java_1x_compacts_past_its_killed_write_then_refuses_it_until_our_rollback(java_hudi, tmp_path, line, version):
    """Java's own, found by the slow interleavings (v8 seed 190 with Java 1.0): Java 1.x schedules
    and runs a compaction past a failed write (0.14 refuses to), and then its eager rollback of
    that write refuses (``Found commits after time``: a commit newer than the failed write, and no
    heartbeat file, as writers of the eager policy keep none): every Java write fails, with Java's
    writes alone. validate names it ``stuck-write``; our ``rollback --instant`` removes the
    failed write (it has no such rule) and Java writes again, every reader agreeing."""
    java = java_hudi(line)
    t = new_table(tmp_path, version)
    java.upsert(t.path, [row(f"k{i}", 1, 10, i) for i in range(4)])
    java.upsert(t.path, [row("k1", 2, 11, 11)])
    killed = java.killed_write(t.path, [row("k2", 3, 12, 22)], after="marker")
    assert java.run_compaction(t.path)
    with pytest.raises(JavaHudiError) as e:
        java.upsert(t.path, [row("k3", 2, 11, 33)])
    assert e.value.mentions("Found commits after time")
    assert_all(java, t.path, {"k0": 0.0, "k1": 11.0, "k2": 2.0, "k3": 3.0})
    stuck = [p for p in t.validate().problems if p["kind"] == "stuck-write"]
    assert [killed in p["path"] for p in stuck] == [True], t.validate().problems
    assert f"hudi-etc rollback --instant {killed}" in stuck[0]["detail"]
    assert "rolled back" in cli(t.path, "rollback", "--instant", killed).stdout
    assert not [p for p in t.validate().problems if p["kind"] == "stuck-write"]
    java.upsert(t.path, [row("k3", 2, 11, 33)])
    assert_all(java, t.path, {"k0": 0.0, "k1": 11.0, "k2": 2.0, "k3": 33.0})
    assert_all(java, t.path, {"k0": 0.0, "k1": 11.0, "k2": 2.0, "k3": 3.0}, ro=True)
    report = t.validate()
    assert report.ok, report.problems
