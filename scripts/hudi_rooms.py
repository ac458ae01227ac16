#!/usr/bin/env python3
"""Put ``airflow_hudi_etc/hudi/`` into rooms a Hudi engineer recognizes (issue 26), re-runnably.

Usage::

    python scripts/hudi_rooms.py REPO            # move, rewrite, report (run on a clean work tree)
    python scripts/hudi_rooms.py REPO --dry-run  # only say what it would do
    python scripts/hudi_rooms.py REPO --move event_index=index.event_index   # a module the map lacks

It ``git mv``s the modules of ``hudi/`` into the rooms below, writes each room's ``__init__.py``
(a docstring saying what the room owns), rewrites every reference to a moved module in
``airflow_hudi_etc/``, ``tests/``, ``bench/``, ``spark_jobs/``, ``scripts/``, ``example_dags/``,
``docs/`` and the top-level ``*.md`` files but CHANGELOG.md (absolute and relative imports, ``from
. import x``, dotted strings such as monkeypatch/mock.patch targets, ``hudi/x.py`` paths in text),
updates README's table of the Hudi layer, adds the rooms' one-way rule to tests/test_layers.py and
one entry to CHANGELOG.md.
Nothing is committed: read ``git status`` / ``git diff -M --stat``, run the tests, commit.

Rooms, lowest first (a room imports only the top-level modules and the rooms before it):

====================  ==================================================================
``(top level)``       ``errors``, ``etc_keys``, ``storage``: imported by every room and by
                      every layer above ``hudi/``; ``errors`` is the public path of the typed
                      errors (README, docs, users' code) and stays put.
``config/``           ``properties`` (hoodie.properties), ``schema`` (the record schema)
``logformat/``        the log format package as it is, plus ``avro_arrow``
``timeline/``         ``instant``, ``timeline`` → ``active``, ``timeline_v2``, ``layout``,
                      ``archive_v6``, ``commit_metadata`` → ``commits``, ``avro_models``
``file_group/``       ``fsview``, ``naming``, ``merge``
``index/``            ``bloom/`` (package), ``stats``, ``ordering_facts``, ``log_index``
``services/``         ``plan``, ``coexistence``, ``rollback``, ``markers``, ``heartbeat``,
                      ``crash``, ``etc_metadata`` (the typed views of our keys: it checks
                      zone names with ``coexistence``)
``table/``            ``table`` → ``hudi_table``
``write/``            ``writer`` (the driver) and its stages ``write_prepare`` → ``prepare``,
                      ``write_tag`` → ``tag``, ``write_route`` → ``route``, ``write_append`` →
                      ``append``, ``write_insert`` → ``insert``, ``write_units`` → ``units``,
                      ``write_undo`` → ``undo``
====================  ==================================================================

Three modules are renamed because a room takes their old name (``timeline``, ``table``) or an
old module already has a function of that name (``timeline.commit_metadata``): a dotted path
then has one meaning before and after, which is what makes the rewrite idempotent.

Tolerance: a module of ``hudi/`` that the map does not know (a file another branch added) is
reported and left in place (the rooms test then names it: give it a room with ``--move`` or in
``MOVES``, and run again); a module already moved is skipped; a module present at both places is
reported and neither is touched. A re-run on a restructured tree prints "nothing to move" and
changes no file. Run it on a clean tree; if a run is interrupted, ``git reset --hard`` and run
again (relative imports of a moved file are read as written at its old place).

What it prints, one line each: ``move  hudi/a.py → hudi/room/a.py``, ``skip  a → room.a (already
moved)``, ``init  hudi/room/__init__.py``, ``doc   ...``, ``edit  <file>`` (references rewritten),
``UNKNOWN hudi/x.py: ...``, ``BOTH ...`` / ``MISSING ...`` / ``AMBIGUOUS <file>:<line>`` /
``SYNTAX <file>`` (left for a person), then ``N moved; M files with rewritten references``.
Exit status 0; 1 when an old module defines a name that is also a module of its room (nothing
done); 2 for a bad argument.

Not rewritten: Sphinx cross-references relative to a module (``:mod:`.fsview```) in docstrings of
moved modules, and CHANGELOG.md (history).
"""

