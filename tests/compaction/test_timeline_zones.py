"""Issue 23 items 3 and 4: instant times are wall-clock times of the table's timeline zone.

Item 3: every conversion of an instant time to a moment (reset-threshold without ``--to``, the
pending plan's age, ``instant_time_ms`` and the lag at compaction in the history, the report)
reads the instant in the table's zone. Judged by fixed values: an instant ``20300101090000000`` on
an Asia/Tokyo timeline is 2030-01-01T00:00:00Z, on America/Los_Angeles ``20300101000000000``
is 2030-01-01T08:00:00Z.

Item 4: ``configure --timeline-zone`` records the Java writers' zone once in the table's
``hoodie.etc.timeline.zone``; afterwards no variable is needed (the variable still wins).
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.metrics import compaction_history, table_metrics
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.threshold_reset import reset_threshold
from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.errors import UnsupportedFeatureError
from airflow_hudi_etc.hudi.config.properties import PROPERTIES_FILE, dumps, loads
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch

H = 3_600_000
UTC = dt.timezone.utc
#: 2030-01-01T00:00:00Z and 08:00:00Z in epoch milliseconds (fixed values, not computed by the code)
JAN1_0000Z = 1_893_456_000_000
JAN1_0800Z = 1_893_484_800_000
ENV = "HUDI_ETC_TIMELINE_TIMEZONE"


def local_table(path: Path) -> Path:
    """A table whose ``hoodie.table.timeline.timezone`` is LOCAL, as Java writes it by default."""
    init_table(Storage(str(path)), table_name="trips", record_key="id", precombine_field="ts", event_time_field="et")
    f = path / PROPERTIES_FILE
    props = loads(f.read_text())
    props["hoodie.table.timeline.timezone"] = "LOCAL"
    f.write_text(dumps(props))
    return path


def run_cli(capsys, *args):
    rc = cli_main([str(a) for a in args])
    return rc, json.loads(capsys.readouterr().out)


def _compact_at(path: Path, instant: str, compaction_time: str, monkeypatch) -> str:
    """Two batches (event time 2029-12-31T10:00Z; the second one a log) and one compaction whose
    instant is ``instant``."""
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1], "et": [JAN1_0000Z - 14 * H] * 2}))
    write_batch(str(path), pa.table({"id": ["a"], "ts": [2], "et": [JAN1_0000Z - 14 * H]}))
    monkeypatch.setenv("HUDI_ETC_MAX_CLOCK_SKEW", "3650d")  # the compaction time is ahead of the clock
    with crash.hooked("schedule.instant-time", lambda _p: instant):
        res = schedule(str(path), data_latency="1h", compaction_time=compaction_time)
    monkeypatch.delenv("HUDI_ETC_MAX_CLOCK_SKEW")
    assert res.instant == instant
    return instant


@pytest.mark.parametrize("zone,instant,epoch_ms", [
    ("Asia/Tokyo", "20300101090000000", JAN1_0000Z),
    ("America/Los_Angeles", "20300101000000000", JAN1_0800Z),
])
def test_pending_plan_age_and_history_read_instants_in_the_timeline_zone(tmp_path, monkeypatch, zone, instant,
                                                                        epoch_ms):
    monkeypatch.setenv(ENV, zone)
    path = local_table(tmp_path / "t")
    _compact_at(path, instant, "2029-12-31T23:00:00Z", monkeypatch)
    now = dt.datetime.fromtimestamp((epoch_ms + 30 * 60_000) / 1000, UTC)
    m = table_metrics(str(path), now=now)
    assert m["pending_compactions"] == [instant]
    assert m["pending_plan_age_seconds"] == 1800.0  # made half an hour before `now`
    assert m["timeline_zone"] == zone
    assert execute(str(path))["status"] == "completed"
    (h,) = compaction_history(HudiTable.load(str(path)))
    assert h["instant_time_ms"] == epoch_ms
    assert h["threshold_ms"] == JAN1_0000Z - 2 * H  # 2029-12-31T22:00Z
    assert h["threshold_lag_seconds_at_compaction"] == (epoch_ms - (JAN1_0000Z - 2 * H)) / 1000


def test_reset_threshold_without_to_reads_the_instant_in_the_timeline_zone(tmp_path, monkeypatch):
    """Tokyo: compaction C at 2030-01-01T00:00Z (09:00 in Tokyo) published a threshold 5 h
    ahead of it; the reset brings it back to C's time minus its latency, 2029-12-31T23:00Z."""
    monkeypatch.setenv(ENV, "Asia/Tokyo")
    path = local_table(tmp_path / "t")
    c = _compact_at(path, "20300101090000000", "2030-01-01T06:00:00Z", monkeypatch)
    assert execute(str(path))["status"] == "completed"
    out = reset_threshold(str(path))
    assert out["instant"] == c and out["published_threshold_ms"] == JAN1_0000Z + 5 * H
    assert out["status"] == "reset" and out["threshold_ms"] == JAN1_0000Z - H


