"""A compaction plan on storage and the files it owns, shared by every stage.

A plan is ``<C>.compaction.requested`` (and its ``.aux`` copy); before it is published its
re-exposed logs (links or copies, under versions 1..n of slice C) and, for an exact split, an
empty placeholder for the split log are made (:func:`create_links`). Here: reading and showing
a plan, the extra-metadata keys the service writes, which files a plan makes in slice C, link
targets, and the removal of links a crashed schedule left (:func:`remove_orphan_links`)."""

from __future__ import annotations

import datetime as _dt
import posixpath
from typing import Any, Mapping

from ..hudi import etc_keys as keys
from ..hudi import logformat as lf
from ..hudi.crash import crashpoint
from ..hudi.errors import InvalidTimelineError
from ..hudi.protocol.plan import CompactionPlan, LINK_TOKEN, Operation, SPLIT_LOG_VERSION
from ..hudi.timeline.instant import read_listed
from ..hudi.storage import Storage, safe_relpath, staged_name, temp_owner
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline.active import Action, Timeline, format_instant


#: the extra-metadata keys of a plan (and of its commit)
K_THRESHOLD_MS = keys.THRESHOLD_MS
K_THRESHOLD = keys.THRESHOLD
K_LATENCY_MS = keys.LATENCY_MS
K_COMPACTION_TIME = keys.COMPACTION_TIME
K_STRATEGY = keys.STRATEGY
K_LINK_MODE = keys.LINK_MODE
K_SOURCE = keys.EVENT_TIME_SOURCE
K_LINKS = keys.LINK_OPERATIONS
K_EXACT_SPLIT = keys.EXACT_SPLIT
K_ET_FIELD = keys.EVENT_TIME_FIELD
K_PRECREATED = keys.LINKS_PRECREATED
#: a crashed schedule's links (slice C not on the timeline) are removed once this old
ORPHAN_GRACE = _dt.timedelta(minutes=15)


def java_appends_on(storage: Storage) -> bool:
    """Whether Java writers append their blocks into the latest log of a slice on this storage
    (the schemes of Java's ``StorageSchemes.isAppendSupported``: the storage's ``in_place_append``)."""
    return storage.in_place_append


def foreign_data(storage: Storage, rel: str, target: str | None, instant: str) -> str | None:
    """Why the file at a name plan ``instant`` made in slice C holds data that is not ours (None:
    it is ours, or gone). Ours: our symlink; a byte-identical copy of ``target``; for the exact-split
    placeholder (``target`` None) an empty file or a split log whose every block is C's. Anything
    else — typically our copy with a Java writer's blocks (or a Java rollback's command block)
    appended on storage Java appends on — is never deleted or overwritten by us: it may hold
    Java's committed records. One rule for unschedule, rollback, execute and the orphan cleanup."""
    try:
        if storage.readlink(rel) is not None:
            return None
        data = storage.read_bytes(rel)
    except FileNotFoundError:
        return None
    if target is None:
        if not data:
            return None
        try:
            insts = {getattr(b, "instant_time", None) for b in lf.read_blocks(data)}
        except Exception:  # noqa: BLE001 - unreadable: not provably ours
            return f"{rel} is not a readable log file"
        return None if insts == {instant} else f"{rel} holds blocks of other instants ({', '.join(sorted(map(str, insts - {instant})))})"
    try:
        original = storage.read_bytes(target)
    except FileNotFoundError:
        original = None
    if original is not None and data == original:
        return None
    if original is not None and data.startswith(original):
        return f"{rel} is this plan's copy of {target} with {len(data) - len(original)} bytes appended"
    return f"{rel} is not this plan's copy of {target}"


def refuse_foreign_data(storage: Storage, files, instant: str, doing: str) -> None:
    """A typed error, before anything is changed, if a file of ``files`` ((path, target) pairs of
    plan ``instant``) holds data that is not ours (:func:`foreign_data`)."""
    found = [why for rel, target in files if (why := foreign_data(storage, rel, target, instant))]
    if found:
        raise InvalidTimelineError(
            f"{doing} refused: {found[0]}{f' (and {len(found) - 1} more)' if len(found) > 1 else ''}. Another "
            f"writer put data into a file compaction {instant} made in slice C (a Java writer appends there on "
            f"storage Java appends on); deleting or replacing it would lose those records. Repair: let Java execute the plan (its inline compaction, "
            f"or CALL run_compaction(op => 'execute', path => ..., timestamp => {instant})): Java compacts the "
            f"plan's logs and keeps these files in the new slice; nothing was changed")


