"""Which tables with a metadata table a command of ours refuses, before anything is written
(airflow_hudi_etc/hudi/concurrency/jvm_metadata.py): every one in a run without Hudi's metadata
writer (the message names the Spark-hosted way), and, in a run with it, one whose indexes are
being built, one with a secondary or expression index, one with an MDT folder that is not
initialised, and a version-6 table with the record index (Hudi 0.x does not derive its records)."""

from __future__ import annotations

import pytest

from airflow_hudi_etc.hudi.concurrency import jvm_metadata
from airflow_hudi_etc.hudi.errors import MetadataTablePresentError, UnsupportedFeatureError
from airflow_hudi_etc.hudi.storage import Storage


@pytest.fixture
def storage(tmp_path):
    (tmp_path / ".hoodie").mkdir()
    return Storage(str(tmp_path))


def test_no_metadata_table_passes(storage):
    jvm_metadata.require_writable(storage, {"hoodie.table.version": "6"})
    assert not jvm_metadata.present(storage, {})


def test_without_the_jvm_every_metadata_table_is_refused(storage):
    assert not jvm_metadata.available()
    with pytest.raises(MetadataTablePresentError, match="Spark-hosted.*driver's classpath.*drop-metadata-table"):
        jvm_metadata.require_writable(storage, {"hoodie.table.metadata.partitions": "files"})
    import os

    os.makedirs(storage.full(".hoodie/metadata/files"))
    with pytest.raises(MetadataTablePresentError, match=r"\.hoodie/metadata/ exists"):
        jvm_metadata.require_writable(storage, {})


@pytest.mark.parametrize("props,error,match", [
    ({"hoodie.table.metadata.partitions": "files", "hoodie.table.metadata.partitions.inflight": "column_stats"},
     MetadataTablePresentError, "being built"),
    ({"hoodie.table.metadata.partitions": "files,secondary_index_idx_city"}, UnsupportedFeatureError,
     "secondary_index_idx_city"),
    ({"hoodie.table.metadata.partitions": "files,expression_index_x"}, UnsupportedFeatureError, "expression_index_x"),
    ({"hoodie.table.metadata.partitions": "column_stats"}, MetadataTablePresentError, "not initialised"),
    ({"hoodie.table.metadata.partitions": "files,record_index", "hoodie.table.version": "6"},
     UnsupportedFeatureError, "record_index on table version 6"),
])
def test_with_the_jvm_what_cannot_be_kept_exact_is_refused(storage, monkeypatch, props, error, match):
    monkeypatch.setattr(jvm_metadata, "available", lambda: True)
    with pytest.raises(error, match=match):
        jvm_metadata.require_writable(storage, props)


@pytest.mark.parametrize("props", [
    {"hoodie.table.metadata.partitions": "files"},
    {"hoodie.table.metadata.partitions": "files,column_stats,partition_stats,record_index", "hoodie.table.version": "9"},
    {"hoodie.table.metadata.partitions": "files,column_stats,bloom_filters", "hoodie.table.version": "6"},
])
def test_with_the_jvm_the_default_indexes_pass(storage, monkeypatch, props):
    monkeypatch.setattr(jvm_metadata, "available", lambda: True)
    jvm_metadata.require_writable(storage, props)


def test_the_metadata_tables_answers_are_filed_under_their_own_partition():
    # Hudi's reader answers per folder it was asked about, in its own spelling of the scheme;
    # fixed cases: nested partitions, a partition named like the end of another, the table's
    # own folder for an unpartitioned table, and a folder that is none of them
    base = "s3://bucket/warehouse/t1"
    rels = ["dt=2024-01-01", "a/dt=2024-01-01", "a", ""]
    assert jvm_metadata._partition_of("s3a://bucket/warehouse/t1/dt=2024-01-01", base, rels) == "dt=2024-01-01"
    assert jvm_metadata._partition_of("s3a://bucket/warehouse/t1/a/dt=2024-01-01/", base, rels) == "a/dt=2024-01-01"
    assert jvm_metadata._partition_of("s3a://bucket/warehouse/t1/a", base, rels) == "a"
    assert jvm_metadata._partition_of("s3a://bucket/warehouse/t1", base, rels) == ""
    assert jvm_metadata._partition_of("file:/tmp/t1", "file:///tmp/t1", [""]) == ""
    with pytest.raises(MetadataTablePresentError):
        jvm_metadata._partition_of("s3a://bucket/warehouse/t1/b", base, rels)
    with pytest.raises(MetadataTablePresentError):  # no unpartitioned folder was asked for
        jvm_metadata._partition_of("s3a://bucket/warehouse/t1", base, ["a"])
