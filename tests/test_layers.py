"""Imports point one way: hudi ← compaction ← {contract, api} ← commands ← spark side ← cli, and
{contract, api} ← Airflow side, which reads tables through the public ``Table`` API alone.

Read from the source with ``ast`` (lazy imports inside functions count too), so a layer cannot
reach upwards even on a path no test exercises.
"""

from __future__ import annotations

import ast
from pathlib import Path

from paths import REPO

PKG = REPO / "airflow_hudi_etc"

#: the Airflow side and the Spark side: nothing below them may import these
AIRFLOW_SIDE = {"hooks", "operators", "sensors", "triggers", "notifications", "assets", "task_groups", "failfast",
                "get_provider_info"}
#: per layer (a package folder or a module): the package-internal modules it MAY import (None: any
#: but the forbidden ones), those it must not, and the third-party roots it must not import
LAYERS = {
    # the Hudi format layer imports nothing above it
    "hudi": ({"hudi"}, set(), {"airflow", "pyspark"}),
    # the compaction service: the Hudi layer and itself; no Spark, no Airflow, no spark/ room
    "compaction": ({"hudi", "compaction"}, set(), {"airflow", "pyspark"}),
    # the one contract (CLI ↔ Spark job ↔ operators): errors only
    "contract.py": ({"hudi"}, set(), {"airflow", "pyspark"}),
    "api.py": ({"hudi", "compaction", "report"}, set(), {"airflow", "pyspark"}),
    # the command handlers (argv → API call → result), run by the CLI and the Spark job alike:
    # below both, so neither the Spark room nor the CLI
    "commands.py": ({"hudi", "contract", "api", "report"}, set(), {"airflow", "pyspark"}),
    "cli.py": (None, AIRFLOW_SIDE, {"airflow", "pyspark"}),
    # the Spark side never imports the Airflow side, nor the CLI (it runs the handlers of commands.py)
    "spark": (None, AIRFLOW_SIDE | {"cli"}, {"airflow"}),
}


def _imports(path: Path) -> set[tuple[str, str]]:
    """(kind, name): ("internal", first package-level module) or ("external", top-level package)."""
    out = set()
    rel_parts = path.relative_to(PKG).with_suffix("").parts
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if top == "airflow_hudi_etc":
                    out.add(("internal", a.name.split(".")[1]))
                else:
                    out.add(("external", top))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = list(rel_parts[:-1])[: len(rel_parts) - node.level]
                target = base + (node.module.split(".") if node.module else [])
                if target:
                    out.add(("internal", target[0]))
                else:  # from .. import x
                    out |= {("internal", a.name) for a in node.names}
            elif node.module:
                top = node.module.split(".")[0]
                if top == "airflow_hudi_etc":
                    parts = node.module.split(".")
                    out |= ({("internal", parts[1])} if len(parts) > 1 else {("internal", a.name) for a in node.names})
                else:
                    out.add(("external", top))
    return out


def _layer_files(layer: str) -> list[Path]:
    p = PKG / layer
    return [p] if p.is_file() else sorted(p.rglob("*.py"))


def test_imports_point_one_way():
    bad = []
    for layer, (allowed, forbidden, external) in LAYERS.items():
        files = _layer_files(layer)
        assert files, layer
        for f in files:
            for kind, name in _imports(f):
                if kind == "internal" and ((allowed is not None and name not in allowed) or name in forbidden):
                    bad.append(f"{f.relative_to(PKG)} imports {name}")
                elif kind == "external" and name in external:
                    bad.append(f"{f.relative_to(PKG)} imports {name}")
    assert not bad, bad


def test_the_spark_room_has_the_spark_modules_and_no_shims_are_left():
    """jobs, engines, spark_submit, shipping live in ``spark/`` only (no module re-exporting them)."""
    for name in ("jobs", "engines", "spark_submit", "shipping", "catalog"):
        assert (PKG / "spark" / f"{name}.py").is_file(), name
        assert not (PKG / f"{name}.py").exists(), f"{name}.py left at the top of the package"


def _probe_imports(room: str, code: str) -> set[tuple[str, str]]:
    """What :func:`_imports` reads from a module of ``room`` holding ``code`` (removed after)."""
    f = PKG / room / "_layer_probe.py"
    f.write_text(code)
    try:
        return _imports(f)
    finally:
        f.unlink()


def test_the_checker_sees_an_upward_import(tmp_path):
    """The test can fail: a lazy upward import inside a function is found."""
    got = _probe_imports("hudi", "def f():\n    from ..compaction.scheduling import schedule\n    import pyspark\n")
    assert ("internal", "compaction") in got and ("external", "pyspark") in got


def test_the_checker_sees_the_compaction_layer_reach_into_spark():
    """The test can fail: compaction importing the spark room (or pyspark) is reported."""
    got = _probe_imports("compaction", "def f():\n    from ..spark.engines import SparkEngine\n"
                                       "    from airflow_hudi_etc.hooks import hudi\n")
    allowed = LAYERS["compaction"][0]
    assert {n for k, n in got if k == "internal"} - allowed == {"spark", "hooks"}


def test_the_checker_sees_the_spark_room_reach_into_the_cli():
    """The test can fail: a job running a command through the CLI (instead of the handlers of
    ``commands.py``) is reported."""
    got = _probe_imports("spark", "def f():\n    from airflow_hudi_etc.cli import run_command\n")
    assert ("internal", "cli") in got and "cli" in LAYERS["spark"][1]


