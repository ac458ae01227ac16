"""Synthetic tables for the benchmarks, built with the project's own writer.

Every table is a valid table-version-6 MOR table (``HudiTable.load`` reads it, hudi-rs reads
it). Generated tables are cached under the data directory keyed by their parameters, and
copied before a benchmark mutates them (compaction writes into the table).
"""

from __future__ import annotations

import os
import shutil

import numpy as np
import pyarrow as pa

from airflow_hudi_etc.hudi.write.writer import WriteOptions, init_table, write_batch

DAY_MS = 86_400_000
#: event times: base rows on day 0, log k (0-based) on day k + 1
T0_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z

DATA_COLS = ("id", "updated_at", "event_time", "city", "fare", "distance", "passengers", "note")
CITIES = np.array(["sf", "nyc", "la", "chi", "sea", "bos", "atx", "den"])


def rows(keys: np.ndarray, version: int, event_ms_lo: int, rng: np.random.Generator) -> pa.Table:
    """One batch of the 8-column schema for the given integer keys."""
    n = len(keys)
    ids = pa.array([f"k{int(k):09d}" for k in keys], pa.string())
    return pa.table({
        "id": ids,
        "updated_at": pa.array(np.full(n, version, dtype=np.int64)),
        "event_time": pa.array(event_ms_lo + rng.integers(0, DAY_MS // 2, n, dtype=np.int64)),
        "city": pa.array(CITIES[rng.integers(0, len(CITIES), n)]),
        "fare": pa.array(rng.random(n) * 100),
        "distance": pa.array(rng.random(n) * 30),
        "passengers": pa.array(rng.integers(1, 6, n, dtype=np.int32)),
        "note": pa.array([f"v{version}-{int(k) % 997}" for k in keys], pa.string()),
    })


def build_table(path: str, *, n_rows: int, update_frac: float, n_logs: int, seed: int = 7,
                rows_per_group: int | None = None, table_version: int = 6) -> dict:
    """One file group (or ``n_rows / rows_per_group`` of them, one partition): a base of ``n_rows``
    and ``n_logs`` upserts of ``n_rows*update_frac/n_logs`` distinct random keys each (log k's
    event times on day k+1; every group gets its share of each upsert). Returns what was written."""
    rng = np.random.default_rng(seed)
    init_table(path, table_name="bench", record_key="id", precombine_field="updated_at",
               event_time_field="event_time", table_version=table_version)
    opts = WriteOptions(max_rows_per_base_file=max(rows_per_group or n_rows, 1))
    write_batch(path, rows(np.arange(n_rows), 0, T0_MS, rng), options=opts)
    per_log = max(1, int(n_rows * update_frac) // max(n_logs, 1))
    updates = []
    for k in range(n_logs):
        keys = np.sort(rng.choice(n_rows, per_log, replace=False))
        b = rows(keys, k + 1, T0_MS + (k + 1) * DAY_MS, rng)
        write_batch(path, b, options=opts)
        updates.append(b)
    return {"n_rows": n_rows, "n_logs": n_logs, "per_log": per_log}


def cached_table(data_dir: str, name: str, **params) -> str:
    """Path of a pristine cached table with these parameters (built once)."""
    key = name + "-" + "-".join(f"{k}{v}" for k, v in sorted(params.items()))
    path = os.path.join(data_dir, key)
    done = path + ".done"
    if not os.path.exists(done):
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        build_table(path, **params)
        open(done, "w").close()
    return path


def fresh_copy(src: str, dst: str) -> str:
    """A private copy of a cached table (symlinks kept as symlinks)."""
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)
    return dst


def dir_bytes(path: str, *, follow: bool = False) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for f in files:
            p = os.path.join(root, f)
            total += os.stat(p).st_size if follow else os.lstat(p).st_size
    return total
