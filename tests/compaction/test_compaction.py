"""Event-time partial compaction, judged by hudi-rs and the hand-written model."""

from __future__ import annotations

import os

import pyarrow as pa
import pytest

from airflow_hudi_etc.compaction import base_merge
from airflow_hudi_etc.hudi.logformat import avro_arrow
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.lifecycle import rollback, unschedule
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.write.writer import LocalEngine, write_batch
from model import random_history
from oracle import hudi_rs_read
from batches import DATA_COLS, batch, run_history
from compaction_checks import assert_updates_after_compaction_find_their_file_group, check_ro_guarantee, expected_exact_ro
from faults import SecondTaskFails
from reading import iso, snapshot_by_key

SLOW = pytest.mark.slow


def _versions(ci6, slow6, ci8=(), slow8=(), ci9=(), slow9=()):
    """(seed, table version) parameters: the CI ones, and the rest behind ``slow``."""
    out = []
    for v, ci, slow in ((6, ci6, slow6), (8, ci8, slow8), (9, ci9, slow9)):
        out += [pytest.param(s, v, id=f"{s}-v{v}") for s in ci]
        out += [pytest.param(s, v, marks=SLOW, id=f"{s}-v{v}") for s in slow]
    return out


@pytest.mark.parametrize("seed,version", _versions(range(30), range(30, 130), range(4), range(4, 40), range(2),
                                                   range(2, 30)))
