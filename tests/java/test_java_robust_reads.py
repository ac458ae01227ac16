"""Issue 35 items 6, 7, 8 with real Java Hudi: reads that stay right while Java works next to us.

* Item 6: a completed deltacommit of 0 bytes (a Java writer killed while writing it). What each
  Java line makes of it is measured here; ``validate`` reports it (``corrupt-instant``) with the
  repair, ``repair-instant`` makes hudi-rs read the table again and changes no Java read.
* Item 7: Java's archiver moves instants our command listed before it reads them. The race is
  made deterministic: right after our command lists the timeline, real Java upserts (archiving
  after every commit) run, then our command goes on reading.
* Item 8: ``hoodie.properties`` in the middle of a rewrite (backed up, then missing, empty or cut
  short): what Java reads, and that our commands read the same.

Tables are small; Java's processes are the session's (one per Hudi line); nothing sleeps.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from airflow_hudi_etc import Table
from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.hudi.storage import Storage
from java_checks import assert_all, judges, new_table, row, timeline_names, values
from java_hudi import JavaHudiError, timeline_dir
from oracle import hudi_rs_read

pytestmark = pytest.mark.java

#: Java settings that archive after about every commit (as in test_java_findings.py)
ARCHIVE_OFTEN = {"hoodie.cleaner.commits.retained": "1", "hoodie.keep.min.commits": "2",
                 "hoodie.keep.max.commits": "3", "hoodie.clean.automatic": "true"}
DAY2 = "2026-01-02T00:00:00Z"
LINES = [(6, "0.14"), (6, "0.15"), (8, "1.0"), (9, "1.1")]


def run(capsys, *args) -> tuple[int, dict]:
    rc = cli_main([str(a) for a in args])
    return rc, json.loads(capsys.readouterr().out)


# ---------------------------------------------------------------- item 6
@pytest.mark.parametrize("version,line", [pytest.param(v, ln, id=f"v{v}-{ln}", marks=() if ln in ("0.14", "1.1")
                                                   else pytest.mark.slow) for v, ln in LINES])
def test_zero_byte_completed_deltacommit(java_hudi, tmp_path, capsys, version, line):
    java = java_hudi(line)
    t = new_table(tmp_path, version)
    for i in range(3):
        java.upsert(t.path, [row(f"k{i}", 1, 10 + i, i)])
    last = sorted(n for n in timeline_names(t.path) if n.endswith(".deltacommit"))[-1]
    T = last.split("_")[0].split(".")[0]
    f = timeline_dir(t.path) / last
    f.write_bytes(b"")  # killed while writing its completed file (and its Hadoop checksum file)
    (f.parent / f".{last}.crc").unlink(missing_ok=True)
    snapshot = {"k0": 0.0, "k1": 1.0, "k2": 2.0}
    # measured: Java reads T as committed (snapshot) with no write stats (incremental reads skip it)
    assert values(java.snapshot(t.path)) == snapshot
    assert values(java.read(t.path, query="incremental", begin="000")) == {"k0": 0.0, "k1": 1.0}
    assert values(Table.open(t.path).read().to_pylist()) == snapshot
    # (our incremental read still takes T's records where another commit of the range touched the
    # same file group: it reads a touched group's slices by commit time, Java only the files the
    # commits' write stats name; docs/concepts.md, "validate")
    with pytest.raises(Exception, match="(?i)json|avro|metadata|parse|eof|magic"):
        hudi_rs_read(t.path)
    rc, out = run(capsys, "validate", "--path", t.path)
    found = [p for p in out["problems"] if p["kind"] == "corrupt-instant"]
    assert rc == 0 and len(found) == 1 and found[0]["path"].endswith(last), out
    assert f"repair-instant --instant {T}" in found[0]["detail"]
    rc, out = run(capsys, "repair-instant", "--path", t.path, "--instant", T)
    assert rc == 0 and out["status"] == "repaired", out
    # every reader now: the same snapshot, Java's incremental read unchanged
    assert_all(java, t.path, snapshot)
    assert values(java.read(t.path, query="incremental", begin="000")) == {"k0": 0.0, "k1": 1.0}
    java.upsert(t.path, [row("k3", 1, 13, 3)])  # Java writes on
    assert_all(java, t.path, {**snapshot, "k3": 3.0})


# ---------------------------------------------------------------- item 7
class JavaAfterListing:
    """Right after our command's first listing of the timeline folder (``arm()``), ``n`` real Java
    upserts of another partition run (archiving after about every commit): the instants our
    command listed leave the active timeline before it reads them."""

    def __init__(self, monkeypatch, java, path, n=4):
        self.java, self.path, self.n, self.armed, self.ran = java, str(path), n, False, 0
        self.folder = os.path.relpath(timeline_dir(path), path)
        list_names = Storage.list_entry_names
        me = self

        def listing(storage, rel_dir="", **kw):
            names = list_names(storage, rel_dir, **kw)
            if me.armed and rel_dir == me.folder:
                me.armed = False
                me.listed = [n for n in names if n[:1].isdigit()]
                for i in range(me.n):
                    java.upsert(me.path, [row("n1", 100 + me.ran + i, 12, 100 + me.ran + i, "nyc")],
                                options=ARCHIVE_OFTEN)
                me.ran += me.n
            return names

        monkeypatch.setattr(Storage, "list_entry_names", listing)

    def arm(self):
        self.armed = True
        return self

    def archived_listed(self) -> list[str]:
        now = set(timeline_names(self.path))
        return [n for n in self.listed if n not in now and not n.endswith((".requested", ".inflight"))]


@pytest.mark.parametrize("version,line", [(6, "0.14"), (8, "1.0")], ids=["v6-0.14", "v8-1.0"])
def test_commands_read_a_fresh_timeline_when_java_archives_under_them(java_hudi, tmp_path, capsys, monkeypatch,
                                                                      version, line):
    """The bug: ``execute`` exited 1 with a FileNotFoundError traceback and nothing on stdout, its
    compaction left inflight. Each command here: an answer (exit 0), or the typed ``conflict``."""
    java = java_hudi(line)
    t = new_table(tmp_path, version)
    t.write([row(f"k{i}", 1, 10, i) for i in range(4)])
    t.write([row("k1", 2, 11, 11)])
    t.write([row("k2", 2, 23, 22)])
    rc, out = run(capsys, "schedule", "--path", t.path, "--data-latency", "2h", "--compaction-time", DAY2)
    assert rc == 0 and out["outcome"] == "scheduled", out
    race = JavaAfterListing(monkeypatch, java, t.path)
    rc, out = run(capsys, "execute", "--path", t.path) if race.arm() else None
    assert race.archived_listed(), "Java archived nothing our execute listed: the test shows nothing"
    assert rc == 0 and out["status"] == "completed", out
    for command in (["status", "--json"], ["schedule", "--data-latency", "1h", "--compaction-time", DAY2],
                    ["validate"], ["clean"]):
        race.arm()
        rc, out = run(capsys, command[0], "--path", t.path, *command[1:])
        assert rc == 0 or (rc == 2 and out["error"]["code"] == "conflict"), (command, out)
    monkeypatch.undo()
    want = {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 3.0, "n1": float(100 + race.ran - 1)}
    assert_all(java, t.path, want, hudi_rs=not Table.open(t.path).compaction.pending())


# ---------------------------------------------------------------- item 8
def _cut(text: str) -> str:
    return text[: len(text) * 2 // 3]


PROPERTIES_STATES = {"missing": None, "empty": lambda s: "", "cut": _cut}


@pytest.mark.parametrize("version,line", [(6, "0.14"), (8, "1.0")], ids=["v6-0.14", "v8-1.0"])
def test_properties_mid_rewrite_read_as_java_reads_them(java_hudi, tmp_path, capsys, version, line):
    java = java_hudi(line)
    t = new_table(tmp_path, version)
    java.upsert(t.path, [row("k0", 1, 10, 0)])
    t.write([row("k1", 1, 10, 1)])
    want = {"k0": 0.0, "k1": 1.0}
    h = Path(t.path) / ".hoodie"
    good = (h / "hoodie.properties").read_text()
    seen = {}
    for state, damage in PROPERTIES_STATES.items():
        (h / "hoodie.properties.backup").write_text(good)
        for crc in (h / ".hoodie.properties.crc", h / ".hoodie.properties.backup.crc"):
            crc.unlink(missing_ok=True)
        if damage is None:
            (h / "hoodie.properties").unlink()
        else:
            (h / "hoodie.properties").write_text(damage(good))
        try:
            seen[state] = values(java.snapshot(t.path))
        except JavaHudiError as e:
            seen[state] = e.java_class
        assert values(Table.open(t.path).read().to_pylist()) == want, state
        for args in (["status", "--json"], ["validate"], ["execute"],
                     ["schedule", "--data-latency", "1h", "--compaction-time", DAY2]):
            rc, out = run(capsys, args[0], "--path", t.path, *args[1:])
            assert rc == 0, (state, args, out)
        (h / "hoodie.properties").write_text(good)
        (h / "hoodie.properties.backup").unlink()
    assert seen == MEASURED_JAVA[(version, line)], seen
    assert_all(java, t.path, want, hudi_rs=not Table.open(t.path).compaction.pending())


#: what Java's snapshot read made of each state (no Hadoop checksum file beside either file):
#: 0.14 takes an empty file, or one without its checksum, for invalid and reads the backup; 1.0.2
#: reads the backup for a missing file or a failed checksum, but takes an empty file as it is
#: (no table name, no type) and fails. Ours reads the backup in each state.
_WANT = {"k0": 0.0, "k1": 1.0}
MEASURED_JAVA = {
    (6, "0.14"): {"missing": _WANT, "empty": _WANT, "cut": _WANT},
    (8, "1.0"): {"missing": _WANT, "empty": "org.apache.hudi.exception.TableNotFoundException", "cut": _WANT},
}