def test_an_unknown_zone_leaves_instant_figures_out_of_status_and_refuses_the_report(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, "America/Los_Angeles")
    path = local_table(tmp_path / "t")
    _compact_at(path, "20300101000000000", "2029-12-31T23:00:00Z", monkeypatch)
    monkeypatch.delenv(ENV)
    m = table_metrics(str(path), now=dt.datetime(2030, 1, 1, 8, 30, tzinfo=UTC))
    assert m["pending_compactions"] == ["20300101000000000"]
    assert m["pending_plan_age_seconds"] is None and m["timeline_zone"] is None
    from airflow_hudi_etc.report import report_data

    with pytest.raises(UnsupportedFeatureError, match="configure"):
        report_data(str(path))


# ------------------------------------------------------------------ item 4: configure --timeline-zone
def _tokyo_table(path: Path, monkeypatch) -> Path:
    """A LOCAL table written by writers on Asia/Tokyo (two deltacommits at the real clock)."""
    monkeypatch.setenv(ENV, "Asia/Tokyo")
    local_table(path)
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1], "et": [1_700_000_000_000] * 2}))
    write_batch(str(path), pa.table({"id": ["a"], "ts": [2], "et": [1_700_000_000_000]}))
    monkeypatch.delenv(ENV)
    return path


def test_configure_records_the_writers_zone_and_no_variable_is_needed_after(tmp_path, monkeypatch, capsys):
    path = _tokyo_table(tmp_path / "t", monkeypatch)
    with pytest.raises(UnsupportedFeatureError, match="configure --path P --timeline-zone"):
        schedule(str(path), data_latency="1h")
    props = (path / PROPERTIES_FILE).read_bytes()
    # Los Angeles is 16-17 hours west of Tokyo: read there, the latest instants lie in the future
    rc, out = run_cli(capsys, "configure", "--path", path, "--timeline-zone", "America/Los_Angeles")
    assert rc == 2 and out["error"]["code"] == "invalid_input" and "ahead of now" in out["error"]["message"]
    for bad in ("Mars/Olympus", "LOCAL", "", "../../etc/passwd"):
        rc, out = run_cli(capsys, "configure", "--path", path, "--timeline-zone", bad)
        assert rc == 2 and out["error"]["code"] == "invalid_input", bad
    rc, out = run_cli(capsys, "configure", "--path", path)
    assert rc == 2 and out["error"]["code"] == "invalid_input"
    assert (path / PROPERTIES_FILE).read_bytes() == props  # nothing written by a refusal
    rc, out = run_cli(capsys, "configure", "--path", path, "--timeline-zone", "Asia/Tokyo")
    assert rc == 0 and out["status"] == "configured" and out["settings"]["timeline_zone"] == "Asia/Tokyo"
    assert out["timeline_zone_source"] == "recorded"
    assert (path / PROPERTIES_FILE).read_bytes() == props  # recorded beside it (issue 22 a)
    from airflow_hudi_etc.hudi.config.etc_settings import SETTINGS_PATH

    assert json.loads((path / SETTINGS_PATH).read_text())["settings"]["hoodie.etc.timeline.zone"] == "Asia/Tokyo"
    assert loads((path / PROPERTIES_FILE).read_text())["hoodie.table.timeline.timezone"] == "LOCAL"  # Java's own
    recorded = (path / SETTINGS_PATH).read_bytes()
    rc, out = run_cli(capsys, "configure", "--path", path, "--timeline-zone", "Asia/Tokyo")  # a retry
    assert rc == 0 and out["status"] == "unchanged" and (path / SETTINGS_PATH).read_bytes() == recorded
    # now without any variable: new instants are Tokyo wall-clock times
    t = HudiTable.load_writable(str(path))
    from airflow_hudi_etc.hudi.timeline.active import next_instant_time

    assert next_instant_time(t.timeline, dt.datetime(2031, 7, 1, 12, 0, tzinfo=UTC), zone=t.timeline_zone) \
        == "20310701210000000"  # UTC+9
    res = schedule(str(path), data_latency="1h")
    assert res.instant and execute(str(path))["status"] == "completed"
    # the variable, when set, wins over the record (and says so)
    monkeypatch.setenv(ENV, "UTC")
    from airflow_hudi_etc.hudi.protocol.coexistence import timeline_zone_source

    zone, source = timeline_zone_source(HudiTable.load(str(path)).config)
    assert (str(zone), source) == ("UTC", "env")