def test_partial_compaction_keeps_snapshot_and_guarantees_ro(tmp_path, seed, version, monkeypatch):
    link_mode = "copy" if seed % 2 or version != 6 else "symlink"
    # the new base file is written as a stream: batches of the old base and row groups of the
    # new one as small as a row, or the whole file at once
    monkeypatch.setattr(base_merge, "BATCH_ROWS", (1, 3, 65_536)[seed % 3])
    monkeypatch.setattr(base_merge, "ROW_GROUP_BYTES", (1, 32 << 20)[seed % 2])
    monkeypatch.setattr(avro_arrow, "MIN_RECORDS", (0, 128)[seed % 4 // 2])  # small Avro blocks column-wise too
    payload = "event-time-ordering" if seed % 3 == 2 else "overwrite-latest"
    # ordering values grow over time: with decreasing ones Hudi's own answers depend on when
    # compaction runs (see test_merge_rules), for stock compaction as much as for ours
    path, model = run_history(tmp_path, seed, partitioned=seed % 2 == 0, payload=payload, batches=6, monotone=True,
                              table_version=version, exclusive_cleaner=link_mode == "symlink")
    history = random_history(seed, 6, monotone_ordering=True)
    before = snapshot_by_key(path)
    assert before == {k: {c: v[c] for c in DATA_COLS} for k, v in model.snapshot().items()}
    t0 = 1_700_000_000_000
    compaction_time = iso(t0 + 4 * 3_600_000)
    res = schedule(str(path), data_latency="1h", compaction_time=compaction_time, link_mode=link_mode)
    threshold = t0 + 3 * 3_600_000
    assert res.threshold_ms == threshold
    if res.instant is None:
        assert res.reason == "no log file qualifies"
        return
    # a write while the plan is pending lands in slice C after the reserved link versions
    extra = [{"key": "k00000", "ts": 10_000, "event_time": t0, "value": -1.0, "note": "during-plan",
              "region": "a"}]
    write_batch(str(path), batch(extra))
    model.upsert(extra, "key")  # (not in `history`: the guarantee covers what was written before the plan)
    out = execute(str(path))
    assert out["status"] == "completed" and out["threshold_ms"] == threshold
    after = snapshot_by_key(path)
    assert after == {k: {c: v[c] for c in DATA_COLS} for k, v in model.snapshot().items()}
    check_ro_guarantee(path, history, threshold, before)
    # retrying is a no-op; our reader agrees with hudi-rs
    assert execute(str(path))["status"] == "already completed"
    ours = HudiTable.load(str(path)).read()
    assert {r["key"]: r["value"] for r in ours.to_pylist()} == {k: v["value"] for k, v in after.items()}
    links = [p for p in path.rglob(".*.log.*") if p.is_symlink()]
    assert (len(links) > 0) == (link_mode == "symlink" and out["logs_remaining"] > 0)
    assert_updates_after_compaction_find_their_file_group(path, model)


@pytest.mark.parametrize("version", [6, 8])
def test_trigger_refusals(tmp_path, version):
    path, _ = run_history(tmp_path, 3, batches=4, table_version=version)
    t0 = 1_700_000_000_000
    first = schedule(str(path), data_latency="30m", compaction_time=iso(t0 + 10 * 3_600_000))
    assert first.instant
    # the same request again (a retried task): the pending plan it made, nothing written
    retry = schedule(str(path), data_latency="30m", compaction_time=iso(t0 + 10 * 3_600_000))
    assert (retry.instant, retry.reason, retry.operations) == (first.instant, "already scheduled", first.operations)
    assert (first.outcome, retry.outcome) == ("scheduled", "already_scheduled")
    assert len(list((path / ".hoodie" / ("timeline" if version != 6 else "")).glob("*.compaction.requested"))) == 1
    # another threshold, or the same one with other settings: refused while the plan is pending
    again = schedule(str(path), data_latency="30m", compaction_time=iso(t0 + 11 * 3_600_000))
    assert again.instant is None and again.reason.startswith("pending compaction")
    assert (again.outcome, again.pending_instant) == ("pending", first.instant)
    other = schedule(str(path), data_latency="30m", compaction_time=iso(t0 + 10 * 3_600_000), exact_split=True)
    assert other.instant is None and other.reason.startswith("pending compaction")
    execute(str(path))
    same = schedule(str(path), data_latency="30m", compaction_time=iso(t0 + 10 * 3_600_000))
    assert same.instant is None and "not past the last compacted threshold" in same.reason
    assert (same.outcome, same.pending_instant) == ("covered", None)
    nothing = schedule(str(path), data_latency="30m", compaction_time=iso(t0 + 10 * 3_600_000 + 1000))
    assert nothing.instant is None and nothing.reason == "no log file qualifies"
    assert nothing.outcome == "nothing_qualifies"


@pytest.mark.parametrize("version", [6, 8, 9])
def test_rollback_and_unschedule_restore_the_snapshot(tmp_path, version):
    path, model = run_history(tmp_path, 4, batches=6, table_version=version)
    before = snapshot_by_key(path)
    t0 = 1_700_000_000_000
    res = schedule(str(path), data_latency="1h", compaction_time=iso(t0 + 4 * 3_600_000), link_mode="copy")
    assert res.instant
    assert unschedule(str(path), instant=res.instant)["status"] == "unscheduled"
    assert snapshot_by_key(path) == before
    res = schedule(str(path), data_latency="1h", compaction_time=iso(t0 + 4 * 3_600_000), link_mode="copy")
    with pytest.raises(OSError):
        execute(str(path), instant=res.instant, engine=SecondTaskFails())
    assert snapshot_by_key(path) == before  # inflight output is invisible
    out = rollback(str(path), instant=res.instant)
    assert out["status"] == "requested"
    assert rollback(str(path), instant=res.instant)["status"] == "requested"  # idempotent
    assert snapshot_by_key(path) == before
    assert execute(str(path), instant=res.instant)["status"] == "completed"
    assert snapshot_by_key(path) == before


@pytest.mark.parametrize("seed,version", _versions(range(12), range(12, 62), range(3), range(3, 30), range(1),
                                                   range(1, 20)))
def test_exact_split_ro_holds_exactly_the_records_up_to_the_threshold(tmp_path, seed, version):
    link_mode = "copy" if seed % 2 or version != 6 else "symlink"
    payload = "event-time-ordering" if seed % 3 == 2 else "overwrite-latest"
    path, model = run_history(tmp_path, seed, partitioned=seed % 2 == 1, payload=payload, batches=6, monotone=True,
                              table_version=version, exclusive_cleaner=link_mode == "symlink")
    history = random_history(seed, 6, monotone_ordering=True)
    t0 = 1_700_000_000_000
    threshold = t0 + 2 * 3_600_000
    res = schedule(str(path), data_latency="2h", compaction_time=iso(t0 + 4 * 3_600_000), link_mode=link_mode,
                   exact_split=True)
    assert res.instant and res.threshold_ms == threshold
    out = execute(str(path))
    assert out["status"] == "completed" and out["exact_split"] is True
    snap = {k: {c: v[c] for c in DATA_COLS} for k, v in model.snapshot().items()}
    assert snapshot_by_key(path) == snap  # hudi-rs: nothing lost, nothing duplicated
    ro = snapshot_by_key(path, ro=True)
    assert all(r["event_time"] <= threshold for r in ro.values())
    assert ro == expected_exact_ro(history, threshold)
    # late keys whose latest record sits in a compacted log were split off; the rest are in remaining
    # logs. The split log holds, per split key, its records after the threshold and at most one
    # kept version (the one the base holds): bounded by the late rows written plus the late keys
    late_rows = sum(1 for op, rows in history if op == "upsert" for r in rows if r["event_time"] > threshold)
    late_keys = len({r["key"] for op, rows in history if op == "upsert" for r in rows if r["event_time"] > threshold})
    assert out["split_log_records"] <= late_rows + late_keys
    # keys living only in the split log or remaining logs are still found by the next writer
    probe = dict(model.snapshot())
    t = hudi_rs_read(path)
    assert t.num_rows == len(probe)
    # the next compaction moves the threshold on and brings the split-off records in
    later = t0 + 100 * 3_600_000
    res2 = schedule(str(path), data_latency="1h", compaction_time=iso(later + 3_600_000), link_mode=link_mode,
                    exact_split=True)
    if res2.instant is None:  # the first compaction left nothing after its threshold
        assert res2.reason == "no log file qualifies" and out["split_log_records"] == 0
    else:
        execute(str(path))
    assert snapshot_by_key(path) == snap
    assert snapshot_by_key(path, ro=True) == expected_exact_ro(history, later)
    assert_updates_after_compaction_find_their_file_group(path, model)


@pytest.mark.parametrize("link_mode,exact", [("copy", False), ("symlink", False), ("copy", True)])
def test_incremental_and_time_travel_do_not_count_carried_over_records(tmp_path, link_mode, exact):
    """Re-exposed logs (copies, links) and the split log hold old records: hudi-rs incremental
    reads across the compaction see nothing new, time travel before it sees the old slices,
    and our reader agrees with hudi-rs on both."""
    path, model = run_history(tmp_path, 7, partitioned=True, batches=6, monotone=True,
                              exclusive_cleaner=link_mode == "symlink")
    t0 = 1_700_000_000_000
    table = HudiTable.load(str(path))
    last_write = table.timeline.last_completed_write.timestamp
    first_write = table.timeline.completed_writes[0].timestamp
    before = snapshot_by_key(path)
    res = schedule(str(path), data_latency="1h", compaction_time=iso(t0 + 4 * 3_600_000), link_mode=link_mode,
                   exact_split=exact)
    assert res.instant
    execute(str(path))
    carried = HudiTable.carried_over_files(HudiTable.load(str(path)).commit_metadata(res.instant))
    assert carried, "this history leaves logs to re-expose"
    # incremental over the compaction alone: no record changed
    inc = hudi_rs_read(path, start=last_write, end=res.instant)
    assert inc.num_rows == 0
    assert HudiTable.load(str(path)).read_incremental(last_write, res.instant).num_rows == 0
    # incremental from the first write to the compaction: each changed key exactly once
    inc = hudi_rs_read(path, start=first_write, end=res.instant)
    keys = inc.column("key").to_pylist()
    assert len(keys) == len(set(keys))
    ours = HudiTable.load(str(path)).read_incremental(first_write, res.instant)
    assert sorted(ours.column("key").to_pylist()) == sorted(keys)
    # a write after the compaction is the only change in the next incremental window
    write_batch(str(path), batch([{"key": "k00001", "ts": 99_999, "event_time": t0, "value": 1.5, "note": "n",
                                    "region": model.snapshot().get("k00001", {}).get("region", "a")}]))
    after = HudiTable.load(str(path)).timeline.last_completed_write.timestamp
    inc = hudi_rs_read(path, start=res.instant, end=after)
    assert inc.column("key").to_pylist() == ["k00001"]
    assert HudiTable.load(str(path)).read_incremental(res.instant, after).column("key").to_pylist() == ["k00001"]
    # time travel to the last write before the compaction: the snapshot then
    tt = hudi_rs_read(path, as_of=last_write)
    assert {r["key"]: {c: r[c] for c in DATA_COLS} for r in tt.to_pylist()} == before


@pytest.mark.spark
@pytest.mark.parametrize("seed,exact", [(11, False), (12, True)])
def test_execute_on_the_spark_engine(tmp_path, spark, seed, exact):
    """The same per-operation tasks inside Spark executors (session-scoped local SparkSession)."""
    from airflow_hudi_etc.spark.engines import SparkEngine

    path, model = run_history(tmp_path, seed, partitioned=True, batches=6, monotone=True)
    history = random_history(seed, 6, monotone_ordering=True)
    before = snapshot_by_key(path)
    t0 = 1_700_000_000_000
    res = schedule(str(path), data_latency="1h", compaction_time=iso(t0 + 4 * 3_600_000), link_mode="copy",
                   exact_split=exact)
    assert res.instant
    out = execute(str(path), engine=SparkEngine(spark))
    assert out["status"] == "completed" and out["base_files_written"] == res.operations
    assert snapshot_by_key(path) == before
    if exact:
        assert snapshot_by_key(path, ro=True) == expected_exact_ro(history, res.threshold_ms)
    else:
        check_ro_guarantee(path, history, res.threshold_ms, before)


@pytest.mark.parametrize("exact", [False, True])
def test_java_written_table_compacts_through_the_scan_fallback(fixture_copy, exact):
    """Hudi-Java wrote this table with no event-time write stats: event times come from scanning
    the log blocks' ``ts`` column; hudi-rs reads the same snapshot after the compaction."""
    from oracle import assert_same_rows

    from airflow_hudi_etc.api import Table

    path = fixture_copy("v6_trips_8i1u")
    Table(str(path)).configure(java_compaction="off")  # Java wrote it; no Java writer compacts it now
    before = hudi_rs_read(path)
    log_min = 1695046462179  # the only log's record (fixture README / scan)
    no = schedule(str(path), data_latency="0s", compaction_time=iso(log_min - 1), event_time_field="ts")
    assert no.instant is None and no.reason == "no log file qualifies"
    threshold = 1695300000000  # between the log record and the newest base record
    res = schedule(str(path), data_latency="1h", compaction_time=iso(threshold + 3_600_000), event_time_field="ts",
                   link_mode="copy", exact_split=exact)
    assert res.instant and res.threshold_ms == threshold
    plan = __import__("airflow_hudi_etc.compaction.plans", fromlist=["show_plan"]).show_plan(str(path), instant=res.instant)
    assert plan["extra_metadata"]["hoodie.etc.event.time.source"].startswith("scan")
    assert plan["extra_metadata"]["hoodie.etc.event.time.field"] == "ts"
    out = execute(str(path))
    assert out["status"] == "completed"
    # every value the same, the file name meta field aside (a compaction rewrites it, as Java's does)
    assert_same_rows(hudi_rs_read(path), before, columns=[c for c in before.column_names if c != "_hoodie_file_name"])
    ro = hudi_rs_read(path, read_optimized=True)
    ts = sorted(ro.column("ts").to_pylist())
    if exact:
        assert ts == sorted(t for t in before.column("ts").to_pylist() if t <= threshold)
    else:
        assert ts == sorted(before.column("ts").to_pylist())  # every record's slice was compacted
