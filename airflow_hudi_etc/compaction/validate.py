"""``hudi-etc validate``: does storage agree with the timeline and the compaction plans?

Finds, without changing anything:

* ``dangling-link``: a symlink whose target is gone (a reader of that slice would fail);
* ``link-outside-table``: a symlink pointing outside the table;
* ``missing-link``: a completed compaction re-exposes a log that is not there;
* ``broken-plan``: a compaction plan that does not parse or names unsafe paths;
* ``unsafe-path``: a completed compaction's link operations name a path outside the table;
* ``orphan-base`` / ``orphan-log``: data files of an instant that is neither completed nor
  pending (a failed write or compaction that nobody rolled back);
* ``orphan-link``: a re-exposed log of a compaction that is neither completed nor pending;
* ``temp-file``: a leftover of an interrupted atomic write;
* ``stale-markers``: marker folders of completed instants;
* ``corrupt-instant``: a completed timeline file (commit JSON, clean/rollback Avro) that does
  not parse (readers and writers would fail on it);
* ``missing-file``: a base or log file a completed commit wrote, in a file slice still current
  (not cleaned, not replaced), is gone;
* ``corrupt-base``: a base file whose Parquet footer cannot be read (truncated or damaged).

Pending instants' files are listed under ``pending`` (normal while a job runs; a crashed job's
files are removed by ``rollback`` or the next write).
"""

from __future__ import annotations

import json
import posixpath
from typing import Any, Mapping

from ..hudi import logformat as lf
from ..hudi.errors import HudiEtcError
from ..hudi.fsview import list_partitions, parse_base_file_name
from ..hudi.storage import Storage, safe_relpath
from ..hudi.table import HudiTable
from ..hudi import avro_models as am
from ..hudi.coexistence import metadata_table_state
from ..hudi.timeline import TEMP_DIR, Action, State, iter_write_stats
from .execution import verify_links
from .plans import K_LINKS, LINK_TOKEN, links_precreated, read_plan

_TMP_PREFIX = ".hudi-etc-tmp-"


