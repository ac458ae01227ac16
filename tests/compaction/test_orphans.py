"""Copies in a slice C that is on no timeline, next to Java's archiver (java-coexistence-2 §1,
findings 1, 4, 6 and 8), on table versions 6, 8 and 9, judged by hudi-rs and a model (a dict:
ordering values grow with every batch, so the last write wins).

"Archival" is tests/support/archival.py: the instants Java's archiver would move, moved into the
archive as Java lays it out.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
import sys

import pytest

from airflow_hudi_etc.compaction.clean import clean
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.intents import INTENT_DIR
from airflow_hudi_etc.compaction.lifecycle import unschedule
from airflow_hudi_etc.compaction.metrics import table_metrics
from airflow_hudi_etc.compaction.plans import remove_orphan_links
from airflow_hudi_etc.compaction.results import Outcome
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.validate import validate
from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.errors import InvalidTimelineError
from airflow_hudi_etc.hudi.protocol.plan import LINK_TOKEN
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.timeline.active import Timeline
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from archival import archive_v6, archive_v8
from batches import DATA_COLS, batch
from java_sim import JavaHudi
from oracle import hudi_rs_read
from paths import REPO

T0 = 1_767_225_600_000  # 2026-01-01T00:00Z
H = 3_600_000
VERSIONS = pytest.mark.parametrize("version", [6, 8, 9])


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()


class World:
    def __init__(self, tmp_path, version: int):
        self.path = tmp_path / "t"
        self.version = version
        init_table(str(self.path), table_name="t", record_key="key", precombine_field="ts",
                   event_time_field="event_time", partition_field="region", table_version=version)
        self.java = JavaHudi(self.path, 7)
        self.model: dict[str, dict] = {}
        self.ts = 0

    def rows(self, keys, event_time, value=None):
        out = []
        for k in keys:
            self.ts += 1
            out.append({"key": k, "ts": self.ts, "event_time": event_time,
                        "value": float(self.ts if value is None else value), "note": "x", "region": "ab"[int(k[1:]) % 2]})
        return out

    def ours(self, rows):
        write_batch(str(self.path), batch(rows))
        self.model.update({r["key"]: {c: r[c] for c in DATA_COLS} for r in rows})

    def theirs(self, rows):
        self.java.write(batch(rows))
        self.model.update({r["key"]: {c: r[c] for c in DATA_COLS} for r in rows})

    def history(self):
        """A base, an early update (the compacted prefix), a late one (a remaining log)."""
        keys = [f"k{i}" for i in range(8)]
        self.ours(self.rows(keys, T0 - 5 * H))
        self.ours(self.rows(keys[:4], T0 - 2 * H))
        self.ours(self.rows(keys[2:6], T0 + 5 * H))

    def snapshot(self) -> dict:
        t = hudi_rs_read(self.path)
        rows = t.to_pylist() if t.num_rows else []
        out = {r["key"]: {c: r[c] for c in DATA_COLS} for r in rows}
        assert len(out) == len(rows), "a key is duplicated"
        return out

    def ours_snapshot(self) -> dict:
        """Our reader, which takes a slice as committed like Java's ``isFileSliceCommitted``
        (its instant completed, or before the active timeline's start: hudi-rs 0.5 does not)."""
        rows = HudiTable.load(str(self.path)).read().to_pylist()
        return {r["key"]: {c: r[c] for c in DATA_COLS} for r in rows}

    def copies(self) -> list[str]:
        return sorted(str(p.relative_to(self.path)) for p in self.path.rglob(f"*{LINK_TOKEN}"))

    def archive_all(self) -> list[str]:
        """What Java's archiver does with small keep.min/max.commits: everything but the newest
        instant leaves the active timeline."""
        tl = Timeline.load(Storage(str(self.path)))
        last = tl.instants[-1].timestamp
        if self.version == 6:
            return archive_v6(self.path, before=last)
        return archive_v8(self.path, upto=max(i.timestamp for i in tl.instants if i.timestamp < last))

    def crashed_schedule(self, point="schedule.before-plan") -> None:
        r = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", "schedule", "--path", str(self.path),
                            "--data-latency", "2h", "--compaction-time", iso(T0 + 2 * H)],
                           env=dict(os.environ, **{crash.ENV: point}), cwd=REPO, capture_output=True, timeout=120)
        assert r.returncode == crash.EXIT_CODE, r.stderr[-2000:]


def _intents(path) -> list[str]:
    d = path / INTENT_DIR
    return sorted(os.listdir(d)) if d.exists() else []


def _problems(path) -> list[tuple[str, str]]:
    return [(p["kind"], p["path"]) for p in validate(str(path))["problems"]]


