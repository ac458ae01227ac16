"""Operators that run event-time compaction jobs through ``spark-submit``.

Each operator submits ``airflow_hudi_etc/spark/jobs.py`` with the Spark provider's ``SparkSubmitHook``
(connection ``spark_default`` unless told otherwise)::

    spark-submit [conf ...] <jobs.py> --result-file F <hudi-etc command> <args>

and returns the job's result JSON (written to ``F``, read back here) as its XCom. Errors the job
reports (``{"error": {"code", "type", "message"}}``) are raised again as the typed error of
:mod:`airflow_hudi_etc.hudi.errors`.

Retry safety, with as few JVM starts as possible (the table's timeline is read here first, in
this process, through :class:`~airflow_hudi_etc.hooks.hudi.HudiTableHook`):

* **schedule**: a pending plan for the same threshold (an earlier attempt made it) is reused,
  without Spark; a covered threshold (a backfill run) returns ``instant: null`` without Spark.
  If the job itself answers ``outcome: pending`` with ``pending_instant`` X and X's threshold is
  ours, X is the result.
* **execute**: a completed instant is reported (``status: "already completed"``) without Spark;
  an inflight one (a crashed or killed run) is rolled back by the job and executed again.
* **rollback**: only an inflight compaction has anything to undo; otherwise nothing is submitted.
* errors a retry cannot fix (no table, invalid input, unsafe path, unsupported table or feature,
  metadata table present: :data:`airflow_hudi_etc.failfast.NON_RETRYABLE_CODES`), raised here or
  reported by the job, fail the task at once (``AirflowFailException``); others (``conflict``, a
  failed spark-submit) are raised as they are and the task's ``retries`` apply.
* ``on_kill`` (task killed, ``execution_timeout``): spark-submit runs in its own session, and the
  whole process group — spark-submit's JVM *and* the local PySpark driver it started, which the
  provider's own ``on_kill`` leaves behind — is terminated, then killed.

A killed or failed ``execute`` leaves an inflight compaction, never a half-visible one: readers
ignore it until its commit, and the next ``execute`` (or ``RollbackCompactionOperator``) cleans up.

Metrics go to Airflow's ``Stats`` (``hudi_etc.<metric>``, tag ``table``): after execute
``threshold_lag_seconds``, ``remaining_log_files``, ``remaining_log_bytes``, ``pending_compactions``,
``execution_seconds``, ``logs_compacted``; after a catalog sync ``catalog_threshold_lag_seconds``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from airflow.providers.apache.spark.hooks.spark_submit import SparkSubmitHook
from airflow.sdk import BaseOperator, conf as airflow_conf
from airflow.sdk.exceptions import AirflowException, AirflowSkipException

from ..failfast import fail_fast

if TYPE_CHECKING:
    from airflow.sdk import Context


def job_script() -> str:
    """Path of the job file spark-submit runs (``airflow_hudi_etc/spark/jobs.py``)."""
    from ..spark import jobs

    return os.path.abspath(jobs.__file__)


def _stats():
    try:
        from airflow.sdk.observability.stats import Stats
    except ImportError:  # older Airflow
        from airflow.stats import Stats  # type: ignore[no-redef]
    return Stats


def emit_gauges(values: Mapping[str, Any], *, table: str | None, log=None) -> dict[str, float]:
    """``Stats.gauge("hudi_etc.<name>", value, tags={"table": table})`` for every numeric value;
    returns what was sent. Metrics never fail a task."""
    sent: dict[str, float] = {}
    try:
        stats = _stats()
        tags = {"table": table} if table else None
        for name, v in values.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            stats.gauge(f"hudi_etc.{name}", float(v), tags=tags)
            sent[name] = float(v)
    except Exception as e:  # pragma: no cover - a broken metrics backend
        if log is not None:
            log.warning("metrics not sent: %s", e)
    return sent


def _none_if_empty(v: Any) -> Any:
    return None if v is None or (isinstance(v, str) and v.strip() in ("", "None", "null")) else v


def _raise_job_error(err: Mapping[str, Any], cause: BaseException | None = None):
    from ..hudi.errors import error_from_envelope

    raise error_from_envelope(err) from cause


class ProcessGroupSparkSubmitHook(SparkSubmitHook):
    """``SparkSubmitHook`` whose spark-submit runs in a new session, so that :meth:`on_kill` can
    end the whole process group: the JVM and, in local/client mode, the PySpark driver process the
    JVM started (the base hook kills the JVM only and orphans the driver)."""

    kill_grace_seconds = 10.0

    def submit(self, application: str = "", **kwargs: Any) -> str | None:
        kwargs.setdefault("start_new_session", True)
        return super().submit(application, **kwargs)

    def _own_group(self) -> int | None:
        proc = getattr(self, "_submit_sp", None)
        if proc is None:
            return None
        try:
            pgid = os.getpgid(proc.pid)
        except ProcessLookupError:
            return None
        # only a group spark-submit leads (start_new_session): never our own
        return pgid if pgid == proc.pid and pgid != os.getpgid(0) else None

    def on_kill(self) -> None:
        pgid = self._own_group()
        proc = getattr(self, "_submit_sp", None)
        if pgid is not None:
            self.log.info("Terminating spark-submit process group %s", pgid)
            try:
                os.killpg(pgid, signal.SIGTERM)
            except ProcessLookupError:
                pgid = None
            if proc is not None:
                try:
                    proc.wait(timeout=self.kill_grace_seconds)
                except subprocess.TimeoutExpired:
                    pass
        super().on_kill()
        if pgid is not None:
            try:  # whatever is left of the group (a driver that ignored SIGTERM, Python workers)
                os.killpg(pgid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class HudiEtcSparkJobOperator(BaseOperator):
    """Base class: submit one ``hudi-etc`` command as a Spark job; XCom = its result JSON.

    :param table_path: the table's base path (templated).
    :param conn_id: Spark connection (master, deploy mode, ...); default ``spark_default``.
    :param conf: Spark configuration (templated), e.g. ``{"spark.executor.memory": "4g"}``.
    :param py_files: ``--py-files`` (templated). Default: a cached zip of the installed
        ``airflow_hudi_etc`` (:func:`airflow_hudi_etc.spark.shipping.package_zip`), so executors need not
        have it; ``"none"`` ships nothing; anything else is passed as given.
    :param application: the job file (templated); default the installed ``airflow_hudi_etc/spark/jobs.py``.
        Give a copy on HDFS/S3 for cluster deploy mode.
    :param env_vars: environment of spark-submit (templated; the provider maps it to the driver's
        environment on YARN/K8s).
    :param hoodie_conf: Hudi write settings for this run (templated), over those recorded on the
        table with ``hudi-etc configure --hoodie`` (e.g. the lock's ``hoodie.write.lock.*`` keys);
        passed to the job as ``$HUDI_ETC_HOODIE_CONF``.
    :param result_uri: directory (fsspec URI) for the result file, for cluster deploy mode where
        the driver cannot write to this machine; default a local temporary directory.
    :param hudi_conn_id: ``hudi`` connection for the reads done here (timeline checks, the result
        file on object storage); default ``hudi_default``, which may be absent.
    :param executor_memory, driver_memory, executor_cores, num_executors, total_executor_cores,
        archives, jars, packages, name, deploy_mode: as ``SparkSubmitOperator``'s (templated; passed
        to ``SparkSubmitHook`` when given; ``name`` defaults to ``hudi-etc-<command>-<task_id>``).
    :param spark_submit_kwargs: any further ``SparkSubmitHook`` arguments (``verbose``,
        ``proxy_user``, ``keytab``, ...; templated); the first-class arguments above win over it.
    :param table_tag: the ``table`` tag of the metrics (default: the table's name).
    :param openlineage_inject_parent_job_info, openlineage_inject_transport_info: as
        ``SparkSubmitOperator``'s: put this task's OpenLineage parent job / transport into the Spark
        job's ``spark.openlineage.*`` properties (default ``[openlineage] spark_inject_*``).

    OpenLineage (with the provider installed): each operator reports the table (namespace ``file``
    or ``<scheme>://<bucket>``, name its path) as input, and as output when it wrote to it: a plan
    made or reused (schedule), a compaction committed (execute; a skipped execute reports nothing),
    a rollback run; sync reports the catalog tables ``<database>.<table>_ro``/``_rt`` as outputs.
    """

    #: first-class ``SparkSubmitHook`` arguments (the names ``SparkSubmitOperator`` uses)
    SPARK_RESOURCE_ARGS = ("executor_memory", "driver_memory", "executor_cores", "num_executors",
                           "total_executor_cores", "archives", "jars", "packages", "name", "deploy_mode")
    template_fields: Sequence[str] = ("table_path", "conf", "py_files", "application", "env_vars", "hoodie_conf",
                                      "result_uri",
                                      "conn_id", "hudi_conn_id", "spark_submit_kwargs", *SPARK_RESOURCE_ARGS)
    template_fields_renderers = {"conf": "json", "env_vars": "json", "hoodie_conf": "json",
                                 "spark_submit_kwargs": "json"}
    ui_color = "#ffe6cc"
    command: str = ""

    def __init__(
        self,
        *,
        table_path: str,
        conn_id: str = "spark_default",
        conf: dict[str, Any] | None = None,
        py_files: str | None = None,
        application: str | None = None,
        env_vars: dict[str, Any] | None = None,
        hoodie_conf: dict[str, Any] | None = None,
        result_uri: str | None = None,
        hudi_conn_id: str | None = "hudi_default",
        spark_submit_kwargs: dict[str, Any] | None = None,
        table_tag: str | None = None,
        executor_memory: str | None = None,
        driver_memory: str | None = None,
        executor_cores: int | str | None = None,
        num_executors: int | str | None = None,
        total_executor_cores: int | str | None = None,
        archives: str | None = None,
        jars: str | None = None,
        packages: str | None = None,
        name: str | None = None,
        deploy_mode: str | None = None,
        openlineage_inject_parent_job_info: bool = airflow_conf.getboolean(
            "openlineage", "spark_inject_parent_job_info", fallback=False),
        openlineage_inject_transport_info: bool = airflow_conf.getboolean(
            "openlineage", "spark_inject_transport_info", fallback=False),
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.openlineage_inject_parent_job_info = openlineage_inject_parent_job_info
        self.openlineage_inject_transport_info = openlineage_inject_transport_info
        self._lineage_result: dict | None = None
        self.executor_memory = executor_memory
        self.driver_memory = driver_memory
        self.executor_cores = executor_cores
        self.num_executors = num_executors
        self.total_executor_cores = total_executor_cores
        self.archives = archives
        self.jars = jars
        self.packages = packages
        self.name = name
        self.deploy_mode = deploy_mode
        self.table_path = table_path
        self.conn_id = conn_id
        self.conf = conf
        self.py_files = py_files
        self.application = application
        self.env_vars = env_vars
        self.hoodie_conf = hoodie_conf
        self.result_uri = result_uri
        self.hudi_conn_id = hudi_conn_id
        self.spark_submit_kwargs = dict(spark_submit_kwargs or {})
        self.table_tag = table_tag
        self._spark_hook: ProcessGroupSparkSubmitHook | None = None

    # ------------------------------------------------------------------ helpers
    def hudi_hook(self):
        from ..hooks.hudi import HudiTableHook

        return HudiTableHook(self.hudi_conn_id)

    def spark_conf(self) -> dict[str, Any]:
        return dict(self.conf or {})

    def _result_location(self, context: Context | None) -> tuple[str, str | None]:
        """(result file, local temp dir to remove afterwards)."""
        if self.result_uri:
            ctx = context or {}
            run_id = re.sub(r"[^A-Za-z0-9_.=-]", "_", str(ctx.get("run_id") or "run"))
            ti = ctx.get("ti")
            attempt = getattr(ti, "try_number", None) or 0
            name = f"{self.dag_id or 'dag'}/{self.task_id}/{run_id}/try-{attempt}-{uuid.uuid4().hex}.json"
            return f"{str(self.result_uri).rstrip('/')}/{name}", None
        tmp = tempfile.mkdtemp(prefix=f"hudi-etc-{self.command}-")
        return os.path.join(tmp, "result.json"), tmp

    def _read_result(self, location: str) -> dict | None:
        from ..contract import read_result

        remote = "://" in location and not location.startswith("file://")
        return read_result(location, self.hudi_hook().get_storage_options() if remote else None, remove=True)

    def job_values(self, **resolved: Any) -> dict[str, Any]:
        """The argument values (by name, as :data:`airflow_hudi_etc.contract.COMMANDS` defines
        them) of this operator's command; ``resolved``: what ``execute`` worked out at run time."""
        raise NotImplementedError

    def job_argv(self, **resolved: Any) -> list[str]:
        """``<command> <args>`` for the job, built by the contract from :meth:`job_values`."""
        from ..contract import to_argv

        return to_argv(self.command, **self.job_values(**resolved))

    def shipping(self, conf: dict[str, Any], kwargs: dict[str, Any]) -> tuple[dict, str | None, dict | None]:
        """(conf, py_files, env_vars) with the package zip shipped (unless ``py_files`` is given,
        or ``"none"``) and the interpreters chosen for the connection's master and deploy mode by
        :func:`airflow_hudi_etc.spark.shipping.submit_settings` (nothing the user set is overridden)."""
        from ..spark.shipping import quiet_driver_env, submit_settings

        # the connection says where Spark runs: the hook resolves it when built
        resolved = getattr(ProcessGroupSparkSubmitHook(conn_id=self.conn_id, **{
            k: v for k, v in kwargs.items() if k in ("deploy_mode", "spark_binary")}), "_connection", None) or {}
        user_env = {str(k): str(v) for k, v in (self.env_vars or {}).items()}
        if self.hoodie_conf:  # checked here: a key that is no Hudi write setting fails the task before submitting
            from ..hudi.concurrency.write_config import ENV_CONF, check_keys

            user_env[ENV_CONF] = json.dumps(check_keys(self.hoodie_conf, "hoodie_conf"))
        s = submit_settings(resolved.get("master"), deploy_mode=resolved.get("deploy_mode"),
                            conf={str(k): str(v) for k, v in conf.items()}, env={**os.environ, **user_env},
                            py_files=self.py_files)
        quiet = quiet_driver_env(resolved.get("master"), deploy_mode=resolved.get("deploy_mode"),
                                 conf={**s["conf"], **{str(k): str(v) for k, v in conf.items()}},
                                 env={**os.environ, **user_env})
        conf = {**s["conf"], **conf}
        env_vars = {**s["env"], **quiet, **user_env} or None
        self.log.info("spark-submit to %s: --py-files %s; added %s", resolved.get("master"), s["py_files"],
                      {**s["conf"], **s["env"]})
        return conf, s["py_files"], env_vars

    def spark_submit_args(self) -> dict[str, Any]:
        """The ``SparkSubmitHook`` arguments besides conf, py_files, env_vars and the application's:
        ``spark_submit_kwargs``, then the first-class arguments that were given (rendered)."""
        out: dict[str, Any] = {"name": f"hudi-etc-{self.command}-{self.task_id}", **dict(self.spark_submit_kwargs or {})}
        for k in self.SPARK_RESOURCE_ARGS:
            v = _none_if_empty(getattr(self, k))
            if v is not None and k in ("executor_cores", "num_executors", "total_executor_cores"):
                try:
                    v = int(v)
                except (TypeError, ValueError):
                    from ..hudi.errors import InvalidInputError

                    raise InvalidInputError(f"{k} {v!r}: a whole number, please") from None
            if v is not None:
                out[k] = v
        return out

    def openlineage_conf(self, conf: dict[str, Any], context: Context | None) -> dict[str, Any]:
        """``conf`` with the OpenLineage parent job / transport properties injected, as the Spark
        provider's operator does (only those asked for; nothing when there is no task context)."""
        if not context or not (self.openlineage_inject_parent_job_info or self.openlineage_inject_transport_info):
            return conf
        from airflow.providers.common.compat.openlineage.utils.spark import (
            inject_parent_job_information_into_spark_properties,
            inject_transport_information_into_spark_properties,
        )

        if self.openlineage_inject_parent_job_info:
            conf = inject_parent_job_information_into_spark_properties(conf, context)
        if self.openlineage_inject_transport_info:
            conf = inject_transport_information_into_spark_properties(conf, context)
        return conf

    def lineage_writes(self, result: Mapping[str, Any]) -> bool:
        """Did this try write to the table (its result, as returned or pushed)?"""
        return False

    def lineage_outputs(self, result: Mapping[str, Any]) -> list:
        from ..assets import openlineage_dataset

        return [openlineage_dataset(self.table_path)] if self.lineage_writes(result) else []

    def get_openlineage_facets_on_complete(self, task_instance: Any = None):
        """OpenLineage (see the class docstring); None when the provider is not installed."""
        from ..assets import openlineage_dataset, operator_lineage

        result = self._lineage_result
        if result is None or result.get("status") == "nothing to execute":
            return operator_lineage()  # failed before a result, or skipped: nothing to report
        return operator_lineage([openlineage_dataset(self.table_path)], self.lineage_outputs(result))

    def run_job(self, args: list[str], context: Context | None = None) -> dict:
        """Submit ``jobs.py --result-file F <args>``; the job's result, or its typed error."""
        from ..contract import job_argv

        location, tmp = self._result_location(context)
        kwargs = self.spark_submit_args()
        conf, py_files, env_vars = self.shipping(self.openlineage_conf(self.spark_conf(), context), kwargs)
        hook = ProcessGroupSparkSubmitHook(
            conf=conf,
            conn_id=self.conn_id,
            py_files=py_files,
            application_args=job_argv(location, args),
            env_vars=env_vars,
            **kwargs,
        )
        self._spark_hook = hook
        try:
            started = time.monotonic()
            try:
                hook.submit(self.application or job_script())
            except AirflowException as e:
                result = self._read_result(location)
                if isinstance(result, dict) and "error" in result:
                    _raise_job_error(result["error"], e)
                raise
            result = self._read_result(location)
            if result is None:
                raise AirflowException(f"spark-submit succeeded but the job wrote no result to {location}")
            if "error" in result:
                _raise_job_error(result["error"])
            self.log.info("hudi-etc %s finished in %.1f s", self.command, time.monotonic() - started)
            result["spark_submitted"] = True
            return result
        finally:
            self._spark_hook = None
            if tmp:
                shutil.rmtree(tmp, ignore_errors=True)

    def on_kill(self) -> None:
        hook = self._spark_hook
        if hook is not None:
            hook.on_kill()

    def _table_tag(self, table) -> str | None:
        return self.table_tag or getattr(getattr(table, "config", None), "name", None)


class ScheduleEventTimeCompactionOperator(HudiEtcSparkJobOperator):
    """Plan an event-time compaction (``hudi-etc schedule``) for
    ``threshold = compaction_time − data_latency``.

    XCom: ``{instant, threshold, threshold_ms, reason, operations, compaction_time, state, covered,
    reused, spark_submitted}`` — ``instant`` is null when nothing was planned (``reason`` says why:
    covered, another plan pending, no log qualifies).

    :param data_latency: ``2h``, ``30m``, ``PT2H`` (templated).
    :param compaction_time: ISO-8601 (templated); default the run's ``data_interval_end``.
    :param link_mode: ``auto`` | ``copy`` | ``symlink``: how remaining logs are re-exposed.
    :param exact_split: records after the threshold stay out of the base file.
    :param event_time_field: event-time column for tables whose properties name none.
    """

    template_fields: Sequence[str] = (*HudiEtcSparkJobOperator.template_fields, "data_latency", "compaction_time",
                                      "link_mode", "event_time_field")
    command = "schedule"

    def __init__(self, *, data_latency: str, compaction_time: str | None = None, link_mode: str = "auto",
                 exact_split: bool = False, event_time_field: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_latency = data_latency
        self.compaction_time = compaction_time
        self.link_mode = link_mode
        self.exact_split = exact_split
        self.event_time_field = event_time_field

    def job_values(self, *, compaction_time: str) -> dict[str, Any]:
        return {"path": self.table_path, "data_latency": str(self.data_latency), "compaction_time": compaction_time,
                "link_mode": self.link_mode, "exact_split": bool(self.exact_split),
                "event_time_field": _none_if_empty(self.event_time_field)}

    @fail_fast
    def execute(self, context: Context) -> dict:
        from ..compaction.times import parse_duration
        from ..hooks.hudi import event_time_check
        from ..hudi.errors import InvalidInputError
        from ..sensors.event_time import threshold_for

        if self.link_mode not in ("auto", "copy", "symlink"):
            raise InvalidInputError(f"link mode {self.link_mode!r}: use auto, copy or symlink")
        parse_duration(str(self.data_latency))
        ct, threshold_ms = threshold_for(_none_if_empty(self.compaction_time), self.data_latency, context)
        hook = self.hudi_hook()
        table = hook.load_table(self.table_path)
        pre = event_time_check(table, threshold_ms=threshold_ms)
        base = {"threshold": pre["threshold"], "threshold_ms": threshold_ms, "compaction_time": ct.isoformat(),
                "state": pre["state"], "covered": pre["state"] == "covered", "reused": False,
                "spark_submitted": False, "operations": 0}
        if pre["state"] == "resume":
            self.log.info("reusing compaction %s planned for this threshold by an earlier attempt", pre["pending_plan"])
            self._lineage_result = {**base, **_reused(table, pre)}
            return self._lineage_result
        if pre["state"] != "ready":
            self.log.info("not scheduling: %s", pre["message"])
            self._lineage_result = {**base, "instant": None, "reason": pre["reason"]}
            return self._lineage_result
        res = self.run_job(self.job_argv(compaction_time=ct.isoformat()), context)
        if res.get("threshold_ms") not in (None, threshold_ms):
            raise AirflowException(f"the job planned threshold {res.get('threshold_ms')}, expected {threshold_ms}")
        out = {**base, **res}
        if res.get("instant") is None and res.get("outcome") == "pending":
            # lost a race with a retry of ourselves (or another scheduler with our threshold): the
            # same one decision (plan_decision, through event_time_check) says whether it is ours
            table = hook.load_table(self.table_path)
            again = event_time_check(table, threshold_ms=threshold_ms)
            if again["state"] == "resume":
                out.update(_reused(table, again))
        self.log.info("schedule: instant %s (%s)", out.get("instant"), out.get("reason"))
        self._lineage_result = out
        return out

    def lineage_writes(self, result: Mapping[str, Any]) -> bool:
        return bool(result.get("instant"))  # a plan on the timeline (made by this try or an earlier one)


def _reused(table, check: Mapping[str, Any]) -> dict[str, Any]:
    """The schedule XCom fields for a pending plan that already carries this run's threshold
    (``check``: an ``event_time_check`` answer in state ``resume``)."""
    from ..hooks.hudi import pending_plans

    plan = next(p for p in pending_plans(table) if p["instant"] == check["pending_plan"])
    return {"instant": plan["instant"], "reason": "already scheduled", "reused": True,
            "operations": plan["operations"] or 0}


def _scheduled_instant(op: BaseOperator, context: Context) -> tuple[str | None, str]:
    """The instant a schedule task of this run planned: ``op.schedule_task_id``, else every upstream
    :class:`ScheduleEventTimeCompactionOperator` (direct or not)."""
    ids = [op.schedule_task_id] if op.schedule_task_id else []
    if not ids and op.has_dag():
        ids = sorted(t.task_id for t in op.get_flat_relatives(upstream=True)
                     if isinstance(t, ScheduleEventTimeCompactionOperator))
    ti = context.get("ti") if hasattr(context, "get") else None
    nothing = []
    for task_id in ids:
        x = ti.xcom_pull(task_ids=task_id) if ti is not None else None
        if isinstance(x, Mapping) and x.get("instant"):
            return str(x["instant"]), f"XCom of {task_id}"
        if isinstance(x, Mapping):
            nothing.append(f"{task_id} planned nothing: {x.get('reason')}")
    return None, "; ".join(nothing) or "no schedule XCom"


class ExecuteCompactionOperator(HudiEtcSparkJobOperator):
    """Execute a planned compaction (``hudi-etc execute``). XCom: the job's metrics (``status``:
    ``completed`` / ``already completed`` / ``nothing to execute``, ``instant``, ``threshold``,
    ``threshold_ms``, logs compacted/remaining, ...) plus ``freshness`` (the table's metrics after).

    Which compaction: ``instant`` when given, else the one this run's schedule task planned (the
    ``instant`` in the XCom of ``schedule_task_id``, default: the upstream schedule task(s) of this
    DAG). When that task planned nothing (covered, another plan pending, no log qualifies), the
    task reports ``nothing to execute`` (XCom) and is **skipped**, so no asset event says the view
    got fresher. It never picks up a plan another run made, unless ``run_oldest_pending=True``
    (any oldest pending plan) or ``adopt_pending_plan=True``: the oldest pending compaction is
    executed when it is *ours and safe* — an event-time plan of this provider (it carries a
    threshold; a Java compactor's plan is not) that is still ``requested`` (an inflight one may be
    executing in another run right now: left alone). Whether the run then holds its threshold is
    for :class:`~airflow_hudi_etc.sensors.freshness.EventTimeFreshnessSensor` to say.

    Assets: after a completed compaction (also one a previous try committed), every outlet that
    is this table's asset (:func:`airflow_hudi_etc.assets.table_asset`) gets an asset event whose
    ``extra`` holds the threshold, the instant and the figures; every ``AssetAlias`` outlet gets
    an event for this table's asset (for DAGs whose table path is only known at run time). An
    outlet that is the asset of another table is refused before anything runs.

    :param instant: the compaction to execute (templated).
    :param schedule_task_id: task whose XCom names the instant.
    :param run_oldest_pending: with no instant from the argument or a schedule task, execute the
        oldest pending compaction (whoever planned it).
    :param java_executes: (javasim, finding 3) ``True``: Java's inline/async compaction executes
        the plan; the task waits for C's commit (poking every ``java_poke_seconds``, at most
        ``java_wait_seconds``) and verifies it, no Spark job. ``None`` (default): so where the table
        records ``hoodie.etc.java.compaction=on`` or its timeline shows Java compacting; where
        nobody recorded whether Java compacts (a table Java created), the task fails at once with
        the typed ``java_compaction`` error naming ``hudi-etc configure --java-compaction on|off``
        (no job submitted, no waiting). ``False``: our execute (refused where Java compacts or may).
    :param adopt_pending_plan: with no instant from the argument or a schedule task, execute the
        oldest pending compaction if it is a requested event-time plan (the task group sets it).
    """

    template_fields: Sequence[str] = (*HudiEtcSparkJobOperator.template_fields, "instant")
    command = "execute"

    def __init__(self, *, instant: str | None = None, schedule_task_id: str | None = None,
                 run_oldest_pending: bool = False, adopt_pending_plan: bool = False,
                 java_executes: bool | None = None, java_wait_seconds: float = 3600.0,
                 java_poke_seconds: float = 30.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.instant = instant
        self.schedule_task_id = schedule_task_id
        self.run_oldest_pending = run_oldest_pending
        self.java_executes = java_executes  # javasim (finding 3): Java executes our plans
        self.java_wait_seconds = java_wait_seconds
        self.java_poke_seconds = java_poke_seconds
        self.adopt_pending_plan = adopt_pending_plan

    def job_values(self, *, instant: str) -> dict[str, Any]:
        return {"path": self.table_path, "instant": instant}

    def resolve_instant(self, context: Context, hook) -> tuple[str | None, str]:
        inst = _none_if_empty(self.instant)
        if inst:
            return str(inst), "argument"
        inst, source = _scheduled_instant(self, context)
        if inst:
            return inst, source
        if self.run_oldest_pending or self.adopt_pending_plan:
            plans = hook.pending_plans(self.table_path)
            if plans and self.run_oldest_pending:
                return plans[0]["instant"], "oldest pending compaction"
            if plans and plans[0]["threshold_ms"] is not None and plans[0]["state"] == "requested":
                p = plans[0]
                return p["instant"], f"adopted pending event-time plan (threshold {p['threshold']}); {source}"
            if plans:
                source += f"; pending compaction {plans[0]['instant']} not adopted ({plans[0]['state']}" + (
                    ", not an event-time plan)" if plans[0]["threshold_ms"] is None else ")")
        return None, source

    def _asset_outlets(self) -> tuple[list, list]:
        """(this table's asset outlets, AssetAlias outlets); another table's asset is an error."""
        from ..assets import asset_uri, is_table_asset
        from ..hudi.errors import InvalidInputError

        mine, aliases = [], []
        uri = asset_uri(self.table_path)
        for o in self.outlets or []:
            if type(o).__name__ == "AssetAlias":
                aliases.append(o)
            elif is_table_asset(o):
                if o.uri != uri:
                    raise InvalidInputError(f"outlet {o.uri} is not the asset of table {self.table_path} ({uri})")
                mine.append(o)
        return mine, aliases

    def _emit_asset_events(self, context: Context, result: dict, assets: list, aliases: list) -> list[str]:
        from ..assets import event_extra, table_asset

        events = context.get("outlet_events") if hasattr(context, "get") else None
        if events is None or not (assets or aliases):
            return []
        extra = event_extra(result, self.table_path)
        for a in assets:
            events[a].extra.update(extra)
        for alias in aliases:
            events[alias].add(table_asset(path=self.table_path), extra=extra)
        return sorted({a.uri for a in assets} | ({table_asset(path=self.table_path).uri} if aliases else set()))

    @fail_fast
    def execute(self, context: Context) -> dict:
        from ..compaction.execution import execute as execute_locally
        from ..compaction.java_compaction import check_execute
        from ..hooks.hudi import compaction_state
        from ..hudi.errors import InvalidTimelineError

        assets, aliases = self._asset_outlets()
        hook = self.hudi_hook()
        instant, source = self.resolve_instant(context, hook)
        table = hook.load_table(self.table_path)
        if instant is None:
            self.log.info("nothing to execute: this run scheduled no compaction (%s)", source)
            result = {"instant": None, "status": "nothing to execute", "spark_submitted": False}
        else:
            state = compaction_state(table, instant)
            self.log.info("compaction %s (%s) is %s", instant, source, state)
            if state is None:
                raise InvalidTimelineError(f"no compaction {instant} on the timeline of {self.table_path}")
            if state == "completed":  # a retry after the commit: report it, nothing to run
                result = {**execute_locally(table.storage, instant=instant), "spark_submitted": False}
            elif wait_for_java(self, table):  # javasim (finding 3): Java's compaction executes it
                result = {**await_java_execution(table.storage, instant, self.java_wait_seconds,
                                                 self.java_poke_seconds, log=self.log), "spark_submitted": False}
            else:  # refused here, typed, before a job is submitted: Java compacts, or nobody recorded whether
                check_execute(table)
                result = self.run_job(self.job_argv(instant=instant), context)
        result["instant_source"] = source
        fresh = hook.metrics(self.table_path)
        result["freshness"] = {k: fresh.get(k) for k in (
            "threshold", "threshold_ms", "threshold_lag_seconds", "remaining_log_files", "remaining_log_bytes",
            "min_event_time", "pending_compactions", "last_compaction_instant")}
        gauges = {k: fresh.get(k) for k in ("threshold_lag_seconds", "remaining_log_files", "remaining_log_bytes")}
        gauges["pending_compactions"] = len(fresh.get("pending_compactions") or [])
        gauges["pending_plan_age_seconds"] = fresh.get("pending_plan_age_seconds")  # None (skipped) when none
        if result.get("status") == "completed":
            gauges["execution_seconds"] = result.get("execution_seconds")
            gauges["logs_compacted"] = result.get("logs_compacted")
            gauges["planning_seconds"] = result.get("planning_seconds")
            gauges["link_bytes_written"] = result.get("link_bytes_written")
        result["metrics_sent"] = emit_gauges(gauges, table=self.table_tag or fresh.get("table"), log=self.log)
        self._lineage_result = result
        if instant is None:
            ti = context.get("ti") if hasattr(context, "get") else None
            if ti is not None:  # the report stays readable although the task is skipped
                ti.xcom_push(key="return_value", value=result)
            raise AirflowSkipException(f"nothing to execute: this run scheduled no compaction ({source})")
        result["asset_events"] = self._emit_asset_events(context, result, assets, aliases)
        return result

    def lineage_writes(self, result: Mapping[str, Any]) -> bool:
        return result.get("status") in ("completed", "already completed")


# ---- javasim (finding 3): "Java executes our plans" -------------------------------------------
def wait_for_java(op: "ExecuteCompactionOperator", table) -> bool:
    """Whether the execute task lets Java's compaction execute the plan (see ``java_executes``)."""
    from ..compaction.java_compaction import java_compacts

    return op.java_executes if op.java_executes is not None else java_compacts(table)


def await_java_execution(storage, instant: str, wait_seconds: float, poke_seconds: float, *, log=None,
                         clock=time.monotonic, sleep=time.sleep) -> dict:
    """Wait until Java committed compaction ``instant`` and verify the commit
    (:func:`~airflow_hudi_etc.compaction.java_compaction.java_execution`); a typed error after
    ``wait_seconds``."""
    from ..compaction.java_compaction import java_execution
    from ..hudi.errors import JavaExecutionPendingError

    deadline = clock() + wait_seconds
    while True:
        r = java_execution(storage, instant=instant)
        if r["status"] == "completed":
            return r
        if clock() >= deadline:
            raise JavaExecutionPendingError(
                f"compaction {instant} is still {r['state']} after {wait_seconds:.0f} s of waiting for Java to execute "
                f"it: is a Java writer with inline/async compaction running on the table?")
        if log is not None:
            log.info("compaction %s is %s: waiting for Java's compaction", instant, r["state"])
        sleep(poke_seconds)


class RollbackCompactionOperator(HudiEtcSparkJobOperator):
    """Undo a failed or killed execution (``hudi-etc rollback``): its files go, the plan is requested
    again. Meant for ``trigger_rule="one_failed"`` after an execute task.

    :param instant: the compaction (or pending deltacommit) to roll back (templated). Default: the
        instant in the XCom of ``schedule_task_id`` (default: the upstream schedule task(s)), else
        the inflight compaction; nothing inflight → nothing is submitted.
    """

    template_fields: Sequence[str] = (*HudiEtcSparkJobOperator.template_fields, "instant")
    command = "rollback"

    def __init__(self, *, instant: str | None = None, schedule_task_id: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.instant = instant
        self.schedule_task_id = schedule_task_id

    def job_values(self, *, instant: str) -> dict[str, Any]:
        return {"path": self.table_path, "instant": instant}

    @fail_fast
    def execute(self, context: Context) -> dict:
        from ..hooks.hudi import pending_plans

        hook = self.hudi_hook()
        table = hook.load_table(self.table_path)
        explicit = _none_if_empty(self.instant)
        instant, source = (str(explicit), "argument") if explicit else _scheduled_instant(self, context)
        if instant is None:
            instant = next((p["instant"] for p in pending_plans(table) if p["state"] == "inflight"), None)
            source = "inflight compaction"
        base = {"instant": instant, "instant_source": source, "spark_submitted": False}
        self._lineage_result = out = self._rollback(table, instant, explicit, base, context)
        return out

    def _rollback(self, table, instant, explicit, base: dict, context: Context) -> dict:
        from ..hooks.hudi import compaction_state
        from ..hudi.errors import InvalidTimelineError

        if instant is None:
            return {**base, "status": "nothing to roll back"}
        state = compaction_state(table, instant)
        if state == "completed":
            if explicit:
                raise InvalidTimelineError(f"compaction {instant} is completed; it cannot be rolled back")
            return {**base, "status": "completed (nothing to roll back)"}
        if state == "requested":
            return {**base, "status": "requested", "files_removed": 0}
        if state is None and not explicit:
            return {**base, "status": "nothing to roll back"}
        return {**self.run_job(self.job_argv(instant=instant), context), "instant_source": base["instant_source"]}

    def lineage_writes(self, result: Mapping[str, Any]) -> bool:
        return bool(result.get("spark_submitted"))  # a rollback job ran (files removed, plan requested again)


class SyncEventTimeThresholdOperator(HudiEtcSparkJobOperator):
    """Publish the RO threshold in the Hive metastore (``hudi-etc sync-catalog``): registers
    ``<table>_ro`` / ``<table>_rt`` and sets ``hoodie.eventtime.*`` on ``<table>_ro``; never moves
    the threshold back. XCom: the sync result (``status``: ``updated`` / ``unchanged`` /
    ``no threshold yet``).

    :param database: Hive database (created when absent).
    :param table: base name of the catalog tables.
    :param metastore_uri: ``thrift://host:9083``; default an embedded Derby metastore in
        ``metastore_dir`` (on the driver's machine).
    :param metastore_dir: directory of the embedded Derby metastore.
    :param warehouse_dir: ``spark.sql.warehouse.dir``.
    """

    template_fields: Sequence[str] = (*HudiEtcSparkJobOperator.template_fields, "database", "table", "metastore_uri",
                                      "metastore_dir", "warehouse_dir")
    command = "sync-catalog"

    def __init__(self, *, table: str, database: str = "default", metastore_uri: str | None = None,
                 metastore_dir: str | None = None, warehouse_dir: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.database = database
        self.table = table
        self.metastore_uri = metastore_uri
        self.metastore_dir = metastore_dir
        self.warehouse_dir = warehouse_dir

    def job_values(self) -> dict[str, Any]:
        return {"path": self.table_path, "database": self.database, "table": self.table,
                **{k: _none_if_empty(getattr(self, k)) for k in ("metastore_uri", "metastore_dir", "warehouse_dir")}}

    def spark_conf(self) -> dict[str, Any]:
        conf = super().spark_conf()
        if not _none_if_empty(self.metastore_uri) and _none_if_empty(self.metastore_dir):
            # the driver JVM starts before the job: put derby.log next to the metastore, not in the cwd
            conf.setdefault("spark.driver.extraJavaOptions",
                            f"-Dderby.system.home={os.path.abspath(str(self.metastore_dir))}")
        return conf

    @fail_fast
    def execute(self, context: Context) -> dict:
        from ..spark.catalog import catalog_names

        catalog_names(self.database, self.table)
        result = self.run_job(self.job_argv(), context)
        from ..sensors.freshness import catalog_threshold_ms

        catalog_ms = catalog_threshold_ms(result)  # what the catalog holds now
        if catalog_ms is not None:
            lag = time.time() - catalog_ms / 1000
            result["metrics_sent"] = emit_gauges({"catalog_threshold_lag_seconds": lag},
                                                 table=self.table_tag or self.table, log=self.log)
        self.log.info("catalog sync: %s (%s)", result.get("status"), result.get("reason"))
        self._lineage_result = result
        return result

    def lineage_outputs(self, result: Mapping[str, Any]) -> list:
        from ..assets import catalog_datasets

        return catalog_datasets(self.database, self.table, _none_if_empty(self.metastore_uri))


__all__ = [
    "HudiEtcSparkJobOperator",
    "ProcessGroupSparkSubmitHook",
    "ScheduleEventTimeCompactionOperator",
    "ExecuteCompactionOperator",
    "RollbackCompactionOperator",
    "SyncEventTimeThresholdOperator",
    "emit_gauges",
    "job_script",
]
