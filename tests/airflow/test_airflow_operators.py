"""The compaction operators' decisions that need no JVM (retry reuse, covered runs, completed
instants, typed errors, metrics), the hook's connection handling, provider registration and the
example DAGs' import; plus on_kill against a real spark-submit."""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before it is imported)

import contextlib
import json
import os
import select
import signal
import threading

import pendulum
import pytest
from airflow.sdk.exceptions import AirflowSkipException

import airflow_table as at
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.errors import InvalidInputError, InvalidTimelineError, TableNotFoundError
from airflow_hudi_etc.operators.compaction import (
    ExecuteCompactionOperator,
    RollbackCompactionOperator,
    ScheduleEventTimeCompactionOperator,
    SyncEventTimeThresholdOperator,
    _raise_job_error,
)

#: a Spark connection that cannot work: any test reaching spark-submit through it fails
NO_SPARK = "hudi_etc_no_such_spark_connection"


@contextlib.contextmanager
def fails_fast(cls, match=None):
    """The task fails without retry (AirflowFailException) with a typed ``cls`` error as its cause."""
    from airflow.sdk.exceptions import AirflowFailException

    with pytest.raises(AirflowFailException, match=match) as e:
        yield e
    assert isinstance(e.value.__cause__, cls), repr(e.value.__cause__)


def sched(path, **kw):
    return ScheduleEventTimeCompactionOperator(task_id="schedule", table_path=str(path), data_latency=at.LATENCY,
                                               compaction_time=at.COMPACTION_TIME, conn_id=NO_SPARK, **kw)


def test_schedule_retry_reuses_the_pending_plan_for_its_threshold(table):
    first = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)  # the failed try's
    out = sched(table).execute({})
    assert (out["instant"], out["reason"], out["reused"], out["spark_submitted"]) == (
        first.instant, "already scheduled", True, False)
    assert (out["threshold_ms"], out["operations"]) == (at.THRESHOLD_MS, 2)
    assert len(list((table / ".hoodie").glob("*.compaction.requested"))) == 1


def test_schedule_of_a_covered_run_submits_nothing(table):
    done = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    execute(str(table), instant=done.instant)
    out = ScheduleEventTimeCompactionOperator(task_id="s", table_path=str(table), data_latency=at.LATENCY,
                                              conn_id=NO_SPARK).execute(
        {"data_interval_end": pendulum.datetime(2026, 1, 1, tz="UTC")})
    assert (out["instant"], out["covered"], out["spark_submitted"]) == (None, True, False)
    assert out["threshold_ms"] == at.THRESHOLD_MS - 86_400_000
    assert "not past the last compacted threshold" in out["reason"]


def test_schedule_rejects_bad_input_before_anything(tmp_path, table):
    with fails_fast(InvalidInputError):
        sched(table, link_mode="hardlink").execute({})
    with fails_fast(InvalidInputError):
        ScheduleEventTimeCompactionOperator(task_id="s", table_path=str(table), data_latency="soon",
                                            conn_id=NO_SPARK).execute({})
    with fails_fast(TableNotFoundError, match="table_not_found"):
        sched(tmp_path / "absent").execute({})
    assert not list((table / ".hoodie").glob("*.compaction.*"))


class Recorder:
    """A metrics backend (Airflow's StatsLogger protocol) that keeps what it is sent."""

    def __init__(self):
        self.gauges = []

    def gauge(self, stat, value, rate=None, delta=None, *, tags=None):
        self.gauges.append((stat, value, tags))

    def incr(self, *a, **k):
        pass

    decr = timing = incr

    def timer(self, *a, **k):
        from airflow.sdk._shared.observability.metrics.base_stats_logger import NoStatsLogger

        return NoStatsLogger.timer()


@pytest.fixture
def stats_backend():
    from airflow.sdk._shared.observability.metrics import stats as st

    saved = (st._factory, st._backend, st._export_legacy_names)
    rec = Recorder()
    st.initialize(factory=lambda: rec, export_legacy_names=False)
    yield rec
    st._factory, st._backend, st._export_legacy_names = saved


