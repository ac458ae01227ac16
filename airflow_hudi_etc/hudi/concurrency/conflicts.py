"""Hudi's optimistic-concurrency conflict rule (``SimpleConcurrentFileWritesConflictResolutionStrategy``),
for a commit of ours.

A committing instant conflicts with (a) every write or compaction that *completed* after it
started (on our timeline: completed now, not completed on the timeline it started from) and (b)
every compaction plan *published* after it started, when the two touch a common file group
(partition path, file id): a file group is touched by a commit's write stats (and a
replacecommit's replaced file groups) and by a plan's operations. New file groups (inserts) touch
nothing another writer knows, as in Hudi. The loser withdraws: nothing it wrote is committed.
"""

from __future__ import annotations

from typing import Iterable

from ..timeline.active import Action, Timeline

FileGroup = tuple[str, str]


def commit_file_groups(table, instant) -> set[FileGroup]:
    """The file groups a completed instant wrote (and, for a replacecommit, replaced)."""
    meta = table.commit_metadata(instant)
    out: set[FileGroup] = set()
    for part, stats in (meta.get("partitionToWriteStats") or {}).items():
        for st in stats or ():
            fid = (st or {}).get("fileId")
            if fid:
                out.add((part or "", fid))
    for part, fids in (meta.get("partitionToReplaceFileIds") or {}).items():
        out.update((part or "", f) for f in fids or ())
    return out


def find_conflict(table, started_on: Timeline, own: str, mine: Iterable[FileGroup], *,
                  by_bucket: bool = False) -> str | None:
    """Why the instant ``own``, which started from ``started_on`` and touches ``mine``, may not
    complete on ``table`` (its timeline read under the table lock); None: it may. ``by_bucket``
    (a bucket-index table): file groups are compared by partition and bucket, as Java's
    ``BucketIndexConcurrentFileWritesConflictResolutionStrategy`` compares them (two writers
    making a new file group each for one bucket conflict)."""
    key = _bucket if by_bucket else (lambda g: g)
    mine = {key(g) for g in mine}
    if not mine:
        return None
    done_before = started_on.completed_write_times
    for inst in table.timeline.completed_writes:
        if inst.timestamp == own or inst.timestamp in done_before:
            continue
        try:
            common = {g for g in commit_file_groups(table, inst) if key(g) in mine}
        except FileNotFoundError:  # archived meanwhile: the timeline moved on under us
            return f"conflict: instant {inst.timestamp} left the active timeline while it was checked; try again"
        if common:
            return (f"conflict: {_what(inst.action)} {inst.timestamp} completed meanwhile on file group(s) "
                    f"{_show(common)}")
    planned_before = started_on.pending_compaction_times | started_on.completed_compaction_times
    new_plans = {i.timestamp for i in table.timeline.pending_compactions} - planned_before - {own}
    if new_plans:
        try:  # (partition, file id) -> the pending plan that compacts it (HudiTable reads the plans)
            groups = table.pending_compaction_groups()
        except FileNotFoundError:
            return "conflict: a compaction plan changed while it was checked; try again"
        common = {g for g, ts in groups.items() if ts in new_plans and key(g) in mine}
        if common:
            ts = min(groups[g] for g in common)
            return f"conflict: compaction {ts} was scheduled meanwhile on file group(s) {_show(common)}"
    return None


def _bucket(g: FileGroup) -> FileGroup:
    """(partition, bucket id) of a bucket file group (its id's first 8 characters)."""
    return (g[0], g[1][:8])


def _what(action: Action) -> str:
    return {Action.DELTA_COMMIT: "deltacommit", Action.COMMIT: "commit",
            Action.REPLACE_COMMIT: "replacecommit"}.get(action, action.value)


def _show(groups: set[FileGroup]) -> str:
    items = sorted(f"{p}/{f}" if p else f for p, f in groups)
    return ", ".join(items[:3]) + (f" and {len(items) - 3} more" if len(items) > 3 else "")


__all__ = ["find_conflict", "commit_file_groups"]
