"""Correctness issue items 5 and 7: exact split after a plain compaction, several exact-split rounds,
and overwrite-latest tables whose ordering values fall while a compaction is planned. Each history
is written by hand with the RO/snapshot it must give, judged by hudi-rs (and, where hudi-rs follows
Hudi 1.x instead of 0.14, by our reader against the fixed values)."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from airflow_hudi_etc.compaction.execution import execute

from airflow_hudi_etc.compaction.plans import show_plan

from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.validate import validate
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from oracle import hudi_rs_read
from batches import batch

T0 = 1_700_000_000_000
H = 3_600_000


def iso(ms):
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()


def row(key, ts, et_h, note=""):
    return {"key": key, "ts": ts, "event_time": T0 + int(et_h * H), "value": float(ts), "note": note, "region": "a"}


def table(tmp_path, payload="overwrite-latest"):
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
               payload=payload, exclusive_cleaner=True)  # link modes are explicit here (symlink needs the promise)
    return path


def write(path, *rows):
    write_batch(str(path), batch(list(rows)))


def compact(path, threshold_h, *, exact, link_mode="copy"):
    """Schedule (threshold = T0 + threshold_h hours) and execute; returns the plan instant."""
    res = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + int((threshold_h + 1) * H)),
                   exact_split=exact, link_mode=link_mode)
    assert res.instant, res.reason
    assert execute(str(path))["status"] == "completed"
    assert validate(str(path))["ok"]
    return res.instant


def ts_by_key(t):
    return {r["key"]: r["ts"] for r in t.to_pylist()} if t.num_rows else {}


def rs(path, ro=False):
    return ts_by_key(hudi_rs_read(path, read_optimized=ro))


def ours(path, ro=False):
    return ts_by_key(HudiTable.load(str(path)).read(read_optimized=ro))


@pytest.mark.parametrize("link_mode", ["copy", "symlink"])
def test_item5_exact_split_after_a_plain_compaction_keeps_the_key_in_ro(tmp_path, link_mode):
    path = table(tmp_path)
    write(path, row("a", 1, 0), row("b", 1, 0))  # inserts: a base file
    write(path, row("a", 2, 5), row("b", 2, 1))  # one log, min event time 1h
    compact(path, 2, exact=False, link_mode=link_mode)  # plain: the base now holds a@2 (event time 5h)
    assert rs(path, ro=True) == {"a": 2, "b": 2}
    write(path, row("b", 3, 3))  # a log to compact at the next threshold
    compact(path, 4, exact=True, link_mode=link_mode)
    # a's last update with event time <= 4h is a@1, folded into a@2 by the plain compaction: RO must
    # keep a version at least that new (a@2, the only one left), never drop the key
    assert rs(path) == {"a": 2, "b": 3}
    assert rs(path, ro=True) == {"a": 2, "b": 3}


def test_item5_exact_split_after_a_plain_compaction_without_logs(tmp_path):
    """The plain compaction's base holds a late record and its slice has no log at all."""
    path = table(tmp_path)
    write(path, row("a", 1, 0), row("y", 1, 0))
    write(path, row("a", 2, 6), row("y", 2, 1))
    compact(path, 2, exact=False)  # the base holds a@2 (6h); no log is left in its slice
    write(path, row("z", 1, 0))  # another file group, to give the exact round a log
    write(path, row("z", 2, 1))
    compact(path, 4, exact=True)
    assert rs(path) == {"a": 2, "y": 2, "z": 2}
    assert rs(path, ro=True) == {"a": 2, "y": 2, "z": 2}


@pytest.mark.parametrize("link_mode", ["copy", "symlink"])
@pytest.mark.parametrize("payload", ["overwrite-latest", "event-time-ordering"])
def test_item5_several_exact_split_rounds_keep_the_latest_version_up_to_each_threshold(tmp_path, link_mode, payload):
    _several_exact_split_rounds(tmp_path, link_mode, payload, rs)


def _several_exact_split_rounds(tmp_path, link_mode, payload, read):
    path = table(tmp_path, payload)
    write(path, row("a", 1, 0), row("c", 1, 0))
    write(path, row("a", 2, 3), row("c", 2, 0))
    write(path, row("a", 3, 6), row("c", 3, 0))
    compact(path, 1, exact=True, link_mode=link_mode)
    assert read(path, ro=True) == {"a": 1, "c": 3}
    write(path, row("c", 4, 2))
    compact(path, 4, exact=True, link_mode=link_mode)
    # a@2 (event time 3h) is the latest version <= 4h; a@3 stays out of the base
    assert read(path, ro=True) == {"a": 2, "c": 4}
    assert read(path) == {"a": 3, "c": 4}
    write(path, row("c", 5, 5))
    compact(path, 7, exact=True, link_mode=link_mode)
    assert read(path, ro=True) == {"a": 3, "c": 5}
    assert read(path) == {"a": 3, "c": 5}


def plan_logs(path, instant):
    ops = show_plan(str(path), instant=instant)["operations"]
    return [(len(op["compact_logs"]), len(op["links"])) for op in ops]


