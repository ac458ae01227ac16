"""Batches of the seeded random histories (tests/support/model.py) and a history written by our writer,
checked after every batch by hudi-rs against the hand-written model."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pyarrow.parquet as pq

from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from model import TableModel, random_history
from oracle import hudi_rs_read

DATA_COLS = ["key", "ts", "event_time", "value", "note", "region"]


#: the hand-written tables' clock (tests/compaction/test_prefix_facts.py, test_planning_fastpath.py)
T0 = 1_700_000_000_000
H = 3_600_000


def iso(ms):
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()


def row(key, ts, et_h):
    """A row of :func:`batch`'s schema in region ``a``, event time ``et_h`` hours after T0."""
    return {"key": key, "ts": ts, "event_time": T0 + int(et_h * H), "value": float(ts), "note": None, "region": "a"}


def batch(rows):
    return pa.Table.from_pylist(
        rows,
        schema=pa.schema(
            [("key", pa.string()), ("ts", pa.int64()), ("event_time", pa.int64()), ("value", pa.float64()),
             ("note", pa.string()), ("region", pa.string())]
        ),
    )


def _check_against_model(path, model):
    snap = hudi_rs_read(path)
    got = {r["key"]: {c: r[c] for c in DATA_COLS} for r in snap.to_pylist()} if snap.num_rows else {}
    assert len(got) == snap.num_rows, "duplicate keys in the hudi-rs snapshot"
    want = {k: {c: v[c] for c in DATA_COLS} for k, v in model.snapshot().items()}
    assert got == want
    ro = hudi_rs_read(path, read_optimized=True)
    got_ro = {r["key"]: {c: r[c] for c in DATA_COLS} for r in ro.to_pylist()} if ro.num_rows else {}
    assert got_ro == {k: {c: v[c] for c in DATA_COLS} for k, v in model.read_optimized().items()}


def _check_event_time_stats(path, instant, rows_by_key):
    """minEventTime/maxEventTime of every written file = the true min/max of the records in it."""
    v1 = path / ".hoodie" / f"{instant}.deltacommit"
    if v1.exists():
        meta = json.loads(v1.read_text())
    else:  # timeline layout 2 (table versions 8/9): <r>_<c>.deltacommit, one Avro record
        import fastavro

        (done,) = (path / ".hoodie" / "timeline").glob(f"{instant}_*.deltacommit")
        with open(done, "rb") as fh:
            (meta,) = list(fastavro.reader(fh))
    for stats in meta["partitionToWriteStats"].values():
        for st in stats:
            f = path / st["path"]
            if f.name.endswith(".parquet"):
                keys = pq.read_table(f, columns=["_hoodie_record_key"]).column(0).to_pylist()
            else:
                keys = []
                for b in lf.read_blocks(f.read_bytes(), strict=True):
                    if b.block_type == lf.BlockType.DELETE:
                        keys += [d.record_key for d in lf.decode_delete_records(b.content)]
                    else:
                        keys += [r["_hoodie_record_key"] for r in lf.decode_avro_records(b.content, b.schema_json)]
            ets = [rows_by_key[k]["event_time"] for k in keys if "event_time" in rows_by_key.get(k, {})]
            assert st["minEventTime"] == (min(ets) if ets else None), st["path"]
            assert st["maxEventTime"] == (max(ets) if ets else None), st["path"]


def run_history(tmp_path, seed, *, partitioned=True, payload="overwrite-latest", engine=None, batches=6, monotone=None,
                table_version=6, exclusive_cleaner=False):
    """``exclusive_cleaner``: the table promises no Java cleaner runs (link mode symlink needs it)."""
    path = tmp_path / f"h{seed}"
    init_table(str(path), table_name=f"h{seed}", record_key="key", precombine_field="ts",
               event_time_field="event_time", partition_field="region" if partitioned else None, payload=payload,
               table_version=table_version, exclusive_cleaner=exclusive_cleaner)
    model = TableModel("ts", event_time_ordering=payload == "event-time-ordering")
    monotone = payload == "overwrite-latest" if monotone is None else monotone
    for op, rows in random_history(seed, batches, monotone_ordering=monotone):
        if op == "upsert":
            res = write_batch(str(path), batch(rows), engine=engine)
            model.upsert(rows, "key")
            last = {}
            for r in rows:  # the row that won the in-batch dedup is the one written
                cur = last.get(r["key"])
                if cur is None or r["ts"] >= cur["ts"]:
                    last[r["key"]] = r
            _check_event_time_stats(path, res.instant, last)
        else:
            keys = [r["key"] for r in rows]
            res = write_batch(str(path), pa.table({"key": keys, "region": [r["region"] for r in rows]}),
                              operation="delete", engine=engine)
            model.delete(keys)
        _check_against_model(path, model)
    return path, model
