"""A downstream DAG scheduled on "the RO view is fresh up to T".

Runs when either

* ``hudi_etc_nightly`` completes a compaction (an event on the asset alias ``hudi_etc_ro_fresh``,
  ``extra``: ``threshold``, ``threshold_ms``, ``instant``, ``table_path`` and the figures), or
* the demo table's asset is updated by its ``AssetWatcher``: an
  :class:`~airflow_hudi_etc.triggers.event_time.EventTimeThresholdTrigger` in the triggerer reads the
  table's published threshold every minute and fires when it advances (whoever compacted: this
  provider's operators or ``hudi-etc execute`` by hand), so no worker polls.

Its task reads the event that triggered the run (or, in a manual run, the alias's latest event),
checks that the table still publishes at least that threshold, and returns what a reader of the
RO view may rely on. Replace it with the real downstream work (an export, a report, ...).
"""

from __future__ import annotations

import os

import pendulum

from airflow.sdk import DAG, AssetAlias, AssetWatcher, task
from airflow_hudi_etc.assets import table_asset
from airflow_hudi_etc.triggers.event_time import EventTimeThresholdTrigger

DEMO_TABLE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), ".demo", "trips")
RO_FRESH = AssetAlias("hudi_etc_ro_fresh")
#: the demo table, watched in the triggerer (the table a watcher reads is named in the DAG file);
#: the same asset (name = URI) as the one the operators' events land on
DEMO_RO = table_asset(path=DEMO_TABLE, watchers=[
    AssetWatcher(name="hudi_etc_demo_trips_threshold",
                 trigger=EventTimeThresholdTrigger(table_path=DEMO_TABLE, poll_interval=60)),
])


def _payload(event) -> dict:
    extra = dict(getattr(event, "extra", None) or {})
    return dict(extra.get("payload") or {}) if extra.get("from_trigger") else extra


with DAG(
    dag_id="hudi_etc_ro_consumer",
    description="runs when a Hudi table's read-optimized view gets fresher",
    schedule=RO_FRESH | DEMO_RO,
    start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
    catchup=False,
    tags=["hudi", "freshness", "assets"],
    doc_md=__doc__,
) as dag:

    @task(inlets=[RO_FRESH])
    def use_fresh_ro_view(triggering_asset_events=None, inlet_events=None) -> dict:
        from airflow_hudi_etc.hooks.hudi import HudiTableHook

        events = [e for evs in (triggering_asset_events or {}).values() for e in evs]
        if not events and inlet_events is not None:  # a manual run: the alias's latest event
            events = list(inlet_events[RO_FRESH])[-1:]
        if not events:
            raise ValueError("no asset event: nothing says the RO view is fresh")
        event = _payload(events[-1])
        table_path = event["table_path"]
        published = HudiTableHook().last_threshold(table_path)
        if (published["threshold_ms"] or -1) < event["threshold_ms"]:
            raise ValueError(f"{table_path} publishes {published['threshold']}, the event said {event['threshold']}")
        print(f"RO view of {table_path} holds every record with event time <= {event['threshold']}")
        return {"table_path": table_path, "threshold": event["threshold"], "threshold_ms": event["threshold_ms"],
                "instant": event.get("instant"), "published_threshold_ms": published["threshold_ms"]}

    use_fresh_ro_view()
