"""Version-6 payload classes other than the two we merge as Java does (issue 35 item 1).

Real Java 0.15 makes the table with ``PartialUpdateAvroPayload`` (or
``OverwriteNonDefaultsWithLatestAvroPayload``): an update whose ``note`` is null keeps the older
note in Java's read — the merge a ``DefaultHoodieRecordPayload`` merge would lose, and our
``execute`` would write that loss into the base file. Every mutating command of ours refuses such
a table, typed (``unsupported_feature``), before anything is written; Java's read is unchanged.
Debezium, AWS DMS and users' own payloads take the same refusal (the rule is the class name)."""

from __future__ import annotations

import pyarrow as pa
import pytest

from airflow_hudi_etc import Table
from airflow_hudi_etc.hudi.errors import UnsupportedFeatureError

pytestmark = pytest.mark.java

PKG = "org.apache.hudi.common.model."
NEW = {"hoodie.table.name": "p", "hoodie.datasource.write.recordkey.field": "k",
       "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
       "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
       "hoodie.metadata.enable": "false"}
DDL = "k string, ts bigint, city string, note string, v double"


@pytest.mark.parametrize("payload", ["PartialUpdateAvroPayload", "OverwriteNonDefaultsWithLatestAvroPayload"])
def test_other_payloads_are_refused_before_anything_is_written(java_hudi, tmp_path, payload):
    java = java_hudi("0.15")
    path = str(tmp_path / "p")
    opts = {**NEW, "hoodie.datasource.write.payload.class": PKG + payload}
    java.upsert(path, [{"k": "k1", "ts": 1, "city": "sf", "note": "first", "v": 1.0}], schema=DDL, options=opts)
    java.upsert(path, [{"k": "k1", "ts": 2, "city": "sf", "note": None, "v": 2.0}], schema=DDL,
                options={"hoodie.datasource.write.payload.class": PKG + payload})
    props = open(f"{path}/.hoodie/hoodie.properties").read()
    assert f"hoodie.compaction.payload.class={PKG}{payload}" in props
    (row,) = java.snapshot(path)
    assert (row["note"], row["v"]) == ("first", 2.0)  # Java keeps the older note: not the default merge
    Table(path).configure(timeline_zone="UTC", java_compaction="off")
    before = sorted(p.name for p in (tmp_path / "p").rglob("*") if p.is_file() and ".aux" not in str(p))
    for call in (lambda: Table.open(path).write(pa.Table.from_pylist([{"k": "k2", "ts": 1, "city": "sf", "note": "x", "v": 3.0}])),
                 lambda: Table.open(path).compaction.schedule(data_latency="0s", compaction_time="2026-01-01T00:00:00Z",
                                              event_time_field="ts"),
                 lambda: Table.open(path).compaction.execute()):
        with pytest.raises(UnsupportedFeatureError, match=payload):
            call()
    assert sorted(p.name for p in (tmp_path / "p").rglob("*") if p.is_file() and ".aux" not in str(p)) == before
    (row,) = java.snapshot(path)
    assert (row["note"], row["v"]) == ("first", 2.0)
