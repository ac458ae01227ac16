"""Outside ``hudi/storage/`` the code asks the storage what it can do (its capabilities), never
which store it is: no ``.is_local``, no ``.protocol``.

Read from the source with ``ast`` (as ``test_layers``), so a question on a path no test runs is
found too; ``getattr(x, "is_local")`` counts as well.
"""

from __future__ import annotations

import ast
from pathlib import Path

from paths import REPO

PKG = REPO / "airflow_hudi_etc"
STORAGE = PKG / "hudi" / "storage"
#: what a caller must not ask: the backend's business (see hudi/storage/base.py's capabilities)
FORBIDDEN = {"is_local", "protocol"}


def _questions(path: Path, root: Path = PKG) -> list[str]:
    """``file:line attribute`` (the file relative to ``root``) of each forbidden attribute read."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        name = None
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN:
            name = node.attr
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
              and node.func.id in ("getattr", "hasattr", "setattr") and len(node.args) >= 2
              and isinstance(node.args[1], ast.Constant) and node.args[1].value in FORBIDDEN):
            name = node.args[1].value
        if name:
            out.append(f"{path.relative_to(root)}:{node.lineno} {name}")
    return out


def _outside_storage() -> list[Path]:
    return [p for p in sorted(PKG.rglob("*.py")) if STORAGE not in p.parents]


def test_only_the_storage_package_asks_which_store_it_is():
    files = _outside_storage()
    assert len(files) > 50 and not any(p.is_relative_to(STORAGE) for p in files)
    bad = [q for f in files for q in _questions(f)]
    assert not bad, bad


def test_the_checker_sees_a_store_question(tmp_path):
    """The test can fail: ``storage.is_local``, ``st.backend.protocol`` and a ``getattr`` of one are
    found; a function merely named like one (``is_local_master``) is not."""
    f = tmp_path / "probe.py"
    f.write_text("def f(storage, st):\n"
                 "    if storage.is_local:\n"
                 "        return st.backend.protocol\n"
                 "    return getattr(storage, 'is_local', False) or is_local_master('local[2]')\n")
    assert _questions(f, tmp_path) == ["probe.py:2 is_local", "probe.py:3 protocol", "probe.py:4 is_local"]