from __future__ import annotations

import argparse
import ast
import re
import shutil
import subprocess
import sys
from pathlib import Path

PKG = "airflow_hudi_etc"
HUDI = f"{PKG}.hudi"

#: old module (dotted, under hudi/) → new module; a package moves whole
MOVES: dict[str, str] = {
    "properties": "config.properties",
    "schema": "config.schema",
    "avro_arrow": "logformat.avro_arrow",
    "instant": "timeline.instant",
    "timeline": "timeline.active",
    "timeline_v2": "timeline.timeline_v2",
    "layout": "timeline.layout",
    "archive_v6": "timeline.archive_v6",
    "commit_metadata": "timeline.commits",
    "avro_models": "timeline.avro_models",
    "fsview": "file_group.fsview",
    "naming": "file_group.naming",
    "merge": "file_group.merge",
    "bloom": "index.bloom",
    "stats": "index.stats",
    "ordering_facts": "index.ordering_facts",
    "log_index": "index.log_index",
    "plan": "services.plan",
    "coexistence": "services.coexistence",
    "rollback": "services.rollback",
    "markers": "services.markers",
    "heartbeat": "services.heartbeat",
    "crash": "services.crash",
    "etc_metadata": "services.etc_metadata",
    "table": "table.hudi_table",
    "writer": "write.writer",
    "write_prepare": "write.prepare",
    "write_tag": "write.tag",
    "write_route": "write.route",
    "write_append": "write.append",
    "write_insert": "write.insert",
    "write_units": "write.units",
    "write_undo": "write.undo",
}
#: the moves that are packages (folders)
PACKAGES = {"bloom"}
#: modules that stay at the top of hudi/ (below every room)
TOP = ("errors", "etc_keys", "storage")
#: the rooms, lowest first
ROOMS = ("config", "logformat", "timeline", "file_group", "index", "services", "table", "write")
ROOM_DOCS = {
    "config": "What defines a table: ``hoodie.properties`` read and written with Java's escaping and\n"
              "checksum (:mod:`.properties`), and the record schema, Arrow ↔ Avro as Spark-with-Hudi\n"
              "writes it, meta fields and event-time values (:mod:`.schema`).",
    "timeline": "The timeline: the instant vocabulary (:mod:`.instant`), the active timeline of both\n"
                "layouts (:mod:`.active`; layout 2's names, completion times and LSM history in\n"
                ":mod:`.timeline_v2`), writing instants in either layout (:mod:`.layout`), the archived\n"
                "timeline of version 6 (:mod:`.archive_v6`), commit metadata typed and encoded\n"
                "(:mod:`.commits`) and the Avro timeline files: plans and their metadata\n"
                "(:mod:`.avro_models`).",
    "file_group": "File groups and slices: the file-system view (:mod:`.fsview`), the file-name rules of\n"
                  "both version families (:mod:`.naming`) and the merge of one slice, base file plus log\n"
                  "blocks, with Hudi's payload rules (:mod:`.merge`).",
    "index": "What is known of files without reading them: Hudi's bloom filters in base-file footers\n"
             "(:mod:`.bloom`), the event times of log files from write stats and the table summary\n"
             "(:mod:`.stats`), per-log ordering facts (:mod:`.ordering_facts`) and the event-time index\n"
             "that keeps scans' answers (:mod:`.log_index`).",
    "services": "Table services and the contract with Java next to them: the compaction plan file\n"
                "(:mod:`.plan`), the rules for sharing a table with Java Hudi (:mod:`.coexistence`),\n"
                "rollback instants (:mod:`.rollback`), DIRECT markers (:mod:`.markers`), heartbeats\n"
                "(:mod:`.heartbeat`), the named crash points (:mod:`.crash`) and the typed views of the\n"
                "product's own metadata keys: plan, commit and table settings (:mod:`.etc_metadata`).",
    "table": "A loaded table: storage, validated config and timeline, and the merged reads over it\n"
             "(:class:`.hudi_table.HudiTable`: snapshot, read-optimized, as-of, incremental).",
    "write": "The write path: new tables, batches of upserts/inserts/deletes as deltacommits in either\n"
             "layout (:mod:`.writer`, the driver), stage by stage: prepare the batch (:mod:`.prepare`), tag\n"
             "keys to file groups (:mod:`.tag`), route them into work units (:mod:`.route`), append logs\n"
             "(:mod:`.append`), insert base files with Hudi's footer (:mod:`.insert`); the work unit\n"
             "(:mod:`.units`), the single-writer rule and undo (:mod:`.undo`).",
}
LOGFORMAT_NOTE = ("This room also holds :mod:`.avro_arrow`: AVRO_DATA blocks decoded column by column\n"
                  "straight into Arrow.")