def read_plan(table: HudiTable, instant: str) -> CompactionPlan:
    """Compaction ``instant``'s plan; a plan file the table's listing held and that is gone is a
    :class:`~airflow_hudi_etc.hudi.errors.TimelineChangedError` (``conflict``)."""
    meta_dir = table.config.timeline_dir
    return CompactionPlan.from_bytes(instant, read_listed(table.storage, f"{meta_dir}/{instant}.compaction.requested",
                                                          table.timeline))


def links_precreated(plan: CompactionPlan) -> bool:
    return str(plan.extra.get(K_PRECREATED, "")).lower() == "true"


def is_exact_split(plan: CompactionPlan) -> bool:
    return str(plan.extra.get(K_EXACT_SPLIT, "")).lower() == "true"


def split_log_name(op: Operation, instant: str) -> str:
    return lf.format_log_file_name(op.file_id, instant, SPLIT_LOG_VERSION, LINK_TOKEN)


def link_target(storage: Storage, rel: str) -> str | None:
    """Table-relative path a symlink points at (one hop), or None for a regular file."""
    t = storage.readlink(rel)
    if t is None:
        return None
    return safe_relpath(posixpath.normpath(posixpath.join(posixpath.dirname(rel), t)))


def final_target(storage: Storage, rel: str, max_hops: int = 64) -> str:
    """Follow a chain of symlinks to the regular file at its end (table-relative)."""
    for _ in range(max_hops):
        nxt = link_target(storage, rel)
        if nxt is None:
            return rel
        rel = nxt
    raise InvalidTimelineError(f"symlink chain too long at {rel}")


def plan_outputs(plan: CompactionPlan, op: Operation) -> list[str]:
    """Table-relative log paths an execution of ``op`` may create in slice C (split log, links).
    The links of a plan that made them when it was scheduled belong to the requested plan, not to
    its execution: they stay (the split log goes back to its empty placeholder)."""
    out = [op.path(split_log_name(op, plan.instant))] if is_exact_split(plan) else []
    return out if links_precreated(plan) else out + [op.path(lk.link) for lk in op.links]


def pending_plan_groups(table: HudiTable) -> dict[tuple[str, str], str]:
    """(partition, fileId) → instant of the pending compaction that plans it."""
    return table.pending_compaction_groups()


def show_plan(path: str | Storage, *, instant: str, storage_options: Mapping[str, Any] | None = None) -> dict:
    """A compaction plan as JSON: its state, extra metadata and operations (paths table-relative)."""
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    table = HudiTable.load(storage)
    insts = [i for i in table.timeline.get(instant) if i.action is Action.COMPACTION]
    if not insts:
        raise InvalidTimelineError(f"no compaction {instant} on the timeline")
    plan = read_plan(table, instant)
    exact = is_exact_split(plan)
    return {
        "instant": instant,
        "state": "completed" if insts[0].is_completed else insts[0].state.name.lower(),
        "extra_metadata": dict(plan.extra),
        "operations": [
            {
                "partition": op.partition,
                "file_id": op.file_id,
                "base_instant": op.base_instant,
                "base_file": op.base_file,
                "compact_logs": list(op.compact_logs),
                "split_log": split_log_name(op, instant) if exact else None,
                "links": [{"link": lk.link, "target": lk.target} for lk in op.links],
                "metrics": dict(op.metrics),
            }
            for op in plan.operations
        ],
    }


def plan_link_files(plan: CompactionPlan) -> list[tuple[str, str | None]]:
    """(link path, target path) of every file a plan creates in slice C before it is published;
    the exact-split placeholder has no target."""
    out: list[tuple[str, str | None]] = []
    split = is_exact_split(plan)
    for op in plan.operations:
        if split:
            out.append((op.path(split_log_name(op, plan.instant)), None))
        if op.links:  # op.path's names, its folder joined once per operation
            d = f"{op.partition}/" if op.partition else ""
            out += [(d + lk.link, d + lk.target) for lk in op.links]
    return out


def stages_copies(storage: Storage, mode: str) -> bool:
    """Whether :func:`create_links` writes the plan's files under staged names first: byte copies
    where a staged file gets its final name by a hard link (one metadata operation). Not for
    symlinks and hard links (``HUDI_ETC_LOCAL_COPY=hardlink``): making one is already a metadata
    operation, a staged one would only add a second; not on object stores, where a rename is a
    copy and a delete."""
    return mode == "copy" and storage.hard_links and not storage.copies_hard_link


def staged_files(plan_instant: str, files) -> tuple[str, ...]:
    """The staged name (:func:`~airflow_hudi_etc.hudi.storage.staged_name`) of each file of
    ``files`` ((path, target) pairs of :func:`plan_link_files`), in order."""
    return tuple(staged_name(rel, plan_instant) for rel, _t in files)


