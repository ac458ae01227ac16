"""Parquet read from bytes we hold starts no Arrow thread and keeps no reference to those bytes.

Why: an Arrow worker thread that still holds a buffer wrapping Python bytes when the interpreter
exits cannot take the GIL to release it, and the process aborts (SIGABRT, "terminate called without
an active exception") after the command printed its result. The slow real-Java runs saw our CLI
exit -6 that way on v9 tables (the LSM history is read from bytes); a loop of 60 `hudi-etc clean`
runs on such a table aborted 2–3 times, and 0 of 150 with these reads.

The abort is a race; what causes it is not: each case runs in a fresh interpreter, where Arrow's
thread pools have not started, and counts the process's threads and the bytes' references before
and after the read. ``pq.read_table`` (the old way) is the control that shows the check can fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

_SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import pyarrow as pa, pyarrow.parquet as pq

    rows = {"instantTime": ["20260101000000000", "20260101000001000"],
            "completionTime": ["20260101000000500", "20260101000001500"],
            "_hoodie_record_key": ["k1", "k2"]}
    sink = pa.BufferOutputStream()
    pq.write_table(pa.table(rows), sink)
    data = sink.getvalue().to_pybytes()
    case, tmp = sys.argv[1], sys.argv[2]

    def run():
        if case == "control-read_table":
            return pq.read_table(pa.BufferReader(data), columns=["instantTime"]).num_rows
        if case == "read_parquet_bytes":
            from airflow_hudi_etc.hudi.logformat.parquet_data import read_parquet_bytes
            return read_parquet_bytes(data, ["instantTime"]).num_rows
        if case == "decode_parquet_content":
            from airflow_hudi_etc.hudi.logformat.parquet_data import decode_parquet_content
            return decode_parquet_content(data).num_rows
        if case == "parquet_block_keys":
            from airflow_hudi_etc.hudi.write.tag import _parquet_block_keys
            return len(_parquet_block_keys(data))
        if case == "read_lsm_instants":
            from airflow_hudi_etc.hudi.storage import Storage
            from airflow_hudi_etc.hudi.timeline.timeline_v2 import read_lsm_instants
            hist = os.path.join(tmp, "history")
            os.makedirs(hist)
            name = "20260101000000000_20260101000001500_0.parquet"
            with open(os.path.join(hist, name), "wb") as f:
                f.write(data)
            with open(os.path.join(hist, "manifest_1"), "w") as f:
                json.dump({"files": [{"fileName": name, "fileLen": len(data)}]}, f)
            with open(os.path.join(hist, "_version_"), "w") as f:
                f.write("1")
            rows = read_lsm_instants(Storage(tmp), "history", columns=("instantTime", "completionTime"))
            return len(rows)
        raise SystemExit("unknown case " + case)

    threads = len(os.listdir("/proc/self/task"))
    refs = sys.getrefcount(data)
    n = run()
    print(json.dumps({"rows": n, "new_threads": len(os.listdir("/proc/self/task")) - threads,
                      "extra_refs": sys.getrefcount(data) - refs}))
    """
)


def _probe(case: str, tmp_path) -> dict:
    p = subprocess.run([sys.executable, "-c", _SCRIPT, case, str(tmp_path)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, (p.returncode, p.stderr[-2000:])
    return json.loads(p.stdout.strip().splitlines()[-1])


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="counts threads in /proc")


@pytest.mark.parametrize("case", ["read_parquet_bytes", "decode_parquet_content", "parquet_block_keys",
                                  "read_lsm_instants"])
def test_reads_from_bytes_start_no_arrow_thread_and_let_go_of_the_bytes(case, tmp_path):
    got = _probe(case, tmp_path)
    assert got == {"rows": 2, "new_threads": 0, "extra_refs": 0}


def test_control_pq_read_table_starts_arrow_threads(tmp_path):
    """The old read: Arrow's dataset scan starts worker threads (which may still hold the bytes)."""
    got = _probe("control-read_table", tmp_path)
    assert got["rows"] == 2 and got["new_threads"] > 0
