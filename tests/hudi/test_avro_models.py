"""Avro timeline metadata files (airflow_hudi_etc.hudi.timeline.avro_models).

Real Java-written files come from the hudi-rs fixture zips (read in memory, never copied here):
the v6 rollback plan/metadata and the v8 compaction plan. "Java's schema" below means the writer
schema embedded in those files, which is the generated class's schema Java also reads with.
"""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import fastavro
import pytest

from airflow_hudi_etc.hudi.timeline import avro_models as am
from airflow_hudi_etc.hudi.errors import InvalidTimelineError
from paths import FIXTURES, REPO

ROLLBACK_ZIP = "sample_table/mor/parquet/v6_nonpartitioned_rollback.zip"
ROLLBACK_DIR = "v6_nonpartitioned_rollback/.hoodie/"
V8_ZIP = "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip"
V8_PLAN = "v8_trips_8i3u1d/.hoodie/timeline/20251220210129235.compaction.requested"

FAILED = "20250126040826878"  # the failed deltacommit rolled back (fixtures README)
ROLLBACK_TS = "20250126040936578"
FG = "0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0"
NS = "org.apache.hudi.avro.model"

ALL_SCHEMAS = {
    "HoodieCompactionPlan": am.COMPACTION_PLAN,
    "HoodieCleanerPlan": am.CLEANER_PLAN,
    "HoodieCleanMetadata": am.CLEAN_METADATA,
    "HoodieRollbackPlan": am.ROLLBACK_PLAN,
    "HoodieRollbackMetadata": am.ROLLBACK_METADATA,
    "HoodieRequestedReplaceMetadata": am.REQUESTED_REPLACE_METADATA,
}


def _member(zip_rel: str, name: str) -> bytes:
    z = FIXTURES / zip_rel
    if not z.exists():
        pytest.skip(f"fixture {z} not available")
    with zipfile.ZipFile(z) as zf:
        return zf.read(name)


@pytest.fixture(scope="module")
def rb_plan() -> bytes:
    return _member(ROLLBACK_ZIP, ROLLBACK_DIR + ROLLBACK_TS + ".rollback.requested")


@pytest.fixture(scope="module")
def rb_meta() -> bytes:
    return _member(ROLLBACK_ZIP, ROLLBACK_DIR + ROLLBACK_TS + ".rollback")


@pytest.fixture(scope="module")
def v8_plan() -> bytes:
    return _member(V8_ZIP, V8_PLAN)


def java_schema(data: bytes) -> dict:
    """The writer schema embedded in a Java-written file (= the generated class schema)."""
    return fastavro.reader(io.BytesIO(data)).writer_schema


def read_with(data: bytes, reader_schema) -> list:
    return list(fastavro.reader(io.BytesIO(data), reader_schema=reader_schema))


def _named_records(schema, out=None) -> dict:
    """full name → field list, for every record defined in a (parsed) schema."""
    out = {} if out is None else out
    if isinstance(schema, list):
        for b in schema:
            _named_records(b, out)
    elif isinstance(schema, dict):
        t = schema.get("type")
        if t == "record":
            out[schema["name"]] = schema["fields"]
            for f in schema["fields"]:
                _named_records(f["type"], out)
        elif t == "array":
            _named_records(schema["items"], out)
        elif t == "map":
            _named_records(schema["values"], out)
        elif isinstance(t, (dict, list)):
            _named_records(t, out)
    return out


def _strip_links(plan: dict) -> dict:
    out = dict(plan)
    out["operations"] = [{k: v for k, v in op.items() if k != "linkOperations"} for op in plan["operations"]]
    return out


# ------------------------------------------------------------------ 1. fixtures with our schemas


def test_fixture_rollback_plan_reads_with_our_schema(rb_plan):
    [rec] = read_with(rb_plan, am.ROLLBACK_PLAN)
    assert rec == am.read_avro_metadata(rb_plan, am.ROLLBACK_PLAN)
    assert rec["instantToRollback"] == {"commitTime": FAILED, "action": "deltacommit"}
    assert rec["version"] == 1
    base_req, log_req = rec["RollbackRequests"]
    # 1) delete the base file the failed instant wrote (Java leaves fileId/latestBaseInstant "")
    assert base_req["partitionPath"] == "" and base_req["fileId"] == "" and base_req["latestBaseInstant"] == ""
    assert [Path(p).name for p in base_req["filesToBeDeleted"]] == [
        f"cd329d8f-0ce4-4654-84ab-2f769aae5034-0_1-33-44_{FAILED}.parquet"
    ]
    assert base_req["logBlocksToBeDeleted"] == {}
    # 2) the failed instant's log block in file group 0712b9f9 (README: .log.1_0-33-43 is from it)
    assert log_req["fileId"] == FG and log_req["latestBaseInstant"] == "20250126040823628"
    assert log_req["filesToBeDeleted"] == []
    [(path, size)] = log_req["logBlocksToBeDeleted"].items()
    assert Path(path).name == f".{FG}_20250126040823628.log.1_0-33-43" and size == 11828


