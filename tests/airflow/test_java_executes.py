"""Finding 3's safe mode on the Airflow side: where Java compacts, the execute task lets Java's
compaction execute our plan and waits for its verified commit (no Spark job of ours)."""

from __future__ import annotations

import pytest

import airflow_env  # noqa: F401  (configures Airflow before it is imported)
from airflow_hudi_etc.api import Table
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.errors import JavaCompactionError
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from airflow_hudi_etc.operators.compaction import ExecuteCompactionOperator, await_java_execution, wait_for_java
from batches import batch
from java_sim import JavaHudi

T0 = 1_767_225_600_000
H = 3_600_000


def _planned(tmp_path, java_compaction=None):
    """A plan on a table modelled as Java created it (``java_compaction=None``: nothing recorded)."""
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
               partition_field="region", java_compaction=java_compaction)
    rows = [{"key": f"k{i}", "ts": i, "event_time": T0 - 3 * H, "value": 1.0, "note": "x", "region": "a"} for i in range(4)]
    write_batch(str(path), batch(rows))
    write_batch(str(path), batch([{**r, "ts": 10 + r["ts"], "event_time": T0 - 2 * H} for r in rows[:2]]))
    write_batch(str(path), batch([{**r, "ts": 20 + r["ts"], "event_time": T0 + 5 * H} for r in rows[:2]]))
    res = schedule(str(path), data_latency="1h", compaction_time="2026-01-01T02:00:00Z")
    assert res.instant
    return path, res.instant


def test_execute_task_waits_for_javas_verified_commit(tmp_path):
    path, c = _planned(tmp_path)
    java = JavaHudi(path, 1)
    pokes = []

    def sleep(_s):  # Java's inline compaction runs while the task waits
        pokes.append(_s)
        java.compact()

    out = await_java_execution(Table(str(path)), c, 60, 5, sleep=sleep)
    assert out["status"] == "completed" and out["executed_by"] == "java" and out["instant"] == c
    assert pokes == [5]


def test_execute_task_gives_up_typed(tmp_path):
    path, c = _planned(tmp_path)
    t = iter(range(0, 1000, 10))
    with pytest.raises(JavaCompactionError, match="still requested") as e:
        await_java_execution(Table(str(path)), c, 25, 10, clock=lambda: next(t), sleep=lambda _s: None)
    from airflow_hudi_etc.failfast import is_retryable

    assert e.value.code == "java_execution_pending" and is_retryable(e.value)  # Java may commit it later


def test_java_executes_is_the_default_where_java_compacts(tmp_path):
    path, c = _planned(tmp_path)
    op = ExecuteCompactionOperator(task_id="execute", table_path=str(path))
    assert op.java_executes is None and not wait_for_java(op, Table(str(path)))
    JavaHudi(path, 1).compact()  # the timeline now shows Java compacting
    assert wait_for_java(op, Table(str(path)))
    assert not wait_for_java(ExecuteCompactionOperator(task_id="x", table_path=str(path), java_executes=False),
                             Table(str(path)))


@pytest.mark.parametrize("java_executes", [None, False])
def test_execute_task_fails_fast_where_nobody_recorded_whether_java_compacts(tmp_path, monkeypatch, java_executes):
    """On a table Java created, Java may run Spark's default inline compaction without the
    timeline showing it yet: the execute task (default, or java_executes=False) fails at once,
    without retry, with the typed error naming the configure command; no job is submitted and
    nothing is written. Recorded on: the task waits for Java; recorded off: the job is submitted."""
    from airflow.sdk.exceptions import AirflowFailException

    path, c = _planned(tmp_path)
    submitted = []
    monkeypatch.setattr(ExecuteCompactionOperator, "run_job", lambda self, argv, ctx: submitted.append(argv) or {})
    before = sorted(str(p.relative_to(path)) for p in path.rglob("*"))
    op = ExecuteCompactionOperator(task_id="execute", table_path=str(path), instant=c, java_executes=java_executes)
    with pytest.raises(AirflowFailException, match="configure --java-compaction on") as e:
        op.execute({})
    assert isinstance(e.value.__cause__, JavaCompactionError), repr(e.value.__cause__)
    assert not submitted and sorted(str(p.relative_to(path)) for p in path.rglob("*")) == before
    Table(str(path)).configure(java_compaction="on")
    assert wait_for_java(op, Table(str(path))) is (java_executes is None)
    Table(str(path)).configure(java_compaction="off")
    assert not wait_for_java(op, Table(str(path)))
    op.execute({})
    assert len(submitted) == 1