@pytest.mark.parametrize("exact", [False, True])
@pytest.mark.parametrize("link_mode", ["copy", "symlink"])
def test_item7_overwrite_latest_prefix_is_extended_so_no_key_flips(tmp_path, exact, link_mode):
    """Hudi 0.14 rules: a@9 then a@3 in two logs pre-combine to a@9; compacting only the first
    log would let a@3 replace the new base. The plan takes both logs. (hudi-rs 0.5.0 orders this
    payload by commit time, as Hudi 1.x: not the judge here; the fixed values are.)"""
    _overwrite_latest_prefix_extended(tmp_path, exact, link_mode, ours)


def _overwrite_latest_prefix_extended(tmp_path, exact, link_mode, read):
    path = table(tmp_path)
    write(path, row("a", 5, 0), row("b", 5, 0))
    write(path, row("a", 9, 0), row("b", 6, 0))  # log 1: qualifies (event time 0h)
    write(path, row("a", 3, 5), row("b", 7, 6))  # log 2: after the threshold, a falls back to 3
    write(path, row("b", 8, 7))  # log 3: no flip in it (b rises): it stays out
    assert read(path) == {"a": 9, "b": 8}
    inst = compact(path, 2, exact=exact, link_mode=link_mode)
    assert read(path) == {"a": 9, "b": 8}  # execute left the snapshot as it was
    assert plan_logs(path, inst) == [(2, 1)]  # extended by log 2, not log 3
    ro = read(path, ro=True)
    assert ro == ({"a": 9, "b": 6} if exact else {"a": 9, "b": 7})


def test_item7_event_time_ordering_needs_no_extension(tmp_path):
    """DefaultHoodieRecordPayload compares base and log by ordering value too: nothing flips and
    the prefix stays the event-time one; hudi-rs agrees with the fixed values."""
    path = table(tmp_path, "event-time-ordering")
    write(path, row("a", 5, 0), row("b", 5, 0))
    write(path, row("a", 9, 0), row("b", 6, 0))
    write(path, row("a", 3, 5), row("b", 7, 6))
    assert rs(path) == ours(path) == {"a": 9, "b": 7}
    inst = compact(path, 2, exact=False)
    assert plan_logs(path, inst) == [(1, 1)]
    assert rs(path) == ours(path) == {"a": 9, "b": 7}
    assert rs(path, ro=True) == {"a": 9, "b": 6}


def test_item7_event_time_ordering_flips_through_a_delete(tmp_path):
    """Event-time ordering, Hudi 0.14: a re-insert after a delete is merged against the old base
    record, which stays when its ordering value is larger (a@9 hides a@3). Compacting only the
    delete in an exact split would drop a from the base and let a@3 show (a plain compaction keeps
    such a key in the base with its merged record anyway): the plan takes the re-insert's log too."""
    path = table(tmp_path, "event-time-ordering")
    write(path, row("a", 9, 0), row("b", 1, 0))
    write_batch(str(path), pa.table({"key": ["a"], "region": ["a"]}), operation="delete")
    write(path, row("a", 3, 5))
    assert ours(path) == {"a": 9, "b": 1}
    inst = compact(path, 2, exact=True)
    assert ours(path) == {"a": 9, "b": 1}
    assert plan_logs(path, inst) == [(2, 0)]


# ---------------------------------------------------------------- real Java Hudi as the judge
def _java_reader(java):
    def read(path, ro=False):
        from java_checks import java_rows_by_key

        return {k: r["ts"] for k, r in java_rows_by_key(java, path, ro=ro).items()}

    return read


#: the table version these histories use (6) is judged by Hudi 0.14 and 0.15, whose rules the fixed
#: values follow (hudi-rs does not for item 7). CI: one configuration per line; the rest ``slow``
@pytest.mark.java
@pytest.mark.parametrize("line,link_mode,payload", [
    pytest.param(line, lm, pl, marks=() if (line, lm, pl) in {("0.14", "copy", "event-time-ordering"),
                                                             ("0.15", "symlink", "overwrite-latest")} else (pytest.mark.slow,))
    for line in ("0.14", "0.15") for lm in ("copy", "symlink") for pl in ("overwrite-latest", "event-time-ordering")])
def test_item5_several_exact_split_rounds_judged_by_java(java_hudi, tmp_path, line, link_mode, payload):
    _several_exact_split_rounds(tmp_path, link_mode, payload, _java_reader(java_hudi(line)))


@pytest.mark.java
@pytest.mark.parametrize("line,exact,link_mode", [
    pytest.param(line, ex, lm, marks=() if (line, ex, lm) in {("0.14", True, "symlink"), ("0.15", False, "copy")}
                 else (pytest.mark.slow,))
    for line in ("0.14", "0.15") for ex in (False, True) for lm in ("copy", "symlink")])
def test_item7_overwrite_latest_prefix_judged_by_java(java_hudi, tmp_path, line, exact, link_mode):
    _overwrite_latest_prefix_extended(tmp_path, exact, link_mode, _java_reader(java_hudi(line)))
