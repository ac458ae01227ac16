"""Issue 23 item 11: the Python API takes the natural types where they make sense (datetime,
timedelta, seconds) and refuses everything else with a typed error, nothing written.

Judged by fixed values (the threshold of a given compaction time and latency) and by the table's
bytes before and after a refusal."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pytest

from airflow_hudi_etc import Table
from airflow_hudi_etc.hudi.errors import InvalidInputError, TableNotFoundError

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
H = 3_600_000
CT = dt.datetime(2024, 1, 1, 12, 0, tzinfo=dt.timezone.utc)
CT_MS = 1_704_110_400_000  # 2024-01-01T12:00:00Z


def snapshot(path: Path) -> dict:
    return {str(p.relative_to(path)): (p.read_bytes() if p.is_file() else None) for p in sorted(path.rglob("*"))}


@pytest.fixture
def table(tmp_path):
    t = Table.create(str(tmp_path / "t"), table_name="t", record_key="id", precombine_field="ts", event_time_field="et")
    t.write([{"id": "a", "ts": 1, "et": T0}, {"id": "b", "ts": 1, "et": T0}])
    t.write([{"id": "a", "ts": 2, "et": T0}])
    return t


@pytest.mark.parametrize("latency,ct,threshold_ms", [
    (dt.timedelta(hours=2), CT, CT_MS - 2 * H),
    (7200, CT, CT_MS - 2 * H),
    (1.5, CT, CT_MS - 1500),
    ("2h", CT.replace(tzinfo=None), CT_MS - 2 * H),  # naive: UTC
    ("PT1H", dt.datetime(2024, 1, 1, 13, 0, tzinfo=dt.timezone(dt.timedelta(hours=1))), CT_MS - H),
])
def test_schedule_takes_timedelta_seconds_and_datetime(table, latency, ct, threshold_ms):
    res = table.compaction.schedule(latency, compaction_time=ct)
    assert res.threshold_ms == threshold_ms and res.instant


@pytest.mark.parametrize("kw", [
    {"data_latency": None}, {"data_latency": True}, {"data_latency": -1}, {"data_latency": float("nan")},
    {"data_latency": dt.timedelta(hours=-1)}, {"data_latency": ["2h"]}, {"data_latency": b"2h"},
    {"data_latency": "2h", "compaction_time": 1_704_110_400}, {"data_latency": "2h", "compaction_time": dt.date(2024, 1, 1)},
    {"data_latency": "2h", "compaction_time": dt.datetime(1, 1, 1, 0, 30, tzinfo=dt.timezone(dt.timedelta(hours=1)))},
])
def test_schedule_refuses_other_types_typed(table, kw):
    before = snapshot(Path(table.path))
    with pytest.raises(InvalidInputError):
        table.compaction.schedule(**kw)
    assert snapshot(Path(table.path)) == before


@pytest.mark.parametrize("n", ["3", 3.0, True, None, [3]])
def test_clean_refuses_a_retain_count_that_is_no_integer(table, n):
    before = snapshot(Path(table.path))
    with pytest.raises(InvalidInputError, match="retain commits"):
        table.clean(retain_commits=n)
    assert snapshot(Path(table.path)) == before
    assert table.clean(retain_commits=3)["files_deleted"] == 0


@pytest.mark.parametrize("path", [123, None, "", b"/tmp/x", ["/tmp/x"]])
def test_a_path_that_is_no_string_is_a_typed_error(path):
    with pytest.raises(InvalidInputError, match="table path"):
        Table.open(path)
    with pytest.raises(InvalidInputError, match="table path"):
        Table(path)


def test_a_missing_table_is_table_not_found_everywhere(tmp_path):
    missing = Table(tmp_path / "missing")  # a PathLike is fine
    with pytest.raises(TableNotFoundError):
        missing.compaction.pending()
    with pytest.raises(TableNotFoundError):
        Table.open(tmp_path / "missing")
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("data", [
    {"id": "c", "ts": 1, "et": T0},                      # one row given as a dict
    {"id": ["c"], "ts": [1], "et": [T0]},                 # columns given as a dict
    "id,ts,et", 42, None,
    [("c", 1, T0)],                                       # rows that are no dicts
    [{"id": "c", "ts": 1, "et": T0}, {"id": "d", "ts": "two", "et": T0}],  # ts: int then str
    [{"id": "c", "ts": 1, "et": object()}],
])
def test_write_refuses_what_is_no_batch_typed(table, data):
    before = snapshot(Path(table.path))
    with pytest.raises(InvalidInputError, match="write"):
        table.write(data)
    assert snapshot(Path(table.path)) == before


def test_write_takes_rows_a_generator_and_an_arrow_table(table):
    table.write(({"id": k, "ts": 3, "et": T0} for k in ("c", "d")))
    table.write(pa.table({"id": ["e"], "ts": [3], "et": [T0]}))
    assert sorted(table.read().column("id").to_pylist()) == ["a", "b", "c", "d", "e"]


def test_the_reads_the_airflow_side_makes_are_typed(table):
    """What the hook, the sensors and the operators ask of a table, through ``Table`` alone: the
    event-time check before and after a plan, the pending plans with their thresholds, one
    compaction's state, the published threshold, the table's own description."""
    from airflow_hudi_etc.api import (EventTimeCheck, PendingPlan, PublishedThreshold, TableInfo, iso_ms,
                                      parse_duration, parse_time, threshold_ms_for)

    th = threshold_ms_for(parse_time("2024-01-01T12:00:00Z"), parse_duration("2h"))
    assert (th, iso_ms(th)) == (CT_MS - 2 * H, "2024-01-01T10:00:00.000Z")
    assert table.info() == TableInfo("t", "MERGE_ON_READ", 6, 2)
    assert table.compaction.last_threshold() == PublishedThreshold(None, None, None)
    ready = table.compaction.check(th)
    assert isinstance(ready, EventTimeCheck) and (ready.state, ready.done, ready.pending_plan) == ("ready", True, None)
    plan = table.compaction.schedule("2h", compaction_time=CT)
    resume = table.compaction.check(th)
    assert (resume.state, resume.done, resume.pending_plan, resume.operations) == ("resume", True, plan.instant, 1)
    assert resume.as_dict()["pending_compactions"] == [plan.instant] and resume.as_dict()["state"] == "resume"
    assert (table.compaction.check(th + H).state, table.compaction.check(th + H).done) == ("waiting", False)
    assert table.compaction.readiness(th).pending_compactions == (plan.instant,)
    assert table.compaction.pending_plans() == (
        PendingPlan(plan.instant, "requested", th, "2024-01-01T10:00:00.000Z", "event-time", False, 1),)
    assert (table.compaction.state(plan.instant), table.compaction.state("20990101000000000")) == ("requested", None)
    assert table.compaction.java_compacts() is False and table.compaction.check_execute() is None
    table.compaction.execute()
    assert table.compaction.state(plan.instant) == "completed" and table.compaction.pending_plans() == ()
    assert table.compaction.last_threshold() == PublishedThreshold(th, "2024-01-01T10:00:00.000Z", plan.instant)
    assert table.compaction.check(th).state == "covered"
    assert table.compaction.java_execution(plan.instant).details["executed_by"] == "hudi-etc"
    assert table.status(allow_scan=False).threshold == "2024-01-01T10:00:00.000Z"
