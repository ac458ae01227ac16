"""The guard savepoint: what keeps Java's archiver and cleaner off slice B while a schedule's files
exist in slice C without a visible plan (table version 6; docs/concepts.md, "The residual window
and the guard savepoint").

A ``schedule`` makes the plan's files in slice C (copies, symlinks, hard links, the split
placeholder) before its plan is visible. Killed among them, it leaves files under final names in a
slice on no timeline. Java 0.14/0.15 then does two things to such a slice (java-coexistence-2 §1):

* its archiver moves the timeline's start past C, after which every reader takes slice C as a
  committed slice without a base file (java-coexistence-2, finding 1). The archiver never archives an instant at or
  after the first *completed savepoint* (``HoodieTimelineArchiver.getCommitInstantsToArchive``,
  unless the writer sets ``hoodie.archive.beyond.savepoint=true``), and the file-system view's start
  is the first instant of the *write* timeline, which holds no savepoint action
  (``getWriteTimeline`` / ``isBeforeTimelineStarts``): a savepoint on S < C keeps C after the start;
* a user's savepoint lists slice C instead of slice B (``getAllFileSlicesBeforeOn`` has no
  committed filter), and the cleaner then deletes slice B (java-coexistence-2, finding 6). The cleaner never deletes a
  slice one of whose files a savepoint lists (``CleanPlanner.isFileSliceExistInSavepointedFiles``).

So before the first file of slice C is made, ``schedule`` completes a savepoint of its own on S,
the latest completed write instant before C that has no savepoint yet, listing the files of slice B
(base file and logs, as the plan names them) of every file group that gets a file in C; the intent
names S before the savepoint is made. Once the plan is published the guard goes (the completed
file, then the inflight one); a dead schedule's cleanup removes the copies first, then the guard.

The guard is ours by its content: ``savepointedBy`` = :data:`GUARD_BY` and ``comments`` naming C
(:func:`comments_for`). A savepoint that is not ours is never changed or removed.
"""

from __future__ import annotations

import time

from ..hudi.errors import HudiEtcError, InstantExistsError, InvalidTimelineError
from ..hudi.storage import Storage
from ..hudi.timeline.active import META_DIR, WRITE_ACTIONS, Action, Instant, State, Timeline
from ..hudi.timeline.avro_models import SAVEPOINT_METADATA, read_avro_metadata, write_avro_metadata

#: ``savepointedBy`` of a guard savepoint
GUARD_BY = "hudi-etc"
_COMMENT = "hudi-etc guard of compaction {c}: slice B kept while slice {c} is on no timeline"


def comments_for(c: str) -> str:
    return _COMMENT.format(c=c)


def needed(timeline: Timeline) -> bool:
    """Where the table's profile says so (version 6): on versions 8/9 a log named with an instant
    that never completed is in no slice for hudi-rs and us, and Java 1.x slices it by completion time
    into the old slice (its bytes read twice, the same records), so no slice without a base appears."""
    return timeline.profile.guard_savepoint


def guard_time(timeline: Timeline, c: str) -> str:
    """S: the latest completed write instant before C with no savepoint (in any state). A typed
    error when there is none (every completed write before C carries a savepoint)."""
    taken = {i.timestamp for i in timeline.instants if i.action is Action.SAVEPOINT}
    cands = [i.timestamp for i in timeline.instants
             if i.is_completed and i.action in WRITE_ACTIONS and i.timestamp < c and i.timestamp not in taken]
    if not cands:
        raise InvalidTimelineError(
            f"schedule refused: every completed write before {c} carries a savepoint, so no guard savepoint "
            f"can be made (docs/concepts.md, \"The residual window and the guard savepoint\"); nothing was "
            f"changed. Repair: delete a savepoint you no longer need, or schedule again after the next write")
    return max(cands)


def slice_b_files(plan, split: bool) -> dict[str, list[str]]:
    """Partition path → file names of slice B (base file, compacted and remaining logs) of every
    operation that makes a file in slice C (re-exposed logs; with ``split``, an exact split, the
    placeholder of every operation)."""
    out: dict[str, list[str]] = {}
    for op in plan.operations:
        if not (split or op.links):
            continue
        names = out.setdefault(op.partition or "", [])
        if op.base_file:
            names.append(op.base_file.rpartition("/")[2])
        names += [lg.rpartition("/")[2] for lg in op.compact_logs]
        names += [lk.target.rpartition("/")[2] for lk in op.links]
    return out


