"""``hudi-etc validate``: does storage agree with the timeline and the compaction plans?

Finds, without changing anything:

* ``dangling-link``: a symlink whose target is gone (a reader of that slice would fail);
* ``link-outside-table``: a symlink pointing outside the table;
* ``missing-link``: a completed compaction re-exposes a log that is not there;
* ``broken-plan``: a compaction plan that does not parse or names unsafe paths;
* ``unsafe-path``: a completed compaction's link operations name a path outside the table;
* ``orphan-base`` / ``orphan-log``: data files of an instant that is neither completed nor
  pending (a failed write or compaction that nobody rolled back); on versions 8/9 the logs a
  completed rollback R undid (Java 1.x keeps a failed write's log and adds a rollback block
  named like it) are listed under ``rolled_back_files`` instead, with R;
* ``orphan-link``: a re-exposed log of a compaction that is neither completed nor pending;
* ``temp-file``: a leftover of an interrupted atomic write (or a schedule's staged copy);
* ``stale-markers``: marker folders of completed instants;
* ``corrupt-instant``: a completed timeline file (commit JSON, clean/rollback Avro) that does
  not parse (readers and writers would fail on it), or a completed commit of 0 bytes (a writer
  killed while writing it: Java and this package read it as committed with no metadata, hudi-rs
  refuses the table; repaired by ``hudi-etc repair-instant``);
* ``missing-file``: a base or log file a completed commit wrote, in a file slice still current
  (not cleaned, not replaced), is gone;
* ``corrupt-base``: a base file whose Parquet footer cannot be read (truncated or damaged);
* ``stuck-write``: a pending write without a heartbeat file (a failed one, or a Java writer of
  the eager policy still running) with a completed commit after it — Java 1.x compacts past a
  failed write, and then Java's eager rollback refuses it (``Found commits after time``) and
  every Java write fails until ``hudi-etc rollback`` (or a write of ours) removes it.

Pending instants' files are listed under ``pending`` (normal while a job runs; a crashed job's
files are removed by ``rollback`` or the next write).

Table versions 8/9 (shared/hudi-format-v8-v9.md §2, §3): instants are read from
``.hoodie/timeline/`` and completed commits parse as Avro; a log's name-instant is the instant that
WROTE it (not its slice), so a log of a pending deltacommit is a pending file and one of an instant
neither completed, pending nor archived (older than the active timeline) is an orphan; copies named
C of a pending compaction are pending files, of an unknown instant ``orphan-link``; a missing file
is "current" when its slice (by completion time, §3.2) is the latest of its file group.
"""

from __future__ import annotations

import json
import posixpath
from typing import Any, Mapping

from ..hudi import logformat as lf
from ..hudi.errors import HudiEtcError
from ..hudi.file_group.fsview import list_partitions, parse_base_file_name
from ..hudi.concurrency import jvm_metadata
from ..hudi.storage import Storage, safe_relpath
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline import avro_models as am
from ..hudi.protocol.coexistence import metadata_table_state
from ..hudi.timeline.active import TEMP_DIR, Action, State, iter_write_stats
from .execution import verify_links
from .intents import archived_times, intent_path, is_our_copy, read_intents
from .java_compaction import recorded
from .repair import empty_commit_detail
from .plans import K_LINKS, LINK_TOKEN, foreign_data, links_precreated, plan_link_files, read_plan

_TMP_PREFIX = ".hudi-etc-tmp-"


class _Findings:
    """What a validation found: problems, and the files of pending instants."""

    def __init__(self) -> None:
        self.problems: list[dict] = []
        self.pending_files: list[str] = []

    def problem(self, kind: str, rel: str, detail: str) -> None:
        self.problems.append({"kind": kind, "path": rel, "detail": detail})


class _Listing:
    """The data files in storage, as the checks after the listing need them."""

    def __init__(self) -> None:
        self.files = 0
        self.present: set[str] = set()
        self.base_slices: set[tuple[str, str, str]] = set()
        self.latest: dict[tuple[str, str], str] = {}


