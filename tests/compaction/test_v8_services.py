"""Issue 17 part 4: clean, validate, status, reset-threshold on table versions 8 and 9.

Judges: hudi-rs reading what we wrote, a hand-written model of the rows, and hand rules computed
from file names only (spec shared/hudi-format-v8-v9.md §3.2: a log belongs to the slice of the
largest base instant ≤ the completion time of the instant that wrote it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import pytest

from airflow_hudi_etc.compaction.clean import clean
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.validate import validate
from airflow_hudi_etc.hudi.timeline import avro_models as am
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from batches import DATA_COLS, batch
from oracle import hudi_rs_read
from reading import iso

T0 = 1_700_000_000_000
H = 3_600_000
VERSIONS = pytest.mark.parametrize("version", [8, 9])
_COMPLETED = re.compile(r"^(\d{17})_(\d{17})\.([a-z]+)$")
_LOG = re.compile(r"^\.(.+)_(\d{17})\.log\.(\d+)_(.+)$")
_BASE = re.compile(r"^(.+?)_(.+?)_(\d{17})\.parquet$")


class Model:
    """Latest row per key (the histories here have increasing ordering values)."""

    def __init__(self):
        self.rows: dict[str, dict] = {}

    def upsert(self, rows):
        for r in rows:
            self.rows[r["key"]] = dict(r)

    def snapshot(self):
        return {k: {c: v[c] for c in DATA_COLS} for k, v in self.rows.items()}


def by_key(t: pa.Table) -> dict:
    rows = t.to_pylist() if t.num_rows else []
    out = {r["key"]: {c: r[c] for c in DATA_COLS} for r in rows}
    assert len(out) == len(rows), "duplicate keys"
    return out


def rows_of(b: int, keys, event_h) -> list[dict]:
    return [{"key": f"k{i}", "ts": b * 100 + i, "event_time": T0 + event_h(i) * H, "value": float(b * 100 + i),
             "note": f"b{b}", "region": "ab"[i % 2]} for i in keys]


def new_table(tmp_path: Path, version: int) -> Path:
    path = tmp_path / f"v{version}"
    init_table(str(path), table_name=f"t{version}", record_key="key", precombine_field="ts",
               event_time_field="event_time", partition_field="region", table_version=version,
               payload="event-time-ordering")
    return path


def write(path, model, rows):
    res = write_batch(str(path), batch(rows))
    model.upsert(rows)
    return res


def check_hudi_rs(path, model):
    assert by_key(hudi_rs_read(path)) == model.snapshot()


def completions(path: Path) -> dict[str, tuple[str, str]]:
    """requested → (completion, action) from the completed files' names."""
    import pyarrow.parquet as pq

    out = {}
    hist = path / ".hoodie" / "timeline" / "history"
    for f in sorted(hist.glob("*.parquet")) if hist.is_dir() else []:  # archived by Java (LSM)
        for r in pq.read_table(f).to_pylist():
            out[r["instantTime"]] = (r["completionTime"], r["action"])
    for f in (path / ".hoodie" / "timeline").iterdir():
        m = _COMPLETED.match(f.name)
        if m:
            out[m.group(1)] = (m.group(2), m.group(3))
    return out


def data_files(path: Path) -> set[str]:
    return {str(p.relative_to(path)) for p in path.rglob("*") if ".hoodie" not in p.parts and p.is_file()
            and p.name != ".hoodie_partition_metadata"}


def latest_slice_files(path: Path) -> set[str]:
    """Hand rule (spec §3.2), from names only: per file group, the latest completed base file and
    the logs whose writing instant completed at or after it."""
    done = completions(path)
    bases: dict[tuple[str, str], str] = {}
    logs = []
    for rel in data_files(path):
        part, name = rel.rsplit("/", 1)
        m = _BASE.match(name)
        if m and m.group(3) in done:
            k = (part, m.group(1))
            bases[k] = max(bases.get(k, ""), m.group(3))
        m = _LOG.match(name)
        if m and m.group(2) in done:
            logs.append((part, m.group(1), m.group(2), rel))
    keep = set()
    for (part, fid), b in bases.items():
        keep.add(next(r for r in data_files(path) if r.startswith(f"{part}/{fid}_") and r.endswith(f"_{b}.parquet")))
    for part, fid, d, rel in logs:
        if done[d][0] >= bases.get((part, fid), ""):
            keep.add(rel)
    return keep


