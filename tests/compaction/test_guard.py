"""The guard savepoint (compaction/guard.py): schedule's savepoint on S < C that keeps Java's
archiver before C and its cleaner off slice B while files exist in slice C without a visible plan
(table version 6). Its bytes against a hand-written record; a user's savepoint never touched; the
cleanup order (copies, then the completed savepoint file, then the inflight one); validate's report
and its repair; symlink and hard-link modes guarded as byte copies are; none on v8/v9."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import fastavro
import pytest

from airflow_hudi_etc.compaction import guard
from airflow_hudi_etc.compaction.intents import INTENT_DIR, finish_stale_intents
from airflow_hudi_etc.compaction.lifecycle import unschedule
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.validate import validate
from airflow_hudi_etc.hudi.errors import InvalidTimelineError
from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.protocol.plan import LINK_TOKEN
from airflow_hudi_etc.hudi.storage import LOCAL_COPY_ENV, Storage
from airflow_hudi_etc.hudi.timeline.active import Timeline
from airflow_hudi_etc.hudi.timeline.avro_models import SAVEPOINT_METADATA, write_avro_metadata
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from batches import batch
from paths import REPO

T0 = 1_767_225_600_000  # 2026-01-01T00:00Z
H = 3_600_000
DAY2 = "2026-01-01T02:00:00+00:00"  # with a 2h latency: threshold T0


def _rows(keys, event_h, ts):
    return [{"key": k, "ts": ts, "event_time": T0 + int(event_h * H), "value": float(ts), "note": None,
             "region": "ab"[int(k[1:]) % 2]} for k in keys]


def _table(tmp_path, version=6, exclusive_cleaner=False):
    """A base, a prefix log (before the threshold) and a remaining log (after it): the plan
    re-exposes one log per file group. Returns (path, S = the newest write)."""
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
               partition_field="region", table_version=version, exclusive_cleaner=exclusive_cleaner)
    keys = [f"k{i}" for i in range(4)]
    write_batch(str(path), batch(_rows(keys, -5, 1)))
    write_batch(str(path), batch(_rows(keys, -1, 2)))
    write_batch(str(path), batch(_rows(keys, 5, 3)))
    return path, Timeline.load(Storage(str(path))).completed_writes[-1].timestamp


def _crashed_schedule(path, point, *, link_mode="copy", env=None):
    r = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", "schedule", "--path", str(path),
                        "--data-latency", "2h", "--compaction-time", DAY2, "--link-mode", link_mode],
                       env=dict(os.environ, **{crash.ENV: point}, **(env or {})), cwd=REPO, capture_output=True,
                       timeout=120)
    assert r.returncode == crash.EXIT_CODE, r.stderr[-2000:]
    (intent,) = os.listdir(path / INTENT_DIR)
    return intent.split(".")[0]


def _savepoint_files(path) -> list[str]:
    return sorted(f for f in os.listdir(path / ".hoodie") if ".savepoint" in f)


def _copies(path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob(f"*{LINK_TOKEN}"))


def test_guard_bytes_read_back_as_written_by_hand():
    data = guard.guard_bytes("20260102000000000", {"region=a": ["f1_1-0-1_20260101000000000.parquet",
                                                                ".f1_20260101000000000.log.1_1-0-1"], "": ["x.parquet"]},
                             1767225600123)
    rdr = fastavro.reader(io.BytesIO(data))
    (rec,) = list(rdr)
    assert rec == {
        "savepointedBy": "hudi-etc",
        "savepointedAt": 1767225600123,
        "comments": "hudi-etc guard of compaction 20260102000000000: slice B kept while slice 20260102000000000 "
                    "is on no timeline",
        "partitionMetadata": {
            "region=a": {"partitionPath": "region=a", "savepointDataFile": [
                "f1_1-0-1_20260101000000000.parquet", ".f1_20260101000000000.log.1_1-0-1"]},
            "": {"partitionPath": "", "savepointDataFile": ["x.parquet"]},
        },
        "version": 1,
    }
    ws = rdr.writer_schema
    assert ws["name"] == "org.apache.hudi.avro.model.HoodieSavepointMetadata"
    assert [f["name"] for f in ws["fields"]] == ["savepointedBy", "savepointedAt", "comments", "partitionMetadata",
                                                 "version"]
    part = ws["fields"][3]["type"]["values"]
    assert part["name"] == "org.apache.hudi.avro.model.HoodieSavepointPartitionMetadata"
    assert [f["name"] for f in part["fields"]] == ["partitionPath", "savepointDataFile"]
    assert rdr.codec == "null"
    assert guard.guarded_compaction(data) == "20260102000000000"


def test_published_plan_leaves_no_guard_and_a_users_savepoint_is_kept(tmp_path):
    """A user's savepoint on the newest write: the guard goes on the write before it (S is the
    newest write with no savepoint), and the user's file is byte for byte as it was."""
    path, newest = _table(tmp_path)
    st = Storage(str(path))
    user = write_avro_metadata(SAVEPOINT_METADATA, {
        "savepointedBy": "alice", "savepointedAt": 1, "comments": "mine",
        "partitionMetadata": {}, "version": 1})
    st.create_if_absent(guard.inflight_path(newest), b"")
    st.create_if_absent(guard.completed_path(newest), user)
    tl = Timeline.load(st)
    before = [i.timestamp for i in tl.completed_writes][-2]
    assert guard.guard_time(tl, "99999999999999999") == before
    assert guard.remove(st, newest, "99999999999999999") is False  # not ours: untouched
    res = schedule(str(path), data_latency="2h", compaction_time=DAY2)
    assert res.instant
    assert _savepoint_files(path) == [f"{newest}.savepoint", f"{newest}.savepoint.inflight"]
    assert st.read_bytes(guard.completed_path(newest)) == user
    assert not guard.guards_on(Timeline.load(st), st)


