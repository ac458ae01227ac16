"""The typed views of our extra metadata read what the keys say, leniently, and write it back."""

from __future__ import annotations

import doctest

from airflow_hudi_etc.hudi.protocol import etc_metadata
from airflow_hudi_etc.hudi.protocol.etc_metadata import CompactionExtra, ExecutionFigures, PlanExtra

# a commit's extra metadata as our execution writes it (keys spelled out by hand)
COMMIT = {
    "schema": "{}",
    "hoodie.etc.threshold.ms": "1700000000123",
    "hoodie.etc.threshold": "2023-11-14T22:13:20.123+00:00",
    "hoodie.etc.data.latency.ms": "7200000",
    "hoodie.etc.compaction.time": "2023-11-15T00:13:20.123+00:00",
    "hoodie.etc.strategy": "event-time",
    "hoodie.etc.link.mode": "copy",
    "hoodie.etc.event.time.source": "write-stats",
    "hoodie.etc.exact.split": "TRUE",
    "hoodie.etc.links.precreated": "true",
    "hoodie.etc.planning.seconds": "0.25",
    "hoodie.etc.planning.listing": "metadata-table",
    "hoodie.etc.link.operations": '[{"link":"p/.f_2_log.1_999999999-0-0","target":"p/.f_1.log.2_0-1-2"},3]',
    "hoodie.etc.execution.seconds": "1.5",
    "hoodie.etc.remaining.log.files": "2",
    "hoodie.etc.remaining.log.bytes": "4096",
    "hoodie.etc.remaining.min.event.time.ms": "1700000000124",
    "hoodie.etc.compacted.log.files": "3",
    "hoodie.etc.compacted.log.bytes": "8192",
    "hoodie.etc.link.bytes.written": "4096",
}


def test_commit_extra_reads_every_key():
    x = CompactionExtra.from_extra(COMMIT)
    assert x.plan == PlanExtra(threshold_ms=1700000000123, threshold="2023-11-14T22:13:20.123+00:00",
                               data_latency_ms=7200000, compaction_time="2023-11-15T00:13:20.123+00:00",
                               strategy="event-time", link_mode="copy", event_time_source="write-stats",
                               event_time_field=None, exact_split=True, links_precreated=True,
                               planning_seconds=0.25, planning_listing="metadata-table")
    assert x.link_operations == ({"link": "p/.f_2_log.1_999999999-0-0", "target": "p/.f_1.log.2_0-1-2"},)
    assert x.figures == ExecutionFigures(execution_seconds=1.5, remaining_log_files=2, remaining_log_bytes=4096,
                                         remaining_min_event_time_ms=1700000000124, compacted_log_files=3,
                                         compacted_log_bytes=8192, link_bytes_written=4096, split_log_records=None)


def test_written_back_keys_are_the_same_minus_foreign_ones():
    back = CompactionExtra.from_extra(COMMIT).to_extra()
    want = {k: v for k, v in COMMIT.items() if k.startswith("hoodie.etc.")}
    want["hoodie.etc.exact.split"] = "true"
    want["hoodie.etc.link.operations"] = '[{"link":"p/.f_2_log.1_999999999-0-0","target":"p/.f_1.log.2_0-1-2"}]'
    assert back == want


def test_java_commits_and_damage_read_as_absent():
    assert CompactionExtra.from_extra(None) == CompactionExtra()
    assert not PlanExtra.from_extra({"schema": "{}"}).ours
    bad = CompactionExtra.from_extra({"hoodie.etc.threshold.ms": "soon", "hoodie.etc.link.operations": "{no",
                                      "hoodie.etc.execution.seconds": "fast"})
    assert (bad.plan.threshold_ms, bad.link_operations, bad.figures.execution_seconds) == (None, None, None)


def test_module_examples():
    assert doctest.testmod(etc_metadata).failed == 0
