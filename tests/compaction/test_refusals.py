"""Correctness issue items 4, 6, 8, 9, 10, 11: bad input is a typed error with nothing written,
thresholds are never false, ``validate`` sees damage, retries write nothing new.

Judged by hudi-rs (what a stock reader makes of the table), by fixed values, and by the bytes and
folders of the table before and after a refusal.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.hudi.errors import HudiEtcError, InvalidInputError
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from oracle import hudi_rs_read
from paths import REPO

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
H = 3_600_000


def snapshot(path: Path) -> dict:
    """Every file (bytes, or a symlink's target) and every folder under ``path``."""
    out = {}
    for p in sorted(path.rglob("*")):
        rel = str(p.relative_to(path))
        if p.is_symlink():
            out[rel] = ("link", os.readlink(p))
        elif p.is_dir():
            out[rel] = ("dir",)
        else:
            out[rel] = ("file", p.read_bytes())
    return out


def new_table(path: Path, **kw) -> Path:
    init_table(Storage(str(path)), table_name="trips", record_key="id", precombine_field="ts",
               event_time_field="et", **kw)
    return path


def run_cli(capsys, *args):
    rc = cli_main([str(a) for a in args])
    cap = capsys.readouterr()
    return rc, json.loads(cap.out)


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat().replace("+00:00", "Z")


# ------------------------------------------------------------------ item 4: Avro names
@pytest.mark.parametrize("name", ["my-col", "a.b", "café", "1col", "sp ace"])
def test_column_names_that_are_not_avro_names_are_refused_before_anything_is_written(tmp_path, name):
    path = new_table(tmp_path / "t")
    write_batch(str(path), pa.table({"id": ["a"], "ts": [1], "et": [T0]}))
    before = snapshot(path)
    with pytest.raises(InvalidInputError, match="not a valid Avro name"):
        write_batch(str(path), pa.table({"id": ["b"], "ts": [1], "et": [T0], name: [1]}))
    nested = pa.array([{name: 1}], pa.struct([pa.field(name, pa.int64())]))
    with pytest.raises(InvalidInputError, match="not a valid Avro name"):
        write_batch(str(path), pa.table({"id": ["b"], "ts": [1], "et": [T0], "s": nested}))
    assert snapshot(path) == before
    assert sorted(hudi_rs_read(path).column("id").to_pylist()) == ["a"]
    # not even the rollback of a crashed writer's instant happens first
    (path / ".hoodie" / "20990101000000000.deltacommit.requested").write_bytes(b"")
    before = snapshot(path)
    with pytest.raises(InvalidInputError, match="not a valid Avro name"):
        write_batch(str(path), pa.table({"id": ["b"], "ts": [1], "et": [T0], name: [1]}))
    assert snapshot(path) == before


@pytest.mark.parametrize("field", ["record_key", "precombine_field", "event_time_field", "partition_field"])
def test_init_refuses_key_fields_that_are_not_avro_names(tmp_path, field):
    kw = {"record_key": "id", "precombine_field": "ts", "event_time_field": "et", field: "my-field"}
    with pytest.raises(InvalidInputError, match="not a valid Avro name"):
        init_table(Storage(str(tmp_path / "t")), table_name="trips", **kw)
    assert not (tmp_path / "t").exists() or not any((tmp_path / "t").rglob("*"))


def test_valid_avro_names_are_written_and_read_by_hudi_rs(tmp_path):
    path = new_table(tmp_path / "t")
    write_batch(str(path), pa.table({"id": ["a"], "ts": [1], "et": [T0], "_x9": [7], "CamelCase": ["c"]}))
    rows = hudi_rs_read(path).to_pylist()
    assert [(r["id"], r["_x9"], r["CamelCase"]) for r in rows] == [("a", 7, "c")]


# ------------------------------------------------------------------ item 9: untyped crashes
def test_updating_a_row_with_a_map_column_works_and_hudi_rs_reads_the_update(tmp_path):
    path = new_table(tmp_path / "t")
    mtype = pa.map_(pa.string(), pa.int64())
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1], "et": [T0, T0],
                                     "m": pa.array([[("k", 1)], [("z", 0)]], mtype)}))
    write_batch(str(path), pa.table({"id": ["a"], "ts": [2], "et": [T0 + 1],
                                     "m": pa.array([[("k", 2), ("j", 3)]], mtype)}))
    got = {r["id"]: sorted(r["m"]) for r in hudi_rs_read(path).to_pylist()}
    assert got == {"a": [("j", 3), ("k", 2)], "b": [("z", 0)]}


