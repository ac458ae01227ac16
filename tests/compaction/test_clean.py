"""Clean (KEEP_LATEST_COMMITS) after partial compactions: link targets of retained slices stay."""

from __future__ import annotations

import os

import pytest

from airflow_hudi_etc.compaction.clean import clean
from airflow_hudi_etc.hudi.timeline import avro_models as am
from airflow_hudi_etc.hudi.errors import InvalidInputError
from batches import DATA_COLS, run_history
from compacted_histories import two_compactions
from reading import snapshot_by_key


def files(path):
    return {str(p.relative_to(path)) for p in path.rglob("*")
            if ".hoodie" not in p.parts and (p.is_file() or p.is_symlink()) and p.name != ".hoodie_partition_metadata"}


def dangling(path):
    return [p for p in path.rglob("*") if p.is_symlink() and not p.exists()]


@pytest.mark.parametrize("link_mode", ["symlink", "copy"])
@pytest.mark.parametrize("seed", [1, 2, 5])
def test_clean_keeps_link_targets_and_the_snapshot(tmp_path, seed, link_mode):
    path, model = two_compactions(tmp_path, seed, link_mode)
    snap, ro = snapshot_by_key(path), snapshot_by_key(path, ro=True)
    assert snap == {k: {c: v[c] for c in DATA_COLS} for k, v in model.snapshot().items()}
    before = files(path)
    out = clean(str(path), retain_commits=1)
    assert out["status"] == "completed" and out["files_deleted"] > 0
    after = files(path)
    gone = before - after
    assert len(gone) == out["files_deleted"]
    assert not dangling(path)
    # hand rule: every slice older than the latest of its group is gone, except link targets
    latest = {}
    for f in before:
        name = os.path.basename(f)
        fid, inst = (name.lstrip(".").split("_")[0], name.split("_")[2].split(".")[0]) if name.endswith(".parquet") \
            else (name.lstrip(".").split("_")[0], name.split("_")[1].split(".")[0])
        latest[fid] = max(latest.get(fid, ""), inst)
    targets = {os.path.normpath(os.path.join(os.path.dirname(str(p.relative_to(path))), os.readlink(p)))
               for p in path.rglob("*") if p.is_symlink()}
    for f in gone:
        assert f not in targets
    for f in after:
        name = os.path.basename(f)
        inst = name.split("_")[2].split(".")[0] if name.endswith(".parquet") else name.split("_")[1].split(".")[0]
        fid = name.lstrip(".").split("_")[0]
        assert inst == latest[fid] or f in targets, f"{f} should have been cleaned"
    assert targets <= after
    if link_mode == "symlink" and seed in (1, 5):  # these histories keep links across the clean
        assert targets
    assert snapshot_by_key(path) == snap and snapshot_by_key(path, ro=True) == ro
    # the clean instant is Hudi's Avro: plan and metadata parse with the model schemas
    hoodie = path / ".hoodie"
    (plan_file,) = hoodie.glob(f"{out['instant']}.clean.requested")
    plan = am.read_avro_metadata(plan_file.read_bytes(), am.CLEANER_PLAN)
    planned = {f for fs in plan["filePathsToBeDeletedPerPartition"].values() for f in (x["filePath"] for x in fs)}
    assert {os.path.relpath(p, str(path)) for p in planned} == gone
    meta = am.read_avro_metadata((hoodie / f"{out['instant']}.clean").read_bytes(), am.CLEAN_METADATA)
    assert meta["totalFilesDeleted"] == len(gone)
    # idempotent: nothing left to clean
    assert clean(str(path), retain_commits=1)["status"] == "nothing to clean"


def test_clean_resumes_a_crashed_clean_and_refuses_bad_input(tmp_path):
    path, model = two_compactions(tmp_path, 3, "symlink")
    snap = snapshot_by_key(path)
    import airflow_hudi_etc.compaction.clean as cl

    real = cl._execute

    def crash(*a, **k):
        raise OSError("killed after the plan was written (injected)")

    cl._execute = crash
    try:
        with pytest.raises(OSError):
            clean(str(path), retain_commits=1)
    finally:
        cl._execute = real
    assert snapshot_by_key(path) == snap  # a requested clean deletes nothing yet
    out = clean(str(path), retain_commits=1)
    assert out["status"] == "resumed and completed" and out["files_deleted"] > 0
    assert snapshot_by_key(path) == snap and not dangling(path)
    with pytest.raises(InvalidInputError):
        clean(str(path), retain_commits=0)


def test_clean_with_few_commits_does_nothing(tmp_path):
    path, _ = run_history(tmp_path, 4, batches=3)
    out = clean(str(path), retain_commits=10)
    assert out["instant"] is None and out["files_deleted"] == 0
    assert not list((path / ".hoodie").glob("*.clean*"))
