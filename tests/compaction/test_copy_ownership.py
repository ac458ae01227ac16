"""What the cleanup of a dead schedule takes for its own copy (compaction/intents.is_our_copy).

On storage Java appends on (issue 22 finding 2), a Java write made after our copy was taken lands
in the original's slice B while slice C is uncommitted: the original grows, the copy does not, and
the copy is still ours (found with real Java 0.14 over viewfs: test_java_findings.py
``test_f2_killed_schedules_copy_is_never_appended_to_while_its_guard_stands``). A copy that holds
bytes its original lacks was written into by Java and is never ours."""

from __future__ import annotations

import pytest

from airflow_hudi_etc.compaction.intents import is_our_copy, remove_copies
from airflow_hudi_etc.hudi.storage import Storage

LOG = b"#HUDI#" + bytes(range(200))  # any bytes: ownership is decided on bytes alone
BLOCK = b"#HUDI#java-block"


@pytest.mark.parametrize("original,copy,ours", [
    (LOG, LOG, True),                       # the copy as made
    (LOG + BLOCK, LOG, True),               # Java appended into the original afterwards
    (LOG, LOG + BLOCK, False),              # Java appended into the copy
    (LOG + BLOCK, LOG + b"#HUDI#other", False),  # both grew, differently
    (LOG, LOG[:-1] + b"x", False),          # same size, other bytes
    (LOG, b"", False),                      # an empty file at the copy's name: maybe a Java writer's new log
    (b"", b"", True),
])
def test_is_our_copy(tmp_path, original, copy, ours):
    (tmp_path / "orig.log").write_bytes(original)
    (tmp_path / "copy.log").write_bytes(copy)
    assert is_our_copy(Storage(str(tmp_path)), "copy.log", "orig.log") is ours


def test_remove_copies_keeps_what_java_wrote_into(tmp_path):
    st = Storage(str(tmp_path))
    (tmp_path / "a.log").write_bytes(LOG + BLOCK)
    (tmp_path / "a.copy").write_bytes(LOG)
    (tmp_path / "b.log").write_bytes(LOG)
    (tmp_path / "b.copy").write_bytes(LOG + BLOCK)
    removed, kept = remove_copies(st, [("a.copy", "a.log"), ("b.copy", "b.log"), ("gone.copy", "a.log")])
    assert (removed, kept) == (["a.copy"], ["b.copy"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.log", "b.copy", "b.log"]