def test_fixture_rollback_metadata_reads_with_our_schema(rb_meta):
    [rec] = read_with(rb_meta, am.ROLLBACK_METADATA)
    assert rec == am.read_avro_metadata(rb_meta, am.ROLLBACK_METADATA)
    assert rec["startRollbackTime"] == ROLLBACK_TS
    assert rec["commitsRollback"] == [FAILED]
    assert rec["instantsRollback"] == [{"commitTime": FAILED, "action": "deltacommit"}]
    assert rec["totalFilesDeleted"] == 1 and rec["timeTakenInMillis"] == 195 and rec["version"] == 1
    [(part, pm)] = rec["partitionMetadata"].items()
    assert part == "" and pm["partitionPath"] == ""
    assert [Path(p).name for p in pm["successDeleteFiles"]] == [
        f"cd329d8f-0ce4-4654-84ab-2f769aae5034-0_1-33-44_{FAILED}.parquet"
    ]
    assert pm["failedDeleteFiles"] == []
    # README: .log.2_1-0-1 holds the rollback COMMAND block, .log.1_0-33-43 the failed data block
    assert {Path(k).name: v for k, v in pm["rollbackLogFiles"].items()} == {f".{FG}_20250126040823628.log.2_1-0-1": 105}
    assert {Path(k).name: v for k, v in pm["logFilesFromFailedCommit"].items()} == {
        f".{FG}_20250126040823628.log.1_0-33-43": 11828
    }


def test_fixture_v8_compaction_plan_reads_with_our_schema(v8_plan):
    [rec] = read_with(v8_plan, am.COMPACTION_PLAN)
    assert rec == am.read_avro_metadata(v8_plan, am.COMPACTION_PLAN)
    assert rec["version"] == 2
    assert rec["extraMetadata"] == {"_hoodie.spark.sql.writes.prepped": "true"}
    assert rec["strategy"] is None and rec["preserveHoodieMetadata"] is False
    assert rec["missingSchedulePartitions"] == []
    ops = {op["partitionPath"]: op for op in rec["operations"]}
    assert set(ops) == {"city=chennai", "city=san_francisco", "city=sao_paulo"}
    assert {op["fileId"] for op in ops.values()} == {
        "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0",
        "036ded81-9ed4-479f-bcea-7145dfa0079b-0",
        "8aa68f7e-afd6-4c94-b86c-8a886552e08d-0",
    }
    assert {op["baseInstantTime"] for op in ops.values()} == {"20251220210108078"}
    assert all(op["linkOperations"] is None for op in ops.values())  # our field, defaulted
    ch = ops["city=chennai"]
    # README: chennai got an AVRO_DATA log @127080 and a DELETE log @128625 before the compaction
    assert ch["deltaFilePaths"] == [
        ".6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210127080.log.1_0-1072-3078",
        ".6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210128625.log.1_0-1097-3150",
    ]
    assert ch["dataFilePath"] == "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_2-986-2794_20251220210108078.parquet"
    assert ch["metrics"]["TOTAL_LOG_FILES"] == 2.0 and ch["metrics"]["TOTAL_LOG_FILES_SIZE"] == 2117.0
    assert ops["city=sao_paulo"]["deltaFilePaths"] == [
        ".8aa68f7e-afd6-4c94-b86c-8a886552e08d-0_20251220210125441.log.1_0-1047-3000"
    ]


@pytest.mark.parametrize(
    "which,ours",
    [("rb_plan", am.ROLLBACK_PLAN), ("rb_meta", am.ROLLBACK_METADATA), ("v8_plan", am.COMPACTION_PLAN)],
)
def test_our_schemas_are_a_superset_of_javas(which, ours, request):
    """Every record and field of Java's schema exists in ours; our extra fields have defaults."""
    java = _named_records(java_schema(request.getfixturevalue(which)))
    mine = _named_records(ours)
    for name, jfields in java.items():
        assert name in mine, name
        mfields = {f["name"]: f for f in mine[name]}
        assert {f["name"] for f in jfields} <= set(mfields), name
        for extra in set(mfields) - {f["name"] for f in jfields}:
            assert "default" in mfields[extra], f"{name}.{extra} needs a default"


