"""Event times as the planner, the write stats and exact split read them."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from airflow_hudi_etc.hudi.schema import event_time_millis, event_time_value_millis


def test_event_times_with_sub_millisecond_parts_floor_to_the_millisecond():
    values = [dt.datetime(2026, 1, 1, 0, 0, 0, 1999, tzinfo=dt.timezone.utc), None,
              dt.datetime(1969, 12, 31, 23, 59, 59, 999500, tzinfo=dt.timezone.utc)]
    want = [1767225600001, None, -1]
    for unit in ("us", "ns"):
        col = pa.array(values, pa.timestamp("us", tz="UTC")).cast(pa.timestamp(unit, tz="UTC"))
        assert event_time_millis(col).to_pylist() == want
    assert [event_time_value_millis(v) for v in values] == want
