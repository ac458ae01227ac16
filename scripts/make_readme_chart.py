"""Make ``docs/freshness.png`` (the README's chart) from a demo table.

Two simulated days of a trips table: an hourly batch of late-arriving events (most within an hour
of their event time, some up to ten hours late), and an event-time compaction every six hours
with a two-hour data latency (a nightly-style job that once misses a run). The writes and the
compactions run on a *simulated* clock: the writer takes ``now=``, and the scheduler's instant
time is taken from the same clock by wrapping ``next_instant_time`` — so the chart's wall-time
axis covers the two days instead of the few seconds this script runs. Everything else is the
real writer, scheduler and executor on a local table; the chart is ``hudi-etc report``'s.

    .venv/bin/python scripts/make_readme_chart.py [--output docs/freshness.png] [--keep DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import random
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import pyarrow as pa  # noqa: E402

from airflow_hudi_etc.compaction.execution import execute  # noqa: E402
from airflow_hudi_etc.compaction.scheduling import schedule  # noqa: E402
from airflow_hudi_etc.hudi import crash  # noqa: E402
from airflow_hudi_etc.hudi.storage import Storage  # noqa: E402
from airflow_hudi_etc.hudi.timeline.active import Timeline, next_instant_time  # noqa: E402
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch  # noqa: E402
from airflow_hudi_etc.report import write_report  # noqa: E402

START = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
HOUR = dt.timedelta(hours=1)


class Clock:
    def __init__(self) -> None:
        self.now = START


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--output", default=str(REPO / "docs" / "freshness.png"))
    ap.add_argument("--keep", help="build the demo table in this folder (kept) instead of a temp folder")
    a = ap.parse_args(argv)

    clock = Clock()
    work = Path(a.keep) if a.keep else Path(tempfile.mkdtemp(prefix="hudi-etc-chart-"))
    table = work / "trips"
    rng = random.Random(7)
    # plans get instant times from the demo's clock, as its writes do
    at_clock = crash.hooked("schedule.instant-time",
                            lambda point: next_instant_time(Timeline.load(Storage(str(table))), clock.now))
    try:
        with at_clock:
            init_table(str(table), table_name="trips", record_key="trip_id", precombine_field="updated_at",
                       event_time_field="event_time", partition_field="city")
            for hour in range(1, 49):
                clock.now = START + hour * HOUR
                rows = []
                for _ in range(40):
                    late = rng.choice([0.2, 0.5, 0.8, 1.0, 1.5, 3.0]) if rng.random() < 0.9 else rng.uniform(4, 10)
                    et = clock.now - dt.timedelta(hours=late)
                    rows.append({"trip_id": f"t{rng.randrange(300):03d}", "updated_at": int(clock.now.timestamp() * 1000),
                                 "event_time": int(et.timestamp() * 1000), "city": rng.choice(["nyc", "sf"]),
                                 "fare": round(rng.uniform(5, 80), 2)})
                write_batch(str(table), pa.Table.from_pylist(rows), now=clock.now)
                if hour % 6 == 0 and hour != 30:  # the 30h run is missed: the lag grows to 12h once
                    clock.now += dt.timedelta(minutes=10)
                    res = schedule(str(table), data_latency="2h", compaction_time=clock.now.isoformat(),
                                   link_mode="copy")
                    if res.instant:
                        execute(str(table), instant=res.instant)
            clock.now = START + 49 * HOUR
            out = Path(a.output)
            rep = write_report(str(table), str(work / "report"), sla="9h", now=clock.now)
            out.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(rep["png"], out)
            print(f"{out}: {rep['compactions']} compactions, {rep['deltacommits']} deltacommits, "
                  f"threshold {rep['threshold']}, lag {rep['threshold_lag_seconds']:.0f} s")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
