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
from dataclasses import dataclass, field
from functools import cached_property
from operator import attrgetter
from typing import Iterable, Mapping

from ..logformat.names import _LOG_FILE_RE, parse_log_file_name, log_file_sort_key
from ..storage import FileInfo, Storage
from ..timeline.active import META_DIR, Timeline

PARTITION_METAFILE = ".hoodie_partition_metadata"
_object_new = object.__new__
BASE_FILE_RE = re.compile(r"^([a-zA-Z0-9-]+)_([a-zA-Z0-9-]+)_([0-9]+)\.(parquet)$")


@dataclass(frozen=True)
class BaseFile:
    partition: str
    name: str
    file_id: str
    write_token: str
    instant: str
    size: int = -1

    @cached_property
    def path(self) -> str:  # a listing sets it when it makes the object
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

    @cached_property
    def path(self) -> str:  # a listing sets it when it makes the object
        return _join(self.partition, self.name) if self.partition else self.name

    @property
    def sort_key(self):
        # log_file_sort_key(self.name), from the parts the name was parsed into (as_log_file
        # takes only names without a suffix)
        wt = self.write_token
        return (self.base_instant, self.version, (0, "") if wt is None else (1, wt), "")


def _log_sort_key(lf: LogFile):
    return lf.sort_key


_VERSION = attrgetter("version")


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


def _new_slice(partition: str, file_id: str, base_instant: str, base_file: BaseFile | None,
               log_files: tuple[LogFile, ...]) -> FileSlice:
    """``FileSlice(...)`` without the frozen-dataclass ``__init__`` (one per file group)."""
    s = _object_new(FileSlice)
    s.__dict__.update(partition=partition, file_id=file_id, base_instant=base_instant, base_file=base_file,
                      log_files=log_files)
    return s


@dataclass
class FileGroup:
    partition: str
    file_id: str
    base_files: dict[str, BaseFile] = field(default_factory=dict)
    logs: dict[str, list[LogFile]] = field(default_factory=dict)

    def slice_instants(self) -> list[str]:
        b, lg = self.base_files, self.logs
        if len(b) + len(lg) == 2 and b.keys() == lg.keys():  # the common case: one slice
            return list(b)
        return sorted(set(b) | set(lg))

    def sorted_logs(self, instant: str) -> tuple[LogFile, ...]:
        """The logs of the slice at ``instant``, in Hudi's log order."""
        logs = self.logs.get(instant)
        if not logs:
            return ()
        if len(logs) == 1:
            return (logs[0],)
        # the logs of one slice share the base instant (the first part of the order): when their
        # versions differ, they alone give the order; else the whole key does (both sorts are stable)
        by_version = sorted(logs, key=_VERSION)
        prev, base = -1, logs[0].base_instant
        for lf in by_version:
            v = lf.version
            if v == prev or lf.base_instant != base:
                return tuple(sorted(logs, key=_log_sort_key))
            prev = v
        return tuple(by_version)

    def slice(self, instant: str) -> FileSlice:
        return FileSlice(self.partition, self.file_id, instant, self.base_files.get(instant), self.sorted_logs(instant))

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


#: one folder's files: their names, their sizes (None: all unknown, -1) and the names of symlinks
_Listing = tuple  # (list[str], list[int] | None, set[str])


def _listing(files: list[FileInfo]) -> _Listing:
    return [f.name for f in files], [f.size for f in files], {f.name for f in files if f.is_link}


def _walk_partitions(storage: Storage, sizes: bool = True) -> dict[str, _Listing]:
    """Partition → its listed files, from one listing of each folder (see :func:`list_partitions`)."""
    out: dict[str, _Listing] = {}
    stack = [""]
    # no FileInfo per file where sizes would cost a stat each: names, and the few links
    names_only = not sizes and not storage.listing_has_sizes
    while stack:
        d = stack.pop()
        if names_only:
            names, links, subs = storage.list_names_and_dirs(d)
            listing = (names, None, links)
        else:
            files, subs = storage.list_files_and_dirs(d, sizes=sizes)
            listing = _listing(files)
            names = listing[0]
        if PARTITION_METAFILE in names:
            out[d] = listing
        for sub in subs:
            if not d and sub == META_DIR:
                continue
            stack.append(sub)
    return out

#: log names as Hudi's writers make them: ``.{fileId}_{baseInstant}.log.{version}_{writeToken}``
#: with an ``[A-Za-z0-9-]`` file id, digit instant and version, and nothing after the token. On
#: such a name ``_LOG_FILE_RE`` (which backtracks) finds these very parts: its greedy file id
#: ends at the last ``_`` before the last ``.log.<digit>`` (the one after the file id: the token
#: holds no ``.``), the base instant runs to that ``.log.``, the version and the token's digit runs
#: are maximal, and no ``.cdc`` suffix follows the token. Other names go through the full pattern.
_PLAIN_LOG_RE = re.compile(r"\.([A-Za-z0-9-]+)_([0-9]+)\.log\.([0-9]+)_([0-9]+-[0-9]+-[0-9]+)")


