"""The named hook points (hudi/crash.py) and the one plan decision (compaction.scheduling).

Expected outcomes are written out by hand from the table's history: a plan for threshold T is
pending, so T is ``already_scheduled`` (and, with other settings or another threshold, another
plan is ``pending``); once it completed, T is ``covered`` and a later threshold ``ready``."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa
import pytest

from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.results import Outcome
from airflow_hudi_etc.compaction.scheduling import plan_decision, schedule
from airflow_hudi_etc.hudi import etc_keys
from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch

T0 = 1_700_000_000_000  # 2023-11-14T22:13:20Z
H = 3_600_000


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()


def test_hook_points_are_named_scoped_and_answer():
    with pytest.raises(ValueError, match="unknown hook point"):
        with crash.hooked("schedule.no-such-point", lambda p: None):
            pass
    seen = []
    assert crash.hook("schedule.instant-time") is None  # nothing registered: no answer
    with crash.hooked(("schedule.before-plan", "schedule.instant-time"), lambda p: seen.append(p)):
        with crash.hooked("schedule.instant-time", lambda p: "20991231000000000"):
            crash.crashpoint("schedule.before-plan")
            assert crash.hook("schedule.instant-time") == "20991231000000000"
    assert seen == ["schedule.before-plan", "schedule.instant-time"]
    crash.crashpoint("schedule.before-plan")  # removed at the end of the block
    assert crash.hook("schedule.instant-time") is None and seen == ["schedule.before-plan", "schedule.instant-time"]


def test_one_decision_for_schedule_and_the_sensor(tmp_path):
    from airflow_hudi_etc.hooks.hudi import event_time_check

    path = tmp_path / "t"
    init_table(Storage(str(path)), table_name="trips", record_key="id", precombine_field="ts", event_time_field="et")
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1], "et": [T0, T0 + 3 * H], "v": [1, 1]}))
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [2, 2], "et": [T0, T0 + 3 * H], "v": [2, 2]}))
    threshold = T0 + H  # compaction time T0 + 2h, latency 1h
    assert plan_decision(HudiTable.load(str(path)), threshold_ms=threshold).outcome is Outcome.READY
    with crash.hooked("schedule.instant-time", lambda p: "20991231000000000"):
        res = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 2 * H), link_mode="copy")
    assert (res.instant, res.outcome, res.threshold_ms) == ("20991231000000000", "scheduled", threshold)

    table = HudiTable.load(str(path))
    d = plan_decision(table, threshold_ms=threshold)
    assert (d.outcome, d.instant, d.operations) == (Outcome.ALREADY_SCHEDULED, "20991231000000000", 1)
    other = {etc_keys.LINK_MODE: "symlink"}  # another request's settings: not its own plan
    d = plan_decision(table, threshold_ms=threshold, settings=other)
    assert (d.outcome, d.instant) == (Outcome.PENDING, "20991231000000000")
    d = plan_decision(table, threshold_ms=threshold + H)
    assert (d.outcome, d.instant) == (Outcome.PENDING, "20991231000000000")
    check = event_time_check(str(path), threshold_ms=threshold)
    assert (check["state"], check["pending_plan"], check["done"]) == ("resume", "20991231000000000", True)
    again = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 2 * H), link_mode="copy")
    assert (again.instant, again.outcome, again.as_dict()["outcome"]) == ("20991231000000000",
                                                                         "already_scheduled", "already_scheduled")
    assert type(again.as_dict()["outcome"]) is str

    assert execute(str(path))["status"] == "completed"
    table = HudiTable.load(str(path))
    assert plan_decision(table, threshold_ms=threshold).outcome is Outcome.COVERED
    assert plan_decision(table, threshold_ms=threshold - 1).outcome is Outcome.COVERED
    assert plan_decision(table, threshold_ms=threshold + 1).outcome is Outcome.READY
    assert event_time_check(str(path), threshold_ms=threshold)["state"] == "covered"
