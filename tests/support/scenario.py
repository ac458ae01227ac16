"""One compaction life cycle, shared by the crash-point sweep and the concurrency tests.

A seeded random history (tests/support/batches.py), then:

* ``w1``: a batch of late updates (event times on both sides of the threshold) and inserts;
* ``schedule``: threshold = T0 + 3h (compaction time T0 + 4h, data latency 1h);
* ``w2``: a batch written while the plan is pending (it lands in slice C);
* ``execute``, then ``clean --retain-commits 1``.

The judge (:func:`judge`) knows nothing of the product's code paths: hudi-rs reads the table and
is compared with the hand-written model (tests/support/model.py), the freshness guarantee with the
history, and ``validate`` must report nothing wrong; finally every live key is updated and
hudi-rs must see each key once.
"""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from airflow_hudi_etc.compaction.validate import validate
from model import random_history
from batches import DATA_COLS, batch, run_history
from compaction_checks import assert_updates_after_compaction_find_their_file_group, check_ro_guarantee, expected_exact_ro
from paths import REPO
from reading import iso, snapshot_by_key

T0 = 1_700_000_000_000
H = 3_600_000
THRESHOLD = T0 + 3 * H
COMPACTION_TIME = iso(T0 + 4 * H)
LATENCY = "1h"
PARTS = ("a", "b", "c")


def region(key: str) -> str:
    return PARTS[int(key[1:]) % len(PARTS)]


