"""Issue 25 items 1 and 3: schedule reads a kept slice's logs only when they can matter (ordering
facts in our write stats), and logs without write stats are read once (the event-time index
under .hoodie/.aux). Judged by hand-written facts and plans, the model's snapshot, and read counts."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from airflow_hudi_etc.compaction import flips
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.plans import read_plan
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.index import log_index
from airflow_hudi_etc.hudi.index.ordering_facts import STAT_KEY, OrderingFacts, from_json
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from batches import T0, H, batch, iso, row
from model import TableModel, random_history

def table(tmp_path, payload="overwrite-latest"):
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
               payload=payload)
    return path


def write(path, *rows):
    return write_batch(str(path), batch(list(rows)))


def delete(path, *keys):
    return write_batch(str(path), pa.table({"key": list(keys), "region": ["a"] * len(keys)}), operation="delete")


def log_stats(path):
    """path → the write stat of every log our writer committed."""
    t = HudiTable.load(str(path))
    out = {}
    for inst in t.timeline.completed_writes:
        for sts in (t.commit_metadata(inst).get("partitionToWriteStats") or {}).values():
            for st in sts:
                if ".log." in (st.get("path") or ""):
                    out[st["path"]] = st
    return out


class LogReads:
    """Counts reads of log files made while planning (the prefix check's and the scans'; not
    the copies of the re-exposed logs made before the plan is published)."""

    def __init__(self, monkeypatch):
        self.paths: list[str] = []
        self.copying = False
        real = Storage.read_bytes

        def read_bytes(st, rel, *a, **k):
            if ".log." in rel and not self.copying:
                self.paths.append(rel)
            return real(st, rel, *a, **k)

        def copying(real_copy):
            def copy(st, *a, **k):
                self.copying = True
                try:
                    return real_copy(st, *a, **k)
                finally:
                    self.copying = False
            return copy

        monkeypatch.setattr(Storage, "read_bytes", read_bytes)
        for name in ("copy", "stage_copy"):  # (copy mode on local storage stages its copies)
            monkeypatch.setattr(Storage, name, copying(getattr(Storage, name)))


def plan_shape(path, instant):
    plan = read_plan(HudiTable.load(str(path)), instant)
    return sorted((op.file_id, len(op.compact_logs), len(op.links)) for op in plan.operations)


def sched(path, threshold_h, **kw):
    return schedule(str(path), data_latency="1h", compaction_time=iso(T0 + int((threshold_h + 1) * H)), **kw)


# ------------------------------------------------------------------ the facts our writer records
def test_writer_records_each_logs_ordering_facts(tmp_path):
    path = table(tmp_path)
    write(path, row("a", 5, 0), row("b", 5, 0))
    write(path, row("a", 9, 0), row("b", 3, 1))
    delete(path, "b")
    facts = sorted((st["numWrites"], st["numDeletes"], json.dumps(st[STAT_KEY], sort_keys=True))
                   for st in log_stats(path).values())
    assert facts == [(0, 1, '{"data": 0, "deletes": 1, "max": null, "min": null}'),
                     (2, 0, '{"data": 2, "deletes": 0, "max": 9, "min": 3}')]


@pytest.mark.parametrize("bad", [None, 3, {"data": 1}, {"data": -1, "deletes": 0, "min": 1, "max": 2},
                                 {"data": 1, "deletes": 0, "min": 2, "max": 1},
                                 {"data": 1, "deletes": 0, "min": 1, "max": "z"},
                                 {"data": 1, "deletes": 0, "min": None, "max": 1},
                                 {"data": True, "deletes": 0, "min": 1, "max": 2},
                                 {"data": 1, "deletes": 0, "min": [1], "max": [2]},
                                 {"data": 1, "deletes": 0, "min": True, "max": True},
                                 {"data": 1, "deletes": 0, "min": 1, "max": True}])
def test_malformed_facts_are_unknown(bad):
    assert from_json(bad) is None


F = OrderingFacts


@pytest.mark.parametrize("eto,compact,remain,want", [
    (False, [F(2, 0, 1, 5)], [F(2, 0, 5, 9)], False),  # rises (ties do not flip)
    (False, [F(2, 0, 1, 5)], [F(2, 0, 4, 9)], True),  # a remaining value below the prefix's largest
    (False, [F(2, 0, 1, 5)], [F(0, 3, None, None)], False),  # natural-order deletes only
    (False, [F(0, 3, None, None)], [F(2, 0, 1, 2)], False),  # nothing to flip against
    (False, [F(2, 0, 1, 5), None], [F(2, 0, 7, 9)], True),  # unknown: read
    (False, [F(2, 0, 1, 5)], [F(2, 0, "a", "b")], True),  # incomparable: as the read, a flip
    (True, [F(2, 0, 1, 5)], [F(2, 0, 0, 1)], False),  # event-time ordering: no delete in the prefix
    (True, [F(2, 1, 1, 5)], [F(2, 0, 7, 9)], True),  # a delete, and data after it
    (True, [F(2, 1, 1, 5)], [F(0, 2, None, None)], False),  # a delete, but no data after it
])
def test_may_flip_by_hand(eto, compact, remain, want):
    assert flips.may_flip(eto, compact, remain) is want


# ------------------------------------------------------------------ plans, with and without facts
def _hand_tables(tmp_path):
    """(payload, writes, threshold hours, compacted logs per group, reads needed) written by hand."""
    return [
        # rising ordering values: log 1 qualifies, logs 2-3 stay; nothing read
        ("overwrite-latest", [[("a", 5, 0), ("b", 5, 0)], [("a", 6, 0)], [("a", 7, 5)], [("b", 8, 6)]], 2, 1, False),
        # a falls back to 3 after the threshold: the prefix grows by log 2 (read to find out)
        ("overwrite-latest", [[("a", 5, 0), ("b", 5, 0)], [("a", 9, 0), ("b", 6, 0)], [("a", 3, 5)], [("b", 8, 7)]],
         2, 2, True),
        # event-time ordering, falling values, no delete: no extension, nothing read
        ("event-time-ordering", [[("a", 5, 0), ("b", 5, 0)], [("a", 9, 0)], [("a", 3, 5)]], 2, 1, False),
        # event-time ordering, a delete in the prefix and a re-insert after it: read, extended
        ("event-time-ordering", [[("a", 9, 0), ("b", 1, 0)], "delete a", [("a", 3, 5)]], 2, 2, True),
    ]


@pytest.mark.parametrize("case", range(4))
def test_hand_written_plans_and_reads(tmp_path, monkeypatch, case):
    payload, writes, th, n_compact, reads = _hand_tables(tmp_path)[case]
    path = table(tmp_path, payload)
    for w in writes:
        if w == "delete a":
            delete(path, "a")
        else:
            write(path, *[row(k, ts, et) for k, ts, et in w])
    counted = LogReads(monkeypatch)
    calls = []
    real = flips.flip_safe_selection
    monkeypatch.setattr("airflow_hudi_etc.compaction.scheduling.flip_safe_selection",
                        lambda *a: calls.append(1) or real(*a))
    res = sched(path, th)
    assert res.instant, res.reason
    ((_, compacted, _),) = plan_shape(path, res.instant)
    assert compacted == n_compact
    assert bool(calls) is reads
    assert bool(counted.paths) is reads


def _strip_facts(path):
    """The same table as Java would have written it with event-time stats: no ordering facts."""
    hoodie = path / ".hoodie"
    for f in hoodie.glob("*.deltacommit"):
        meta = json.loads(f.read_bytes())
        for sts in meta["partitionToWriteStats"].values():
            for st in sts:
                st.pop(STAT_KEY, None)
        f.write_text(json.dumps(meta))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("payload,monotone", [("overwrite-latest", True), ("overwrite-latest", False),
                                              ("event-time-ordering", False)])
def test_random_histories_plan_as_the_full_read_and_keep_the_models_snapshot(tmp_path, monkeypatch, seed, payload,
                                                                            monotone):
    plans = {}
    for mode in ("facts", "full-read"):
        path = tmp_path / mode / "h"
        path.parent.mkdir()
        init_table(str(path), table_name="h", record_key="key", precombine_field="ts", event_time_field="event_time",
                   partition_field="region", payload=payload)
        model = TableModel("ts", event_time_ordering=payload == "event-time-ordering")
        for op, rows in random_history(seed, 7, monotone_ordering=monotone):
            if op == "upsert":
                write_batch(str(path), batch(rows))
                model.upsert(rows, "key")
            else:
                keys = [r["key"] for r in rows]
                write_batch(str(path), pa.table({"key": keys, "region": [r["region"] for r in rows]}),
                            operation="delete")
                model.delete(keys)
        with monkeypatch.context() as m:
            if mode == "full-read":  # the path before the facts: every kept slice's logs read
                m.setattr("airflow_hudi_etc.compaction.scheduling.may_flip", lambda *a: True)
            calls = []
            real = flips.flip_safe_selection
            m.setattr("airflow_hudi_etc.compaction.scheduling.flip_safe_selection",
                      lambda *a: calls.append(1) or real(*a))
            # the history's wall clock: batch b at t0 + b hours, events up to hours late
            res = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 5 * H))
        if res.instant is None:
            plans[mode] = None
            continue
        plans[mode] = plan_shape(path, res.instant)
        if mode == "facts" and payload == "overwrite-latest" and monotone:
            assert not calls  # ordering values rise with arrival: no slice can flip, none read
        assert execute(str(path))["status"] == "completed"
        snap = HudiTable.load(str(path)).read()
        got = {r["key"]: (r["ts"], r["value"]) for r in snap.to_pylist()}
        assert got == {k: (v["ts"], v["value"]) for k, v in model.snapshot().items()}
    # file ids differ between the two tables (random): compare the multisets of shapes
    shape = [None if p is None else sorted(x[1:] for x in p) for p in (plans["facts"], plans["full-read"])]
    assert shape[0] == shape[1]


# ------------------------------------------------------------------ the event-time index (item 3)
def _java_like(tmp_path, keys=("a", "b", "c")):
    """A table whose logs carry no event-time write stats and no ordering facts (as Java writes
    them without an event-time field): 3 logs per group, ordering values rising."""
    path = table(tmp_path)
    write(path, *[row(k, 1, 0) for k in keys])  # one file group
    for v, et in ((2, 0), (3, 5), (4, 6)):
        write(path, *[row(k, v, et) for k in keys])
    hoodie = path / ".hoodie"
    for f in hoodie.glob("*.deltacommit"):
        meta = json.loads(f.read_bytes())
        for sts in meta["partitionToWriteStats"].values():
            for st in sts:
                if ".log." in st["path"]:
                    st.pop(STAT_KEY, None)
                    st["minEventTime"] = st["maxEventTime"] = None
        f.write_text(json.dumps(meta))
    return path


def _unschedule(path, instant):
    from airflow_hudi_etc.compaction.lifecycle import unschedule

    unschedule(str(path), instant=instant)


def test_logs_without_stats_are_read_once_then_come_from_the_index(tmp_path, monkeypatch):
    path = _java_like(tmp_path)
    logs = sorted(p for p in log_stats(path))
    counted = LogReads(monkeypatch)
    res = sched(path, 2)
    assert res.instant, res.reason
    assert sorted(counted.paths) == logs  # each log read once: its event times and facts together
    shape = plan_shape(path, res.instant)
    assert [x[1:] for x in shape] == [(1, 2)]
    plan = read_plan(HudiTable.load(str(path)), res.instant)
    assert plan.extra["hoodie.etc.event.time.source"] == "scan"
    idx = json.loads((path / log_index.INDEX_PATH).read_bytes())
    assert sorted(idx["logs"]) == logs
    first = [p for p in logs if p.endswith(".log.1_0-1-0")][0]
    assert idx["logs"][first][1:] == [T0, T0, {"data": 3, "deletes": 0, "min": 2, "max": 2}]  # a, b, c at ts 2
    _unschedule(path, res.instant)

    counted.paths.clear()
    res2 = sched(path, 2)
    assert counted.paths == []  # the second schedule over the same logs reads none of them
    assert plan_shape(path, res2.instant) == shape


@pytest.mark.parametrize("damage", ["garbage", "other-field", "size", "entry"])
def test_a_lost_damaged_or_stale_index_is_not_trusted(tmp_path, monkeypatch, damage):
    path = _java_like(tmp_path)
    logs = sorted(log_stats(path))
    res = sched(path, 2)
    shape = plan_shape(path, res.instant)
    _unschedule(path, res.instant)
    f = path / log_index.INDEX_PATH
    idx = json.loads(f.read_bytes())
    # a false entry for log 3 (event time 5 h: it stays out of the plan) that claims day 0
    third = [p for p in logs if p.endswith(".log.3_0-1-0")][0]
    if damage == "garbage":
        f.write_bytes(b"{not json")
    elif damage == "other-field":
        idx["eventTimeField"] = "other"
        idx["logs"][third][1:3] = [T0, T0]
        f.write_text(json.dumps(idx))
    elif damage == "size":  # the file grew since (append storage): its entry no longer counts
        idx["logs"][third][0] += 1
        idx["logs"][third][1:3] = [T0, T0]
        f.write_text(json.dumps(idx))
    else:
        idx["logs"][third] = ["x", T0, T0, None]
        f.write_text(json.dumps(idx))
    counted = LogReads(monkeypatch)
    res2 = sched(path, 2)
    assert plan_shape(path, res2.instant) == shape  # log 3 still stays out
    want = logs if damage in ("garbage", "other-field") else [third]
    assert sorted(counted.paths) == want


# ------------------------------------------------------------------ re-exposed logs made by a pool (item 4)
def _many_groups(tmp_path):
    keys = [f"k{i}" for i in range(12)]
    rows = [{**row(k, 1, 0), "region": f"r{i}"} for i, k in enumerate(keys)]  # 12 file groups
    init = tmp_path / "t"
    init_table(str(init), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
               partition_field="region")
    write_batch(str(init), batch(rows))
    for v, et in ((2, 0), (3, 5), (4, 6)):
        write_batch(str(init), batch([{**r, "ts": v, "event_time": T0 + et * H} for r in rows]))
    return init


@pytest.mark.parametrize("method,local_copy", [("stage_copy", ""), ("copy", "hardlink")])
def test_a_failing_copy_removes_every_link_the_pool_made(tmp_path, monkeypatch, method, local_copy):
    from airflow_hudi_etc.compaction import plans
    from airflow_hudi_etc.hudi.storage import LOCAL_COPY_ENV

    path = _many_groups(tmp_path)
    monkeypatch.setenv(LOCAL_COPY_ENV, local_copy)
    real = getattr(Storage, method)
    seen = []

    def copy(st, src, dst, **k):
        seen.append(dst)
        if len(seen) == 7:
            raise OSError("the store refused")
        return real(st, src, dst, **k)

    monkeypatch.setattr(Storage, method, copy)
    monkeypatch.setenv(plans.LINK_WORKERS_ENV, "4")
    with pytest.raises(OSError, match="refused"):
        sched(path, 2, link_mode="copy")
    assert len(seen) >= 7
    left = [p for p in (path).rglob("*") if "999999999-0-0" in p.name or ".hudi-etc-tmp" in p.name]
    assert left == []
    assert not list((path / ".hoodie").glob("*.compaction.requested"))
    monkeypatch.setattr(Storage, method, real)
    res = sched(path, 2, link_mode="copy")  # and a schedule after it makes the 24 copies
    assert res.instant and sum(x[2] for x in plan_shape(path, res.instant)) == 24
    assert len([p for p in path.rglob("*") if "999999999-0-0" in p.name]) == 24


def test_a_failing_rename_removes_the_renamed_and_the_staged(tmp_path, monkeypatch):
    """Staged copies (copy mode, local): a rename that fails after some went through leaves no
    copy under its final name and no staged file; the next schedule makes all 24 again."""
    path = _many_groups(tmp_path)
    real = Storage.promote_staged
    seen = []

    def promote(st, staged, final, **k):
        assert st.exists(staged)
        if not seen:  # every copy is staged before the first rename: none under its final name yet
            assert not list(path.rglob("*999999999-0-0")) and len(list(path.rglob(".hudi-etc-tmp-*"))) == 24
        seen.append(final)
        if len(seen) == 5:
            raise OSError("rename refused")
        return real(st, staged, final, **k)

    monkeypatch.setattr(Storage, "promote_staged", promote)
    with pytest.raises(OSError, match="rename refused"):
        sched(path, 2, link_mode="copy")
    left = [p for p in path.rglob("*") if "999999999-0-0" in p.name or ".hudi-etc-tmp" in p.name]
    assert left == [] and len(seen) == 5
    assert not list((path / ".hoodie").glob("*.compaction.requested"))
    monkeypatch.setattr(Storage, "promote_staged", real)
    res = sched(path, 2, link_mode="copy")
    assert res.instant and len([p for p in path.rglob("*") if "999999999-0-0" in p.name]) == 24


@pytest.mark.parametrize("workers", ["1", "4"])
def test_the_recheck_remakes_only_the_copies_that_went(tmp_path, monkeypatch, workers):
    # the post-publish re-check lists each folder once and makes only what is missing there
    from airflow_hudi_etc.compaction import plans

    path = _many_groups(tmp_path)
    monkeypatch.setenv(plans.LINK_WORKERS_ENV, workers)
    res = sched(path, 2, link_mode="copy")
    storage = Storage(str(path))
    plan = read_plan(HudiTable.load(str(path)), res.instant)
    files = plans.plan_link_files(plan)
    assert len(files) == 24
    gone = [files[0], files[7], files[23]]
    for rel, _ in gone:
        storage.delete(rel)
    made = plans.create_links(storage, plan, "copy", missing_only=True)
    assert sorted(made) == sorted(rel for rel, _ in gone)
    assert all(storage.read_bytes(rel) == storage.read_bytes(target) for rel, target in files)
    assert plans.create_links(storage, plan, "copy", missing_only=True) == []
    with pytest.raises(Exception, match="exists"):  # without missing_only a present name is a conflict
        plans.create_links(storage, plan, "copy")
    assert all(storage.exists(rel) for rel, _ in files)  # and that conflict removed nothing it did not make


# ------------------------------------------------------------------ the scan on the job's engine (item 3)
class _FakeSpark:
    """What SparkEngine uses of a SparkSession (sparkContext.parallelize(...).map(fn).collect()),
    run in this process; records every map."""

    def __init__(self):
        self.sparkContext = self
        self.defaultParallelism = 2
        self.maps: list[tuple[object, list]] = []

    def parallelize(self, items, slices):
        outer = self

        class _RDD:
            def map(self, fn):
                outer.maps.append((fn, list(items)))
                return type("_Mapped", (), {"collect": lambda _self: [fn(x) for x in items]})()

        return _RDD()


def test_the_schedule_job_scans_on_the_jobs_engine(tmp_path, monkeypatch):
    # the spark job runs the CLI's command with its SparkSession: the scan of the logs without
    # stats goes through that session (one map over every log); the plan is the local scan's
    from airflow_hudi_etc import cli
    from airflow_hudi_etc.contract import build_parser
    from airflow_hudi_etc.hudi.index.stats import LogScanner

    path = _java_like(tmp_path)
    logs = sorted(p for p in log_stats(path))
    spark = _FakeSpark()
    argv = ["schedule", "--path", str(path), "--data-latency", "1h", "--compaction-time", iso(T0 + 3 * H)]
    out = cli.run_command(build_parser().parse_args(argv), argv, spark_session=spark)
    assert out["instant"], out
    scans = [items for fn, items in spark.maps if isinstance(fn, LogScanner)]  # (the engine's own probes aside)
    assert len(scans) == 1 and sorted(scans[0]) == logs
    assert [x[1:] for x in plan_shape(path, out["instant"])] == [(1, 2)]  # as the local scan's plan
    spark.maps.clear()
    _unschedule(path, out["instant"])
    out = cli.run_command(build_parser().parse_args(argv), argv, spark_session=spark)
    assert out["instant"] and not [fn for fn, _ in spark.maps if isinstance(fn, LogScanner)]  # all in the index now
