"""Print the package-level import graph and the largest modules and functions of airflow_hudi_etc
(`python scripts/code_shape.py [checkout]`)."""
import ast, collections, pathlib, sys

root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".") / "airflow_hudi_etc"
PKG = "airflow_hudi_etc"

def room(mod: str) -> str:
    """A sub-package's name (``hudi``, ``compaction``, ``spark``...), or the module's own name for
    a top-level module (``api``, ``cli``, ``contract``, ``assets``...)."""
    parts = mod.split(".")
    if len(parts) == 1:
        return "(package)"
    return parts[1] if (root / parts[1]).is_dir() else parts[1] + ".py"


edges = collections.Counter()
sizes, funcs = [], []
for p in sorted(root.rglob("*.py")):
    rel = p.relative_to(root.parent).with_suffix("")
    mod = ".".join(rel.parts)
    if mod.endswith(".__init__"):
        mod = mod[: -len(".__init__")]
    src = p.read_text()
    tree = ast.parse(src)
    sizes.append((len(src.splitlines()), str(p.relative_to(root.parent))))
    here = room(mod)
    pkg_parts = mod.split(".") if p.name == "__init__.py" else mod.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            funcs.append((node.end_lineno - node.lineno + 1, f"{p.relative_to(root.parent)}:{node.name}"))
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg_parts[: len(pkg_parts) - node.level + 1]
                targets = [".".join(base + ([node.module] if node.module else []))]
            elif node.module:
                targets = [node.module]
        for t in targets:
            if t.startswith(PKG + ".") :
                there = room(t)
                if there != here:
                    edges[(here, there)] += 1
print("import edges between rooms (importer -> imported: count)")
for (a, b), n in sorted(edges.items()):
    print(f"  {a:12s} -> {b:12s} {n}")
print("\nlargest modules (lines)")
for n, f in sorted(sizes, reverse=True)[:10]:
    print(f"  {n:5d} {f}")
print("\nlargest functions (lines)")
for n, f in sorted(funcs, reverse=True)[:10]:
    print(f"  {n:5d} {f}")
