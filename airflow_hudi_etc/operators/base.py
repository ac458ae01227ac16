"""The spark-submit plumbing the operators share: :class:`HudiEtcSparkJobOperator` submits
``airflow_hudi_etc/spark/jobs.py`` with the Spark provider's ``SparkSubmitHook`` (connection
``spark_default`` unless told otherwise)::

    spark-submit [conf ...] <jobs.py> --result-file F <hudi-etc command> <args>

and returns the job's result JSON (written to ``F``, read back here). Errors the job reports
(``{"error": {"code", "type", "message"}}``) are raised again as the typed error of
:mod:`airflow_hudi_etc.hudi.errors`.

:class:`ProcessGroupSparkSubmitHook` runs spark-submit in its own session, so that ``on_kill``
(task killed, ``execution_timeout``) ends the whole process group — spark-submit's JVM *and* the
local PySpark driver it started, which the provider's own ``on_kill`` leaves behind — terminated,
then killed. :func:`emit_gauges` sends the operators' metrics to Airflow's ``Stats``.
"""

from __future__ import annotations

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
from airflow.sdk.exceptions import AirflowException

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


def none_if_empty(v: Any) -> Any:
    """None for an unset templated value (None, or rendered as empty, ``None`` or ``null``)."""
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
            from ..contract import hoodie_conf_env

            user_env.update(hoodie_conf_env(self.hoodie_conf, "hoodie_conf"))
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
            v = none_if_empty(getattr(self, k))
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


__all__ = ["HudiEtcSparkJobOperator", "ProcessGroupSparkSubmitHook", "emit_gauges", "job_script", "none_if_empty"]
