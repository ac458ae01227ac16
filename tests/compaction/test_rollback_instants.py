"""Rollbacks are recorded on the timeline as Hudi records them: ``<R>.rollback.requested`` (Avro
HoodieRollbackPlan), ``<R>.rollback.inflight``, ``<R>.rollback`` (Avro HoodieRollbackMetadata).

The files are decoded with plain fastavro (the schema each file carries), not with our models,
and compared with what was on disk before the rollback; hudi-rs reads the table afterwards.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import fastavro
import pyarrow as pa

import airflow_table as at
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.lifecycle import rollback
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.write.writer import write_batch
from oracle import hudi_rs_read
from scenario import cli


def rollbacks(table: Path) -> dict[str, dict]:
    """rollback instant → {state: decoded record or b'' (inflight)} straight from the files."""
    out: dict[str, dict] = {}
    for f in sorted((table / ".hoodie").iterdir()):
        name = f.name
        if ".rollback" not in name:
            continue
        ts, rest = name.split(".", 1)
        data = f.read_bytes()
        state = {"rollback.requested": "requested", "rollback.inflight": "inflight", "rollback": "completed"}[rest]
        out.setdefault(ts, {})[state] = next(iter(fastavro.reader(io.BytesIO(data)))) if data else b""
    return out


def data_files(table: Path) -> set[str]:
    return {str(p.relative_to(table)) for p in table.rglob("*")
            if ".hoodie" not in p.parts and p.is_file() and not p.name.startswith(".hoodie_partition")}


def snapshot(table: Path) -> dict[str, int]:
    t = hudi_rs_read(table)
    rows = t.to_pylist()
    got = {r["trip_id"]: r["updated_at"] for r in rows}
    assert len(got) == len(rows), "duplicate keys"
    return got


def expected(bs) -> dict[str, int]:
    out: dict[str, int] = {}
    for b in bs:
        for r in b:
            out[r["trip_id"]] = max(out.get(r["trip_id"], r["updated_at"]), r["updated_at"])
    return out


def test_a_crashed_execution_is_rolled_back_under_a_rollback_instant(tmp_path):
    table = tmp_path / "trips"
    bs = at.build(table)
    plan = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME).instant
    before = data_files(table)
    proc = cli("execute", "--path", table, crash="execute.before-commit@1")
    assert proc.returncode == crash.EXIT_CODE
    written = data_files(table) - before
    assert any(n.endswith(f"_{plan}.parquet") for n in written)

    # the rollback crashes after its first delete; the rerun finishes the same rollback instant
    assert cli("rollback", "--path", table, "--instant", plan, crash="rollback.after-file-removed@1").returncode == \
        crash.EXIT_CODE
    res = json.loads(cli("rollback", "--path", table, "--instant", plan).stdout)
    assert data_files(table) == before
    rb = rollbacks(table)
    assert list(rb) == [res["rollback_instant"]] and res["rollback_instant"] > plan
    states = rb[res["rollback_instant"]]
    assert set(states) == {"requested", "inflight", "completed"}
    req, done = states["requested"], states["completed"]
    assert req["instantToRollback"] == {"commitTime": plan, "action": "compaction"}
    listed = {f.split(str(table) + "/", 1)[1] for r in req["RollbackRequests"] for f in r["filesToBeDeleted"]}
    assert written <= listed  # every file the execution wrote was planned for deletion
    assert done["commitsRollback"] == [plan]
    assert done["instantsRollback"] == [{"commitTime": plan, "action": "compaction"}]
    deleted = {f.split(str(table) + "/", 1)[1] for m in done["partitionMetadata"].values() for f in m["successDeleteFiles"]}
    # the crashed run had deleted one file already; the finishing run deleted the others
    assert deleted < written and len(written - deleted) == 1
    assert done["totalFilesDeleted"] == len(written) - 1
    assert (table / ".hoodie" / f"{plan}.compaction.requested").exists()
    assert not (table / ".hoodie" / f"{plan}.compaction.inflight").exists()

    # readers take the rollback in their stride: the compaction is executed again and judged
    assert execute(str(table), instant=plan)["status"] == "completed"
    assert snapshot(table) == expected(bs)
    assert at.ro_violations(table, bs, at.THRESHOLD_MS) == []


def test_a_crashed_write_is_rolled_back_by_the_next_one_under_a_rollback_instant(tmp_path):
    table = tmp_path / "trips"
    bs = at.build(table)
    before = data_files(table)
    extra = [{"trip_id": "t900", "region": "north", "fare": 1.0, "event_time": at.DAY0, "updated_at": at.DAY0 + 40 * at.H}]
    src = tmp_path / "batch.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in extra))
    assert cli("write", "--path", table, "--input", src, crash="write.before-commit@1").returncode == crash.EXIT_CODE
    dead = [p.name.split(".")[0] for p in (table / ".hoodie").glob("*.deltacommit.inflight")
            if not p.with_name(p.name.removesuffix(".inflight")).exists()]
    assert len(dead) == 1
    written = data_files(table) - before
    assert written

    res = write_batch(str(table), pa.Table.from_pylist(extra, schema=at.SCHEMA))
    assert list(res.rolled_back) == dead
    rb = rollbacks(table)
    assert len(rb) == 1
    (r, states), = rb.items()
    assert dead[0] < r < res.instant
    assert states["requested"]["instantToRollback"] == {"commitTime": dead[0], "action": "deltacommit"}
    done = states["completed"]
    assert done["commitsRollback"] == dead
    assert {f.split(str(table) + "/", 1)[1] for m in done["partitionMetadata"].values()
            for f in m["successDeleteFiles"]} == written
    assert not list((table / ".hoodie").glob(f"{dead[0]}.deltacommit*"))
    assert snapshot(table) == {**expected(bs), "t900": at.DAY0 + 40 * at.H}
