"""Exact split (``schedule --exact-split``): at execution a merged slice is split at the
threshold; the new base keeps each key's latest version up to it, the split log (version 1 of
slice C, held by an empty placeholder since scheduling) what a later read and a later split need."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from ..hudi import logformat as lf
from ..hudi.crash import crashpoint
from ..hudi.errors import InstantExistsError, InvalidTimelineError
from ..hudi.protocol.plan import SPLIT_LOG_VERSION, Operation
from ..hudi.config.schema import FILE_NAME, RECORD_KEY, event_time_millis
from ..hudi.storage import Storage
from ..hudi.table.hudi_table import HudiTable, SliceReadSpec
from ..hudi.timeline.commits import WriteStat
from .plans import split_log_name


@dataclass(frozen=True)
class CompactTask:
    """One operation of a plan as the engine runs it (:func:`.execution.compact_task`); with
    ``split_threshold_ms`` its slice is split here (:func:`split_at_threshold`, :func:`write_split_log`)."""

    storage: Storage
    instant: str
    op: Operation
    task_index: int
    link_mode: str
    schema_json: str
    split_threshold_ms: int | None = None  # exact split: records after it go to slice C's split log
    event_time_field: str | None = None
    precreated: bool = False  # the plan's links exist since it was scheduled (verified by execute)


def split_at_threshold(table: HudiTable, spec: SliceReadSpec, merged: pa.Table, et: str, threshold_ms: int,
                        base_filterable: bool = True):
    """Exact split of one merged slice: (rows for the base file, blocks for the split log or None).

    Keys whose merged record has event time > threshold are *late*. The base file gets instead
    their latest version with event time ≤ threshold, i.e. the merge of only those records
    (deletes still apply), if any. The split log gets, per late key and in log order, what a later
    split needs to find its latest version up to any later threshold, and what makes its merge
    the key's merged record: its delete records, the version the base keeps (when it is a log
    record) and its data records after the threshold — records in between up to the threshold
    lose to the kept version under the merge rules, so they may go. A late record of a base file
    a write made goes first when no later record of the key has a smaller ordering value (it then
    merges as it did as a base record). The split log precedes the remaining logs in slice C, so
    the snapshot is unchanged while the base holds nothing after the threshold (see
    :func:`base_records_filterable` for the exception).
    """
    et_ms = event_time_millis(merged.column(et))
    is_late = pc.fill_null(pc.greater(et_ms, pa.scalar(threshold_ms, pa.int64())), False)
    if not pc.any(is_late).as_py():
        return merged, None
    th = pa.scalar(threshold_ms, pa.int64())
    late = merged.filter(is_late)
    late_keys = late.column(RECORD_KEY)
    keep = merged.filter(pc.invert(is_late))

    def log_ok(t: pa.Table) -> pa.Array:
        ms = event_time_millis(t.column(et))
        return pc.fill_null(pc.less_equal(ms, th), True)

    def base_ok(base: pa.Table) -> pa.Table:
        if et not in base.column_names:
            return base
        ms = event_time_millis(base.column(et))
        return base.filter(pc.fill_null(pc.less_equal(ms, th), True))

    earlier = table.read_slice(spec, log_record_filter=log_ok, base_filter=base_ok if base_filterable else None,
                               skip_base_columns=(FILE_NAME,))
    earlier = earlier.filter(pc.fill_null(pc.is_in(earlier.column(RECORD_KEY), value_set=late_keys), False))
    base_rows = pa.concat_tables([keep, earlier.select(keep.column_names).cast(keep.schema)])
    return base_rows, _split_log_blocks(table, spec, late, earlier, et, threshold_ms, base_filterable)


def _split_log_blocks(table: HudiTable, spec: SliceReadSpec, late: pa.Table, kept: pa.Table, et: str,
                      threshold_ms: int, base_filterable: bool) -> list[tuple[str, Any]]:
    """The split log's blocks (see :func:`split_at_threshold`): ``("data", table)`` and
    ``("delete", [DeleteRecord])`` in log order."""
    from ..hudi.file_group.merge import BlockDecoder, queue_blocks
    from ..hudi.config.schema import COMMIT_SEQNO, COMMIT_TIME

    schema = late.schema
    late_keys = set(late.column(RECORD_KEY).to_pylist())
    kept_ids = set(zip(kept.column(RECORD_KEY).to_pylist(), kept.column(COMMIT_TIME).to_pylist(),
                       kept.column(COMMIT_SEQNO).to_pylist()))
    pre = table.config.precombine_field
    decoder = BlockDecoder(table.arrow_schema)
    out: list[tuple[str, Any]] = []
    has_log: set = set()
    min_ord: dict = {}
    for b in queue_blocks(table.read_log_files(spec.log_paths), table._filter()):
        if b.block_type == lf.BlockType.DELETE:
            ds = [d for d in lf.decode_delete_records(b.content) if d.record_key in late_keys]
            if ds:
                has_log.update(d.record_key for d in ds)
                out.append(("delete", ds))
            continue
        t = decoder.table(b)
        if not t.num_rows:
            continue
        t = t.filter(pc.fill_null(pc.is_in(t.column(RECORD_KEY), value_set=late.column(RECORD_KEY)), False))
        if not t.num_rows:
            continue
        after = pc.fill_null(pc.greater(event_time_millis(t.column(et)), pa.scalar(threshold_ms, pa.int64())), False) \
            if et in t.column_names else pa.array([True] * t.num_rows)
        ids = zip(t.column(RECORD_KEY).to_pylist(), t.column(COMMIT_TIME).to_pylist(), t.column(COMMIT_SEQNO).to_pylist())
        mask = [a or i in kept_ids for a, i in zip(after.to_pylist(), ids)]
        t = t.filter(pa.array(mask, pa.bool_()))
        if not t.num_rows:
            continue
        keys = t.column(RECORD_KEY).to_pylist()
        has_log.update(keys)
        if pre and pre in t.column_names:
            for k, o in zip(keys, t.column(pre).to_pylist()):
                if o is not None and (k not in min_ord or o < min_ord[k]):
                    min_ord[k] = o
        out.append(("data", conform_to(t, schema)))
    # late records of the slice's base file: first, where they merge as they did as base records
    from_base = []
    for r in late.to_pylist():
        k = r[RECORD_KEY]
        if k not in has_log:
            from_base.append(r)  # no log record of the key: the merged record is the base record
    if base_filterable and spec.base_path and et:
        base = table._read_base(spec.base_path, (FILE_NAME,))
        base = base.filter(pc.fill_null(pc.is_in(base.column(RECORD_KEY), value_set=late.column(RECORD_KEY)), False))
        if base.num_rows and et in base.column_names:
            base = base.filter(pc.fill_null(pc.greater(event_time_millis(base.column(et)),
                                                       pa.scalar(threshold_ms, pa.int64())), False))
            eto = table.config.event_time_ordering
            for r in conform_to(base, schema).to_pylist():
                k, o = r[RECORD_KEY], r.get(pre) if pre else None
                # event-time ordering compares base and log records as the log fold does; with
                # overwrite-latest a log record replaces the base whatever its ordering value
                if k in has_log and (eto or (o is not None and (k not in min_ord or o <= min_ord[k]))):
                    from_base.append(r)
    if from_base:
        out.insert(0, ("data", pa.Table.from_pylist(from_base, schema=schema)))
    return out


def conform_to(t: pa.Table, schema: pa.Schema) -> pa.Table:
    """``t`` with ``schema``'s columns (missing ones null), in its order and types."""
    cols = [t.column(f.name).cast(f.type) if f.name in t.column_names else pa.nulls(t.num_rows, f.type)
            for f in schema]
    return pa.Table.from_arrays(cols, schema=schema)


