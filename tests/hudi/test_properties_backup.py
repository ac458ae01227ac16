"""Issue 35 item 8: ``hoodie.properties`` in the middle of a Java writer's rewrite.

Java's ``HoodieTableConfig.modify`` backs the file up (``hoodie.properties.backup``), deletes it,
writes it anew and then drops the backup; its reader (``fetchConfigs``) takes the backup while
the file is missing or fails its checksum. Next to such a writer our commands must read the
table too, never refuse it with a false diagnosis ("lacks hoodie.table.name"). Judged by fixed
values (the table's own settings) and by the files before and after (a read changes nothing);
what real Java reads in the same states is in tests/java/test_java_robust_reads.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from airflow_hudi_etc import Table
from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.hudi.config.properties import load_table_config
from airflow_hudi_etc.hudi.errors import InvalidPropertiesError, TableNotFoundError
from airflow_hudi_etc.hudi.protocol.heartbeat import table_settings
from airflow_hudi_etc.hudi.storage import Storage


def cut(text: str) -> str:
    """The file cut in the middle of a line before its last key (a write in progress)."""
    return text[: len(text) * 2 // 3]


#: the file's state while a Java rewrite is under way (the backup holds the whole file)
STATES = {
    "missing": None,
    "empty": lambda text: "",
    "cut mid-line": cut,
    "cut after a line, before the checksum": lambda text: "".join(
        ln for ln in text.splitlines(keepends=True) if not ln.startswith(("hoodie.table.checksum", "hoodie.table.type",
                                                                          "hoodie.timeline"))),
}


def make(tmp_path: Path, version: int) -> Path:
    t = Table.create(str(tmp_path / "t"), table_name="trips", record_key="k", precombine_field="ts",
                     event_time_field="event_time", partition_field="city", table_version=version)
    t.write([{"k": "a", "ts": 1, "event_time": 1_700_000_000_000, "city": "sf", "v": 1.0}])
    return Path(t.path)


def mid_rewrite(path: Path, state: str) -> None:
    props = path / ".hoodie" / "hoodie.properties"
    text = props.read_text()
    (path / ".hoodie" / "hoodie.properties.backup").write_text(text)
    if STATES[state] is None:
        props.unlink()
    else:
        props.write_text(STATES[state](text))


def files(path: Path) -> dict:
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("version", [6, 8, 9])
@pytest.mark.parametrize("state", list(STATES))
def test_the_backup_is_read_while_the_file_is_rewritten(tmp_path, capsys, version, state):
    path = make(tmp_path, version)
    mid_rewrite(path, state)
    cfg = load_table_config(Storage(str(path)))
    assert (cfg.name, cfg.version, cfg.record_key_fields, cfg.partition_fields) == ("trips", version, ("k",), ("city",))
    before = files(path)
    for args in (["status", "--json"], ["validate"], ["show-plan", "--instant", "20000101000000000"]):
        rc = cli_main([args[0], "--path", str(path), *args[1:]])
        out = json.loads(capsys.readouterr().out)
        if args[0] == "show-plan":  # no such plan: the typed answer about the plan, not about the properties
            assert rc == 2 and out["error"]["code"] == "invalid_timeline", out
        else:
            assert rc == 0, out
    assert files(path) == before, "a read changed the table"
    assert {r["k"] for r in Table.open(str(path)).read().to_pylist()} == {"a"}


def test_heartbeat_settings_come_from_the_backup_too(tmp_path):
    path = make(tmp_path, 6)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.client.heartbeat.interval_in_ms=4321\n")
    mid_rewrite(path, "empty")
    assert table_settings(Storage(str(path))).interval_ms == 4321


def test_a_file_that_fails_its_checksum_gives_way_to_the_backup_as_in_java(tmp_path):
    path = make(tmp_path, 6)
    props = path / ".hoodie" / "hoodie.properties"
    text = props.read_text()
    bad = "\n".join(ln if not ln.startswith("hoodie.table.checksum=") else "hoodie.table.checksum=1"
                    for ln in text.splitlines()) + "\n"
    props.write_text(bad)
    with pytest.raises(InvalidPropertiesError, match="checksum"):  # no backup: invalid, as Java says
        load_table_config(Storage(str(path)))
    (path / ".hoodie" / "hoodie.properties.backup").write_text(text)
    assert load_table_config(Storage(str(path))).name == "trips"


def test_without_a_backup_the_file_is_read_as_java_reads_it(tmp_path):
    path = make(tmp_path, 6)
    props = path / ".hoodie" / "hoodie.properties"
    props.write_text("")  # Java takes an empty file without a checksum as it is: no table name
    with pytest.raises(InvalidPropertiesError, match="lacks hoodie.table.name"):
        load_table_config(Storage(str(path)))
    props.unlink()
    with pytest.raises(TableNotFoundError):
        load_table_config(Storage(str(path)))
