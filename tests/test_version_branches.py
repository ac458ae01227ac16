"""What differs between table versions is asked of the format profiles (``hudi/format/``): no code
elsewhere compares a table version or a timeline layout.

Read from the source with ``ast``: a comparison (``==``, ``<``, ``in``, ...) with a table version
(``table_version``, a ``version`` compared with a number from 4 up or with a set of versions, the
``hoodie.table.version`` property) or with a timeline layout (``layout``, ``layout_version``,
``timeline_layout``, ``layout_of(...)``, ``hoodie.timeline.layout.version``),
``getattr(x, "layout", ...)``, and a
type test against the layout-2 timeline class are version branches. Outside the profiles room
each is reported; ``hudi/storage*`` is left to its own owners.
"""

from __future__ import annotations

import ast
from pathlib import Path

from paths import REPO

PKG = REPO / "airflow_hudi_etc"
#: where version and layout numbers may be compared: the profiles room, and the storage code
EXEMPT = ("hudi/format/", "hudi/storage.py", "hudi/storage/")
#: names that hold (or functions that give) a timeline layout
LAYOUT_NAMES = {"layout", "layout_version", "timeline_layout", "layout_of"}
#: properties that hold a table version or a timeline layout
VERSION_KEYS = {"hoodie.table.version", "hoodie.timeline.layout.version"}
#: the timeline class of one layout (a type test against it is a layout branch)
LAYOUT_CLASSES = {"LayoutTwoTimeline"}
#: a number this large compared with a ``version`` is a table version (log, block and plan
#: versions are 0..3)
MIN_TABLE_VERSION = 4


def _name(node: ast.AST) -> str | None:
    """The name a value is read by: a variable, an attribute, or the function called for it."""
    if isinstance(node, ast.Call):
        node = node.func
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _table_version_numbers(node: ast.AST) -> bool:
    """A table version number, a collection holding one, or a named set of versions."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int) and not isinstance(node.value, bool) and node.value >= MIN_TABLE_VERSION
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_table_version_numbers(e) for e in node.elts)
    name = _name(node)
    return name is not None and "VERSIONS" in name.upper() and name.isupper()


def _names_version_key(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Constant) and n.value in VERSION_KEYS for n in ast.walk(node))


def _branch(node: ast.AST) -> str | None:
    """Why ``node`` is a version branch, or None."""
    if isinstance(node, ast.Compare):
        operands = [node.left, *node.comparators]
        names = [_name(o) or "" for o in operands]
        if any(n in LAYOUT_NAMES for n in names):
            return "compares a timeline layout"
        if "table_version" in names:
            return "compares a table version"
        if any(n.lower().endswith("version") for n in names) and any(map(_table_version_numbers, operands)):
            return "compares a version with a table version number"
        if any(map(_names_version_key, operands)):
            return "compares a version property"
        if any(n in LAYOUT_CLASSES for n in names):
            return "tests a timeline's layout by its class"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = node.args
        if (node.func.id == "getattr" and len(args) >= 2 and isinstance(args[1], ast.Constant)
                and args[1].value in LAYOUT_NAMES):
            return "reads a timeline layout with getattr"
        if node.func.id in ("isinstance", "issubclass") and len(args) == 2 and any(
                _name(n) in LAYOUT_CLASSES for n in ast.walk(args[1])):
            return "tests a timeline's layout by its class"
    return None


def version_branches(source: str, where: str = "<source>") -> list[str]:
    return [f"{where}:{n.lineno}: {why}: {ast.unparse(n)[:100]}"
            for n in ast.walk(ast.parse(source, where)) if (why := _branch(n)) is not None]


def _exempt(path: Path) -> bool:
    rel = path.relative_to(PKG).as_posix()
    return any(rel == e or rel.startswith(e) for e in EXEMPT)


def test_no_version_branch_outside_the_profiles_room():
    found = []
    for path in sorted(PKG.rglob("*.py")):
        if not _exempt(path):
            found += version_branches(path.read_text(), str(path.relative_to(PKG)))
    assert found == [], "\n".join(found)


def test_the_profiles_room_and_storage_are_exempt():
    assert _exempt(PKG / "hudi" / "format" / "v6.py") and _exempt(PKG / "hudi" / "storage.py")
    assert _exempt(PKG / "hudi" / "storage" / "local.py")
    assert not _exempt(PKG / "hudi" / "timeline" / "active.py") and not _exempt(PKG / "compaction" / "plans.py")


def test_the_checker_sees_each_kind_of_version_branch():
    """The test can fail: each pattern it is meant to catch is reported."""
    branches = {
        "if table_version == 6: pass": "compares a table version",
        "ok = table_version not in (6, 8, 9)": "compares a table version",
        "if config.version >= 8: pass": "compares a version with a table version number",
        "if self.version < 8: pass": "compares a version with a table version number",
        "if version in (8, 9): pass": "compares a version with a table version number",
        "if cfg.version not in WRITABLE_TABLE_VERSIONS: pass": "compares a version with a table version number",
        "if int(props.get('hoodie.table.version', '6')) < 8: pass": "compares a version property",
        "if config.layout_version == 2: pass": "compares a timeline layout",
        "if tl.layout != 1: pass": "compares a timeline layout",
        "x = profile.timeline_layout == 2": "compares a timeline layout",
        "if layout == 2: pass": "compares a timeline layout",
        "if layout.layout_of(planned_on) == 1: pass": "compares a timeline layout",
        "x = getattr(timeline, 'layout', 1)": "reads a timeline layout with getattr",
        "x = getattr(config, 'layout_version', 1)": "reads a timeline layout with getattr",
        "x = isinstance(tl, LayoutTwoTimeline)": "tests a timeline's layout by its class",
        "x = type(tl) is active.LayoutTwoTimeline": "tests a timeline's layout by its class",
    }
    for src, why in branches.items():
        got = version_branches(src)
        assert len(got) == 1 and why in got[0], (src, got)


def test_the_checker_leaves_other_versions_and_profile_questions_alone():
    """Log, block and plan versions, a version read back and compared with the table's, and the
    profile's answers are no version branches."""
    fine = [
        "if lf.parse_log_file_name(n).version == 1: pass",
        "if version in (1, 2): pass",
        "if version != DELETE_BLOCK_VERSION: pass",
        "if isinstance(version, bool) or version < 1: pass",
        "same = version != str(config.version)",
        "if table.profile.logs_named_by_writing_instant: pass",
        "if profile.commit_encoding == JSON_COMMITS: pass",
        "cls = TIMELINE_CLASSES[config.profile.timeline_layout]",
    ]
    for src in fine:
        assert version_branches(src) == [], src