@pytest.mark.parametrize("value,match", [
    (float("nan"), "NaN or infinite"), (float("inf"), "NaN or infinite"), (-float("inf"), "NaN or infinite"),
    (1e300, "outside years 1..9999"), (2**62, "outside years 1..9999"), (-2**62, "outside years 1..9999"),
])
def test_event_times_that_are_no_time_are_refused(tmp_path, value, match):
    path = new_table(tmp_path / "t")
    before = snapshot(path)
    with pytest.raises(InvalidInputError, match=match):
        write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1], "et": [T0 // 1000, value]}))
    assert snapshot(path) == before


def test_nanosecond_timestamps_are_floored_to_the_microsecond(tmp_path):
    path = new_table(tmp_path / "t")
    ns = [1_700_000_000_123_456_789, -1_500]  # the second one: 1.5 µs before 1970
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1], "et": pa.array(ns, pa.timestamp("ns")),
                                     "x": pa.array(ns, pa.timestamp("ns", tz="Europe/Paris"))}))
    rows = {r["id"]: r for r in hudi_rs_read(path).to_pylist()}
    utc = dt.timezone.utc
    assert rows["a"]["x"] == dt.datetime(2023, 11, 14, 22, 13, 20, 123456, tzinfo=utc)
    assert rows["b"]["x"] == dt.datetime(1969, 12, 31, 23, 59, 59, 999998, tzinfo=utc)
    stats = [s for ss in json.loads(next((path / ".hoodie").glob("*.deltacommit")).read_text())
             ["partitionToWriteStats"].values() for s in ss]
    assert stats[0]["minEventTime"] == -1 and stats[0]["maxEventTime"] == 1_700_000_000_123


def test_date_event_times_are_midnight_utc_and_out_of_range_dates_are_refused(tmp_path):
    path = new_table(tmp_path / "t")
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1],
                                     "et": pa.array([dt.date(1969, 12, 31), dt.date(2026, 1, 1)])}))
    stats = [s for ss in json.loads(next((path / ".hoodie").glob("*.deltacommit")).read_text())
             ["partitionToWriteStats"].values() for s in ss]
    assert (stats[0]["minEventTime"], stats[0]["maxEventTime"]) == (-86_400_000, 1_767_225_600_000)
    before = snapshot(path)
    with pytest.raises(InvalidInputError, match="outside years"):
        write_batch(str(path), pa.table({"id": ["c"], "ts": [1], "et": pa.array([2**31 - 1], pa.date32())}))
    assert snapshot(path) == before


def test_pre_1970_iso_times_with_a_sub_millisecond_part_floor_to_the_millisecond(tmp_path):
    from airflow_hudi_etc.hudi.config.schema import parse_iso_millis

    assert parse_iso_millis("1969-12-31T23:59:59.9995Z") == -1
    assert parse_iso_millis("1969-12-31T23:59:59.000001Z") == -1000
    assert parse_iso_millis("1960-01-01T00:00:00.0005+00:00") == -315_619_200_000
    assert parse_iso_millis("2023-11-14T22:13:20.1239Z") == T0 + 123
    with pytest.raises(InvalidInputError):
        parse_iso_millis("0001-01-01T00:30:00+01:00")
    path = new_table(tmp_path / "t")
    (tmp_path / "b.jsonl").write_text('{"id":"a","ts":1,"et":"1969-12-31T23:59:59.9995Z"}\n')
    from airflow_hudi_etc.hudi.write.writer import read_input

    write_batch(str(path), read_input(str(tmp_path / "b.jsonl")))
    stats = [s for ss in json.loads(next((path / ".hoodie").glob("*.deltacommit")).read_text())
             ["partitionToWriteStats"].values() for s in ss]
    assert stats[0]["minEventTime"] == -1