HUDI_DOC = '''"""The Hudi format layer, in rooms; a room imports only the modules at this level and the
rooms before it (tests/test_layers.py checks):

* here: ``errors`` (the typed errors), ``etc_keys`` (the product's own metadata keys), ``storage``
  (fsspec storage, table-relative paths, write-once files);
* ``config/`` — hoodie.properties and the record schema;
* ``logformat/`` — log files byte for byte (blocks, names, Avro/Parquet/delete contents);
* ``timeline/`` — instants, both timeline layouts, the archived history, commit metadata;
* ``file_group/`` — the file-system view, file names, the merge of a slice;
* ``index/`` — bloom filters, event-time stats, ordering facts, the event-time index;
* ``services/`` — compaction plan, Java coexistence, rollback, markers, heartbeats, crash points,
  the typed views of our keys;
* ``table/`` — the loaded table and its reads;
* ``write/`` — the writer.
"""
'''
#: where references are rewritten; suffixes of the text files touched
ROOT_DIRS = ("airflow_hudi_etc", "tests", "bench", "spark_jobs", "scripts", "example_dags", "docs")
SUFFIXES = {".py", ".md", ".toml", ".cfg", ".ini", ".txt", ".sh", ".yml", ".yaml", ".rst"}
SKIP_PARTS = {".git", ".venv", "__pycache__", "fixtures", ".java-hudi", "node_modules"}

ROOMS_TEST_MARK = "# ------------------------------------------------------------------ rooms of hudi/"
ROOMS_TEST = '''

''' + ROOMS_TEST_MARK + '''
#: the rooms of ``hudi/``, lowest first: a module of a room imports only the modules at the top of
#: ``hudi/`` and the rooms up to its own; the top imports no room
HUDI_ROOMS = ("config", "logformat", "timeline", "file_group", "index", "services", "table", "write")
HUDI_TOP = {"errors", "etc_keys", "storage"}


def _room_violations(graph: dict[str, set[str]]) -> list[str]:
    def place(mod):  # "top", a room, or the name of a module that is in no room
        parts = mod.split(".")
        if parts[:2] != ["airflow_hudi_etc", "hudi"] or len(parts) == 2:
            return None
        return "top" if parts[2] in HUDI_TOP else parts[2]

    rank = {"top": -1, **{r: i for i, r in enumerate(HUDI_ROOMS)}}
    bad = []
    for mod, deps in sorted(graph.items()):
        here = place(mod)
        if here is None:
            continue
        if here not in rank:
            bad.append(f"{mod} is in no room (HUDI_ROOMS / HUDI_TOP)")
            continue
        for d in sorted(deps):
            there = place(d)
            if there is not None and there in rank and rank[there] > rank[here]:
                bad.append(f"{mod} ({here}) imports {d} ({there}): a room above it")
    return bad


def test_hudi_rooms_import_only_rooms_below():
    assert _room_violations(_module_graph()) == []


def test_the_room_checker_sees_an_upward_import_and_a_module_in_no_room():
    """The test can fail: config/ importing write/ is reported, so is a module outside every room."""
    up, loose = PKG / "hudi" / "config" / "_room_probe.py", PKG / "hudi" / "_room_probe_loose.py"
    up.write_text("def f():\\n    from ..write.writer import write_batch\\n")
    loose.write_text("from .errors import HudiEtcError\\n")
    try:
        bad = _room_violations(_module_graph())
    finally:
        up.unlink()
        loose.unlink()
    assert any(b.startswith("airflow_hudi_etc.hudi.config._room_probe (config) imports") for b in bad), bad
    assert "airflow_hudi_etc.hudi._room_probe_loose is in no room (HUDI_ROOMS / HUDI_TOP)" in bad
'''