# ------------------------------------------------------------------ finding 1
@VERSIONS
def test_crashed_schedule_then_archival_loses_no_key(tmp_path, version):
    """A schedule killed after its copies, before its plan; Java writes on and archives past C.
    The next command of ours removes the copies by their intent, whatever the timeline's start,
    and every reader sees the model again; validate named them with the repairing command."""
    w = World(tmp_path, version)
    w.history()
    assert w.snapshot() == w.model
    w.crashed_schedule()
    copies = w.copies()
    assert copies
    for i in range(3):
        w.theirs(w.rows([f"k{10 + i}"], T0 + 6 * H))
    w.archive_all()
    probs = validate(str(w.path))["problems"]
    orphans = [p for p in probs if p["kind"] == "orphan-link"]
    assert sorted(p["path"] for p in orphans) == copies
    assert "unschedule --instant" in orphans[0]["detail"] and "savepoint" in orphans[0]["detail"]
    assert not [p for p in probs if p["kind"] in ("orphan-base", "orphan-log")]  # archived instants are completed
    res = schedule(str(w.path), data_latency="2h", compaction_time=iso(T0 + 2 * H))
    assert w.copies() == sorted(set(w.copies()) - set(copies))  # the orphans are gone
    assert not _intents(w.path)
    assert w.snapshot() == w.model
    if res.instant:
        execute(str(w.path))
        assert w.snapshot() == w.model
    assert validate(str(w.path))["ok"]


def _staged(path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob(".hudi-etc-tmp-*.tmp"))


@VERSIONS
def test_schedule_killed_while_copying_leaves_nothing_a_reader_sees(tmp_path, version):
    """Killed while the copies' bytes are written (schedule.after-staged: all staged, none
    renamed), then Java writes on and archives past C with no command of ours in between: the
    staged files carry no name a reader, cleaner or archiver of Hudi's takes for a data file, so
    every reader still sees the model; validate names them, the next command removes them."""
    w = World(tmp_path, version)
    w.history()
    w.crashed_schedule("schedule.after-staged")
    staged = _staged(w.path)
    assert staged and w.copies() == []
    for i in range(3):
        w.theirs(w.rows([f"k{10 + i}"], T0 + 6 * H))
    w.archive_all()
    assert w.snapshot() == w.model == w.ours_snapshot()  # no command of ours has run since the kill
    probs = validate(str(w.path))["problems"]
    assert sorted(p["path"] for p in probs if p["kind"] == "temp-file") == staged
    assert all("unschedule --instant" in p["detail"] for p in probs)
    assert not [p for p in probs if p["kind"] != "temp-file"]
    schedule(str(w.path), data_latency="2h", compaction_time=iso(T0 + 2 * H))
    assert not set(_staged(w.path)) & set(staged) and not _intents(w.path)
    assert w.snapshot() == w.model


def _guard_holds_archival_until_a_command_of_ours(w, version, last_write, c) -> None:
    """After a kill that left copies in slice C without a plan: v6 holds the guard savepoint on the
    last write before C, Java archiving on stops there and every reader reads the model; then a
    command of ours removes the copies and the guard, and archival passes C with the model still
    read. v8/v9 make no guard; archival passes C at once and the copies are in no slice."""
    guards = sorted(f for f in os.listdir(w.path / ".hoodie") if ".savepoint" in f)
    assert guards == ([f"{last_write}.savepoint", f"{last_write}.savepoint.inflight"] if version == 6 else []), guards
    for i in range(3):
        w.theirs(w.rows([f"k{10 + i}"], T0 + 6 * H))
    w.archive_all()
    first = Timeline.load(Storage(str(w.path))).first_write_time
    assert first <= last_write if version == 6 else first > c
    assert w.snapshot() == w.model == w.ours_snapshot()
    clean(str(w.path))  # a command of ours: the dead command's copies, then its guard, go
    assert not w.copies() and not _intents(w.path)
    assert not [f for f in os.listdir(w.path / ".hoodie") if ".savepoint" in f]
    for i in range(3):
        w.theirs(w.rows([f"k{30 + i}"], T0 + 6 * H))
    w.archive_all()
    assert Timeline.load(Storage(str(w.path))).first_write_time > c
    assert w.snapshot() == w.model == w.ours_snapshot()


@VERSIONS
def test_schedule_killed_while_renaming_then_archival_before_any_command(tmp_path, version):
    """The window staging leaves: a kill among the renames. v6: the guard savepoint schedule made
    on S < C before its first rename stops Java's archiver at S, so slice C stays uncommitted; the
    next command of ours removes the copy, then the guard, and archival passes C. On v8/v9 readers
    put a log whose name-instant C never completed in no slice (ours; hudi-rs), so the copy stays
    invisible here and no guard is made; Java 1.x slices it into the old slice after archival
    (java-coexistence-2 §2.2: its bytes read twice, same records), not run with real Java."""
    w = World(tmp_path, version)
    w.history()
    last_write = Timeline.load(Storage(str(w.path))).completed_writes[-1].timestamp
    w.crashed_schedule("schedule.after-link@1")
    assert len(w.copies()) == 1
    (intent,) = _intents(w.path)
    c = intent.split(".")[0]
    _guard_holds_archival_until_a_command_of_ours(w, version, last_write, c)


