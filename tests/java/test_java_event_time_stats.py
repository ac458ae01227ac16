"""Event times that Java writers record themselves (issue 25 item 2), with real Java Hudi.

Measured with the harness (tests/support/java_hudi.py; Spark datasource upserts on MOR):
* 0.14.0 / 0.15.0 with ``DefaultHoodieRecordPayload`` and ``hoodie.payload.event.time.field``:
  no ``minEventTime``/``maxEventTime`` on any write stat, base file or log — the append and create
  handles take the record's metadata before the payload has read its event time.
* 1.0.2: none either (``hoodie.write.track.event.time.watermark`` does not exist there).
* 1.1.1 and 1.2.0 with ``hoodie.write.track.event.time.watermark=true`` on an EVENT_TIME_ORDERING table:
  both the base files' and the logs' stats carry them, in epoch ms (10-digit epoch seconds are
  multiplied by 1000 by Java); the field is ``hoodie.payload.event.time.field`` (a write option,
  else hoodie.properties). Only integers of 10 or 13 digits count: timestamp and string columns
  give no stats at all, other integers are left out of the range.

So a table written by Java 1.1 with that setting is planned from the write stats alone (no log
read), and without it from a scan of the logs. Which plan is right is written by hand here: a
group whose only log is at or before the threshold is compacted, one whose log is after it is not.
"""

from __future__ import annotations

import datetime as dt

import pytest

from airflow_hudi_etc import Table
from airflow_hudi_etc.compaction.plans import read_plan
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.timeline.active import iter_write_stats

pytestmark = pytest.mark.java

T0 = 1_767_225_600_000  # 2026-01-01T00:00Z in epoch ms
H = 3_600_000
#: the Java 1.1 writer settings that put event times on the write stats
WATERMARK = {"hoodie.write.track.event.time.watermark": "true", "hoodie.payload.event.time.field": "event_time"}
#: the 0.14/0.15 settings Hudi's WriteStatus code suggests (on a DefaultHoodieRecordPayload table)
PAYLOAD_FIELD = {"hoodie.payload.event.time.field": "event_time"}
UNITS = {"ms": 1, "s": 1000}  # epoch ms (13 digits) or epoch seconds (10 digits)


def iso(ms):
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()