# ------------------------------------------------------------------------ no import circles
def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_graph(pkg: Path = PKG) -> dict[str, set[str]]:
    """Every module of the package → the package modules it imports (lazy imports inside functions
    count, and so do imports under ``if TYPE_CHECKING:``: a type from a module above is a circle of
    concepts too; ``from . import x`` of a module counts as that module; a name from a package's
    ``__init__`` counts as the package)."""
    files = {_module_name(p): p for p in pkg.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for mod, path in files.items():
        here = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = ".".join(here[: len(here) - node.level + 1] + (node.module.split(".") if node.module else [])) \
                    if node.level else (node.module or "")
                targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in files else base for a in node.names]
            for t in targets:
                while t and t not in files:
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    deps.add(t)
        graph[mod] = deps
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_circles():
    """No two modules of the package import each other, directly or round a longer circle."""
    assert _cycles(_module_graph()) == []


def test_the_circle_checker_sees_a_circle():
    """The test can fail: a lazy import back from a module that the other imports is a circle, and
    so is a type imported back under ``if TYPE_CHECKING:``."""
    a, b, c = (PKG / "hudi" / f"_circle_probe_{n}.py" for n in "abc")
    a.write_text("from . import _circle_probe_b\nfrom .errors import HudiEtcError\n")
    b.write_text("def f():\n    from airflow_hudi_etc.hudi._circle_probe_a import x\n")
    c.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..compaction._circle_probe_d import X\n")
    d = PKG / "compaction" / "_circle_probe_d.py"
    d.write_text("from ..hudi._circle_probe_c import Y\n")
    try:
        graph = _module_graph()
    finally:
        for f in (a, b, c, d):
            f.unlink()
    hudi, comp = "airflow_hudi_etc.hudi._circle_probe_", "airflow_hudi_etc.compaction._circle_probe_"
    assert graph[hudi + "a"] == {hudi + "b", "airflow_hudi_etc.hudi.errors"}
    found = _cycles(graph)
    assert [hudi + "a", hudi + "b"] in found and [comp + "d", hudi + "c"] in found


# ------------------------------------------------------ the Airflow side reads through Table
#: the modules of the package the Airflow side may import besides its own: the public table API
#: (``api``, and ``Table`` from the package's top level), the contract (argv, result file, the
#: settings passed to a job), the public error types, and the Spark room's spark-submit plumbing
AIRFLOW_PUBLIC = {"airflow_hudi_etc", "airflow_hudi_etc.api", "airflow_hudi_etc.contract",
                  "airflow_hudi_etc.hudi.errors"}
AIRFLOW_PUBLIC_ROOMS = ("airflow_hudi_etc.spark",)


def _airflow_side_violations(graph: dict[str, set[str]]) -> list[str]:
    def under(mod: str, roots) -> bool:
        return any(mod == r or mod.startswith(r + ".") for r in roots)

    side = tuple(f"airflow_hudi_etc.{n}" for n in AIRFLOW_SIDE)
    return [f"{mod} imports {d}" for mod, deps in sorted(graph.items()) if under(mod, side)
            for d in sorted(deps) if not (under(d, side) or d in AIRFLOW_PUBLIC or under(d, AIRFLOW_PUBLIC_ROOMS))]


def test_the_airflow_side_reads_tables_only_through_the_public_api():
    assert _airflow_side_violations(_module_graph()) == []


def test_the_checker_sees_the_airflow_side_reach_into_the_compaction_service():
    """The test can fail: a sensor importing the trigger module (not ``Table``), or a hook type
    checked against the Hudi layer's table, is reported; the public modules are not."""
    f = PKG / "sensors" / "_layer_probe.py"
    f.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..hudi.table.hudi_table import HudiTable\n"
                 "def f():\n    from ..compaction.readiness import last_threshold\n    from ..api import Table\n"
                 "    from ..hudi import errors\n    from ..spark.shipping import package_zip\n")
    try:
        bad = _airflow_side_violations(_module_graph())
    finally:
        f.unlink()
    assert bad == ["airflow_hudi_etc.sensors._layer_probe imports airflow_hudi_etc.compaction.readiness",
                   "airflow_hudi_etc.sensors._layer_probe imports airflow_hudi_etc.hudi.table.hudi_table"], bad


# ------------------------------------------------------------------ rooms of hudi/
#: the rooms of ``hudi/``, lowest first: a module of a room imports only the modules at the top of
#: ``hudi/`` and the rooms up to its own; the top imports no room
HUDI_ROOMS = ("format", "config", "logformat", "timeline", "file_group", "index", "concurrency", "protocol", "table",
              "write")
HUDI_TOP = {"errors", "etc_keys", "storage", "owners", "crash"}


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
    up.write_text("def f():\n    from ..write.writer import write_batch\n")
    loose.write_text("from .errors import HudiEtcError\n")
    try:
        bad = _room_violations(_module_graph())
    finally:
        up.unlink()
        loose.unlink()
    assert any(b.startswith("airflow_hudi_etc.hudi.config._room_probe (config) imports") for b in bad), bad
    assert "airflow_hudi_etc.hudi._room_probe_loose is in no room (HUDI_ROOMS / HUDI_TOP)" in bad
