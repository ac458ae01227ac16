"""Issue 16 §2/§3 without a JVM: table assets (URI scheme, registration), the asset event a
completed compaction emits, the example consumer DAG reading it, the AssetWatcher trigger on a
real table whose threshold advances, fail-fast in a DAG run, nothing heavy imported on the
triggerer's event loop, ``[project.urls]`` and the provider description."""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before it is imported)

import asyncio
import json
import subprocess
import sys
import tomllib

import pendulum
import pytest

import airflow_table as at
from airflow_env import asset_events
from airflow_hudi_etc.assets import asset_uri, table_asset, table_path_of
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.triggers.event_time import EventTimeThresholdTrigger
from paths import REPO

H = 3_600_000


# ------------------------------------------------------------------------------ the URI scheme
def test_asset_uris_are_normalized_by_the_registered_handler(tmp_path):
    from airflow.sdk import Asset

    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    handlers = ProvidersManagerTaskRuntime().asset_uri_handlers
    assert handlers["hudi-etc+s3"].__module__ == "airflow_hudi_etc.assets"
    # Airflow itself normalizes what a DAG author writes (through the provider's handler)
    assert Asset(uri="hudi-etc+S3A://lake//warehouse/trips/").normalized_uri == "hudi-etc+s3://lake/warehouse/trips"
    assert asset_uri("s3a://lake/warehouse/trips/") == "hudi-etc+s3://lake/warehouse/trips"
    assert asset_uri(str(tmp_path / "a" / ".." / "t")) == f"hudi-etc+file:{tmp_path}/t"
    assert asset_uri(f"file://{tmp_path}/t") == f"hudi-etc+file:{tmp_path}/t"
    assert table_path_of("hudi-etc+file:///data//trips/") == "/data/trips"
    assert table_path_of("hudi-etc+gcs://bkt/t") == "gs://bkt/t"
    for bad in ("hudi-etc+s3:///no-bucket", "hudi-etc+file:///a/../b", "hudi-etc+ftp://h/t",
                "hudi-etc+file:///t?x=1", "hudi-etc+file:///"):
        with pytest.raises(ValueError):
            table_path_of(bad)
    a = table_asset(path="s3a://lake//trips/", name="hudi-etc+s3://lake/trips")
    assert (a.uri, a.name, a.group) == ("hudi-etc+s3://lake/trips", "hudi-etc+s3://lake/trips", "hudi-etc")
    with pytest.raises(ValueError, match="one identity per table"):
        table_asset(path="s3://lake/trips", name="trips_ro")  # a second name would be a second asset


def test_project_urls_documentation_and_changelog():
    """No link to a page that does not exist (issue 24 §7: the package is not on PyPI); the
    provider's description survives ``airflow providers list`` (no ``<...>`` placeholder)."""
    repo = REPO
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    assert "pypi.org" not in json.dumps(project.get("urls", {}))
    assert (repo / "CHANGELOG.md").read_text().startswith("# Changelog")
    from airflow.providers_manager import ProvidersManager

    description = ProvidersManager().providers["airflow-hudi-etc"].data["description"]
    assert "<" not in description and ">" not in description
    assert "hudi-etc+s3://bucket/table" in description


# ------------------------------------------------------------------------------ the watcher trigger
async def cancel(task, gen):
    task.cancel()
    try:
        await task
    except (asyncio.CancelledError, StopAsyncIteration):
        pass
    await gen.aclose()


def test_threshold_trigger_serializes_to_an_equal_trigger():
    t = EventTimeThresholdTrigger("s3://b/t", poll_interval=5, after_threshold_ms=7, hudi_conn_id="c")
    path, kwargs = t.serialize()
    assert path == "airflow_hudi_etc.triggers.event_time.EventTimeThresholdTrigger"
    assert kwargs == {"table_path": "s3://b/t", "poll_interval": 5.0, "after_threshold_ms": 7, "hudi_conn_id": "c"}
    assert EventTimeThresholdTrigger(**kwargs).serialize() == (path, kwargs)
    from airflow.triggers.base import BaseEventTrigger

    assert isinstance(t, BaseEventTrigger)


