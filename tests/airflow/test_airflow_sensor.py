"""EventTimeCompactionSensor and EventTimeCompactionTrigger on real tables (no Spark): poke,
reschedule and deferrable paths, timeout and soft_fail, and the alerting DAG's timeout alert."""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before it is imported)

import asyncio
import json
import time
from datetime import timedelta

import pendulum
import pytest

from airflow.sdk.exceptions import AirflowSensorTimeout, AirflowSkipException, TaskDeferred
from airflow.triggers.base import TriggerEvent

import airflow_table as at
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.errors import InvalidInputError, TableNotFoundError
from airflow_hudi_etc.sensors.event_time import EventTimeCompactionSensor
from airflow_hudi_etc.triggers.event_time import EventTimeCompactionTrigger

OTHER_TIME = "2026-01-01T23:00:00Z"  # threshold 21:00Z: another run's plan
OTHER_MS = 1_767_301_200_000


def sensor(path, **kw) -> EventTimeCompactionSensor:
    kw.setdefault("compaction_time", at.COMPACTION_TIME)
    kw.setdefault("poke_interval", 0)
    kw.setdefault("timeout", 0)
    return EventTimeCompactionSensor(task_id="wait", table_path=str(path), data_latency=at.LATENCY, **kw)


def test_poke_ready_pushes_the_threshold(table):
    res = sensor(table).poke({})
    assert res.is_done
    x = res.xcom_value
    assert (x["state"], x["ready"], x["covered"]) == ("ready", True, False)
    assert (x["threshold_ms"], x["threshold"]) == (at.THRESHOLD_MS, at.THRESHOLD_ISO)
    assert (x["last_threshold_ms"], x["last_compaction_instant"]) == (None, None)
    assert x["compaction_time"] == "2026-01-02T00:00:00+00:00" and x["data_latency_seconds"] == 7200.0


def test_compaction_time_defaults_to_the_runs_data_interval_end(table):
    s = sensor(table, compaction_time=None)
    x = s.execute({"data_interval_end": pendulum.datetime(2026, 1, 2, tz="UTC")})
    assert x["threshold_ms"] == at.THRESHOLD_MS


def test_covered_run_succeeds_and_says_so(table):
    first = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    execute(str(table), instant=first.instant)
    # the same threshold again, and a backfill run for the day before: nothing to do
    for ct, ms in ((at.COMPACTION_TIME, at.THRESHOLD_MS), ("2026-01-01T00:00:00Z", at.THRESHOLD_MS - 86_400_000)):
        x = sensor(table, compaction_time=ct).execute({})
        assert (x["state"], x["covered"], x["ready"], x["done"]) == ("covered", True, False, True)
        assert x["threshold_ms"] == ms
        assert (x["last_threshold_ms"], x["last_compaction_instant"]) == (at.THRESHOLD_MS, first.instant)
        assert x["message"].startswith("covered:") and "backfill no-op" in x["message"]


def test_another_pending_plan_makes_it_wait_then_time_out_or_skip(table):
    other = schedule(str(table), data_latency=at.LATENCY, compaction_time=OTHER_TIME)
    assert other.threshold_ms == OTHER_MS and other.instant
    res = sensor(table).poke({})
    assert not res.is_done and res.xcom_value is None
    with pytest.raises(AirflowSensorTimeout):
        sensor(table).execute({})
    with pytest.raises(AirflowSkipException):
        sensor(table, soft_fail=True).execute({})


def test_own_pending_plan_lets_the_run_resume(table):
    own = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    x = sensor(table).execute({})
    assert (x["state"], x["pending_plan"], x["pending_compactions"]) == ("resume", own.instant, [own.instant])


def fails_fast(cls):
    """No retry can fix it: AirflowFailException, the typed error as its cause."""
    import contextlib

    from airflow.sdk.exceptions import AirflowFailException

    @contextlib.contextmanager
    def check():
        with pytest.raises(AirflowFailException) as e:
            yield e
        assert isinstance(e.value.__cause__, cls), repr(e.value.__cause__)
    return check()


