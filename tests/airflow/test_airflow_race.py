"""Issue 24 §1: a green run means the read-optimized view holds the run's threshold (or a later
one). Real ``dag.test()`` runs of the task group; another run's ``schedule`` lands between this
run's sensor and its ``schedule`` (the race a backfill next to the nightly run makes). The Spark
jobs run in process (``airflow_env.jobs_in_process``: the same CLI handlers, no JVM); hudi-rs
judges the view against the rows written (``airflow_table.ro_violations``)."""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before it is imported)

import json

import pendulum
import pytest

import airflow_table as at
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule

H = 3_600_000
CT = at.COMPACTION_TIME  # threshold 2026-01-01T22:00Z
EARLIER_CT, LATER_CT = "2026-01-01T23:00:00+00:00", "2026-01-02T01:00:00+00:00"  # 21:00Z, 23:00Z


def states(dr):
    return {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}


@pytest.fixture
def race(monkeypatch, tmp_path):
    """(DAG of the task group on a fresh table, the table's batches, alerts file, a list of
    callables run once each right after the group's sensor succeeded)."""
    from airflow.sdk import DAG

    from airflow_hudi_etc.notifications.jsonl import JsonLinesNotifier
    from airflow_hudi_etc.sensors.event_time import EventTimeCompactionSensor
    from airflow_hudi_etc.task_groups import event_time_compaction

    table, alerts = tmp_path / "trips", tmp_path / "alerts.jsonl"
    batches = at.build(table)
    airflow_env.jobs_in_process(monkeypatch)
    monkeypatch.setenv("HUDI_ETC_ALERT_FILE", str(alerts))
    between: list = []
    original = EventTimeCompactionSensor.execute

    def sensor_then_race(self, context):
        out = original(self, context)
        while between:
            between.pop(0)()
        return out

    monkeypatch.setattr(EventTimeCompactionSensor, "execute", sensor_then_race)
    with DAG(f"hudi_etc_test_race_{tmp_path.name[-12:]}".replace("-", "_"), schedule=None,
             start_date=pendulum.datetime(2026, 1, 1, tz="UTC"), params={"ct": CT},
             default_args={"on_failure_callback": JsonLinesNotifier(message="{{ ti.task_id }} failed")}) as dag:
        event_time_compaction(table_path=str(table), data_latency=at.LATENCY, compaction_time="{{ params.ct }}",
                              group_id="c", sensor_kwargs={"poke_interval": 0.1, "timeout": 30},
                              check_kwargs={"poke_interval": 0.1, "timeout": 30})
    airflow_env.register(dag)
    return dag, table, batches, alerts, between


def other_run_schedules(table, ct):
    """Another run (of this DAG or a backfill) plans its own threshold: what its schedule task does."""
    return lambda: schedule(str(table), data_latency=at.LATENCY, compaction_time=ct)


def test_a_run_whose_schedule_lost_to_an_earlier_days_plan_is_not_green(race):
    dag, table, batches, alerts, between = race
    between.append(other_run_schedules(table, EARLIER_CT))
    dr = dag.test(run_conf={"ct": CT})
    # the other run's plan (21:00Z) was pending: schedule planned nothing, execute ran that plan
    # (ours and safe: an event-time plan, requested), the view is an hour short: the run fails
    assert states(dr) == {"c.wait": "success", "c.schedule": "success", "c.execute": "success",
                          "c.check": "failed"}
    assert str(dr.state) == "failed"
    assert airflow_env.xcom(dr, "c.schedule")["instant"] is None
    ex = airflow_env.xcom(dr, "c.execute")
    assert (ex["status"], ex["threshold_ms"]) == ("completed", at.THRESHOLD_MS - H)
    assert ex["instant_source"].startswith("adopted pending event-time plan (threshold 2026-01-01T21:00:00.000Z)")
    [alert] = [json.loads(x) for x in alerts.read_text().splitlines()]
    assert (alert["task_id"], alert["exception_type"]) == ("c.check", "AirflowFailException")
    assert "holds threshold 2026-01-01T21:00:00.000Z" in alert["exception"]
    assert f"promised {at.THRESHOLD_ISO}" in alert["exception"]
    assert len(at.ro_violations(table, batches, at.THRESHOLD_MS)) > 0  # it was indeed short

    # the other run goes on: its own threshold is held (green); ours, run again, gets there
    dr = dag.test(run_conf={"ct": EARLIER_CT})
    assert str(dr.state) == "success", states(dr)
    assert airflow_env.xcom(dr, "c.check")["threshold_ms"] == at.THRESHOLD_MS - H
    dr = dag.test(run_conf={"ct": CT})
    assert str(dr.state) == "success", states(dr)
    check = airflow_env.xcom(dr, "c.check")
    assert (check["threshold_ms"], check["promised_threshold_ms"]) == (at.THRESHOLD_MS, at.THRESHOLD_MS)
    assert at.ro_violations(table, batches, at.THRESHOLD_MS) == []