# ---------------------------------------------------------------------------------------- map
def _hudi_dir(repo: Path) -> Path:
    return repo / PKG / "hudi"


def _old_path(hudi: Path, old: str) -> Path:
    p = hudi.joinpath(*old.split("."))
    return p if old in PACKAGES else p.with_suffix(".py")


def _new_path(hudi: Path, new: str, is_pkg: bool) -> Path:
    p = hudi.joinpath(*new.split("."))
    return p if is_pkg else p.with_suffix(".py")


class Map:
    """Old dotted module paths (under hudi/) → new ones, with the rooms' members for telling an
    already-new path (``timeline.active``) from an old one (``timeline.Timeline``)."""

    def __init__(self, hudi: Path):
        self.moves = {tuple(k.split(".")): tuple(v.split(".")) for k, v in MOVES.items()}
        self.members: dict[str, set[str]] = {r: set() for r in ROOMS}
        for new in self.moves.values():
            self.members[new[0]].add(new[1])
        for r in ROOMS:
            d = hudi / r
            if d.is_dir():
                self.members[r] |= {p.stem for p in d.glob("*.py")} | {p.name for p in d.iterdir() if p.is_dir()}
        #: rooms named like an old module: their paths need the members to be read
        self.colliding = {r for r in ROOMS if (r,) in self.moves}

    def is_new(self, comps: tuple[str, ...]) -> bool:
        return len(comps) > 1 and comps[0] in self.colliding and comps[1] in self.members[comps[0]]

    def map(self, comps: tuple[str, ...]) -> tuple[str, ...] | None:
        """The new components of a dotted path under hudi/ (module plus attributes), None: unchanged."""
        if not comps or self.is_new(comps):
            return None
        for i in range(len(comps), 0, -1):
            new = self.moves.get(comps[:i])
            if new is not None:
                return new + comps[i:]
        return None


# ---------------------------------------------------------------------------------------- moves
def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)


def _tracked(repo: Path, path: Path) -> bool:
    return bool(_git(repo, "ls-files", "--", str(path.relative_to(repo))).stdout.strip())


def plan_moves(repo: Path, report: list[str]) -> list[tuple[Path, Path, str, str]]:
    """(old path, new path, old dotted, new dotted) of every move still to do."""
    hudi = _hudi_dir(repo)
    todo = []
    for old, new in MOVES.items():
        src = _old_path(hudi, old)
        is_pkg = old in PACKAGES
        dst = _new_path(hudi, new, is_pkg)
        if src.exists() and dst.exists():
            report.append(f"BOTH  hudi/{src.relative_to(hudi)} and hudi/{dst.relative_to(hudi)} exist: neither touched")
        elif src.exists():
            todo.append((src, dst, old, new))
        elif dst.exists():
            report.append(f"skip  {old} → {new} (already moved)")
        else:
            report.append(f"MISSING {old}: neither hudi/{src.relative_to(hudi)} nor hudi/{dst.relative_to(hudi)}")
    known = set(MOVES) | set(TOP) | set(ROOMS) | {"__init__", "__pycache__"}
    for p in sorted(hudi.iterdir()):
        name = p.stem if p.suffix == ".py" else p.name
        if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists())) and name not in known:
            report.append(f"UNKNOWN hudi/{p.name}: in no room, left in place (add it to MOVES)")
    return todo


def check_ambiguity(hudi: Path, m: Map) -> list[str]:
    """An old module named like a room must not define a name that is a member of that room."""
    bad = []
    for room in m.colliding:
        src = hudi / f"{room}.py"
        if not src.is_file():
            continue
        names = set()
        for node in ast.parse(src.read_text()).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        clash = names & m.members[room]
        if clash:
            bad.append(f"hudi/{room}.py defines {sorted(clash)}, which are also modules of room {room}/: "
                       f"rename those members in MOVES first")
    return bad


