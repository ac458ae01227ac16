"""Issue 35 item 7: a timeline file a command listed is gone before the command reads it (Java's
archiver moved it into the archive between our listing and our read).

Every command must then run again from a fresh listing, or answer a typed ``conflict`` that
changed nothing: never a traceback. The race is made deterministic here: right after our
command's listing of the timeline folder, the oldest completed deltacommits leave it (as Java's
archiver takes the oldest instants first; the archived instants stay committed for every reader,
being older than the active timeline). The real-Java version is in
tests/java/test_java_robust_reads.py.

Judged by fixed values (the rows the batches wrote) and by the table's files before and after.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from airflow_hudi_etc import Table
from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.hudi.storage import Storage
from test_refusals import snapshot

DAY2 = "2026-01-02T00:00:00Z"


def at(h: int):
    import datetime as dt

    return dt.datetime(2026, 1, 1, h, tzinfo=dt.timezone.utc)


def row(k, ts, h, v):
    return {"k": k, "ts": ts, "event_time": at(h), "city": "sf", "v": float(v)}


def table(tmp_path: Path, version: int) -> Table:
    """Base k0..k3 (10h), a log k1 (11h), a log k2 (23h); a plan at DAY2 (2h latency) pending."""
    t = Table.create(str(tmp_path / "t"), table_name="t", record_key="k", precombine_field="ts",
                     event_time_field="event_time", partition_field="city", table_version=version)
    t.write([row(f"k{i}", 1, 10, i) for i in range(4)])
    t.write([row("k1", 2, 11, 11)])
    t.write([row("k2", 2, 23, 22)])
    t.compaction.schedule("2h", compaction_time=DAY2)
    return t


EXPECTED = {"k0": 0.0, "k1": 11.0, "k2": 22.0, "k3": 3.0}


def completed_deltacommits(path: Path) -> list[Path]:
    tl = path / ".hoodie" / "timeline" if (path / ".hoodie" / "timeline").is_dir() else path / ".hoodie"
    return sorted(p for p in tl.iterdir() if p.name.endswith(".deltacommit"))


class Archiver:
    """After the next listing of the timeline folder: the oldest ``n`` completed deltacommits and
    their requested/inflight files leave it (``times`` listings in a row; ``forever``: the files
    stay listed but every read of them fails, a file that keeps vanishing)."""

    def __init__(self, monkeypatch, path: Path, n: int = 2, *, forever: bool = False):
        self.path, self.n, self.forever, self.hits = path, n, forever, 0
        self.gone: list[str] = []
        folder = completed_deltacommits(path)[0].parent
        self.folder = os.path.relpath(folder, path)
        list_names = Storage.list_entry_names
        read_bytes = Storage.read_bytes
        arch = self

        def listing(storage, rel_dir="", **kw):
            names = list_names(storage, rel_dir, **kw)
            if rel_dir == arch.folder and not arch.gone:
                arch.archive()
            return names

        def read(storage, rel, *a, **kw):
            if arch.forever and rel.rsplit("/", 1)[-1] in arch.gone:
                arch.hits += 1
                raise FileNotFoundError(rel)
            return read_bytes(storage, rel, *a, **kw)

        monkeypatch.setattr(Storage, "list_entry_names", listing)
        monkeypatch.setattr(Storage, "read_bytes", read)

    def archive(self) -> None:
        for done in completed_deltacommits(self.path)[: self.n]:
            ts = done.name.split("_")[0].split(".")[0]
            for f in done.parent.iterdir():
                if f.name.split("_")[0].split(".")[0] == ts:
                    self.gone.append(f.name)
                    if not self.forever:
                        f.unlink()
                        self.hits += 1


def run(capsys, *args) -> tuple[int, dict]:
    rc = cli_main([str(a) for a in args])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("version", [6, 8])
def test_execute_runs_again_from_a_fresh_listing(tmp_path, capsys, monkeypatch, version):
    """The bug: ``execute`` died with a FileNotFoundError traceback (exit 1, nothing on stdout) and
    left its compaction inflight."""
    t = table(tmp_path, version)
    path = Path(t.path)
    arch = Archiver(monkeypatch, path)
    rc, out = run(capsys, "execute", "--path", path)
    assert arch.hits, "nothing was archived: the test shows nothing"
    assert rc == 0 and out["status"] == "completed", out
    monkeypatch.undo()
    assert {r["k"]: r["v"] for r in Table.open(str(path)).read().to_pylist()} == EXPECTED
    assert not Table.open(str(path)).compaction.pending()


@pytest.mark.parametrize("command", [["execute"], ["schedule", "--data-latency", "1h", "--compaction-time", DAY2],
                                     ["status", "--json"], ["clean"], ["validate"]])
def test_every_command_reads_the_fresh_timeline(tmp_path, capsys, monkeypatch, command):
    t = table(tmp_path, 6)
    path = Path(t.path)
    Archiver(monkeypatch, path)
    rc, out = run(capsys, command[0], "--path", path, *command[1:])
    assert rc == 0, out
    assert "error" not in out, out


@pytest.mark.parametrize("version", [6, 8])
def test_a_file_that_keeps_vanishing_is_a_conflict_that_changes_nothing(tmp_path, capsys, monkeypatch, version):
    t = table(tmp_path, version)
    path = Path(t.path)
    before = snapshot(path)
    arch = Archiver(monkeypatch, path, forever=True)
    rc, out = run(capsys, "execute", "--path", path)
    assert arch.hits == 3, arch.hits  # three runs from a fresh listing, then the typed answer
    assert rc == 2 and out["error"]["code"] == "conflict", out
    assert "TimelineChangedError" == out["error"]["type"]
    after = snapshot(path)
    heartbeats = {k for k in set(after) ^ set(before) if "/.heartbeat" in k or "/.aux/hudi-etc" in k}
    assert {k: v for k, v in after.items() if k not in heartbeats} == \
        {k: v for k, v in before.items() if k not in heartbeats}, "the refused execute changed the table"