def test_configure_refuses_a_zone_on_a_utc_table_and_a_missing_table(tmp_path, capsys):
    from airflow_hudi_etc.api import Table

    path = tmp_path / "u"
    init_table(Storage(str(path)), table_name="u", record_key="id", precombine_field="ts", event_time_field="et")
    props = (path / PROPERTIES_FILE).read_bytes()
    rc, out = run_cli(capsys, "configure", "--path", path, "--timeline-zone", "Europe/Paris")
    assert rc == 2 and out["error"]["code"] == "invalid_input" and "is UTC" in out["error"]["message"]
    assert (path / PROPERTIES_FILE).read_bytes() == props
    assert Table(str(path)).configure(timeline_zone="Etc/UTC")["settings"]["timeline_zone"] == "UTC"
    rc, out = run_cli(capsys, "configure", "--path", tmp_path / "missing", "--timeline-zone", "UTC")
    assert rc == 2 and out["error"]["code"] == "table_not_found"
    assert not (tmp_path / "missing").exists()


def test_every_recorded_setting_is_an_option_of_configure():
    from airflow_hudi_etc.contract import COMMANDS
    from airflow_hudi_etc.hudi.protocol.etc_metadata import TABLE_SETTINGS

    # (and --hoodie, the Hudi write settings of the writers: tests/concurrency/test_table_lock.py)
    assert {a.name for a in COMMANDS["configure"].args} - {"path", "hoodie"} == set(TABLE_SETTINGS)
    assert all(s.key.startswith("hoodie.etc.") for s in TABLE_SETTINGS.values())


def test_a_java_written_table_needs_configure_once_then_no_variable(fixture_copy, monkeypatch):
    """The Java fixture (no hoodie.table.timeline.timezone: LOCAL; its JVMs ran on UTC): refused
    without a zone, then recorded once, and every command runs with no variable set."""
    from airflow_hudi_etc.api import Table
    from airflow_hudi_etc.hudi.errors import InvalidInputError

    path = fixture_copy("v6_trips_8i1u")
    monkeypatch.delenv(ENV, raising=False)
    with pytest.raises(UnsupportedFeatureError, match="hudi-etc configure"):
        schedule(str(path), data_latency="1h", compaction_time="2025-12-31T00:00:00Z")
    t = Table(str(path))
    with pytest.raises(InvalidInputError, match="no setting"):
        t.configure(who_compacts="java")
    assert t.configure(timeline_zone="UTC", java_compaction="off")["status"] == "configured"
    assert "hoodie.table.timeline.timezone" not in loads((path / PROPERTIES_FILE).read_text())  # Java's own: as it was
    res = t.compaction.schedule("1h", compaction_time="2025-12-31T00:00:00Z")
    assert res.instant and t.compaction.execute().status == "completed"
    assert t.status().details["timeline_zone"] == "UTC"


# ------------------------------------------------------------------ issue 35 item 5: the files' times
def _zoned_table(path: Path, zone: str, monkeypatch, version: int = 6) -> Path:
    """A LOCAL table written (two deltacommits at the real clock) by writers on ``zone``."""
    monkeypatch.setenv(ENV, zone)
    init_table(Storage(str(path)), table_name="trips", record_key="id", precombine_field="ts",
               event_time_field="et", table_version=version)
    f = path / PROPERTIES_FILE
    props = loads(f.read_text())
    props["hoodie.table.timeline.timezone"] = "LOCAL"
    f.write_text(dumps(props))
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [1, 1], "et": [1_700_000_000_000] * 2}))
    write_batch(str(path), pa.table({"id": ["a"], "ts": [2], "et": [1_700_000_000_000]}))
    monkeypatch.delenv(ENV)
    return path


@pytest.mark.parametrize("version", [6, 9])
def test_configure_refuses_a_zone_east_of_the_writers_by_the_files_times(tmp_path, monkeypatch, capsys, version):
    """Bogota (UTC-05:00 all year): read in UTC its instants lie 5 hours in the past, which the
    future check takes; the timeline files, written at those instants, show the offset."""
    path = _zoned_table(tmp_path / "t", "America/Bogota", monkeypatch, version)
    from airflow_hudi_etc.hudi.config.etc_settings import SETTINGS_PATH

    recorded = (path / SETTINGS_PATH).read_bytes()
    for wrong in ("UTC", "Europe/Paris", "Asia/Tokyo"):
        rc, out = run_cli(capsys, "configure", "--path", path, "--timeline-zone", wrong)
        assert rc == 2 and out["error"]["code"] == "invalid_input", (wrong, out)
        msg = out["error"]["message"]
        assert "UTC-05:00" in msg and "America/Bogota" in msg and "modification times" in msg, msg
    assert (path / SETTINGS_PATH).read_bytes() == recorded  # nothing recorded
    for right in ("America/Bogota", "America/Lima"):  # (Lima: the same offset, no daylight saving time either)
        rc, out = run_cli(capsys, "configure", "--path", path, "--timeline-zone", right)
        assert rc == 0 and out["settings"]["timeline_zone"] == right