# ------------------------------------------------------------------ 2. Java's schema reads ours


def _rebuild_rollback_plan(rec: dict) -> dict:
    return am.rollback_plan(
        (rec["instantToRollback"]["commitTime"], rec["instantToRollback"]["action"]),
        [
            am.rollback_request(
                r["partitionPath"], r["fileId"], r["latestBaseInstant"],
                r["filesToBeDeleted"], r["logBlocksToBeDeleted"],
            )
            for r in rec["RollbackRequests"]
        ],
    )


def _rebuild_rollback_metadata(rec: dict) -> dict:
    return am.rollback_metadata(
        rec["startRollbackTime"],
        rec["commitsRollback"],
        rec["partitionMetadata"],
        [(i["commitTime"], i["action"]) for i in rec["instantsRollback"]],
        time_taken_ms=rec["timeTakenInMillis"],
    )


def test_java_schema_reads_our_rollback_plan(rb_plan):
    [orig] = read_with(rb_plan, None)
    ours = am.write_avro_metadata(am.ROLLBACK_PLAN, _rebuild_rollback_plan(orig))
    assert read_with(ours, java_schema(rb_plan)) == [orig]


def test_java_schema_reads_our_rollback_metadata(rb_meta):
    [orig] = read_with(rb_meta, None)
    ours = am.write_avro_metadata(am.ROLLBACK_METADATA, _rebuild_rollback_metadata(orig))
    assert read_with(ours, java_schema(rb_meta)) == [orig]


def _plan_like_v8(orig: dict, links: bool) -> dict:
    ops = []
    for o in orig["operations"]:
        ln = None
        if links:
            ln = [(f".{o['fileId']}_20251220210129235.log.{i + 1}_0-0-0", t) for i, t in enumerate(o["deltaFilePaths"])]
        ops.append(
            am.compaction_operation(
                o["baseInstantTime"], o["fileId"], o["partitionPath"], o["dataFilePath"], o["deltaFilePaths"],
                o["metrics"], ln,
            )
        )
    return am.compaction_plan(ops, orig["extraMetadata"], missing_schedule_partitions=orig["missingSchedulePartitions"])


def test_java_schema_reads_our_compaction_plan(v8_plan):
    [orig] = read_with(v8_plan, None)
    ours = am.write_avro_metadata(am.COMPACTION_PLAN, _plan_like_v8(orig, links=False))
    assert read_with(ours, java_schema(v8_plan)) == [orig]


# ------------------------------------------------------------------ 4. the linkOperations extension


def test_link_operations_are_dropped_by_javas_schema_not_an_error(v8_plan):
    [orig] = read_with(v8_plan, None)
    plan = _plan_like_v8(orig, links=True)
    data = am.write_avro_metadata(am.COMPACTION_PLAN, plan)
    assert "HoodieEtcLinkOperation" in fastavro.reader(io.BytesIO(data)).metadata["avro.schema"]
    # Java (its class schema as reader): the operations survive, the extra field is skipped
    [seen_by_java] = read_with(data, java_schema(v8_plan))
    assert seen_by_java == orig
    assert all("linkOperations" not in op for op in seen_by_java["operations"])
    assert am.read_avro_metadata(data, java_schema(v8_plan)) == orig
    # we (our schema, or the embedded writer schema) still see the links
    for back in (am.read_avro_metadata(data), am.read_avro_metadata(data, am.COMPACTION_PLAN)):
        ch = next(op for op in back["operations"] if op["partitionPath"] == "city=chennai")
        new = ".6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210129235.log.{}_0-0-0"
        assert ch["linkOperations"] == [
            {"link": new.format(1), "target": ch["deltaFilePaths"][0]},
            {"link": new.format(2), "target": ch["deltaFilePaths"][1]},
        ]


