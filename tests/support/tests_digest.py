"""A digest of a table's files, to prove an operation changed nothing."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path


def tree_digest(path: Path) -> str:
    """Names and bytes of every file (symlinks as their target), ``.hoodie/`` included."""
    h = hashlib.sha256()
    for p in sorted(Path(path).rglob("*")):
        if p.is_file() or p.is_symlink():
            h.update(str(p.relative_to(path)).encode() + b"\0")
            h.update(os.readlink(p).encode() if p.is_symlink() else p.read_bytes())
            h.update(b"\0")
    return h.hexdigest()