@pytest.mark.asyncio
async def test_threshold_trigger_fires_each_time_the_published_threshold_advances(table):
    """A real table: no event for the state it starts from; one per compaction that moves the
    threshold forward, with the threshold and instant hudi-etc committed (fixed values)."""
    trig = EventTimeThresholdTrigger(str(table), poll_interval=0.01)
    gen = trig.run()
    nxt = asyncio.ensure_future(gen.__anext__())
    try:
        while trig.polls < 2:  # it has seen the table (no threshold yet) twice, and said nothing
            await asyncio.sleep(0.005)
        assert not nxt.done()
        first = await asyncio.to_thread(schedule, str(table), data_latency=at.LATENCY,
                                        compaction_time="2026-01-01T23:00:00Z")  # threshold 21:00Z
        await asyncio.sleep(0.05)
        assert not nxt.done()  # a pending plan publishes nothing
        await asyncio.to_thread(execute, str(table), instant=first.instant)
        ev = await asyncio.wait_for(nxt, 60)
        assert ev.payload == {"status": "advanced", "table_path": str(table), "threshold_ms": at.THRESHOLD_MS - H,
                              "threshold": "2026-01-01T21:00:00.000Z", "instant": first.instant,
                              "previous_threshold_ms": None, "polls": ev.payload["polls"]}
        nxt = asyncio.ensure_future(gen.__anext__())
        polls = trig.polls
        while trig.polls < polls + 2:
            await asyncio.sleep(0.005)
        assert not nxt.done()  # the same threshold again: nothing
        second = await asyncio.to_thread(schedule, str(table), data_latency=at.LATENCY,
                                         compaction_time=at.COMPACTION_TIME)
        await asyncio.to_thread(execute, str(table), instant=second.instant)
        ev = await asyncio.wait_for(nxt, 60)
        assert (ev.payload["threshold_ms"], ev.payload["instant"], ev.payload["previous_threshold_ms"]) == (
            at.THRESHOLD_MS, second.instant, at.THRESHOLD_MS - H)
    finally:
        await cancel(nxt, gen)
    # a watch that starts after both (e.g. a restarted triggerer told where it was) fires for the
    # second only; one that starts from now says nothing
    late = EventTimeThresholdTrigger(str(table), poll_interval=0.01, after_threshold_ms=at.THRESHOLD_MS - H)
    gen = late.run()
    try:
        ev = await asyncio.wait_for(gen.__anext__(), 60)
        assert (ev.payload["threshold_ms"], ev.payload["previous_threshold_ms"]) == (at.THRESHOLD_MS,
                                                                                     at.THRESHOLD_MS - H)
    finally:
        await gen.aclose()


@pytest.mark.asyncio
async def test_threshold_trigger_outlives_a_missing_table(tmp_path):
    trig = EventTimeThresholdTrigger(str(tmp_path / "not-yet"), poll_interval=0.01)
    gen = trig.run()
    nxt = asyncio.ensure_future(gen.__anext__())
    await asyncio.sleep(0.2)
    assert not nxt.done() and trig.polls == 0  # errors are retried, not fatal
    await cancel(nxt, gen)