def validate(path: str | Storage, *, storage_options: Mapping[str, Any] | None = None) -> dict:
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    table = HudiTable.load(storage)
    tl = table.timeline
    found = _Findings()
    completed = {i.timestamp for i in tl.instants if i.is_completed}
    pending = {i.timestamp for i in tl.instants if i.is_pending}
    compactions = {i.timestamp: i for i in tl.instants if i.action is Action.COMPACTION}

    _check_plans_and_links(table, storage, compactions, found)
    write_metas = _parse_completed_instants(table, found)
    archived = archived_times(storage, table.config)
    listing = _check_data_files(storage, completed | archived, pending, compactions, found, tl)
    _check_written_files_present(write_metas, listing, found, tl)
    _check_markers(storage, completed, found)
    _check_pending_links(table, storage, compactions, found)
    _check_intents(storage, found)
    _check_guards(storage, tl, found)
    _check_stuck_writes(storage, tl, found)
    rolled_back = _rolled_back_logs(table, found)
    mdt = metadata_table_state(storage, table.config)
    mdt_out = {**mdt.as_dict(), "checked": False}
    if mdt.present:
        mdt_out["checked"] = _check_metadata_table(storage, tl, compactions, found)
    return {
        "path": storage.base_uri,
        "ok": not found.problems,
        "metadata_table": mdt_out,
        # recorded "on"/"off", or "unknown" (our execute is refused until configure records it)
        "java_compaction": recorded(table) or "unknown",
        "problems": found.problems,
        "pending_files": found.pending_files,
        "rolled_back_files": rolled_back,
        "files_checked": listing.files,
        "compactions_checked": len(compactions),
    }


_MDT_REPAIR = ("every reader lists files through the metadata table only. Repair: stop the table's writers, run "
               "`hudi-etc drop-metadata-table`, and let the next Java writer with hoodie.metadata.enable (its "
               "default) build it again from storage (it does once no instant is pending)")


def _check_metadata_table(storage: Storage, tl, compactions: Mapping, found: _Findings) -> bool:
    """Spark-hosted (Hudi's reader in the driver JVM): the metadata table's listing against
    storage. A listed file storage no longer has fails every query reading it
    (``metadata-table-stale``); a data file of a completed instant or of a pending plan's slice
    C that it does not list is invisible to every reader (``metadata-table-missing``; an empty
    placeholder is never listed). Without the JVM nothing is read: False."""
    if not jvm_metadata.available():
        return False
    try:
        listed = jvm_metadata.listing(storage)
    except Exception as e:  # noqa: BLE001 - Hudi's reader refused: that is the finding
        found.problem("metadata-table-unreadable", ".hoodie/metadata", f"Hudi's metadata reader failed: {e}")
        return True
    completed = {i.timestamp for i in tl.instants if i.is_completed}
    plans = {ts for ts, i in compactions.items() if i.is_pending}
    parts = set(listed) | set(list_partitions(storage))
    for part in sorted(parts):
        on_disk = {f.name: f.size for f in storage.list(part)
                   if (f.name.endswith(".parquet") or ".log." in f.name) and not f.name.endswith(".crc")}
        mdt = listed.get(part, {})
        for name in sorted(set(mdt) - set(on_disk)):
            found.problem("metadata-table-stale", f"{part}/{name}".lstrip("/"),
                          "listed by the metadata table, gone from storage: queries fail on it; " + _MDT_REPAIR)
        for name in sorted(set(on_disk) - set(mdt)):
            inst = _data_file_instant(name)
            if on_disk[name] and (inst in completed or inst in plans):
                found.problem("metadata-table-missing", f"{part}/{name}".lstrip("/"),
                              f"a file of {'completed instant' if inst in completed else 'pending plan'} {inst} the "
                              "metadata table does not list: invisible to every reader; " + _MDT_REPAIR)
    return True


def _data_file_instant(name: str) -> str | None:
    """The instant a data file is named with (a base file's commit; a log's base or writing instant)."""
    base = parse_base_file_name(name)
    if base is not None:
        return base.instant
    log = lf.parse_log_file_name(name)
    return log.base_instant if log is not None else None