# An old (0.x) HoodieCompactionPlan avsc: no strategy/preserveHoodieMetadata/missingSchedulePartitions.
# Reading our superset file with it simulates an older Java reader.
_S = {"type": "string", "avro.java.string": "String"}
OLD_JAVA_PLAN = {
    "type": "record", "name": "HoodieCompactionPlan", "namespace": NS,
    "fields": [
        {"name": "operations", "default": None, "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "HoodieCompactionOperation", "fields": [
                {"name": "baseInstantTime", "type": ["null", _S]},
                {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": _S}], "default": None},
                {"name": "dataFilePath", "type": ["null", _S], "default": None},
                {"name": "fileId", "type": ["null", _S]},
                {"name": "partitionPath", "type": ["null", _S], "default": None},
                {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
                {"name": "bootstrapFilePath", "type": ["null", _S], "default": None},
            ]}}]},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _S}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}


def test_old_java_plan_schema_reads_our_plan_with_links():
    op = am.compaction_operation("001", "fg-1", "", "fg-1_0-1-1_001.parquet", [".fg-1_001.log.1_0-1-1"],
                                 link_operations=[(".fg-1_002.log.1_0-0-0", ".fg-1_001.log.2_0-1-1")])
    data = am.write_avro_metadata(am.COMPACTION_PLAN, am.compaction_plan([op], {"hudi_etc.threshold": 1700000000000}))
    [rec] = read_with(data, OLD_JAVA_PLAN)
    assert rec == {
        "operations": [{"baseInstantTime": "001", "deltaFilePaths": [".fg-1_001.log.1_0-1-1"],
                        "dataFilePath": "fg-1_0-1-1_001.parquet", "fileId": "fg-1", "partitionPath": "",
                        "metrics": {}, "bootstrapFilePath": None}],
        "extraMetadata": {"hudi_etc.threshold": "1700000000000"},
        "version": 2,
    }


# ------------------------------------------------------------------ 3. builders, determinism, reading


def _cluster_plan():
    return am.clustering_plan(
        [am.clustering_group([am.slice_info("fg-1", "p=1", "fg-1_0-1-1_001.parquet", [".fg-1_001.log.1_0-1-1"])],
                             {"TOTAL_LOG_FILES": 1})],
        "org.apache.hudi.client.clustering.run.strategy.SparkSortAndSizeExecutionStrategy",
        {"hoodie.clustering.plan.strategy.sort.columns": "ts"},
    )


def _samples():
    op = am.compaction_operation("001", "fg-1", "p=1", None, [".fg-1_001.log.1_0-1-1"], {"TOTAL_LOG_FILES": 1},
                                 [(".fg-1_002.log.1_0-0-0", ".fg-1_001.log.2_0-1-1")])
    return {
        "compaction_plan": (am.COMPACTION_PLAN, am.compaction_plan(
            [op, am.compaction_operation("001", "fg-2", "p=2", "fg-2_0-1-1_001.parquet", [])],
            extra_metadata={"hudi_etc.threshold": 17, "hudi_etc.partial": True},
            strategy={"compactorClassName": "x.Y", "strategyParams": {"a": "b"}})),
        "rollback_plan": (am.ROLLBACK_PLAN, am.rollback_plan(("002", "deltacommit"), [
            am.rollback_request("p=1", None, None, ["p=1/fg-3_0-1-1_002.parquet"]),
            am.rollback_request("p=1", "fg-1", "001", [], {"p=1/.fg-1_001.log.2_0-1-1": 123}),
        ])),
        "rollback_metadata": (am.ROLLBACK_METADATA, am.rollback_metadata(
            "003", ["002"], {"p=1": {"successDeleteFiles": ["a", "b"], "rollbackLogFiles": {"l": 7}}},
            [("002", "deltacommit")], time_taken_ms=12)),
        "cleaner_plan": (am.CLEANER_PLAN, am.cleaner_plan(
            ("001", "commit"), "KEEP_LATEST_COMMITS",
            {"p=1": ["/t/p=1/fg-1_0-1-1_000.parquet", ("/t/p=1/x.parquet", True)]}, ["p=9"],
            last_completed_commit_timestamp="002", extra_metadata={"k": "v"})),
        "clean_metadata": (am.CLEAN_METADATA, am.clean_metadata(
            "004", "001",
            {"p=1": {"policy": "KEEP_LATEST_COMMITS", "successDeleteFiles": ["f1", "f2"], "failedDeleteFiles": ["f3"]}},
            time_taken_ms=5, last_completed_commit_timestamp="002")),
        "replace_cluster": (am.REQUESTED_REPLACE_METADATA, am.requested_replace_metadata("CLUSTER", _cluster_plan())),
        "replace_overwrite": (
            am.REQUESTED_REPLACE_METADATA, am.requested_replace_metadata("INSERT_OVERWRITE", None, {"a": 1})
        ),
    }


