"""Hand-made log files on a one-file-group table of ours: the merge rules' test bed (read by our
reader, hudi-rs and real Java)."""

from __future__ import annotations

import json

import pyarrow as pa

from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.config.schema import with_meta_fields
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch


def make_table(tmp_path, payload="overwrite-latest"):
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="id", precombine_field="ts", event_time_field="et", payload=payload)
    write_batch(str(path), pa.table({"id": ["a", "b"], "ts": [10, 10], "et": [1, 1], "v": ["base-a", "base-b"]}))
    return path


def add_log(path, instant, blocks: list[bytes], *, committed=True, version=None):
    """Append a hand-made log file to the only file group and (optionally) commit its instant."""
    t = HudiTable.load(str(path))
    s = t.file_system_view().latest_slices()[0]
    v = version or (max([lg.version for lg in s.log_files], default=0) + 1)
    name = lf.format_log_file_name(s.file_id, s.base_instant, v, "0-9-0")
    (path / name).write_bytes(b"".join(blocks))
    hoodie = path / ".hoodie"
    (hoodie / f"{instant}.deltacommit.requested").write_bytes(b"")
    if committed:
        meta = {"partitionToWriteStats": {"": [{"fileId": s.file_id, "path": name, "prevCommit": s.base_instant}]},
                "compacted": False, "extraMetadata": {"schema": json.dumps(t.avro_schema)}, "operationType": "UPSERT"}
        (hoodie / f"{instant}.deltacommit").write_text(json.dumps(meta))


def data_block(path, instant, rows):
    schema = json.dumps(with_meta_fields(HudiTable.load(str(path)).avro_schema))
    recs = [{"_hoodie_commit_time": instant, "_hoodie_commit_seqno": f"{instant}_0_{i}", "_hoodie_record_key": r["id"],
             "_hoodie_partition_path": "", "_hoodie_file_name": "x", "et": 1, **r} for i, r in enumerate(rows)]
    return lf.encode_data_block(instant, schema, recs)


def values(table):
    return {r["id"]: r["v"] for r in table.to_pylist()}


def rollback_behind_another_write(tmp_path) -> tuple:
    """A table whose slice holds a failed write's block, another writer's committed block in a
    later log file, then the failed write's rollback block; the failed instant is older than the
    timeline's first commit (readers take it as archived, hence committed). Its path and what a
    reader must read: the rollback hides the failed block although it is not the last one queued."""
    path = make_table(tmp_path)
    failed = "20000101000000001"  # before the timeline starts (the base write is of today)
    add_log(path, failed, [data_block(path, failed, [{"id": "a", "ts": 99, "v": "failed"}])], committed=False)
    (path / ".hoodie" / f"{failed}.deltacommit.requested").unlink()  # rolled back: gone from the timeline
    ok = "30000101000000001"
    add_log(path, ok, [data_block(path, ok, [{"id": "b", "ts": 99, "v": "new-b"}])])
    rb = "30000101000000002"
    add_log(path, rb, [lf.encode_rollback_block(rb, failed)])
    return path, {"a": "base-a", "b": "new-b"}
