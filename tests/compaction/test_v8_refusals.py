"""Issue 17 item 5: half-upgraded tables (spec shared/hudi-format-v8-v9.md §8) and table versions
other than 6, 8, 9 are refused by every CLI command that opens a table, reads included, with the
typed error, and the table is byte-identical afterwards."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.contract import COMMANDS
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from batches import batch
from test_refusals import snapshot

T0 = 1_700_000_000_000
INSTANT = "20200101000000000"

#: every command that opens a table, with its other arguments
TABLE_COMMANDS = {
    "init": ["--table-name", "t", "--record-key", "key", "--precombine-field", "ts", "--event-time-field",
             "event_time", "--partition-field", "region", "--payload", "event-time-ordering"],
    "drop-metadata-table": [],
    "write": ["--input", "{input}"],
    "read": ["--output", "{out}/o.parquet"],
    "status": ["--json"],
    "report": ["--output", "{out}/report"],
    "schedule": ["--data-latency", "1h", "--compaction-time", "2023-11-15T02:00:00Z"],
    "execute": [],
    "rollback": ["--instant", INSTANT],
    "unschedule": ["--instant", INSTANT],
    "clean": ["--retain-commits", "1"],
    "show-plan": ["--instant", INSTANT],
    "reset-threshold": [],
    "validate": [],
    "repair-instant": ["--instant", INSTANT],
    "sync-catalog": ["--table", "t", "--metastore-dir", "{out}/ms", "--warehouse-dir", "{out}/wh"],
    "configure": ["--timeline-zone", "UTC"],
}


def test_every_table_command_is_covered():
    takes_path = {n for n, c in COMMANDS.items() if any(a.name == "path" for a in c.args)}
    assert takes_path == set(TABLE_COMMANDS)


def _table(tmp_path: Path, version: int) -> Path:
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
               partition_field="region", table_version=version, payload="event-time-ordering")
    rows = [{"key": f"k{i}", "ts": i, "event_time": T0, "value": 1.0, "note": "x", "region": "a"} for i in range(3)]
    write_batch(str(path), batch(rows))
    write_batch(str(path), batch(rows))
    return path


def _set_props(path: Path, **kv):
    p = path / ".hoodie" / "hoodie.properties"
    text = p.read_text()
    for k, v in kv.items():
        text = re.sub(rf"(?m)^{re.escape(k)}=.*$", f"{k}={v}", text)
    p.write_text(text)


def _v8_stray_v1_instant(path):  # an upgrade that crashed after moving some instants
    tl = path / ".hoodie" / "timeline"
    done = sorted(f for f in tl.iterdir() if re.match(r"^\d{17}_\d{17}\.deltacommit$", f.name))[0]
    (path / ".hoodie" / (done.name.split("_")[0] + ".deltacommit")).write_bytes(b"{}")


def _v8_completed_without_completion_time(path):  # a layout-1 name inside .hoodie/timeline
    (path / ".hoodie" / "timeline" / f"{INSTANT}.deltacommit").write_bytes(b"")


def _v8_properties_backup(path):  # an upgrade from 6 interrupted in its properties update (its last step)
    p = path / ".hoodie" / "hoodie.properties"
    text = re.sub(r"(?m)^hoodie.timeline.layout.version=.*$", "hoodie.timeline.layout.version=1",
                  re.sub(r"(?m)^hoodie.table.version=.*$", "hoodie.table.version=6", p.read_text()))
    (path / ".hoodie" / "hoodie.properties.backup").write_text(text)


def _v6_with_layout2_instants(path):  # an upgrade to 8/9 running or crashed
    tl = path / ".hoodie" / "timeline"
    tl.mkdir(exist_ok=True)
    (tl / f"{INSTANT}_{INSTANT[:-1]}1.deltacommit").write_bytes(b"")


STATES = {
    "v8: layout-1 instant left in .hoodie/": (8, _v8_stray_v1_instant, "table_upgrade_incomplete"),
    "v9: completed file without completion time": (9, _v8_completed_without_completion_time, "table_upgrade_incomplete"),
    "v8: hoodie.properties.backup of version 6": (8, _v8_properties_backup, "table_upgrade_incomplete"),
    "v6: instants in .hoodie/timeline/": (6, _v6_with_layout2_instants, "table_upgrade_incomplete"),
    "version 7": (8, lambda p: _set_props(p, **{"hoodie.table.version": "7"}), "unsupported_table_version"),
    "version 10": (9, lambda p: _set_props(p, **{"hoodie.table.version": "10"}), "unsupported_table_version"),
    "v8 with layout 1": (8, lambda p: _set_props(p, **{"hoodie.timeline.layout.version": "1"}),
                         "unsupported_table_version"),
}


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    """One table per state, made once (the commands must not change them, which is checked)."""
    out = {}
    for name, (version, damage, code) in STATES.items():
        path = _table(tmp_path_factory.mktemp("state"), version)
        damage(path)
        out[name] = (path, code)
    return out


@pytest.mark.parametrize("state", list(STATES))
@pytest.mark.parametrize("command", list(TABLE_COMMANDS))
def test_refused_with_the_typed_error_and_nothing_changes(damaged, tmp_path, capsys, state, command):
    path, code = damaged[state]
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"key": "k9", "ts": 9, "event_time": T0, "value": 2.0, "note": "y",
                               "region": "a"}) + "\n")
    args = [a.format(input=src, out=tmp_path) for a in TABLE_COMMANDS[command]]
    if command == "init":  # the table's own settings: init would be a no-op on a sound table
        args += ["--table-version", str(STATES[state][0])]
    before = snapshot(path)
    rc = cli_main([command, "--path", str(path), *args])
    out = json.loads(capsys.readouterr().out)
    assert rc != 0, out
    assert out["error"]["code"] == code, out
    assert snapshot(path) == before
    assert not (tmp_path / "o.parquet").exists() and not (tmp_path / "report").exists()