@pytest.mark.parametrize("name", sorted(_samples()))
def test_builder_round_trip(name):
    schema, rec = _samples()[name]
    data = am.write_avro_metadata(schema, rec)
    assert data[:4] == b"Obj\x01"
    r = fastavro.reader(io.BytesIO(data))
    assert r.codec == "null" and r.writer_schema["name"] == f"{NS}.{schema['name'].rsplit('.', 1)[-1]}"
    assert am.read_avro_metadata(data) == rec  # embedded writer schema
    assert am.read_avro_metadata(data, schema) == rec  # our schema as reader
    assert read_with(data, None) == [rec]


def test_builder_derived_values():
    s = _samples()
    rm = s["rollback_metadata"][1]
    assert rm["totalFilesDeleted"] == 2 and rm["partitionMetadata"]["p=1"]["partitionPath"] == "p=1"
    assert rm["partitionMetadata"]["p=1"]["failedDeleteFiles"] == []
    assert rm["instantsRollback"] == [{"commitTime": "002", "action": "deltacommit"}]
    cm = s["clean_metadata"][1]
    assert cm["totalFilesDeleted"] == 2 and cm["version"] == 2
    assert cm["partitionMetadata"]["p=1"]["deletePathPatterns"] == ["f1", "f2", "f3"]
    cp = s["cleaner_plan"][1]
    assert cp["earliestInstantToRetain"] == {"timestamp": "001", "action": "commit", "state": "COMPLETED"}
    assert cp["filePathsToBeDeletedPerPartition"]["p=1"] == [
        {"filePath": "/t/p=1/fg-1_0-1-1_000.parquet", "isBootstrapBaseFile": False},
        {"filePath": "/t/p=1/x.parquet", "isBootstrapBaseFile": True},
    ]
    assert cp["filesToBeDeletedPerPartition"] == {} and cp["version"] == 2
    plan = s["compaction_plan"][1]
    assert plan["version"] == 2 and plan["extraMetadata"] == {"hudi_etc.threshold": "17", "hudi_etc.partial": "true"}
    assert plan["operations"][1]["linkOperations"] is None and plan["operations"][0]["dataFilePath"] is None
    rp = s["rollback_plan"][1]
    assert rp["RollbackRequests"][0]["fileId"] == "" and rp["RollbackRequests"][0]["logBlocksToBeDeleted"] == {}


def test_deterministic_bytes():
    a = {k: am.write_avro_metadata(*v) for k, v in _samples().items()}
    b = {k: am.write_avro_metadata(*v) for k, v in _samples().items()}
    assert a == b
    assert len(set(a.values())) == len(a)
    # a one-character change gives different bytes (and a different sync marker)
    s, rec = _samples()["rollback_plan"]
    rec["instantToRollback"]["commitTime"] = "009"
    other = am.write_avro_metadata(s, rec)
    assert other != a["rollback_plan"] and other[-16:] != a["rollback_plan"][-16:]


def test_write_rejects_ill_typed_records():
    op = am.compaction_operation("001", "fg-1", "", None, [])
    with pytest.raises(ValueError):
        am.write_avro_metadata(am.COMPACTION_PLAN, am.compaction_plan([{**op, "bogus": 1}]))
    with pytest.raises(ValueError):  # baseInstantTime has no default: must be present
        no_base = {k: v for k, v in op.items() if k != "baseInstantTime"}
        am.write_avro_metadata(am.COMPACTION_PLAN, am.compaction_plan([no_base]))
    with pytest.raises(ValueError):
        am.write_avro_metadata(am.COMPACTION_PLAN, am.compaction_plan([{**op, "deltaFilePaths": [5]}]))
    with pytest.raises(ValueError):
        am.write_avro_metadata(am.ROLLBACK_METADATA, {"startRollbackTime": "1"})


def test_builders_validate_inputs():
    with pytest.raises(ValueError):  # plan v2 holds bare names
        am.compaction_operation("001", "fg", "p", None, ["p/.fg_001.log.1_0-1-1"])
    with pytest.raises(ValueError):
        am.compaction_operation("", "fg", "p", None, [])
    with pytest.raises(ValueError):
        am.compaction_operation("001", "fg", "p", None, ".fg_001.log.1_0-1-1")  # a str, not a list
    with pytest.raises(ValueError):
        am.compaction_operation("001", "fg", "p", None, [], link_operations=[("a/b", "c")])
    op = am.compaction_operation("001", "fg", "p", None, [])
    with pytest.raises(ValueError):
        am.compaction_plan([op, op])
    with pytest.raises(ValueError):
        am.compaction_plan([op], extra_metadata={"k": None})
    with pytest.raises(ValueError):
        am.requested_replace_metadata("CLUSTER")
    with pytest.raises(ValueError):
        am.rollback_plan(("001",), [])


