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
* ``stale-markers``: marker folders of completed instants.

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
from ..hudi.timeline import TEMP_DIR, Action
from ..hudi.coexistence import metadata_table_state
from .service import K_LINKS, LINK_TOKEN, _verify_links, links_precreated, read_plan

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

    files = 0
    for part in list_partitions(storage):
        for f in storage.list(part, include_temp=True):
            files += 1
            rel = f.path
            name = f.name
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
                _verify_links(storage, plan)
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