def do_moves(repo: Path, todo, report: list[str], dry: bool) -> dict[Path, str]:
    """Move; return new file path → its old package (dotted) for every .py file moved."""
    origin: dict[Path, str] = {}
    for src, dst, old, new in todo:
        files = sorted(src.rglob("*.py")) if src.is_dir() else [src]
        for f in files:
            rel = f.relative_to(src) if src.is_dir() else None
            nf = dst / rel if rel is not None else dst
            old_mod = f.relative_to(repo).with_suffix("").parts
            old_pkg = old_mod if f.name == "__init__.py" else old_mod[:-1]
            origin[nf] = ".".join(p for p in old_pkg if p != "__init__")
        report.append(f"move  hudi/{src.relative_to(_hudi_dir(repo))} → hudi/{dst.relative_to(_hudi_dir(repo))}")
        if dry:
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        if _tracked(repo, src):
            r = _git(repo, "mv", str(src.relative_to(repo)), str(dst.relative_to(repo)))
            if r.returncode:
                raise SystemExit(f"git mv {src} failed: {r.stderr}")
        else:
            report.append(f"      (untracked: moved without git)")
            shutil.move(str(src), str(dst))
    return origin


def write_room_inits(repo: Path, report: list[str], dry: bool) -> None:
    hudi = _hudi_dir(repo)
    for room, doc in ROOM_DOCS.items():
        init = hudi / room / "__init__.py"
        if init.exists() or (not dry and not (hudi / room).is_dir()):
            continue
        report.append(f"init  hudi/{room}/__init__.py")
        if not dry:
            init.write_text(f'"""{doc}\n"""\n')
            _git(repo, "add", str(init.relative_to(repo)))
    lf = hudi / "logformat" / "__init__.py"
    if lf.is_file() and (hudi / "logformat" / "avro_arrow.py").exists():
        t = lf.read_text()
        if LOGFORMAT_NOTE not in t:
            m = re.match(r'(\s*""".*?)(\n""")', t, re.S)
            if m:
                report.append("doc   hudi/logformat/__init__.py: names avro_arrow")
                if not dry:
                    lf.write_text(t[: m.end(1)] + "\n\n" + LOGFORMAT_NOTE + t[m.end(1):])
    top = hudi / "__init__.py"
    if top.is_file() and not top.read_text().strip():
        report.append("doc   hudi/__init__.py: the rooms and their order")
        if not dry:
            top.write_text(HUDI_DOC)


# ---------------------------------------------------------------------------------------- rewrite
_DOTTED = re.compile(r"\bairflow_hudi_etc\.hudi((?:\.[A-Za-z_]\w*)+)")


def _rewrite_dotted(text: str, m: Map, skip: list[tuple[int, int]] = ()) -> str:
    def sub(mo):
        if any(a <= mo.start() < b for a, b in skip):
            return mo.group(0)
        comps = tuple(mo.group(1)[1:].split("."))
        if len(comps) == 1 and comps[0] in m.colliding:  # "from ...hudi.timeline import active" in text
            follow = re.match(r"\s+import\s+(\w+)", text[mo.end():])
            if follow and follow.group(1) in m.members[comps[0]]:
                return mo.group(0)
        new = m.map(comps)
        return mo.group(0) if new is None else f"{HUDI}." + ".".join(new)

    return _DOTTED.sub(sub, text)


_NAME_AS = r"[A-Za-z_]\w*(?: as [A-Za-z_]\w*)?"
#: "from airflow_hudi_etc.hudi import x as y, z" written in text (a string of code, a README block)
_FROM_HUDI_TEXT = re.compile(rf"\bfrom airflow_hudi_etc\.hudi import ({_NAME_AS}(?:, *{_NAME_AS})*)")


