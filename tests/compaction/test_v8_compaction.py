"""The compaction life cycle on table versions 8/9 (timeline layout 2), fact by fact.

Expected values are written by hand from the spec (shared/hudi-format-v8-v9.md §2, §3.6, §5) and
judged on what is on storage (names read from the folder, Avro decoded with fastavro directly) and
by hudi-rs 0.5.0 reading the table, never by the product's own readers:

* file names: ``<r>.deltacommit.requested|inflight``, ``<r>_<c>.deltacommit``, logs named with the
  writing deltacommit (version 1), ``<C>.compaction.requested`` in ``.hoodie/timeline`` (no
  ``.aux`` copy), the copy ``.{fid}_{C}.log.1_999999999-0-0``, ``<C>_<c>.commit``;
* Avro commit metadata (deltacommit and compaction write stats as §2.3 says);
* the copy is invisible while C is pending and visible, in slice C, once C completed (hudi-rs);
* §3.6 condition 1: no plan while a write is pending (the table untouched); symlinks refused;
* rollback of C / unschedule / the rollback of a crashed write remove exactly what they must;
* every requested and completion time is greater than every earlier one (one monotonic clock).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest

from airflow_hudi_etc.hudi.index import log_index

from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.lifecycle import rollback, unschedule
from airflow_hudi_etc.compaction.results import Outcome
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.errors import InvalidInputError, TableExistsError, UnsupportedFeatureError
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from oracle import hudi_rs_read, hudi_rs_table
from scenario import cli

T0 = 1_700_000_000_000
H = 3_600_000
SCHEMA = pa.schema([("key", pa.string()), ("ts", pa.int64()), ("event_time", pa.int64()), ("value", pa.float64()),
                    ("region", pa.string())])
LINK_TOKEN = "999999999-0-0"
#: compaction time T0 + 3h, latency 1h: threshold T0 + 2h
CT = dt.datetime.fromtimestamp((T0 + 3 * H) / 1000, dt.timezone.utc).isoformat()


def rows(*recs):
    return pa.Table.from_pylist([dict(key=k, ts=ts, event_time=et, value=v, region="x") for k, ts, et, v in recs],
                                schema=SCHEMA)


def make(tmp_path: Path, version: int = 8) -> tuple[Path, list[str]]:
    """One file group: a base (a, b, c), log 1 (a, event time before the threshold), log 2 (b, after)."""
    p = tmp_path / f"t{version}"
    init_table(str(p), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
               partition_field="region", payload="event-time-ordering", table_version=version)
    insts = [write_batch(str(p), rows(("a", 1, T0, 1.0), ("b", 1, T0, 2.0), ("c", 1, T0, 3.0))).instant,
             write_batch(str(p), rows(("a", 2, T0 + H, 10.0))).instant,
             write_batch(str(p), rows(("b", 2, T0 + 5 * H, 20.0))).instant]
    return p, insts


def tree(p: Path) -> dict[str, str]:
    """Every file (table-relative) → the md5 of its bytes."""
    return {str(f.relative_to(p)): hashlib.md5(f.read_bytes()).hexdigest() for f in sorted(p.rglob("*")) if f.is_file()}


def timeline(p: Path) -> list[str]:
    return sorted(f.name for f in (p / ".hoodie" / "timeline").iterdir() if f.is_file())


def avro(path: Path) -> dict:
    with open(path, "rb") as fh:
        (rec,) = list(fastavro.reader(fh))
    return rec


def completed(p: Path, r: str, action: str) -> Path:
    (f,) = (p / ".hoodie" / "timeline").glob(f"{r}_*.{action}")
    return f


def values(t: pa.Table) -> dict:
    return {r["key"]: r["value"] for r in t.to_pylist()} if t.num_rows else {}


def only_group(p: Path) -> str:
    (base,) = [f.name for f in (p / "region=x").glob("*.parquet")]
    return base.split("_")[0]


@pytest.mark.parametrize("version", [8, 9])
def test_names_avro_metadata_and_copy_visibility(tmp_path, version):
    p, (r1, r2, r3) = make(tmp_path, version)
    fid = only_group(p)
    part = p / "region=x"
    log1, log2 = f".{fid}_{r2}.log.1_0-1-0", f".{fid}_{r3}.log.1_0-1-0"
    assert sorted(f.name for f in part.iterdir() if f.name.startswith(".") and ".log." in f.name) == [log1, log2]
    names = timeline(p)
    for r in (r1, r2, r3):
        assert f"{r}.deltacommit.requested" in names and f"{r}.deltacommit.inflight" in names
        assert (p / ".hoodie/timeline" / f"{r}.deltacommit.requested").stat().st_size == 0
        assert completed(p, r, "deltacommit").read_bytes()[:4] == b"Obj\x01"  # Avro, never JSON
    assert not [n for n in (p / ".hoodie").iterdir() if re.fullmatch(r"\d{17}\..*", n.name)]  # nothing of layout 1
    # ---- deltacommit metadata (spec §2.3)
    ins = avro(completed(p, r1, "deltacommit"))
    (st,) = ins["partitionToWriteStats"]["region=x"]
    assert (st["prevCommit"], st["numInserts"], st["numWrites"], st["fileId"]) == ("null", 3, 3, fid)
    assert st["path"] == f"region=x/{fid}_0-1-0_{r1}.parquet" and ins["operationType"] == "UPSERT"
    upd = avro(completed(p, r2, "deltacommit"))
    (st,) = upd["partitionToWriteStats"]["region=x"]
    assert (st["path"], st["prevCommit"], st["baseFile"], st["logFiles"], st["logVersion"]) == (
        f"region=x/{log1}", r2, None, [log1], 1)
    assert (st["numUpdateWrites"], st["minEventTime"], st["maxEventTime"]) == (1, T0 + H, T0 + H)
    assert st["fileSizeInBytes"] == (part / log1).stat().st_size
    # ---- schedule: the plan in .hoodie/timeline, no .aux copy, the left-out log 2 copied for slice C
    res = schedule(str(p), data_latency="1h", compaction_time=CT)
    assert res.reason == "scheduled" and res.threshold_ms == T0 + 2 * H
    c = res.instant
    assert f"{c}.compaction.requested" in timeline(p)
    assert not [f for f in (p / ".hoodie/.aux").rglob("*") if "compaction" in f.name]
    copy_name = f".{fid}_{c}.log.1_{LINK_TOKEN}"
    assert (part / copy_name).read_bytes() == (part / log2).read_bytes() and not (part / copy_name).is_symlink()
    plan = avro(p / ".hoodie/timeline" / f"{c}.compaction.requested")
    (op,) = plan["operations"]
    assert (op["baseInstantTime"], op["deltaFilePaths"], op["dataFilePath"]) == (r1, [log1], f"{fid}_0-1-0_{r1}.parquet")
    assert plan["version"] == 2
    assert json.loads(plan["extraMetadata"]["hoodie.etc.links.precreated"]) is True
    # pending: hudi-rs reads the old slice only (the copy and slice C are invisible)
    (s,) = hudi_rs_table(p).get_file_slices()
    assert (s.base_file_name, sorted(s.log_file_names)) == (f"{fid}_0-1-0_{r1}.parquet", [log1, log2])
    assert values(hudi_rs_read(p)) == {"a": 10.0, "b": 20.0, "c": 3.0}
    assert values(hudi_rs_read(p, read_optimized=True)) == {"a": 1.0, "b": 2.0, "c": 3.0}
    # ---- execute: base file of C, <C>_<c>.commit (Avro), the copy visible in slice C
    out = execute(str(p))
    assert out["status"] == "completed" and out["instant"] == c
    new_base = f"{fid}_0-2-0_{c}.parquet"
    assert (part / new_base).exists()
    assert f"{c}.compaction.inflight" in timeline(p)
    assert (p / ".hoodie/timeline" / f"{c}.compaction.inflight").stat().st_size == 0
    meta = avro(completed(p, c, "commit"))
    assert (meta["compacted"], meta["operationType"]) == (True, "COMPACT")
    base_st, copy_st = meta["partitionToWriteStats"]["region=x"]
    assert (base_st["path"], base_st["prevCommit"], base_st["prevBaseFile"], base_st["totalLogFilesCompacted"]) == (
        f"region=x/{new_base}", r1, f"{fid}_0-1-0_{r1}.parquet", 1)
    assert (copy_st["path"], copy_st["fileId"], copy_st["prevCommit"], copy_st["logFiles"]) == (
        f"region=x/{copy_name}", fid, c, [copy_name])
    assert copy_st["fileSizeInBytes"] == (part / log2).stat().st_size
    extra = meta["extraMetadata"]
    assert extra["hoodie.etc.threshold.ms"] == str(T0 + 2 * H)
    assert json.loads(extra["hoodie.etc.link.operations"]) == [
        {"link": f"region=x/{copy_name}", "target": f"region=x/{log2}"}]
    assert {"hoodie.etc.compacted.log.files", "hoodie.etc.remaining.log.files"} <= set(extra)
    (s,) = hudi_rs_table(p).get_file_slices()
    assert (s.creation_instant_time, s.base_file_name, s.log_file_names) == (c, new_base, [copy_name])
    assert values(hudi_rs_read(p)) == {"a": 10.0, "b": 20.0, "c": 3.0}  # b only through the copy
    assert values(hudi_rs_read(p, read_optimized=True)) == {"a": 10.0, "b": 2.0, "c": 3.0}


def test_times_come_from_one_monotonic_clock(tmp_path):
    """Writes stamped a day ahead of the clock: every later requested and completion time (the
    schedule's and execute's too, taken from the real clock) is still greater than all earlier ones."""
    p = tmp_path / "t"
    init_table(str(p), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
               partition_field="region", payload="event-time-ordering", table_version=8)
    ahead = dt.datetime.now(dt.timezone.utc) + dt.timedelta(days=1)
    order = []
    for i, recs in enumerate([[("a", 1, T0, 1.0)], [("a", 2, T0 + H, 2.0)], [("a", 3, T0 + 5 * H, 3.0)]]):
        r = write_batch(str(p), rows(*recs), now=ahead).instant
        order += [r, completed(p, r, "deltacommit").name.split("_")[1].split(".")[0]]
    c = schedule(str(p), data_latency="1h", compaction_time=CT).instant
    order.append(c)
    execute(str(p))
    order.append(completed(p, c, "commit").name.split("_")[1].split(".")[0])
    assert all(len(t) == 17 for t in order)
    assert order == sorted(order) and len(set(order)) == len(order), order
    assert order[0].startswith(ahead.strftime("%Y%m%d"))


def test_no_plan_while_a_write_is_pending_and_no_symlinks(tmp_path):
    p, _ = make(tmp_path)
    # §3.6 condition 1 (stricter: any pending write blocks scheduling): a crashed writer's deltacommit
    pending = "20231114220000000"
    (p / ".hoodie/timeline" / f"{pending}.deltacommit.requested").write_bytes(b"")
    before = tree(p)
    res = schedule(str(p), data_latency="1h", compaction_time=CT)
    assert res.instant is None and res.outcome is Outcome.WAITING and pending in res.reason
    assert tree(p) == before
    (p / ".hoodie/timeline" / f"{pending}.deltacommit.requested").unlink()
    before = tree(p)
    with pytest.raises(UnsupportedFeatureError, match="symlink"):
        schedule(str(p), data_latency="1h", compaction_time=CT, link_mode="symlink")
    assert tree(p) == before


def test_rollback_then_unschedule_remove_exactly_theirs(tmp_path):
    p, (r1, r2, r3) = make(tmp_path)
    fid = only_group(p)
    at_start = tree(p)
    c = schedule(str(p), data_latency="1h", compaction_time=CT).instant
    scheduled = tree(p)
    copy_rel = f"region=x/.{fid}_{c}.log.1_{LINK_TOKEN}"
    # (and the event-time index of the logs schedule scanned: .aux, safe to lose, no reader sees it)
    assert set(scheduled) - set(at_start) - {log_index.INDEX_PATH} == {f".hoodie/timeline/{c}.compaction.requested",
                                                                   copy_rel}

    def die(point):
        raise RuntimeError("executor lost (injected)")

    with crash.hooked("execute.before-commit-file", die), pytest.raises(RuntimeError):
        execute(str(p))
    base_rel = f"region=x/{fid}_0-2-0_{c}.parquet"
    assert (p / base_rel).exists() and f"{c}.compaction.inflight" in timeline(p)
    assert values(hudi_rs_read(p)) == {"a": 10.0, "b": 20.0, "c": 3.0}  # nothing of C visible
    out = rollback(str(p), instant=c)
    assert (out["status"], out["files_removed"]) == ("requested", 1)
    rb = out["rollback_instant"]
    after = tree(p)
    # the base file and the inflight file are gone; the requested plan and its copy stay; the
    # rollback is recorded as <R>.rollback.requested / .inflight / <R>_<c>.rollback
    assert not (p / base_rel).exists() and f"{c}.compaction.inflight" not in timeline(p)
    rb_files = {k for k in after if k.startswith(f".hoodie/timeline/{rb}")}
    assert {k for k in after if k not in scheduled and not k.startswith(".hoodie/.heartbeat")} == rb_files
    assert {k.rsplit("/", 1)[1].split(".", 1)[1] for k in rb_files} == {"rollback.requested", "rollback.inflight",
                                                                         "rollback"}
    assert all(after[k] == v for k, v in scheduled.items() if k in after and not k.startswith(".hoodie/.heartbeat"))
    rb_plan = avro(p / ".hoodie/timeline" / f"{rb}.rollback.requested")
    assert rb_plan["instantToRollback"]["commitTime"] == c
    (req,) = rb_plan["RollbackRequests"]
    assert req["filesToBeDeleted"] == [f"{p}/{base_rel}"] and req["logBlocksToBeDeleted"] == {}
    assert rb < completed(p, rb, "rollback").name.split("_")[1]
    # unschedule: the plan and its copy go, nothing else
    before = tree(p)
    assert unschedule(str(p), instant=c) == {"instant": c, "status": "unscheduled", "links_removed": 1}
    assert set(before) - set(tree(p)) == {f".hoodie/timeline/{c}.compaction.requested", copy_rel}
    assert values(hudi_rs_read(p)) == {"a": 10.0, "b": 20.0, "c": 3.0}
    assert values(hudi_rs_read(p, read_optimized=True)) == {"a": 1.0, "b": 2.0, "c": 3.0}


def test_a_crashed_write_is_rolled_back_by_deleting_its_files(tmp_path):
    p, (r1, r2, r3) = make(tmp_path)
    fid = only_group(p)
    before = tree(p)
    f = tmp_path / "w.parquet"
    import pyarrow.parquet as pq

    pq.write_table(rows(("a", 9, T0, 99.0), ("z", 1, T0, 26.0)), f)
    proc = cli("write", "--path", p, "--input", f, crash="write.before-commit@1")
    assert proc.returncode == crash.EXIT_CODE
    (dead,) = [n.split(".")[0] for n in timeline(p) if n.endswith(".deltacommit.inflight") and
               not list((p / ".hoodie/timeline").glob(f"{n.split('.')[0]}_*"))]
    written = sorted(k for k in set(tree(p)) - set(before) if not k.startswith(".hoodie"))
    assert f"region=x/.{fid}_{dead}.log.1_0-1-0" in written and any(k.endswith(f"_{dead}.parquet") for k in written)
    assert values(hudi_rs_read(p)) == {"a": 10.0, "b": 20.0, "c": 3.0}  # files of a pending write: invisible
    res = write_batch(str(p), rows(("c", 5, T0, 30.0)))
    assert res.rolled_back == (dead,)
    assert not [k for k in written if (p / k).exists()]  # every file named with it is gone
    assert not [n for n in timeline(p) if n.startswith(dead)]  # and its requested/inflight files
    (rb,) = [n for n in timeline(p) if n.endswith(".rollback") and "_" in n]
    plan = avro(p / ".hoodie/timeline" / f"{rb.split('_')[0]}.rollback.requested")
    assert plan["instantToRollback"]["commitTime"] == dead
    assert sorted(x for req in plan["RollbackRequests"] for x in req["filesToBeDeleted"]) == [f"{p}/{k}" for k in written]
    assert all(req["logBlocksToBeDeleted"] == {} for req in plan["RollbackRequests"])
    assert values(hudi_rs_read(p)) == {"a": 10.0, "b": 20.0, "c": 30.0}


def test_init_table_version_from_the_cli(tmp_path):
    p = tmp_path / "t"
    args = ["init", "--path", p, "--table-name", "t", "--record-key", "key", "--precombine-field", "ts",
            "--event-time-field", "event_time", "--partition-field", "region"]
    out = json.loads(cli(*args, "--table-version", "9").stdout)
    assert out["created"] is True
    props = dict(line.split("=", 1) for line in (p / ".hoodie/hoodie.properties").read_text().splitlines()
                 if "=" in line and not line.startswith("#"))
    assert (props["hoodie.table.version"], props["hoodie.timeline.layout.version"], props["hoodie.table.ordering.fields"]) \
        == ("9", "2", "ts")
    assert (p / ".hoodie/timeline/history").is_dir() and not (p / ".hoodie/archived").exists()
    assert not (p / ".hoodie/metadata").exists() and props["hoodie.table.metadata.partitions"] == ""
    assert json.loads(cli(*args, "--table-version", "9").stdout)["created"] is False  # the same again
    with pytest.raises(TableExistsError):
        init_table(str(p), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
                   partition_field="region", table_version=8)
    with pytest.raises(InvalidInputError, match="table version"):
        init_table(str(tmp_path / "u"), table_name="t", record_key="key", precombine_field="ts",
                   event_time_field="event_time", table_version=7)
    assert not (tmp_path / "u").exists()
