"""Reading a table back through hudi-rs (never our reader), keyed by record key; epoch milliseconds as ISO times."""

from __future__ import annotations

import datetime as dt

from batches import DATA_COLS
from oracle import hudi_rs_read


def snapshot_by_key(path, ro=False):
    t = hudi_rs_read(path, read_optimized=ro)
    return {r["key"]: {c: r[c] for c in DATA_COLS} for r in t.to_pylist()} if t.num_rows else {}


def iso(ms):
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()