def scan_partition(storage: Storage, partition: str,
                   files: list[FileInfo] | None = None) -> tuple[list[BaseFile], list[LogFile]]:
    """Base and log files of one partition (``files``: its listing, when already made)."""
    names, sizes, links = _listing(storage.list(partition) if files is None else files)
    return _scan(partition, names, sizes, links)


def _scan(partition: str, names: list[str], sizes: list[int] | None,
          links: set[str]) -> tuple[list[BaseFile], list[LogFile]]:
    """Base and log files among one partition's listed names: the names are matched here as
    :func:`parse_base_file_name` and :func:`as_log_file` match them (one match per name, no
    intermediate objects), and each object gets its path as it is made."""
    bases, logs = [], []
    match_base, match_plain, match_log = BASE_FILE_RE.match, _PLAIN_LOG_RE.fullmatch, _LOG_FILE_RE.match
    new, base_cls, log_cls = _object_new, BaseFile, LogFile
    prefix = partition if not partition or partition.endswith("/") else partition + "/"
    for i, name in enumerate(names):
        if name[:1] != ".":  # a base file name starts with [a-zA-Z0-9-]; a log name with "."
            m = match_base(name)
            if m is not None:
                b = new(base_cls)
                b.__dict__.update(partition=partition, name=name, file_id=m.group(1), write_token=m.group(2),
                                  instant=m.group(3), size=-1 if sizes is None else sizes[i], path=prefix + name)
                bases.append(b)
            continue
        m = match_plain(name)
        if m is not None:
            fid, base_instant, version, token = m.groups()
        else:
            if name[1:2] == "." and name[-4:] == ".crc":  # Hadoop's checksum file of a Java-written log (is_checksum_file)
                continue
            m = match_log(name)
            if m is None:
                continue
            fid, base_instant, ext, version, _, token, _, _, _, suffix = m.groups()
            if ext != "log" or suffix:  # as_log_file: logs only, no .cdc
                continue
        lf = new(log_cls)
        lf.__dict__.update(partition=partition, name=name, file_id=fid, base_instant=base_instant,
                           version=int(version), write_token=token, size=-1 if sizes is None else sizes[i],
                           is_link=name in links, path=prefix + name)
        logs.append(lf)
    return bases, logs


def _new_group(partition: str, file_id: str) -> FileGroup:
    """``FileGroup(partition, file_id)`` without the dataclass ``__init__`` (one per file group)."""
    g = _object_new(FileGroup)
    g.__dict__.update(partition=partition, file_id=file_id, base_files={}, logs={})
    return g


def build_file_groups(bases: Iterable[BaseFile], logs: Iterable[LogFile]) -> dict[tuple[str, str], FileGroup]:
    groups: dict[tuple[str, str], FileGroup] = {}
    get = groups.get
    new = _new_group
    for b in bases:
        key = (b.partition, b.file_id)
        g = get(key)
        if g is None:
            g = groups[key] = new(b.partition, b.file_id)
        g.base_files[b.instant] = b
    for lf in logs:
        key = (lf.partition, lf.file_id)
        g = get(key)
        if g is None:
            g = groups[key] = new(lf.partition, lf.file_id)
        at = g.logs.get(lf.base_instant)
        if at is None:
            g.logs[lf.base_instant] = [lf]
        else:
            at.append(lf)
    return groups


def _build_groups(bases, logs, timeline: Timeline) -> dict[tuple[str, str], FileGroup]:
    if timeline.profile.slices_by_completion_time:
        return build_file_groups_by_completion(bases, logs, timeline)
    return build_file_groups(bases, logs)


