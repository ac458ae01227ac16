"""The independent judge: hudi-rs (PyPI ``hudi``) reads, plus value normalisation for comparisons."""

from __future__ import annotations

import datetime as dt
import decimal
import os
from typing import Any

import pyarrow as pa

META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name")


def hudi_rs_table(path):
    from hudi import HudiTableBuilder

    return HudiTableBuilder.from_base_uri(os.path.abspath(str(path))).build()


def hudi_rs_read(path, *, read_optimized=False, as_of=None, start=None, end=None) -> pa.Table:
    from hudi import HudiQueryType, HudiReadOptions

    t = hudi_rs_table(path)
    opts = HudiReadOptions(hudi_options={"hoodie.read.use.read_optimized.mode": "true"} if read_optimized else {})
    if as_of is not None:
        opts = opts.with_as_of_timestamp(as_of)
    if start is not None:
        opts = opts.with_query_type(HudiQueryType.Incremental).with_start_timestamp(start)
        if end is not None:
            opts = opts.with_end_timestamp(end)
    batches = t.read(opts)
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)


def norm(v: Any) -> Any:
    """Comparable form of a value from pyarrow's to_pylist (maps as sorted tuples, times as micros)."""
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            v = v.replace(tzinfo=dt.timezone.utc)
        return ("ts", int(v.timestamp() * 1_000_000))
    if isinstance(v, dict):
        return tuple(sorted((k, norm(x)) for k, x in v.items()))
    if isinstance(v, list):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):  # map
            return ("map", tuple(sorted((k, norm(x)) for k, x in v)))
        return tuple(norm(x) for x in v)
    if isinstance(v, decimal.Decimal):
        return ("dec", str(v.normalize()))
    return v


def rows_by_key(table: pa.Table, columns=None, key="_hoodie_record_key") -> dict:
    """``{record key: {column: normalised value}}``; raises on duplicate keys."""
    if table.num_rows == 0:
        return {}
    cols = [c for c in (columns or table.column_names) if c in table.column_names]
    out: dict = {}
    for r in table.select(cols + ([key] if key not in cols else [])).to_pylist():
        k = (r.get("_hoodie_partition_path"), r[key]) if "_hoodie_partition_path" in r else r[key]
        assert k not in out, f"duplicate key {k}"
        out[k] = {c: norm(r[c]) for c in cols}
    return out


def assert_same_rows(ours: pa.Table, theirs: pa.Table, columns=None):
    """Value-by-value equality on the columns both sides have (or ``columns``)."""
    if columns is None:
        columns = [c for c in theirs.column_names if c in ours.column_names] if theirs.num_rows else ours.column_names
    a, b = rows_by_key(ours, columns), rows_by_key(theirs, columns)
    assert a.keys() == b.keys(), f"keys differ: only ours {sorted(a.keys() - b.keys())[:5]}, only hudi-rs {sorted(b.keys() - a.keys())[:5]}"
    diffs = [(k, c, a[k][c], b[k][c]) for k in a for c in columns if a[k].get(c) != b[k].get(c)]
    assert not diffs, f"{len(diffs)} values differ, e.g. {diffs[:3]}"
