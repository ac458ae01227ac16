"""The single-writer rule, and undoing writes: a failed batch undoes itself; a crashed writer's
pending deltacommit is rolled back by the next write (Hudi's eager policy) or on request."""

from __future__ import annotations

import posixpath
from typing import Iterable

from ..concurrency.transaction import transaction
from ..protocol import heartbeat
from ..timeline import layout
from ..protocol import markers
from ..errors import InstantExistsError, InvalidTimelineError
from ..protocol.rollback import rollback_with_instant
from ..storage import Storage
from ..timeline.active import Action, Instant, Timeline
from .units import WriteUnit


def rollback_failed_writes(storage: Storage, timeline: Timeline | None = None, *, lazy: bool = False) -> list[str]:
    """Remove pending deltacommits left by crashed writers: their marked files, then the instant.

    Files are found through the markers ``.hoodie/.temp/<t>/<partition>/<name>.marker.*`` the
    writer creates before each data file (hudi/protocol/markers.py). A pending deltacommit whose heartbeat
    is alive belongs to a running writer: single-writer rule, a typed ``conflict``. ``lazy``
    (Hudi's lazy failed-writes policy, that of multi-writer tables): such a write is left alone and
    only writes whose heartbeat expired are rolled back.
    """
    timeline = timeline or Timeline.load(storage)
    done = []
    for inst in timeline.pending_writes:
        if inst.action is not Action.DELTA_COMMIT:
            continue
        if lazy and heartbeat.is_alive(storage, inst.timestamp):
            continue
        if _roll_back_if_failed(storage, inst.timestamp, lazy=lazy):
            done.append(inst.timestamp)
    return done


def _roll_back_if_failed(storage: Storage, instant: str, *, lazy: bool) -> bool:
    """Roll back pending deltacommit ``instant`` if it is still pending and its writer is gone,
    judged under the table's lock (a writer completes its instant under it) on the timeline as it
    is now. A write seen pending on an older listing may have completed since, its heartbeat
    ending with it: rolled back on that listing, a committed write would be lost (a Java 1.2 loop
    writer's deltacommit was, next to a write of ours: slow loop seed 102). True when rolled back."""
    with transaction(storage, what=f"rollback of failed write {instant}") as txn:
        fresh = txn.timeline()
        if instant not in {i.timestamp for i in fresh.pending_writes} or \
                layout.completed_path(storage, fresh, instant, Action.DELTA_COMMIT) is not None:
            return False  # completed (or rolled back) since the caller's listing
        if lazy and heartbeat.is_alive(storage, instant):
            return False
        markers.check_markers(storage, instant)  # a planted marker is refused before anything
        _refuse_live_write(storage, instant)
        _remove_instant_files(storage, instant, record=True, tl=fresh)
        return True


def stuck_writes(storage: Storage, timeline: Timeline) -> list[tuple[Instant, str]]:
    """Pending writes Java's eager rollback refuses: ``(write, first later commit)`` for each
    pending deltacommit/commit without a heartbeat file with a write or compaction completed after
    it (:attr:`Timeline.completed_writes`, Java's completed commits timeline). Java's
    ``BaseRollbackActionExecutor`` then throws ``Found commits after time`` (a heartbeat file,
    which only writers of the lazy policy keep, lets it through), so every Java write fails until
    the write goes — real Java 1.0/1.1 get there alone, compacting past a killed write. Ours has no
    such rule (:func:`rollback_write`). A Java writer of the eager policy still running has no
    heartbeat either: this cannot tell it from a dead one."""
    out = []
    for w in timeline.pending_writes:
        after = [i.timestamp for i in timeline.completed_writes if i.timestamp > w.timestamp]
        if after and not storage.exists(heartbeat.heartbeat_path(w.timestamp)):
            out.append((w, min(after)))
    return out


def stuck_write_detail(write: str, later: str) -> str:
    """What a stuck write (:func:`stuck_writes`) means, and its repair."""
    return (f"pending write {write} has no heartbeat file and commit {later} completed after it: if its writer died, "
            f"Java's writers refuse to roll it back (\"Found commits after time\") and fail until `hudi-etc rollback "
            f"--instant {write}` (or a write of ours) removes it; if it is still running (a Java writer of the eager "
            f"policy keeps no heartbeat), let it finish — a rollback would undo it")


