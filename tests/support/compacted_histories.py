"""A history compacted twice (partial compactions), with late updates in between."""

from __future__ import annotations

from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from batches import batch, run_history
from reading import iso

T0 = 1_700_000_000_000
H = 3_600_000


def two_compactions(tmp_path, seed, link_mode):
    """A history, a partial compaction, two more batches, a second partial compaction."""
    path, model = run_history(tmp_path, seed, partitioned=False, batches=6, monotone=True,
                              exclusive_cleaner=link_mode == "symlink")
    r1 = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 3 * H), link_mode=link_mode)
    assert r1.instant, r1.reason
    execute(str(path))
    rows = [{"key": f"k{i:05d}", "ts": 50_000 + i, "event_time": T0 + (i % 7) * H, "value": float(i),
             "note": "late", "region": "a"} for i in range(0, 40, 3)]
    write_batch_and_model(path, model, rows)
    r2 = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 5 * H), link_mode=link_mode)
    assert r2.instant, r2.reason
    execute(str(path))
    return path, model


def write_batch_and_model(path, model, rows):
    from airflow_hudi_etc.hudi.write.writer import write_batch

    write_batch(str(path), batch(rows))
    model.upsert(rows, "key")