def two_compactions(tmp_path, version):
    """4 batches, partial compaction C1 (copies of the late logs), a late batch, partial
    compaction C2 (copies of that batch), one more batch."""
    path = new_table(tmp_path, version)
    model = Model()
    for b in range(4):
        write(path, model, rows_of(b, range(10), lambda i, b=b: b + i % 3))
    r1 = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 3 * H))
    assert r1.instant, r1.reason
    assert execute(str(path))["status"] == "completed"
    write(path, model, rows_of(4, range(0, 10, 2), lambda i: 9))
    r2 = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 6 * H))
    assert r2.instant, r2.reason
    out = execute(str(path))
    assert out["status"] == "completed" and out["logs_remaining"] > 0
    write(path, model, rows_of(5, range(1, 10, 3), lambda i: 10))
    return path, model, r1, r2


@VERSIONS
def test_clean_v8_slices_by_completion_time(tmp_path, version):
    path, model, r1, r2 = two_compactions(tmp_path, version)
    check_hudi_rs(path, model)
    ro = by_key(hudi_rs_read(path, read_optimized=True))
    before = data_files(path)
    keep = latest_slice_files(path)
    copies = {f for f in before if f"_{r2.instant}.log." in f}
    assert copies and copies <= keep  # the copies of C2 are in slice C2
    originals = {o for c in copies for o in before - {c}
                 if "/." in o and (path / o).read_bytes() == (path / c).read_bytes()}
    assert len(originals) >= len(copies) and not originals & keep  # the originals are in old slices
    times_before = completions(path)
    out = clean(str(path), retain_commits=1)
    assert out["status"] == "completed"
    after = data_files(path)
    assert after == keep, (sorted(after - keep), sorted(keep - after))
    assert out["files_deleted"] == len(before - after)
    check_hudi_rs(path, model)
    assert by_key(hudi_rs_read(path, read_optimized=True)) == ro
    # the clean instant in layout 2: plan v2 with lastCompletedCommitTimestamp, <t>_<c>.clean Avro
    tl = path / ".hoodie" / "timeline"
    t = out["instant"]
    assert not list((path / ".hoodie").glob("*.clean*"))
    assert t > max(max(r, c) for r, (c, _) in times_before.items())
    (done,) = [f for f in tl.iterdir() if f.name.startswith(f"{t}_") and f.name.endswith(".clean")]
    c = done.name.split("_")[1].split(".")[0]
    assert c > t
    plan = am.read_avro_metadata((tl / f"{t}.clean.requested").read_bytes(), am.CLEANER_PLAN)
    assert plan["version"] == 2
    last_write = max(r for r, (_, a) in times_before.items() if a in ("deltacommit", "commit"))
    assert plan["lastCompletedCommitTimestamp"] == last_write
    assert plan["extraMetadata"] == {"hoodie.etc.retain.commits": "1"}
    meta = am.read_avro_metadata(done.read_bytes(), am.CLEAN_METADATA)
    assert meta["totalFilesDeleted"] == out["files_deleted"]
    assert validate(str(path))["ok"]
    again = clean(str(path), retain_commits=1)
    assert again["status"] == "nothing to clean" and data_files(path) == after


@VERSIONS
def test_clean_keeps_groups_a_pending_plan_does_not_name(tmp_path, version):
    """The completion-time view keys a pending compaction's slice in every file group; a group
    outside the plan written after C must keep its base file (else its rows are lost)."""
    path = new_table(tmp_path, version)
    model = Model()
    write(path, model, rows_of(0, range(10), lambda i: 0))
    write(path, model, rows_of(1, range(0, 10, 2), lambda i: 0))   # region a: early, compactable
    write(path, model, rows_of(2, range(0, 10, 2), lambda i: 0))
    r = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 3 * H))
    assert r.instant, r.reason
    plan = am.read_avro_metadata((path / ".hoodie" / "timeline" / f"{r.instant}.compaction.requested").read_bytes(),
                                 am.COMPACTION_PLAN)
    assert {op["partitionPath"] for op in plan["operations"]} == {"region=a"}
    write(path, model, rows_of(3, range(1, 10, 2), lambda i: 9))   # region b, after C was requested
    write(path, model, rows_of(4, range(1, 10, 2), lambda i: 9))
    check_hudi_rs(path, model)
    b_files = {f for f in data_files(path) if f.startswith("region=b/")}
    out = clean(str(path), retain_commits=1)
    assert out["status"] == "nothing to clean", out
    assert {f for f in data_files(path) if f.startswith("region=b/")} == b_files
    check_hudi_rs(path, model)
    assert execute(str(path))["status"] == "completed"
    check_hudi_rs(path, model)


