"""A small partitioned MOR table with late-arriving events, for the Airflow tests, and the
freshness guarantee computed from the rows written (never from our reader)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa

from airflow_hudi_etc.hudi.write.writer import init_table, write_batch

H = 3_600_000
DAY0 = 1_767_225_600_000  # 2026-01-01T00:00:00Z
#: the run ending 2026-01-02T00:00Z with a 2 h latency: threshold 2026-01-01T22:00Z
COMPACTION_TIME = "2026-01-02T00:00:00+00:00"
LATENCY = "2h"
THRESHOLD_MS = 1_767_304_800_000
THRESHOLD_ISO = "2026-01-01T22:00:00.000Z"
SCHEMA = pa.schema([("trip_id", pa.string()), ("region", pa.string()), ("fare", pa.float64()),
                    ("event_time", pa.int64()), ("updated_at", pa.int64())])


def batches() -> list[list[dict]]:
    """Six batches (wall clock increasing): inserts, then updates whose event times straddle the
    threshold, the last one arriving late (event times before the threshold, written after later ones)."""
    def rows(keys, et0, step, wall, fare):
        return [{"trip_id": f"t{k:03d}", "region": "north" if k % 2 else "south", "fare": fare + k,
                 "event_time": et0 + i * step, "updated_at": wall + i} for i, k in enumerate(keys)]
    return [
        rows(range(0, 30), DAY0 + 1 * H, 600_000, DAY0 + 7 * H, 10.0),
        rows(range(0, 15), DAY0 + 10 * H, 480_000, DAY0 + 13 * H, 20.0),
        rows(range(10, 25), DAY0 + 20 * H, 360_000, DAY0 + 22 * H, 30.0),
        rows(range(5, 20), DAY0 + 23 * H, 720_000, DAY0 + 27 * H, 40.0),   # all after the threshold
        rows(range(20, 30), DAY0 + 21 * H, 300_000, DAY0 + 28 * H, 50.0),  # late: before the threshold
        rows(range(0, 8), DAY0 + 25 * H, 600_000, DAY0 + 29 * H, 60.0),    # after: stays in the logs
    ]


def build(path: Path) -> list[list[dict]]:
    init_table(str(path), table_name="trips", record_key="trip_id", precombine_field="updated_at",
               event_time_field="event_time", partition_field="region")
    bs = batches()
    for b in bs:
        write_batch(str(path), pa.Table.from_pylist(b, schema=SCHEMA))
    return bs


def required_versions(bs: list[list[dict]], threshold_ms: int) -> dict[str, int]:
    """trip_id → the updated_at of its last version with event time ≤ threshold (the RO guarantee)."""
    need: dict[str, int] = {}
    for b in bs:
        for r in b:
            if r["event_time"] <= threshold_ms:
                need[r["trip_id"]] = max(need.get(r["trip_id"], r["updated_at"]), r["updated_at"])
    return need


def ro_violations(path: Path, bs: list[list[dict]], threshold_ms: int) -> list[str]:
    """Keys whose read-optimized version (read by hudi-rs) is older than the guarantee requires."""
    from oracle import hudi_rs_read

    ro = hudi_rs_read(path, read_optimized=True)
    have = {r["trip_id"]: r["updated_at"] for r in ro.to_pylist()} if ro.num_rows else {}
    return sorted(k for k, ts in required_versions(bs, threshold_ms).items() if have.get(k, -1) < ts)


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()
