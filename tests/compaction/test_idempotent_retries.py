"""Every command run twice in a row (a retried Airflow task): the same result, nothing done twice.

Expected values are fixed here, not taken from the first run alone: the second ``schedule``
returns the pending plan's instant with reason "already scheduled" and writes no second plan;
the second ``execute`` reports "already completed" with the same figures; a second
``rollback``/``unschedule``/``clean`` does nothing; writing the same batch twice leaves the same
records (hudi-rs reads them).
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from airflow_hudi_etc.cli import main as cli_main
from scenario import COMPACTION_TIME, LATENCY, build, cli, clone
from reading import snapshot_by_key
from tests_digest import tree_digest

TIME_DEPENDENT = {"now", "threshold_lag_seconds", "pending_plan_age_seconds"}


def twice(capsys, *args):
    outs = []
    for _ in range(2):
        rc = cli_main([str(a) for a in args])
        outs.append((rc, json.loads(capsys.readouterr().out)))
    return outs


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    sc = build(tmp_path_factory.mktemp("idem"), 4, exact=False, link_mode="symlink")
    return sc


def test_every_command_twice(base, tmp_path, capsys):
    sc = clone(base, tmp_path)
    p = sc.path
    # init: a second identical init is a no-op
    (rc1, a), (rc2, b) = twice(capsys, "init", "--path", tmp_path / "fresh", "--table-name", "fresh",
                               "--record-key", "key", "--precombine-field", "ts", "--event-time-field", "event_time")
    assert (rc1, rc2, a["created"], b["created"]) == (0, 0, True, False)
    # write the same batch twice: two deltacommits, the same records
    rows = sc.w1_rows()
    f = sc.batch_file(rows, "w1")
    (rc1, a), (rc2, b) = twice(capsys, "write", "--path", p, "--input", f)
    sc.applied(rows, before_plan=True)
    assert (rc1, rc2) == (0, 0) and a["instant"] != b["instant"]
    assert a["updates"] + a["inserts"] == len(rows) and (b["updates"], b["inserts"]) == (len(rows), 0)
    from oracle import hudi_rs_read

    keys = hudi_rs_read(p).column("key").to_pylist()
    assert len(keys) == len(set(keys)) and snapshot_by_key(p) == sc.want()
    # delete twice: the second deletes nothing more
    dels = sorted(sc.model.snapshot())[:2]
    df = tmp_path / "del.parquet"
    import pyarrow as pa

    pq.write_table(pa.table({"key": dels, "region": [sc.model.snapshot()[k]["region"] for k in dels]}), df)
    (rc1, a), (rc2, b) = twice(capsys, "write", "--path", p, "--input", df, "--operation", "delete")
    sc.model.delete(dels)
    assert (rc1, rc2, a["deletes"]) == (0, 0, 2) and snapshot_by_key(p) == sc.want()
    # read and status: the same answer
    (_, a), (_, b) = twice(capsys, "read", "--path", p, "--output", tmp_path / "r.parquet")
    assert a == b and a["rows"] == len(sc.want())
    (_, a), (_, b) = twice(capsys, "status", "--path", p, "--json")
    assert {k: v for k, v in a.items() if k not in TIME_DEPENDENT} == {k: v for k, v in b.items() if k not in TIME_DEPENDENT}
    # schedule: the retry gets the pending plan, no second plan file
    (rc1, a), (rc2, b) = twice(capsys, *sc.schedule_args())
    assert rc1 == rc2 == 0 and a["reason"] == "scheduled" and a["instant"]
    assert b == {**a, "reason": "already scheduled", "outcome": "already_scheduled"}
    assert len(list((p / ".hoodie").glob("*.compaction.requested"))) == 1
    instant = a["instant"]
    sc.plan_made()
    (_, a), (_, b) = twice(capsys, "show-plan", "--path", p, "--instant", instant)
    assert a == b and a["state"] == "requested"
    # unschedule twice, then the same schedule makes a fresh plan
    (_, a), (_, b) = twice(capsys, "unschedule", "--path", p, "--instant", instant)
    assert (a["status"], b["status"]) == ("unscheduled", "not scheduled")
    assert not list((p / ".hoodie").rglob(f"{instant}.compaction.*"))
    rc, out = twice(capsys, *sc.schedule_args())[0]
    instant = out["instant"]
    assert rc == 0 and instant
    # an inflight execution (the driver died before its commit), rolled back twice
    proc = cli("execute", "--path", p, crash="execute.before-commit")
    assert proc.returncode == 86
    (rc1, a), (rc2, b) = twice(capsys, "rollback", "--path", p, "--instant", instant)
    assert (rc1, rc2) == (0, 0) and a["status"] == b["status"] == "requested"
    assert a["files_removed"] > 0 and b["files_removed"] == 0
    # execute twice: the retry reports the earlier result
    (rc1, a), (rc2, b) = twice(capsys, "execute", "--path", p)
    assert (rc1, rc2) == (0, 0) and a["status"] == "completed" and b["status"] == "already completed"
    assert {k: v for k, v in a.items() if k != "status"} == {k: v for k, v in b.items() if k != "status"}
    assert a["instant"] == instant and a["base_files_written"] > 0
    (_, a), (_, b) = twice(capsys, "execute", "--path", p, "--instant", instant)
    assert a == b and a["status"] == "already completed"
    # rollback of a completed compaction: refused, the same way twice, nothing changed
    before = tree_digest(p)
    (rc1, a), (rc2, b) = twice(capsys, "rollback", "--path", p, "--instant", instant)
    assert rc1 == rc2 == 2 and a == b and a["error"]["code"] == "invalid_timeline"
    assert tree_digest(p) == before
    # clean twice: the second finds nothing
    (_, a), (_, b) = twice(capsys, "clean", "--path", p, "--retain-commits", 1)
    assert a["status"] == "completed" and a["files_deleted"] > 0
    assert b["status"] == "nothing to clean" and b["files_deleted"] == 0
    (_, a), (_, b) = twice(capsys, "validate", "--path", p)
    assert a == b and a["ok"], a
    assert snapshot_by_key(p) == sc.want()


def test_rollback_of_a_crashed_write_twice(base, tmp_path, capsys):
    sc = clone(base, tmp_path)
    p = sc.path
    f = sc.batch_file(sc.w1_rows(), "w1")
    assert cli("write", "--path", p, "--input", f, crash="write.before-commit").returncode == 86
    dead = sorted(x.name.split(".")[0] for x in (p / ".hoodie").glob("*.deltacommit.inflight")
                  if not (p / ".hoodie" / x.name.replace(".inflight", "")).exists())
    assert len(dead) == 1
    (rc1, a), (rc2, b) = twice(capsys, "rollback", "--path", p, "--instant", dead[0])
    assert (rc1, rc2) == (0, 0)
    assert a["status"] == "rolled back" and a["files_removed"] > 0
    assert b["status"] == "nothing to roll back"
    assert snapshot_by_key(p) == sc.want()
    (_, a), _ = twice(capsys, "validate", "--path", p)
    assert a["ok"], a
