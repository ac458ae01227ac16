"""File-system view: partitions, file groups and file slices (shared/hudi-format.md §3, §6.1).

A *file group* is every file of one ``fileId`` in one partition. A *file slice* is the base
file of one base instant plus the log files named with that base instant (in v6 a log file's
name carries the base instant of the slice it extends, not the deltacommit that wrote it).
A pending compaction at instant C adds an empty slice at C; readers merge it with the slice
before it (:meth:`FileGroup.merged_slice`).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace
from typing import Iterable

from .logformat import parse_log_file_name, log_file_sort_key
from .storage import FileInfo, Storage
from .timeline import META_DIR, Timeline

PARTITION_METAFILE = ".hoodie_partition_metadata"
BASE_FILE_RE = re.compile(r"^([a-zA-Z0-9-]+)_([a-zA-Z0-9-]+)_([0-9]+)\.(parquet)$")


@dataclass(frozen=True)
class BaseFile:
    partition: str
    name: str
    file_id: str
    write_token: str
    instant: str
    size: int = -1

    @property
    def path(self) -> str:
        return _join(self.partition, self.name) if self.partition else self.name


@dataclass(frozen=True)
class LogFile:
    partition: str
    name: str
    file_id: str
    base_instant: str
    version: int
    write_token: str | None
    size: int = -1
    is_link: bool = False

    @property
    def path(self) -> str:
        return _join(self.partition, self.name) if self.partition else self.name

    @property
    def sort_key(self):
        # log_file_sort_key(self.name), from the parts the name was parsed into (as_log_file
        # takes only names without a suffix)
        wt = self.write_token
        return (self.base_instant, self.version, (0, "") if wt is None else (1, wt), "")


def parse_base_file_name(name: str, partition: str = "", size: int = -1) -> BaseFile | None:
    m = BASE_FILE_RE.match(name)
    if not m:
        return None
    return BaseFile(partition, name, m.group(1), m.group(2), m.group(3), size)


def base_file_name(file_id: str, write_token: str, instant: str) -> str:
    return f"{file_id}_{write_token}_{instant}.parquet"


def as_log_file(partition: str, name: str, size: int = -1, is_link: bool = False) -> LogFile | None:
    p = parse_log_file_name(name)
    if p is None or p.extension != "log" or p.suffix:
        return None
    return LogFile(partition, name, p.file_id, p.base_instant, p.version, p.write_token, size, is_link)


@dataclass(frozen=True)
class FileSlice:
    partition: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()

    @property
    def log_paths(self) -> list[str]:
        return [lf.path for lf in self.log_files]

    @property
    def is_empty(self) -> bool:
        return self.base_file is None and not self.log_files


@dataclass
class FileGroup:
    partition: str
    file_id: str
    base_files: dict[str, BaseFile] = field(default_factory=dict)
    logs: dict[str, list[LogFile]] = field(default_factory=dict)

    def slice_instants(self) -> list[str]:
        return sorted(set(self.base_files) | set(self.logs))

    def slice(self, instant: str) -> FileSlice:
        logs = tuple(sorted(self.logs.get(instant, ()), key=lambda lf: lf.sort_key))
        return FileSlice(self.partition, self.file_id, instant, self.base_files.get(instant), logs)

    def slices(self) -> list[FileSlice]:
        return [self.slice(i) for i in self.slice_instants()]


def _join(a: str, b: str) -> str:
    """``posixpath.join(a, b)`` for two components (the hot path of views over many files)."""
    if b.startswith("/"):
        return b
    if not a or a.endswith("/"):
        return a + b
    return a + "/" + b


def list_partitions(storage: Storage) -> list[str]:
    """Partitions found by listing: folders (outside ``.hoodie``) holding ``.hoodie_partition_metadata``.

    The base path itself is the partition ``""`` of a non-partitioned table.
    """
    return sorted(_walk_partitions(storage))


def _walk_partitions(storage: Storage, sizes: bool = True) -> dict[str, list[FileInfo]]:
    """Partition → its listed files, from one listing of each folder (see :func:`list_partitions`)."""
    out: dict[str, list[FileInfo]] = {}
    stack = [""]
    while stack:
        d = stack.pop()
        files = storage.list(d) if sizes else storage.list(d, sizes=False)
        if any(f.name == PARTITION_METAFILE for f in files):
            out[d] = files
        for sub in storage.list_dirs(d):
            leaf = posixpath.basename(sub)
            if not d and leaf == META_DIR:
                continue
            stack.append(sub)
    return out


def scan_partition(storage: Storage, partition: str,
                   files: list[FileInfo] | None = None) -> tuple[list[BaseFile], list[LogFile]]:
    """Base and log files of one partition (``files``: its listing, when already made)."""
    bases, logs = [], []
    for fi in storage.list(partition) if files is None else files:
        name = fi.path.rpartition("/")[2]  # fi.name
        if not name.startswith("."):  # a base file name starts with [a-zA-Z0-9-]; log names with "."
            b = parse_base_file_name(name, partition, fi.size)
            if b is not None:
                bases.append(b)
                continue
        lf = as_log_file(partition, name, fi.size, fi.is_link)
        if lf is not None:
            logs.append(lf)
    return bases, logs


def build_file_groups(bases: Iterable[BaseFile], logs: Iterable[LogFile]) -> dict[tuple[str, str], FileGroup]:
    groups: dict[tuple[str, str], FileGroup] = {}
    for b in bases:
        g = groups.setdefault((b.partition, b.file_id), FileGroup(b.partition, b.file_id))
        g.base_files[b.instant] = b
    for lf in logs:
        g = groups.setdefault((lf.partition, lf.file_id), FileGroup(lf.partition, lf.file_id))
        g.logs.setdefault(lf.base_instant, []).append(lf)
    return groups


@dataclass(frozen=True)
class FileSystemView:
    """All file groups of a table, with visibility rules applied against a timeline."""

    timeline: Timeline
    groups: dict[tuple[str, str], FileGroup]
    partitions: tuple[str, ...]

    @classmethod
    def load(cls, storage: Storage, timeline: Timeline, partitions: Iterable[str] | None = None, *,
             sizes: bool = True) -> "FileSystemView":
        """``sizes=False``: file sizes may be left unknown (-1) where they would cost a stat each."""
        if partitions is None:
            listed = _walk_partitions(storage, sizes)
        elif sizes:
            listed = {}
        else:
            listed = {p: storage.list(p, sizes=False) for p in partitions}
        parts = tuple(sorted(listed)) if partitions is None else tuple(partitions)
        bases: list[BaseFile] = []
        logs: list[LogFile] = []
        for p in parts:
            b, lg = scan_partition(storage, p, listed.get(p))
            bases += b
            logs += lg
        return cls(timeline, build_file_groups(bases, logs), parts)

    @classmethod
    def from_files(cls, timeline: Timeline, files: Iterable[FileInfo | str]) -> "FileSystemView":
        bases, logs, parts = [], [], set()
        for f in files:
            rel, size, link = (f, -1, False) if isinstance(f, str) else (f.path, f.size, f.is_link)
            part, name = posixpath.split(rel)
            b = parse_base_file_name(name, part, size)
            if b is not None:
                bases.append(b)
                parts.add(part)
                continue
            lf = as_log_file(part, name, size, link)
            if lf is not None:
                logs.append(lf)
                parts.add(part)
        return cls(timeline, build_file_groups(bases, logs), tuple(sorted(parts)))

    # ------------------------------------------------------------ visibility
    def _base_visible(self, b: BaseFile, tl: Timeline) -> bool:
        # written by a completed write (a completed compaction counts); pending compaction output
        # and failed writes are hidden
        return tl.is_committed(b.instant)

    def _slice_committed(self, instant: str, tl: Timeline) -> bool:
        last = tl.latest_instant_time
        if last is None or instant > last:
            return False
        return tl.is_committed(instant) or instant in tl.pending_compaction_times

    def latest_slices(self, as_of: str | None = None, *, merge_pending: bool = True) -> list[FileSlice]:
        """Per file group, the latest visible slice at ``as_of`` (default: now).

        With a pending compaction at C on the group, the slice at C (logs only) is merged
        into the slice before it, as Hudi's ``getLatestMergedFileSlicesBeforeOrOn`` does.
        """
        tl = self.timeline if as_of is None else self.timeline.as_of(as_of)
        replaced = self.replaced_file_ids
        out = []
        for (part, fid), g in sorted(self.groups.items()):
            if (part, fid) in replaced:
                continue
            s = self.latest_slice_of(g, tl, merge_pending=merge_pending)
            if s is not None and not s.is_empty:
                out.append(s)
        return out

    def latest_slice_of(self, g: FileGroup, tl: Timeline, *, merge_pending: bool = True) -> FileSlice | None:
        visible: list[FileSlice] = []
        for inst in g.slice_instants():
            if not self._slice_committed(inst, tl):
                continue
            s = g.slice(inst)
            if s.base_file is not None and not self._base_visible(s.base_file, tl):
                s = replace(s, base_file=None)
            if s.base_file is None and not s.log_files and inst not in tl.pending_compaction_times:
                continue
            visible.append(s)
        if not visible:
            return None
        latest = visible[-1]
        if merge_pending and latest.base_instant in tl.pending_compaction_times and len(visible) > 1:
            prev = visible[-2]
            return FileSlice(
                latest.partition,
                latest.file_id,
                prev.base_instant,
                prev.base_file,
                prev.log_files + latest.log_files,
            )
        return latest

    @property
    def replaced_file_ids(self) -> frozenset[tuple[str, str]]:
        return getattr(self, "_replaced", frozenset())

    def with_replaced(self, replaced: Iterable[tuple[str, str]]) -> "FileSystemView":
        v = FileSystemView(self.timeline, self.groups, self.partitions)
        object.__setattr__(v, "_replaced", frozenset(replaced))
        return v

    def group(self, partition: str, file_id: str) -> FileGroup | None:
        return self.groups.get((partition, file_id))

    def all_log_files(self) -> list[LogFile]:
        return [lf for g in self.groups.values() for logs in g.logs.values() for lf in logs]