def _refuse_live_write(storage: Storage, instant: str) -> None:
    if heartbeat.is_alive(storage, instant):
        raise InstantExistsError(f"conflict: write {instant} is running (its heartbeat is alive): one writer at a "
                                 f"time; nothing was written, try again after it ends")


def rollback_write(storage: Storage, instant: str) -> int:
    """Roll back one pending deltacommit (a crashed writer's): its marked files, then the instant.
    Returns how many data files were removed. Completed instants, and running writes (live
    heartbeat: a typed ``conflict``), are refused."""
    with transaction(storage, what=f"rollback of write {instant}") as txn:  # see _roll_back_if_failed
        tl = txn.timeline()
        if layout.completed_path(storage, tl, instant, Action.DELTA_COMMIT) is not None:
            raise InvalidTimelineError(f"deltacommit {instant} is completed; it cannot be rolled back here")
        markers.check_markers(storage, instant)
        _refuse_live_write(storage, instant)
        return _remove_instant_files(storage, instant, record=True, tl=tl)


def _remove_instant_files(storage: Storage, instant: str, *, record: bool = False,
                          also: Iterable[str] = (), tl: Timeline | None = None) -> int:
    """Delete a failed deltacommit's marked files (only those it wrote itself), its markers,
    then its timeline files and its heartbeat.

    ``record``: under a rollback instant (hudi/protocol/rollback.py), as Hudi does for a crashed writer's
    instant; a batch that fails in this process undoes itself without one. ``also``: more files
    to delete when ``instant`` wrote them (a failing batch's planned files)."""
    targets = markers.files_to_roll_back(storage, instant)  # all checked before any delete
    targets += [rel for rel in also if rel not in targets and markers.written_by(storage, rel, instant)]
    if record:
        files: dict[str, list[str]] = {}
        for rel in targets:
            files.setdefault(posixpath.dirname(rel), []).append(rel)
        _, removed = rollback_with_instant(storage, instant=instant, action=Action.DELTA_COMMIT, files=files)
    else:
        removed = sum(bool(storage.delete(rel)) for rel in targets)
    markers.remove_markers(storage, instant)
    layout.delete_pending(storage, tl if tl is not None else Timeline.load(storage), instant, Action.DELTA_COMMIT)
    if record:
        heartbeat.delete(storage, instant)  # the dead writer's (a live one was refused above)
    return removed


def _single_writer_check(storage: Storage, instant: str) -> None:
    """Single-writer rule, checked once this write's instant is visible: another write's pending
    instant before it, with a live heartbeat, is a running writer (typed ``conflict``). Of two
    writers starting together the later instant gives way; the earlier one proceeds."""
    for other in Timeline.load(storage).pending_writes:
        if other.action is Action.DELTA_COMMIT and other.timestamp < instant:
            _refuse_live_write(storage, other.timestamp)


def _abort(storage: Storage, instant: str, planned: Iterable[WriteUnit], tl: Timeline, *,
           metadata_table_before: bool = False) -> None:
    """Undo a failed batch: the files it wrote itself (another writer may have made a file of
    the same name), markers, then the instant's timeline files.

    A metadata table that appeared while the batch ran (a Java writer built it from a listing of
    storage, which Hudi 0.14 takes with the files of a write in flight: a log is named by its
    slice's completed base instant) may list the batch's files: they are then removed under a
    rollback instant, which reaches the metadata table as Hudi's own rollback of a failed write
    does. Deleted silently, they would stay listed there, and every reader listing through it
    would look for them."""
    if layout.completed_path(storage, tl, instant, Action.DELTA_COMMIT) is not None:
        return  # committed after all: nothing to undo
    from ..concurrency import jvm_metadata

    record = not metadata_table_before and jvm_metadata.present(storage)
    _remove_instant_files(storage, instant, record=record, also=[u.path for u in planned], tl=tl)

