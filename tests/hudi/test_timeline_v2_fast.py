"""The layout-2 timeline parse's fast path equals its reference (instants, completion times,
errors) on the fixtures' listings and on random names built from timeline-name pieces."""

from __future__ import annotations

import random

import pytest

from airflow_hudi_etc.hudi.timeline.timeline_v2 import parse_layout2, parse_layout2_reference

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


def _lazy_and_full(names):
    from airflow_hudi_etc.hudi.timeline.active import LayoutTwoTimeline

    def view(t):
        key = lambda i: (i.timestamp, i.action, i.state, i.completion_time, i.meta_dir)  # noqa: E731
        return ([key(i) for i in t.pending_compactions], [key(i) for i in t.completed_compactions],
                [key(i) for i in t.pending_replaces])

    from airflow_hudi_etc.hudi.timeline.timeline_v2 import check_no_legacy_completed

    def build():  # what LayoutTwoTimeline.load_for does after the listing
        return LayoutTwoTimeline.from_file_names(names, meta_dir=".hoodie/timeline")

    lazy = build()
    assert lazy._lazy()
    try:
        check_no_legacy_completed(lazy._joined, lazy.meta_dir)
        got = view(lazy)
    except Exception as e:  # noqa: BLE001
        got = (type(e), str(e))
    full = build()
    try:
        full.instants  # noqa: B018 - parse everything first: the accessors then filter the full parse
        want = view(full)
    except Exception as e:  # noqa: BLE001
        want = (type(e), str(e))
    return got, want


ACTIONS = ["deltacommit", "commit", "compaction", "replacecommit", "clustering", "clean", "logcompaction"]


@pytest.mark.parametrize("seed", range(300))
def test_lazy_sensor_answers_equal_the_full_parse(seed):
    """The sensor's questions on layout 2 (pending/completed compactions with completion times,
    pending replacecommits and clusterings) answered from a few names equal the full parse's."""
    rnd = random.Random(seed)
    stamps = [f"2026010100{i:04d}000" for i in range(rnd.randint(1, 8))]
    names = set()
    for _ in range(rnd.randint(0, 14)):
        r, a = rnd.choice(stamps), rnd.choice(ACTIONS)
        kind = rnd.random()
        if kind < 0.3:
            done = {"compaction": "commit", "clustering": "replacecommit", "logcompaction": "deltacommit"}.get(a, a)
            # one completion time per requested time (two completed files of one instant are an
            # error the lazy answers see only in the groups they read)
            c = f"2026010101{r[10:14]}000" if int(r[10:14]) % 2 else r[:-1] + "9"
            names.add(f"{r}_{c}.{done}")
        elif kind < 0.9:
            names.add(f"{r}.{a}.{rnd.choice(['requested', 'inflight'])}")
        elif kind < 0.95:
            names.add(f"{r}.inflight")
        else:
            names.add(rnd.choice([f"{r}.{a}", f"x{r}.{a}.requested", f"{r}.{a}.requested.crc", "history"]))
    names = sorted(names)
    rnd.shuffle(names)
    got, want = _lazy_and_full(names)
    assert got == want, names


def test_load_skips_checksum_files_and_the_history_folder(tmp_path):
    import pyarrow as pa

    from airflow_hudi_etc.hudi.config.properties import load_table_config
    from airflow_hudi_etc.hudi.storage import Storage
    from airflow_hudi_etc.hudi.timeline.active import Timeline
    from airflow_hudi_etc.hudi.write.writer import init_table, write_batch

    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="k", precombine_field="ts", event_time_field="ts",
               table_version=8)
    for i in range(2):
        write_batch(str(path), pa.table({"k": ["a"], "ts": [i]}))
    tl = path / ".hoodie" / "timeline"
    names = sorted(n.name for n in tl.iterdir() if n.name != "history")
    for n in names:
        (tl / f".{n}.crc").write_bytes(b"")
        (tl / f"{n}.crc").write_bytes(b"")
    s = Storage(str(path))
    t = Timeline.load(s, load_table_config(s))
    assert sorted(t.files) == sorted(names + [f".{n}.crc" for n in names]) or sorted(t.files) == names
    assert not any(f.endswith(".crc") and not f.startswith(".") for f in t.files)
    got = [(i.timestamp, i.action, i.state, i.completion_time) for i in t.instants]
    assert got == [(i.timestamp, i.action, i.state, i.completion_time)
                   for i in parse_layout2_reference(names, ".hoodie/timeline")]
    assert len(got) == 2 and t.pending_compactions == () and t.pending_replaces == ()