def rows(unit, h, *keys, ts=1):
    return [{"k": k, "ts": ts, "event_time": (T0 + h * H) // UNITS[unit], "city": c, "v": float(ts)}
            for k, c in keys]


def java_table(java, tmp_path, unit, options, *, version=9, payload="event-time-ordering"):
    """Base files in sf and la at 00h; then a log in sf (k0 at 01h) and one in la (k2 at 05h)."""
    path = tmp_path / "t"
    Table.create(str(path), table_name="t", record_key="k", precombine_field="ts", event_time_field="event_time",
                 partition_field="city", payload=payload, table_version=version)
    java.upsert(path, rows(unit, 0, ("k0", "sf"), ("k1", "sf"), ("k2", "la"), ("k3", "la")), options=options)
    java.upsert(path, rows(unit, 1, ("k0", "sf"), ts=2), options=options)
    java.upsert(path, rows(unit, 5, ("k2", "la"), ts=2), options=options)
    return path


def stats_by_file(path):
    """``{file name: (minEventTime, maxEventTime)}`` over the table's completed writes."""
    t = HudiTable.load(str(path))
    return {st["path"].rsplit("/", 1)[-1]: (st.get("minEventTime"), st.get("maxEventTime"))
            for inst in t.timeline.completed_writes for st in iter_write_stats(t.commit_metadata(inst))}


class LogReads:
    def __init__(self, monkeypatch):
        self.paths: list[str] = []
        real = Storage.read_bytes

        def read_bytes(st, rel, *a, **k):
            if ".log." in rel:
                self.paths.append(rel)
            return real(st, rel, *a, **k)

        monkeypatch.setattr(Storage, "read_bytes", read_bytes)


def plan_of(path):
    """Threshold 03h (compaction time 04h, latency 1h): the plan's (partition, logs compacted, links)
    and its event-time source."""
    res = schedule(str(path), data_latency="1h", compaction_time=iso(T0 + 4 * H))
    assert res.instant, res.reason
    plan = read_plan(HudiTable.load(str(path)), res.instant)
    return ([(op.partition, len(op.compact_logs), len(op.links)) for op in plan.operations],
            plan.extra["hoodie.etc.event.time.source"])


@pytest.mark.parametrize("line,unit", [("1.1", "ms"), pytest.param("1.1", "s", marks=pytest.mark.slow),
                                       pytest.param("1.2", "ms", marks=pytest.mark.slow), ("1.2", "s")])
def test_java_11_watermark_stats_are_epoch_ms_on_bases_and_logs(java_hudi, tmp_path, line, unit):
    path = java_table(java_hudi(line), tmp_path, unit, WATERMARK)
    got = stats_by_file(path)
    logs = {n: r for n, r in got.items() if ".log." in n}
    bases = {n: r for n, r in got.items() if n.endswith(".parquet")}
    assert sorted(logs.values()) == [(T0 + H, T0 + H), (T0 + 5 * H, T0 + 5 * H)]  # ms, whatever the unit
    assert sorted(bases.values()) == [(T0, T0), (T0, T0)]


@pytest.mark.parametrize("line,unit", [pytest.param("1.1", "ms", marks=pytest.mark.slow), ("1.1", "s"),
                                       ("1.2", "ms"), pytest.param("1.2", "s", marks=pytest.mark.slow)])
def test_java_11_watermark_table_is_planned_from_write_stats_reading_no_log(java_hudi, tmp_path, monkeypatch, line,
                                                                            unit):
    """Hudi 1.1.1 and 1.2.0 alike (issue 35 item 9: 1.2 records the same per-file stats)."""
    path = java_table(java_hudi(line), tmp_path, unit, WATERMARK)
    reads = LogReads(monkeypatch)
    ops, source = plan_of(path)
    assert reads.paths == []
    assert source == "write-stats"
    assert ops == [("city=sf", 1, 0)]  # sf's log (01h) is at or before 03h; la's (05h) is not


@pytest.mark.parametrize("line,version,payload,options", [
    ("0.14", 6, "event-time-ordering", PAYLOAD_FIELD),  # DefaultHoodieRecordPayload + the field
    pytest.param("0.15", 6, "event-time-ordering", PAYLOAD_FIELD, marks=pytest.mark.slow),
    ("1.0", 8, "event-time-ordering", WATERMARK),  # 1.0.2 has no watermark tracking
    pytest.param("1.1", 9, "event-time-ordering", {}, marks=pytest.mark.slow),  # the field alone (hoodie.properties names it)
    pytest.param("1.1", 9, "overwrite-latest", WATERMARK, marks=pytest.mark.slow),  # COMMIT_TIME_ORDERING: not tracked
])
def test_other_java_writers_record_no_event_times_and_the_logs_are_scanned(java_hudi, tmp_path, monkeypatch, line,
                                                                        version, payload, options):
    path = java_table(java_hudi(line), tmp_path, "ms", options, version=version, payload=payload)
    assert all(r == (None, None) for r in stats_by_file(path).values())
    reads = LogReads(monkeypatch)
    ops, source = plan_of(path)
    assert sorted(p.split("/")[0] for p in reads.paths) == ["city=la", "city=sf"]  # each log once
    assert source == "scan"
    assert ops == [("city=sf", 1, 0)]


@pytest.mark.slow
def test_java_11_drops_event_times_that_are_not_10_or_13_digits(java_hudi, tmp_path):
    """A 12-digit value (epoch ms before 2001-09-09) is left out of the log's range: the stat
    says 01h although the log also holds a record of 2001, which a scan finds. Planning cannot
    tell (docs/java-writers.md: the value formats Java records)."""
    path = java_table(java_hudi("1.1"), tmp_path, "ms", WATERMARK)
    java_hudi("1.1").upsert(path, [{"k": "k1", "ts": 3, "event_time": T0 + H, "city": "sf", "v": 3.0},
                                   {"k": "k0", "ts": 3, "event_time": 999_000_000_000, "city": "sf", "v": 3.0}],
                            options=WATERMARK)
    last = max(HudiTable.load(str(path)).timeline.completed_writes, key=lambda i: i.timestamp)
    t = HudiTable.load(str(path))
    ((st,),) = [[s for s in iter_write_stats(t.commit_metadata(last)) if ".log." in s["path"]]]
    assert (st["minEventTime"], st["maxEventTime"]) == (T0 + H, T0 + H)