LOOP_PROBE = r"""
import asyncio, sys, threading
sys.path[:0] = [{repo!r}, {tests!r}]
import airflow_env
heavy = ("pyarrow", "fastavro", "numpy", "airflow_hudi_etc.hudi.table.hudi_table", "airflow_hudi_etc.compaction.readiness")
from airflow_hudi_etc.triggers.event_time import EventTimeCompactionTrigger, EventTimeThresholdTrigger
import airflow_hudi_etc.hooks.hudi
assert not [m for m in heavy if m in sys.modules], [m for m in heavy if m in sys.modules]
on_loop = []
loop_thread = None
def audit(event, args):
    if event == "import" and threading.get_ident() == loop_thread and args[0].split(".")[0] in (
            "pyarrow", "fastavro", "numpy", "airflow_hudi_etc"):
        on_loop.append(args[0])
sys.addaudithook(audit)
async def main():
    global loop_thread
    loop_thread = threading.get_ident()
    a = await anext(EventTimeCompactionTrigger({table!r}, {threshold}, deadline=None).run())
    gen = EventTimeThresholdTrigger({table!r}, poll_interval=0.01).run()
    nxt = asyncio.ensure_future(anext(gen))
    await asyncio.sleep(0.3)
    nxt.cancel()
    print(a.payload["status"], sorted(set(on_loop)))
asyncio.run(main())
"""


def test_triggers_import_nothing_heavy_on_the_event_loop(table):
    repo = REPO
    code = LOOP_PROBE.format(repo=str(repo), tests=str(repo / "tests" / "support"), table=str(table), threshold=at.THRESHOLD_MS)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.strip().splitlines()[-1] == "success []"