def _check_plans_and_links(table: HudiTable, storage: Storage, compactions: Mapping, found: _Findings) -> None:
    """Every compaction plan parses; a completed compaction's re-exposed logs are there (while
    their slice is alive) and name no path outside the table."""
    for ts, inst in sorted(compactions.items()):
        try:
            read_plan(table, ts)
        except FileNotFoundError:
            if inst.is_pending:
                found.problem("broken-plan", inst.path(), "requested plan file is missing")
            continue
        except HudiEtcError as e:
            found.problem("broken-plan", inst.path(), str(e))
            continue
        if not inst.is_completed:
            continue
        meta = table.commit_metadata(inst)
        try:
            links = json.loads((meta.get("extraMetadata") or {}).get(K_LINKS) or "[]")
        except ValueError:
            found.problem("broken-plan", inst.path(), "link operations in the commit are not JSON")
            links = []
        for lk in links:
            if not isinstance(lk, dict) or not lk.get("link"):
                continue
            try:
                safe_relpath(lk["link"])
                if lk.get("target") is not None:
                    safe_relpath(lk["target"])
            except HudiEtcError:
                found.problem("unsafe-path", inst.path(), f"commit {ts} names a path outside the table: {lk!r}")
                continue
            if not storage.exists(lk["link"]) and _slice_alive(table, lk["link"]):
                found.problem("missing-link", lk["link"], f"compaction {ts} re-exposes it but it is not there")


def _parse_completed_instants(table: HudiTable, found: _Findings) -> dict[str, dict]:
    """Completed timeline files parse (commit metadata; clean and rollback Avro): the write
    instants' commit metadata, by instant."""
    write_metas: dict[str, dict] = {}
    for inst in table.timeline.instants:
        if not inst.is_completed:
            continue
        try:
            if inst.action in (Action.CLEAN, Action.ROLLBACK):
                am.read_avro_metadata(table.instant_bytes(inst, State.COMPLETED),
                                      am.CLEAN_METADATA if inst.action is Action.CLEAN else am.ROLLBACK_METADATA,
                                      allow_empty=True)
            elif inst.action in (Action.COMMIT, Action.DELTA_COMMIT, Action.COMPACTION, Action.REPLACE_COMMIT):
                if not table.instant_bytes(inst, State.COMPLETED):  # read as Java reads it: committed, no metadata
                    found.problem("corrupt-instant", inst.path(State.COMPLETED), empty_commit_detail(inst.timestamp))
                write_metas[inst.timestamp] = table.commit_metadata(inst)
        except FileNotFoundError:
            continue  # cleaned up meanwhile
        except (HudiEtcError, ValueError) as e:
            found.problem("corrupt-instant", inst.path(State.COMPLETED), str(e)[:300])
    return write_metas


def _check_data_files(storage: Storage, completed: set, pending: set, compactions: Mapping,
                      found: _Findings, tl) -> _Listing:
    """One listing of every partition: temp files, links (outside the table, dangling), base
    footers of completed instants, and files of instants neither completed nor pending."""
    listing = _Listing()
    for part in list_partitions(storage):
        for f in storage.list(part, include_temp=True):
            listing.files += 1
            listing.present.add(f.path)
            _note_slice(listing, part, f.name)
            _check_data_file(storage, part, f.path, f.name, completed, pending, compactions, found, tl)
    return listing


def _note_slice(listing: _Listing, part: str, name: str) -> None:
    b = parse_base_file_name(name, part)
    if b is not None:
        listing.base_slices.add((part, b.file_id, b.instant))
        key = (part, b.file_id)
        listing.latest[key] = max(listing.latest.get(key, ""), b.instant)
        return
    lp = lf.parse_log_file_name(name)
    if lp is not None:
        key = (part, lp.file_id)
        listing.latest[key] = max(listing.latest.get(key, ""), lp.base_instant)