def build_file_groups_by_completion(bases: Iterable[BaseFile], logs: Iterable[LogFile],
                                    timeline: Timeline) -> dict[tuple[str, str], FileGroup]:
    """File groups of a table version 8/9 (spec §3.2): files of instants that are not completed
    (pending, failed) are dropped; each base file starts a slice at its instant; every pending
    compaction instant C adds a slice key C (it stays empty of base files until C completes; with
    no plan at hand it is added to every group, and :meth:`FileSystemView.latest_slice_of` merges
    such a slice into the one before it, so groups outside the plan read the same); a log named
    with instant d joins the slice with the largest key ≤ completion(d) (key d when there is none).
    The log's ``base_instant`` field holds its name instant (the writing instant in 1.x). Log order
    in a slice: name instant, version, token (Java's ``LogFileComparator``)."""
    completion = timeline.completion_time
    pending = sorted(timeline.pending_compaction_times)
    groups: dict[tuple[str, str], FileGroup] = {}
    for b in bases:
        if completion(b.instant) is None:
            continue  # pending compaction output, failed or running writes: invisible
        key = (b.partition, b.file_id)
        g = groups.get(key)
        if g is None:
            g = groups[key] = FileGroup(b.partition, b.file_id)
        g.base_files[b.instant] = b
    for lf in sorted(logs, key=_log_sort_key):
        done = completion(lf.base_instant)
        if done is None:
            continue
        key = (lf.partition, lf.file_id)
        g = groups.get(key)
        if g is None:
            g = groups[key] = FileGroup(lf.partition, lf.file_id)
        keys = [k for k in (*g.base_files, *g.logs, *pending) if k <= done]
        slice_key = max(keys) if keys else lf.base_instant
        g.logs.setdefault(slice_key, []).append(lf)
    return groups


@dataclass(frozen=True)
class FileSystemView:
    """All file groups of a table, with visibility rules applied against a timeline."""

    timeline: Timeline
    groups: dict[tuple[str, str], FileGroup]
    partitions: tuple[str, ...]

    @classmethod
    def load(cls, storage: Storage, timeline: Timeline, partitions: Iterable[str] | None = None, *,
             sizes: bool = True, listed: Mapping[str, Mapping[str, int]] | None = None) -> "FileSystemView":
        """``sizes=False``: file sizes may be left unknown (-1) where they would cost a stat each.
        ``listed``: the files of every partition ({partition: {file name: size}}) from a source
        other than storage (the metadata table's listing): no folder is listed then (a partition
        asked for that it lacks is listed from storage)."""
        partitions = None if partitions is None else tuple(partitions)
        if listed is not None:
            listed = {p: (list(files), list(files.values()), set()) for p, files in listed.items()
                      if partitions is None or p in partitions}
        elif partitions is None:
            listed = _walk_partitions(storage, sizes)
        elif sizes:
            listed = {}
        else:
            listed = {p: _listing(storage.list(p, sizes=False)) for p in partitions}
        parts = tuple(sorted(listed)) if partitions is None else tuple(partitions)
        bases: list[BaseFile] = []
        logs: list[LogFile] = []
        for p in parts:
            b, lg = _scan(p, *(listed.get(p) or _listing(storage.list(p))))
            bases += b
            logs += lg
        return cls(timeline, _build_groups(bases, logs, timeline), parts)

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
        return cls(timeline, _build_groups(bases, logs, timeline), tuple(sorted(parts)))

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
        groups = self.groups
        pending = tl.pending_compaction_times
        last = tl.latest_instant_time
        committed = tl.is_committed
        out = []
        append = out.append
        for key in sorted(groups):
            if key in replaced:
                continue
            g = groups[key]
            b, lg = g.base_files, g.logs
            if len(b) + len(lg) == 2 and b.keys() == lg.keys() or len(b) + len(lg) == 1:
                # one slice (the common case): latest_slice_of's rules, inline
                inst = next(iter(b or lg))
                if last is None or inst > last or not (committed(inst) or inst in pending):  # _slice_committed
                    continue
                base = b.get(inst)
                if base is not None and not self._base_visible(base, tl):
                    base = None
                logs = g.sorted_logs(inst)
                if base is not None or logs:  # else: empty (not kept, as below)
                    append(_new_slice(g.partition, g.file_id, inst, base, logs))
                continue
            s = self.latest_slice_of(g, tl, merge_pending=merge_pending)
            if s is not None and not s.is_empty:
                append(s)
        return out

    def latest_slice_of(self, g: FileGroup, tl: Timeline, *, merge_pending: bool = True) -> FileSlice | None:
        pending = tl.pending_compaction_times
        visible: list[tuple[str, BaseFile | None]] = []  # (instant, visible base file) per visible slice
        for inst in g.slice_instants():
            if not self._slice_committed(inst, tl):
                continue
            b = g.base_files.get(inst)
            if b is not None and not self._base_visible(b, tl):
                b = None
            if b is None and not g.logs.get(inst) and inst not in pending:
                continue
            visible.append((inst, b))
        if not visible:
            return None
        inst, b = visible[-1]
        if merge_pending and inst in pending and len(visible) > 1:
            prev, prev_base = visible[-2]
            return _new_slice(g.partition, g.file_id, prev, prev_base, g.sorted_logs(prev) + g.sorted_logs(inst))
        return _new_slice(g.partition, g.file_id, inst, b, g.sorted_logs(inst))

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
