"""validate: storage against timeline and plans; each problem kind made by hand and found."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from airflow_hudi_etc.compaction.clean import clean
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.validate import validate
from batches import run_history
from compacted_histories import two_compactions
from faults import SecondTaskFails
from reading import iso

T0 = 1_700_000_000_000
H = 3_600_000


def kinds(report):
    return sorted({p["kind"] for p in report["problems"]})


def test_a_healthy_table_validates_through_compaction_and_clean(tmp_path):
    path, _ = two_compactions(tmp_path, 1, "symlink")
    r = validate(str(path))
    assert r["ok"], r["problems"]
    assert r["compactions_checked"] == 2 and r["files_checked"] > 10
    clean(str(path), retain_commits=1)
    assert validate(str(path))["ok"]


def test_each_problem_kind_is_found(tmp_path):
    path, _ = two_compactions(tmp_path, 5, "symlink")
    links = sorted(p for p in path.rglob(".*.log.*") if p.is_symlink())
    assert links
    # a link whose target vanished
    target = links[0].resolve()
    os.rename(target, str(target) + ".moved")
    # a link pointing outside the table
    os.symlink("../../etc/passwd", path / ".outside_20260101000000000.log.1_1-0-1")
    # an orphan base file and an orphan log of an instant that never existed
    (path / "ffffffff-0000-0000-0000-000000000000-0_0-1-0_20200101000000000.parquet").write_bytes(b"x")
    (path / ".ffffffff-0000-0000-0000-000000000000-0_20200101000000000.log.1_0-1-0").write_bytes(b"x")
    (path / ".hudi-etc-tmp-abc-foo.parquet").write_bytes(b"x")
    r = validate(str(path))
    assert not r["ok"]
    # the moved link target is also a file a completed deltacommit wrote, in a slice still read
    assert kinds(r) == ["dangling-link", "link-outside-table", "missing-file", "orphan-base", "orphan-log", "temp-file"]
    dangling = [p["path"] for p in r["problems"] if p["kind"] == "dangling-link"]
    assert dangling == [str(links[0].relative_to(path))]


def test_pending_plan_files_are_reported_as_pending_not_orphans(tmp_path):
    path, _ = run_history(tmp_path, 2, batches=6, monotone=True)
    res = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 4 * H), link_mode="copy")
    assert res.instant
    with pytest.raises(OSError):
        execute(str(path), engine=SecondTaskFails())
    r = validate(str(path))
    assert r["ok"] and r["pending_files"], r
    assert all(res.instant in f for f in r["pending_files"])


def test_a_failed_write_with_a_commit_after_it_is_a_stuck_write_unless_its_heartbeat_is_there(tmp_path):
    """Java's eager rollback refuses a failed write once a commit newer than it completed and no
    heartbeat file is there (``Found commits after time``; tests/java: Java 1.x compacts past its
    killed write): validate names it with the repair; a newer pending write, or one with a
    heartbeat file (which Java rolls back out of order), is no such problem."""
    path, _ = run_history(tmp_path, 1, batches=3, monotone=True)
    meta = path / ".hoodie"
    done = sorted(n.split(".")[0] for n in os.listdir(meta) if n.endswith(".deltacommit"))
    assert len(done) >= 2
    early = str(int(done[-1]) - 1)  # before the last completed deltacommit
    late = str(int(done[-1]) + 1)
    for t in (early, late):
        (meta / f"{t}.deltacommit.requested").write_bytes(b"")
        (meta / f"{t}.deltacommit.inflight").write_bytes(b"")
    stuck = [p for p in validate(str(path))["problems"] if p["kind"] == "stuck-write"]
    assert [p["path"] for p in stuck] == [f".hoodie/{early}.deltacommit.inflight"], stuck
    assert f"hudi-etc rollback --instant {early}" in stuck[0]["detail"] and done[-1] in stuck[0]["detail"]
    # schedule waits on it, and says that Java's next write will not roll it back
    res = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 10 * H))
    assert res.instant is None and f"hudi-etc rollback --instant {early}" in res.reason, res
    (meta / ".heartbeat").mkdir(exist_ok=True)
    (meta / ".heartbeat" / early).write_bytes(b"")
    assert "stuck-write" not in kinds(validate(str(path)))
    res = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 10 * H))
    assert res.instant is None and res.reason == f"pending write {early}: roll it back or let it finish first", res


# ---------------------------------------------------------------- issue 35 item 6: a 0-byte completed commit
@pytest.mark.parametrize("version", [6, 8, 9])
def test_a_zero_byte_completed_commit_is_reported_and_repaired(tmp_path, capsys, version):
    """Java reads a 0-byte completed deltacommit as committed with no metadata (measured in
    tests/java/test_java_robust_reads.py), so do we; hudi-rs refuses the table. ``validate`` says
    ``corrupt-instant`` with the repair, and ``repair-instant`` makes hudi-rs read it again."""
    from airflow_hudi_etc import Table
    from airflow_hudi_etc.cli import main as cli_main
    from oracle import hudi_rs_read

    t = Table.create(str(tmp_path / "t"), table_name="t", record_key="k", precombine_field="ts",
                     event_time_field="event_time", partition_field="city", table_version=version)
    t.write([{"k": f"k{i}", "ts": 1, "event_time": 1_700_000_000_000, "city": "sf", "v": float(i)} for i in range(3)])
    t.write([{"k": "k1", "ts": 2, "event_time": 1_700_000_000_000, "city": "sf", "v": 11.0}])
    folder = Path(t.path) / ".hoodie" / ("timeline" if version != 6 else "")
    last = sorted(p for p in folder.iterdir() if p.name.endswith(".deltacommit"))[-1]
    last.write_bytes(b"")
    T = last.name.split("_")[0].split(".")[0]
    want = {"k0": 0.0, "k1": 11.0, "k2": 2.0}
    assert {r["k"]: r["v"] for r in t.read().to_pylist()} == want  # committed, as Java reads it
    with pytest.raises(Exception):
        hudi_rs_read(t.path)
    rc = cli_main(["validate", "--path", t.path])
    out = json.loads(capsys.readouterr().out)
    found = [p for p in out["problems"] if p["kind"] == "corrupt-instant"]
    assert rc == 0 and [p["path"] for p in found] == [str(last.relative_to(t.path))], out
    assert f"hudi-etc repair-instant --instant {T}" in found[0]["detail"]
    rc = cli_main(["repair-instant", "--path", t.path, "--instant", T])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["status"] == "repaired" and out["schema"] is True, out
    assert last.stat().st_size > 0
    assert {r["k"]: r["v"] for r in hudi_rs_read(t.path).to_pylist()} == want
    assert {r["k"]: r["v"] for r in t.read().to_pylist()} == want
    rc = cli_main(["validate", "--path", t.path])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and not [p for p in out["problems"] if p["kind"] == "corrupt-instant"], out
    assert cli_main(["repair-instant", "--path", t.path, "--instant", T]) == 0
    assert json.loads(capsys.readouterr().out)["status"] == "nothing to repair"