def test_read_refusals(monkeypatch):
    good = am.write_avro_metadata(*_samples()["rollback_plan"])
    with pytest.raises(InvalidTimelineError):
        am.read_avro_metadata(b"")
    assert am.read_avro_metadata(b"", allow_empty=True) is None
    with pytest.raises(InvalidTimelineError):
        am.read_avro_metadata(b"{}")  # a JSON commit file, not Avro
    with pytest.raises(InvalidTimelineError):
        am.read_avro_metadata(good + b"junk")
    with pytest.raises(InvalidTimelineError):  # record-type mismatch under resolution
        am.read_avro_metadata(good, am.COMPACTION_PLAN)
    with pytest.raises(InvalidTimelineError):
        am.read_avro_metadata("not bytes")
    # two records / no record / a non-record value
    rec_r = {"type": "record", "name": "R", "fields": [{"name": "x", "type": "string"}]}
    for records, schema in (([{"x": "a"}, {"x": "b"}], rec_r), ([], rec_r), (["a"], "string")):
        buf = io.BytesIO()
        fastavro.writer(buf, fastavro.parse_schema(schema), records)
        with pytest.raises(InvalidTimelineError):
            am.read_avro_metadata(buf.getvalue())
    monkeypatch.setattr(am, "MAX_METADATA_BYTES", len(good) - 1)
    with pytest.raises(InvalidTimelineError, match="too large"):
        am.read_avro_metadata(good)


def test_zero_size_array_items_cannot_hang():
    """A block count of ~2^62 on an array of empty records would loop forever in the decoder."""
    schema = fastavro.parse_schema({"type": "record", "name": "R", "fields": [
        {"name": "xs", "type": {"type": "array", "items": {"type": "record", "name": "E", "fields": []}}}]})
    buf = io.BytesIO()
    fastavro.writer(buf, schema, [{"xs": [{}, {}, {}]}], sync_marker=b"S" * 16)
    data = buf.getvalue()
    # container block: record count 1, byte size 2, then the record: array count 3 (zigzag 6), end 0
    block = b"\x02\x04" + b"\x06\x00" + b"S" * 16
    assert data.count(block) == 1 and data.endswith(block)
    huge = b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f"  # zigzag of 2^62-1
    body = huge + b"\x00"
    bad = data[: -len(block)] + b"\x02" + bytes([2 * len(body)]) + body + b"S" * 16
    # Without the guard fastavro's C loop neither returns nor sees signals and allocates a dict per
    # item, so decode in a memory-capped child process with a timeout: a regression fails, not hangs.
    child = (
        "import resource, sys\n"
        "resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))\n"
        "from airflow_hudi_etc.hudi.timeline import avro_models as am\n"
        "from airflow_hudi_etc.hudi.errors import InvalidTimelineError\n"
        "try:\n"
        "    am.read_avro_metadata(sys.stdin.buffer.read())\n"
        "except InvalidTimelineError as e:\n"
        "    print('INVALID', e)\n"
    )
    repo = REPO
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(repo), os.environ.get("PYTHONPATH", "")])}
    try:
        out = subprocess.run(
            [sys.executable, "-c", child], input=bad, capture_output=True, timeout=30, cwd=repo, env=env
        )
    except subprocess.TimeoutExpired:
        pytest.fail("decoding a huge count of zero-size array items hung")
    assert out.returncode == 0, out.stderr.decode()[-500:]
    assert out.stdout.decode().startswith("INVALID") and "zero-size" in out.stdout.decode()


def _mutate(rng: random.Random, data: bytes) -> bytes:
    d = bytearray(data)
    k = rng.randrange(6)
    if k == 0:
        for _ in range(rng.randint(1, 4)):
            j = rng.randrange(len(d))
            d[j] ^= 1 << rng.randrange(8)
    elif k == 1:
        d[rng.randrange(len(d))] = rng.randrange(256)
    elif k == 2:
        d = d[: rng.randrange(len(d))]
    elif k == 3:
        j = rng.randrange(len(d))
        d[j:j] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    elif k == 4:  # a huge varint (length / count field)
        j = rng.randrange(len(d))
        d[j : j + 1] = b"\xfe\xff\xff\xff\xff\xff\xff\xff\x7f"
    else:
        j = rng.randrange(len(d))
        del d[j : j + rng.randint(1, 8)]
    return bytes(d)


