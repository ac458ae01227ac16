"""EventTimeCompactionSensor on table versions 8/9 (timeline layout 2): the poke reads
``.hoodie/timeline/`` (one listing, no per-instant reads while no compaction is completed), sees
the threshold our Avro compaction commit published, and the RO guarantee holds (judged by hudi-rs)."""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before it is imported)

import pyarrow as pa
import pytest

import airflow_table as at
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.readiness import check_readiness
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hooks.hudi import HudiTableHook
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from airflow_hudi_etc.sensors.event_time import EventTimeCompactionSensor


def build(path, version):
    init_table(str(path), table_name="trips", record_key="trip_id", precombine_field="updated_at",
               event_time_field="event_time", partition_field="region", table_version=version)
    bs = at.batches()
    for b in bs:
        write_batch(str(path), pa.Table.from_pylist(b, schema=at.SCHEMA))
    return bs


def sensor(path, **kw):
    return EventTimeCompactionSensor(task_id="wait", table_path=str(path), data_latency=at.LATENCY,
                                     compaction_time=at.COMPACTION_TIME, poke_interval=0, timeout=0, **kw)


class Counting(Storage):
    """Records the folders listed and the files read."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.listed: list[str] = []
        self.read: list[str] = []

    def list_entry_names(self, rel_dir="", *a, **k):
        self.listed.append(rel_dir)
        return super().list_entry_names(rel_dir, *a, **k)

    def list(self, rel_dir="", *a, **k):
        self.listed.append(rel_dir)
        return super().list(rel_dir, *a, **k)

    def read_bytes(self, rel, *a, **k):
        self.read.append(rel)
        return super().read_bytes(rel, *a, **k)


@pytest.mark.parametrize("version", [8, 9])
def test_sensor_on_layout2(tmp_path, version):
    path = tmp_path / "trips"
    bs = build(path, version)
    s = Counting(str(path))
    r = check_readiness(s, threshold_ms=at.THRESHOLD_MS)
    assert r.ready
    assert ".hoodie/timeline" in s.listed
    # no instant file is opened to decide (only hoodie.properties, our settings file, and the empty
    # LSM history's listing)
    assert [p for p in s.read if p.startswith(".hoodie/timeline")] == []
    x = sensor(path).poke({}).xcom_value
    assert (x["state"], x["threshold_ms"], x["last_threshold_ms"]) == ("ready", at.THRESHOLD_MS, None)
    first = schedule(str(path), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    assert first.instant
    x = sensor(path).poke({}).xcom_value
    assert (x["state"], x["pending_plan"]) == ("resume", first.instant)
    hook = HudiTableHook(hudi_conn_id=None)
    (p,) = hook.pending_plans(str(path))
    assert (p["instant"], p["state"], p["threshold_ms"]) == (first.instant, "requested", at.THRESHOLD_MS)
    assert hook.compaction_state(str(path), first.instant) == "requested"
    execute(str(path), instant=first.instant)
    assert at.ro_violations(path, bs, at.THRESHOLD_MS) == []
    x = sensor(path).execute({})
    assert (x["state"], x["last_threshold_ms"], x["last_compaction_instant"]) == \
        ("covered", at.THRESHOLD_MS, first.instant)
    assert hook.compaction_state(str(path), first.instant) == "completed"
    assert hook.last_threshold(str(path))["threshold_ms"] == at.THRESHOLD_MS
    assert hook.metrics(str(path))["threshold_ms"] == at.THRESHOLD_MS
    s = Counting(str(path))
    check_readiness(s, threshold_ms=at.THRESHOLD_MS + at.H)
    # the threshold comes from the one completed compaction commit (Avro) in .hoodie/timeline
    assert [p for p in s.read if p.startswith(".hoodie/timeline/")] == \
        [p for p in s.read if p.startswith(f".hoodie/timeline/{first.instant}_") and p.endswith(".commit")]
    # (beside the table's config: hoodie.properties and our settings file, issue 22 a)
    assert len([p for p in s.read if p not in (".hoodie/hoodie.properties", ".hoodie/.aux/hudi-etc/settings.json")]) == 1
