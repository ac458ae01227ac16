"""Overlapping real processes, Java's markers and heartbeats, and what a killed run leaves.

* Java's ``MarkerBasedRollbackStrategy`` (0.14.1), as a hand-written model below, applied to the
  markers of a write and of an execution killed just before their commits (real processes):
  it must remove exactly the files the dead run made (judged by listing the table before and
  after, not by our code).
* Two ``execute`` processes on one plan: the first paused just before its commit (its
  heartbeat alive), the second started meanwhile must refuse with ``conflict`` and touch
  nothing; the first then commits; hudi-rs reads every key once, as the model says. (Before:
  the second took the plan for a crashed run and rolled it back, deleting the first's base
  files; the first then committed slice C without them.)
* Two ``write`` processes: the first paused after its instant is inflight; the second gets
  ``conflict`` (single-writer rule) and writes nothing; the first commits intact. (Before: the
  second rolled the first back, both picked the same log name, and the first's cleanup deleted
  the second's committed log.)
* ``execute`` killed while streaming a base file, then executed again: its temp file is no
  Hudi file to any reader meanwhile, the retry removes it, hudi-rs reads each key once.
  (Before: the temp file was ``.hudi-etc-tmp-<hex>-<fileId>_<token>_<C>.parquet``, a second
  file group to hudi-rs once C completed.)
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.timeline.active import Timeline
from scenario import COMPACTION_TIME, LATENCY, PARTS, REPO, assert_snapshot, build, cli, clone, judge

# Java's log file pattern (FSUtils.LOG_FILE_PATTERN, 0.14): fileId, base commit, ext, version, token
JAVA_LOG_RE = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(_((\d+)-(\d+)-(\d+))(.cdc)?)?")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return build(tmp_path_factory.mktemp("overlap"), 5, exact=False, link_mode="copy")


def data_files(path: Path) -> set[str]:
    """Every file in the partitions (table-relative), partition metadata aside."""
    out = set()
    for part in PARTS:
        d = path / f"region={part}"
        if d.exists():
            out |= {f"region={part}/{n}" for n in os.listdir(d) if n != ".hoodie_partition_metadata"}
    return out


def java_marker_rollback(path: Path, instant: str) -> tuple[set[str], set[str]]:
    """What Java's marker-based rollback of ``instant`` does with its DIRECT markers:
    (files deleted, logs that get a rollback command block appended).

    Per marker ``.hoodie/.temp/<instant>/<rel>.marker.<TYPE>``: CREATE/MERGE delete ``<rel>``;
    APPEND reads file id (before the first ``_``) and base commit (third ``_`` part, up to the
    dot) of the phony base-file name ``<rel>``, takes the latest log of that file id and base
    commit in the marker's parent folder (by version, then write token) and deletes it when the
    base commit is the rolled-back instant, else appends a rollback block to it."""
    root = path / ".hoodie" / ".temp" / instant
    deletes: set[str] = set()
    appends: set[str] = set()
    for dirpath, _dirs, files in os.walk(root):
        for fname in files:
            rel = Path(dirpath, fname).relative_to(root).as_posix()
            if ".marker." not in fname:
                continue  # MARKERS.type etc.
            file_rel, kind = rel.rsplit(".marker.", 1)
            if kind in ("CREATE", "MERGE"):
                deletes.add(file_rel)
                continue
            assert kind == "APPEND", kind
            partition, name = os.path.split(file_rel)
            parts = name.split("_")
            file_id, base_commit = parts[0], parts[2].split(".")[0]
            logs = []
            for n in os.listdir(path / partition) if (path / partition).is_dir() else []:
                m = JAVA_LOG_RE.match(n)
                if m and m.group(1) == file_id and m.group(2) == base_commit and m.group(3) == "log":
                    logs.append(((int(m.group(4)), m.group(6) or ""), f"{partition}/{n}" if partition else n))
            if not logs:
                continue
            latest = max(logs)[1]
            (deletes if base_commit == instant else appends).add(latest)
    return deletes, appends


def pending(path, action):
    return [i.timestamp for i in Timeline.load(Storage(str(path))).instants if i.is_pending and i.action.value == action]


def test_java_rollback_of_a_killed_write_removes_exactly_its_files(base, tmp_path):
    sc = clone(base, tmp_path)
    before = data_files(sc.path)
    rows = sc.w1_rows()  # updates (new logs) and inserts (new base files)
    proc = cli("write", "--path", sc.path, "--input", sc.batch_file(rows, "w1"), crash="write.before-commit")
    assert proc.returncode == crash.EXIT_CODE, proc.stderr
    (dead,) = pending(sc.path, "deltacommit")
    new = data_files(sc.path) - before
    assert not any(n.rsplit("/", 1)[1].startswith(".hudi-etc-tmp") for n in new)
    new_bases = {n for n in new if n.endswith(".parquet")}
    new_logs = new - new_bases
    assert new_bases and new_logs
    deletes, appends = java_marker_rollback(sc.path, dead)
    # Java deletes the new base files and rolls back exactly the new logs (the latest of their slices)
    assert deletes == new_bases
    assert appends == new_logs
    # and our own rollback works from the same markers
    out = json.loads(cli("rollback", "--path", sc.path, "--instant", dead).stdout)
    assert out["files_removed"] == len(new)
    assert data_files(sc.path) == before
    assert not (sc.path / ".hoodie" / ".temp" / dead).exists()


def test_java_rollback_of_a_killed_execution_removes_exactly_its_files(base, tmp_path):
    sc = clone(base, tmp_path)
    rows = sc.w1_rows()
    cli("write", "--path", sc.path, "--input", sc.batch_file(rows, "w1"))
    sc.applied(rows, before_plan=True)
    (plan,) = [json.loads(cli(*sc.schedule_args()).stdout)["instant"]]
    before = data_files(sc.path)
    proc = cli("execute", "--path", sc.path, crash="execute.before-commit")
    assert proc.returncode == crash.EXIT_CODE, proc.stderr
    new = data_files(sc.path) - before
    assert any(n.endswith(f"_{plan}.parquet") for n in new)  # base files (and copies, when the plan re-exposes logs)
    deletes, appends = java_marker_rollback(sc.path, plan)
    assert deletes == new and not appends


def _paused(args, point):
    """A CLI process paused at ``point`` (HUDI_ETC_PAUSE_AT): returns once it is there."""
    env = dict(os.environ, **{crash.PAUSE_ENV: point})
    env.pop(crash.ENV, None)
    p = subprocess.Popen([sys.executable, "-m", "airflow_hudi_etc.cli", *map(str, args)], cwd=REPO, env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for line in p.stderr:  # blocks until the process says it is paused (or ends: then it failed)
        if line.startswith(crash.PAUSED):
            return p
    raise AssertionError(f"{args[0]} never reached {point}: rc={p.wait()} {p.stdout.read()}")


def _resume(p) -> tuple[int, str]:
    out, _err = p.communicate("\n", timeout=300)
    return p.returncode, out


def _scheduled(base, tmp_path):
    """A private copy of the scenario with a batch written and a plan scheduled (real processes)."""
    sc = clone(base, tmp_path)
    rows = sc.w1_rows()
    cli("write", "--path", sc.path, "--input", sc.batch_file(rows, "w1"))
    sc.applied(rows, before_plan=True)
    instant = json.loads(cli(*sc.schedule_args()).stdout)["instant"]
    sc.plan_made()
    return sc, instant


def test_two_executions_of_one_plan_one_commits(base, tmp_path):
    sc, instant = _scheduled(base, tmp_path)
    first = _paused(["execute", "--path", sc.path], "execute.before-commit")  # every file written
    try:
        files = data_files(sc.path)
        # the second execution (an Airflow retry while the first still runs), which would die
        # right after it rolled the plan back and made it inflight again
        second = cli("execute", "--path", sc.path, crash="execute.after-inflight")
        assert second.returncode == 2, (second.returncode, second.stdout, second.stderr)
        err = json.loads(second.stdout)["error"]
        assert err["code"] == "conflict" and "running" in err["message"], err
        assert data_files(sc.path) == files  # nothing of the first's work was touched
    finally:
        rc, out = _resume(first)
    assert rc == 0 and json.loads(out)["status"] == "completed", out
    assert json.loads(cli("execute", "--path", sc.path, "--instant", instant).stdout)["status"] == "already completed"
    judge(sc)  # hudi-rs == model (every key once), RO guarantee, validate, no duplicate after updating all


def test_two_writers_the_second_gets_a_conflict(base, tmp_path):
    sc = clone(base, tmp_path)
    a_rows = sc.w2_rows("writer A", ts=2000)
    b_rows = sc.w2_rows("writer B", ts=3000)  # the same keys: the same file groups, the same next log names
    first = _paused(["write", "--path", sc.path, "--input", sc.batch_file(a_rows, "a")], "write.after-inflight")
    try:
        before = data_files(sc.path)
        second = cli("write", "--path", sc.path, "--input", sc.batch_file(b_rows, "b"), check=False)
        assert second.returncode == 2, (second.returncode, second.stdout, second.stderr)
        assert json.loads(second.stdout)["error"]["code"] == "conflict"
        assert data_files(sc.path) == before
    finally:
        rc, out = _resume(first)
    assert rc == 0, out
    assert json.loads(out)["rolled_back"] == []
    sc.applied(a_rows, before_plan=True)
    assert_snapshot(sc)  # hudi-rs: writer A's data intact
    res = json.loads(cli("write", "--path", sc.path, "--input", sc.batch_file(b_rows, "b")).stdout)  # B's retry
    assert res["rolled_back"] == []
    sc.applied(b_rows, before_plan=True)
    assert_snapshot(sc)


def test_killed_execute_then_retry(base, tmp_path):
    sc, instant = _scheduled(base, tmp_path)
    proc = cli("execute", "--path", sc.path, crash="execute.mid-base-file")
    assert proc.returncode == crash.EXIT_CODE, proc.stderr
    temps = [n for n in data_files(sc.path) if n.rsplit("/", 1)[1].startswith(".hudi-etc-tmp")]
    assert temps  # the half-written base file
    for n in temps:  # named like no Hudi file (hudi-rs refuses a *.parquet it cannot parse)
        name = n.rsplit("/", 1)[1]
        assert not name.endswith(".parquet") and not JAVA_LOG_RE.match(name), name
    assert_snapshot(sc)  # readers: the old slices
    out = json.loads(cli("execute", "--path", sc.path).stdout)  # the retry, as docs/operations.md says
    assert out["status"] == "completed" and out["instant"] == instant
    assert not [n for n in data_files(sc.path) if n.rsplit("/", 1)[1].startswith(".hudi-etc-tmp")]
    judge(sc)