def test_execute_retry_of_a_completed_plan_reports_it_and_sends_metrics(table, stats_backend):
    plan = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    execute(str(table), instant=plan.instant)  # the try that committed, then lost its worker
    op = ExecuteCompactionOperator(task_id="execute", table_path=str(table), instant=plan.instant, conn_id=NO_SPARK)
    out = op.execute({})
    assert (out["instant"], out["status"], out["spark_submitted"]) == (plan.instant, "already completed", False)
    assert (out["threshold_ms"], out["logs_compacted"], out["logs_remaining"]) == (at.THRESHOLD_MS, 8, 2)
    # the logs left: the last batch's, one per partition (sizes from its deltacommit, read as JSON)
    last = sorted((table / ".hoodie").glob("*.deltacommit"))[-1]
    stats = [s for v in json.loads(last.read_text())["partitionToWriteStats"].values() for s in v]
    assert out["freshness"]["remaining_log_files"] == 2 == len(stats)
    assert out["freshness"]["remaining_log_bytes"] == sum(s["fileSizeInBytes"] for s in stats)
    sent = {name: (value, tags) for name, value, tags in stats_backend.gauges}
    assert sent["hudi_etc.remaining_log_files"] == (2.0, {"table": "trips"})
    assert sent["hudi_etc.remaining_log_bytes"][0] == sum(s["fileSizeInBytes"] for s in stats)
    assert sent["hudi_etc.pending_compactions"][0] == 0.0
    lag = sent["hudi_etc.threshold_lag_seconds"][0]
    assert lag > 0 and abs(lag - (pendulum.now("UTC").timestamp() - at.THRESHOLD_MS / 1000)) < 3600
    assert "hudi_etc.execution_seconds" not in sent  # nothing was executed by this try


def test_execute_and_rollback_with_nothing_to_do_submit_nothing(table):
    with pytest.raises(AirflowSkipException, match="nothing to execute"):
        ExecuteCompactionOperator(task_id="e", table_path=str(table), conn_id=NO_SPARK).execute({})
    plan = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    # a plan someone else made is not this run's: skipped again, unless asked for
    with pytest.raises(AirflowSkipException, match="nothing to execute"):
        ExecuteCompactionOperator(task_id="e", table_path=str(table), conn_id=NO_SPARK).execute({})
    rb = RollbackCompactionOperator(task_id="r", table_path=str(table), conn_id=NO_SPARK).execute({})
    assert (rb["status"], rb["spark_submitted"]) == ("nothing to roll back", False)  # requested, not inflight
    rb = RollbackCompactionOperator(task_id="r", table_path=str(table), instant=plan.instant,
                                    conn_id=NO_SPARK).execute({})
    assert (rb["status"], rb["files_removed"]) == ("requested", 0)
    with pytest.raises(InvalidTimelineError):
        ExecuteCompactionOperator(task_id="e", table_path=str(table), instant="20200101000000000",
                                  conn_id=NO_SPARK).execute({})
    execute(str(table), instant=plan.instant)
    with pytest.raises(InvalidTimelineError):  # asked for explicitly: a completed compaction stays
        RollbackCompactionOperator(task_id="r", table_path=str(table), instant=plan.instant,
                                   conn_id=NO_SPARK).execute({})


def test_sync_rejects_unsafe_identifiers(table):
    for db, name in (("default; DROP TABLE x", "trips"), ("default", "trips`"), ("1db", "t"), ("db", "x" * 126)):
        with fails_fast(InvalidInputError):
            SyncEventTimeThresholdOperator(task_id="s", table_path=str(table), database=db, table=name,
                                           conn_id=NO_SPARK).execute({})