# ------------------------------------------------------------------ item 10 (writer side)
def test_an_all_null_column_fits_the_table_type(tmp_path):
    path = new_table(tmp_path / "t")
    write_batch(str(path), pa.table({"id": ["a"], "ts": [1], "et": [T0], "v": [1.5]}))
    (tmp_path / "b.jsonl").write_text('{"id":"b","ts":1,"et":1,"v":null}\n{"id":"a","ts":2,"et":2,"v":null}\n')
    from airflow_hudi_etc.hudi.write.writer import read_input

    batch = read_input(str(tmp_path / "b.jsonl"))
    assert pa.types.is_null(batch.schema.field("v").type)
    write_batch(str(path), batch)
    assert {r["id"]: r["v"] for r in hudi_rs_read(path).to_pylist()} == {"a": None, "b": None}
    # a column with values of the wrong type is still refused
    with pytest.raises(InvalidInputError, match="column 'v'"):
        write_batch(str(path), pa.table({"id": ["c"], "ts": [1], "et": [T0], "v": ["text"]}))


@pytest.mark.parametrize("value,ok", [("v1..2", True), ("a.b", True), ("..", False), (".", False),
                                      (".hidden", True), ("a/b", False), ("a\\b", False), ("/x=y", False),
                                      ("x=..", True)])
def test_partition_values_are_refused_only_when_they_are_no_folder_name(tmp_path, value, ok):
    """Hive-style partition folders ``p=<value>``: dots inside a value are fine."""
    path = new_table(tmp_path / "t", partition_field="p")
    before = snapshot(path)
    batch = pa.table({"id": ["a"], "ts": [1], "et": [T0], "p": [value]})
    if not ok:
        with pytest.raises(InvalidInputError, match="folder names"):
            write_batch(str(path), batch)
        assert snapshot(path) == before
        return
    write_batch(str(path), batch)
    rows = hudi_rs_read(path).to_pylist()
    assert [(r["id"], r["p"], r["_hoodie_partition_path"]) for r in rows] == [("a", value, f"p={value}")]


# ------------------------------------------------------------------ item 8: read --as-of
def two_days(tmp_path) -> Path:
    path = new_table(tmp_path / "t")
    utc = dt.timezone.utc
    write_batch(str(path), pa.table({"id": ["a"], "ts": [1], "et": [T0], "v": [1]}),
                now=dt.datetime(2026, 1, 1, 10, 0, 0, tzinfo=utc))
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [2, 2], "et": [T0, T0], "v": [2, 1]}),
                now=dt.datetime(2026, 1, 2, 10, 0, 0, 500_000, tzinfo=utc))
    assert sorted(p.name.split(".")[0] for p in (path / ".hoodie").glob("*.deltacommit")) == [
        "20260101100000000", "20260102100000500"]
    return path


@pytest.mark.parametrize("as_of,instant,expect", [
    ("2026-01-02", "20260102000000000", {"a": 1}),
    ("2026-01-03", "20260103000000000", {"a": 2, "b": 1}),
    ("2026-01-02 10:00:00", "20260102100000000", {"a": 1}),
    ("2026-01-02 10:00:00.500", "20260102100000500", {"a": 2, "b": 1}),
    ("20260102100000500", "20260102100000500", {"a": 2, "b": 1}),
    ("20260102100000499", "20260102100000499", {"a": 1}),
    ("20260102100000", "20260102100000", {"a": 1}),  # 14 digits: compared as given, as Hudi does
    ("20260102100001", "20260102100001", {"a": 2, "b": 1}),
])
def test_as_of_takes_the_formats_hudi_takes(tmp_path, capsys, as_of, instant, expect):
    path = two_days(tmp_path)
    rc, out = run_cli(capsys, "read", "--path", path, "--as-of", as_of, "--output", tmp_path / "o.parquet")
    assert rc == 0 and out["as_of"] == instant
    ours = {r["id"]: r["v"] for r in pq.read_table(tmp_path / "o.parquet").to_pylist()}
    theirs = {r["id"]: r["v"] for r in hudi_rs_read(path, as_of=instant).to_pylist()}
    assert ours == theirs == expect