def test_bad_input_is_a_typed_error_that_fails_fast(tmp_path, table):
    with fails_fast(TableNotFoundError):
        sensor(tmp_path / "nothing-here").poke({})
    with fails_fast(InvalidInputError):
        EventTimeCompactionSensor(task_id="w", table_path=str(table), data_latency="two hours",
                                  compaction_time=at.COMPACTION_TIME).poke({})


# ------------------------------------------------------------------------------ deferrable
def test_deferrable_defers_with_a_deadline_and_returns_at_once_when_ready(table):
    s = sensor(table, deferrable=True, timeout=600, poke_interval=30)
    assert s.execute({})["state"] == "ready"  # ready: no deferral at all
    schedule(str(table), data_latency=at.LATENCY, compaction_time=OTHER_TIME)
    before = time.time()
    with pytest.raises(TaskDeferred) as d:
        s.execute({})
    trig = d.value.trigger
    assert isinstance(trig, EventTimeCompactionTrigger)
    assert d.value.method_name == "execute_complete" and d.value.timeout == timedelta(seconds=600)
    assert (trig.table_path, trig.threshold_ms, trig.poll_interval) == (str(table), at.THRESHOLD_MS, 30.0)
    assert before + 600 <= trig.deadline <= time.time() + 600


def test_trigger_serializes_to_an_equal_trigger():
    t = EventTimeCompactionTrigger("s3://b/t", 123, deadline=1e9, poll_interval=5, hudi_conn_id="c")
    path, kwargs = t.serialize()
    assert path == "airflow_hudi_etc.triggers.event_time.EventTimeCompactionTrigger"
    assert kwargs == {"table_path": "s3://b/t", "threshold_ms": 123, "deadline": 1e9, "poll_interval": 5.0,
                      "hudi_conn_id": "c"}
    assert EventTimeCompactionTrigger(**kwargs).serialize() == (path, kwargs)


async def first_event(trigger):
    gen = trigger.run()
    try:
        return await asyncio.wait_for(gen.__anext__(), timeout=120)
    finally:
        await gen.aclose()


@pytest.mark.asyncio
async def test_trigger_success_timeout_and_error(tmp_path, table):
    ok = await first_event(EventTimeCompactionTrigger(str(table), at.THRESHOLD_MS, deadline=time.time() + 60))
    assert ok.payload["status"] == "success" and ok.payload["result"]["state"] == "ready"
    assert ok.payload["polls"] == 1
    schedule(str(table), data_latency=at.LATENCY, compaction_time=OTHER_TIME)
    late = await first_event(EventTimeCompactionTrigger(str(table), at.THRESHOLD_MS, deadline=time.time() - 1))
    assert late.payload["status"] == "timeout"
    assert late.payload["result"]["reason"].startswith("pending compaction")
    err = await first_event(EventTimeCompactionTrigger(str(tmp_path / "nothing"), at.THRESHOLD_MS, deadline=None))
    assert err == TriggerEvent({"status": "error", "type": "TableNotFoundError", "message": err.payload["message"],
                                "polls": 1})


@pytest.mark.asyncio
async def test_trigger_fires_once_the_blocking_compaction_completes(table):
    other = schedule(str(table), data_latency=at.LATENCY, compaction_time=OTHER_TIME)
    trig = EventTimeCompactionTrigger(str(table), at.THRESHOLD_MS, deadline=time.time() + 300, poll_interval=0.01)
    task = asyncio.ensure_future(first_event(trig))
    while trig.polls < 1 and not task.done():  # its first check saw the pending plan
        await asyncio.sleep(0)
    assert not task.done()
    await asyncio.to_thread(execute, str(table), instant=other.instant)
    ev = await task
    assert ev.payload["status"] == "success" and ev.payload["polls"] >= 2
    assert ev.payload["result"]["state"] == "ready" and ev.payload["result"]["last_threshold_ms"] == OTHER_MS


