"""Our commands next to a real Java writer that never stops (tests/support/java_loop.py): OCC,
the file-system lock shared through ``configure --hoodie``, LAZY; Java executing our plans
(``java-compaction on``) or ours (``off``); our crash points drawn. After every step Java's
snapshot and RO reads, hudi-rs and our reader agree with the model and the RO guarantee holds.
CI runs a short share; ``-m slow`` runs seeds 100-149 on each line. With Java's defaults (the
metadata table on) our commands run Spark-hosted in a second driver of the line, and every step is
also judged through the metadata table (LoopWorld.judge_metadata)."""

from __future__ import annotations

import os

import pytest

from java_loop import LoopWorld

pytestmark = pytest.mark.java

LINES = {"0.14": 6, "0.15": 6, "1.0": 8, "1.1": 9, "1.2": 9}
#: the metadata table off (hoodie.metadata.enable=false on Java's writers): a smaller share
CI = [("0.15", 1, "off")]


@pytest.mark.parametrize("line,seed,java_compaction", CI, ids=[f"{l}-s{s}-jc-{j}" for l, s, j in CI])
def test_loop_writer_next_to_our_commands(java_hudi, tmp_path, line, seed, java_compaction):
    w = LoopWorld(tmp_path, java_hudi(line), seed, LINES[line], java_compaction=java_compaction)
    out = w.run(int(os.environ.get("HUDI_ETC_LOOP_STEPS", "6")))
    print(line, seed, java_compaction, out)
    assert out["java_writes"] >= out["steps"]  # the writer really wrote during the steps


#: Java's defaults (the metadata table on), our commands Spark-hosted next to the loop (issue 34)
#: (1.2 with Java executing our plans, seed 2, took 187 s of CI: -m slow runs it; the metadata
#: test has Java execute a plan of ours in CI)
MDT_CI = [("1.1", 3, "off")]


@pytest.mark.parametrize("line,seed,java_compaction", MDT_CI, ids=[f"{l}-s{s}-jc-{j}" for l, s, j in MDT_CI])
def test_loop_writer_with_the_metadata_table(java_hudi, tmp_path, line, seed, java_compaction):
    w = LoopWorld(tmp_path, java_hudi(line), seed, LINES[line], java_compaction=java_compaction,
                  host=java_hudi.host(line))
    out = w.run(int(os.environ.get("HUDI_ETC_LOOP_STEPS", "4")))  # (6 steps took 151 s of CI)
    print(line, seed, java_compaction, out)
    if os.environ.get("HUDI_ETC_LOOP_VERBOSE"):
        print("\n".join(w.log))
    assert out["java_writes"] >= out["steps"]
    assert (w.path / ".hoodie" / "metadata").is_dir(), "Java's writes built no metadata table"


SLOW_SEEDS = [int(s) for s in os.environ.get("HUDI_ETC_LOOP_SEEDS", "").split(",") if s] or list(range(100, 150))


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_SEEDS)
@pytest.mark.parametrize("line", sorted(LINES))
def test_loop_writer_slow(java_hudi, tmp_path, line, seed):
    w = LoopWorld(tmp_path, java_hudi(line), seed, LINES[line], java_compaction=("off", "on")[seed % 2])
    out = w.run(int(os.environ.get("HUDI_ETC_LOOP_STEPS", "12")))
    print(line, seed, out)
    if os.environ.get("HUDI_ETC_LOOP_VERBOSE"):
        print("\n".join(w.log))


@pytest.mark.slow
@pytest.mark.parametrize("seed", SLOW_SEEDS)
@pytest.mark.parametrize("line", sorted(LINES))
def test_loop_writer_with_the_metadata_table_slow(java_hudi, tmp_path, line, seed):
    w = LoopWorld(tmp_path, java_hudi(line), seed, LINES[line], java_compaction=("off", "on")[seed % 2],
                  host=java_hudi.host(line))
    out = w.run(int(os.environ.get("HUDI_ETC_LOOP_STEPS", "12")))
    print(line, seed, out)
    if os.environ.get("HUDI_ETC_LOOP_VERBOSE"):
        print("\n".join(w.log))