def _problems(path):
    r = validate(str(path))
    return {(p["kind"], p["path"]) for p in r["problems"]}, set(r["pending_files"])


@VERSIONS
def test_validate_v8_by_writing_instant(tmp_path, version):
    path = new_table(tmp_path, version)
    model = Model()
    for b in range(4):
        write(path, model, rows_of(b, range(10), lambda i, b=b: b + i % 3))
    r = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 3 * H))
    assert r.instant, r.reason
    tl = path / ".hoodie" / "timeline"
    # a pending compaction: its copies (if made at schedule time) are pending files, nothing is wrong
    probs, pending = _problems(path)
    assert probs == set()
    assert pending and pending == {f for f in data_files(path) if f"_{r.instant}.log." in f}
    assert execute(str(path))["status"] == "completed"
    copies = sorted(f for f in data_files(path) if f"_{r.instant}.log." in f)
    assert copies
    probs, pending = _problems(path)
    assert probs == set() and pending == set()
    done = completions(path)
    first = min(done)
    a_log = next(f for f in sorted(data_files(path)) if "/." in f and f"_{r.instant}." not in f)
    part, name = a_log.rsplit("/", 1)
    fid = _LOG.match(name).group(1)
    data = (path / a_log).read_bytes()
    # a deltacommit still running: its requested file and its log (named with its own instant)
    t_run = str(int(max(max(r_, c) for r_, (c, _) in done.items())) + 5)
    (tl / f"{t_run}.deltacommit.requested").write_bytes(b"")
    (path / part / f".{fid}_{t_run}.log.1_0-1-0").write_bytes(data)
    # a log of an instant nobody knows (later than the timeline's start): an orphan
    t_orphan = str(int(first) + 1)
    assert t_orphan not in done
    (path / part / f".{fid}_{t_orphan}.log.1_0-1-0").write_bytes(data)
    # a copy named for a compaction nobody knows: an orphan link
    (path / part / f".{fid}_{t_orphan}.log.1_999999999-0-0").write_bytes(data)
    # a log of an instant older than the active timeline (archived): committed, not an orphan
    t_arch = str(int(first) - 1000)
    (path / part / f".{fid}_{t_arch}.log.1_0-1-0").write_bytes(data)
    probs, pending = _problems(path)
    assert pending == {f"{part}/.{fid}_{t_run}.log.1_0-1-0"}
    assert probs == {("orphan-log", f"{part}/.{fid}_{t_orphan}.log.1_0-1-0"),
                     ("orphan-link", f"{part}/.{fid}_{t_orphan}.log.1_999999999-0-0")}
    for n in (f".{fid}_{t_orphan}.log.1_0-1-0", f".{fid}_{t_orphan}.log.1_999999999-0-0",
              f".{fid}_{t_arch}.log.1_0-1-0", f".{fid}_{t_run}.log.1_0-1-0"):
        (path / part / n).unlink()
    (tl / f"{t_run}.deltacommit.requested").unlink()
    # a copy of slice C is gone: a file the compaction commit wrote, in the current slice
    (path / copies[0]).unlink()
    probs, _ = _problems(path)
    assert ("missing-file", copies[0]) in probs
    # a completed deltacommit whose metadata is JSON (never under layout 2) does not parse as Avro
    d = sorted(f for f in tl.iterdir() if f.name.endswith(".deltacommit") and "_" in f.name)[-1]
    d.write_bytes(b'{"partitionToWriteStats": {}}')
    probs, _ = _problems(path)
    assert ("corrupt-instant", f".hoodie/timeline/{d.name}") in probs


