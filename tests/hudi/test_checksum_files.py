"""Hadoop's checksum files (``.<name>.crc``), which Java Hudi's writers leave next to every file
they write on local storage, are no log files (found by the real-Java interleavings,
tests/java/test_java_interleavings.py: our schedule failed with "file id '.<id>' may only hold
[A-Za-z0-9-]" after a Java write, taking ``..<id>_<instant>.log.1_<token>.crc`` for a log of
file group ``.<id>``). Java never sees them: Hadoop's file system hides them from its listings."""

from __future__ import annotations

import os

import pyarrow as pa

from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.validate import validate
from airflow_hudi_etc.hudi.logformat.names import parse_log_file_name
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch

T0 = 1_767_225_600_000
H = 3_600_000


def test_a_checksum_file_is_no_log_file():
    log = ".62118ce0-d4c2-45f9-8dae-f7f2f05ec80d-0_20261126081533123.log.1_0-10-20"
    assert parse_log_file_name(log).file_id == "62118ce0-d4c2-45f9-8dae-f7f2f05ec80d-0"
    assert parse_log_file_name(f".{log}.crc") is None


def test_checksum_files_next_to_logs_and_bases_change_nothing(tmp_path):
    path = str(tmp_path / "t")
    init_table(path, table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
               partition_field="region")
    schema = pa.schema([("key", pa.string()), ("ts", pa.int64()), ("event_time", pa.int64()), ("region", pa.string())])
    write_batch(path, pa.Table.from_pylist([{"key": f"k{i}", "ts": 1, "event_time": T0, "region": "a"}
                                            for i in range(3)], schema=schema))
    write_batch(path, pa.Table.from_pylist([{"key": "k1", "ts": 2, "event_time": T0 + H, "region": "a"}], schema=schema))
    part = os.path.join(path, "region=a")
    for name in os.listdir(part):  # what Hadoop's LocalFileSystem writes beside each file
        open(os.path.join(part, f".{name}.crc"), "wb").write(b"crc\x00")
    res = schedule(path, data_latency="1h", compaction_time="2026-01-01T05:00:00Z", exact_split=True, link_mode="copy")
    assert res.instant, res.reason
    assert execute(path)["status"] == "completed"
    after = HudiTable.load(path).read()
    assert {r["key"]: r["ts"] for r in after.to_pylist()} == {"k0": 1, "k1": 2, "k2": 1}
    assert validate(path)["ok"], validate(path)["problems"]
