"""The layout-2 timeline parse's fast path equals its reference (instants, completion times,
errors) on the fixtures' listings and on random names built from timeline-name pieces."""

from __future__ import annotations

import random

import pytest

from airflow_hudi_etc.hudi.timeline_v2 import parse_layout2, parse_layout2_reference

R, C = "20251220210127080", "20251220210128625"
PIECES = [R, C, "20251220210127", "2025122021012708", "٢٠٢٥١٢٢٠٢١٠١٢٧٠٨٠", "_", ".", "deltacommit", "commit",
          "compaction", "logcompaction", "clustering", "replacecommit", "clean", "rollback", "indexing",
          "savepoint", "restore", "requested", "inflight", "crc", "x", "\n", "history", ""]


def _outcome(fn, names):
    try:
        return [(i.timestamp, i.action, i.state, i.completion_time, i.meta_dir) for i in fn(names, ".hoodie/timeline")]
    except Exception as e:  # noqa: BLE001 - the same error is part of the contract
        return (type(e), str(e))


def _name(rnd):
    shape = rnd.random()
    t1, t2 = rnd.choice(PIECES[:5]), rnd.choice(PIECES[:5])
    act = rnd.choice(PIECES[7:17])
    if shape < 0.3:
        return f"{t1}_{t2}.{act}"
    if shape < 0.6:
        return f"{t1}.{act}.{rnd.choice(['requested', 'inflight'])}"
    if shape < 0.65:
        return f"{t1}.inflight"
    if shape < 0.67:  # a completed file without its completion time (an unfinished upgrade)
        return f"{t1}.{act}"
    return "".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 6)))


@pytest.mark.parametrize("seed", range(300))
def test_fast_parse_equals_the_reference_on_random_names(seed):
    rnd = random.Random(seed)
    names = [_name(rnd) for _ in range(rnd.randint(0, 12))]
    if rnd.random() < 0.5:  # mostly well-formed listings too, not only errors
        names = [n for n in names if "\n" not in n]
    assert _outcome(parse_layout2, names) == _outcome(parse_layout2_reference, names), names


def test_fast_parse_equals_the_reference_on_a_real_timeline(tmp_path):
    names = []
    for i in range(200):
        r, c = f"2026010100{i:04d}000", f"2026010100{i:04d}500"
        act = ["deltacommit", "compaction", "clean", "rollback", "clustering"][i % 5]
        done = {"compaction": "commit", "clustering": "replacecommit"}.get(act, act)
        names += [f"{r}.{act}.requested", f"{r}.{act}.inflight"] + ([f"{r}_{c}.{done}"] if i % 7 else [])
    random.Random(1).shuffle(names)
    got = _outcome(parse_layout2, names)
    assert isinstance(got, list) and len(got) == 200
    assert got == _outcome(parse_layout2_reference, names)