@pytest.mark.parametrize("as_of", ["garbage", "2026-01-02T10:00:00", "2026-13-01", "20261301000000", "",
                                   "2026-01-02 10:00", " 2026-01-02", "1767348000000"])
def test_as_of_refuses_anything_else(tmp_path, capsys, as_of):
    path = two_days(tmp_path)
    out_file = tmp_path / "o.parquet"
    rc, out = run_cli(capsys, "read", "--path", path, "--as-of", as_of, "--output", out_file)
    assert rc == 2 and out["error"]["code"] == "invalid_input" and "yyyy-MM-dd" in out["error"]["message"]
    assert not out_file.exists()


# ------------------------------------------------------------------ item 9: reads of damaged tables, CLI
def test_a_truncated_base_file_or_a_deleted_link_target_is_a_typed_read_error(tmp_path, capsys):
    from airflow_hudi_etc.hudi.table.hudi_table import HudiTable

    path = two_days(tmp_path)
    base = next(path.glob("*.parquet"))
    data = base.read_bytes()
    base.write_bytes(data[: len(data) // 2])
    rc, out = run_cli(capsys, "read", "--path", path, "--output", tmp_path / "o.parquet")
    assert rc == 2 and out["error"]["code"] == "corrupt_data_file" and base.name in out["error"]["message"]
    assert not (tmp_path / "o.parquet").exists()
    base.write_bytes(data)
    log = next(path.glob(".*.log.*"))
    moved = tmp_path / "moved"
    os.rename(log, moved)
    os.symlink(str(moved), log)
    assert HudiTable.load(str(path)).read().num_rows == 2  # through the link
    os.unlink(moved)
    with pytest.raises(HudiEtcError) as e:
        HudiTable.load(str(path)).read()
    assert e.value.code == "missing_data_file" and log.name in str(e.value)


@pytest.mark.parametrize("damage", ["truncated", "footer"])
@pytest.mark.parametrize("operation", ["upsert", "delete"])
def test_a_write_over_a_damaged_base_file_is_a_typed_refusal(tmp_path, capsys, damage, operation):
    """The latest base file truncated (or its footer overwritten): ``write`` (upsert, delete)
    gives ``corrupt_data_file`` naming it, as ``read`` does, exit 2, and writes nothing."""
    path = two_days(tmp_path)
    base = next(path.glob("*.parquet"))
    data = base.read_bytes()
    base.write_bytes(data[: len(data) // 2] if damage == "truncated" else data[:-12] + b"\xff" * 12)
    inp = tmp_path / "in.jsonl"
    inp.write_text(json.dumps({"id": "a", "ts": 3, "et": T0, "v": 3}) + "\n")
    before = snapshot(path)
    rc, out = run_cli(capsys, "write", "--path", path, "--input", inp, "--operation", operation)
    assert rc == 2 and out["error"]["code"] == "corrupt_data_file" and base.name in out["error"]["message"], out
    assert snapshot(path) == before


@pytest.mark.parametrize("output", ["missing-folder/o.parquet", "a-file/o.parquet", "."])
def test_an_unwritable_output_is_refused_before_reading(tmp_path, capsys, output):
    path = two_days(tmp_path)
    (tmp_path / "a-file").write_text("x")
    os.chdir(tmp_path)
    rc, out = run_cli(capsys, "read", "--path", path, "--output", output)
    assert rc == 2 and out["error"]["code"] == "invalid_input" and "--output" in out["error"]["message"]


def test_an_unwritable_report_folder_is_a_typed_error(tmp_path, capsys):
    path = two_days(tmp_path)
    (tmp_path / "a-file").write_text("x")
    rc, out = run_cli(capsys, "report", "--path", path, "--output", tmp_path / "a-file" / "sub")
    assert rc == 2 and out["error"]["code"] == "invalid_input" and "cannot write it" in out["error"]["message"]
    assert (tmp_path / "a-file").read_text() == "x"


def _cli_env() -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}


def test_a_closed_stdout_ends_the_command_quietly(tmp_path):
    """``hudi-etc ... | head``: the reader is gone before the JSON is written."""
    path = two_days(tmp_path)
    r, w = os.pipe()
    os.close(r)  # the reader went away: every write to w fails with EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", "status", "--path", str(path)],
                              stdout=w, stderr=subprocess.PIPE, env=_cli_env(), timeout=120)
    finally:
        os.close(w)
    assert proc.returncode == 141, proc.stderr.decode()
    assert b"Traceback" not in proc.stderr and b"Exception ignored" not in proc.stderr


@pytest.mark.parametrize("args,match", [
    (["init", "--path", "x"], "the following arguments are required"),
    (["frobnicate"], "invalid choice"),
    (["write", "--path", "x", "--input", "y", "--operation", "merge"], "invalid choice"),
    (["clean", "--path", "x", "--retain-commits", "many"], "invalid int value"),
])
def test_argument_errors_print_the_json_error_envelope(capsys, args, match):
    rc, out = run_cli(capsys, *args)
    assert rc == 2
    assert out["error"]["code"] == "invalid_arguments" and out["error"]["type"] == "ArgumentError"
    assert match in out["error"]["message"]


def test_the_spark_job_reports_argument_errors_in_its_result_file(tmp_path, capsys):
    from airflow_hudi_etc.spark.jobs import main as job_main

    result = tmp_path / "r.json"
    assert job_main(["--result-file", str(result), "schedule", "--path", "x"]) == 2  # no --data-latency
    err = json.loads(result.read_text())["error"]
    assert err["code"] == "invalid_arguments" and "--data-latency" in err["message"]


def test_help_still_prints_help(capsys):
    with pytest.raises(SystemExit) as e:
        cli_main(["--help"])
    assert e.value.code == 0 and "reset-threshold" in capsys.readouterr().out


# ------------------------------------------------------------------ item 11: leftovers and retries
def test_a_refused_or_committed_write_leaves_no_marker_folder(tmp_path):
    path = new_table(tmp_path / "t")
    write_batch(str(path), pa.table({"id": ["a"], "ts": [1], "et": [T0], "v": [1]}))
    assert not list((path / ".hoodie" / ".temp").iterdir())
    before = snapshot(path)
    import airflow_hudi_etc.hudi.write.writer as w

    real = w.write_unit

    def failing(unit):
        real(unit)
        raise OSError("disk full (injected)")

    w.write_unit = failing
    try:
        with pytest.raises(OSError, match="injected"):
            write_batch(str(path), pa.table({"id": ["b"], "ts": [1], "et": [T0], "v": [1]}))
    finally:
        w.write_unit = real
    assert snapshot(path) == before  # folders included: no .hoodie/.temp/<instant>/


def test_retried_rollbacks_add_no_rollback_instant(tmp_path):
    from airflow_hudi_etc.compaction.execution import execute
    from airflow_hudi_etc.compaction.lifecycle import rollback
    from airflow_hudi_etc.compaction.scheduling import schedule

    path = new_table(tmp_path / "t")
    write_batch(str(path), pa.table({"id": ["a"], "ts": [1], "et": [T0], "v": [1]}))
    write_batch(str(path), pa.table({"id": ["a"], "ts": [2], "et": [T0], "v": [2]}))
    plan = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 2 * H)).instant
    assert plan
    before = snapshot(path)
    for _ in range(3):  # a plan never executed: nothing to roll back
        assert rollback(str(path), instant=plan) == {"instant": plan, "status": "requested", "files_removed": 0,
                                                     "rollback_instant": None}
    assert snapshot(path) == before
    from airflow_hudi_etc.hudi import crash

    def crash_here(point):
        raise RuntimeError("crash (injected)")

    with crash.hooked("execute.before-commit", crash_here), pytest.raises(RuntimeError):
        execute(str(path))
    first = rollback(str(path), instant=plan)
    assert first["files_removed"] > 0 and first["rollback_instant"]
    after_first = snapshot(path)
    again = rollback(str(path), instant=plan)
    assert again["files_removed"] == 0 and again["rollback_instant"] is None
    assert snapshot(path) == after_first
    assert len(list((path / ".hoodie").glob("*.rollback"))) == 1