def create_links(storage: Storage, plan: CompactionPlan, mode: str, *, missing_only: bool = False,
                 workers: int | None = None, files=None, staged=None, before_visible=None) -> list[str]:
    """Create the plan's re-exposed logs in slice C (copies, or symlinks straight to the real
    file) and, for an exact split, an empty placeholder holding version 1 (the split log's, written
    at execution). Returns what was created; a name that exists is a conflict (unless
    ``missing_only``), and what this call made is removed again.

    Byte copies on local storage (:func:`stages_copies`) go in two phases: every file is first
    written under its staged name (:func:`staged_files`: a temp-file name no Hudi reader, cleaner,
    rollback or archiver takes for a data file), then ``schedule.after-staged``, then each is
    renamed to its final name (a hard link and an unlink). A process killed while the bytes are
    written leaves only invisible staged files; only a kill among the renames leaves files under
    final names in a slice on no timeline (docs/concepts.md, "The residual window and the guard
    savepoint").

    The files (or staged files) are made by a bounded pool of threads (:func:`link_workers`;
    copies are I/O: a read and an atomic create, a request each on object stores).
    ``schedule.after-link`` is hit in the calling thread once per file that got its final name,
    as each completes. On an error the files not started are dropped, the ones in flight
    awaited, and every file made (staged or final) is removed; a crash (``os._exit``) leaves
    them to the intent's cleanup (and in-flight temp files, which writers and execute remove).

    ``files``: :func:`plan_link_files` of the plan, when the caller has them (``staged``: their
    :func:`staged_files`). ``missing_only`` lists each folder once and makes only the names it
    lacks (no request per file), never staged. ``before_visible()`` is called once before the
    first file gets its final name (after the staged copies are durable; before the first
    symlink, hard link or object-store copy): schedule's guard savepoint (:mod:`.guard`); if it
    raises, nothing of this call is left."""
    items = list(plan_link_files(plan) if files is None else files)
    if missing_only:
        items = _not_listed(storage, items)
        if not items:
            return []
    n = link_workers(storage, len(items)) if workers is None else max(1, min(workers, len(items)))
    if not missing_only and stages_copies(storage, mode):
        return _staged_then_renamed(storage, items, staged or staged_files(plan.instant, items), n, before_visible)
    if before_visible is not None:
        before_visible()

    def make(link: str, target: str | None) -> str | None:
        if missing_only and storage.exists(link):
            return None
        if target is None:
            storage.create_if_absent(link, b"")
        elif mode == "symlink":
            storage.symlink(final_target(storage, target), link)
        else:
            storage.copy(target, link)
        return link

    with temp_owner(plan.instant):  # a crash leaves temp files the orphans' removal recognises
        return _make_links(storage, items, make, n)


def _staged_then_renamed(storage: Storage, items, staged_names, n: int, before_visible=None) -> list[str]:
    """Every file written under its staged name (no fsync each: one sync of the file system
    before the first rename), then each renamed to its final name."""
    staged = dict(zip((link for link, _t in items), staged_names))
    # the paths' safety checked per folder, not per file (a folder, then one name each)
    safe = all(p.rpartition("/")[2] not in ("", ".", "..") for pair in staged.items() for p in pair)
    for d in {p.rpartition("/")[0] for pair in staged.items() for p in pair}:
        if d:
            safe = safe and safe_relpath(d) == d
        storage.check_no_links(f"{d}/x" if d else "x")

    def stage(link: str, target: str | None) -> str:
        storage.stage_copy(target, staged[link], durable=False, checked=safe)
        return staged[link]

    _make_links(storage, items, stage, n, point=None)
    try:
        storage.sync_staged(staged.values())  # durable before any of them gets a name readers see
    except BaseException:
        delete_all(storage, staged.values())
        raise
    crashpoint("schedule.after-staged")
    if before_visible is not None:
        try:
            before_visible()
        except BaseException:
            delete_all(storage, staged.values())
            raise
    made: list[str] = []
    try:
        for link, _t in items:
            storage.promote_staged(staged[link], link, checked=safe)
            made.append(link)
            crashpoint("schedule.after-link")
    except BaseException:
        delete_all(storage, made)
        delete_all(storage, [staged[link] for link, _t in items[len(made):]])
        raise
    return made


