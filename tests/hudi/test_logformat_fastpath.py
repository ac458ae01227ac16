"""The fast path of AVRO_DATA decoding (the generated decoder of logformat.avro_fast), called
directly so no fallback can hide a difference, gives exactly what the plain reference
(logformat.avro_data.decode_avro_records_reference: fastavro per record) gives: on random
schemas and records, and on edge values of every type (varint limits, long strings, NaN and
infinities, empty containers, logical types at their edges, zero records)."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import random

import pytest

from airflow_hudi_etc.hudi.logformat import encode_avro_records
from airflow_hudi_etc.hudi.logformat.avro_data import _avro_block_header, _parsed_schema, decode_avro_records_reference
from airflow_hudi_etc.hudi.logformat.avro_fast import fast_decoder
from random_avro import random_schema_and_records

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


def _both(schema, records):
    sj = json.dumps(schema, separators=(",", ":"))
    content = encode_avro_records(sj, records)
    fast = fast_decoder(sj)
    assert fast is not None, "the generator must handle this schema"
    count = _avro_block_header(content)
    return fast.decode(content, count, len(content)), decode_avro_records_reference(content, count, _parsed_schema(sj), None)


@pytest.mark.parametrize("seed", range(100, 140))
def test_fast_decoder_equals_reference_on_random_schemas(seed):
    schema, records = random_schema_and_records(random.Random(seed), max_fields=12)
    fast, ref = _both(schema, records)
    assert repr(fast) == repr(ref)  # repr: the same types too (True is not 1), NaN equal to NaN


EDGE_SCHEMA = {
    "type": "record", "name": "edge", "namespace": "t",
    "fields": [
        {"name": "l", "type": "long"},
        {"name": "i", "type": "int"},
        {"name": "d", "type": "double"},
        {"name": "f", "type": "float"},
        {"name": "s", "type": "string"},
        {"name": "b", "type": "bytes"},
        {"name": "t", "type": "boolean"},
        {"name": "e", "type": {"type": "enum", "name": "E", "symbols": ["A", "B", "C"]}},
        {"name": "x", "type": {"type": "fixed", "name": "F3", "size": 3}},
        {"name": "al", "type": {"type": "array", "items": "long"}},
        {"name": "ms", "type": {"type": "map", "values": "string"}},
        {"name": "u", "type": ["null", "long", "string", "double"]},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-micros"}},
        {"name": "tm", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "lts", "type": {"type": "long", "logicalType": "local-timestamp-micros"}},
        {"name": "dt", "type": {"type": "int", "logicalType": "date"}},
        {"name": "dec", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 4}},
        {"name": "nested", "type": ["null", {"type": "record", "name": "N", "fields": [
            {"name": "v", "type": ["null", "string"]}, {"name": "w", "type": {"type": "array", "items": "N"}}]}]},
    ],
}
LONGS = st.one_of(st.sampled_from([0, -1, 1, 63, -64, 64, -65, 2**31 - 1, -(2**31), 2**63 - 1, -(2**63)]),
                  st.integers(min_value=-(2**63), max_value=2**63 - 1))
INTS = st.one_of(st.sampled_from([0, -1, 2**31 - 1, -(2**31)]), st.integers(min_value=-(2**31), max_value=2**31 - 1))
UTC = dt.timezone.utc
TS = st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31, 23, 59, 59, 999999))
NESTED = st.recursive(st.none(), lambda kids: st.fixed_dictionaries(
    {"v": st.one_of(st.none(), st.text(max_size=5)), "w": st.lists(kids.filter(lambda k: k is not None), max_size=2)}),
    max_leaves=6)
RECORD = st.fixed_dictionaries({
    "l": LONGS, "i": INTS,
    "d": st.floats(allow_nan=True, allow_infinity=True),
    "f": st.floats(width=32, allow_nan=True, allow_infinity=True),
    "s": st.one_of(st.text(max_size=3), st.text(min_size=60, max_size=300)),
    "b": st.binary(max_size=200),
    "t": st.booleans(),
    "e": st.sampled_from(["A", "B", "C"]),
    "x": st.binary(min_size=3, max_size=3),
    "al": st.lists(LONGS, max_size=70),
    "ms": st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=5),
    "u": st.one_of(st.none(), LONGS, st.text(max_size=4), st.floats(allow_nan=False)),
    "ts": TS.map(lambda d: d.replace(tzinfo=UTC)),
    "tm": TS.map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000, tzinfo=UTC)),
    "lts": TS,
    "dt": st.dates(),
    "dec": st.decimals(min_value=-(10**15) + 1, max_value=10**15 - 1, places=4, allow_nan=False, allow_infinity=False),
    "nested": NESTED,
})


@settings(max_examples=150, deadline=None)
@given(records=st.lists(RECORD, min_size=0, max_size=6))
def test_fast_decoder_equals_reference_on_edge_values(records):
    fast, ref = _both(EDGE_SCHEMA, records)
    assert len(fast) == len(records)
    assert repr(fast) == repr(ref)
    for got, want in zip(fast, records):  # and both are the values written (a hand-check of the pair)
        assert got["l"] == want["l"] and got["s"] == want["s"] and got["al"] == want["al"]
        assert (math.isnan(got["d"]) and math.isnan(want["d"])) or got["d"] == want["d"]
        assert got["ts"] == want["ts"] and got["dt"] == want["dt"]
        assert got["dec"] == decimal.Decimal(want["dec"])