def test_fuzzed_plans_only_raise_invalid_timeline():
    schema, rec = _samples()["compaction_plan"]
    plan = am.write_avro_metadata(schema, rec)
    rng = random.Random(20240607)
    outcomes = {"ok": 0, "invalid": 0}
    for _ in range(2000):
        bad = _mutate(rng, plan)
        for reader in (None, am.COMPACTION_PLAN):
            try:
                got = am.read_avro_metadata(bad, reader)
            except InvalidTimelineError:
                outcomes["invalid"] += 1
            else:
                assert isinstance(got, dict)
                outcomes["ok"] += 1
    assert outcomes["invalid"] > 2000  # most mutations are caught, none escapes as another type


# ------------------------------------------------------------------ is_clustering_request

# Java's own HoodieRequestedReplaceMetadata schema, with Hudi's spec-invalid defaults as generated
# (operationType default "", clusteringPlan record-first union with default null).
JAVA_REPLACE = {
    "type": "record", "name": "HoodieRequestedReplaceMetadata", "namespace": NS,
    "fields": [
        {"name": "operationType", "type": ["null", _S], "default": ""},
        {"name": "clusteringPlan", "default": None, "type": [{
            "type": "record", "name": "HoodieClusteringPlan", "fields": [
                {"name": "inputGroups", "default": None, "type": ["null", {"type": "array", "items": {
                    "type": "record", "name": "HoodieClusteringGroup", "fields": [
                        {"name": "slices", "default": None, "type": ["null", {"type": "array", "items": {
                            "type": "record", "name": "HoodieSliceInfo", "fields": [
                                {"name": "dataFilePath", "type": ["null", _S], "default": None},
                                {"name": "deltaFilePaths", "default": None,
                                 "type": ["null", {"type": "array", "items": _S}]},
                                {"name": "fileId", "type": ["null", _S]},
                                {"name": "partitionPath", "type": ["null", _S], "default": None},
                                {"name": "bootstrapFilePath", "type": ["null", _S], "default": None},
                                {"name": "version", "type": ["int", "null"], "default": 1}]}}]},
                        {"name": "metrics", "type": ["null", {"type": "map", "values": "double"}], "default": None},
                        {"name": "numOutputFileGroups", "type": ["int", "null"], "default": 1},
                        {"name": "version", "type": ["int", "null"], "default": 1}]}}]},
                {"name": "strategy", "default": None, "type": [{
                    "type": "record", "name": "HoodieClusteringStrategy", "fields": [
                        {"name": "strategyClassName", "type": ["null", _S], "default": None},
                        {"name": "strategyParams", "type": ["null", {"type": "map", "values": _S}], "default": None},
                        {"name": "version", "type": ["int", "null"], "default": 1}]}, "null"]},
                {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _S}], "default": None},
                {"name": "version", "type": ["int", "null"], "default": 1}]}, "null"]},
        {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _S}], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
    ],
}


def _java_written(schema: dict, rec: dict) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [rec])
    return buf.getvalue()


