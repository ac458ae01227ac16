"""The direct Avro encoding of compaction plans is byte-identical to fastavro's."""

from __future__ import annotations

import io
import json
import random

import fastavro

from airflow_hudi_etc.hudi.timeline import avro_models as am
from airflow_hudi_etc.hudi.protocol import plan as plan_mod
from airflow_hudi_etc.hudi.protocol.plan import CompactionPlan, LinkOp, Operation


def _name(rng):
    return "".join(rng.choice("ab-_.é漢0189") for _ in range(rng.choice([1, 5, 63, 64, 65, 200, 20000]) if rng.random() < 0.01 else rng.choice([1, 5, 63, 64, 65, 130])))


def test_direct_encoding_matches_fastavro():
    rng = random.Random(3)
    for _ in range(60):
        ops = []
        for _ in range(rng.choice([0, 1, 3, 20])):
            ops.append(Operation(
                rng.choice(["", "p=1", _name(rng)]), _name(rng), rng.choice(["", "20250101000000000"]),
                rng.choice([None, "", _name(rng)]),
                tuple(_name(rng) for _ in range(rng.choice([0, 1, 2, 40]))),
                tuple(LinkOp(_name(rng), _name(rng)) for _ in range(rng.choice([0, 1, 2, 40]))),
                rng.choice([{}, {"TOTAL_LOG_FILES": rng.randrange(10**6), "TOTAL_LOG_FILES_SIZE": rng.random() * 1e12},
                            {"x": -1.5, "y": float("inf")}]),
            ))
        extra = rng.choice([{}, {"a": 1, "hoodie.etc.threshold.ms": -12345678901234, "é": _name(rng)}])
        plan = CompactionPlan("20250101000000000", tuple(ops), extra)
        assert plan.to_bytes() == plan.to_bytes_reference()


def test_unusual_values_fall_back_to_fastavro():
    op = Operation("", "f1", None, None, (), (), {})
    plan = CompactionPlan("20250101000000000", (op,), {})
    assert plan.to_bytes() == plan.to_bytes_reference()
    back = CompactionPlan.from_bytes("20250101000000000", plan.to_bytes())
    assert back.operations[0].file_id == "f1"


def test_direct_encoding_matches_fastavro_for_big_counts_and_long_strings():
    """Counts and lengths past the 8192 table, remembered repeats, non-ASCII, no base file."""
    ops = tuple(
        Operation(f"p{i % 7}", f"f{i}", "20250101000000000", None if i % 3 == 0 else f"f{i}_0-1-0_2025.parquet",
                  (f".f{i}_2025.log.1_0-1-0", "é" * (i % 5)), (LinkOp(f".f{i}_2026.log.1_1-0-1", "x" * (i % 3)),),
                  {"TOTAL_LOG_FILES": 2, "TOTAL_LOG_FILES_SIZE": i * 1.5})
        for i in range(9000)
    ) + (Operation("漢" * 5000, "g", "", "b" * 9000, ("l" * 70000,), (), {"k" * 8200: 1}),)
    plan = CompactionPlan("20250101000000000", ops, {"é": "漢" * 9000, "n": 3})
    assert plan.to_bytes() == plan.to_bytes_reference()


def test_values_of_other_types_get_fastavros_verdict():
    for op in (Operation("", 5, "1", None, (), (), {}), Operation("", "f", "1", None, ("a", 7), (), {}),
               Operation("", "f", "1", None, (), (LinkOp("a", 3),), {}), Operation("", "f", "1", None, (), (), {1: 2.0})):
        plan = CompactionPlan("20250101000000000", (op,), {})
        try:
            want = plan.to_bytes_reference()
        except Exception as e:  # noqa: BLE001 - the same error type either way
            want = type(e)
        try:
            got = plan.to_bytes()
        except Exception as e:  # noqa: BLE001
            got = type(e)
        assert got == want, op


def test_plan_file_uses_the_one_compaction_plan_schema():
    """plan.py has no schema of its own: its files embed avro_models.COMPACTION_PLAN and read back
    with it as the reader schema (the 1.x field missingSchedulePartitions written as null)."""
    assert plan_mod.COMPACTION_PLAN is am.COMPACTION_PLAN
    op = Operation("p=1", "f1", "20250101000000000", None, (".f1_20250101000000000.log.1_0-1-0",), (), {"x": 1.0})
    data = CompactionPlan("20250102000000000", (op,), {"k": "v"}).to_bytes()
    embedded = json.loads(fastavro.reader(io.BytesIO(data)).metadata["avro.schema"])
    assert [f["name"] for f in embedded["fields"]] == [
        "operations", "extraMetadata", "version", "strategy", "preserveHoodieMetadata", "missingSchedulePartitions"]
    rec = am.read_avro_metadata(data, am.COMPACTION_PLAN)
    assert rec["missingSchedulePartitions"] is None and rec["version"] == 2 and rec["preserveHoodieMetadata"] is True
    assert rec["operations"][0]["deltaFilePaths"] == [".f1_20250101000000000.log.1_0-1-0"]


def test_fast_operation_equals_the_constructor():
    from airflow_hudi_etc.hudi.protocol.plan import LinkOp, Operation, operation

    args = dict(partition="p=1", file_id="f-0", base_instant="20240101000000000", base_file="f-0_1-2-3_x.parquet",
                compact_logs=(".f-0_20240101000000000.log.1_0-1-2",),
                links=(LinkOp(link="p=1/.f-0_2.log.1_999999999-0-0", target="p=1/.f-0_1.log.2_0-1-2"),),
                metrics={"TOTAL_LOG_FILES": 1.0})
    fast, plain = operation(**args), Operation(**args)
    assert fast == plain and hash(fast.compact_logs) == hash(plain.compact_logs)
    assert fast.path("x") == "p=1/x"
