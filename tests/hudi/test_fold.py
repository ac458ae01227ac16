"""Folding log blocks and merging with the base (hudi/file_group/merge.py) against a hand-written model.

The model below restates Hudi 0.14/0.15's rules (shared/hudi-format.md §6.4) over Python dicts,
one record at a time, knowing nothing of the product's column-wise fold: random sequences of
Avro and Parquet data blocks and delete blocks (natural-order and ordered deletes, ties, null
and NaN ordering values, ``_hoodie_is_deleted``), then a base file, both payloads.
"""

from __future__ import annotations

import json
import math
import random

import pyarrow as pa
import pytest

from airflow_hudi_etc.hudi.logformat import avro_arrow
from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.file_group.merge import BlockDecoder, ScanStats, SliceMerger, fold_blocks, merge_slice
from airflow_hudi_etc.hudi.config.schema import arrow_schema_from_avro

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")


def avro_schema(ordering: str) -> dict:
    return {"type": "record", "name": "t_record", "namespace": "hoodie.t", "fields": [
        *[{"name": m, "type": ["null", "string"], "default": None} for m in META],
        {"name": "ts", "type": ["null", ordering], "default": None},
        {"name": "v", "type": ["null", "string"], "default": None},
        {"name": "_hoodie_is_deleted", "type": ["null", "boolean"], "default": None}]}


def ordering_value(rng, ordering: str):
    r = rng.random()
    if r < 0.08:
        return None
    if ordering == "double" and r < 0.14:
        return math.nan
    x = rng.randrange(0, 6)  # a small range: ties are common
    return {"int": x, "long": x, "double": float(x), "string": f"o{x}"}[ordering]


def random_blocks(rng: random.Random, ordering: str):
    """(encoded blocks in log order, events for the model)."""
    sj = json.dumps(avro_schema(ordering))
    keys = [f"k{i}" for i in range(8)]
    blocks, events = [], []
    for b in range(rng.randrange(1, 7)):
        inst = f"2026010100000{b:04d}"
        if rng.random() < 0.3:
            dels = []
            for k in rng.sample(keys, rng.randrange(1, 4)):
                kind = rng.random()
                if kind < 0.4:
                    d = lf.natural_order_delete(k, "")
                elif kind < 0.8 and ordering in ("int", "long"):
                    d = lf.DeleteRecord(k, "", rng.randrange(1, 6), ordering)  # the precombine field's type
                else:
                    other = "long" if ordering == "int" else "int"
                    d = lf.DeleteRecord(k, "", rng.randrange(1, 6), other)  # another type: always wins
                dels.append(d)
                events.append(("delete", k, d.ordering_value, d.ordering_type))
            blocks.append(lf.encode_delete_block(inst, sj, dels))
            continue
        recs = []
        for i in range(rng.randrange(1, 6)):
            k = rng.choice(keys)  # the same key may come twice in one block
            recs.append({"_hoodie_commit_time": inst, "_hoodie_commit_seqno": f"{inst}_{i}",
                         "_hoodie_record_key": k, "_hoodie_partition_path": "", "_hoodie_file_name": "f",
                         "ts": ordering_value(rng, ordering), "v": f"{inst}/{i}",
                         "_hoodie_is_deleted": rng.random() < 0.1})
            events.append(("data", k, recs[-1]))
        if rng.random() < 0.5:
            blocks.append(lf.encode_data_block(inst, sj, recs))
        else:
            table = pa.Table.from_pylist(recs, schema=arrow_schema_from_avro(sj))
            content = lf.encode_parquet_content(table, key_value_metadata={"parquet.avro.schema": sj})
            blocks.append(lf.encode_block(lf.BlockType.PARQUET_DATA,
                                          [(lf.HeaderKey.INSTANT_TIME, inst), (lf.HeaderKey.SCHEMA, sj)], content))
    return b"".join(blocks), events


def model_fold(events, ordering_type: str):
    """key -> ("data", record) | ("delete",): the rules, one event at a time."""
    state: dict = {}
    for ev in events:
        k = ev[1]
        prev = state.get(k)
        if ev[0] == "data":
            o = ev[2]["ts"]
            if prev is not None and prev[0] == "data" and prev[2] is not None and o is not None and prev[2] > o:
                continue  # the larger ordering value stays (NaN > x is false: the later one wins)
            state[k] = ("data", ev[2], o, ordering_type)
        else:
            _, _, o, otype = ev
            natural = otype == "int" and o == 0
            if (prev is not None and not natural and otype == prev[3] and prev[2] is not None and o is not None
                    and prev[2] > o):
                continue
            state[k] = ("delete", None, o, otype)
    return state


def model_merge(base: dict, state: dict, event_time_ordering: bool) -> dict:
    out = dict(base)
    for k, st in state.items():
        if st[0] == "delete":
            out.pop(k, None)
            continue
        rec = st[1]
        if k in base and event_time_ordering:
            bo, lo = base[k]["ts"], rec["ts"]
            if bo is not None and lo is not None and bo > lo:
                continue
        if rec["_hoodie_is_deleted"] is True:
            out.pop(k, None)
        else:
            out[k] = rec
    return out


def view(rows) -> dict:
    return {r["_hoodie_record_key"]: (r["ts"] if not (isinstance(r["ts"], float) and math.isnan(r["ts"])) else "nan",
                                      r["v"]) for r in rows}


