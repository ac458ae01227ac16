"""What the real-Java tests share (tests/java/): a small table made by our ``Table.create``, rows
with an event time, and the three judges — Java's read, hudi-rs and our reader."""

from __future__ import annotations

import datetime as dt
import os

from airflow_hudi_etc import Table
from java_hudi import timeline_dir
from oracle import hudi_rs_read


def at(h: int, day: int = 1) -> dt.datetime:
    return dt.datetime(2026, 1, day, h, tzinfo=dt.timezone.utc)


def row(k, ts, h, v, city="sf"):
    """A record: key ``k``, ordering value ``ts``, event time 2026-01-01 ``h``:00Z, value ``v``."""
    return {"k": k, "ts": ts, "event_time": at(h), "city": city, "v": float(v)}


def new_table(tmp_path, version, name="t", java_compaction="off") -> Table:
    """A new table of ours; ``java_compaction=None``: nothing recorded, as on a table Java created."""
    return Table.create(str(tmp_path / name), table_name=name, record_key="k", precombine_field="ts",
                        event_time_field="event_time", partition_field="city", table_version=version,
                        java_compaction=java_compaction)


def values(rows) -> dict:
    """``{key: v}``; a key read more than once maps to ``("read twice", v1, v2, ...)``."""
    out: dict = {}
    for r in rows:
        k = r["k"]
        if k in out:
            prev = out[k] if isinstance(out[k], tuple) else ("read twice", out[k])
            out[k] = (*prev, r["v"])
        else:
            out[k] = r["v"]
    return out


def judges(java, path, *, ro=False, as_of=None, hudi_rs=True) -> dict:
    """``{judge: {key: v}}`` from Java's read, hudi-rs and our reader. ``hudi_rs=False`` while a
    plan is pending on v6: hudi-rs drops the logs of a pending compaction's slice C there
    (shared/hudi-rs-oracle.md), Java and our reader merge them."""
    if as_of:
        j = java.read(path, query="time_travel", as_of=as_of)
    else:
        j = java.read(path, query="read_optimized" if ro else "snapshot")
    ours = Table.open(str(path)).read(read_optimized=ro, as_of=as_of)
    out = {"java": values(j), "ours": values(ours.to_pylist())}
    if hudi_rs:
        rs = hudi_rs_read(path, read_optimized=ro, as_of=as_of)
        out["hudi-rs"] = values(rs.to_pylist() if rs.num_rows else [])
    return out


def assert_all(java, path, expected: dict, **kw):
    got = judges(java, path, **kw)
    assert got == {j: expected for j in got}, f"expected {expected}, read {got}"


def timeline_names(path) -> list[str]:
    """The active timeline's instant file names (layout 1 or 2)."""
    return sorted(n for n in os.listdir(timeline_dir(path)) if n[:1].isdigit())


def completion_time(path, instant: str) -> str:
    """An instant's completion time (layout-2 file name), or the instant itself (layout 1)."""
    for n in timeline_names(path):
        if n.startswith(instant + "_") and not n.endswith((".requested", ".inflight")):
            return n.split("_")[1].split(".")[0]
    return instant


def java_rows_by_key(java, path, *, ro: bool = False, columns=("key", "ts", "event_time", "value", "note", "region"),
                     key: str = "key") -> dict:
    """``{key: {column: value}}`` of Java's snapshot (or RO) read of the families' tables (the
    columns of tests/support/batches.py); a key read twice fails."""
    out: dict = {}
    for r in java.read(path, query="read_optimized" if ro else "snapshot"):
        assert r[key] not in out, f"Java {'RO' if ro else 'snapshot'}: key {r[key]} read twice"
        out[r[key]] = {c: r[c] for c in columns}
    return out


def column_stats_differences(java, path) -> list | None:
    """The metadata table's ``column_stats`` (Hudi's ``show_metadata_table_column_stats``) against
    the base files' own values, read with pyarrow: [(file, column, what, MDT says, file says)];
    None when the table keeps no column stats (v6, and 1.0's defaults). Also a difference: a
    file group's newest base file holding rows with no stats at all (a reader skipping by them
    would skip it)."""
    import re
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    props = (Path(path) / ".hoodie" / "hoodie.properties").read_text()
    m = re.search(r"^hoodie\.table\.metadata\.partitions=(.*)$", props, re.M)
    if not m or "column_stats" not in m.group(1).split(","):
        return None
    files = {f.name: f for f in Path(path).rglob("*.parquet") if ".hoodie" not in f.parts and f.stat().st_size}
    if not files:
        return []
    columns = [c for c in pq.read_schema(next(iter(files.values()))).names if not c.startswith("_hoodie_")]
    rows = java.sql(f"CALL show_metadata_table_column_stats(table => '{{table}}', targetColumns => '{','.join(columns)}')",
                    path=path, options={"hoodie.metadata.enable": "true"})
    out, seen = [], set()
    for r in rows:
        name, col = r["file_name"], r["column_name"]
        f = files.get(name)
        if f is None:
            out.append((name, col, "stats of a file storage does not hold", None, None))
            continue
        seen.add(name)
        arr = pq.read_table(f, columns=[col]).column(0)
        if pa.types.is_timestamp(arr.type):  # Hudi shows a timestamp's stats as its long value
            arr = arr.cast("int64")
        mm = pc.min_max(arr).as_py()
        want = (mm["min"], mm["max"], arr.null_count)
        typed = float if isinstance(want[0], float) else int if isinstance(want[0], int) else str
        got = tuple(None if v is None else typed(v) for v in (r["min_value"], r["max_value"])) + (r["null_number"],)
        if got != want:
            out.append((name, col, "min, max, nulls", got, want))
    completed = {n.split(".")[0].split("_")[0] for n in timeline_names(path)
                 if not n.endswith((".requested", ".inflight"))}
    newest: dict = {}
    for name in files:  # <fileId>_<token>_<instant>.parquet; a killed command's file is no one's
        fid, inst = name.split("_")[0], name.rsplit("_", 1)[1].split(".")[0]
        if inst in completed and inst > newest.get(fid, ("",))[0]:
            newest[fid] = (inst, name)
    # (a base file of no rows, an exact split's whose records were all after the threshold, has
    # none: Hudi's metadata writer reads its footer and finds no column to range; no reader can
    # miss a record by skipping it)
    out += [(name, "*", "no column stats", None, None) for _, name in newest.values()
            if name not in seen and pq.ParquetFile(files[name]).metadata.num_rows > 0]
    return out
