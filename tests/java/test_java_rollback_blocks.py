"""Rollback command blocks judged by real Java: a failed write's block, another writer's block in a
later log file of the slice, then the rollback block of the failed write. Java removes every
queued block of the rollback's target, not only the last one queued, and so must our reader (the
failed instant is older than the timeline's first commit: a reader takes it as archived, hence
committed, and only the rollback block hides it). Seen next to a looping Java 0.14 writer."""

from __future__ import annotations

import pytest

from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from hand_logs import add_log, data_block, make_table, values

pytestmark = pytest.mark.java


@pytest.mark.parametrize("line", ["0.14", "1.1"])
def test_a_rollback_block_behind_another_writers_block(java_hudi, tmp_path, line):
    path = make_table(tmp_path)
    failed = "20000101000000001"
    add_log(path, failed, [data_block(path, failed, [{"id": "a", "ts": 99, "v": "failed"}])], committed=False)
    (path / ".hoodie" / f"{failed}.deltacommit.requested").unlink()
    ok = "30000101000000001"
    add_log(path, ok, [data_block(path, ok, [{"id": "b", "ts": 99, "v": "new-b"}])])
    rb = "30000101000000002"
    add_log(path, rb, [lf.encode_rollback_block(rb, failed)])
    want = {"a": "base-a", "b": "new-b"}
    assert {r["id"]: r["v"] for r in java_hudi(line).snapshot(str(path))} == want
    assert values(HudiTable.load(str(path)).read()) == want