@VERSIONS
def test_unschedule_killed_between_the_plan_and_its_copies_then_archival(tmp_path, version):
    """unschedule withdraws the plan first (Java must not execute a plan whose copies are going),
    then deletes the copies: a kill in between (unschedule.after-requested-removed) leaves copies in
    slice C without a plan, schedule's residual window again. v6: unschedule completes the guard
    savepoint on S < C before it withdraws the plan, so Java's archiver stops at S and slice C stays
    uncommitted; the next command of ours removes the copies, then the guard. v8/v9: no guard (the
    copies are in no slice for these readers)."""
    w = World(tmp_path, version)
    w.history()
    r = schedule(str(w.path), data_latency="2h", compaction_time=iso(T0 + 2 * H))
    c = r["instant"] if isinstance(r, dict) else r.instant
    copies = w.copies()
    assert copies
    last_write = max(i.timestamp for i in Timeline.load(Storage(str(w.path))).completed_writes if i.timestamp < c)
    p = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", "unschedule", "--path", str(w.path),
                        "--instant", c], env=dict(os.environ, **{crash.ENV: "unschedule.after-requested-removed"}),
                       cwd=REPO, capture_output=True, timeout=120)
    assert p.returncode == crash.EXIT_CODE, p.stderr[-2000:]
    assert w.copies() == copies
    _guard_holds_archival_until_a_command_of_ours(w, version, last_write, c)


@VERSIONS
def test_intentless_orphans_are_removed_after_archival(tmp_path, version):
    """Copies a schedule of an earlier release left (no intent): removed once older than the grace
    when C is on neither the active timeline nor in the archive, whatever the timeline's start (the
    old rule skipped C <= the first active instant)."""
    w = World(tmp_path, version)
    w.history()
    w.crashed_schedule("schedule.after-aux-plan")
    for f in _intents(w.path):  # an earlier release recorded no intent, and made no guard savepoint
        os.remove(w.path / INTENT_DIR / f)
    for f in os.listdir(w.path / ".hoodie"):
        if ".savepoint" in f:
            os.remove(w.path / ".hoodie" / f)
    copies = w.copies()
    assert copies
    for i in range(3):
        w.theirs(w.rows([f"k{20 + i}"], T0 + 6 * H))
    w.archive_all()
    table = HudiTable.load(str(w.path))
    assert remove_orphan_links(table) == []  # a schedule of an earlier release may still be running
    assert sorted(remove_orphan_links(table, grace=dt.timedelta(0))) == copies
    assert w.snapshot() == w.model
    assert validate(str(w.path))["ok"]


def test_schedule_failing_in_process_removes_its_copies(tmp_path):
    """An exception between the copies and the plan (Airflow's execution_timeout raises one in the
    task): the copies and the intent go at once."""
    w = World(tmp_path, 6)
    w.history()

    def boom(point):
        raise TimeoutError("execution_timeout")

    with crash.hooked("schedule.before-plan", boom), pytest.raises(TimeoutError):
        schedule(str(w.path), data_latency="2h", compaction_time=iso(T0 + 2 * H))
    assert w.copies() == [] and not _intents(w.path)
    assert validate(str(w.path))["ok"]


# ------------------------------------------------------------------ finding 4
@VERSIONS
def test_unschedule_never_deletes_a_copy_java_wrote_into(tmp_path, version):
    """A copy whose bytes are not exactly its original's (Java appended into it, or re-created it
    after an unschedule) is never deleted: unschedule refuses, the orphan cleanup keeps it."""
    w = World(tmp_path, version)
    w.history()
    res = schedule(str(w.path), data_latency="2h", compaction_time=iso(T0 + 2 * H))
    assert res.instant
    copies = [c for c in w.copies() if os.path.getsize(w.path / c)]
    assert copies
    victim = w.path / copies[0]
    original = victim.read_bytes()
    victim.write_bytes(original + original)  # foreign blocks after ours
    with pytest.raises(InvalidTimelineError, match="unschedule refused"):
        unschedule(str(w.path), instant=res.instant)
    assert Timeline.load(Storage(str(w.path))).pending_compactions  # untouched
    victim.write_bytes(original)
    assert unschedule(str(w.path), instant=res.instant)["status"] == "unscheduled"
    assert w.copies() == []
    # a Java task that chose the copy's name before the unschedule re-creates it afterwards
    victim.write_bytes(original + b"java")
    assert remove_orphan_links(HudiTable.load(str(w.path)), grace=dt.timedelta(0)) == []
    assert victim.exists()
    assert ("orphan-link", copies[0]) in _problems(w.path)


