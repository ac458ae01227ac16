"""Demo: create a MOR table, write late-arriving batches with the Spark engine, show status.

Everything goes through the ``hudi-etc`` command, as a user would run it.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / ".demo"
TABLE = DEMO / "trips"
HOUR = 3_600_000


def hudi_etc(*args: str) -> dict:
    exe = Path(sys.executable).parent / "hudi-etc"
    t0 = time.monotonic()
    proc = subprocess.run([str(exe), *args], capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"hudi-etc {args[0]} failed")
    out = json.loads(proc.stdout)
    print(f"$ hudi-etc {' '.join(args)}   ({time.monotonic() - t0:.1f} s)")
    return out


def batch_file(n: int, rows: list[dict]) -> str:
    p = DEMO / f"batch{n}.jsonl"
    p.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return str(p)


def main() -> None:
    shutil.rmtree(DEMO, ignore_errors=True)
    DEMO.mkdir(parents=True)
    rng = random.Random(7)
    day0 = 1_767_225_600_000  # 2026-01-01T00:00Z
    cities = ["chennai", "san_francisco", "sao_paulo"]
    hudi_etc("init", "--path", str(TABLE), "--table-name", "trips", "--record-key", "trip_id",
             "--precombine-field", "updated_at", "--event-time-field", "event_time", "--partition-field", "city")
    trips: dict[str, dict] = {}
    for b in range(4):
        wall = day0 + (b + 1) * 6 * HOUR
        rows = []
        for i in range(40):
            if trips and rng.random() < 0.4:
                tid = rng.choice(sorted(trips))
                row = dict(trips[tid])
                row["fare"] = round(row["fare"] * rng.uniform(0.9, 1.2), 2)
            else:
                tid = f"trip-{len(trips):04d}"
                row = {"trip_id": tid, "city": rng.choice(cities), "fare": round(rng.uniform(5, 80), 2)}
            late = int(rng.expovariate(1 / (2 * HOUR)))  # events arrive up to hours late
            row.update(event_time=wall - late, updated_at=wall + i)
            trips[tid] = row
            rows.append(row)
        res = hudi_etc("write", "--path", str(TABLE), "--input", batch_file(b, rows), "--engine", "spark")
        print(f"  deltacommit {res['instant']}: {res['inserts']} inserts, {res['updates']} updates "
              f"({res['files_written']} files)")
    status = hudi_etc("status", "--path", str(TABLE), "--json")
    (DEMO / "status.json").write_text(json.dumps(status, indent=2))
    print(json.dumps({k: status[k] for k in ("table", "timeline", "file_groups", "slices_with_logs",
                                               "log_files", "log_bytes", "min_event_time_iso",
                                               "event_time_source")}, indent=2))
    snap = DEMO / "snapshot.parquet"
    ro = DEMO / "ro.parquet"
    s = hudi_etc("read", "--path", str(TABLE), "--output", str(snap))
    r = hudi_etc("read", "--path", str(TABLE), "--read-optimized", "--output", str(ro))
    print(f"snapshot rows {s['rows']}, read-optimized rows {r['rows']} (RO is stale until compaction)")
    try:
        from hudi import HudiTableBuilder

        t = HudiTableBuilder.from_base_uri(str(TABLE)).build()
        n = sum(b.num_rows for b in t.read())
        print(f"hudi-rs (the official native reader) reads the snapshot: {n} rows")
        assert n == s["rows"], "hudi-rs disagrees with our reader"
    except ImportError:
        pass
    print(f"table at {TABLE}; status in {DEMO / 'status.json'}")


if __name__ == "__main__":
    main()