# ------------------------------------------------------------------------------ DAG runs (no JVM)
def test_completed_compaction_emits_an_asset_event_the_consumer_dag_reads(table):
    """A compaction committed by an earlier try: the execute task (no Spark needed) emits the
    asset event with the threshold, on the table's asset and through the example's alias; the
    example consumer DAG then runs on it. A task whose run planned nothing is skipped: no event."""
    from airflow.sdk import DAG, AssetAlias

    from airflow_hudi_etc.operators.compaction import ExecuteCompactionOperator

    plan = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    execute(str(table), instant=plan.instant)
    uri = asset_uri(str(table))
    with DAG("hudi_etc_test_publish", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
        ExecuteCompactionOperator(task_id="execute", table_path=str(table), instant="{{ params.instant }}",
                                  conn_id="hudi_etc_no_such_spark_connection", params={"instant": plan.instant},
                                  outlets=[table_asset(path=str(table)), AssetAlias("hudi_etc_ro_fresh")])
    airflow_env.register(dag)
    dr = dag.test()
    assert str(dr.state) == "success"
    out = airflow_env.xcom(dr, "execute")
    assert (out["status"], out["spark_submitted"], out["asset_events"]) == ("already completed", False, [uri])
    events = asset_events(uri)
    assert len(events) == 2  # the outlet's and the alias's
    for e in events:
        assert (e["threshold_ms"], e["threshold"], e["instant"], e["table_path"]) == (
            at.THRESHOLD_MS, at.THRESHOLD_ISO, plan.instant, str(table))
        assert (e["logs_compacted"], e["remaining_log_files"]) == (8, 2)

    consumer = airflow_env.example_dag("hudi_etc_ro_consumer")
    dr = consumer.test()
    assert str(dr.state) == "success"
    assert airflow_env.xcom(dr, "use_fresh_ro_view") == {
        "table_path": str(table), "threshold": at.THRESHOLD_ISO, "threshold_ms": at.THRESHOLD_MS,
        "instant": plan.instant, "published_threshold_ms": at.THRESHOLD_MS}

    # nothing planned by this run (schedule says covered): skipped, its report in XCom, no event
    from airflow_hudi_etc.operators.compaction import ScheduleEventTimeCompactionOperator

    with DAG("hudi_etc_test_nothing", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag2:
        s = ScheduleEventTimeCompactionOperator(task_id="schedule", table_path=str(table), data_latency="1d",
                                                compaction_time=at.COMPACTION_TIME,
                                                conn_id="hudi_etc_no_such_spark_connection")
        s >> ExecuteCompactionOperator(task_id="execute", table_path=str(table),
                                       conn_id="hudi_etc_no_such_spark_connection",
                                       outlets=[table_asset(path=str(table))])
    airflow_env.register(dag2)
    dr = dag2.test()
    states = {ti.task_id: str(ti.state) for ti in dr.get_task_instances()}
    assert states == {"schedule": "success", "execute": "skipped"}
    report = airflow_env.xcom(dr, "execute")
    assert report["status"] == "nothing to execute" and "schedule planned nothing" in report["instant_source"]
    assert len(asset_events(uri)) == 2


def test_one_asset_per_table_from_every_place_that_names_it(table):
    """Issue 24 §3: the operator's outlet, an alias resolution and a consumer's watched asset of
    the same table are one asset (name = URI): one row in the metadata DB, the producer's events
    queue the consumer; the example consumer names its table the same way."""
    from airflow.models.asset import AssetDagRunQueue, AssetModel
    from airflow.sdk import DAG, AssetAlias, AssetWatcher, task
    from airflow.utils.session import create_session

    from airflow_hudi_etc.operators.compaction import ExecuteCompactionOperator

    plan = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    execute(str(table), instant=plan.instant)
    uri = asset_uri(str(table))
    start = pendulum.datetime(2026, 1, 1, tz="UTC")
    watched = table_asset(path=str(table), watchers=[AssetWatcher(
        name="hudi_etc_test_watch", trigger=EventTimeThresholdTrigger(table_path=str(table)))])
    with DAG("hudi_etc_test_one_consumer", schedule=watched, start_date=start) as consumer:
        task(lambda: None, task_id="use")()
    with DAG("hudi_etc_test_one_producer", schedule=None, start_date=start) as producer:
        ExecuteCompactionOperator(task_id="execute", table_path=str(table), instant=plan.instant,
                                  conn_id="hudi_etc_no_such_spark_connection",
                                  outlets=[table_asset(path=str(table)), AssetAlias("hudi_etc_test_one_alias")])
    airflow_env.register(consumer)
    airflow_env.register(producer)
    from airflow.models.dag import DagModel

    with create_session() as s:  # a paused DAG is not queued
        s.query(DagModel).filter(DagModel.dag_id == consumer.dag_id).update({"is_paused": False})
    assert str(producer.test().state) == "success"
    with create_session() as s:
        rows = s.query(AssetModel).filter(AssetModel.uri == uri).all()
        assert [(r.name, r.uri) for r in rows] == [(uri, uri)]
        queued = s.query(AssetDagRunQueue).filter(AssetDagRunQueue.target_dag_id == consumer.dag_id).all()
        assert [q.asset_id for q in queued] == [rows[0].id]
    assert len(asset_events(uri)) == 2  # the outlet's and the alias's, on the one asset
    example = airflow_env.example_dag("hudi_etc_ro_consumer")
    demo = [a for a in example.timetable.asset_condition.objects if hasattr(a, "uri")]
    assert [(a.name, a.uri) for a in demo] == [(a.uri, a.uri) for a in demo] and len(demo) == 1


def test_an_outlet_of_another_table_is_refused_before_anything_runs(table, tmp_path):
    from airflow.sdk.exceptions import AirflowFailException

    from airflow_hudi_etc.operators.compaction import ExecuteCompactionOperator

    op = ExecuteCompactionOperator(task_id="e", table_path=str(table), instant="1",
                                   outlets=[table_asset(path=str(tmp_path / "other"))])
    with pytest.raises(AirflowFailException, match="invalid_input: outlet"):
        op.execute({})


def test_missing_table_fails_without_retry_in_a_dag_run(tmp_path):
    """retries=3, but a table that is not there fails the task on its first try."""
    from airflow.sdk import DAG

    from airflow_hudi_etc.operators.compaction import ScheduleEventTimeCompactionOperator

    with DAG("hudi_etc_test_failfast", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC")) as dag:
        ScheduleEventTimeCompactionOperator(task_id="schedule", table_path=str(tmp_path / "absent"),
                                            data_latency="2h", retries=3, retry_delay=0,
                                            conn_id="hudi_etc_no_such_spark_connection")
    airflow_env.register(dag)
    dr = dag.test()
    [ti] = dr.get_task_instances()
    assert (str(ti.state), ti.try_number) == ("failed", 1)
