"""Imports point one way: hudi ← compaction ← {api, cli} ← {spark side, Airflow side}.

Read from the source with ``ast`` (lazy imports inside functions count too), so a layer cannot
reach upwards even on a path no test exercises.
"""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[1] / "airflow_hudi_etc"

#: per layer: the package-internal modules and third-party roots it must not import
FORBIDDEN = {
    "hudi": ({"compaction", "api", "cli", "jobs", "engines", "spark_submit", "shipping", "hooks", "operators",
              "sensors", "triggers", "notifications", "report"}, {"airflow", "pyspark"}),
    "compaction": ({"api", "cli", "jobs", "engines", "spark_submit", "shipping", "hooks", "operators", "sensors",
                    "triggers", "notifications"}, {"airflow", "pyspark"}),
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


def test_imports_point_one_way():
    bad = []
    for layer, (internal, external) in FORBIDDEN.items():
        for f in sorted((PKG / layer).rglob("*.py")):
            for kind, name in _imports(f):
                if (kind == "internal" and name in internal) or (kind == "external" and name in external):
                    bad.append(f"{f.relative_to(PKG)} imports {name}")
    assert not bad, bad


def test_the_checker_sees_an_upward_import(tmp_path):
    """The test can fail: a lazy upward import inside a function is found."""
    f = PKG / "hudi" / "_layer_probe.py"
    f.write_text("def f():\n    from ..compaction.scheduling import schedule\n    import pyspark\n")
    try:
        got = _imports(f)
    finally:
        f.unlink()
    assert ("internal", "compaction") in got and ("external", "pyspark") in got