@dataclass
class Scenario:
    path: Path
    model: object
    history: list  # every upsert/delete before the plan (for the freshness check)
    link_mode: str = "symlink"
    exact: bool = False
    snap_at_plan: dict = field(default_factory=dict)
    w1_done: bool = False
    table_version: int = 6
    #: a real Java Hudi client (tests/support/java_hudi.py): then Java's reads judge too
    java: object = None

    def want(self) -> dict:
        return {k: {c: v[c] for c in DATA_COLS} for k, v in self.model.snapshot().items()}

    # ---------------------------------------------------------------- batches
    def w1_rows(self) -> list[dict]:
        keys = sorted(self.model.keys)
        picked = keys[:: max(1, len(keys) // 9)][:9]
        rows = [{"key": k, "ts": 1000 + i, "event_time": T0 + (1 if i % 2 == 0 else 5) * H, "value": float(i),
                 "note": "w1", "region": region(k)} for i, k in enumerate(picked)]
        rows += [{"key": f"k{50000 + i}", "ts": 1000, "event_time": T0 + H, "value": -1.0, "note": "w1-new",
                  "region": region(f"k{50000 + i}")} for i in range(3)]
        return rows

    def w2_rows(self, tag: str = "w2", n: int = 6, ts: int = 2000) -> list[dict]:
        live = sorted(self.model.snapshot())
        picked = live[1 :: max(1, len(live) // n)][:n]
        return [{"key": k, "ts": ts + i, "event_time": T0 + 2 * H, "value": float(ts + i), "note": tag,
                 "region": region(k)} for i, k in enumerate(picked)]

    def batch_file(self, rows: list[dict], name: str) -> Path:
        f = self.path.parent / f"{name}.parquet"
        pq.write_table(batch(rows), f)
        return f

    def applied(self, rows: list[dict], *, before_plan: bool) -> None:
        """The batch committed: the model (and the pre-plan history) take it."""
        self.model.upsert(rows, "key")
        if before_plan:
            self.history.append(("upsert", rows))

    def plan_made(self) -> None:
        self.snap_at_plan = self.want()

    def schedule_args(self) -> list[str]:
        args = ["schedule", "--path", str(self.path), "--data-latency", LATENCY,
                "--compaction-time", COMPACTION_TIME, "--link-mode", self.link_mode]
        return args + (["--exact-split"] if self.exact else [])


def build(tmp_dir: Path, seed: int, *, exact: bool, link_mode: str, table_version: int = 6) -> Scenario:
    """Ordering values rise with arrival (``monotone``): Hudi 0.14's overwrite-latest and 1.x's
    COMMIT_TIME_ORDERING (a v8/v9 table) then read the same, so one model serves every version."""
    path, model = run_history(tmp_dir, seed, partitioned=True, batches=6, monotone=True, table_version=table_version,
                              exclusive_cleaner=link_mode == "symlink")
    return Scenario(path, model, list(random_history(seed, 6, monotone_ordering=True)), link_mode, exact,
                    table_version=table_version)


def clone(sc: Scenario, dest_dir: Path) -> Scenario:
    """A private copy of a built scenario (table files, symlinks kept, and the model)."""
    dest = dest_dir / sc.path.name
    shutil.copytree(sc.path, dest, symlinks=True)
    return Scenario(dest, copy.deepcopy(sc.model), copy.deepcopy(sc.history), sc.link_mode, sc.exact,
                    copy.deepcopy(sc.snap_at_plan), sc.w1_done, sc.table_version)


def cli(*args, crash: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    """``python -m airflow_hudi_etc.cli ...`` in a fresh process (``crash``: HUDI_ETC_CRASH_AT)."""
    env = dict(os.environ)
    env.pop("HUDI_ETC_CRASH_AT", None)
    if crash:
        env["HUDI_ETC_CRASH_AT"] = crash
    proc = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", *map(str, args)], env=env,
                          capture_output=True, text=True, cwd=REPO)
    if check and not crash:
        assert proc.returncode == 0, (proc.stdout, proc.stderr)
    return proc


def assert_snapshot(sc: Scenario) -> None:
    """The snapshot equals the model. hudi-rs judges, except while a compaction is pending: hudi-rs
    drops v6 logs named with a pending compaction instant (../shared/hudi-rs-oracle.md §3.2;
    Java merges them into the previous slice), so then our reader is compared with the model."""
    from airflow_hudi_etc.hudi.storage import Storage
    from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
    from airflow_hudi_etc.hudi.timeline.active import Timeline

    if Timeline.load(Storage(str(sc.path))).pending_compactions:
        t = HudiTable.load(str(sc.path)).read()
        got = {r["key"]: {c: r[c] for c in DATA_COLS} for r in t.to_pylist()}
        assert len(got) == t.num_rows, "duplicate keys in the snapshot"
    else:
        got = snapshot_by_key(sc.path)
    assert got == sc.want(), "snapshot differs from the model"
    if sc.java is not None:  # Java merges a pending plan's slice C into the previous slice
        _java_judges(sc, ro=False)


def judge(sc: Scenario, *, compacted: bool = True, update_all: bool = True) -> None:
    """hudi-rs snapshot == model, the RO guarantee, validate ok, then no duplicate after updating every key.
    With ``sc.java`` (a tests/support/java_hudi.py client): Java's snapshot == model and Java's RO ==
    hudi-rs's RO (itself judged by the guarantee), before and after the update of every key."""
    got = snapshot_by_key(sc.path)
    assert got == sc.want(), "hudi-rs snapshot differs from the model"
    if sc.java is not None:
        _java_judges(sc)
    if compacted:
        if sc.exact:
            assert snapshot_by_key(sc.path, ro=True) == expected_exact_ro(sc.history, THRESHOLD)
        else:
            check_ro_guarantee(sc.path, sc.history, THRESHOLD, sc.snap_at_plan)
    report = validate(str(sc.path))
    assert report["ok"], report["problems"]
    if update_all:
        assert_updates_after_compaction_find_their_file_group(sc.path, sc.model)
        if sc.java is not None:
            _java_judges(sc)


def _java_judges(sc: Scenario, *, ro: bool = True) -> None:
    from java_checks import java_rows_by_key

    assert java_rows_by_key(sc.java, sc.path) == sc.want(), f"Java {sc.java.line}'s snapshot differs from the model"
    if ro:
        assert java_rows_by_key(sc.java, sc.path, ro=True) == snapshot_by_key(sc.path, ro=True), \
            f"Java {sc.java.line}'s RO differs from hudi-rs's"
