"""Event times as the planner, the write stats and exact split read them."""

from __future__ import annotations

import datetime as dt

import pyarrow as pa

from airflow_hudi_etc.hudi.config.schema import event_time_millis, event_time_value_millis


def test_event_times_with_sub_millisecond_parts_floor_to_the_millisecond():
    values = [dt.datetime(2026, 1, 1, 0, 0, 0, 1999, tzinfo=dt.timezone.utc), None,
              dt.datetime(1969, 12, 31, 23, 59, 59, 999500, tzinfo=dt.timezone.utc)]
    want = [1767225600001, None, -1]
    for unit in ("us", "ns"):
        col = pa.array(values, pa.timestamp("us", tz="UTC")).cast(pa.timestamp(unit, tz="UTC"))
        assert event_time_millis(col).to_pylist() == want
    assert [event_time_value_millis(v) for v in values] == want


def test_scalar_and_column_versions_agree_on_numbers():
    values = [1.0005, -1.0005, 1_767_225_600_000, 1_767_225_600.5, -2.5, 0, None, 10**11 + 0.7]
    col = pa.array([float(v) if v is not None else None for v in values], pa.float64())
    assert event_time_millis(col).to_pylist() == [event_time_value_millis(None if v is None else float(v))
                                                  for v in values]
    ints = [5, -5, 1_767_225_600_000, None]
    assert event_time_millis(pa.array(ints, pa.int64())).to_pylist() == [event_time_value_millis(v) for v in ints]


def test_damaged_avro_schemas_are_a_typed_error():
    import pytest

    from airflow_hudi_etc.hudi.errors import InvalidInputError
    from airflow_hudi_etc.hudi.config.schema import arrow_schema_from_avro

    for bad in ('{"type": "record", "fields": [{"name": "a", "type": "lonV"}]}',  # a byte flipped in a commit
                '{"type": "record", "fields": [{"nam": "a", "type": "long"}]}', '{"type": "record"}', "[1, 2]",
                '{"type": "record", "fields": [{"name": "d", "type": {"type": "bytes", "logicalType": "decimal"}}]}'):
        with pytest.raises(InvalidInputError):
            arrow_schema_from_avro(bad)