def test_execute_complete_maps_events(table):
    s = sensor(table, deferrable=True, timeout=5)
    ok = {"status": "success", "polls": 3, "result": {"state": "ready", "message": "ready", "threshold_ms": 1}}
    assert s.execute_complete({}, event=ok, compaction_time=at.COMPACTION_TIME)["threshold_ms"] == 1
    timeout = {"status": "timeout", "result": {"message": "waiting: pending compaction 1"}, "polls": 2}
    with pytest.raises(AirflowSensorTimeout):
        s.resume_execution("execute_complete", {"event": timeout}, context={})
    with fails_fast(TableNotFoundError):
        s.resume_execution("execute_complete", {"event": {"status": "error", "type": "TableNotFoundError",
                                                          "message": "no table"}}, context={})
    # the scheduler expired the trigger (its own defer timeout)
    with pytest.raises(AirflowSensorTimeout):
        s.resume_execution("__fail__", {"error": "Trigger timeout"}, context={})
    soft = sensor(table, deferrable=True, timeout=5, soft_fail=True)
    with pytest.raises(AirflowSkipException):
        soft.resume_execution("execute_complete", {"event": timeout}, context={})
    with pytest.raises(AirflowSkipException):
        soft.resume_execution("__fail__", {"error": "Trigger timeout"}, context={})


# ------------------------------------------------------------------------------ in a DAG run
def ti_states(dr) -> dict[str, str]:
    return {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}


def test_alerting_dag_sensor_timeout_alerts_and_fails_the_run(table, tmp_path, monkeypatch):
    """Deferrable sensor under dag.test (trigger run inline, its own deadline): a foreign pending
    plan blocks the table → AirflowSensorTimeout → one JSON alert line; nothing is submitted. The
    run is triggered by hand (no logical date, no data interval): the alert still renders, with
    ``"state": "failed"``."""
    schedule(str(table), data_latency=at.LATENCY, compaction_time=OTHER_TIME)
    alerts = tmp_path / "alerts.jsonl"
    monkeypatch.setenv("HUDI_ETC_ALERT_FILE", str(alerts))
    dag = airflow_env.example_dag("hudi_etc_alerting")
    wait = dag.get_task("wait_for_compaction_window")
    wait.timeout, wait.poke_interval, wait.poll_interval = 1, 0.2, 0.2
    dr = dag.test(logical_date=None, run_conf={"table_path": str(table), "data_latency": "26h"})
    assert dr.logical_date is None
    assert str(dr.state) == "failed"
    assert ti_states(dr) == {"wait_for_compaction_window": "failed", "schedule_compaction": "upstream_failed",
                             "execute_compaction": "upstream_failed", "rollback_failed_execution": "success",
                             "fail_run": "failed"}
    lines = [json.loads(x) for x in alerts.read_text().splitlines()]
    assert len(lines) == 1
    a = lines[0]
    assert (a["dag_id"], a["task_id"], a["exception_type"]) == ("hudi_etc_alerting", "wait_for_compaction_window",
                                                                "AirflowSensorTimeout")
    assert "pending compaction" in a["exception"] and a["table_path"] == str(table)
    assert a["state"] == "failed" and a["logical_date"] is None and "render_error" not in a
    assert a["message"] == f"hudi_etc_alerting.wait_for_compaction_window failed in run {dr.run_id}"
    assert airflow_env.xcom(dr, "rollback_failed_execution")["status"] == "nothing to roll back"


