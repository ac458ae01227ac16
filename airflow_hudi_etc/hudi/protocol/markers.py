"""Write markers in Java Hudi's DIRECT layout.

Before a write or a compaction execution creates a data file, it creates a marker
``.hoodie/.temp/<instant>/<partition>/<name>.marker.<TYPE>`` (``DirectWriteMarkers``, 0.14):

* ``CREATE`` — ``<name>`` is the new file itself: every new base file (compaction outputs
  included). Java's ``MarkerBasedRollbackStrategy`` deletes ``<base path>/<partition>/<name>``.
  The log files a compaction execution makes in slice C (split log, links of older plans) carry
  no marker: Hudi 1.x throws rolling back a CREATE-marked log on a version-6 table; our rollback
  removes them as the plan's outputs.
* ``CREATE`` also marks a new log file of a write on versions 8/9, as Java 1.x does (Hudi 1.2's
  rollback refuses an APPEND marker there: "V8+ should not have APPEND markers").
* ``APPEND`` — (version 6) a new log file of a write. As ``HoodieAppendHandle`` does, ``<name>`` is the
  *phony base file name* ``<fileId>_<writeToken>_<baseInstant>.parquet`` of the slice the log
  extends; Java's rollback reads the file id and base instant from it and rolls back the latest
  log of that slice (deletes it when the rolled-back instant made the file group, else appends a
  rollback command block).

Our own rollbacks work from the same markers (:func:`files_to_roll_back`); markers of the older,
flat layout (``<partition>%2F<file>.marker.<TYPE>``, naming the file itself) are still read.
A marker is a file anyone with write access could plant: paths that leave the table or point
into ``.hoodie`` are refused (:class:`UnsafePathError`), and only base/log file names are
ever deleted.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from .. import logformat as lf
from ..errors import InstantExistsError, InvalidTimelineError, UnsafePathError
from ..file_group.fsview import base_file_name, parse_base_file_name
from ..storage import Storage, safe_relpath
from ..timeline.active import META_DIR, TEMP_DIR
from ..timeline.commits import WriteStat

MARKER_INFIX = ".marker."
TYPES = ("CREATE", "MERGE", "APPEND")


def marker_dir(instant: str) -> str:
    return f"{TEMP_DIR}/{instant}"


def marker_rel(instant: str, partition: str, name: str, kind: str) -> str:
    inner = posixpath.join(partition, name) if partition else name
    return f"{marker_dir(instant)}/{inner}{MARKER_INFIX}{kind}"


def _create(storage: Storage, rel: str) -> None:
    try:
        storage.create_if_absent(rel, b"")
    except InstantExistsError:
        pass  # a retry's own marker


def mark_create(storage: Storage, instant: str, file_rel: str) -> None:
    """The CREATE marker of a new file (table-relative path), before the file is made."""
    part, name = posixpath.split(safe_relpath(file_rel))
    _create(storage, marker_rel(instant, part, name, "CREATE"))


def mark_append(storage: Storage, instant: str, partition: str, file_id: str, write_token: str,
                base_instant: str) -> None:
    """The APPEND marker of a new log file of slice ``base_instant`` (HoodieAppendHandle's name)."""
    _create(storage, marker_rel(instant, partition, base_file_name(file_id, write_token, base_instant), "APPEND"))


@dataclass(frozen=True)
class Marker:
    path: str  # the marker file, table-relative
    partition: str
    name: str  # what it names (without ``.marker.<TYPE>``)
    kind: str | None  # CREATE / MERGE / APPEND; None: not a marker (Java's MARKERS.type, ...)


def list_markers(storage: Storage, instant: str) -> list[Marker]:
    """Every file under the instant's marker folder, parsed as Java would: partition = the folder
    relative to the marker folder, name = the file name up to ``.marker.``."""
    root = marker_dir(instant)
    out = []
    for f in storage.walk_files(root):
        inner = f.path[len(root) + 1:]
        part, fname = posixpath.split(inner)
        name, sep, kind = fname.rpartition(MARKER_INFIX)
        if not sep or kind not in TYPES:
            out.append(Marker(f.path, part, fname, None))
            continue
        if not part and "%2F" in name:  # the older flat layout
            full = name.replace("%2F", "/")
            part, name = posixpath.split(full)
        out.append(Marker(f.path, part, name, kind))
    return out


def _checked(instant: str, m: Marker) -> str:
    rel = safe_relpath(posixpath.join(m.partition, m.name) if m.partition else m.name)
    if rel.split("/")[0] == META_DIR:
        raise UnsafePathError(f"marker {m.path!r} of {instant} names a table metadata file")
    return rel


def written_by(storage: Storage, rel: str, instant: str) -> bool:
    """Whether ``instant`` wrote the data file ``rel``: a base file named with it, or a log file
    whose every block carries it (our writes make a new log file per deltacommit)."""
    name = posixpath.basename(rel)
    b = parse_base_file_name(name)
    if b is not None:
        return b.instant == instant
    if lf.parse_log_file_name(name) is None:
        return False
    try:
        blocks = lf.read_blocks(storage.read_bytes(rel))
    except FileNotFoundError:
        return False
    except Exception:  # noqa: BLE001 - unreadable: not provably ours, left alone
        return False
    insts = [getattr(blk, "instant_time", None) for blk in blocks]
    return bool(insts) and all(i == instant for i in insts)


def files_to_roll_back(storage: Storage, instant: str, markers: list[Marker] | None = None,
                       *, owned_only: bool = True) -> list[str]:
    """Table-relative data files the markers of ``instant`` name, every marker checked before
    anything is deleted. CREATE/MERGE: the named file. APPEND: the logs of the named slice
    (file id, base instant, write token) that ``instant`` wrote. ``owned_only``: a named file
    is returned only if :func:`written_by` ``instant`` (a deltacommit's; a compaction's outputs
    in slice C hold older blocks)."""
    markers = list_markers(storage, instant) if markers is None else markers
    checked = [(m, _checked(instant, m)) for m in markers if m.kind is not None]
    out: list[str] = []
    listings: dict[str, list[str]] = {}
    for m, rel in checked:
        name = posixpath.basename(rel)
        b = parse_base_file_name(name)
        if m.kind == "APPEND" and b is not None:
            part = posixpath.dirname(rel)
            if part not in listings:
                listings[part] = storage.list_names(part)
            for n in listings[part]:
                p = lf.parse_log_file_name(n)
                if (p is not None and p.file_id == b.file_id and p.base_instant == b.instant
                        and p.write_token == b.write_token):
                    cand = posixpath.join(part, n) if part else n
                    if written_by(storage, cand, instant):
                        out.append(cand)
            continue
        if b is None and lf.parse_log_file_name(name) is None:
            continue  # names no data file (e.g. partition metadata): only the marker goes
        if owned_only and storage.exists(rel) and not written_by(storage, rel, instant):
            continue
        out.append(rel)
    return list(dict.fromkeys(out))


def remove_markers(storage: Storage, instant: str) -> None:
    """Delete the instant's marker folder (as Java does once an instant is committed or rolled back)."""
    root = marker_dir(instant)
    for f in list(storage.walk_files(root)):
        storage.delete(f.path)
    storage.remove_empty_dirs(root)  # stores with folders: the emptied ones go too


def check_markers(storage: Storage, instant: str) -> None:
    """Parse and path-check every marker of ``instant`` (raises before any delete)."""
    for m in list_markers(storage, instant):
        if m.kind is not None:
            _checked(instant, m)


def verify_written(storage: Storage, instant: str, stats: "list[WriteStat]") -> None:
    """Before a commit: every file its write stats name is there (a symlink resolves) with the
    size the stat records (base files, copies, split logs). Otherwise a typed ``conflict``
    (another process removed it: e.g. it took this run for a crashed one), nothing committed."""
    for st in stats:
        rel = st.path
        if not rel:
            continue
        try:
            size = storage.size(rel)  # follows a symlink: a dangling one is missing
        except FileNotFoundError:
            size = None
        want = st.fileSizeInBytes
        symlink = st.extra.get("hoodieEtcLinkMode") == "symlink"
        if size is None or (not symlink and want is not None and int(want) != size):
            got = "missing" if size is None else f"{size} bytes, not {want}"
            raise InstantExistsError(f"conflict: {instant} would commit {rel}, which is {got} (another process "
                                     f"removed or replaced it); nothing was committed: run it again")


__all__ = ["verify_written", "Marker", "mark_create", "mark_append", "list_markers", "files_to_roll_back", "remove_markers",
           "written_by", "marker_dir", "marker_rel", "check_markers", "InvalidTimelineError"]
