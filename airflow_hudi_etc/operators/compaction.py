"""Operators that run event-time compaction jobs through ``spark-submit``, one module per family:

* :mod:`.scheduling` — ``ScheduleEventTimeCompactionOperator`` (``hudi-etc schedule``);
* :mod:`.execution` — ``ExecuteCompactionOperator`` (``hudi-etc execute``, or Java executes the plan);
* :mod:`.rollback` — ``RollbackCompactionOperator`` (``hudi-etc rollback``);
* :mod:`.catalog_sync` — ``SyncEventTimeThresholdOperator`` (``hudi-etc sync-catalog``);
* :mod:`.base` — the spark-submit plumbing they share (``HudiEtcSparkJobOperator``,
  ``ProcessGroupSparkSubmitHook``, ``emit_gauges``, ``job_script``).

This module is where DAGs import them from (``from airflow_hudi_etc.operators.compaction import
ExecuteCompactionOperator``): it re-exports every operator and helper above.

Each operator submits ``airflow_hudi_etc/spark/jobs.py --result-file F <command> <args>`` and returns
the job's result JSON as its XCom; errors the job reports come back as the typed errors of
:mod:`airflow_hudi_etc.hudi.errors`. Retry safety, with as few JVM starts as possible (the table is
read here first, in this process, through :class:`~airflow_hudi_etc.hooks.hudi.HudiTableHook`):

* **schedule**: a pending plan for the same threshold (an earlier attempt made it) is reused,
  without Spark; a covered threshold (a backfill run) returns ``instant: null`` without Spark.
* **execute**: a completed instant is reported (``status: "already completed"``) without Spark;
  an inflight one (a crashed or killed run) is rolled back by the job and executed again.
* **rollback**: only an inflight compaction has anything to undo; otherwise nothing is submitted.
* errors a retry cannot fix (no table, invalid input, unsafe path, unsupported table or feature,
  metadata table present: :data:`airflow_hudi_etc.failfast.NON_RETRYABLE_CODES`), raised here or
  reported by the job, fail the task at once (``AirflowFailException``); others (``conflict``, a
  failed spark-submit) are raised as they are and the task's ``retries`` apply.
* ``on_kill`` (task killed, ``execution_timeout``) ends spark-submit's whole process group.

Metrics go to Airflow's ``Stats`` (``hudi_etc.<metric>``, tag ``table``): after execute
``threshold_lag_seconds``, ``remaining_log_files``, ``remaining_log_bytes``, ``pending_compactions``,
``execution_seconds``, ``logs_compacted``; after a catalog sync ``catalog_threshold_lag_seconds``.
"""

from __future__ import annotations

from .base import (
    HudiEtcSparkJobOperator,
    ProcessGroupSparkSubmitHook,
    _raise_job_error,  # noqa: F401 - the tests raise a job's error envelope through it
    emit_gauges,
    job_script,
)
from .catalog_sync import SyncEventTimeThresholdOperator
from .execution import ExecuteCompactionOperator, await_java_execution, wait_for_java
from .rollback import RollbackCompactionOperator
from .scheduling import ScheduleEventTimeCompactionOperator

__all__ = [
    "HudiEtcSparkJobOperator",
    "ProcessGroupSparkSubmitHook",
    "ScheduleEventTimeCompactionOperator",
    "ExecuteCompactionOperator",
    "RollbackCompactionOperator",
    "SyncEventTimeThresholdOperator",
    "await_java_execution",
    "emit_gauges",
    "job_script",
    "wait_for_java",
]