def _make_links(storage: Storage, items, make, n: int, point: str | None = "schedule.after-link") -> list[str]:
    """``make(path, target)`` for each item by ``n`` threads: the paths it returned (None: made
    nothing), ``point`` hit in the calling thread after each; on an error all of them are deleted."""
    made: list[str] = []
    if n <= 1:
        try:
            for link, target in items:
                if (got := make(link, target)) is not None:
                    made.append(got)
                    if point:
                        crashpoint(point)
        except BaseException:
            delete_all(storage, made)
            raise
        return made
    import contextvars
    import threading
    from concurrent.futures import ThreadPoolExecutor, as_completed, wait

    # the files go to the threads in chunks (a future, its lock and condition per file cost more
    # than a local copy); a chunk stops at its first error, and at once once another chunk failed
    stop = threading.Event()

    def run(chunk) -> tuple[list[str], BaseException | None]:
        done: list[str] = []
        try:
            for link, target in chunk:
                if stop.is_set():
                    break
                if (got := make(link, target)) is not None:
                    done.append(got)
        except BaseException as e:  # noqa: BLE001 - handed to the calling thread with what was made
            stop.set()
            return done, e
        return done, None

    size = max(1, min(_LINK_CHUNK, -(-len(items) // (4 * n))))
    chunks = [items[i:i + size] for i in range(0, len(items), size)]
    with ThreadPoolExecutor(n, thread_name_prefix="hudi-etc-link") as pool:
        # each task runs in a copy of this context (temp-file owner and the like)
        futures = [pool.submit(contextvars.copy_context().run, run, c) for c in chunks]
        seen: set = set()
        try:
            for f in as_completed(futures):
                seen.add(f)
                got, err = f.result()
                for link in got:
                    made.append(link)
                    if point:
                        crashpoint(point)
                if err is not None:
                    raise err
        except BaseException:
            stop.set()
            for f in futures:
                f.cancel()
            wait(futures)
            made += [link for f in futures if f not in seen and f.done() and not f.cancelled()
                     for link in f.result()[0]]
            delete_all(storage, made)
            raise
    return made


def _not_listed(storage: Storage, items):
    """The (path, target) pairs whose path its folder's listing lacks (one listing per folder)."""
    listed: dict[str, set[str]] = {}
    out = []
    for link, target in items:
        d, _, name = link.rpartition("/")
        names = listed.get(d)
        if names is None:
            try:
                names = listed[d] = set(storage.list_entry_names(d))
            except FileNotFoundError:
                names = listed[d] = set()
        if name not in names:
            out.append((link, target))
    return out


#: at most this many files per task of the pool that makes a plan's re-exposed logs
_LINK_CHUNK = 64


#: environment variable: the number of threads that make a plan's re-exposed logs
LINK_WORKERS_ENV = "HUDI_ETC_LINK_WORKERS"


def link_workers(storage: Storage, n_files: int) -> int:
    """Threads for :func:`create_links`: ``HUDI_ETC_LINK_WORKERS`` when set, else the storage's
    ``copy_workers`` (8 locally: a copy is a read, a write and an fsync; 32 on object stores: a
    copy is two requests, each mostly waiting); never more than the files."""
    import os

    raw = os.environ.get(LINK_WORKERS_ENV, "").strip()
    try:
        want = int(raw) if raw else storage.copy_workers
    except ValueError:
        want = storage.copy_workers
    return max(1, min(want, n_files))


def delete_all(storage: Storage, rels) -> None:
    for rel in rels:
        storage.delete(rel)


def remove_orphan_links(table: HudiTable, grace: _dt.timedelta = ORPHAN_GRACE,
                         only_instant: str | None = None, view=None) -> list[str]:
    """Delete what crashed schedules (or unschedules) left in a slice C that is on no timeline.

    First by intent (:mod:`.intents`), at any age, once the owner's heartbeat expired (with
    ``only_instant``, ``unschedule --instant``: that instant's at once). Then the files with our
    link token and no intent (earlier releases): C on neither the active timeline nor in the
    archive, made more than ``grace`` ago (a schedule of an earlier release running now may still
    publish its plan) or of ``only_instant``, and an empty placeholder or byte-identical to
    another log of their file group, whatever the timeline's start (once Java's archiver passed
    C, every reader takes such a slice as committed: java-coexistence-2 finding 1). A file Java
    wrote into or re-created is never deleted."""
    from .intents import finish_stale_intents, intentless_orphans

    storage = table.storage
    removed = finish_stale_intents(storage, table.config, only_instant=only_instant)
    cutoff = format_instant(_dt.datetime.now(_dt.timezone.utc) - grace, table.timeline_zone)
    # the view drops files of instants not completed: list storage; not when the table's listing
    # comes from its metadata table (schedule, Spark-hosted): a leftover it does not list is
    # invisible to every reader, and the commands that list storage sweep it
    if table.profile.slices_by_completion_time and table.listed is None:
        logs = all_log_files_listed(storage)
    else:
        view = view if view is not None else table.file_system_view(sizes=False)
        logs = view.all_log_files()
    gone = set(removed)
    logs = [lg for lg in logs if lg.path not in gone]
    found = intentless_orphans(storage, table.config, table.timeline, logs, cutoff, only_instant)
    if found:  # re-checked on a fresh timeline just before deleting: its plan may have been published
        known = {i.timestamp for i in Timeline.load(storage, table.config).instants}
        found = [p for p in found if lf.parse_log_file_name(posixpath.basename(p)).base_instant not in known]
        # never a file with blocks newer than its slice (a Java writer's: see foreign_data)
        found = [p for p in found if not _newer_blocks(storage, p)]
    delete_all(storage, found)
    if found or removed:  # copies in flight when that schedule crashed left temp files named with its instant
        owners = {x.base_instant for p in (*found, *removed)
                  if (x := lf.parse_log_file_name(posixpath.basename(p))) is not None}  # (staged names: none)
        for d in sorted({posixpath.dirname(p) for p in (*found, *removed)}):
            delete_all(storage, [rel for rel, owner, _ in storage.temp_files(d) if owner in owners])
    return removed + found


def _newer_blocks(storage: Storage, rel: str) -> bool:
    """An orphan copy (no plan names its target) holds only blocks older than its slice C; a
    block of an instant >= C is a writer's (or a Java rollback's), appended or written there."""
    c = lf.parse_log_file_name(posixpath.basename(rel)).base_instant
    try:
        blocks = lf.read_blocks(storage.read_bytes(rel))
    except FileNotFoundError:
        return False
    except Exception:  # noqa: BLE001 - unreadable: not provably ours, left alone
        return True
    return any((getattr(b, "instant_time", None) or "") >= c for b in blocks)


def all_log_files_listed(storage: Storage) -> list:
    """Every log file on storage (parsed names, ``base_instant`` = the name instant), whatever the
    timeline says of its instant (a layout-2 view hides the files of instants not completed)."""
    from ..hudi.file_group.fsview import as_log_file, list_partitions

    out = []
    for part in list_partitions(storage):
        for f in storage.list(part, sizes=False):
            lg = as_log_file(part, f.name)
            if lg is not None:
                out.append(lg)
    return out


def is_placeholder(storage: Storage, rel: str) -> bool:
    """An empty regular file: the split placeholder a plan holds version 1 with."""
    try:
        return storage.readlink(rel) is None and storage.size(rel) == 0
    except FileNotFoundError:
        return False


def drop_placeholder(storage: Storage, rel: str) -> None:
    """No record of this slice is after the threshold: its empty split placeholder goes (a
    rollback of this execution makes it again)."""
    try:
        if storage.readlink(rel) is None and storage.size(rel) == 0:
            storage.delete(rel)
    except FileNotFoundError:
        pass


#: operation metric of an exact-split plan: 1.0 when the slice's base records after the threshold
#: may be left out of the new base (:func:`base_records_filterable`, decided when scheduling)
M_BASE_FILTERABLE = "hoodieEtcBaseRecordsFilterable"


def base_records_filterable(table: HudiTable, base_instant: str | None, stat: Mapping | None) -> bool:
    """May an exact split leave this slice's base records after the threshold out of the new base?

    Only for a base file that started its file group: a write's inserts, each record its key's
    first version there. ``stat`` is the write stat of the commit that wrote the base file; it must
    say ``prevCommit`` null and no update. Any other base file stands for its keys' folded history,
    and a record there after the threshold may be the only one left of versions up to it:
    a compaction's (ours, plain or exact, or Java's) kept only each key's merged record, and a Java
    deltacommit that merged updates or inserts into a small file group rewrote the group's base
    with what it carried over (real Java 0.15, seed 153 of the slow interleavings: an update after
    the threshold replaced the only version before it, and the split left the key out of RO). Such
    records stay (RO then holds a version newer than the threshold for that key, never none: the
    guarantee is kept, exactness is not for those keys). No stat found (an archived commit): they
    stay too."""
    if not base_instant:
        return True
    if not stat or base_instant in table.timeline.completed_compaction_times:
        return False
    prev = stat.get("prevCommit")
    return (prev is None or str(prev) in ("", "null")) and not int(stat.get("numUpdateWrites") or 0)


def op_base_filterable(op: Operation) -> bool:
    """The decision the schedule recorded in the operation (:data:`M_BASE_FILTERABLE`); a plan
    without it (an earlier release's): only a slice without a base file."""
    if not op.base_file:
        return True
    return bool((op.metrics or {}).get(M_BASE_FILTERABLE))