def test_job_errors_come_back_typed():
    with pytest.raises(InvalidTimelineError, match="stale plan") as e:
        _raise_job_error({"code": "invalid_timeline", "type": "InvalidTimelineError", "message": "stale plan"})
    assert e.value.code == "invalid_timeline"
    from airflow_hudi_etc.hudi.errors import HudiEtcError

    with pytest.raises(HudiEtcError) as e:
        _raise_job_error({"code": "spark_job_failed", "type": "SomethingElse", "message": "boom"})
    assert e.value.code == "spark_job_failed"


# ------------------------------------------------------------------------------ the contract with the job
def _operator_cases():
    """(operator, what its execute resolves at run time, the values the job must parse: fixed)."""
    ct = "2026-01-02T00:00:00+00:00"
    return [
        (ScheduleEventTimeCompactionOperator(task_id="s", table_path="/t", data_latency="2h", link_mode="copy",
                                             exact_split=True, event_time_field="et", conn_id=NO_SPARK),
         {"compaction_time": ct},
         {"command": "schedule", "path": "/t", "data_latency": "2h", "compaction_time": ct, "link_mode": "copy",
          "exact_split": True, "event_time_field": "et", "engine": "local"}),
        (ScheduleEventTimeCompactionOperator(task_id="s2", table_path="/t", data_latency="PT30M", conn_id=NO_SPARK),
         {"compaction_time": ct},
         {"command": "schedule", "path": "/t", "data_latency": "PT30M", "compaction_time": ct, "link_mode": "auto",
          "exact_split": False, "event_time_field": None}),
        (ExecuteCompactionOperator(task_id="e", table_path="s3://b/t", conn_id=NO_SPARK),
         {"instant": "20260102000000000"},
         {"command": "execute", "path": "s3://b/t", "instant": "20260102000000000", "engine": "local"}),
        (RollbackCompactionOperator(task_id="r", table_path="/t", conn_id=NO_SPARK),
         {"instant": "20260102000000000"},
         {"command": "rollback", "path": "/t", "instant": "20260102000000000"}),
        (SyncEventTimeThresholdOperator(task_id="c", table_path="/t", table="trips", database="lake",
                                        metastore_dir="/m", warehouse_dir="", conn_id=NO_SPARK),
         {},
         {"command": "sync-catalog", "path": "/t", "database": "lake", "table": "trips", "metastore_uri": None,
          "metastore_dir": "/m", "warehouse_dir": None}),
    ]


def test_every_operator_builds_an_argv_the_job_accepts():
    """Each operator's argv, as it hands it to spark-submit (``--result-file F <command> ...``),
    parsed by the Spark job's own parser, gives the values the operator was configured with."""
    from airflow_hudi_etc.contract import COMMANDS, job_argv
    from airflow_hudi_etc.operators.compaction import HudiEtcSparkJobOperator
    from airflow_hudi_etc.spark.jobs import parse_job_argv

    cases = _operator_cases()
    assert {type(op) for op, _, _ in cases} == set(HudiEtcSparkJobOperator.__subclasses__())  # every operator
    for op, resolved, want in cases:
        assert COMMANDS[op.command].spark, op.command  # a command the Spark job runs
        result_file, args, _ = parse_job_argv(job_argv("/tmp/r.json", op.job_argv(**resolved)))
        assert result_file == "/tmp/r.json"
        assert {k: getattr(args, k) for k in want} == want, op.task_id


def test_an_option_renamed_in_the_contract_fails_the_operators_argv(monkeypatch):
    """The test above can fail: with ``--data-latency`` renamed in the definitions, the schedule
    operator's argv is refused where it is built (and a stale hand-written one by the job's parser)."""
    import dataclasses

    from airflow_hudi_etc import contract
    from airflow_hudi_etc.hudi.errors import ArgumentError
    from airflow_hudi_etc.spark.jobs import parse_job_argv

    c = contract.COMMANDS["schedule"]
    renamed = tuple(dataclasses.replace(a, name="latency") if a.name == "data_latency" else a for a in c.args)
    monkeypatch.setitem(contract.COMMANDS, "schedule", dataclasses.replace(c, args=renamed))
    op, resolved, _ = _operator_cases()[0]
    with pytest.raises(ValueError, match="data_latency"):
        op.job_argv(**resolved)
    with pytest.raises(ArgumentError, match="required: --latency"):
        parse_job_argv(["--result-file", "/r", "schedule", "--path", "/t", "--data-latency", "2h"])