def archive_like_java(path: Path, upto: str) -> list[str]:
    """Move every instant requested at or before ``upto`` from the active timeline into the LSM
    history as Java's archiver writes it (spec §2.6): one level-0 parquet file of
    HoodieLSMTimelineInstant rows (metadata = the completed file's bytes, plan = the requested
    plan's), ``manifest_1`` listing it, ``_version_`` = 1; then the active files are deleted."""
    import json

    import pyarrow.parquet as pq

    tl = path / ".hoodie" / "timeline"
    hist = tl / "history"
    rows, gone = [], []
    for r, (c, action) in sorted(completions(path).items()):
        if r > upto:
            continue
        req = next((f for f in tl.iterdir() if f.name.startswith(f"{r}.") and f.name.endswith(".requested")), None)
        plan = req.read_bytes() if req is not None and ".compaction." in req.name else None
        rows.append({"instantTime": r, "completionTime": c, "action": action,
                     "metadata": (tl / f"{r}_{c}.{action}").read_bytes(), "plan": plan, "version": 1})
        gone += [f for f in tl.iterdir() if f.name.startswith(f"{r}.") or f.name.startswith(f"{r}_")]
    schema = pa.schema([("instantTime", pa.string()), ("completionTime", pa.string()), ("action", pa.string()),
                        ("metadata", pa.binary()), ("plan", pa.binary()), ("version", pa.int32())])
    name = f"{rows[0]['instantTime']}_{max(r['completionTime'] for r in rows)}_0.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), hist / name)
    (hist / "manifest_1").write_text(json.dumps(
        {"files": [{"fileName": name, "fileLen": (hist / name).stat().st_size}]}, indent=2))
    (hist / "_version_").write_text("1")
    for f in gone:
        f.unlink()
    return [r["instantTime"] for r in rows]


@VERSIONS
def test_status_threshold_reset_and_lsm_history(tmp_path, version):
    from airflow_hudi_etc.compaction.metrics import table_metrics
    from airflow_hudi_etc.compaction.threshold_reset import reset_threshold
    from airflow_hudi_etc.compaction.readiness import check_readiness

    path = new_table(tmp_path, version)
    model = Model()
    written = {}  # writing instant → its rows
    for b in range(4):
        rows = rows_of(b, range(10), lambda i, b=b: b + i % 3)
        written[write(path, model, rows).instant] = rows
    r = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 3 * H))
    assert r.instant and r.threshold_ms == T0 + 2 * H
    m = table_metrics(str(path))
    assert m["pending_compactions"] == [r.instant] and m["threshold_ms"] is None
    assert execute(str(path))["status"] == "completed"
    for b in (4, 5):
        rows = rows_of(b, range(0, 10, 2), lambda i, b=b: 9 + b)
        written[write(path, model, rows).instant] = rows
    logs = {f for f in latest_slice_files(path) if "/." in f}
    # the event times in the remaining logs, by hand: a log holds its batch's rows of its partition;
    # a copy named C holds what the byte-identical original holds
    files = data_files(path)

    def batch_of(rel):
        inst = _LOG.match(rel.rsplit("/", 1)[1]).group(2)
        if inst in written:
            return inst
        (orig,) = [f for f in files if f != rel and "/." in f and (path / f).read_bytes() == (path / rel).read_bytes()]
        return batch_of(orig)

    ets = [row["event_time"] for f in logs for row in written[batch_of(f)]
           if f.startswith(f"region={row['region']}/")]
    assert any(f"_{r.instant}.log." in f for f in logs)
    m = table_metrics(str(path))
    assert (m["threshold_ms"], m["last_compaction_instant"], m["pending_compactions"]) == (T0 + 2 * H, r.instant, [])
    assert m["min_event_time_ms"] == min(ets)
    assert m["remaining_log_files"] == len(logs)
    assert m["remaining_log_bytes"] == sum((path / f).stat().st_size for f in logs)
    assert m["table_version"] == version
    from airflow_hudi_etc.report import report_data

    fig = report_data(str(path))["figures"]
    assert (fig["compactions"], fig["deltacommits"], fig["threshold_ms"]) == (1, 6, T0 + 2 * H)
    assert fig["max_event_time_written_ms"] == max(row["event_time"] for rows in written.values() for row in rows)
    # Java archives the first deltacommits and the compaction into the LSM history
    archived = archive_like_java(path, r.instant)
    assert r.instant in archived and len(archived) == 5
    assert not [f for f in (path / ".hoodie" / "timeline").iterdir() if f.name.startswith(r.instant)]
    check_hudi_rs(path, model)
    m = table_metrics(str(path))
    assert (m["threshold_ms"], m["last_compaction_instant"]) == (T0 + 2 * H, r.instant)
    assert m["remaining_log_files"] == len(logs) and m["min_event_time_ms"] == min(ets)
    from airflow_hudi_etc.report import report_data

    (h,) = report_data(str(path))["history"]
    assert (h["instant"], h["threshold_ms"], h["strategy"]) == (r.instant, T0 + 2 * H, "event-time")
    rd = check_readiness(str(path), threshold_ms=T0 + 2 * H)
    assert (rd.ready, rd.covered, rd.last_compaction_instant) == (False, True, r.instant)
    assert check_readiness(str(path), threshold_ms=T0 + 3 * H).ready
    # reset-threshold finds the archived compaction and lowers its threshold
    out = reset_threshold(str(path), to=iso(T0 + H))
    assert (out["instant"], out["status"], out["threshold_ms"]) == (r.instant, "reset", T0 + H)
    assert table_metrics(str(path))["threshold_ms"] == T0 + H
    assert validate(str(path))["ok"]
    # clean after the archival: archived instants count as committed, slices by the LSM's completion times
    keep = latest_slice_files(path)
    assert clean(str(path), retain_commits=1)["status"] == "completed"
    assert data_files(path) == keep
    check_hudi_rs(path, model)
    assert validate(str(path))["ok"]


