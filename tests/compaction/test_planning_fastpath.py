"""Issue 25 item 1 (P2 planning under 1 s): what planning's fast paths must leave exactly as it
was. The mixed ordering-type refusal takes the writer schemas log_event_ranges decoded with the
write stats (commits it skipped are decoded as before) — judged by fixed outcomes, with a
control table that is not refused. And, as an extra only (the judges are the hand-written and
model tests: test_prefix_facts, test_compaction, test_histories), planning's operations on
seeded random histories compared with a slow reference written here: every file parsed one by
one, each file group's latest slice by the general rule, event ranges from the checked JSON
decoding of every commit, the prefix rule per log, and the prefix extension always read."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

from airflow_hudi_etc.compaction import scheduling
from airflow_hudi_etc.compaction.flips import flip_safe_selection
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.strategy import EventTimeStrategy, Selection
from airflow_hudi_etc.hudi.errors import UnsupportedFeatureError
from airflow_hudi_etc.hudi.file_group.fsview import FileSystemView
from airflow_hudi_etc.hudi.file_group.merge import BlockDecoder
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.timeline.active import iter_write_stats, load_commit_metadata
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from batches import T0, H, batch, iso, row
from model import random_history

def _ts_as_int(commit_file):
    """The commit's writer schema with the ordering field ``ts`` an Avro int (as a Java writer
    whose schema had it int would record it)."""
    meta = json.loads(commit_file.read_bytes())
    schema = json.loads(meta["extraMetadata"]["schema"])
    for f in schema["fields"]:
        if f["name"] == "ts":
            f["type"] = ["null", "int"] if isinstance(f["type"], list) else "int"
    meta["extraMetadata"]["schema"] = json.dumps(schema)
    commit_file.write_text(json.dumps(meta))


@pytest.mark.parametrize("where", ["none", "read-with-stats", "before-the-slices"])
def test_mixed_ordering_types_are_refused_wherever_the_int_schema_is(tmp_path, where):
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time")
    write_batch(str(path), batch([row("a", 1, 0), row("b", 1, 0)]))
    write_batch(str(path), batch([row("a", 2, 1)]))
    old = sorted((path / ".hoodie").glob("*.deltacommit"))
    # compact everything: the later logs belong to its slice, the commits above are before it
    r = schedule(str(path), data_latency="0s", compaction_time=iso(T0 + 2 * H), strategy="compact-all")
    assert r.instant
    from airflow_hudi_etc.compaction.execution import execute

    assert execute(str(path))["status"] == "completed"
    write_batch(str(path), batch([row("a", 3, 3)]))
    write_batch(str(path), batch([row("a", 4, 10)]))
    new = sorted(set((path / ".hoodie").glob("*.deltacommit")) - set(old))
    assert len(old) == 2 and len(new) == 2
    if where == "read-with-stats":
        _ts_as_int(new[0])
    elif where == "before-the-slices":
        _ts_as_int(old[1])
    # threshold at hour 5: the log of hour 3 compacted, the one of hour 10 re-exposed (links)
    kw = dict(data_latency="1h", compaction_time=iso(T0 + 6 * H))
    if where == "none":
        res = schedule(str(path), **kw)
        assert res.instant and res.operations == 1
        return
    before = sorted(os.listdir(path / ".hoodie"))
    with pytest.raises(UnsupportedFeatureError, match="both int and long"):
        schedule(str(path), **kw)
    assert sorted(os.listdir(path / ".hoodie")) == before  # no plan


# ------------------------------------------------------------------ a slow reference (an extra)
def _listed(path):
    out = []
    for d, dirs, files in os.walk(path):
        rel = os.path.relpath(d, path)
        if rel.split(os.sep)[0] == ".hoodie":
            dirs[:] = []
            continue
        out += [f if rel == "." else f"{rel}/{f}" for f in files]
    return out


def _reference_ranges(table):
    """Log path → (min, max) event time or None (unknown: qualifies), by the documented rule:
    every completed write's stats, checked JSON; a stat without minEventTime that wrote records
    makes the log unknown-must-scan (absent here: these histories always carry them)."""
    out = {}
    for inst in table.timeline.completed_writes:
        meta = load_commit_metadata(table.storage.read_bytes(inst.path()), str(inst))
        for st in iter_write_stats(meta):
            p = st.get("path") or ""
            if ".log." not in p:
                continue
            lo = st.get("minEventTime")
            assert lo is not None or (st.get("numDeletes") and not st.get("numWrites"))
            prev = out.get(p)
            out[p] = lo if prev is None else (prev if lo is None else min(prev, lo))
    return out


def _reference_plan(table, threshold_ms):
    view = FileSystemView.from_files(table.timeline, _listed(table.storage.base_uri)).with_replaced(
        table.replaced_file_groups())
    mins = _reference_ranges(table)
    decoder = BlockDecoder(table.arrow_schema)
    out = []
    for key in sorted(view.groups):
        s = view.latest_slice_of(view.groups[key], table.timeline)
        if s is None or not s.log_files:
            continue
        logs = list(s.log_files)
        last = max((i for i, lg in enumerate(logs) if mins.get(lg.path) is None or mins[lg.path] <= threshold_ms),
                   default=-1)
        sel = Selection(tuple(logs[: last + 1]), tuple(logs[last + 1:]))
        if sel.compact and sel.remain:
            sel = flip_safe_selection(table, s, sel, decoder)
        if not sel.compact:
            continue
        size = sum(os.path.getsize(os.path.join(table.storage.base_uri, lg.path)) for lg in sel.compact)
        out.append((s.partition, s.file_id, s.base_instant, s.base_file.name if s.base_file else None,
                    [lg.name for lg in sel.compact], [lg.name for lg in sel.remain], len(sel.compact), size))
    return out


@pytest.mark.parametrize("seed", [0, 1, 2, 4])  # seed 3 ends in deletes: every log qualifies, none kept
@pytest.mark.parametrize("monotone", [True, False])
def test_planning_matches_a_slow_reference_on_random_histories(tmp_path, seed, monotone):
    path = tmp_path / "h"
    init_table(str(path), table_name="h", record_key="key", precombine_field="ts", event_time_field="event_time",
               partition_field="region")
    for op, rows in random_history(seed, 8, monotone_ordering=monotone):
        if op == "upsert":
            write_batch(str(path), batch(rows))
        else:
            write_batch(str(path), pa.table({"key": [r["key"] for r in rows], "region": [r["region"] for r in rows]}),
                        operation="delete")
    table = HudiTable.load(str(path))
    seen_links = seen_ops = 0
    for hours in (0, 2, 3.5, 5, 6, 6.5, 7, 9):
        th = T0 + int(hours * H)
        ops, _ = scheduling._plan_operations(table, EventTimeStrategy(th), "20991231000000000", exact_split=False,
                                             threshold_ms=th, et_field="event_time")
        got = [(op.partition, op.file_id, op.base_instant, op.base_file, list(op.compact_logs),
                [x.target for x in op.links], op.metrics["TOTAL_LOG_FILES"], op.metrics["TOTAL_LOG_FILES_SIZE"])
               for op in ops]
        assert sorted(got) == sorted(_reference_plan(table, th)), hours
        seen_links += sum(len(op.links) for op in ops)
        seen_ops += len(ops)
    assert seen_ops and seen_links  # logs compacted, and logs kept (the prefix rule exercised)
