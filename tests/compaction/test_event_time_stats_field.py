"""Write-stat event times are used only when they are times of the plan's event-time field
(issue 25 item 2): our writer records the table's event-time field, Java 1.1 records
``hoodie.payload.event.time.field`` (from hoodie.properties unless a write option names another).
A plan asked for another field, or a table whose two keys disagree, scans the logs. The expected
plans are written by hand."""

from __future__ import annotations

import datetime as dt

from airflow_hudi_etc.compaction.plans import read_plan
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from batches import batch

DAY = 86_400_000
T0 = 1_700_000_000_000


def iso(ms):
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()


def row(ts, et):
    return {"key": "k1", "ts": ts, "event_time": et, "value": 1.0, "note": None, "region": "a"}


def table(tmp_path, *log_days):
    """One file group: a base at day 0 (ts 1), then one log per day given (ts 2, 3, ...)."""
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time")
    write_batch(str(path), batch([row(1, T0)]))
    for i, d in enumerate(log_days, 2):
        write_batch(str(path), batch([row(i, T0 + d * DAY)]))
    return path


def plan(path, **kw):
    """Threshold day 3 (compaction time day 4, latency 1 day): (logs compacted, links, source), or None."""
    res = schedule(str(path), data_latency="1d", compaction_time=iso(T0 + 4 * DAY), **kw)
    if not res.instant:
        return None
    p = read_plan(HudiTable.load(str(path)), res.instant)
    ((op,),) = [p.operations]
    return len(op.compact_logs), len(op.links), p.extra["hoodie.etc.event.time.source"]


def test_the_tables_field_is_planned_from_the_stats(tmp_path):
    assert plan(table(tmp_path, 1, 5)) == (1, 1, "write-stats")


def test_a_plan_for_another_field_scans_instead_of_using_the_stats(tmp_path):
    path = table(tmp_path, 5)
    assert plan(path) is None  # by event_time (day 5) nothing is at or before day 3
    # by ts (integers 1, 2: epoch seconds in 1970) the log is before the threshold; the stats
    # (event_time's day 5) must not decide it
    assert plan(path, event_time_field="ts") == (1, 0, "scan")


def test_a_table_whose_hudi_event_time_key_names_another_field_scans(tmp_path):
    path = table(tmp_path, 1, 5)
    props = path / ".hoodie" / "hoodie.properties"
    text = props.read_text()
    assert "hoodie.payload.event.time.field=event_time\n" in text
    # Java 1.1's watermark tracking would record ts: the stats cannot be told apart
    props.write_text(text.replace("hoodie.payload.event.time.field=event_time\n", "hoodie.payload.event.time.field=ts\n"))
    assert plan(path) == (1, 1, "scan")  # the same plan, from a scan of event_time


def test_status_scans_too_when_the_hudi_key_names_another_field(tmp_path):
    from airflow_hudi_etc.hudi.index.stats import table_status

    path = table(tmp_path, 1, 5)
    assert table_status(HudiTable.load(str(path)))["min_event_time"] == T0 + DAY
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.payload.event.time.field=event_time\n",
                                               "hoodie.payload.event.time.field=ts\n"))
    st = table_status(HudiTable.load(str(path)), allow_scan=False)
    assert st["min_event_time"] is None  # the stats are not taken for event_time's; no scan allowed
    assert table_status(HudiTable.load(str(path)))["min_event_time"] == T0 + DAY  # scanned