def test_spark_resource_arguments_are_first_class_and_templated(table, monkeypatch):
    """Issue 24 §5: the arguments SparkSubmitOperator users know, and the connection ids, rendered
    from params in a dag.test() run, reach the spark-submit command the provider's hook builds."""
    from airflow.sdk import DAG

    submitted = airflow_env.jobs_in_process(monkeypatch)
    monkeypatch.setenv("AIRFLOW_CONN_SPARK_TEST_CLUSTER", '{"conn_type": "spark", "host": "local[1]"}')
    plan = schedule(str(table), data_latency=at.LATENCY, compaction_time=at.COMPACTION_TIME)
    params = {"instant": plan.instant, "mem": "3g", "n": "2", "conn": "spark_test_cluster", "hudi": "hudi_default"}
    with DAG("hudi_etc_test_resources", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
             params=params) as dag:
        ExecuteCompactionOperator(
            task_id="execute", table_path=str(table), instant="{{ params.instant }}", conn_id="{{ params.conn }}",
            hudi_conn_id="{{ params.hudi }}", executor_memory="{{ params.mem }}", driver_memory="1g",
            executor_cores="{{ params.n }}", num_executors="{{ params.n }}", total_executor_cores=4,
            archives="env.tar.gz#environment", jars="a.jar", packages="org.x:y:1.0", name="{{ dag.dag_id }}-x",
            deploy_mode="client", py_files="none", spark_submit_kwargs={"verbose": "{{ params.n == '2' }}"},
            hoodie_conf={"hoodie.write.lock.wait_time_ms": "{{ params.n }}000"})
    airflow_env.register(dag)
    dr = dag.test()
    assert str(dr.state) == "success"
    [job] = submitted
    cmd = job["cmd"]

    def opt(flag):
        return cmd[cmd.index(flag) + 1]

    assert opt("--master") == "local[1]"  # the templated connection id
    assert (opt("--executor-memory"), opt("--driver-memory"), opt("--executor-cores"), opt("--num-executors"),
            opt("--total-executor-cores")) == ("3g", "1g", "2", "2", "4")
    assert (opt("--archives"), opt("--jars"), opt("--packages"), opt("--name"), opt("--deploy-mode")) == (
        "env.tar.gz#environment", "a.jar", "org.x:y:1.0", "hudi_etc_test_resources-x", "client")
    assert "--verbose" in cmd
    assert json.loads(job["env"]["HUDI_ETC_HOODIE_CONF"]) == {"hoodie.write.lock.wait_time_ms": "2000"}  # templated
    assert job["argv"][:3] == ["execute", "--path", str(table)]
    with pytest.raises(InvalidInputError, match="num_executors 'many'"):
        ExecuteCompactionOperator(task_id="e", table_path=str(table), num_executors="many").spark_submit_args()


