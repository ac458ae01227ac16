"""The CLI contract and the refusals: typed errors, and the table left untouched."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.hudi.errors import InvalidInputError
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from oracle import hudi_rs_read


def run_cli(capsys, *args):
    rc = cli_main([str(a) for a in args])
    out = capsys.readouterr().out
    return rc, json.loads(out)


def tree_digest(path: Path) -> str:
    """Names and bytes of every file (symlinks as their target): to prove nothing changed."""
    h = hashlib.sha256()
    for p in sorted(path.rglob("*")):
        if p.is_file() or p.is_symlink():
            h.update(str(p.relative_to(path)).encode())
            h.update(os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
    return h.hexdigest()


@pytest.fixture
def table(tmp_path, capsys):
    path = tmp_path / "t"
    rc, out = run_cli(capsys, "init", "--path", path, "--table-name", "trips", "--record-key", "id",
                      "--precombine-field", "ts", "--event-time-field", "et", "--partition-field", "city")
    assert rc == 0 and out["created"] is True
    (tmp_path / "b1.jsonl").write_text(
        '{"id":"a","ts":1,"et":1700000000000,"v":1.5,"city":"x"}\n'
        '{"id":"b","ts":1,"et":1700000000500,"v":2.5,"city":"y"}\n'
    )
    rc, out = run_cli(capsys, "write", "--path", path, "--input", tmp_path / "b1.jsonl")
    assert rc == 0 and out["inserts"] == 2
    return path


def test_cli_write_read_status(table, tmp_path, capsys):
    (tmp_path / "b2.jsonl").write_text('{"id":"a","ts":2,"et":1699999000,"v":9.5,"city":"x"}\n')
    rc, out = run_cli(capsys, "write", "--path", table, "--input", tmp_path / "b2.jsonl")
    assert rc == 0 and out["updates"] == 1 and len(out["instant"]) == 17
    rc, st = run_cli(capsys, "status", "--path", table, "--json")
    assert rc == 0
    assert st["log_files"] == 1 and st["slices_with_logs"] == 1
    assert st["min_event_time_ms"] == 1699999000 * 1000  # epoch seconds in the input → ms
    assert st["min_event_time"] == "2023-11-14T21:56:40.000Z" and st["remaining_log_files"] == 1
    assert st["event_time_source"] == "write-stats"
    assert st["timeline"]["completed"] == {"deltacommit": 2}
    rc, out = run_cli(capsys, "read", "--path", table, "--output", tmp_path / "s.parquet")
    snap = {r["id"]: r["v"] for r in pq.read_table(tmp_path / "s.parquet").to_pylist()}
    assert snap == {"a": 9.5, "b": 2.5}
    rc, out = run_cli(capsys, "read", "--path", table, "--read-optimized", "--output", tmp_path / "ro.parquet")
    ro = pq.read_table(tmp_path / "ro.parquet")
    assert {r["id"]: r["v"] for r in ro.to_pylist()} == {"a": 1.5, "b": 2.5}
    assert ro.column_names[:5] == ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                                   "_hoodie_partition_path", "_hoodie_file_name"]
    first = json.loads((table / ".hoodie").joinpath(sorted(p.name for p in (table / ".hoodie").glob("*.deltacommit"))[0]).read_text())
    rc, out = run_cli(capsys, "read", "--path", table, "--as-of", first["partitionToWriteStats"]["city=x"][0]["path"][-25:-8],
                      "--output", tmp_path / "asof.parquet")
    assert rc == 0


@pytest.mark.parametrize(
    "content,match",
    [
        ('{"ts":1,"et":1,"v":1.0,"city":"x"}\n', "record key field 'id'"),
        ('{"id":"c","ts":1,"v":1.0,"city":"x"}\n', "event-time field 'et'"),
        ('{"id":"c","et":1,"v":1.0,"city":"x"}\n', "precombine field 'ts'"),
        ('{"id":"c","ts":1,"et":1,"v":1.0}\n', "partition field 'city'"),
        ('{"id":"c","ts":1,"et":"yesterday","v":1.0,"city":"x"}\n', "not an ISO-8601"),
        ('{"id":"c","ts":1,"et":1,"v":"text","city":"x"}\n', "column 'v'"),
        ('{"id":null,"ts":1,"et":1,"v":1.0,"city":"x"}\n', "null"),
        ("not json", "cannot read"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(table, tmp_path, capsys, content, match):
    before = tree_digest(table)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(content)
    rc, out = run_cli(capsys, "write", "--path", table, "--input", bad)
    assert rc == 2
    assert out["error"]["code"] == "invalid_input" and match in out["error"]["message"]
    assert tree_digest(table) == before


def test_refusals_name_the_problem(fixture_copy, tmp_path, capsys):
    rc, out = run_cli(capsys, "status", "--path", tmp_path / "none")
    assert rc == 2 and out["error"]["type"] == "TableNotFoundError"
    rc, out = run_cli(capsys, "status", "--path", fixture_copy("v6_cow_nonpartitioned"))
    assert rc == 2 and out["error"]["type"] == "UnsupportedTableTypeError"
    v8 = fixture_copy("v8_trips_8i3u1d")
    before = tree_digest(v8)
    (tmp_path / "x.jsonl").write_text('{"uuid":"a","ts":1,"city":"x"}\n')
    rc, out = run_cli(capsys, "write", "--path", v8, "--input", tmp_path / "x.jsonl")
    assert rc == 2 and out["error"]["type"] == "MetadataTablePresentError"  # the fixture has an MDT
    assert tree_digest(v8) == before
    from airflow_hudi_etc.hudi.protocol.coexistence import drop_metadata_table
    from airflow_hudi_etc.hudi.storage import Storage

    drop_metadata_table(Storage(str(v8)))
    from oracle import hudi_rs_read

    n = hudi_rs_read(v8).num_rows
    rc, out = run_cli(capsys, "write", "--path", v8, "--input", tmp_path / "x.jsonl")  # v8 is written now
    assert rc == 0 and out["inserts"] == 1
    got = hudi_rs_read(v8)
    assert got.num_rows == n + 1 and "a" in got.column("uuid").to_pylist()
    # clean works on table version 8/9 too: nothing is old enough to go yet, the rows stay
    rc, out = run_cli(capsys, "clean", "--path", v8)
    assert rc == 0 and out["status"] in ("completed", "nothing to clean"), out
    assert hudi_rs_read(v8).num_rows == n + 1


def test_failed_write_leaves_no_pending_instant_nor_files(table, tmp_path, monkeypatch):
    before = tree_digest(table)
    import airflow_hudi_etc.hudi.write.writer as w

    real = w.write_unit
    calls = []

    def flaky(unit):
        calls.append(unit)
        if len(calls) == 2:
            raise OSError("disk full (injected)")
        return real(unit)

    monkeypatch.setattr(w, "write_unit", flaky)
    batch = pa.table({"id": ["a", "c", "d"], "ts": [5, 5, 5], "et": [1, 2, 3], "v": [1.0, 2.0, 3.0],
                      "city": ["x", "z", "w"]})
    with pytest.raises(OSError, match="injected"):
        write_batch(str(table), batch)
    assert len(calls) == 2
    assert tree_digest(table) == before  # no pending instant, no stray data file, no marker


def test_crashed_writer_is_rolled_back_by_the_next_write(table, tmp_path):
    """A writer killed mid-batch (real process exit) leaves a pending instant; the next write cleans it."""
    script = f"""
