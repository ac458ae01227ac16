"""Clean: delete file slices no query of the last N commits needs (Hudi's KEEP_LATEST_COMMITS).

Per file group the latest slice always stays; an older slice goes when the slice after it
already existed at the earliest retained commit (so time travel to any retained commit still
finds its slice). Groups in a pending compaction plan are left alone.

Partial compaction adds one rule: a log that a *retained* slice re-exposes through a symlink
(directly or through a chain of links) is never deleted, even when its own slice goes. Copies
are ordinary files and are cleaned like any other.

Table versions 8/9 (shared/hudi-format-v8-v9.md §3.2, §5.3): slices come from the completion-time
view (a slice holds every log that completed before the next base instant; files of instants that
are not completed are not in it, so never cleaned here); a pending compaction's slice key only
splits the file groups its plan names (elsewhere it is merged into the slice before it). The
re-exposed copies named C belong to slice C and stay; the originals go with the old slice. There
are no symlinks on v8/v9, so the link protection finds nothing to keep.

The clean is recorded as Hudi does it: ``<T>.clean.requested`` (HoodieCleanerPlan version 2 with
``lastCompletedCommitTimestamp`` and ``extraMetadata``, the files to delete), ``<T>.clean.inflight``,
the deletions, then ``<T>.clean`` (layout 2: ``<T>_<c>.clean``, both times from the monotonic
clock) with HoodieCleanMetadata. A crashed clean is finished by the next ``clean`` call (deleting a
missing file is a no-op).
"""

from __future__ import annotations

import time
from typing import Any, Mapping

from .intents import finish_stale_intents
from ..hudi.concurrency import transaction as commit_path
from ..hudi.timeline import avro_models as am
from ..hudi.crash import crashpoint
from ..hudi.errors import InvalidInputError, InvalidTimelineError, UnsafePathError
from ..hudi.storage import Storage, safe_relpath
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline import layout
from ..hudi.timeline.active import Action, State
from ..hudi.timeline.instant import read_listed
from ..hudi.etc_keys import RETAIN_COMMITS
from .plans import final_target, link_target, pending_plan_groups, read_plan

POLICY = "KEEP_LATEST_COMMITS"


def plan_clean(table: HudiTable, retain_commits: int) -> tuple[str | None, dict[str, list[str]], str]:
    """(earliest commit to retain, partition → table-relative files to delete, reason)."""
    if retain_commits < 1:
        raise InvalidInputError(f"--retain-commits must be at least 1, got {retain_commits}")
    tl = table.timeline
    commits = [i.timestamp for i in tl.completed_writes]
    if len(commits) <= retain_commits:
        return None, {}, f"only {len(commits)} completed commits: nothing older than the last {retain_commits}"
    earliest = commits[-retain_commits]
    view = table.file_system_view()
    pending_groups = set(pending_plan_groups(table))
    storage = table.storage
    retained_files: list[str] = []
    candidates: dict[str, list[str]] = {}
    by_completion = tl.profile.slices_by_completion_time
    for (part, fid), g in sorted(view.groups.items()):
        slices = [s for s in g.slices() if tl.is_committed(s.base_instant) or s.base_instant in tl.pending_compaction_times]
        if by_completion and (part, fid) not in pending_groups:
            slices = _merge_foreign_pending(slices, tl.pending_compaction_times)
        keep_all = (part, fid) in pending_groups or len(slices) <= 1
        for i, s in enumerate(slices):
            files = ([s.base_file.path] if s.base_file else []) + [lg.path for lg in s.log_files]
            if keep_all or i == len(slices) - 1 or slices[i + 1].base_instant > earliest:
                retained_files += files
            else:
                candidates.setdefault(part, []).extend(files)
    # never delete what a retained slice still reads through a link (or a chain of links)
    protected: set[str] = set()
    for rel in ([] if tl.profile.reexposed_logs_are_copies else retained_files):  # copies only: no link to follow
        cur = rel
        for _ in range(64):
            nxt = link_target(storage, cur)
            if nxt is None:
                break
            protected.add(nxt)
            cur = nxt
    out = {p: [f for f in fs if f not in protected] for p, fs in candidates.items()}
    out = {p: fs for p, fs in out.items() if fs}
    if not out:
        return earliest, {}, "no file slice is old enough"
    return earliest, out, "cleaned"


