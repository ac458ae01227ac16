"""Which base records an exact split may leave out of the new base (plans.base_records_filterable).

Fixed write stats, as Java 0.14/0.15/1.x and our writer write them: a base file that started its
file group (prevCommit "null", no update) holds each key's first version and may be filtered; a
base a Java deltacommit merged into (prevCommit the slice before, or updates: Java's small-file
path, seen at seed 153 of the slow real-Java interleavings) or a compaction made may not, nor one
whose stat is not found. The decision is the schedule's, recorded in the plan's operation."""

from __future__ import annotations

import pytest

from airflow_hudi_etc.api import Table
from airflow_hudi_etc.compaction.plans import M_BASE_FILTERABLE, Operation, base_records_filterable, op_base_filterable
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable


def _table(tmp_path):
    t = Table.create(str(tmp_path / "t"), table_name="t", record_key="k", precombine_field="ts",
                     event_time_field="event_time", partition_field="city")
    t.write([{"k": "a", "ts": 1, "event_time": 1_767_225_600_000, "city": "sf", "v": 1.0}])
    return HudiTable.load(t.path)


@pytest.mark.parametrize("stat,want", [
    ({"prevCommit": "null", "numUpdateWrites": 0, "numInserts": 2}, True),  # Java's and our inserts
    ({"prevCommit": None, "numInserts": 2}, True),
    ({"prevCommit": "20260101000000000", "numUpdateWrites": 2, "numInserts": 1}, False),  # Java merged updates
    ({"prevCommit": "20260101000000000", "numUpdateWrites": 0, "numInserts": 1}, False),  # inserts into a small file
    ({"prevCommit": "null", "numUpdateWrites": 1}, False),
    (None, False),  # the commit's stat not found (archived)
])
def test_a_writes_base_is_filterable_only_when_it_started_its_file_group(tmp_path, stat, want):
    table = _table(tmp_path)
    base_instant = table.timeline.completed_writes[-1].timestamp
    assert base_records_filterable(table, base_instant, stat) is want


def test_no_base_file_is_filterable_and_a_compactions_base_is_not(tmp_path):
    table = _table(tmp_path)
    assert base_records_filterable(table, None, None) is True
    t = Table.open(str(tmp_path / "t"))
    t.write([{"k": "a", "ts": 2, "event_time": 1_767_229_200_000, "city": "sf", "v": 2.0}])
    s = t.compaction.schedule("1h", compaction_time="2026-01-02T00:00:00Z")
    assert t.compaction.execute(s.instant).status == "completed"
    inserts = {"prevCommit": "null", "numUpdateWrites": 0}
    assert base_records_filterable(HudiTable.load(str(tmp_path / "t")), s.instant, inserts) is False


def _op(base_file, metrics):
    return Operation("sf", "f1", "20260101000000000" if base_file else None, base_file, (), (), metrics)


def test_the_schedules_decision_is_what_execute_uses():
    assert op_base_filterable(_op("f1_0-1-0_20260101000000000.parquet", {M_BASE_FILTERABLE: 1.0})) is True
    assert op_base_filterable(_op("f1_0-1-0_20260101000000000.parquet", {M_BASE_FILTERABLE: 0.0})) is False
    # a plan of an earlier release, without the decision: the base's records stay
    assert op_base_filterable(_op("f1_0-1-0_20260101000000000.parquet", {"TOTAL_LOG_FILES": 1.0})) is False
    assert op_base_filterable(_op(None, {})) is True