@pytest.mark.parametrize("ordering", ["int", "long", "double", "string"])
@pytest.mark.parametrize("seed", range(40))
def test_fold_and_merge_equal_the_model(ordering, seed, monkeypatch):
    monkeypatch.setattr(avro_arrow, "MIN_RECORDS", (0, 128)[seed % 2])  # Avro blocks column-wise or by record
    rng = random.Random(seed * 7 + len(ordering))
    data, events = random_blocks(rng, ordering)
    sj = json.dumps(avro_schema(ordering))
    schema = arrow_schema_from_avro(sj)
    queued = [b for b in lf.read_blocks(data) if isinstance(b, lf.LogBlock)]
    stats = ScanStats()
    folded = fold_blocks(queued, schema, "ts", stats=stats, decoder=BlockDecoder(schema))
    state = model_fold(events, ordering)  # the Java type of each ordering type is its own name here
    want_records = {k: st[1] for k, st in state.items() if st[0] == "data"}
    assert view(folded.records.to_pylist()) == view(want_records.values())
    assert sorted(folded.deleted.to_pylist()) == sorted(k for k, st in state.items() if st[0] == "delete")
    assert stats.log_records == len(events)
    base_rows = [{"_hoodie_commit_time": "20250101000000000", "_hoodie_commit_seqno": f"b{i}",
                  "_hoodie_record_key": f"k{i}", "_hoodie_partition_path": "", "_hoodie_file_name": "base",
                  "ts": ordering_value(rng, ordering), "v": f"base{i}", "_hoodie_is_deleted": False}
                 for i in range(0, 12, 2)]
    base = pa.Table.from_pylist(base_rows, schema=schema)
    for eto in (False, True):
        want = model_merge({r["_hoodie_record_key"]: r for r in base_rows}, state, eto)
        got = merge_slice(base, folded, schema, precombine_field="ts", event_time_ordering=eto)
        assert got.num_rows == len(want)
        assert view(got.to_pylist()) == view(want.values())
        # the same merge, one base row at a time (the compaction's streaming path)
        m = SliceMerger(folded, schema, precombine_field="ts", event_time_ordering=eto)
        parts = [m.merge(base.slice(i, 1)) for i in range(base.num_rows)] + [m.unmatched()]
        assert view(pa.concat_tables(parts).to_pylist()) == view(want.values())


def test_without_an_ordering_field_the_last_record_wins():
    sj = json.dumps(avro_schema("long"))
    schema = arrow_schema_from_avro(sj)
    recs = [{"_hoodie_record_key": "a", "ts": 9, "v": "first"}, {"_hoodie_record_key": "a", "ts": 1, "v": "second"}]
    queued = [b for b in lf.read_blocks(lf.encode_data_block("20260101000000000", sj, recs))]
    assert fold_blocks(queued, schema, None).records.column("v").to_pylist() == ["second"]
    assert fold_blocks(queued, schema, "ts").records.column("v").to_pylist() == ["first"]


def test_records_that_do_not_fit_the_schema_are_a_typed_error():
    """An Avro int of more than 32 bits decodes as a number but fits no int column: the block
    is refused with a typed error, never an Arrow exception."""
    import struct

    from airflow_hudi_etc.hudi.errors import CorruptLogBlockError

    sj = json.dumps({"type": "record", "name": "r", "fields": [
        {"name": "_hoodie_record_key", "type": ["null", "string"]}, {"name": "i", "type": "int"}]})
    datum = b"\x02\x02k" + b"\xfe\xff\xff\xff\x7f"  # the int needs 35 bits
    content = struct.pack(">iii", 3, 1, len(datum)) + datum
    block = lf.read_blocks(lf.encode_block(lf.BlockType.AVRO_DATA, [(lf.HeaderKey.INSTANT_TIME, "20260101000000000"),
                                                                     (lf.HeaderKey.SCHEMA, sj)], content))[0]
    schema = pa.schema([("_hoodie_record_key", pa.string()), ("i", pa.int32())])
    with pytest.raises(CorruptLogBlockError, match="do not fit"):
        BlockDecoder(schema).table(block)


@pytest.mark.parametrize("seed", range(6))
def test_runs_of_small_blocks_decode_together_to_the_same_tables(seed, monkeypatch):
    """Streaming writers make many small blocks: consecutive small Avro blocks of one schema are
    decoded column-wise in one go; each block's table is what it is decoded alone."""
    monkeypatch.setattr(avro_arrow, "MIN_RECORDS", 40)  # runs long enough, blocks small enough
    rng = random.Random(seed)
    sj = json.dumps(avro_schema("long"))
    other = json.dumps({**avro_schema("long"), "fields": avro_schema("long")["fields"][:-1]})
    schema = arrow_schema_from_avro(sj)
    data = []
    for b in range(rng.randrange(20, 60)):
        s_ = other if rng.random() < 0.1 else sj
        recs = [{"_hoodie_record_key": f"k{rng.randrange(50)}", "ts": rng.randrange(9), "v": f"{b}/{i}"}
                for i in range(rng.randrange(1, 12))]
        data.append(lf.encode_data_block(f"2026010100000{b:04d}", s_, recs))
    blocks = [b for b in lf.read_blocks(b"".join(data))]
    together = BlockDecoder(schema)
    together.prefetch(blocks)
    assert any(id(b) in together._cache for b in blocks)  # some run was decoded as a whole
    alone = BlockDecoder(schema)
    for b in blocks:
        assert together.table(b).equals(alone.table(b))
    assert view(fold_blocks(blocks, schema, "ts").records.to_pylist()) == view(
        fold_blocks(blocks, schema, "ts", decoder=alone).records.to_pylist())