# ------------------------------------------------------------------------------ hook, provider, DAG files
def test_hook_storage_options_from_a_hudi_connection_never_logged(table, monkeypatch, capfd):
    from airflow_hudi_etc.hooks.hudi import HudiTableHook, describe_storage_options

    secret = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
    monkeypatch.setenv("AIRFLOW_CONN_HUDI_TEST", json.dumps({
        "conn_type": "hudi", "login": "AKIAIOSFODNN7EXAMPLE", "password": secret, "host": "http://127.0.0.1:9000",
        "extra": {"region_name": "eu-west-1", "token": "session-token-value",
                  "storage_options": {"client_kwargs": {"verify": False}, "auto_mkdir": False}}}))
    capfd.readouterr()
    hook = HudiTableHook("hudi_test")
    opts = hook.get_storage_options()
    assert opts == {"key": "AKIAIOSFODNN7EXAMPLE", "secret": secret, "endpoint_url": "http://127.0.0.1:9000",
                    "token": "session-token-value",
                    "client_kwargs": {"region_name": "eu-west-1", "verify": False}, "auto_mkdir": False}
    assert describe_storage_options(opts) == {**opts, "key": "***", "secret": "***", "token": "***"}
    logged = "".join(capfd.readouterr())  # Airflow's logging goes to the process's stdout
    assert secret not in logged and "session-token-value" not in logged
    assert "'endpoint_url': 'http://127.0.0.1:9000'" in logged and "'secret': '***'" in logged
    # local table: the options reach the table's filesystem layer, the timeline reads work
    local = HudiTableHook(storage_options={"auto_mkdir": False})
    assert local.load_table(str(table)).storage.options == {"auto_mkdir": False}
    assert local.check(str(table), threshold_ms=at.THRESHOLD_MS)["state"] == "ready"
    assert local.last_threshold(str(table)) == {"threshold_ms": None, "threshold": None, "instant": None}


def test_hook_default_connection_may_be_absent_others_may_not(table):
    from airflow.sdk.exceptions import AirflowNotFoundException

    from airflow_hudi_etc.hooks.hudi import HudiTableHook

    hook = HudiTableHook()  # hudi_default, not defined here: the filesystem's defaults
    assert (hook.hudi_conn_id, hook.get_storage_options()) == ("hudi_default", {})
    assert hook.check(str(table), threshold_ms=at.THRESHOLD_MS)["state"] == "ready"
    with pytest.raises(AirflowNotFoundException):
        HudiTableHook("hudi_etc_no_such_connection").get_storage_options()


def test_connection_test_button_reads_the_table(table, tmp_path, monkeypatch):
    """Issue 24 §5: ``Connection.test_connection()`` (what the form's Test button runs) builds our
    hook from the registered connection type and reads the table named in the extra."""
    from airflow.models.connection import Connection

    def conn(**extra):
        c = Connection(conn_id="hudi_form", conn_type="hudi", extra=json.dumps(extra))
        monkeypatch.setenv("AIRFLOW_CONN_HUDI_FORM", c.as_json())  # as the API server exposes the form's values
        return c

    ok, message = conn(table_path=str(table)).test_connection()
    assert ok, message
    assert message.startswith(f"read table 'trips' at {table}: ") and "last published threshold None" in message
    ok, message = conn(table_path=str(tmp_path / "absent")).test_connection()
    assert not ok and message.startswith("TableNotFoundError")
    ok, message = conn(storage_options={"auto_mkdir": False}).test_connection()
    assert not ok and "set the extra 'table_path'" in message
    ok, message = conn(table_path=str(table), storage_options="not an object").test_connection()
    assert not ok and message.startswith("InvalidInputError") and "storage_options" in message


def test_provider_is_registered():
    from airflow.providers_manager import ProvidersManager

    pm = ProvidersManager()
    info = pm.providers["airflow-hudi-etc"]
    assert info.version == "0.1.0"
    assert info.data["name"] == "Apache Hudi event-time compaction"
    from airflow.sdk.providers_manager_runtime import ProvidersManagerTaskRuntime

    hooks = ProvidersManagerTaskRuntime().hooks
    assert hooks["hudi"].hook_class_name == "airflow_hudi_etc.hooks.hudi.HudiTableHook"
    assert hooks["hudi"].connection_id_attribute_name == "hudi_conn_id"