import os, pyarrow as pa
import airflow_hudi_etc.hudi.write.writer as w
real = w.write_unit
def dying(unit):
    real(unit)
    os._exit(17)  # the process dies after its first data file
w.write_unit = dying
w.write_batch({str(table)!r}, pa.table({{"id": ["n1", "n2"], "ts": [1, 1], "et": [1, 1], "v": [1.0, 1.0], "city": ["q", "r"]}}))
"""
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert proc.returncode == 17, proc.stderr
    from airflow_hudi_etc.hudi.storage import Storage
    from airflow_hudi_etc.hudi.timeline.active import Timeline

    assert len(Timeline.load(Storage(str(table))).pending_writes) == 1  # the dead writer's instant
    assert list(table.rglob("*.parquet"))  # and its data file
    res = write_batch(str(table), pa.table({"id": ["b"], "ts": [9], "et": [9], "v": [7.0], "city": ["y"]}))
    assert len(res.rolled_back) == 1
    assert not Timeline.load(Storage(str(table))).pending_writes
    snap = hudi_rs_read(table)
    assert sorted(snap.column("id").to_pylist()) == ["a", "b"]  # n1/n2 never committed
    assert not [p for p in table.rglob("*") if p.parent.name in ("city=q", "city=r") and p.suffix == ".parquet"]


def test_init_is_idempotent_and_refuses_a_different_table(tmp_path, capsys):
    args = ["init", "--path", tmp_path / "t", "--table-name", "t", "--record-key", "id",
            "--precombine-field", "ts", "--event-time-field", "et"]
    assert run_cli(capsys, *args)[1]["created"] is True
    assert run_cli(capsys, *args)[1]["created"] is False
    rc, out = run_cli(capsys, *[a if a != "ts" else "other" for a in args])
    assert rc == 2 and out["error"]["code"] == "table_exists"


def test_delete_of_unknown_keys_is_a_no_op(table):
    res = write_batch(str(table), pa.table({"id": ["zz"], "city": ["x"]}), operation="delete")
    assert res.deletes == 0
    assert sorted(hudi_rs_read(table).column("id").to_pylist()) == ["a", "b"]


def test_spark_submit_engine_writes_what_hudi_rs_reads(table, tmp_path, capsys):
    """--engine spark: a real spark-submit runs the same per-file-group code in Spark tasks."""
    (tmp_path / "b.jsonl").write_text(
        '{"id":"a","ts":3,"et":1700000001000,"v":3.5,"city":"x"}\n{"id":"n","ts":1,"et":1700000002000,"v":4.5,"city":"z"}\n'
    )
    rc, out = run_cli(capsys, "write", "--path", table, "--input", tmp_path / "b.jsonl", "--engine", "spark")
    assert rc == 0, out
    assert out["engine"] == "spark" and out["updates"] == 1 and out["inserts"] == 1
    snap = {r["id"]: r["v"] for r in hudi_rs_read(table).to_pylist()}
    assert snap == {"a": 3.5, "b": 2.5, "n": 4.5}


def test_compaction_cli_contract_with_execute_through_spark_submit(table, tmp_path, capsys):
    """schedule → show-plan → execute --engine spark (real spark-submit) → status → validate → clean."""
    (tmp_path / "late.jsonl").write_text(
        '{"id":"a","ts":5,"et":1699990000000,"v":7.5,"city":"x"}\n'   # late: before the threshold
        '{"id":"b","ts":5,"et":1700100000000,"v":8.5,"city":"y"}\n'   # after the threshold
    )
    rc, _ = run_cli(capsys, "write", "--path", table, "--input", tmp_path / "late.jsonl")
    assert rc == 0
    rc, plan = run_cli(capsys, "schedule", "--path", table, "--data-latency", "PT1H",
                       "--compaction-time", "2023-11-14T23:00:00Z", "--link-mode", "copy", "--exact-split")
    assert rc == 0 and plan["instant"] and plan["threshold"] == "2023-11-14T22:00:00.000Z", plan
    rc, shown = run_cli(capsys, "show-plan", "--path", table, "--instant", plan["instant"])
    assert shown["state"] == "requested" and shown["extra_metadata"]["hoodie.etc.exact.split"] == "true"
    assert {op["partition"] for op in shown["operations"]} == {"city=x", "city=y"} or \
        {op["partition"] for op in shown["operations"]} == {"x", "y"}
    rc, out = run_cli(capsys, "execute", "--path", table, "--engine", "spark")
    assert rc == 0, out
    assert out["engine"] == "spark" and out["status"] == "completed" and out["instant"] == plan["instant"]
    # y's slice: its base holds b's first version, after the threshold → split log; b's update
    # (also after it) stays in its log, re-exposed by copy
    assert out["split_log_records"] == 1 and out["logs_remaining"] == 1
    ro = {r["id"]: r["v"] for r in hudi_rs_read(table, read_optimized=True).to_pylist()}
    assert ro == {"a": 7.5}  # b's versions (22:13:20.5Z and later) are both after the threshold
    assert {r["id"]: r["v"] for r in hudi_rs_read(table).to_pylist()} == {"a": 7.5, "b": 8.5}
    rc, st = run_cli(capsys, "status", "--path", table, "--json")
    assert st["threshold"] == "2023-11-14T22:00:00.000Z" and st["last_compaction_instant"] == plan["instant"]
    assert st["remaining_log_files"] == 2 and st["pending_compactions"] == []  # split log + copy
    assert st["min_event_time_ms"] == 1700000000500  # b's first version, now in the split log
    rc, v = run_cli(capsys, "validate", "--path", table)
    assert v["ok"], v
    rc, c = run_cli(capsys, "clean", "--path", table, "--retain-commits", "1")
    assert rc == 0 and c["status"] == "completed"
    assert {r["id"]: r["v"] for r in hudi_rs_read(table).to_pylist()} == {"a": 7.5, "b": 8.5}
    rc, again = run_cli(capsys, "schedule", "--path", table, "--data-latency", "1h",
                        "--compaction-time", "2023-11-14T23:00:00Z")
    assert again["instant"] is None and "not past the last compacted threshold" in again["reason"]