def test_crashed_unschedule_is_finished_by_intent(tmp_path):
    w = World(tmp_path, 6)
    w.history()
    res = schedule(str(w.path), data_latency="2h", compaction_time=iso(T0 + 2 * H))
    r = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", "unschedule", "--path", str(w.path),
                        "--instant", res.instant], env=dict(os.environ, **{crash.ENV: "unschedule.after-requested-removed"}),
                       cwd=REPO, capture_output=True, timeout=120)
    assert r.returncode == crash.EXIT_CODE
    assert w.copies()
    for i in range(3):
        w.theirs(w.rows([f"k{30 + i}"], T0 + 6 * H))
    w.archive_all()
    remove_orphan_links(HudiTable.load(str(w.path)))  # what every command of ours runs first
    assert w.copies() == [] and not _intents(w.path)
    assert w.snapshot() == w.model


# ------------------------------------------------------------------ finding 8
@VERSIONS
def test_archived_compaction_keeps_threshold_and_validate_clean(tmp_path, version):
    w = World(tmp_path, version)
    w.history()
    res = schedule(str(w.path), data_latency="2h", compaction_time=iso(T0 + 2 * H))
    assert res.instant
    assert execute(str(w.path))["status"] == "completed"
    for i in range(3):
        w.theirs(w.rows([f"k{40 + i}"], T0 + 6 * H))
    archived = w.archive_all()
    assert res.instant in archived
    assert table_metrics(str(w.path))["threshold_ms"] == T0
    again = schedule(str(w.path), data_latency="30d", compaction_time=iso(T0 + 2 * H))
    assert again.outcome is Outcome.COVERED, again
    assert validate(str(w.path))["ok"], validate(str(w.path))["problems"]
    assert w.snapshot() == w.model


@pytest.mark.parametrize("command", ["clean", "write", "execute", "rollback", "poke"])
def test_every_command_and_the_poke_finish_a_dead_schedules_intent(tmp_path, command):
    """Not only schedule: our clean (which would otherwise take the orphan slice as the latest and
    delete the old one), write, execute, rollback and the sensor's poke finish the intent first."""
    from airflow_hudi_etc.api import Table
    from airflow_hudi_etc.compaction.clean import clean
    from airflow_hudi_etc.compaction.lifecycle import rollback
    from airflow_hudi_etc.hooks.hudi import event_time_check

    w = World(tmp_path, 6)
    w.history()
    w.crashed_schedule()
    copies = w.copies()
    for i in range(3):
        w.theirs(w.rows([f"k{50 + i}"], T0 + 6 * H))
    w.archive_all()
    if command == "clean":
        clean(str(w.path), retain_commits=1)
    elif command == "write":
        rows = w.rows(["k60"], T0 + 7 * H)
        Table.open(str(w.path)).write(batch(rows))
        w.model.update({r["key"]: {c: r[c] for c in DATA_COLS} for r in rows})
    elif command == "execute":
        assert execute(str(w.path))["status"] == "nothing to execute"
    elif command == "rollback":
        rollback(str(w.path), instant=copies[0].split("_")[-2].split(".")[0])
    else:
        event_time_check(str(w.path), threshold_ms=T0)
    assert not set(copies) & set(w.copies()) and not _intents(w.path)
    assert w.snapshot() == w.model


@VERSIONS
def test_unschedule_of_a_dead_schedule_removes_its_copies_in_flight(tmp_path, version):
    """A schedule killed while copies were in flight (several copy tasks run at once) leaves
    their temp files ``.hudi-etc-tmp-i<C>-….tmp`` beside the copies; a copy that never finished
    leaves no file for the cleanup to find its folder by (seen with the real Java 1.0
    interleavings: v8 seed 0, ``schedule.after-link@1``). ``unschedule --instant C`` finishes the
    intent and removes C's temp files in every folder the intent names. The in-flight copy is the
    temp file a killed copy leaves, planted in the folder of the intent's last file."""
    import json

    w = World(tmp_path, version)
    w.history()
    w.crashed_schedule("schedule.before-links")
    (name,) = _intents(w.path)
    c = name.split(".")[0]
    files = json.loads((w.path / INTENT_DIR / name).read_text())["files"]
    folder = w.path / os.path.dirname(files[-1][0])
    planted = folder / f".hudi-etc-tmp-i{c}-0123456789abcdef0123456789abcdef.tmp"
    planted.write_bytes(b"half a copy")
    assert ("temp-file", str(planted.relative_to(w.path))) in _problems(w.path)
    unschedule(str(w.path), instant=c)
    assert not planted.exists() and _intents(w.path) == []
    assert _problems(w.path) == [] and w.snapshot() == w.model
