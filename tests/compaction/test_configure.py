"""``hudi-etc configure --java-compaction on|off``: the second recorded setting (the first, the
timeline zone, is tested in test_timeline_zones.py). What ``execute`` reads
(``java_compaction.recorded``) is what the command recorded; bad values are typed refusals."""

from __future__ import annotations

import json

import pytest

from airflow_hudi_etc.api import Table
from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.compaction.java_compaction import recorded
from airflow_hudi_etc.hudi.errors import InvalidInputError
from airflow_hudi_etc.hudi.config.properties import PROPERTIES_FILE, loads
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.write.writer import init_table


def test_java_compaction_is_recorded_and_read_by_execute_check(tmp_path, capsys):
    p = tmp_path / "t"
    init_table(str(p), table_name="t", record_key="id", precombine_field="ts", event_time_field="et",
               java_compaction=None)  # as a table Java created: nothing recorded
    assert recorded(HudiTable.load(str(p))) is None
    before = (p / PROPERTIES_FILE).read_bytes()
    rc = cli_main(["configure", "--path", str(p), "--java-compaction", "maybe"])
    assert rc == 2 and json.loads(capsys.readouterr().out)["error"]["code"] == "invalid_arguments"
    for bad in ("maybe", 1, ""):
        with pytest.raises(InvalidInputError, match="java compaction"):
            Table(str(p)).configure(java_compaction=bad)
    assert (p / PROPERTIES_FILE).read_bytes() == before
    rc = cli_main(["configure", "--path", str(p), "--java-compaction", "off"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["status"] == "configured" and out["settings"]["java_compaction"] == "off"
    assert (p / PROPERTIES_FILE).read_bytes() == before  # recorded beside it (issue 22 a)
    from airflow_hudi_etc.hudi.config.etc_settings import SETTINGS_PATH

    assert json.loads((p / SETTINGS_PATH).read_text())["settings"]["hoodie.etc.java.compaction"] == "off"
    assert recorded(HudiTable.load(str(p))) == "off"
    assert Table(str(p)).configure(java_compaction="ON")["before"]["java_compaction"] == "off"
    assert recorded(HudiTable.load(str(p))) == "on"


def test_init_records_java_compaction_for_the_tables_it_creates(tmp_path, capsys):
    """``hudi-etc init`` records ``off`` (default) or ``on`` for a new table; the API's ``None``
    records nothing; an existing table keeps its setting (``configure`` changes it); a bad value
    is refused before anything is written."""
    from airflow_hudi_etc.hudi.config.etc_settings import SETTINGS_PATH

    args = ["--table-name", "t", "--record-key", "id", "--precombine-field", "ts", "--event-time-field", "et"]
    assert cli_main(["init", "--path", str(tmp_path / "a"), *args]) == 0
    assert cli_main(["init", "--path", str(tmp_path / "b"), *args, "--java-compaction", "on"]) == 0
    capsys.readouterr()
    settings = json.loads((tmp_path / "a" / SETTINGS_PATH).read_text())["settings"]
    assert settings["hoodie.etc.java.compaction"] == "off"
    assert json.loads((tmp_path / "b" / SETTINGS_PATH).read_text())["settings"]["hoodie.etc.java.compaction"] == "on"
    Table.create(str(tmp_path / "c"), table_name="t", record_key="id", precombine_field="ts", event_time_field="et",
                 java_compaction=None)
    assert "hoodie.etc.java.compaction" not in json.loads((tmp_path / "c" / SETTINGS_PATH).read_text())["settings"]
    assert Table(str(tmp_path / "c")).status().details["java_compaction"] == "unknown"
    # init again over an existing table: nothing changes, whatever it says
    assert cli_main(["init", "--path", str(tmp_path / "b"), *args, "--java-compaction", "off"]) == 0
    assert json.loads(capsys.readouterr().out)["created"] is False
    assert recorded(HudiTable.load(str(tmp_path / "b"))) == "on"
    with pytest.raises(InvalidInputError, match="java compaction"):
        Table.create(str(tmp_path / "d"), table_name="t", record_key="id", precombine_field="ts",
                     event_time_field="et", java_compaction="maybe")
    assert not (tmp_path / "d").exists()
    assert cli_main(["init", "--path", str(tmp_path / "d"), *args, "--java-compaction", "maybe"]) == 2
    assert not (tmp_path / "d").exists()


#: what Java 0.14.0's ``CREATE TABLE ... USING hudi LOCATION`` removed from a v6 table's
#: hoodie.properties (measured with the real process on 2026-11-26: run_clean's registration)
JAVA_CREATE_TABLE_DROPS = ("hoodie.etc.event.time.field", "hoodie.etc.java.compaction", "hoodie.etc.timeline.zone",
                           "hoodie.etc.exclusive.cleaner", "hoodie.payload.event.time.field",
                           "hoodie.table.timeline.timezone")


def _java_create_table_rewrite(p):
    """hoodie.properties as Java's CREATE TABLE leaves it: the keys above gone."""
    from airflow_hudi_etc.hudi.config.properties import dumps

    f = p / PROPERTIES_FILE
    kv = loads(f.read_text())
    f.write_text(dumps({k: v for k, v in kv.items() if k not in JAVA_CREATE_TABLE_DROPS}))


@pytest.mark.parametrize("version", [6, 8])
def test_recorded_settings_survive_java_rewriting_hoodie_properties(tmp_path, monkeypatch, version):
    """Issue 22 (a): what configure and table creation recorded is read back after Java's CREATE
    TABLE dropped our keys (and, on v6, the table's zone key): the recorded zone wins with no
    variable set, execute is still refused where java-compaction=on was recorded, the
    exclusive-cleaner promise and the event-time field hold."""
    from airflow_hudi_etc.compaction.java_compaction import check_execute
    from airflow_hudi_etc.hudi.protocol.coexistence import symlinks_allowed, timeline_zone_source
    from airflow_hudi_etc.hudi.errors import JavaCompactionError

    monkeypatch.delenv("HUDI_ETC_TIMELINE_TIMEZONE", raising=False)
    p = tmp_path / "t"
    init_table(str(p), table_name="t", record_key="id", precombine_field="ts", event_time_field="et",
               exclusive_cleaner=True, table_version=version)
    assert Table(str(p)).configure(timeline_zone="UTC", java_compaction="on")["status"] == "configured"
    _java_create_table_rewrite(p)
    t = HudiTable.load(str(p))
    assert "hoodie.table.timeline.timezone" not in loads((p / PROPERTIES_FILE).read_text())
    assert t.config.event_time_field == "et"
    assert recorded(t) == "on"
    zone, source = timeline_zone_source(t.config)
    assert (str(zone), source) == ("UTC", "recorded")
    assert symlinks_allowed(t.config) is (version == 6)
    with pytest.raises(JavaCompactionError, match="java.compaction=on"):
        check_execute(t)
    again = Table(str(p)).configure(java_compaction="on")
    assert again["status"] == "unchanged"
    assert again["before"] == {"timeline_zone": "UTC", "java_compaction": "on"}


def test_legacy_keys_in_hoodie_properties_are_read_and_configure_migrates_them(tmp_path):
    """A table configured by an earlier release has its keys in hoodie.properties only: they are
    read; the next configure copies them into the settings file and leaves hoodie.properties as it
    was; from then on a Java rewrite loses nothing."""
    from airflow_hudi_etc.hudi.protocol.coexistence import update_table_properties
    from airflow_hudi_etc.hudi.config.etc_settings import SETTINGS_PATH
    from airflow_hudi_etc.hudi.storage import Storage

    p = tmp_path / "t"
    init_table(str(p), table_name="t", record_key="id", precombine_field="ts", event_time_field="et")
    (p / SETTINGS_PATH).unlink()  # as an earlier release left it
    update_table_properties(Storage(str(p)), {"hoodie.etc.java.compaction": "off"})
    assert recorded(HudiTable.load(str(p))) == "off"
    props = (p / PROPERTIES_FILE).read_bytes()
    out = Table(str(p)).configure(timeline_zone="UTC")
    assert out["status"] == "configured" and out["before"]["java_compaction"] == "off"
    assert (p / PROPERTIES_FILE).read_bytes() == props
    assert json.loads((p / SETTINGS_PATH).read_text())["settings"] == {
        "hoodie.etc.event.time.field": "et", "hoodie.etc.java.compaction": "off", "hoodie.etc.timeline.zone": "UTC"}
    _java_create_table_rewrite(p)
    t = HudiTable.load(str(p))
    assert recorded(t) == "off" and t.config.event_time_field == "et"


def test_a_malformed_settings_file_is_a_typed_refusal(tmp_path, capsys):
    from airflow_hudi_etc.hudi.errors import InvalidPropertiesError
    from airflow_hudi_etc.hudi.config.etc_settings import SETTINGS_PATH

    p = tmp_path / "t"
    init_table(str(p), table_name="t", record_key="id", precombine_field="ts", event_time_field="et")
    for bad in ("{", '{"version": 1, "settings": {"hoodie.table.name": "x"}}', '{"version": 2, "settings": {}}'):
        (p / SETTINGS_PATH).write_text(bad)
        with pytest.raises(InvalidPropertiesError, match="settings.json"):
            HudiTable.load(str(p))
        assert cli_main(["configure", "--path", str(p), "--java-compaction", "off"]) == 2
        assert "settings.json" in json.loads(capsys.readouterr().out)["error"]["message"]
        assert (p / SETTINGS_PATH).read_text() == bad