def _rewrite_from_text(text: str, m: Map, skip: list[tuple[int, int]] = ()) -> str:
    """``from airflow_hudi_etc.hudi import <moved module>`` outside real import statements: one
    statement per moved module (joined by "; ", still one line of code)."""
    def sub(mo):
        if any(a <= mo.start() < b for a, b in skip):
            return mo.group(0)
        keep, out = [], []
        for part in re.split(r", *", mo.group(1)):
            name, _, asname = part.partition(" as ")
            new = m.map((name,)) if (name,) in m.moves else None
            if new is None:
                keep.append(part)
            else:
                out.append(f"from {HUDI}.{'.'.join(new[:-1])} import {_alias(new[-1], asname or name)}")
        if not out:
            return mo.group(0)
        return "; ".join(([f"from {HUDI} import {', '.join(keep)}"] if keep else []) + out)

    return _FROM_HUDI_TEXT.sub(sub, text)


def _slash_patterns(m: Map):
    out = []
    for old, new in m.moves.items():
        o, n = "/".join(old), "/".join(new)
        # a module file, or a package folder (followed by "/" or the end of the name)
        out.append((re.compile(rf"(?<!tests/)(?<![\w.])hudi/{re.escape(o)}\.py\b"), f"hudi/{n}.py"))
        if ".".join(old) in PACKAGES:
            out.append((re.compile(rf"(?<!tests/)(?<![\w.])hudi/{re.escape(o)}(?=/|`|\s|$)"), f"hudi/{n}"))
    return out


def _rewrite_slashes(text: str, pats) -> str:
    for pat, rep in pats:
        text = pat.sub(rep, text)
    return text


def _module_text(level_abs: bool, target: tuple[str, ...], here_pkg: tuple[str, ...]) -> str:
    if level_abs:
        return ".".join(target)
    k = 0
    while k < min(len(here_pkg), len(target)) and here_pkg[k] == target[k]:
        k += 1
    return "." * (len(here_pkg) - k + 1) + ".".join(target[k:])


def _render_from(level_abs: bool, target: tuple[str, ...], names: list[str], here_pkg: tuple[str, ...],
                 indent: str) -> str:
    mod = _module_text(level_abs, target, here_pkg)
    line = f"from {mod} import {', '.join(names)}"
    if len(indent) + len(line) <= 120:
        return line
    inner = "".join(f"{indent}    {n},\n" for n in names)
    return f"from {mod} import (\n{inner}{indent})"


def _alias(name: str, asname: str | None) -> str:
    return name if asname is None or asname == name else f"{name} as {asname}"