_FIXTURES = {8: ("v8_trips_8i3u1d", "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"),
             9: ("v9_timebasedkeygen_nonhivestyle", "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle.zip")}


def _fixture(tmp_path, version) -> Path:
    import zipfile

    from airflow_hudi_etc.hudi.protocol.coexistence import drop_metadata_table
    from paths import FIXTURES

    name, rel = _FIXTURES[version]
    if not (FIXTURES / rel).exists():
        pytest.skip(f"fixture {rel} not available")
    with zipfile.ZipFile(FIXTURES / rel) as zf:
        zf.extractall(tmp_path, members=[m for m in zf.namelist() if not m.startswith("__MACOSX/")])
    from airflow_hudi_etc.hudi.storage import Storage

    assert drop_metadata_table(Storage(str(tmp_path / name)))["status"] == "dropped"
    return tmp_path / name


def _rows(t: pa.Table) -> list:
    from oracle import norm

    return sorted(tuple(sorted((k, repr(norm(v))) for k, v in r.items())) for r in t.to_pylist())


@VERSIONS
def test_fixture_clean_validate_status(tmp_path, version):
    """Java-written v8/v9 tables (after drop-metadata-table): clean removes exactly the slices the
    name-only rule calls old, hudi-rs reads the same before and after, validate finds nothing."""
    from airflow_hudi_etc.compaction.metrics import table_metrics

    path = _fixture(tmp_path, version)
    assert validate(str(path))["ok"]
    snap, ro = _rows(hudi_rs_read(path)), _rows(hudi_rs_read(path, read_optimized=True))
    keep = latest_slice_files(path)
    before = data_files(path)
    out = clean(str(path), retain_commits=1)
    assert data_files(path) == keep
    assert out["files_deleted"] == len(before - keep)
    assert (out["status"] == "completed") == bool(before - keep)
    if version == 8:  # the compaction 20251220210129235 made every group's old slice cleanable
        assert len(before - keep) == 7
    assert _rows(hudi_rs_read(path)) == snap and _rows(hudi_rs_read(path, read_optimized=True)) == ro
    assert validate(str(path))["ok"]
    m = table_metrics(str(path))
    assert m["remaining_log_files"] == len([f for f in keep if "/." in f])
    assert (m["threshold_ms"], m["table_version"]) == (None, version)


@pytest.mark.parametrize("point", ["clean.after-requested", "clean.after-inflight", "clean.after-delete",
                                   "clean.before-complete"])
def test_clean_v8_crash_then_retry_finishes_it(tmp_path, point):
    from airflow_hudi_etc.hudi import crash

    path, model, _, _ = two_compactions(tmp_path, 8)
    keep = latest_slice_files(path)
    hits = []

    def die(name):
        hits.append(name)
        if len(hits) == 1:
            raise OSError(f"killed at {name} (injected)")

    with crash.hooked(point, die):
        with pytest.raises(OSError):
            clean(str(path), retain_commits=1)
    tl = path / ".hoodie" / "timeline"
    (req,) = [f.name for f in tl.iterdir() if f.name.endswith(".clean.requested")]
    t = req.split(".")[0]
    assert not [f for f in tl.iterdir() if f.name.startswith(f"{t}_")]
    out = clean(str(path), retain_commits=1)
    assert (out["instant"], out["status"]) == (t, "resumed and completed")
    assert data_files(path) == keep
    assert len([f for f in tl.iterdir() if f.name.startswith(f"{t}_") and f.name.endswith(".clean")]) == 1
    check_hudi_rs(path, model)
    assert validate(str(path))["ok"]