def _check_data_file(storage: Storage, part: str, rel: str, name: str, completed: set, pending: set,
                     compactions: Mapping, found: _Findings, tl) -> None:
    by_writer = tl.profile.logs_named_by_writing_instant
    if name.startswith(_TMP_PREFIX):
        found.problem("temp-file", rel, "leftover of an interrupted write")
        return
    target = storage.readlink(rel)
    if target is not None:
        resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
        try:
            safe_relpath(resolved)
        except HudiEtcError:
            found.problem("link-outside-table", rel, f"points at {target}")
            return
        if not storage.exists(resolved):
            found.problem("dangling-link", rel, f"target {resolved} is missing")
    b = parse_base_file_name(name, part)
    if b is not None:
        if b.instant in completed or (by_writer and tl.is_archived(b.instant)):  # (completed: archived included)
            if target is None:
                _check_footer(storage, rel, found.problem)
        elif b.instant in pending:
            found.pending_files.append(rel)
        else:
            found.problem("orphan-base", rel, f"instant {b.instant} is neither completed nor pending")
        return
    p = lf.parse_log_file_name(name)
    if p is None:
        return
    if p.base_instant in compactions:
        if compactions[p.base_instant].is_pending:
            found.pending_files.append(rel)
        return  # a link/split log of a completed compaction, or a write into slice C
    if by_writer:  # the name-instant is the writing instant (or the compaction C of a copy)
        if p.base_instant in pending:
            found.pending_files.append(rel)
            return
        # (a copy named C counts as archived only when the archive holds C: ``completed`` has it)
        if p.base_instant in completed or (p.write_token != LINK_TOKEN and tl.is_archived(p.base_instant)):
            return
        if p.write_token == LINK_TOKEN:
            found.problem("orphan-link", rel, _orphan_link_detail(p.base_instant))
            return
        found.problem("orphan-log", rel, f"instant {p.base_instant} that wrote it is neither completed, pending nor archived")
        return
    if p.base_instant in completed or p.base_instant in pending:
        return
    if p.write_token == LINK_TOKEN:
        found.problem("orphan-link", rel, _orphan_link_detail(p.base_instant))
        return
    found.problem("orphan-log", rel, f"slice {p.base_instant} belongs to no completed or pending instant")


def _rolled_back_logs(table: HudiTable, found: _Findings) -> list[dict]:
    """The ``orphan-log`` findings a completed rollback on the active timeline explains, taken out
    of the problems: on table versions 8/9 (a log named with the instant that wrote it) Java 1.x's
    rollback of a failed write T keeps T's log and adds a rollback command block (target T) in a
    log named with T too. No reader takes either: T is on no timeline and the block says so
    (measured with the real Java 1.0.2: tests/java/test_java_findings.py). Returned as
    ``{path, instant: T, rollback: R, detail}``."""
    orphans = [p for p in found.problems if p["kind"] == "orphan-log"]
    if not orphans:
        return []
    by: dict[str, str] = {}  # T -> the rollback R that undid it
    for inst in table.timeline.instants:
        if inst.action is not Action.ROLLBACK or not inst.is_completed:
            continue
        try:
            md = am.read_avro_metadata(table.instant_bytes(inst, State.COMPLETED), am.ROLLBACK_METADATA,
                                       allow_empty=True)
        except (FileNotFoundError, HudiEtcError, ValueError):
            continue  # (a corrupt one is reported by _parse_completed_instants)
        for t in (md or {}).get("commitsRollback") or ():
            by.setdefault(t, inst.timestamp)
    out = []
    for p in orphans:
        lp = lf.parse_log_file_name(posixpath.basename(p["path"]))
        r = by.get(lp.base_instant) if lp is not None else None
        if r is None:
            continue
        found.problems.remove(p)
        out.append({"path": p["path"], "instant": lp.base_instant, "rollback": r,
                    "detail": f"written by {lp.base_instant} (or a rollback block for it), which rollback {r} "
                              f"undid: no reader takes it; harmless, nothing to repair"})
    return out


def _orphan_link_detail(instant: str) -> str:
    return (f"a copy (or placeholder) in slice {instant}, which is on no timeline: a schedule or unschedule died "
            f"before finishing. Once Java's archiver passes {instant} every reader takes the slice as committed "
            f"without a base file (keys vanish); Java savepoints, restores and listing-based rollbacks (0.14/1.0) "
            f"see it now. Repair: `hudi-etc unschedule --instant {instant}` (removes exactly our copies); no Java "
            f"savepoint or restore until then")


