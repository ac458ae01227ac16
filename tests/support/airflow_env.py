"""Environment of the Airflow tests: a private AIRFLOW_HOME, the example DAGs as the DAG folder,
spark_default on local[2], the venv's spark-submit first on PATH.

Imported by every ``test_airflow_*`` module *before* anything imports Airflow (Airflow reads its
configuration once, at import).
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

from paths import REPO

EXAMPLE_DAGS = REPO / "example_dags"
VENV_BIN = str(Path(sys.executable).parent)


def _configure() -> str:
    home = os.environ.get("HUDI_ETC_TEST_AIRFLOW_HOME")
    if home:
        return home
    if "airflow" in sys.modules:
        raise RuntimeError("airflow was imported before tests/support/airflow_env.py could configure it")
    home = tempfile.mkdtemp(prefix="hudi-etc-airflow-")
    atexit.register(shutil.rmtree, home, True)
    os.environ.update({
        "HUDI_ETC_TEST_AIRFLOW_HOME": home,
        "AIRFLOW_HOME": home,
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(EXAMPLE_DAGS),
        "AIRFLOW_CONN_SPARK_DEFAULT": '{"conn_type": "spark", "host": "local[2]"}',
        "PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", ""),
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_LOCAL_IP": "127.0.0.1",
    })
    return home


AIRFLOW_HOME = _configure()
# Airflow's logging setup puts the root logger at INFO; py4j then logs "Closing down clientserver
# connection" from a finalizer at interpreter exit, after pytest closed the captured streams
logging.getLogger("py4j").setLevel(logging.WARNING)
_migrated = False


def migrate() -> None:
    """``airflow db migrate`` once per session (in process: Airflow is already imported)."""
    global _migrated
    if _migrated:
        return
    from airflow.utils.db import initdb

    initdb()
    _migrated = True


def example_dag(dag_id: str):
    """A DAG of ``example_dags/``, parsed now (the environment decides its settings)."""
    migrate()
    from airflow.dag_processing.dagbag import DagBag

    bag = DagBag(dag_folder=str(EXAMPLE_DAGS))
    assert not bag.import_errors, bag.import_errors
    return bag.get_dag(dag_id)


def register(dag) -> None:
    """Serialize a DAG built inside a test so that ``dag.test()`` can run it (it must be known to
    the metadata DB, as if it lived in the DAG folder)."""
    migrate()
    from airflow.dag_processing.bundles.manager import DagBundlesManager
    from airflow.dag_processing.dagbag import DagBag, sync_bag_to_db

    DagBundlesManager().sync_bundles_to_db()  # the DAG row refers to its bundle's row
    empty = tempfile.mkdtemp(prefix="hudi-etc-dags-")
    bag = DagBag(dag_folder=empty)
    bag.bag_dag(dag)
    sync_bag_to_db(bag, "dags-folder", None)
    shutil.rmtree(empty, ignore_errors=True)


def xcom(dr, task_id: str):
    """The return value a task of DAG run ``dr`` pushed."""
    from airflow.models.xcom import XComModel
    from airflow.utils.session import create_session

    with create_session() as s:
        row = (s.query(XComModel).filter(XComModel.dag_id == dr.dag_id, XComModel.run_id == dr.run_id,
                                         XComModel.task_id == task_id, XComModel.key == "return_value").one_or_none())
        return None if row is None else row.value


def reschedules(dr, task_id: str) -> int:
    from airflow.models.taskreschedule import TaskReschedule
    from airflow.models.taskinstance import TaskInstance
    from airflow.utils.session import create_session

    with create_session() as s:
        return (s.query(TaskReschedule).join(TaskInstance, TaskReschedule.ti_id == TaskInstance.id)
                .filter(TaskInstance.dag_id == dr.dag_id, TaskInstance.run_id == dr.run_id,
                        TaskInstance.task_id == task_id).count())


def asset_events(uri: str) -> list[dict]:
    """The extras of the asset events on ``uri``, oldest first."""
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session

    with create_session() as s:
        rows = (s.query(AssetEvent).join(AssetModel, AssetEvent.asset_id == AssetModel.id)
                .filter(AssetModel.uri == uri).order_by(AssetEvent.id).all())
        return [dict(r.extra or {}) for r in rows]


def jobs_in_process(monkeypatch) -> list[dict]:
    """The operators' Spark jobs run in this process, without a JVM: ``spark-submit jobs.py
    --result-file F <command> <args>`` becomes the same command through the CLI's handlers (local
    engine), its result (or error envelope) written to F as jobs.py writes it; a job error fails
    the submit as spark-submit's exit status 2 does. Returns what was submitted: ``{"argv": the
    job's argv, "cmd": the spark-submit command the provider's hook built, "env": its env_vars}``."""
    from airflow.sdk.exceptions import AirflowException

    from airflow_hudi_etc.cli import run_command
    from airflow_hudi_etc.contract import parse, split_job_argv, write_result
    from airflow_hudi_etc.hudi.errors import HudiEtcError, error_envelope
    from airflow_hudi_etc.operators.compaction import ProcessGroupSparkSubmitHook

    submitted: list[dict] = []

    def submit(self, application="", **kwargs):
        result_file, argv = split_job_argv([str(x) for x in self._application_args])
        submitted.append({"argv": argv, "cmd": self._build_spark_submit_command(application),
                          "env": dict(self._env_vars or {})})
        try:
            write_result(result_file, run_command(parse(argv), argv))
        except HudiEtcError as e:
            write_result(result_file, error_envelope(e))
            raise AirflowException("Cannot execute: (in-process job). Error code is: 2.") from e

    monkeypatch.setattr(ProcessGroupSparkSubmitHook, "submit", submit)
    return submitted
