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