def write_split_log(t: CompactTask, blocks: list[tuple[str, Any]], et: str, base_name: str) -> WriteStat:
    op = t.op
    name = split_log_name(op, t.instant)
    rel = op.path(name)
    parts, rows, ets = [], 0, []
    for kind, content in blocks:
        if kind == "delete":
            parts.append(lf.encode_delete_block(t.instant, t.schema_json, content))
            continue
        content = content.set_column(content.schema.get_field_index(FILE_NAME), FILE_NAME,
                                     pa.array([op.file_id] * content.num_rows, pa.string()))
        parts.append(lf.encode_data_block(t.instant, t.schema_json, content.to_pylist(maps_as_pydicts="strict")))
        rows += content.num_rows
        ets.append(event_time_millis(content.column(et)))
    data = b"".join(parts)
    # no CREATE marker: Hudi 1.x rolling back this execution on a version-6 table throws on a
    # CREATE marker naming a log file ("Log files should have only APPEND as IOTypes"; APPEND would
    # be misread by 0.14). Our rollback removes the split log as a plan output (lifecycle.py); Java
    # 0.14's leaves it, and its records merge to what Java's full base of the plan holds
    if t.precreated:  # replaces the empty placeholder that has held version 1 since scheduling
        if t.storage.exists(rel) and t.storage.size(rel) not in (0, len(data)):
            raise InvalidTimelineError(f"{rel} holds something other than this plan's placeholder")
        t.storage.write_atomic(rel, data)
    else:
        _create_once(t.storage, rel, data)
    crashpoint("execute.after-split-log")
    # the event-time range of what the base lacks: the records after the threshold (the versions
    # up to it that the log also holds are in the base too)
    all_et = pa.chunked_array(ets, pa.int64()) if ets else pa.chunked_array([], pa.int64())
    after = all_et.filter(pc.fill_null(pc.greater(all_et, pa.scalar(t.split_threshold_ms, pa.int64())), False))
    mm = pc.min_max(after if len(after) else all_et)
    return WriteStat.for_log(fileId=op.file_id, path=rel, partitionPath=op.partition, prevCommit=t.instant,
                             numWrites=rows, file_size=len(data), baseFile=base_name, logFiles=[name],
                             logVersion=SPLIT_LOG_VERSION, minEventTime=mm["min"].as_py(),
                             maxEventTime=mm["max"].as_py(), extra={"hoodieEtcSplitLog": True})


def _create_once(storage: Storage, rel: str, data: bytes) -> None:
    """Create a file; a retried task may find its own identical file from an earlier attempt."""
    try:
        storage.create_if_absent(rel, data)
    except InstantExistsError:
        if storage.read_bytes(rel) != data:
            raise