# ------------------------------------------------------------------ item 10: validate sees damage
def compacted_table(tmp_path) -> Path:
    from airflow_hudi_etc.compaction.execution import execute
    from airflow_hudi_etc.compaction.scheduling import schedule

    path = new_table(tmp_path / "t", partition_field="p")
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1], "et": [T0, T0], "p": ["x", "y"]}))
    write_batch(str(path), pa.table({"id": ["a"], "ts": [2], "et": [T0 + H], "p": ["x"]}))
    write_batch(str(path), pa.table({"id": ["b"], "ts": [2], "et": [T0 + 5 * H], "p": ["y"]}))
    assert schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 3 * H)).instant
    assert execute(str(path))["status"] == "completed"
    write_batch(str(path), pa.table({"id": ["a"], "ts": [3], "et": [T0 + 6 * H], "p": ["x"]}))
    return path


def problems(path) -> list[tuple[str, str]]:
    from airflow_hudi_etc.compaction.validate import validate

    r = validate(str(path))
    assert r["ok"] == (not r["problems"])
    return sorted((p["kind"], p["path"]) for p in r["problems"])


def test_validate_reports_a_deleted_log_a_truncated_base_and_a_corrupt_commit(tmp_path):
    path = compacted_table(tmp_path)
    assert problems(path) == []
    current_log = max((p for p in path.rglob(".*.log.*") if not p.is_symlink()), key=lambda p: p.stat().st_mtime)
    current_log.unlink()
    assert problems(path) == [("missing-file", str(current_log.relative_to(path)))]

    path = compacted_table(tmp_path / "2")
    base = max(path.rglob("*.parquet"), key=lambda p: p.name.rsplit("_", 1)[1])  # the compaction's
    base.write_bytes(base.read_bytes()[:-20])
    assert problems(path) == [("corrupt-base", str(base.relative_to(path)))]

    path = compacted_table(tmp_path / "3")
    commit = sorted((path / ".hoodie").glob("*.deltacommit"))[1]
    commit.write_bytes(commit.read_bytes()[:40])
    assert problems(path) == [("corrupt-instant", f".hoodie/{commit.name}")]