def validate(path: str | Storage, *, storage_options: Mapping[str, Any] | None = None) -> dict:
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    table = HudiTable.load(storage)
    tl = table.timeline
    problems: list[dict] = []
    pending_files: list[str] = []

    def problem(kind: str, rel: str, detail: str) -> None:
        problems.append({"kind": kind, "path": rel, "detail": detail})

    completed = {i.timestamp for i in tl.instants if i.is_completed}
    pending = {i.timestamp for i in tl.instants if i.is_pending}
    compactions = {i.timestamp: i for i in tl.instants if i.action is Action.COMPACTION}

    # plans
    for ts, inst in sorted(compactions.items()):
        try:
            plan = read_plan(table, ts)
        except FileNotFoundError:
            if inst.is_pending:
                problem("broken-plan", inst.path(), "requested plan file is missing")
            continue
        except HudiEtcError as e:
            problem("broken-plan", inst.path(), str(e))
            continue
        if inst.is_completed:
            meta = table.commit_metadata(inst)
            try:
                links = json.loads((meta.get("extraMetadata") or {}).get(K_LINKS) or "[]")
            except ValueError:
                problem("broken-plan", inst.path(), "link operations in the commit are not JSON")
                links = []
            for lk in links:
                if not isinstance(lk, dict) or not lk.get("link"):
                    continue
                try:
                    safe_relpath(lk["link"])
                    if lk.get("target") is not None:
                        safe_relpath(lk["target"])
                except HudiEtcError:
                    problem("unsafe-path", inst.path(), f"commit {ts} names a path outside the table: {lk!r}")
                    continue
                if not storage.exists(lk["link"]) and _slice_alive(table, lk["link"]):
                    problem("missing-link", lk["link"], f"compaction {ts} re-exposes it but it is not there")
        del plan

    # completed timeline files parse (commit JSON; clean and rollback Avro)
    write_metas: dict[str, dict] = {}
    for inst in tl.instants:
        if not inst.is_completed:
            continue
        try:
            if inst.action in (Action.CLEAN, Action.ROLLBACK):
                am.read_avro_metadata(table.instant_bytes(inst, State.COMPLETED),
                                      am.CLEAN_METADATA if inst.action is Action.CLEAN else am.ROLLBACK_METADATA,
                                      allow_empty=True)
            elif inst.action in (Action.COMMIT, Action.DELTA_COMMIT, Action.COMPACTION, Action.REPLACE_COMMIT):
                write_metas[inst.timestamp] = table.commit_metadata(inst)
        except FileNotFoundError:
            continue  # cleaned up meanwhile
        except (HudiEtcError, ValueError) as e:
            problem("corrupt-instant", inst.path(State.COMPLETED), str(e)[:300])

    files = 0
    present: set[str] = set()
    base_slices: set[tuple[str, str, str]] = set()
    latest: dict[tuple[str, str], str] = {}
    for part in list_partitions(storage):
        for f in storage.list(part, include_temp=True):
            files += 1
            rel = f.path
            name = f.name
            present.add(rel)
            slice_of = parse_base_file_name(name, part)
            if slice_of is not None:
                base_slices.add((part, slice_of.file_id, slice_of.instant))
                key = (part, slice_of.file_id)
                latest[key] = max(latest.get(key, ""), slice_of.instant)
                if slice_of.instant in completed and storage.readlink(rel) is None:
                    _check_footer(storage, rel, problem)
            else:
                lp = lf.parse_log_file_name(name)
                if lp is not None:
                    key = (part, lp.file_id)
                    latest[key] = max(latest.get(key, ""), lp.base_instant)
            if name.startswith(_TMP_PREFIX):
                problem("temp-file", rel, "leftover of an interrupted write")
                continue
            target = storage.readlink(rel)
            if target is not None:
                resolved = posixpath.normpath(posixpath.join(posixpath.dirname(rel), target))
                try:
                    safe_relpath(resolved)
                except HudiEtcError:
                    problem("link-outside-table", rel, f"points at {target}")
                    continue
                if not storage.exists(resolved):
                    problem("dangling-link", rel, f"target {resolved} is missing")
            b = parse_base_file_name(name, part)
            if b is not None:
                if b.instant in completed:
                    continue
                if b.instant in pending:
                    pending_files.append(rel)
                else:
                    problem("orphan-base", rel, f"instant {b.instant} is neither completed nor pending")
                continue
            p = lf.parse_log_file_name(name)
            if p is None:
                continue
            if p.write_token == LINK_TOKEN and p.base_instant in compactions or p.base_instant in compactions:
                inst = compactions[p.base_instant]
                if inst.is_pending:
                    pending_files.append(rel)
                continue  # a link/split log of a completed compaction, or a write into slice C
            if p.base_instant in completed or p.base_instant in pending:
                continue
            kind = "orphan-link" if p.write_token == LINK_TOKEN else "orphan-log"
            problem(kind, rel, f"slice {p.base_instant} belongs to no completed or pending instant")
    # files completed commits wrote, in slices still current, are there
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
                problem("unsafe-path", rel, f"commit {ts} names a path outside the table")
                continue
            if rel in present:
                continue
            part, name = posixpath.split(rel)
            b = parse_base_file_name(name, part)
            lp = lf.parse_log_file_name(name) if b is None else None
            if b is None and lp is None:
                continue
            fid, slice_ts = (b.file_id, b.instant) if b is not None else (lp.file_id, lp.base_instant)
            if (part, fid) in replaced:
                continue
            if (part, fid) not in latest:
                problem("missing-file", rel, f"commit {ts} wrote it; its whole file group is gone")
            elif (part, fid, slice_ts) in base_slices or slice_ts >= latest[(part, fid)]:
                problem("missing-file", rel, f"commit {ts} wrote it and its file slice {slice_ts} is current")

    for d in storage.list_dirs(TEMP_DIR) if storage.exists(TEMP_DIR) else []:
        ts = d.rsplit("/", 1)[-1]
        if ts in completed and storage.list(d):
            problem("stale-markers", d, f"markers of completed instant {ts}")
    # pending plans: their re-exposed logs (made when they were scheduled) hold what execute expects
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
            problem("link-mismatch", inst.path(), str(e))
    mdt = metadata_table_state(storage, table.config)
    if mdt.present:
        problem("metadata-table", ".hoodie/metadata", "a metadata table Java writers list files through: every "
                "mutating command refuses the table until `hudi-etc drop-metadata-table`")
    return {
        "path": storage.base_uri,
        "ok": not problems,
        "metadata_table": mdt.as_dict(),
        "problems": problems,
        "pending_files": pending_files,
        "files_checked": files,
        "compactions_checked": len(compactions),
    }


def _check_footer(storage: Storage, rel: str, problem) -> None:
    """Read a base file's Parquet footer (its last bytes only)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if storage.is_local:
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