def _rewrite_imports(text: str, path: Path, repo: Path, m: Map, origin_pkg: str | None,
                     report: list[str]) -> str:
    """The ``from ... import`` statements of one Python file, resolved and re-rendered."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        report.append(f"SYNTAX {path.relative_to(repo)}: {e}; its imports left as they are")
        return text
    rel = path.relative_to(repo).with_suffix("").parts
    in_pkg = rel[0] == PKG
    here_pkg = tuple(rel if path.name == "__init__.py" else rel[:-1])
    if here_pkg and here_pkg[-1] == "__init__":
        here_pkg = here_pkg[:-1]
    from_pkg = tuple(origin_pkg.split(".")) if origin_pkg else here_pkg
    moved = origin_pkg is not None and from_pkg != here_pkg
    lines = text.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln))
    edits = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            if not in_pkg:
                continue
            base = from_pkg[: len(from_pkg) - node.level + 1] + (tuple(node.module.split(".")) if node.module else ())
        else:
            base = tuple((node.module or "").split("."))
        if base[:2] != (PKG, "hudi") and not (node.level and moved):
            continue
        under = base[2:] if base[:2] == (PKG, "hudi") else None
        names = [(a.name, a.asname) for a in node.names]
        stmts: list[tuple[tuple[str, ...], list[str]]] = []
        if under is not None and len(under) == 1 and under[0] in m.colliding \
                and all(n in m.members[under[0]] for n, _ in names):
            new_base = base  # "from ...hudi.timeline import active": already the new form
            keep = [_alias(n, a) for n, a in names]
        elif under is not None and len(under) == 1 and under[0] in m.colliding \
                and any(n in m.members[under[0]] for n, _ in names):
            report.append(f"AMBIGUOUS {path.relative_to(repo)}:{node.lineno}: left as it is")
            continue
        else:
            mapped = m.map(under) if under else None
            new_base = base if mapped is None else (PKG, "hudi") + mapped
            keep = []
            for n, a in names:
                full = m.map(under + (n,)) if under is not None and not mapped and (under + (n,)) in m.moves \
                    else None
                if full is not None:  # "from hudi import timeline": the module itself moved
                    stmts.append(((PKG, "hudi") + full[:-1], [_alias(full[-1], a or n)]))
                else:
                    keep.append(_alias(n, a))
        if new_base == base and not stmts and not (node.level and moved):
            continue
        indent = lines[node.lineno - 1][: node.col_offset]
        start = offs[node.lineno - 1] + node.col_offset  # (import lines are ASCII: bytes = characters)
        end = offs[node.end_lineno - 1] + node.end_col_offset
        if not stmts:  # only the module changes: keep the names, their layout and comments as written
            head = re.match(r"from\s+(\.*[\w.]*)\s+import", text[start:end])
            if head:
                mod = _module_text(node.level == 0, new_base, here_pkg)
                edits.append((start + head.start(1), start + head.end(1), mod))
                continue
        if keep:
            stmts.insert(0, (new_base, keep))
        absolute = node.level == 0
        out = [_render_from(absolute, b, ns, here_pkg, indent) for b, ns in stmts]
        edits.append((start, end, ("\n" + indent).join(out)))
    for start, end, new in sorted(edits, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def _import_spans(text: str) -> list[tuple[int, int]]:
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    lines = text.splitlines(keepends=True)
    offs = [0]
    for ln in lines:
        offs.append(offs[-1] + len(ln))
    return [(offs[n.lineno - 1] + n.col_offset, offs[n.end_lineno - 1] + n.end_col_offset)
            for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and (n.level or (n.module or "").startswith(HUDI))]


def _files(repo: Path):
    for top in ROOT_DIRS:
        d = repo / top
        if not d.is_dir():
            continue
        for p in sorted(d.rglob("*")):
            if p.is_file() and p.suffix in SUFFIXES and not (set(p.relative_to(repo).parts) & SKIP_PARTS):
                yield p
    for p in sorted(repo.glob("*.md")):
        if p.name != "CHANGELOG.md":
            yield p


def rewrite_all(repo: Path, m: Map, origin: dict[Path, str], report: list[str], dry: bool) -> int:
    pats = _slash_patterns(m)
    changed = 0
    for p in _files(repo):
        try:
            text = p.read_text()
        except UnicodeDecodeError:
            continue
        new = text
        if p.suffix == ".py":
            new = _rewrite_imports(new, p, repo, m, origin.get(p), report)
            spans = _import_spans(new)
            new = _rewrite_dotted(new, m, spans)
            new = _rewrite_from_text(new, m, _import_spans(new))
        else:
            new = _rewrite_from_text(_rewrite_dotted(new, m), m)
        new = _rewrite_slashes(new, pats)
        if new != text:
            changed += 1
            report.append(f"edit  {p.relative_to(repo)}")
            if not dry:
                p.write_text(new)
    return changed


def update_readme(repo: Path, m: Map, report: list[str], dry: bool) -> None:
    """README's table of the Hudi layer: module cells as paths in their rooms; one line on the rooms."""
    p = repo / "README.md"
    if not p.is_file():
        return
    text = p.read_text()
    head = text.find("## The Hudi layer")
    if head < 0:
        report.append("README: no '## The Hudi layer' section: update it by hand")
        return
    end = text.find("\n## ", head + 5)
    end = len(text) if end < 0 else end
    sec = text[head:end]

    def cell(mo):
        name, tail = mo.group(1), mo.group(2)
        new = m.map((name,))
        if new is None or (tail == "/") != (name in PACKAGES):
            return mo.group(0)
        return f"`{'/'.join(new)}{tail}`"

    new_sec = re.sub(r"`([a-z_0-9]+)(\.py|/)`", cell, sec)
    note = ("The modules live in rooms, lowest first: the top of `hudi/` (`errors`, `etc_keys`, "
            "`storage`), then `config/`, `logformat/`, `timeline/`, `file_group/`, `index/`, "
            "`services/`, `table/`, `write/`; a room imports only the top and the rooms before it "
            "(`tests/test_layers.py`).\n\n")
    if "The modules live in rooms" not in new_sec:
        first_nl = new_sec.find("\n\n") + 2
        new_sec = new_sec[:first_nl] + note + new_sec[first_nl:]
    if new_sec != sec:
        report.append("edit  README.md (the Hudi layer's table and its rooms)")
        if not dry:
            p.write_text(text[:head] + new_sec + text[end:])


