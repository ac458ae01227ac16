"""Intents: what a command is about to put into (or take out of) a slice C that is on no timeline.

A ``schedule`` makes the plan's copies in slice C before the plan is visible, and ``unschedule``
removes them after the plan is gone; in between, slice C is on no timeline. Once Java's archiver
moves the active timeline's start past C, every reader (Java's, hudi-rs, ours) takes such a slice
as committed and without a base file (java-coexistence-2 §1, finding 1): its files must go before
that. So before the first copy (or before the plan is withdrawn) the command records an intent,
``.hoodie/.aux/hudi-etc/intents/<C>.json`` (created if absent: a second command for C is a
conflict) naming C, every ``(file, original)`` pair and the staged name each copy is written
under first (copy mode on local storage: a kill while the bytes are written leaves only staged
files, which no reader sees), and holds C's heartbeat while it works;
the intent goes once the plan is published or its files are gone. Failures in the process remove
the files at once; what a killed process leaves is finished by the next command of ours or the
next sensor poke (:func:`finish_stale_intents`, one listing of the intent folder), at any age, as
soon as the owner's heartbeat has expired.

Removal is careful (java-coexistence-2, finding 4): a file is deleted only when it is the empty split placeholder, a
symlink of ours, or a byte-identical copy of its original; anything else (a Java writer wrote
into or re-created it) is kept, and so is the intent, which ``validate`` reports.

Orphans without an intent (a schedule of an earlier release killed in its copy phase) are
recognised too: a file with our link token whose instant C is neither on the active timeline nor
archived, that is an empty placeholder or byte-identical to another log of its file group
(:func:`intentless_orphans`).
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass

from ..hudi.protocol import heartbeat
from ..hudi import logformat as lf
from ..hudi.errors import InstantExistsError, InvalidTimelineError
from ..hudi.protocol.plan import LINK_TOKEN
from ..hudi.storage import Storage
from ..hudi.timeline.active import AUX_DIR, Action, Instant, State, Timeline

INTENT_DIR = f"{AUX_DIR}/hudi-etc/intents"


@dataclass(frozen=True)
class Intent:
    instant: str
    command: str  # "schedule" or "unschedule"
    files: tuple[tuple[str, str | None], ...]  # (file in slice C, its original; None: the split placeholder)
    #: the names ``files`` are first written under (copy mode on local storage): temp-file names no
    #: reader sees, always ours, deleted whatever they hold
    staged: tuple[str, ...] = ()
    #: S, the instant of the guard savepoint (:mod:`.guard`) the command completes before its first
    #: file in slice C (table version 6) and removes after the plan is published or the files are gone
    guard: str | None = None

    @property
    def path(self) -> str:
        return intent_path(self.instant)

    def to_bytes(self) -> bytes:
        # compact and without indent: json's C encoder (a plan re-exposes tens of thousands of logs)
        d = {"instant": self.instant, "command": self.command, "files": self.files}
        if self.staged:
            d["staged"] = self.staged
        if self.guard:
            d["guard"] = self.guard
        return json.dumps(d, separators=(",", ":")).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> "Intent":
        try:
            d = json.loads(data)
            files = tuple((str(a), None if b is None else str(b)) for a, b in d["files"])
            staged = tuple(str(a) for a in d.get("staged") or ())
            guard = d.get("guard")
            return cls(str(d["instant"]), str(d.get("command") or "schedule"), files, staged,
                       None if guard is None else str(guard))
        except (ValueError, KeyError, TypeError) as e:
            raise InvalidTimelineError(f"intent file does not parse: {e}") from None


def intent_path(instant: str) -> str:
    return f"{INTENT_DIR}/{instant}.json"


def record(storage: Storage, intent: Intent) -> None:
    """Write the intent (create-if-absent). An intent for C already there is another command's
    (alive) or a dead one's: a conflict either way (the dead one is finished by the next command)."""
    try:
        storage.create_if_absent(intent.path, intent.to_bytes())
    except InstantExistsError:
        raise InstantExistsError(f"another command is working on slice {intent.instant} ({intent.path})") from None