def clean(path: str | Storage, *, retain_commits: int = 10, storage_options: Mapping[str, Any] | None = None) -> dict:
    t0 = time.monotonic()
    if not isinstance(retain_commits, int) or isinstance(retain_commits, bool):
        raise InvalidInputError(f"retain commits {retain_commits!r}: give an integer >= 1, "
                                f"not {type(retain_commits).__name__}")
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    table = HudiTable.load_writable(storage)
    config = commit_path.table_write_config(storage)
    if config.multi_writer and (config.get("hoodie.clean.automatic") or "true").lower() != "false":
        # Hudi's cleaner runs in one place: two cleaners finishing the same pending clean each
        # complete it (seen next to Java 1.1's automatic clean: two completed files of one clean)
        raise InvalidInputError("clean: the table's Java writers clean it themselves (hoodie.clean.automatic, "
                                "true by default) and Hudi's cleaner runs in one place; if they do not, record "
                                "hoodie.clean.automatic=false with hudi-etc configure --hoodie")
    # a crashed schedule's copies first: once archival passed their slice it would look latest
    finish_stale_intents(storage, table.config)
    tl = table.timeline
    # finish a clean an earlier run left pending (its plan says what to delete)
    for inst in tl.filter(actions={Action.CLEAN}):
        if inst.is_pending:
            return _execute(storage, table, inst.timestamp, am.read_avro_metadata(
                read_listed(storage, inst.path(State.REQUESTED), tl), am.CLEANER_PLAN), t0, resumed=True)
    earliest, files, reason = plan_clean(table, retain_commits)
    if not files:
        return {"instant": None, "status": "nothing to clean", "reason": reason, "files_deleted": 0,
                "earliest_commit_to_retain": earliest}
    instant = layout.new_time(tl, zone=table.timeline_zone)
    earliest_action = next(i.action.value for i in tl.completed_writes if i.timestamp == earliest)
    last = tl.last_completed_write
    plan = am.cleaner_plan(
        (earliest, "commit" if earliest_action == "compaction" else earliest_action),
        POLICY,
        {p: [storage.uri(f) for f in fs] for p, fs in files.items()},
        last_completed_commit_timestamp=last.timestamp if last else "",
        extra_metadata={RETAIN_COMMITS: str(retain_commits)},
    )
    data = am.write_avro_metadata(am.CLEANER_PLAN, plan)
    storage.create_if_absent(layout.instant(tl, instant, Action.CLEAN, State.REQUESTED).path(), data)
    crashpoint("clean.after-requested")
    return _execute(storage, HudiTable.load(storage), instant, plan, t0, resumed=False)


def _merge_foreign_pending(slices: list, pending: frozenset) -> list:
    """Slices by completion time (8/9): the view gives every file group a slice at each pending compaction
    instant; for a group that compaction does not plan, that slice is the continuation of the one
    before it (Java keys only the plan's groups), so it is merged back: its logs belong to the
    slice before, which is then the group's latest and must not be cleaned."""
    from ..hudi.file_group.fsview import FileSlice

    out: list = []
    for s in slices:
        if s.base_instant in pending and s.base_file is None and out:
            prev = out[-1]
            out[-1] = FileSlice(prev.partition, prev.file_id, prev.base_instant, prev.base_file,
                                tuple(prev.log_files) + tuple(s.log_files))
        else:
            out.append(s)
    return out


def _plan_files(storage: Storage, instant: str, plan: Mapping) -> dict[str, list[tuple[str, str]]]:
    """partition → [(URI as planned, table-relative path)], every path checked before anything is
    deleted: outside the table (``..``, another location or scheme) or inside ``.hoodie`` → refused."""
    base = storage.base_uri.rstrip("/") + "/"
    parts = plan.get("filePathsToBeDeletedPerPartition") or {}
    if not isinstance(parts, Mapping):
        raise InvalidTimelineError(f"clean plan {instant} is malformed")
    out: dict[str, list[tuple[str, str]]] = {}
    for part, infos in parts.items():
        files = out.setdefault(part, [])
        for info in infos or []:
            uri = info.get("filePath") if isinstance(info, Mapping) else None
            if not isinstance(uri, str) or not uri.startswith(base):
                raise UnsafePathError(f"clean plan {instant} names a file outside the table: {uri!r}")
            rel = safe_relpath(uri[len(base):])
            if not rel or rel.split("/")[0] == ".hoodie":
                raise UnsafePathError(f"clean plan {instant} names a table metadata file: {uri!r}")
            files.append((uri, rel))
    return out


def _execute(storage: Storage, table: HudiTable, instant: str, plan: Mapping, t0: float, *, resumed: bool) -> dict:
    files = _plan_files(storage, instant, plan)
    tl = table.timeline
    inflight = layout.instant(tl, instant, Action.CLEAN, State.INFLIGHT)
    if not storage.exists(inflight.path()):
        storage.create_if_absent(inflight.path(), read_listed(storage, inflight.path(State.REQUESTED), tl))
        crashpoint("clean.after-inflight")
    parts: dict[str, dict] = {}
    deleted = 0
    for part, infos in files.items():
        ok = []
        for uri, rel in infos:
            storage.delete(rel)  # missing (already deleted by a crashed run) is fine
            crashpoint("clean.after-delete")
            ok.append(uri)
            deleted += 1
        parts[part] = {"partitionPath": part, "policy": POLICY, "successDeleteFiles": ok, "failedDeleteFiles": []}
    eitr = plan.get("earliestInstantToRetain") or {}
    meta = am.clean_metadata(instant, eitr.get("timestamp"), parts, int((time.monotonic() - t0) * 1000),
                             last_completed_commit_timestamp=plan.get("lastCompletedCommitTimestamp") or "",
                             extra_metadata=plan.get("extraMetadata") or {}, policy=POLICY)
    if layout.completed_path(storage, tl, instant, Action.CLEAN) is None:
        crashpoint("clean.before-complete")
        commit_path.complete(storage, tl, instant, Action.CLEAN, am.write_avro_metadata(am.CLEAN_METADATA, meta),
                             what=f"clean {instant}", zone=table.timeline_zone)
    return {"instant": instant, "status": "resumed and completed" if resumed else "completed",
            "files_deleted": deleted, "earliest_commit_to_retain": eitr.get("timestamp"),
            "partitions": sorted(parts)}


__all__ = ["clean", "plan_clean", "link_target", "final_target", "read_plan"]
