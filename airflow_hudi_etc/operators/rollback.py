"""``RollbackCompactionOperator``: undo a failed or killed execution (``hudi-etc rollback``).

Only an inflight compaction has anything to undo: for a requested or completed one (or none),
nothing is submitted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..failfast import fail_fast
from .base import HudiEtcSparkJobOperator, none_if_empty
from .scheduling import scheduled_instant

if TYPE_CHECKING:
    from airflow.sdk import Context


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
        table = self.hudi_hook().load_table(self.table_path)
        explicit = none_if_empty(self.instant)
        instant, source = (str(explicit), "argument") if explicit else scheduled_instant(self, context)
        if instant is None:
            instant = next((p.instant for p in table.compaction.pending_plans() if p.state == "inflight"), None)
            source = "inflight compaction"
        base = {"instant": instant, "instant_source": source, "spark_submitted": False}
        self._lineage_result = out = self._rollback(table, instant, explicit, base, context)
        return out

    def _rollback(self, table, instant, explicit, base: dict, context: Context) -> dict:
        from ..hudi.errors import InvalidTimelineError

        if instant is None:
            return {**base, "status": "nothing to roll back"}
        state = table.compaction.state(instant)
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


__all__ = ["RollbackCompactionOperator"]
