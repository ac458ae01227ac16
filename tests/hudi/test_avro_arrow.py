"""The column-wise Avro decoder (hudi/logformat/avro_arrow.py) against the record decoder.

The reference is what the reader did before the column-wise decoder existed: records decoded
one by one (fastavro's semantics, tests/hudi/test_logformat.py checks that) and converted by Arrow
with the same schema. On good bytes both must give the same table; on damaged bytes the
column-wise decoder may refuse (``Mismatch``: the record decoder then decides) but must never
return a table where the record decoder returns another one or fails.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import random
import struct

import pyarrow as pa
import pytest

from airflow_hudi_etc.hudi.logformat import avro_arrow as aa
from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.logformat.avro_data import _avro_block_header
from airflow_hudi_etc.hudi.errors import CorruptLogBlockError
from random_avro import random_schema_and_records

UTC = dt.timezone.utc


@pytest.fixture(autouse=True)
def columnwise_for_any_block_size(monkeypatch):
    """Blocks of these tests are small: decode them column-wise anyway (the product leaves
    blocks under MIN_RECORDS records to the record decoder, which is faster there)."""
    monkeypatch.setattr(aa, "MIN_RECORDS", 0)


def reference(content: bytes, schema_json: str, arrow_schema: pa.Schema):
    """(table, None) or (None, error) the record path gives."""
    try:
        recs = lf.decode_avro_records(content, schema_json)
        return pa.Table.from_pylist(recs, schema=arrow_schema), None
    except Exception as e:  # noqa: BLE001 - any outcome is compared
        return None, e


def columnwise(content: bytes, schema_json: str):
    count = _avro_block_header(content)
    return aa.decode_avro_content(content, count, schema_json)


def same(a: pa.Table, b: pa.Table) -> bool:
    # repr keeps NaN == NaN and tells 0.0 from -0.0
    return a.schema == b.schema and repr(a.to_pylist()) == repr(b.to_pylist())


HUDI_LIKE = {
    "type": "record", "name": "trips_record", "namespace": "hoodie.trips",
    "fields": [
        *[{"name": m, "type": ["null", "string"], "default": None}
          for m in ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key",
                    "_hoodie_partition_path", "_hoodie_file_name")],
        {"name": "i", "type": ["null", "int"], "default": None},
        {"name": "l", "type": ["null", "long"], "default": None},
        {"name": "f", "type": ["null", "float"], "default": None},
        {"name": "d", "type": ["null", "double"], "default": None},
        {"name": "b", "type": ["null", "boolean"], "default": None},
        {"name": "by", "type": ["null", "bytes"], "default": None},
        {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-micros"}], "default": None},
        {"name": "tms", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": None},
        {"name": "day", "type": ["null", {"type": "int", "logicalType": "date"}], "default": None},
        {"name": "dec", "type": ["null", {"type": "fixed", "name": "fixed", "namespace": "hoodie.trips.dec",
                                          "size": 8, "logicalType": "decimal", "precision": 18, "scale": 4}],
         "default": None},
        {"name": "bdec", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 2}],
         "default": None},
        {"name": "kind", "type": ["null", {"type": "enum", "name": "Kind", "symbols": ["A", "B", "C"]}],
         "default": None},
        {"name": "nested", "type": ["null", {"type": "record", "name": "Inner", "fields": [
            {"name": "x", "type": ["null", "long"], "default": None},
            {"name": "s", "type": "string"}]}], "default": None},
        {"name": "req", "type": "string"},
    ],
}


def hudi_like_record(rng: random.Random, i: int) -> dict:
    def maybe(v):
        return None if rng.random() < 0.2 else v

    return {
        "_hoodie_commit_time": "20260101000000000",
        "_hoodie_commit_seqno": f"20260101000000000_0_{i}",
        "_hoodie_record_key": f"key-{rng.randrange(10**6)}",
        "_hoodie_partition_path": rng.choice(["", "city=sf", "city=são paulo"]),
        "_hoodie_file_name": maybe("f-0"),
        "i": maybe(rng.choice([0, -1, 2**31 - 1, -(2**31), rng.randrange(-1000, 1000)])),
        "l": maybe(rng.choice([0, -1, 2**63 - 1, -(2**63), rng.randrange(-(2**40), 2**40)])),
        "f": maybe(struct.unpack("<f", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0]),
        "d": maybe(rng.choice([0.0, -0.0, math.inf, -math.inf, rng.uniform(-1e300, 1e300)])),
        "b": maybe(rng.random() < 0.5),
        "by": maybe(rng.randbytes(rng.randrange(0, 20))),
        "ts": maybe(dt.datetime(1, 1, 1, tzinfo=UTC) + dt.timedelta(microseconds=rng.randrange(0, 2**58))),
        "tms": maybe(dt.datetime(1970, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=rng.randrange(-2**40, 2**40))),
        "day": maybe(dt.date(1, 1, 1) + dt.timedelta(days=rng.randrange(0, 3_652_058))),
        "dec": maybe(decimal.Decimal(rng.randrange(-10**18 + 1, 10**18)).scaleb(-4)),
        "bdec": maybe(decimal.Decimal(rng.randrange(-10**30 + 1, 10**30)).scaleb(-2)),
        "kind": maybe(rng.choice("ABC")),
        "nested": maybe({"x": maybe(rng.randrange(-5, 5)), "s": rng.choice(["", "é€😀", "x" * 40])}),
        "req": "".join(rng.choice("aé€😀\x00z") for _ in range(rng.randrange(0, 30))),
    }


@pytest.mark.parametrize("seed", range(8))
def test_hudi_like_schema_decodes_column_wise_to_the_same_table(seed):
    rng = random.Random(seed)
    sj = json.dumps(HUDI_LIKE)
    records = [hudi_like_record(rng, i) for i in range(rng.choice([1, 7, 300]))]
    content = lf.encode_avro_records(sj, records)
    got = columnwise(content, sj)  # must not need the record path: this is the fast path's job
    want, err = reference(content, sj, got.schema)
    assert err is None and same(got, want)
    assert got.schema.field("ts").type == pa.timestamp("us", tz="UTC")
    assert got.schema.field("dec").type == pa.decimal128(18, 4)
    assert got.column("_hoodie_record_key").to_pylist() == [r["_hoodie_record_key"] for r in records]


def test_empty_block_and_values_at_the_edges():
    sj = json.dumps(HUDI_LIKE)
    assert columnwise(lf.encode_avro_records(sj, []), sj).num_rows == 0
    rng = random.Random(1)
    edge = hudi_like_record(rng, 0)
    edge.update(i=-(2**31), l=-(2**63), d=float("nan"), ts=dt.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
                day=dt.date(9999, 12, 31), dec=decimal.Decimal("-99999999999999.9999"), bdec=decimal.Decimal("-0.01"),
                nested=None, req="")
    content = lf.encode_avro_records(sj, [edge])
    got = columnwise(content, sj)
    want, err = reference(content, sj, got.schema)
    assert err is None and same(got, want)


@pytest.mark.parametrize("seed", range(60))
def test_random_schemas_and_damage_never_disagree_with_the_record_path(seed):
    rng = random.Random(1000 + seed)
    schema, records = random_schema_and_records(rng, max_fields=10)
    sj = json.dumps(schema)
    content = lf.encode_avro_records(sj, records)
    try:
        arrow_schema, _ = aa.arrow_decoder(sj)
    except aa.Unsupported:
        return  # arrays, maps, multi-type unions, uuid, time-*: the record path only
    cases = [content]
    for _ in range(40):
        bad = bytearray(content)
        for _ in range(rng.randrange(1, 4)):
            bad[rng.randrange(8, len(bad))] ^= rng.randrange(1, 256)
        cases.append(bytes(bad))
    for case in cases:
        try:
            got = columnwise(case, sj)
        except (aa.Mismatch, CorruptLogBlockError):
            continue  # the record path decides
        want, err = reference(case, sj, arrow_schema)
        assert err is None, f"the record path refuses what the column-wise decoder took: {err!r}"
        assert same(got, want)
    got = columnwise(content, sj)  # undamaged: never a refusal
    want, err = reference(content, sj, arrow_schema)
    assert err is None and same(got, want)


def test_small_blocks_go_to_the_record_decoder(monkeypatch):
    monkeypatch.setattr(aa, "MIN_RECORDS", 128)
    sj = json.dumps(HUDI_LIKE)
    content = lf.encode_avro_records(sj, [hudi_like_record(random.Random(2), i) for i in range(127)])
    with pytest.raises(aa.Unsupported):
        columnwise(content, sj)
    content = lf.encode_avro_records(sj, [hudi_like_record(random.Random(2), i) for i in range(128)])
    assert columnwise(content, sj).num_rows == 128


def test_refusals_are_left_to_the_record_path():
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "s", "type": "string"}, {"name": "i", "type": "int"}, {"name": "u", "type": ["null", "long"]}]}
    sj = json.dumps(schema)
    good = lf.encode_avro_records(sj, [{"s": "ab", "i": 1, "u": None}])
    # invalid UTF-8 in the string: the record path raises, the column-wise path does not judge
    bad_utf8 = good.replace(b"ab", b"\xff\xfe")
    with pytest.raises(aa.Mismatch):
        columnwise(bad_utf8, sj)
    with pytest.raises(CorruptLogBlockError):
        lf.decode_avro_records(bad_utf8, sj)
    # an int beyond 32 bits, a union branch that does not exist, a record cut short
    datum_big_int = b"\x04ab" + b"\xff\xff\xff\xff\x7f" + b"\x00"
    datum_bad_union = b"\x04ab" + b"\x02" + b"\x08"
    datum_short = b"\x04ab" + b"\x02"
    for datum in (datum_big_int, datum_bad_union, datum_short):
        content = struct.pack(">iii", 3, 1, len(datum)) + datum
        with pytest.raises(aa.Mismatch):
            columnwise(content, sj)
    with pytest.raises(aa.Unsupported):
        aa.arrow_decoder(json.dumps({"type": "record", "name": "a", "fields": [
            {"name": "xs", "type": {"type": "array", "items": "long"}}]}))
    with pytest.raises(aa.Unsupported):
        aa.arrow_decoder(json.dumps({"type": "record", "name": "Node", "fields": [
            {"name": "next", "type": ["null", "Node"]}]}))
