"""``hudi-etc status`` text and ``hudi-etc report`` (freshness.png + index.html), on a table built
with the real writer and compaction service; expected figures are written out by hand."""

from __future__ import annotations

import datetime as dt
import json

import pyarrow as pa
import pytest

pytest.importorskip("matplotlib")
from PIL import Image, ImageChops  # noqa: E402  (matplotlib depends on pillow)

from airflow_hudi_etc.cli import main  # noqa: E402
from airflow_hudi_etc.compaction.execution import execute  # noqa: E402
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.errors import InvalidInputError  # noqa: E402
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch  # noqa: E402
from airflow_hudi_etc.report import format_status, human_bytes, human_duration, write_report  # noqa: E402

H = 3_600_000
T0 = 1_577_836_800_000  # 2020-01-01T00:00:00Z: every lag below is years on any sane clock
NOW = dt.datetime(2030, 1, 1, tzinfo=dt.timezone.utc)


def iso(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()


def upsert(path, rows):
    keys, ets = zip(*rows)
    write_batch(str(path), pa.table({"id": list(keys), "ts": pa.array([e // 1000 for e in ets], pa.int64()),
                                     "et": pa.array(ets, pa.int64()), "v": [f"{k}@{e}" for k, e in rows]}))


def compact(path, at_ms: int) -> str:
    res = schedule(str(path), data_latency="1h", compaction_time=iso(at_ms))
    assert res.instant is not None, res.reason
    assert execute(str(path), instant=res.instant)["status"] == "completed"
    return res.instant


@pytest.fixture
def table(tmp_path):
    """Two event-time compactions: thresholds 03:00 (one late log left) and 09:00 (none left)."""
    p = tmp_path / "trips"
    init_table(str(p), table_name="trips", record_key="id", precombine_field="ts", event_time_field="et")
    upsert(p, [("a", T0 + H), ("b", T0 + H)])   # base file
    upsert(p, [("a", T0 + 2 * H)])                # log 1: min 02:00
    upsert(p, [("b", T0 + 5 * H)])                # log 2: min 05:00
    compact(p, T0 + 4 * H)                        # threshold 03:00: log 1 in, log 2 re-exposed
    upsert(p, [("a", T0 + 8 * H)])                # log 3: min 08:00
    compact(p, T0 + 10 * H)                       # threshold 09:00: logs 2 and 3 in
    return p


def _pixels(path) -> Image.Image:
    with Image.open(path) as im:
        assert im.format == "PNG"
        return im.convert("RGB")


def test_report_chart_page_and_figures(table, tmp_path):
    out = tmp_path / "report"
    rep = write_report(str(table), str(out), sla="6h", now=NOW)
    assert rep["png"] == str(out / "freshness.png") and rep["html"] == str(out / "index.html")
    assert (rep["compactions"], rep["deltacommits"]) == (2, 4)
    assert rep["threshold"] == "2020-01-01T09:00:00.000Z" and rep["threshold_ms"] == T0 + 9 * H
    assert rep["threshold_lag_seconds"] == (NOW.timestamp() * 1000 - (T0 + 9 * H)) / 1000
    assert rep["max_event_time_written"] == "2020-01-01T08:00:00.000Z"
    assert (rep["remaining_log_files"], rep["remaining_log_bytes"]) == (0, 0)
    assert rep["sla_seconds"] == 6 * 3600 and rep["sla_breached"] is True
    hist = rep["history"]
    assert [h["threshold"] for h in hist] == ["2020-01-01T03:00:00.000Z", "2020-01-01T09:00:00.000Z"]
    assert [h["remaining_log_files"] for h in hist] == [1, 0]
    assert [h["compacted_log_files"] for h in hist] == [1, 2]
    assert hist[0]["remaining_min_event_time_ms"] == T0 + 5 * H  # log 2, left for later
    assert hist[0]["remaining_log_bytes"] > 0

    img = _pixels(rep["png"])
    assert img.size == (1000, 1000)
    assert len(img.getcolors(1 << 20)) > 50  # a drawn chart, not a blank canvas
    page = (out / "index.html").read_text()
    assert '<img src="freshness.png"' in page and "WARNING: threshold lag" in page
    for s in ("2020-01-01T03:00:00.000Z", "2020-01-01T09:00:00.000Z", hist[0]["instant"], hist[1]["instant"]):
        assert s in page

    # the same data renders the same pixels; one more compaction changes them
    again = write_report(str(table), str(tmp_path / "again"), sla="6h", now=NOW)
    assert ImageChops.difference(img, _pixels(again["png"])).getbbox() is None
    upsert(table, [("b", T0 + 11 * H)])
    compact(table, T0 + 13 * H)
    more = write_report(str(table), str(tmp_path / "more"), sla="6h", now=NOW)
    assert more["compactions"] == 3 and more["threshold"] == "2020-01-01T12:00:00.000Z"
    assert ImageChops.difference(img, _pixels(more["png"])).getbbox() is not None


def test_report_of_a_table_without_compactions_and_bad_input(tmp_path):
    p = tmp_path / "fresh"
    init_table(str(p), table_name="fresh", record_key="id", precombine_field="ts", event_time_field="et")
    upsert(p, [("a", T0)])
    rep = write_report(str(p), str(tmp_path / "r"), now=NOW)
    assert rep["compactions"] == 0 and rep["threshold"] is None and rep["sla_breached"] is None
    assert _pixels(rep["png"]).size == (1000, 1000)
    with pytest.raises(InvalidInputError, match="duration"):
        write_report(str(p), str(tmp_path / "r2"), sla="soon")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidInputError, match="not a directory"):
        write_report(str(p), str(tmp_path / "file"))


def test_status_text_through_the_cli(table, capsys):
    assert main(["status", "--path", str(table)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"Hudi table trips (MERGE_ON_READ, version 6) at {table}")
    for s in ("RO threshold", "2020-01-01T09:00:00.000Z", "threshold lag", "remaining log files",
              "0  in 0 of 1 file slices", "remaining log bytes", "0 B", "pending compactions", "pending plan age",
              "last compaction", "timeline"):
        assert s in text, s
    assert "WARNING" not in text and "SLA" not in text

    assert main(["status", "--path", str(table), "--sla", "1h"]) == 0
    text = capsys.readouterr().out
    assert "1h 00m  (BREACHED)" in text
    assert text.rstrip().splitlines()[-1].startswith("WARNING: threshold lag ")
    assert text.rstrip().endswith("exceeds the SLA of 1h 00m: the read-optimized view is stale")

    assert main(["status", "--path", str(table), "--sla", "36500d"]) == 0  # a century
    text = capsys.readouterr().out
    assert "(ok)" in text and "WARNING" not in text

    # a pending plan: its age, the late log left, the slice table
    upsert(table, [("b", T0 + 11 * H)])
    plan = schedule(str(table), data_latency="1h", compaction_time=iso(T0 + 13 * H))
    assert main(["status", "--path", str(table), "--json"]) == 0
    m = json.loads(capsys.readouterr().out)
    assert m["pending_compactions"] == [plan.instant] and m["pending_plan_age_seconds"] >= 0
    assert m["remaining_log_files"] == 1 and m["min_event_time"] == "2020-01-01T11:00:00.000Z"
    assert main(["status", "--path", str(table)]) == 0
    text = capsys.readouterr().out
    assert f"  pending compactions     1  ({plan.instant})" in text
    assert f"(oldest: {plan.instant})" in text
    assert "file slices with logs:" in text and "2020-01-01T11:00:00.000Z" in text

    assert main(["status", "--path", str(table), "--sla", "tomorrow"]) == 2
    assert json.loads(capsys.readouterr().out)["error"]["code"] == "invalid_input"


def test_report_through_the_cli(table, tmp_path, capsys):
    assert main(["report", "--path", str(table), "--output", str(tmp_path / "out"), "--sla", "6h"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["png"] == str(tmp_path / "out" / "freshness.png") and out["compactions"] == 2
    assert _pixels(out["png"]).size == (1000, 1000)


def test_format_status_of_fixed_metrics():
    m = {"path": "s3://b/t", "table": "t", "table_type": "MERGE_ON_READ", "table_version": 6,
         "now": "2026-01-02T00:00:00.000Z", "threshold": "2026-01-01T17:00:00.000Z",
         "last_compaction_instant": "20260101180000000", "threshold_lag_seconds": 25200.0,
         "min_event_time": "2026-01-01T17:30:00.000Z", "remaining_log_files": 3, "remaining_log_bytes": 3072,
         "slices_with_logs": 2, "file_groups": 5, "pending_compactions": ["20260101233000000"],
         "pending_clustering": [], "pending_plan_age_seconds": 1800.0, "last_planning_seconds": 0.25,
         "last_execution_seconds": 4.5, "timeline": {"instants": 9, "completed": {"deltacommit": 6, "commit": 1},
                                                      "latest_completed": "20260101230000000"},
         "sla_seconds": 21600.0, "sla_breached": True}
    text = format_status(m)
    lines = text.splitlines()
    assert lines[0] == "Hudi table t (MERGE_ON_READ, version 6) at s3://b/t"
    assert "  RO threshold            2026-01-01T17:00:00.000Z  (compaction 20260101180000000)" in lines
    assert "  threshold lag           7h 00m  (25200 s)" in lines
    assert "  SLA                     6h 00m  (BREACHED)" in lines
    assert "  remaining log files     3  in 2 of 5 file slices" in lines
    assert "  remaining log bytes     3.0 KiB (3072 B)" in lines
    assert "  pending plan age        30m 00s  (oldest: 20260101233000000)" in lines
    assert "  last compaction         20260101180000000  (planning 0.250 s, execution 4.500 s)" in lines
    assert lines[-1] == "WARNING: threshold lag 7h 00m exceeds the SLA of 6h 00m: the read-optimized view is stale"
    assert "WARNING" not in format_status({**m, "sla_breached": False})
    none_yet = format_status({**m, "threshold": None, "threshold_lag_seconds": None})
    assert "none: no event-time compaction has completed yet" in none_yet
    assert none_yet.splitlines()[-1] == "WARNING: no event-time compaction has published an RO threshold yet (SLA 6h 00m)"
    assert (human_duration(90), human_duration(200000), human_bytes(512)) == ("1m 30s", "2d 7h", "512 B")