# ------------------------------------------------------------------ item 6: no false thresholds
def test_a_compaction_time_in_the_future_is_refused_with_the_allowed_skew(tmp_path, monkeypatch):
    from airflow_hudi_etc.compaction.scheduling import schedule

    path = new_table(tmp_path / "t")
    write_batch(str(path), pa.table({"id": ["a"], "ts": [1], "et": [T0]}))
    write_batch(str(path), pa.table({"id": ["a"], "ts": [2], "et": [T0]}))
    before = snapshot(path)
    now = dt.datetime.now(dt.timezone.utc)
    for ahead, latency in ((dt.timedelta(minutes=10), "0s"), (dt.timedelta(days=1), "2h"),
                           (dt.timedelta(days=365 * 900), "1h")):
        with pytest.raises(InvalidInputError, match=r"in the future .*allowed clock skew 0:05:00"):
            schedule(str(path), data_latency=latency, compaction_time=(now + ahead).isoformat())
    monkeypatch.setenv("HUDI_ETC_MAX_CLOCK_SKEW", "30s")
    with pytest.raises(InvalidInputError, match="allowed clock skew 0:00:30"):
        schedule(str(path), data_latency="0s", compaction_time=(now + dt.timedelta(minutes=2)).isoformat())
    for bad in ("999999999999d", "100000000h"):
        with pytest.raises(InvalidInputError):
            schedule(str(path), data_latency=bad)
    with pytest.raises(InvalidInputError, match="before year 1"):
        schedule(str(path), data_latency="1h", compaction_time="0001-01-01T00:00:00Z")
    assert snapshot(path) == before
    monkeypatch.delenv("HUDI_ETC_MAX_CLOCK_SKEW")
    # within the skew is fine (another machine's clock a little ahead)
    assert schedule(str(path), data_latency="0s", compaction_time=(now + dt.timedelta(minutes=4)).isoformat()).instant


