"""What a compaction must leave, from the history written (a hand model), read through hudi-rs:
the freshness guarantee of the RO view, the exact RO of an exact split, no duplicate after updates."""

from __future__ import annotations

from airflow_hudi_etc.hudi.write.writer import write_batch
from batches import DATA_COLS, batch
from oracle import hudi_rs_read
from reading import snapshot_by_key


def batch_winners(rows):
    """The row of each key that won the in-batch de-duplication (the only one written)."""
    won = {}
    for r in rows:
        if r["key"] not in won or r["ts"] >= won[r["key"]]["ts"]:
            won[r["key"]] = r
    return won.values()


def check_ro_guarantee(path, history, threshold_ms, snap):
    """RO holds, for every key, a version at least as new as its last update with event time ≤ threshold.

    ``snap``: the snapshot when the plan was made (keys deleted by then are not expected).
    """
    ro = snapshot_by_key(path, ro=True)
    last_ok = {}
    for op, rows in history:
        if op != "upsert":  # a later delete (no event time: compacted eagerly) removes the key from RO
            for r in rows:
                last_ok.pop(r["key"], None)
            continue
        for r in batch_winners(rows):
            if r["event_time"] <= threshold_ms:
                cur = last_ok.get(r["key"])
                if cur is None or r["ts"] >= cur["ts"]:
                    last_ok[r["key"]] = r
    for k, r in last_ok.items():
        if k not in snap:
            continue  # deleted since
        assert k in ro, f"{k} (event time {r['event_time']} <= threshold) missing from RO"
        assert ro[k]["ts"] >= r["ts"], f"{k}: RO has ts {ro[k]['ts']}, needs >= {r['ts']}"


def expected_exact_ro(history, threshold_ms):
    """Hand model of RO after an exact-split compaction of every slice: per key, the latest
    version with event time ≤ threshold, unless a later delete removed the key."""
    ro = {}
    for op, rows in history:
        if op != "upsert":
            for r in rows:
                ro.pop(r["key"], None)
            continue
        for r in batch_winners(rows):
            if r["event_time"] <= threshold_ms and (r["key"] not in ro or r["ts"] >= ro[r["key"]]["ts"]):
                ro[r["key"]] = r
    return {k: {c: r[c] for c in DATA_COLS} for k, r in ro.items()}


def assert_updates_after_compaction_find_their_file_group(path, model):
    """Every live key updated after the compaction: no duplicate may appear (bloom tagging sees it)."""
    snap = model.snapshot()
    rows = [{**{c: v[c] for c in DATA_COLS}, "ts": v["ts"] + 1_000_000, "note": "after"} for v in snap.values()]
    if rows:
        write_batch(str(path), batch(rows))
        model.upsert(rows, "key")
    t = hudi_rs_read(path)
    keys = t.column("key").to_pylist() if t.num_rows else []
    assert len(keys) == len(set(keys)), "duplicate keys after an update following the compaction"
    assert snapshot_by_key(path) == {k: {c: v[c] for c in DATA_COLS} for k, v in model.snapshot().items()}