def test_notifier_never_loses_an_alert_to_a_template(tmp_path):
    """A message using fields a manual run lacks (``ds``, ``data_interval_end``) is sent as written,
    with the render error; the state is the enum's value."""
    from airflow.sdk import DAG
    from airflow.utils.state import TaskInstanceState

    from airflow_hudi_etc.notifications.jsonl import JsonLinesNotifier

    class TI:
        dag_id, task_id, run_id, try_number, state = "d", "t", "manual__x", 1, TaskInstanceState.FAILED

    out = tmp_path / "a.jsonl"
    n = JsonLinesNotifier(path=str(out), message="{{ ti.task_id }} failed on {{ data_interval_end.isoformat() }}")
    with DAG("d", schedule=None) as dag:
        pass
    # a manually triggered run's context: no logical_date, no data interval, no ds
    n({"dag": dag, "ti": TI(), "run_id": "manual__x", "exception": RuntimeError("boom")})
    n.message = "ignored: the template is kept per instance"
    ok = JsonLinesNotifier(path=str(out), message="{{ ti.task_id }} in {{ run_id }}")
    ok({"dag": dag, "ti": TI(), "run_id": "manual__x"})
    first, second = [json.loads(x) for x in out.read_text().splitlines()]
    assert first["message"] == "{{ ti.task_id }} failed on {{ data_interval_end.isoformat() }}"
    assert "data_interval_end" in first["render_error"]["message"]
    assert (first["state"], first["exception_type"], first["logical_date"]) == ("failed", "RuntimeError", None)
    assert (second["message"], second["state"], "render_error" in second) == ("t in manual__x", "failed", False)


def test_reschedule_mode_in_a_dag_run(table):
    """mode=reschedule under dag.test: the first try finds another run's plan pending and is
    rescheduled; before the second try that plan is executed (on_execute_callback), which then
    finds the window open."""
    from airflow.sdk import DAG

    other = schedule(str(table), data_latency=at.LATENCY, compaction_time=OTHER_TIME)
    tries = []

    def before_each_try(context):
        tries.append(str(context["ti"].state))
        if len(tries) == 2:
            execute(str(table), instant=other.instant)

    with DAG("hudi_etc_test_reschedule", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
        EventTimeCompactionSensor(task_id="wait", table_path=str(table), data_latency=at.LATENCY, mode="reschedule",
                                  poke_interval=0, timeout=600, on_execute_callback=before_each_try)
    airflow_env.register(dag)
    dr = dag.test(logical_date=pendulum.datetime(2026, 1, 2, tz="UTC"))
    assert str(dr.state) == "success" and len(tries) == 2
    x = airflow_env.xcom(dr, "wait")
    assert (x["state"], x["threshold_ms"], x["last_threshold_ms"]) == ("ready", at.THRESHOLD_MS, OTHER_MS)
    assert airflow_env.reschedules(dr, "wait") == 1


def test_nightly_dag_alerts_on_its_own_sensor_timeout(table, tmp_path, monkeypatch):
    """The nightly DAG's sensor (reschedule mode) times out while another plan blocks the table:
    the task fails without retry and the alert line is written; nothing downstream runs."""
    schedule(str(table), data_latency=at.LATENCY, compaction_time=OTHER_TIME)
    alerts = tmp_path / "alerts.jsonl"
    monkeypatch.setenv("HUDI_ETC_ALERT_FILE", str(alerts))
    dag = airflow_env.example_dag("hudi_etc_nightly")
    wait = dag.get_task("compaction.wait")
    wait.timeout, wait.poke_interval = 0.5, 0.1
    dr = dag.test(logical_date=pendulum.datetime(2026, 1, 2, tz="UTC"), run_conf={"table_path": str(table)})
    assert str(dr.state) == "failed"
    assert ti_states(dr) == {"compaction.wait": "failed", "compaction.schedule": "upstream_failed",
                             "compaction.execute": "upstream_failed", "compaction.sync": "upstream_failed",
                             "compaction.check": "upstream_failed"}
    [a] = [json.loads(x) for x in alerts.read_text().splitlines()]
    assert (a["dag_id"], a["task_id"], a["exception_type"], a["state"]) == (
        "hudi_etc_nightly", "compaction.wait", "AirflowSensorTimeout", "failed")
    assert a["message"] == f"hudi_etc_nightly.compaction.wait failed in run {dr.run_id}"