def test_a_threshold_published_by_mistake_is_withdrawn_with_reset_threshold(tmp_path, capsys, monkeypatch):
    from airflow_hudi_etc.compaction.metrics import table_metrics
    from airflow_hudi_etc.compaction.execution import execute
    from airflow_hudi_etc.compaction.scheduling import schedule
    from airflow_hudi_etc.hudi.timeline.active import parse_instant_time

    path = new_table(tmp_path / "t")
    now = dt.datetime.now(dt.timezone.utc)
    now_ms = int(now.timestamp() * 1000)
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1], "et": [now_ms - 48 * H] * 2, "v": [1, 1]}))
    write_batch(str(path), pa.table({"id": ["a"], "ts": [2], "et": [now_ms - 47 * H], "v": [2]}))
    # an older release (or a wrong clock) published a threshold 30 days ahead
    monkeypatch.setenv("HUDI_ETC_MAX_CLOCK_SKEW", "3650d")
    false = schedule(str(path), data_latency="1h", compaction_time=(now + dt.timedelta(days=30)).isoformat())
    monkeypatch.delenv("HUDI_ETC_MAX_CLOCK_SKEW")
    assert execute(str(path))["status"] == "completed"
    c = false.instant
    # a late record, event time 10 hours ago, arrives: the false threshold hides it from RO forever
    write_batch(str(path), pa.table({"id": ["b"], "ts": [3], "et": [now_ms - 10 * H], "v": [3]}))
    blocked = schedule(str(path), data_latency="1h")
    assert blocked.instant is None and "not past the last compacted threshold" in blocked.reason

    aux = path / ".hoodie" / ".aux"
    rc, out = run_cli(capsys, "reset-threshold", "--path", path, "--to", iso(now_ms + H))
    assert rc == 2 and out["error"]["code"] == "invalid_input"  # future
    rc, out = run_cli(capsys, "reset-threshold", "--path", path, "--instant", "20200101000000000")
    assert rc == 2 and "not '20200101000000000'" in out["error"]["message"]
    timeline_before = sorted(p.name for p in (path / ".hoodie").iterdir())
    rc, out = run_cli(capsys, "reset-threshold", "--path", path)
    # default: the threshold it could claim when it ran, its instant time minus its data latency
    truthful = int(parse_instant_time(c).timestamp() * 1000) - H
    assert rc == 0 and out["status"] == "reset" and out["threshold_ms"] == truthful
    assert out["published_threshold_ms"] == false.threshold_ms and out["instant"] == c
    assert sorted(p.name for p in (path / ".hoodie").iterdir()) == timeline_before  # nothing on the timeline
    after = snapshot(aux)
    rc, again = run_cli(capsys, "reset-threshold", "--path", path)  # a retry
    assert rc == 0 and again["status"] == "unchanged" and again["threshold_ms"] == truthful
    rc, out = run_cli(capsys, "reset-threshold", "--path", path, "--to", iso(truthful + 1))
    assert rc == 2 and "only lowers" in out["error"]["message"]
    assert snapshot(aux) == after
    assert table_metrics(str(path))["threshold_ms"] == truthful

    # the next compaction goes ahead and RO gets the late record (judged by hudi-rs)
    res = schedule(str(path), data_latency="1h")
    assert res.instant and res.threshold_ms > truthful
    assert execute(str(path))["status"] == "completed"
    ro = {r["id"]: r["v"] for r in hudi_rs_read(path, read_optimized=True).to_pylist()}
    assert ro == {"a": 2, "b": 3}
    assert table_metrics(str(path))["threshold_ms"] == res.threshold_ms