def drop(storage: Storage, instant: str) -> None:
    storage.delete(intent_path(instant))


def read_intents(storage: Storage) -> list[Intent]:
    out = []
    for name in sorted(storage.list_names(INTENT_DIR)):
        if not name.endswith(".json"):
            continue
        try:
            out.append(Intent.from_bytes(storage.read_bytes(f"{INTENT_DIR}/{name}")))
        except (FileNotFoundError, InvalidTimelineError):
            continue  # finished meanwhile; an unreadable one is reported by validate
    return out


def is_our_copy(storage: Storage, rel: str, original: str | None) -> bool | None:
    """Is ``rel`` still exactly what we made: the empty placeholder (``original`` None), a symlink,
    or a copy holding exactly the original's bytes — or a prefix of them: on storage Java appends on
    (java-coexistence-2, finding 2) a Java write that came after the copy grows the original, never the copy, as long
    as slice C is uncommitted. A copy Java wrote into holds bytes its original lacks. None: ``rel``
    is not there."""
    try:
        if storage.readlink(rel) is not None:
            return True
        if original is None:
            return storage.size(rel) == 0
        n, m = storage.size(rel), storage.size(original)
        if n > m or (n == 0 and m > 0):  # (an empty file at a copy's name may be a Java writer's new log)
            return False
        return storage.read_bytes(rel) == (storage.read_bytes(original) if n == m else storage.read_bytes(original, 0, n))
    except FileNotFoundError:
        return None if not storage.exists(rel) else False


def remove_copies(storage: Storage, files) -> tuple[list[str], list[str]]:
    """Delete what is still exactly ours of ``files`` ((file, original) pairs): (removed, kept)."""
    removed, kept = [], []
    for rel, original in files:
        ours = is_our_copy(storage, rel, original)
        if ours is None:
            continue
        if ours:
            storage.delete(rel)
            removed.append(rel)
        else:
            kept.append(rel)
    return removed, kept


def remove_staged(storage: Storage, staged) -> list[str]:
    """Delete staged files (only ever written by us, invisible to readers): those that were there."""
    return [rel for rel in staged if storage.delete(rel)]


def archived_times(storage: Storage, config) -> frozenset[str]:
    """Instants the archive holds (v6: ``.hoodie/archived``; v8/v9: the LSM history)."""
    from ..hudi.timeline.archived import archived_times as read

    return read(storage, config)


def finish_stale_intents(storage: Storage, config=None, *, only_instant: str | None = None) -> list[str]:
    """Finish the intents whose owner is gone (heartbeat expired), or ``only_instant``'s at once
    (``unschedule --instant``: the user says that command is over): a plan that got published
    keeps its files, a slice on no timeline loses what is still exactly ours. Returns the files
    removed. Cheap when there is nothing to do: one listing of the intent folder. First, the temp
    files of dead executions whose plan is no longer pending (:mod:`.leftovers`)."""
    from .leftovers import finish_dead_executions, remove_temps_of

    finish_dead_executions(storage, config)
    intents = [i for i in read_intents(storage)
               if (i.instant == only_instant if only_instant is not None
                   else not heartbeat.is_alive(storage, i.instant))]
    if only_instant is not None and not intents:  # unschedule --instant C: a guard of C left without its intent
        _drop_intentless_guards(storage, config, only_instant)
    if not intents:
        return []
    if config is None:
        from ..hudi.config.properties import load_table_config

        config = load_table_config(storage)
    tl = Timeline.load(storage, config)
    archived = None
    removed: list[str] = []
    for it in intents:
        on_timeline = [i for i in tl.get(it.instant) if i.action is Action.COMPACTION]
        if on_timeline:  # published (and, for an unschedule, not withdrawn): the files are the plan's
            _drop_guard(storage, it)
            drop(storage, it.instant)
            continue
        if archived is None:
            archived = archived_times(storage, config)
        if it.instant in archived:  # executed and archived: the files are a completed slice's
            _drop_guard(storage, it)
            drop(storage, it.instant)
            continue
        with heartbeat.hold(storage, it.instant, what="orphan removal"):
            removed += remove_staged(storage, it.staged)
            done, kept = _remove_copies(storage, config, it)
            removed += done
            remove_temps_of(storage, it.instant, {posixpath.dirname(f) for f, _ in it.files})  # copies in flight
            if kept:
                continue  # not ours any more: validate reports the intent and these files
            if config.profile.plan_aux_copy:
                storage.delete(f"{AUX_DIR}/{Instant(it.instant, Action.COMPACTION, State.REQUESTED).file_name()}")
            _drop_guard(storage, it)  # only once slice C holds nothing of ours: it kept slice B till now
            drop(storage, it.instant)
    return removed


