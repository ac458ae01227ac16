"""Issue 24 §2: one run of a table at a time. The scheduler's own selection of task instances to
queue (``SchedulerJobRunner._executable_task_instances_to_queued``, what every scheduler loop
runs) over two backfill runs of a DAG built with the task group: with the table's pool at one
slot, one task instance is queued at a time, and a run that started goes before another run's
first task."""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before it is imported)

import pendulum

import airflow_table as at


def test_two_backfill_runs_never_run_side_by_side_on_one_table(tmp_path):
    from airflow.jobs.job import Job
    from airflow.jobs.scheduler_job_runner import SchedulerJobRunner
    from airflow.models.dag import DagModel
    from airflow.models.pool import Pool
    from airflow.models.serialized_dag import SerializedDagModel
    from airflow.sdk import DAG
    from airflow.utils.session import create_session
    from airflow.utils.state import DagRunState, TaskInstanceState
    from airflow.utils.types import DagRunTriggeredByType, DagRunType

    from airflow_hudi_etc.task_groups import event_time_compaction, table_pool

    table = tmp_path / "trips"
    with DAG("hudi_etc_test_pool", schedule="@daily", start_date=pendulum.datetime(2026, 1, 1, tz="UTC"),
             max_active_runs=10) as dag:
        event_time_compaction(table_path=str(table), data_latency=at.LATENCY, group_id="c")
    pool = table_pool(str(table))
    assert pool.startswith("hudi_etc_") and pool.split("_")[-2] == "trips" and "/" not in pool  # REST-addressable
    assert table_pool(str(table) + "/") == pool != table_pool(str(tmp_path / "trips_"))  # one per table
    airflow_env.register(dag)
    with create_session() as s:
        Pool.create_or_update_pool(pool, slots=1, description="test", include_deferred=False, session=s)
        s.query(DagModel).filter(DagModel.dag_id == dag.dag_id).update({"is_paused": False})
    with create_session() as s:
        sdag = SerializedDagModel.get_dag(dag.dag_id, session=s)
        runs = []
        for day in (1, 2):
            start = pendulum.datetime(2026, 1, day, tz="UTC")
            dr = sdag.create_dagrun(run_id=f"backfill__{day}", logical_date=start,
                                    data_interval=(start, start.add(days=1)), run_after=start.add(days=1),
                                    run_type=DagRunType.BACKFILL_JOB, triggered_by=DagRunTriggeredByType.TEST,
                                    state=DagRunState.RUNNING, session=s)
            runs.append(dr)
        s.flush()

        def ti(dr, task_id):
            return next(t for t in dr.get_task_instances(session=s) if t.task_id == task_id)

        for dr in runs:  # both runs' sensors are due
            ti(dr, "c.wait").state = TaskInstanceState.SCHEDULED
        s.flush()
        runner = SchedulerJobRunner(job=Job())
        queued = runner._executable_task_instances_to_queued(max_tis=32, session=s)
        assert [(t.run_id, t.task_id) for t in queued] == [("backfill__1", "c.wait")]  # one slot
        # run 1's sensor succeeded: its schedule task now competes with run 2's sensor, and wins
        ti(runs[0], "c.wait").state = TaskInstanceState.SUCCESS
        ti(runs[0], "c.schedule").state = TaskInstanceState.SCHEDULED
        s.flush()
        queued = runner._executable_task_instances_to_queued(max_tis=32, session=s)
        assert [(t.run_id, t.task_id) for t in queued] == [("backfill__1", "c.schedule")]
        # while it runs, nothing else of the table is queued
        queued = runner._executable_task_instances_to_queued(max_tis=32, session=s)
        assert queued == []
        s.rollback()
