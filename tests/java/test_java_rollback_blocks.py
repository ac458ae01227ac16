"""Rollback command blocks judged by real Java: a failed write's block, another writer's block in a
later log file of the slice, then the rollback block of the failed write. Java removes every
queued block of the rollback's target, not only the last one queued, and so must our reader (the
failed instant is older than the timeline's first commit: a reader takes it as archived, hence
committed, and only the rollback block hides it). Seen next to a looping Java 0.14 writer."""

from __future__ import annotations

import pytest

from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from hand_logs import rollback_behind_another_write, values

pytestmark = pytest.mark.java


@pytest.mark.parametrize("line", ["0.14", "1.1"])
def test_a_rollback_block_behind_another_writers_block(java_hudi, tmp_path, line):
    path, want = rollback_behind_another_write(tmp_path)
    assert {r["id"]: r["v"] for r in java_hudi(line).snapshot(str(path))} == want
    assert values(HudiTable.load(str(path)).read()) == want