def test_a_run_whose_schedule_lost_to_a_later_plan_executes_it_and_is_green(race):
    dag, table, batches, alerts, between = race
    between.append(other_run_schedules(table, LATER_CT))
    dr = dag.test(run_conf={"ct": CT})
    assert str(dr.state) == "success", states(dr)
    ex = airflow_env.xcom(dr, "c.execute")
    assert (ex["status"], ex["threshold_ms"]) == ("completed", at.THRESHOLD_MS + H)
    check = airflow_env.xcom(dr, "c.check")
    assert (check["threshold_ms"], check["promised_threshold_ms"]) == (at.THRESHOLD_MS + H, at.THRESHOLD_MS)
    assert at.ro_violations(table, batches, at.THRESHOLD_MS + H) == []
    assert not alerts.exists()


def test_check_waits_for_a_pending_plan_that_reaches_the_threshold_then_fails_without_one(table):
    """The check's decisions on their own (no DAG): a pending event-time plan reaching the
    promised threshold (another run executing it) → wait; executed → done; a plan short of it
    or none → fail, naming both thresholds."""
    from airflow.sdk.exceptions import AirflowFailException

    from airflow_hudi_etc.sensors.freshness import EventTimeFreshnessSensor

    # a threshold before every event time in the logs: nothing to compact, the view holds it as it is
    early = EventTimeFreshnessSensor(task_id="early", table_path=str(table), data_latency=at.LATENCY,
                                     compaction_time="2026-01-01T03:00:00Z")  # threshold 01:00Z
    got = early.poke({})
    assert got.is_done and got.xcom_value["vacuous"] is True and got.xcom_value["threshold_ms"] is None
    assert at.ro_violations(table, at.batches(), at.DAY0 + H) == []  # hudi-rs agrees
    check = EventTimeFreshnessSensor(task_id="check", table_path=str(table), data_latency=at.LATENCY,
                                     compaction_time=CT)
    with pytest.raises(AirflowFailException, match=f"holds threshold None .*promised {at.THRESHOLD_ISO}"):
        check.poke({})
    later = schedule(str(table), data_latency=at.LATENCY, compaction_time=LATER_CT)
    assert check.poke({}).is_done is False
    execute(str(table), instant=later.instant)
    got = check.poke({})
    assert got.is_done and got.xcom_value["threshold_ms"] == at.THRESHOLD_MS + H
    # with a catalog sync whose XCom says the catalog is behind: not green either
    behind = {"status": "unchanged", "threshold_ms": at.THRESHOLD_MS - H, "previous_threshold_ms": None}

    class TI:
        def xcom_pull(self, task_ids):
            return behind if task_ids == "sync" else None

    check.sync_task_id = "sync"
    with pytest.raises(AirflowFailException, match="catalog holds 2026-01-01T21:00:00.000Z"):
        check.poke({"ti": TI()})
    behind = None  # a sync marked successful by hand: no result, the catalog is not checked
    got = check.poke({"ti": TI()})
    assert got.is_done and got.xcom_value["catalog_checked"] is False