def test_example_dags_import_without_errors_and_start_safely():
    """Parsed as the DAG processor does; no 300-run catch-up on first unpause; settings are params
    (run time), not parse-time environment variables; the task group's wiring."""
    from airflow.dag_processing.dagbag import DagBag
    from airflow.sdk import AssetAlias

    bag = DagBag(dag_folder=str(airflow_env.EXAMPLE_DAGS))
    assert bag.import_errors == {}
    assert set(bag.dags) == {"hudi_etc_nightly", "hudi_etc_alerting", "hudi_etc_ro_consumer"}
    for dag in bag.dags.values():
        assert dag.catchup is False, dag.dag_id
        assert dag.start_date <= pendulum.now("UTC"), dag.dag_id
    nightly, alerting = bag.dags["hudi_etc_nightly"], bag.dags["hudi_etc_alerting"]
    assert [t.task_id for t in nightly.topological_sort()] == [
        "compaction.wait", "compaction.schedule", "compaction.execute", "compaction.sync", "compaction.check"]
    assert nightly.max_active_runs == 1
    wait, execute = nightly.get_task("compaction.wait"), nightly.get_task("compaction.execute")
    assert wait.mode == "reschedule" and wait.on_failure_callback  # its timeout alerts too
    assert (wait.table_path, wait.data_latency) == ("{{ params.table_path }}", "{{ params.data_latency }}")
    assert nightly.get_task("compaction.schedule").data_latency == "{{ params.data_latency }}"
    assert (execute.schedule_task_id, execute.run_oldest_pending) == ("compaction.schedule", False)
    assert execute.outlets == [AssetAlias("hudi_etc_ro_fresh")]
    assert nightly.get_task("compaction.sync").trigger_rule == "none_failed"
    check = nightly.get_task("compaction.check")
    assert (check.trigger_rule, check.sync_task_id, execute.adopt_pending_plan) == (
        "none_failed", "compaction.sync", True)
    # one run of the table at a time: every task in one pool (templated path: named by DAG and group)
    assert {t.pool for t in nightly.tasks} == {"hudi_etc_hudi_etc_nightly.compaction"}
    for t in list(nightly.tasks) + list(alerting.tasks):
        if hasattr(t, "hudi_conn_id"):
            assert t.hudi_conn_id == "hudi_default", t.task_id
        if hasattr(t, "conn_id"):
            assert t.conn_id == "spark_default", t.task_id
    assert alerting.get_task("wait_for_compaction_window").deferrable is True
    assert alerting.get_task("rollback_failed_execution").trigger_rule == "one_failed"
    assert alerting.get_task("rollback_failed_execution").upstream_task_ids == {"execute_compaction"}
    consumer = bag.dags["hudi_etc_ro_consumer"]
    alias, watched = consumer.timetable.asset_condition.objects
    assert alias == AssetAlias("hudi_etc_ro_fresh") and watched.uri.startswith("hudi-etc+file:/")
    assert [w.trigger.serialize()[0] for w in watched.watchers] == [
        "airflow_hudi_etc.triggers.event_time.EventTimeThresholdTrigger"]


def test_task_group_factory_one_set_of_arguments():
    from airflow.sdk import DAG

    from airflow_hudi_etc.task_groups import event_time_compaction

    with DAG("tg", schedule=None) as dag:
        group = event_time_compaction(table_path="/t", data_latency="90m", group_id="etc", conf={"a": "b"},
                                      sensor_kwargs={"timeout": 60}, execute_kwargs={"retries": 3})
    assert group.group_id == "etc"
    assert [t.task_id for t in dag.topological_sort()] == ["etc.wait", "etc.schedule", "etc.execute", "etc.check"]
    wait, sched_, execute, check = (dag.get_task(f"etc.{n}") for n in ("wait", "schedule", "execute", "check"))
    assert wait.data_latency == sched_.data_latency == check.data_latency == "90m"
    assert {t.table_path for t in (wait, sched_, execute, check)} == {"/t"}
    assert check.sync_task_id is None and check.trigger_rule == "none_failed"
    assert (wait.mode, check.mode) == ("reschedule", "reschedule")  # no pool slot held while waiting
    # the table's pool (shared by every DAG naming the table), later tasks first
    assert {(t.pool, t.weight_rule) for t in dag.tasks} == {("hudi_etc_t_714c4189", "upstream")}
    assert (wait.timeout, execute.retries, execute.schedule_task_id) == (60, 3, "etc.schedule")
    assert sched_.conf == execute.conf == {"a": "b"}