def _check_intents(storage: Storage, found: _Findings) -> None:
    """An intent still there whose files were not all removed: something else wrote into them.
    A temp file an intent names as a staged copy is reported as what it is."""
    intents = read_intents(storage)
    staged = {rel: it for it in intents for rel in it.staged}
    for p in found.problems:
        if p["kind"] == "temp-file" and (it := staged.get(p["path"])) is not None:
            p["detail"] = (f"a copy {it.command} {it.instant} staged and did not rename (it died, or is still running): "
                           f"no reader sees it; the next command of ours or sensor poke removes it once "
                           f"{it.instant}'s heartbeat expired, `hudi-etc unschedule --instant {it.instant}` at once")
    for it in intents:
        changed = [rel for rel, orig in it.files if is_our_copy(storage, rel, orig) is False]
        if changed:
            found.problem("foreign-copy", intent_path(it.instant),
                          f"{it.command} {it.instant} left {', '.join(changed[:5])}: not the bytes we made (a Java "
                          f"writer wrote into or re-created them); they are kept. Check them by hand: if slice "
                          f"{it.instant} is on no timeline, their blocks are invisible to every reader")


def _check_stuck_writes(storage: Storage, tl, found: _Findings) -> None:
    """Pending writes Java's writers refuse to roll back (:func:`~airflow_hudi_etc.hudi.write.undo.stuck_writes`)."""
    from ..hudi.write.undo import stuck_write_detail, stuck_writes

    for write, later in stuck_writes(storage, tl):
        found.problem("stuck-write", write.path(), stuck_write_detail(write.timestamp, later))


def _check_guards(storage: Storage, tl, found: _Findings) -> None:
    """A guard savepoint of ours (:mod:`.guard`): its schedule died before removing it (or is
    still running). While it exists Java's archiver stops at S and its cleaner keeps slice B."""
    from .guard import guards_on

    if not tl.profile.guard_savepoint:
        return
    for s, c in sorted(guards_on(tl, storage).items()):
        found.problem("guard-savepoint", f".hoodie/{s}.savepoint",
                      f"the guard savepoint schedule {c} made on {s} (it died, or is still running): while it exists "
                      f"Java's archiver keeps every instant from {s} on and Java's cleaner keeps the file slices it "
                      f"lists; a Java restore to an older savepoint refuses (it would roll back {s}). The next command "
                      f"of ours or sensor poke removes it, after slice {c}'s files, once {c}'s heartbeat expired; "
                      f"`hudi-etc unschedule --instant {c}` at once")


def _check_written_files_present(write_metas: Mapping[str, dict], listing: _Listing, found: _Findings,
                                 tl) -> None:
    """The files completed commits wrote, in file slices still current (not cleaned, not
    replaced), are there."""
    if tl.profile.slices_by_completion_time:
        return _check_written_files_present_by_completion(write_metas, listing, found, tl)
    replaced = {(part, fid) for meta in write_metas.values()
                for part, fids in (meta.get("partitionToReplaceFileIds") or {}).items() for fid in fids}
    for ts, meta in sorted(write_metas.items()):
        for st in iter_write_stats(meta):
            rel = st.get("path")
            if not isinstance(rel, str) or not rel or "hoodieEtcLinkTarget" in st:
                continue  # links: see missing-link
            try:
                rel = safe_relpath(rel)
            except HudiEtcError:
                found.problem("unsafe-path", rel, f"commit {ts} names a path outside the table")
                continue
            if rel in listing.present:
                continue
            part, name = posixpath.split(rel)
            b = parse_base_file_name(name, part)
            lp = lf.parse_log_file_name(name) if b is None else None
            if b is None and lp is None:
                continue
            fid, slice_ts = (b.file_id, b.instant) if b is not None else (lp.file_id, lp.base_instant)
            if (part, fid) in replaced:
                continue
            if (part, fid) not in listing.latest:
                found.problem("missing-file", rel, f"commit {ts} wrote it; its whole file group is gone")
            elif (part, fid, slice_ts) in listing.base_slices or slice_ts >= listing.latest[(part, fid)]:
                found.problem("missing-file", rel, f"commit {ts} wrote it and its file slice {slice_ts} is current")


