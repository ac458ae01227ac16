"""The format profiles (``hudi/format/``): one per supported table version, handed out by version,
by properties, by a table's config and by its timeline."""

from __future__ import annotations

import pickle

import pytest

from airflow_hudi_etc.hudi.config.properties import DEFAULT_PAYLOAD, OVERWRITE_LATEST_PAYLOAD, TableConfig
from airflow_hudi_etc.hudi.errors import UnsupportedTableVersionError
from airflow_hudi_etc.hudi.format import PROFILES, V6, V8, V9, V6Profile, V9Profile, profile_for
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.timeline.active import TIMELINE_CLASSES
from airflow_hudi_etc.hudi.write.writer import init_table


def test_one_profile_per_supported_version():
    assert sorted(PROFILES) == [6, 8, 9]
    assert all(p.table_version == v and profile_for(v) is p for v, p in PROFILES.items())
    assert V6Profile() is V6 and V9Profile() is V9 and isinstance(V9, type(V8))
    with pytest.raises(UnsupportedTableVersionError, match="table version 7 .*bridge"):
        profile_for(7)


@pytest.mark.parametrize("version", sorted(PROFILES))
def test_a_pickled_profile_is_the_same_object(version):
    """A Spark task's work unit carries the table's profile: unpickled, it is the profile itself."""
    p = PROFILES[version]
    assert pickle.loads(pickle.dumps(p)) is p


@pytest.mark.parametrize("payload", [OVERWRITE_LATEST_PAYLOAD, DEFAULT_PAYLOAD])
@pytest.mark.parametrize("version", sorted(PROFILES))
def test_a_new_tables_properties_read_back_as_its_profile(version, payload):
    p = PROFILES[version]
    props = p.new_table_properties(table_name="t", record_key="k", ordering_field="ts", event_time_field="et",
                                   partition_field="city", payload=payload, schema=None)
    config = TableConfig.from_properties(props)
    assert config.profile is p and config.layout_version == p.timeline_layout
    assert config.payload_class == payload and config.precombine_field == "ts"
    assert (config.timeline_dir, config.history_dir) == (p.timeline_dir(props), p.history_dir(props))


@pytest.mark.parametrize("version", sorted(PROFILES))
def test_the_timeline_of_a_table_is_its_layouts_class_with_its_profile(tmp_path, version):
    init_table(str(tmp_path), table_name="t", record_key="k", precombine_field="ts", event_time_field="ts",
               table_version=version)
    table = HudiTable.load(Storage(str(tmp_path)))
    p = PROFILES[version]
    assert table.profile is p and table.timeline.profile is p
    assert type(table.timeline) is TIMELINE_CLASSES[p.timeline_layout]
    assert table.timeline.as_of("99999999999999999").profile is p
    assert all((tmp_path / d).is_dir() for d in p.new_table_folders)