def guard_bytes(c: str, files: dict[str, list[str]], at_ms: int) -> bytes:
    """The completed savepoint file: one HoodieSavepointMetadata record (Avro container)."""
    return write_avro_metadata(SAVEPOINT_METADATA, {
        "savepointedBy": GUARD_BY,
        "savepointedAt": int(at_ms),
        "comments": comments_for(c),
        "partitionMetadata": {p: {"partitionPath": p, "savepointDataFile": list(names)} for p, names in files.items()},
        "version": 1,
    })


def _instant(s: str) -> Instant:
    return Instant(s, Action.SAVEPOINT, State.COMPLETED, None, META_DIR)


def inflight_path(s: str) -> str:
    return _instant(s).path(State.INFLIGHT)


def completed_path(s: str) -> str:
    return _instant(s).path(State.COMPLETED)


def create_completed(storage: Storage, s: str, c: str, files: dict[str, list[str]]) -> None:
    """Complete the guard savepoint on S, whose (empty) inflight file the caller made first, as
    Java does. A completed savepoint on S already there raises :class:`InstantExistsError`."""
    storage.create_if_absent(completed_path(s), guard_bytes(c, files, int(time.time() * 1000)))


def read_guard(data: bytes) -> dict | None:
    """The savepoint record, or None when it does not parse."""
    try:
        return read_avro_metadata(data, SAVEPOINT_METADATA)
    except HudiEtcError:
        return None


def guarded_compaction(data: bytes) -> str | None:
    """C, when the savepoint file's bytes are a guard of ours; None for anything else."""
    rec = read_guard(data)
    if not rec or rec.get("savepointedBy") != GUARD_BY:
        return None
    comments = str(rec.get("comments") or "")
    for word in comments.split():
        if word.rstrip(":").isdigit() and comments == comments_for(word.rstrip(":")):
            return word.rstrip(":")
    return None


def remove(storage: Storage, s: str, c: str) -> bool:
    """Remove the guard of C on S: the completed file (only when it is ours for C), then the
    inflight one. Returns False when a savepoint on S is not ours (left alone). An inflight file
    without a completed one is taken for ours (the intent named S: its schedule died between the
    two files, or before making them and a user's savepoint on exactly S is being made now)."""
    try:
        data = storage.read_bytes(completed_path(s))
    except FileNotFoundError:
        data = None
    if data is not None:
        if guarded_compaction(data) != c:
            return False
        storage.delete(completed_path(s))
    storage.delete(inflight_path(s))
    return True


def guards_on(timeline: Timeline, storage: Storage) -> dict[str, str]:
    """S → C of every completed guard savepoint of ours on the timeline."""
    out = {}
    for i in timeline.instants:
        if i.action is Action.SAVEPOINT and i.is_completed:
            try:
                c = guarded_compaction(storage.read_bytes(completed_path(i.timestamp)))
            except FileNotFoundError:
                continue
            if c is not None:
                out[i.timestamp] = c
    return out


def make(storage: Storage, s: str, c: str, files: dict[str, list[str]], made: list, *, what: str) -> None:
    """Complete the guard savepoint on S for compaction C listing ``files`` (:func:`slice_b_files`;
    the command's intent names S first); ``made`` gets S once the inflight file is ours. A savepoint
    on S that appeared since S was chosen is a conflict (:class:`InstantExistsError`): nothing of it
    is touched. So is a timeline Java archived past S meanwhile (many Java commits): the guard would
    then hold nothing back, and slice C would be committed the moment it holds a file without a plan."""
    try:
        storage.create_if_absent(inflight_path(s), b"")
    except InstantExistsError:
        raise InstantExistsError(f"a savepoint on {s} appeared while compaction {c} was being {what}") from None
    made.append(s)
    try:
        create_completed(storage, s, c, files)
    except BaseException:
        storage.delete(inflight_path(s))
        made.clear()
        raise
    first = Timeline.load(storage).first_write_time
    if first is None or first > s:
        remove(storage, s, c)
        made.clear()
        raise InstantExistsError(f"Java archived past {s} while compaction {c} was being {what}")