def test_no_write_without_a_savepoint_refuses_with_a_typed_error(tmp_path):
    path, _ = _table(tmp_path)
    st = Storage(str(path))
    for i in Timeline.load(st).completed_writes:
        st.create_if_absent(guard.completed_path(i.timestamp), b"")
    with pytest.raises(InvalidTimelineError, match="carries a savepoint"):
        schedule(str(path), data_latency="2h", compaction_time=DAY2)
    assert not os.listdir(path / INTENT_DIR) if (path / INTENT_DIR).exists() else True
    assert not _copies(path)


def test_cleanup_removes_the_copies_then_the_completed_guard_then_its_inflight(tmp_path, monkeypatch):
    path, s = _table(tmp_path)
    c = _crashed_schedule(path, "schedule.after-link@2")
    assert len(_copies(path)) == 2
    assert _savepoint_files(path) == [f"{s}.savepoint", f"{s}.savepoint.inflight"]
    st = Storage(str(path))
    order = []
    real = Storage.delete

    def delete(self, rel, missing_ok=True):
        got = real(self, rel, missing_ok)
        if got:
            order.append(rel)
        return got

    monkeypatch.setattr(Storage, "delete", delete)
    finish_stale_intents(st)
    kinds = ["copy" if rel.endswith(LINK_TOKEN) else rel.rpartition("/")[2] for rel in order]
    kinds = [k for k in kinds if k == "copy" or ".savepoint" in k or k.endswith(".json")]
    assert kinds == ["copy", "copy", f"{s}.savepoint", f"{s}.savepoint.inflight", f"{c}.json"], order
    assert not _savepoint_files(path) and not _copies(path)


def test_validate_reports_a_leftover_guard_with_its_repair(tmp_path):
    path, s = _table(tmp_path)
    c = _crashed_schedule(path, "schedule.after-guard")
    assert not _copies(path)  # the guard comes before the first final name
    probs = [p for p in validate(str(path))["problems"] if p["kind"] == "guard-savepoint"]
    assert [p["path"] for p in probs] == [f".hoodie/{s}.savepoint"]
    assert f"unschedule --instant {c}" in probs[0]["detail"]
    os.remove(path / INTENT_DIR / f"{c}.json")  # even without its intent, the repair removes it
    unschedule(str(path), instant=c)
    assert not _savepoint_files(path)
    assert not [p for p in validate(str(path))["problems"] if p["kind"] == "guard-savepoint"]


@pytest.mark.parametrize("mode", ["symlink", "hardlink"])
def test_symlink_and_hardlink_modes_are_guarded(tmp_path, mode):
    """No staging there: the files are made under their final names at once, so the guard comes
    before the first of them."""
    path, s = _table(tmp_path, exclusive_cleaner=True)
    env = {LOCAL_COPY_ENV: "hardlink"} if mode == "hardlink" else {}
    link_mode = "symlink" if mode == "symlink" else "copy"
    _crashed_schedule(path, "schedule.after-guard", link_mode=link_mode, env=env)
    assert not _copies(path) and _savepoint_files(path) == [f"{s}.savepoint", f"{s}.savepoint.inflight"]
    finish_stale_intents(Storage(str(path)))
    assert not _savepoint_files(path)
    _crashed_schedule(path, "schedule.after-link@1", link_mode=link_mode, env=env)
    copy = _copies(path)[0]  # (made by a pool of threads: one or more before the kill)
    assert os.path.islink(path / copy) == (mode == "symlink")
    if mode == "hardlink":
        assert os.stat(path / copy).st_nlink == 2
    assert _savepoint_files(path) == [f"{s}.savepoint", f"{s}.savepoint.inflight"]
    rec = fastavro.reader(io.BytesIO((path / ".hoodie" / f"{s}.savepoint").read_bytes()))
    (listed,) = [pm["savepointDataFile"] for pm in next(iter(rec))["partitionMetadata"].values()
                 if copy.split("/")[0] == pm["partitionPath"]]
    fid = copy.split("/")[1][1:].split("_")[0]
    assert any(n.lstrip(".").startswith(fid) and n.endswith(".parquet") for n in listed), listed  # slice B's base


@pytest.mark.parametrize("version", [8, 9])
def test_no_guard_on_v8_v9(tmp_path, version):
    path, _ = _table(tmp_path, version)
    _crashed_schedule(path, "schedule.after-link@1")
    tl_dir = path / ".hoodie" / "timeline"
    assert not [f for f in os.listdir(tl_dir) if "savepoint" in f]


def test_java_archiving_past_s_while_scheduling_is_a_conflict_that_leaves_nothing(tmp_path):
    """Java commits and archives past S while schedule stages its copies: the guard would hold
    nothing back, so schedule withdraws before the first final name (its guard, staged copies and
    intent go)."""
    from archival import archive_v6

    path, s = _table(tmp_path)

    def java_meanwhile(point):
        write_batch(str(path), batch(_rows(["k9"], 6, 9)))
        last = Timeline.load(Storage(str(path))).completed_writes[-1].timestamp
        assert s in archive_v6(path, before=last)

    with crash.hooked("schedule.after-staged", java_meanwhile):
        res = schedule(str(path), data_latency="2h", compaction_time=DAY2)
    assert res.instant is None and "archived past" in res.reason, res
    assert not _savepoint_files(path) and not _copies(path)
    assert not os.listdir(path / INTENT_DIR)
    assert not [f for d in path.iterdir() if d.is_dir() for f in os.listdir(d) if f.startswith(".hudi-etc-tmp-")]