def test_the_offset_named_may_be_a_half_hour(tmp_path, monkeypatch, capsys):
    path = _zoned_table(tmp_path / "t", "Asia/Kolkata", monkeypatch)  # UTC+05:30
    rc, out = run_cli(capsys, "configure", "--path", path, "--timeline-zone", "Asia/Tokyo")
    assert rc == 2 and "UTC+05:30 (e.g. Asia/Kolkata at that time)" in out["error"]["message"], out
    assert run_cli(capsys, "configure", "--path", path, "--timeline-zone", "Asia/Kolkata")[0] == 0


def test_files_times_that_disagree_among_themselves_refuse_nothing(tmp_path, monkeypatch, capsys):
    """Files copied or touched later say nothing of the zone: only evidence that agrees with
    itself refuses (here one requested file's time is moved 3 hours)."""
    path = _zoned_table(tmp_path / "t", "America/Bogota", monkeypatch)
    req = sorted((path / ".hoodie").glob("*.deltacommit.requested"))[0]
    m = req.stat().st_mtime - 3 * 3600
    os.utime(req, (m, m))
    assert run_cli(capsys, "configure", "--path", path, "--timeline-zone", "UTC")[0] == 0


def test_zone_disagreement_fixed_values():
    from airflow_hudi_etc.compaction.zone_evidence import describe_offset, zone_disagreement
    from zoneinfo import ZoneInfo

    skew = dt.timedelta(minutes=5)
    # 2026-01-01 12:00:00 on the name, written at 17:00:00Z: a clock at UTC-05:00
    five = dt.datetime(2026, 1, 1, 17, tzinfo=UTC).timestamp()
    ev = [("20260101120000000", five), ("20260101120500123", five + 301)]
    got = zone_disagreement(ev, UTC, skew)
    assert got == (dt.timedelta(hours=-5), dt.datetime(2026, 1, 1, 17, 5, 1, tzinfo=UTC))
    assert zone_disagreement(ev, ZoneInfo("America/New_York"), skew) is None  # EST in January
    assert zone_disagreement([("20260701120000000", dt.datetime(2026, 7, 1, 16, tzinfo=UTC).timestamp())],
                             ZoneInfo("America/New_York"), skew) is None  # EDT in July
    assert zone_disagreement(ev[:1] + [("20260101150000000", five + 60)], UTC, skew) is None  # not one offset
    assert zone_disagreement([("20250101120000000", five)], UTC, skew) is None  # a year: no zone's offset
    assert zone_disagreement([("20260101120400000", five)], UTC, dt.timedelta(hours=6)) is None  # within skew
    assert zone_disagreement([], UTC, skew) is None
    assert describe_offset(dt.timedelta(hours=-5), dt.datetime(2026, 1, 1, tzinfo=UTC)) == \
        "UTC-05:00 (e.g. America/New_York, America/Bogota at that time)"
    assert describe_offset(dt.timedelta(hours=1), dt.datetime(2026, 7, 1, tzinfo=UTC)) == \
        "UTC+01:00 (e.g. Europe/London, Africa/Lagos at that time)"
    assert describe_offset(dt.timedelta(hours=-13), dt.datetime(2026, 7, 1, tzinfo=UTC)) == "UTC-13:00"


def test_a_table_that_says_utc_is_judged_by_its_properties_only(tmp_path, capsys):
    """hoodie.table.timeline.timezone=UTC: Java writes UTC times whatever its JVM's zone; files
    whose times disagree refuse nothing."""
    path = tmp_path / "u"
    init_table(Storage(str(path)), table_name="u", record_key="id", precombine_field="ts", event_time_field="et")
    write_batch(str(path), pa.table({"id": ["a"], "ts": [1], "et": [1_700_000_000_000]}))
    for f in (path / ".hoodie").glob("*.requested"):
        m = f.stat().st_mtime + 5 * 3600
        os.utime(f, (m, m))
    assert run_cli(capsys, "configure", "--path", path, "--timeline-zone", "UTC")[0] == 0