# ------------------------------------------------------------------------------ on_kill (real spark-submit)
DRIVER = """
import os, sys, time
fd = os.open(sys.argv[-1], os.O_WRONLY)  # the test reads this FIFO; it sees EOF when we are gone
os.write(fd, (str(os.getpid()) + "\\n").encode())
time.sleep(600)
"""


@pytest.mark.spark
def test_on_kill_ends_spark_submit_and_the_pyspark_driver(tmp_path):
    """spark-submit runs a Python driver (a child of its JVM); on_kill must end both. The driver
    holds the write end of a FIFO: EOF on the read end means every holder has exited."""
    fifo = tmp_path / "driver.fifo"
    os.mkfifo(fifo)
    app = tmp_path / "driver.py"
    app.write_text(DRIVER)
    op = SyncEventTimeThresholdOperator(task_id="sync", table_path="/unused", table="t", application=str(app),
                                        conn_id="spark_default", conf={"spark.ui.enabled": "false"})
    failure, reader = [], {}

    def submit():
        try:
            op.run_job([str(fifo)], {})  # the driver gets the FIFO as its last argument
        except BaseException as e:  # noqa: BLE001 - recorded for the assertion below
            failure.append(e)

    def open_reader():
        reader["f"] = open(fifo, "rb", buffering=0)  # returns once the driver opened its end

    worker, opener = threading.Thread(target=submit), threading.Thread(target=open_reader)
    worker.start()
    opener.start()
    opener.join(180)
    if opener.is_alive():  # the driver never started: unblock the reader and report why
        open(fifo, "wb").close()
        opener.join()
        worker.join(60)
        pytest.fail(f"the driver never opened the FIFO: {failure}")
    f = reader["f"]
    driver_pid = None
    try:
        driver_pid = int(f.readline())
        op.on_kill()
        ready, _, _ = select.select([f], [], [], 120)
        assert ready and f.read() == b"", "the PySpark driver survived on_kill"
    finally:
        f.close()
        worker.join(120)
        if driver_pid is not None:
            try:
                os.kill(driver_pid, signal.SIGKILL)  # only reached alive if the assertion above failed
            except ProcessLookupError:
                pass
    assert not worker.is_alive()
    assert failure and "Cannot execute" in str(failure[0])


# ------------------------------------------------------------------------------ retry or fail fast (real spark-submit)
JOB_ERROR = """
import json, sys
args = sys.argv[1:]
result = args[args.index("--result-file") + 1]
code = args[-1]  # the test passes the error code as the table name
with open(result, "w") as f:
    json.dump({"error": {"code": code, "type": {"conflict": "InstantExistsError",
                                               "table_not_found": "TableNotFoundError"}[code],
                         "message": "reported by the job"}}, f)
sys.exit(2)
"""


@pytest.mark.spark
def test_job_errors_retry_or_fail_fast_in_a_dag_run(tmp_path, table):
    """A job reporting ``conflict`` (another writer) is retried; one reporting ``table_not_found``
    fails at once, retries notwithstanding. Real spark-submit runs a job that reports the error
    as jobs.py does (the error envelope in the result file, exit status 2)."""
    from airflow.sdk import DAG

    app = tmp_path / "job_error.py"
    app.write_text(JOB_ERROR)
    with DAG("hudi_etc_test_retry", schedule=None, start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
             params={"code": "conflict"}) as dag:
        SyncEventTimeThresholdOperator(task_id="sync", table_path=str(table), table="{{ params.code }}",
                                       application=str(app), conn_id="spark_default",
                                       conf={"spark.ui.enabled": "false"}, retries=1, retry_delay=0)
    airflow_env.register(dag)
    dr = dag.test()
    [ti] = dr.get_task_instances()
    assert (str(ti.state), ti.try_number) == ("failed", 2)  # tried twice
    dr = dag.test(run_conf={"code": "table_not_found"})
    [ti] = dr.get_task_instances()
    assert (str(ti.state), ti.try_number) == ("failed", 1)  # not retried