def expected_after_clean(path: Path, retain: int, pending_groups: set) -> set[str]:
    """Hand rule of KEEP_LATEST_COMMITS on v8 slices, from names only: per file group, the slices
    keyed by completed base instants (plus a first log-only slice); slice i goes when slice i+1's
    key ≤ the earliest retained write (the ``retain``-th latest completed write); groups a pending
    compaction plans keep everything."""
    done = completions(path)
    writes = sorted(r for r, (_, a) in done.items() if a in ("deltacommit", "commit"))
    files = data_files(path)
    if len(writes) <= retain:
        return files
    earliest = writes[-retain]
    groups: dict[tuple[str, str], dict] = {}
    for rel in files:
        part, name = rel.rsplit("/", 1)
        m = _BASE.match(name)
        if m and m.group(3) in done:
            groups.setdefault((part, m.group(1)), {"bases": {}, "logs": []})["bases"][m.group(3)] = rel
        m = _LOG.match(name)
        if m and m.group(2) in done:
            groups.setdefault((part, m.group(1)), {"bases": {}, "logs": []})["logs"].append((m.group(2), rel))
    keep = {f for f in files if not (_BASE.match(f.rsplit("/", 1)[1]) or _LOG.match(f.rsplit("/", 1)[1]))}
    for key, g in groups.items():
        slices: dict[str, set] = {b: {rel} for b, rel in g["bases"].items()}
        for d, rel in sorted(g["logs"]):
            below = [b for b in slices if b <= done[d][0]]
            slices.setdefault(max(below) if below else d, set()).add(rel)
        ks = sorted(slices)
        for i, k in enumerate(ks):
            if key in pending_groups or i == len(ks) - 1 or ks[i + 1] > earliest:
                keep |= slices[k]
    # files of instants not completed (running or failed writes) are never the cleaner's
    keep |= {f for f in files if (m := _LOG.match(f.rsplit("/", 1)[1]) or _BASE.match(f.rsplit("/", 1)[1]))
             and (m.group(2) if m.re is _LOG else m.group(3)) not in done}
    return keep


@pytest.mark.parametrize("seed", [1, 2, 3])
@VERSIONS
def test_clean_random_histories_v8(tmp_path, version, seed):
    import random

    rnd = random.Random(seed * 10 + version)
    path = new_table(tmp_path, version)
    model = Model()
    write(path, model, rows_of(0, range(12), lambda i: 0))
    hour, b, pending = 1, 1, None
    for step in range(24):
        op = {21: "compact", 22: "clean", 23: "clean"}.get(step) or rnd.choice(
            ["write", "write", "write", "compact", "schedule", "clean"])
        if op == "write" or (op == "schedule" and pending):
            pool = rnd.choice([range(12), range(0, 12, 2), range(1, 12, 2)])  # both regions, or one
            keys = sorted(rnd.sample(list(pool), rnd.randint(2, min(8, len(pool)))))
            hour += rnd.randint(0, 2)
            write(path, model, rows_of(b, keys, lambda i, h=hour: h - rnd.randint(0, 3)))
            b += 1
        elif op in ("compact", "schedule"):
            if pending:
                assert execute(str(path), instant=pending)["status"] == "completed"
                pending = None
                continue
            r = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + (hour + 1) * H))
            if r.instant and op == "compact":
                assert execute(str(path), instant=r.instant)["status"] == "completed"
            elif r.instant:
                pending = r.instant
        else:
            retain = 1 if step >= 22 else rnd.randint(1, 3)
            planned = set()
            if pending:
                plan = am.read_avro_metadata(
                    (path / ".hoodie" / "timeline" / f"{pending}.compaction.requested").read_bytes(), am.COMPACTION_PLAN)
                planned = {(op_["partitionPath"], op_["fileId"]) for op_ in plan["operations"]}
            want = expected_after_clean(path, retain, planned)
            snap_ro = by_key(hudi_rs_read(path, read_optimized=True))
            out = clean(str(path), retain_commits=retain)
            assert data_files(path) == want, (step, sorted(data_files(path) ^ want))
            assert by_key(hudi_rs_read(path, read_optimized=True)) == snap_ro
        check_hudi_rs(path, model)
        assert validate(str(path))["ok"], validate(str(path))["problems"]