CHANGELOG_ENTRY = """### `hudi/` in rooms (issue 26)

* The modules of `airflow_hudi_etc/hudi/` moved into rooms, lowest first: `config/`, `logformat/`,
  `timeline/`, `file_group/`, `index/`, `services/`, `table/`, `write/` (`errors`, `etc_keys`,
  `storage` stay at the top); `timeline.py` is `timeline/active.py`,
  `commit_metadata.py` `timeline/commits.py`, `table.py` `table/hudi_table.py`. No behaviour
  changes; code importing the old module paths must follow (`airflow_hudi_etc.hudi.errors` is
  unchanged). `tests/test_layers.py` checks that a room imports only the rooms below it.

"""


def add_changelog(repo: Path, report: list[str], dry: bool) -> None:
    p = repo / "CHANGELOG.md"
    if not p.is_file():
        return
    t = p.read_text()
    if "### `hudi/` in rooms (issue 26)" in t or "## Unreleased\n\n" not in t:
        return
    report.append("edit  CHANGELOG.md (one entry under Unreleased)")
    if not dry:
        p.write_text(t.replace("## Unreleased\n\n", "## Unreleased\n\n" + CHANGELOG_ENTRY, 1))


def add_rooms_test(repo: Path, report: list[str], dry: bool) -> None:
    p = repo / "tests" / "test_layers.py"
    if not p.is_file():
        report.append("tests/test_layers.py missing: rooms test not added")
        return
    t = p.read_text()
    if ROOMS_TEST_MARK in t:
        return
    if "def _module_graph(" not in t:
        report.append("tests/test_layers.py has no _module_graph (the circles test): rooms test not added")
        return
    report.append("edit  tests/test_layers.py (the rooms' one-way rule)")
    if not dry:
        p.write_text(t.rstrip("\n") + "\n" + ROOMS_TEST)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("repo", type=Path)
    ap.add_argument("--dry-run", action="store_true")
    ap.add_argument("--move", action="append", default=[], metavar="OLD=NEW",
                    help="one more move, dotted under hudi/ (e.g. event_index=index.event_index); repeatable")
    a = ap.parse_args(argv)
    for spec in a.move:
        old, _, new = spec.partition("=")
        if not old or not new or new.split(".")[0] not in ROOMS or new.count(".") != 1:
            print(f"--move {spec}: give OLD=ROOM.NAME with ROOM one of {', '.join(ROOMS)}", file=sys.stderr)
            return 2
        MOVES[old] = new
    repo = a.repo.resolve()
    hudi = _hudi_dir(repo)
    if not hudi.is_dir():
        print(f"{hudi}: not a hudi/ package folder", file=sys.stderr)
        return 2
    report: list[str] = []
    m0 = Map(hudi)
    bad = check_ambiguity(hudi, m0)
    if bad:
        print("\n".join(bad), file=sys.stderr)
        return 1
    todo = plan_moves(repo, report)
    origin = do_moves(repo, todo, report, a.dry_run)
    write_room_inits(repo, report, a.dry_run)
    m = Map(hudi)  # members now include what the moves brought
    n = rewrite_all(repo, m, origin if not a.dry_run else {}, report, a.dry_run)
    update_readme(repo, m, report, a.dry_run)
    add_rooms_test(repo, report, a.dry_run)
    add_changelog(repo, report, a.dry_run)
    for line in report:
        print(line)
    print(f"{len(todo)} moved{' (dry run)' if a.dry_run else ''}; {n} files with rewritten references"
          + ("" if todo else "; nothing to move"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
