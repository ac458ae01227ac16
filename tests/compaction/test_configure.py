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
from airflow_hudi_etc.hudi.properties import PROPERTIES_FILE, loads
from airflow_hudi_etc.hudi.table import HudiTable
from airflow_hudi_etc.hudi.writer import init_table


def test_java_compaction_is_recorded_and_read_by_execute_check(tmp_path, capsys):
    p = tmp_path / "t"
    init_table(str(p), table_name="t", record_key="id", precombine_field="ts", event_time_field="et")
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
    assert loads((p / PROPERTIES_FILE).read_text())["hoodie.etc.java.compaction"] == "off"
    assert recorded(HudiTable.load(str(p))) == "off"
    assert Table(str(p)).configure(java_compaction="ON")["before"]["java_compaction"] == "off"
    assert recorded(HudiTable.load(str(p))) == "on"