def _remove_copies(storage: Storage, config, it: Intent) -> tuple[list[str], list[str]]:
    """:func:`remove_copies` of a dead command's files; on a table with a metadata table (which
    lists them when the schedule died after registering them, just before its plan became
    visible) under the table's lock, through a clean instant the metadata table is told of."""
    from ..hudi.concurrency import jvm_metadata, transaction as commit_path

    if not it.files or not jvm_metadata.present(storage):
        return remove_copies(storage, it.files)
    from ..hudi.protocol.coexistence import timeline_zone

    with commit_path.transaction(storage, what=f"orphan removal {it.instant}") as txn:
        return jvm_metadata.delete_files(storage, txn.config, [f for f, _ in it.files],
                                         lambda: remove_copies(storage, it.files), zone=timeline_zone(config),
                                         what=f"the copies of dead schedule {it.instant}")


def _drop_intentless_guards(storage: Storage, config, instant: str) -> None:
    from .guard import guards_on, remove

    if config is not None and not config.profile.guard_savepoint:  # (no config: the timeline's guards are looked at)
        return
    for s, c in guards_on(Timeline.load(storage, config), storage).items():
        if c == instant:
            remove(storage, s, c)


def _drop_guard(storage: Storage, it: Intent) -> None:
    if it.guard:
        from .guard import remove

        remove(storage, it.guard, it.instant)


def intentless_orphans(storage: Storage, config, tl: Timeline, log_files, cutoff: str,
                       only_instant: str | None = None) -> list[str]:
    """Files with our link token in a slice C that is on neither the active timeline nor in the
    archive and has no intent, made before ``cutoff`` (or of ``only_instant``), that are an empty
    placeholder or byte-identical to another log of their file group (never a file Java wrote)."""
    known = {i.timestamp for i in tl.instants}

    def candidate(lg) -> bool:
        c = lg.base_instant
        if c in known:
            return False
        return c == only_instant if only_instant is not None else c < cutoff

    cands = [lg for lg in log_files if lg.write_token == LINK_TOKEN and candidate(lg)]  # (most are not ours)
    if not cands:  # the usual case: the intent folder is not even listed (a request each on object stores)
        return []
    with_intent = {i.instant for i in read_intents(storage)}
    cands = [lg for lg in cands if lg.base_instant not in with_intent]
    if not cands:
        return []
    archived = archived_times(storage, config)
    cands = [lg for lg in cands if lg.base_instant not in archived]
    by_group: dict[tuple[str, str], list] = {}
    for lg in log_files:
        by_group.setdefault((posixpath.dirname(lg.path), lg.file_id), []).append(lg)
    out = []
    for lg in cands:
        if storage.readlink(lg.path) is not None:
            out.append(lg.path)
            continue
        try:
            data = storage.read_bytes(lg.path)
        except FileNotFoundError:
            continue
        if not data:
            if lf.parse_log_file_name(posixpath.basename(lg.path)).version == 1:
                out.append(lg.path)  # the split placeholder
            continue
        for other in by_group.get((posixpath.dirname(lg.path), lg.file_id), ()):
            if other.path == lg.path or other.base_instant == lg.base_instant:
                continue
            try:
                if storage.read_bytes(other.path) == data:
                    out.append(lg.path)
                    break
            except FileNotFoundError:
                continue
    return out