def _check_written_files_present_by_completion(write_metas: Mapping[str, dict], listing: _Listing,
                                               found: _Findings, tl) -> None:
    """Slices by completion time (8/9): a written file is current when its slice is the latest of its file group; the
    slice of a log is the largest completed base instant ≤ the completion time of the log's
    writing instant (spec §3.2), of a base file its own instant."""
    replaced = {(part, fid) for meta in write_metas.values()
                for part, fids in (meta.get("partitionToReplaceFileIds") or {}).items() for fid in fids}
    bases: dict[tuple[str, str], list[str]] = {}
    for part, fid, inst in listing.base_slices:
        if tl.completion_time(inst) is not None:
            bases.setdefault((part, fid), []).append(inst)
    for ts, meta in sorted(write_metas.items()):
        for st in iter_write_stats(meta):
            rel = st.get("path")
            if not isinstance(rel, str) or not rel:
                continue
            try:
                rel = safe_relpath(rel)
            except HudiEtcError:
                found.problem("unsafe-path", rel, f"commit {ts} names a path outside the table")
                continue
            if rel in listing.present:
                continue
            part, name = posixpath.split(rel)
            b = parse_base_file_name(name, part)
            lp = lf.parse_log_file_name(name) if b is None else None
            if b is None and lp is None:
                continue
            fid = b.file_id if b is not None else lp.file_id
            if (part, fid) in replaced:
                continue
            if (part, fid) not in listing.latest:
                found.problem("missing-file", rel, f"commit {ts} wrote it; its whole file group is gone")
                continue
            keys = sorted(bases.get((part, fid), ()))
            if b is not None:
                slice_ts = b.instant
            else:
                done = tl.completion_time(lp.base_instant) or lp.base_instant
                below = [k for k in keys if k <= done]
                slice_ts = below[-1] if below else lp.base_instant
            if not keys or slice_ts >= keys[-1]:
                found.problem("missing-file", rel, f"commit {ts} wrote it and its file slice {slice_ts} is current")


def _check_markers(storage: Storage, completed: set, found: _Findings) -> None:
    for d in storage.list_dirs(TEMP_DIR) if storage.exists(TEMP_DIR) else []:
        ts = d.rsplit("/", 1)[-1]
        if ts in completed and storage.list(d):
            found.problem("stale-markers", d, f"markers of completed instant {ts}")


def _check_pending_links(table: HudiTable, storage: Storage, compactions: Mapping, found: _Findings) -> None:
    """Pending plans: their re-exposed logs (made when they were scheduled) hold what execute expects."""
    for ts, inst in sorted(compactions.items()):
        if not inst.is_pending:
            continue
        try:
            plan = read_plan(table, ts)
        except (FileNotFoundError, HudiEtcError):
            continue  # reported above as a broken plan
        try:
            if links_precreated(plan):
                verify_links(storage, plan)
        except (FileNotFoundError, HudiEtcError) as e:
            # a copy a Java writer appended its blocks to (storage Java appends on): what it is
            foreign = any(foreign_data(storage, rel, target, ts) for rel, target in plan_link_files(plan))
            found.problem("foreign-copy" if foreign else "link-mismatch", inst.path(), str(e))


def _check_footer(storage: Storage, rel: str, problem) -> None:
    """Read a base file's Parquet footer (its last bytes only)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if storage.local_paths:
            pq.read_metadata(storage.full(rel))
        else:
            with storage.open(rel) as f:
                pq.read_metadata(f)
    except FileNotFoundError:
        return  # a dangling link, reported as such
    except (pa.ArrowInvalid, OSError) as e:
        problem("corrupt-base", rel, f"Parquet footer unreadable: {str(e)[:200]}")


def _slice_alive(table: HudiTable, rel: str) -> bool:
    """Is the slice of this file still one a reader can reach (not cleaned away)?"""
    name = rel.rsplit("/", 1)[-1]
    p = lf.parse_log_file_name(name)
    if p is None:
        return False
    part = rel.rsplit("/", 1)[0] if "/" in rel else ""
    for f in table.storage.list(part):
        b = parse_base_file_name(f.name, part)
        if b is not None and b.file_id == p.file_id and b.instant == p.base_instant:
            return True
    return False