def test_is_clustering_request():
    s = _samples()
    assert am.is_clustering_request(b"") is False  # insert_overwrite-style empty requested file
    assert am.is_clustering_request(am.write_avro_metadata(*s["replace_cluster"])) is True
    assert am.is_clustering_request(am.write_avro_metadata(*s["replace_overwrite"])) is False
    garbage = b"Obj\x01" + bytes(range(200))
    assert am.is_clustering_request(garbage) is False
    assert am.is_clustering_request(b"{\n}") is False
    with pytest.raises(InvalidTimelineError):  # what Java does with a non-empty unparseable file
        am.is_clustering_request(garbage, strict=True)
    # another record type in the file (a compaction plan) is not a clustering request
    assert am.is_clustering_request(am.write_avro_metadata(*s["compaction_plan"])) is False
    # Java-shaped files (spec-invalid defaults, [plan, null] unions) resolve against our schema
    plan = {"inputGroups": [{"slices": [{"dataFilePath": None, "deltaFilePaths": [], "fileId": "fg-1",
                                         "partitionPath": "p", "bootstrapFilePath": None, "version": 1}],
                             "metrics": {}, "numOutputFileGroups": 1, "version": 1}],
            "strategy": {"strategyClassName": "S", "strategyParams": {}, "version": 1},
            "extraMetadata": {}, "version": 1}
    java_cluster = _java_written(
        JAVA_REPLACE, {"operationType": "CLUSTER", "clusteringPlan": plan, "extraMetadata": {}, "version": 1}
    )
    assert am.is_clustering_request(java_cluster) is True
    back = am.read_avro_metadata(java_cluster, am.REQUESTED_REPLACE_METADATA)
    assert back["clusteringPlan"]["inputGroups"][0]["slices"][0]["fileId"] == "fg-1"
    assert back["clusteringPlan"]["preserveHoodieMetadata"] is None  # not in the old writer schema
    java_ovw = _java_written(
        JAVA_REPLACE, {"operationType": "INSERT_OVERWRITE", "clusteringPlan": None, "extraMetadata": None, "version": 1}
    )
    assert am.is_clustering_request(java_ovw) is False
    # our CLUSTER file read by Java's schema (record-first union on its side)
    [seen] = read_with(am.write_avro_metadata(*s["replace_cluster"]), JAVA_REPLACE)
    assert seen["operationType"] == "CLUSTER"
    assert seen["clusteringPlan"]["inputGroups"][0]["slices"][0]["fileId"] == "fg-1"


def test_fixed_defaults_apply_when_writer_lacks_the_field():
    """A writer without operationType/clusteringPlan: our (valid) defaults fill in null."""
    minimal = {"type": "record", "name": "HoodieRequestedReplaceMetadata", "namespace": NS,
               "fields": [{"name": "version", "type": ["int", "null"], "default": 1}]}
    rec = am.read_avro_metadata(_java_written(minimal, {"version": 1}), am.REQUESTED_REPLACE_METADATA)
    assert rec == {"operationType": None, "clusteringPlan": None, "extraMetadata": None, "version": 1}


# ------------------------------------------------------------------ schema hygiene


def _default_ok(t, v, names) -> bool:
    """Avro spec: a default must be valid for the type; for a union, for its FIRST branch."""
    if isinstance(t, list):
        return _default_ok(t[0], v, names)
    if isinstance(t, str):
        if t in names:
            t = names[t]
        else:
            return {
                "null": v is None, "boolean": isinstance(v, bool), "string": isinstance(v, str),
                "int": isinstance(v, int) and not isinstance(v, bool),
                "long": isinstance(v, int) and not isinstance(v, bool),
                "double": isinstance(v, (int, float)), "float": isinstance(v, (int, float)),
                "bytes": isinstance(v, str),
            }[t]
    tt = t["type"]
    if tt in ("record",):
        return isinstance(v, dict)
    if tt == "array":
        return isinstance(v, list)
    if tt == "map":
        return isinstance(v, dict)
    return _default_ok(tt, v, names)


def _walk(schema, visit):
    if isinstance(schema, list):
        for b in schema:
            _walk(b, visit)
    elif isinstance(schema, dict):
        visit(schema)
        t = schema.get("type")
        if t == "record":
            for f in schema["fields"]:
                _walk(f["type"], visit)
        elif t == "array":
            _walk(schema["items"], visit)
        elif t == "map":
            _walk(schema["values"], visit)
        elif isinstance(t, (dict, list)):
            _walk(t, visit)


@pytest.mark.parametrize("name", sorted(ALL_SCHEMAS))
def test_schema_hygiene(name):
    schema = ALL_SCHEMAS[name]
    assert schema["name"] == f"{NS}.{name}"
    records = _named_records(schema)
    names = {}
    _walk(schema, lambda s: names.__setitem__(s["name"], s) if s.get("type") == "record" else None)
    bad_defaults, bare_strings = [], []

    def visit(s):
        if s.get("type") == "record":
            assert s["name"].startswith(NS + "."), s["name"]
            for f in s["fields"]:
                if "default" in f and not _default_ok(f["type"], f["default"], names):
                    bad_defaults.append(f"{s['name']}.{f['name']}")
        if s.get("type") in ("string", "map") and s.get("avro.java.string") != "String":
            bare_strings.append(s)

    _walk(schema, visit)
    for fields in records.values():  # union branches / items written as plain "string"
        for f in fields:
            ts = f["type"] if isinstance(f["type"], list) else [f["type"]]
            assert "string" not in ts, f["name"]
    assert bad_defaults == [] and bare_strings == []
