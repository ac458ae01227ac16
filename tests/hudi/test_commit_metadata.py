"""Commit metadata built the one way (typed :class:`WriteStat` / :class:`CommitMetadata`), against
hand-written JSON: the keys and their order Java 0.14's Jackson reads (HoodieWriteStat,
HoodieDeltaWriteStat) and our writers have always written, and the layout-2 Avro record."""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from airflow_hudi_etc.hudi.format import V6, V8
from airflow_hudi_etc.hudi.timeline.commits import CommitMetadata, RuntimeStats, WriteStat, commit_bytes

BASE = {
    "fileId": "f1-0", "path": "p=a/f1-0_0-1-0_20260101000000000.parquet", "cdcStats": None, "prevCommit": "null",
    "numWrites": 3, "numDeletes": 0, "numUpdateWrites": 0, "numInserts": 3, "totalWriteBytes": 4096,
    "totalWriteErrors": 0, "tempPath": None, "partitionPath": "p=a", "totalLogRecords": 0,
    "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0,
    "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": 4096, "minEventTime": 1000,
    "maxEventTime": 2000, "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 7},
}
DELTA = {
    "fileId": "f1-0", "path": "p=a/.f1-0_20260101000000000.log.2_0-1-0", "cdcStats": None,
    "prevCommit": "20260101000000000", "numWrites": 2, "numDeletes": 0, "numUpdateWrites": 2, "numInserts": 0,
    "totalWriteBytes": 512, "totalWriteErrors": 0, "tempPath": None, "partitionPath": "p=a", "totalLogRecords": 0,
    "totalLogFilesCompacted": 0, "totalLogSizeCompacted": 0, "totalUpdatedRecordsCompacted": 0, "totalLogBlocks": 0,
    "totalCorruptLogBlock": 0, "totalRollbackBlocks": 0, "fileSizeInBytes": 512, "minEventTime": 1500,
    "maxEventTime": 2500, "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": 9, "totalCreateTime": 0},
    "logVersion": 2, "logOffset": 0, "baseFile": "f1-0_0-1-0_20260101000000000.parquet",
    "logFiles": [".f1-0_20260101000000000.log.2_0-1-0"], "recordsStats": {"val": None},
    "hoodieEtcOrdering": {"data": 2, "deletes": 0, "min": 1, "max": 2},
}
META = {
    "partitionToWriteStats": {"p=a": [BASE, DELTA]}, "compacted": False,
    "extraMetadata": {"schema": '{"type":"record","name":"t","fields":[]}'}, "operationType": "UPSERT",
}


def _typed() -> CommitMetadata:
    base = WriteStat.for_base(fileId="f1-0", path="p=a/f1-0_0-1-0_20260101000000000.parquet", partitionPath="p=a",
                              prevCommit=None, numWrites=3, numInserts=3, file_size=4096, minEventTime=1000,
                              maxEventTime=2000,
                              runtimeStats=RuntimeStats(totalScanTime=0, totalCreateTime=7, totalUpsertTime=0))
    delta = WriteStat.for_log(fileId="f1-0", path="p=a/.f1-0_20260101000000000.log.2_0-1-0", partitionPath="p=a",
                              prevCommit="20260101000000000", numWrites=2, numUpdateWrites=2, file_size=512,
                              minEventTime=1500, maxEventTime=2500, baseFile="f1-0_0-1-0_20260101000000000.parquet",
                              logFiles=[".f1-0_20260101000000000.log.2_0-1-0"], logVersion=2,
                              runtimeStats=RuntimeStats(totalScanTime=0, totalCreateTime=0, totalUpsertTime=9))
    delta = delta.updated(hoodieEtcOrdering={"data": 2, "deletes": 0, "min": 1, "max": 2})
    return CommitMetadata(partitionToWriteStats={"p=a": (base, delta)}, compacted=False,
                          extraMetadata={"schema": '{"type":"record","name":"t","fields":[]}'}, operationType="UPSERT")


def test_base_and_delta_stat_json_as_hand_written():
    meta = _typed()
    base, delta = meta.partitionToWriteStats["p=a"]
    assert (base.to_json(), list(base.to_json())) == (BASE, list(BASE))  # values and key order
    assert (delta.to_json(), list(delta.to_json())) == (DELTA, list(DELTA))
    assert not base.is_delta and delta.is_delta
    # layout 1: exactly Jackson-readable JSON, indent 2, in this order
    assert commit_bytes(meta, V6) == json.dumps(META, indent=2).encode()


def test_layout2_record_has_the_schema_fields_only():
    (rec,) = fastavro.reader(io.BytesIO(commit_bytes(_typed(), V8)))
    base, delta = rec["partitionToWriteStats"]["p=a"]
    assert rec["operationType"] == "UPSERT" and rec["compacted"] is False
    assert {k: base[k] for k in ("prevCommit", "numInserts", "fileSizeInBytes", "logFiles")} == {
        "prevCommit": "null", "numInserts": 3, "fileSizeInBytes": 4096, "logFiles": None}
    assert {k: delta[k] for k in ("logVersion", "logOffset", "baseFile", "logFiles", "totalLogFiles")} == {
        "logVersion": 2, "logOffset": 0, "baseFile": "f1-0_0-1-0_20260101000000000.parquet",
        "logFiles": [".f1-0_20260101000000000.log.2_0-1-0"], "totalLogFiles": None}
    assert delta["runtimeStats"] == {"totalScanTime": 0, "totalCreateTime": 0, "totalUpsertTime": 9}
    assert "recordsStats" not in delta and "hoodieEtcOrdering" not in delta  # JSON only


def test_updated_keeps_key_order_and_sets_schema_fields():
    st = WriteStat.for_log(fileId="f", path="p/.f_1.log.1_0-1-0", partitionPath="p", prevCommit="1", logFiles=["x"],
                           extra={"hoodieEtcLinkTarget": "p/t"})
    again = st.updated(minEventTime=5, prevBaseFile="b.parquet", hoodieEtcLinkTarget="p/u", hoodieEtcSplitLog=True)
    assert (again.minEventTime, again.prevBaseFile) == (5, "b.parquet") and st.minEventTime is None
    assert list(again.extra) == ["recordsStats", "hoodieEtcLinkTarget", "hoodieEtcSplitLog"]
    # a schema field a stat sets beyond Java 0.14's keys comes after them, before the extra keys
    assert list(again.to_json())[-5:] == ["logFiles", "prevBaseFile", "recordsStats", "hoodieEtcLinkTarget",
                                          "hoodieEtcSplitLog"]


def test_commit_bytes_takes_the_typed_metadata_only():
    with pytest.raises(TypeError):
        commit_bytes(META, V6)
