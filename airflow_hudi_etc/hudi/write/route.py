"""Write stage: route, the tagged batch cut into work units. Updates and deletes of a file group
go to one new log of its latest slice (named with the slice's base instant, or the pending
compaction's instant, on version 6; with the writing instant where the table's profile says logs
are named so, 8/9); inserts go to new file groups, at most ``max_rows_per_base_file`` rows each."""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Mapping

import pyarrow as pa
import pyarrow.compute as pc

from .. import logformat as lf
from ..file_group.fsview import FileSystemView, base_file_name
from ..file_group.naming import LOG_BASE_VERSION, log_file_name_v8
from ..format import FormatProfile
from ..index.bucket import new_file_id
from ..table.hudi_table import HudiTable
from .units import WriteOptions, WriteUnit, _ipc


def plan_units(table: HudiTable, view: FileSystemView, prepared: pa.Table, located: Mapping[tuple[str, str], str], *,
               instant: str, operation: str, schema_json: str, options: WriteOptions,
               new_fids: Mapping[tuple[str, str], str] | None = None) -> list[WriteUnit]:
    """The work units of a batch: appends (tagged keys, per file group), then inserts (per
    partition) when upserting; task indexes count up across both. ``new_fids`` (a bucket-index
    table: ``(partition, key) → file id`` of the new file group of the key's bucket): one new
    file group per bucket, whatever its size."""
    cfg = table.config
    keys = prepared.column("__key").to_pylist()
    parts = prepared.column("__part").to_pylist()
    fids = [located.get((p, k)) for p, k in zip(parts, keys)]
    prepared = prepared.append_column("__fid", pa.array(fids, pa.string()))
    common = dict(instant=instant, schema_json=schema_json, pre=cfg.precombine_field, et=cfg.event_time_field,
                  options=options, profile=cfg.profile)
    planned = _append_units(table, view, prepared.filter(pc.is_valid(prepared.column("__fid"))),
                            kind="update" if operation == "upsert" else "delete", **common)
    if operation == "upsert":
        inserts = prepared.filter(pc.is_null(prepared.column("__fid")))
        if new_fids is not None:
            fids = [new_fids[(p, k)] for p, k in zip(inserts.column("__part").to_pylist(),
                                                     inserts.column("__key").to_pylist())]
            inserts = inserts.drop_columns(["__fid"]).append_column("__fid", pa.array(fids, pa.string()))
        planned += _insert_units(inserts, start=len(planned), storage=table.storage,
                                 by_fid=new_fids is not None, **common)
    return planned


def _append_units(table: HudiTable, view: FileSystemView, updates: pa.Table, *, kind: str, instant: str,
                  schema_json: str, pre, et, options: WriteOptions, profile: FormatProfile) -> list[WriteUnit]:
    if not updates.num_rows:
        return []
    by_writer = profile.logs_named_by_writing_instant
    # the logs a pending plan re-exposes in slice C exist before it is published: the
    # listing has them, and new logs go after them
    versions = {} if by_writer else _log_versions(view)
    pending_groups = (table.pending_compaction_groups() if table.timeline.pending_compactions and not by_writer
                      else {})
    out = []
    for idx, ((part, fid), grp) in enumerate(_group(updates, ["__part", "__fid"])):
        base_instant, base_name = _target_slice_instant(view, part, fid, pending_groups)
        token = f"{idx}-1-0"
        if by_writer:  # named with this deltacommit, version 1 (no cross-commit append in 1.x)
            v = LOG_BASE_VERSION
            name = log_file_name_v8(fid, instant, token, v)
        else:
            v = versions[(part, fid, base_instant)] + 1
            name = lf.format_log_file_name(fid, base_instant, v, token)
        out.append(WriteUnit(table.storage, kind, instant, idx, part, fid, name,
                             _ipc(grp.drop_columns(["__part", "__fid"])), schema_json, pre, et, base_instant,
                             base_name, v, options, profile=profile))
    return out


def _insert_units(inserts: pa.Table, *, start: int, instant: str, schema_json: str, pre, et,
                  options: WriteOptions, profile: FormatProfile, storage, by_fid: bool = False) -> list[WriteUnit]:
    out = []
    idx = start
    if by_fid:  # the new file groups are given (a bucket each): one base file each
        for (part, fid), grp in _group(inserts, ["__part", "__fid"]):
            out.append(WriteUnit(storage, "insert", instant, idx, part, fid, base_file_name(fid, f"{idx}-1-0", instant),
                                 _ipc(grp.drop_columns(["__part", "__fid"])), schema_json, pre, et, options=options,
                                 profile=profile))
            idx += 1
        return out
    for (part,), grp in _group(inserts, ["__part"]):
        n_files = max(1, math.ceil(grp.num_rows / options.max_rows_per_base_file))
        per = math.ceil(grp.num_rows / n_files)
        for i in range(n_files):
            chunk = grp.slice(i * per, per)
            fid = new_file_id()
            token = f"{idx}-1-0"
            name = base_file_name(fid, token, instant)
            out.append(WriteUnit(storage, "insert", instant, idx, part, fid, name,
                                 _ipc(chunk.drop_columns(["__part", "__fid"])), schema_json, pre, et, options=options,
                                 profile=profile))
            idx += 1
    return out


def _log_versions(view: FileSystemView) -> dict[tuple[str, str, str], int]:
    out: dict[tuple[str, str, str], int] = defaultdict(int)
    for lfile in view.all_log_files():
        k = (lfile.partition, lfile.file_id, lfile.base_instant)
        out[k] = max(out[k], lfile.version)
    return out


def _target_slice_instant(view: FileSystemView, part: str, fid: str, pending: Mapping[tuple[str, str], str]) -> tuple[str, str | None]:
    """Base instant new logs of a file group are named with, and the base file they extend.

    A file group planned by a pending compaction at C gets its new logs in slice C (§7).
    """
    g = view.group(part, fid)
    s = view.latest_slice_of(g, view.timeline, merge_pending=True)
    base_name = s.base_file.name if s is not None and s.base_file is not None else None
    if (part, fid) in pending:
        return pending[(part, fid)], base_name
    return (s.base_instant if s is not None else g.slice_instants()[-1]), base_name


def _group(table: pa.Table, cols: list[str]):
    """Yield ((values...), sub-table) per distinct combination of ``cols``."""
    if table.num_rows == 0:
        return
    t = table.sort_by([(c, "ascending") for c in cols])
    vals = list(zip(*(t.column(c).to_pylist() for c in cols)))
    start = 0
    for i in range(1, len(vals) + 1):
        if i == len(vals) or vals[i] != vals[start]:
            yield vals[start], t.slice(start, i - start)
            start = i