@pytest.mark.spark
def test_sync_catalog_republishes_a_withdrawn_threshold(tmp_path):
    """The catalog never moves a threshold back, except one of the same compaction lowered by
    reset-threshold. Three JVM starts (a real embedded-Derby Hive metastore)."""
    import airflow_table as at
    from airflow_hudi_etc.compaction.execution import execute
    from airflow_hudi_etc.compaction.scheduling import schedule
    from airflow_hudi_etc.compaction.threshold_reset import reset_threshold
    from scenario import cli

    table, metastore = tmp_path / "trips", tmp_path / "metastore"
    at.build(table)
    planned = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    assert execute(str(table), instant=planned.instant)["status"] == "completed"
    args = ("sync-catalog", "--path", table, "--database", "reset_db", "--table", "trips",
            "--metastore-dir", metastore)
    first = json.loads(cli(*args).stdout)
    assert (first["status"], first["threshold_ms"]) == ("updated", at.THRESHOLD_MS)
    lower = at.THRESHOLD_MS - 3 * H
    assert reset_threshold(str(table), to=iso(lower))["status"] == "reset"
    second = json.loads(cli(*args).stdout)
    assert (second["status"], second["previous_threshold_ms"], second["threshold_ms"], second["instant"]) == (
        "updated", at.THRESHOLD_MS, lower, planned.instant)
    third = json.loads(cli(*args).stdout)
    assert (third["status"], third["reason"], third["previous_threshold_ms"]) == ("unchanged", "already synced", lower)


@pytest.mark.parametrize("damage", ["truncated base", "deleted log", "dangling link"])
def test_execute_refuses_a_plan_whose_inputs_are_damaged_before_writing_anything(tmp_path, damage):
    from airflow_hudi_etc.compaction.execution import execute
    from airflow_hudi_etc.compaction.scheduling import schedule

    path = new_table(tmp_path / "t")
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1], "et": [T0, T0]}))
    write_batch(str(path), pa.table({"id": ["a"], "ts": [2], "et": [T0 + H]}))
    assert schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 3 * H)).instant
    base, log = next(path.glob("*.parquet")), next(path.glob(".*.log.*"))
    if damage == "truncated base":
        base.write_bytes(base.read_bytes()[:-30])
    elif damage == "deleted log":
        log.unlink()
    else:
        os.unlink(log)
        os.symlink(".gone.log.1_0-1-0", log)  # relative, inside the table, target missing
    before = snapshot(path)
    with pytest.raises(HudiEtcError) as e:
        execute(str(path))
    assert e.value.code == ("corrupt_data_file" if damage == "truncated base" else "missing_data_file")
    assert snapshot(path) == before  # no inflight file, no base file


@pytest.mark.parametrize("ms,text", [
    (-1, "1969-12-31T23:59:59.999Z"), (50_108_473_451_548, "3557-11-16T04:24:11.548Z"),
    (253_402_300_799_999, "9999-12-31T23:59:59.999Z"), (-62_135_596_800_000, "0001-01-01T00:00:00.000Z"),
    (10**18, None),
])
def test_iso_ms_is_exact_to_the_millisecond(ms, text):
    from airflow_hudi_etc.hudi.config.schema import parse_iso_millis
    from airflow_hudi_etc.hudi.index.stats import iso_ms

    assert iso_ms(ms) == text
    if text is not None:
        assert parse_iso_millis(text) == ms
