"""The new base file of one compacted file group, written as a stream.

The compaction of a file group merges its base file with a prefix of its logs. The logs are
folded first (each key's last state, a few percent of the base's rows in a typical slice); the
base file is then read in batches, each batch merged with the folded logs and written on as
row groups of the new base file, whose footer (bloom filter, key range) is added at the end.
Memory thus holds the folded logs, one batch and one row group, not the base file.

When logs stay behind in the new slice (re-exposed ones, or logs writers added to it while the
plan was pending), every live key of the group must still be in the new base (see
:func:`write_merged_base`); the logs of the whole slice are folded too, and the keys that the
compacted prefix deleted but a later log re-inserted are written with their fully merged record.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from ..hudi.crash import crashpoint
from ..hudi.file_group.merge import BlockDecoder, SliceMerger
from ..hudi.config.schema import FILE_NAME, RECORD_KEY, event_time_millis
from ..hudi.table.hudi_table import HudiTable, SliceReadSpec
from ..hudi.write.writer import BaseFileWriter

#: rows per batch read from the old base file
BATCH_ROWS = 65_536
#: Arrow bytes buffered per row group of the new base file (about 6-10 MB of parquet): memory
#: holds one row group, readers get row groups they can split on
ROW_GROUP_BYTES = 32 << 20


@dataclass
class WrittenBase:
    """What the new base file holds: rows, bytes, and the event-time range of its rows."""

    rows: int = 0
    size: int = 0
    min_event_time: int | None = None
    max_event_time: int | None = None


class _Sink:
    """Sets the file name column, tracks the event-time range, and writes through."""

    def __init__(self, writer: BaseFileWriter, file_name: str, event_time_field: str | None):
        self.writer = writer
        self.name = pa.scalar(file_name, pa.string())
        self.et = event_time_field
        self.out = WrittenBase()

    def __call__(self, rows: pa.Table) -> None:
        if not rows.num_rows:
            return
        rows = rows.set_column(rows.schema.get_field_index(FILE_NAME), FILE_NAME, pa.repeat(self.name, rows.num_rows))
        if self.et and self.et in rows.column_names:
            mm = pc.min_max(event_time_millis(rows.column(self.et)))
            lo, hi = mm["min"].as_py(), mm["max"].as_py()
            o = self.out
            if lo is not None:
                o.min_event_time = lo if o.min_event_time is None else min(o.min_event_time, lo)
                o.max_event_time = hi if o.max_event_time is None else max(o.max_event_time, hi)
        self.writer.write(rows)


def _write(table: HudiTable, rel: str, schema_json: str, file_name: str, event_time_field: str | None, produce) -> WrittenBase:
    """Create ``rel`` (once: a retry may find its own identical file) from what ``produce(sink)`` writes."""
    with table.storage.create_streamed(rel, same_ok=True) as f:
        writer = BaseFileWriter(f, table.arrow_schema, schema_json, row_group_bytes=ROW_GROUP_BYTES)
        sink = _Sink(writer, file_name, event_time_field)
        produce(sink)
        crashpoint("execute.mid-base-file")  # killed here: a half-written temp file stays behind
        writer.close()
        sink.out.rows = writer.rows
        sink.out.size = f.tell()
    return sink.out


def write_merged_base(table: HudiTable, spec: SliceReadSpec, later_logs: tuple[str, ...], rel: str,
                      file_name: str, schema_json: str, event_time_field: str | None,
                      batch_rows: int | None = None) -> WrittenBase:
    """Merge ``spec`` (base + the compacted logs) into a new base file ``rel``, streaming.

    ``later_logs``: logs that stay after the compacted ones (re-exposed or written into the new
    slice). Writers with Hudi's bloom or simple index look keys up in base files only: a key the
    compacted prefix deleted and a later log re-inserted would live in a log alone, and the next
    upsert of it would start a duplicate in another file group. Such keys go into the base with
    their record merged over the whole slice; the later logs, applied again on top, give that
    same record, so the snapshot is unchanged and RO only gets fresher.
    """
    schema = table.arrow_schema
    accept = table._filter()
    files = table.read_log_files(spec.log_paths + later_logs)
    decoder = BlockDecoder(schema)  # the prefix's blocks are decoded once for both folds
    prefix = table.fold_logs(files[: len(spec.log_paths)], accept, schema=schema, decoder=decoder)
    whole = table.fold_logs(files, accept, schema=schema, decoder=decoder) if later_logs else None
    del files, decoder
    kw = dict(precombine_field=table.config.precombine_field, event_time_ordering=table.config.event_time_ordering,
              deletes_compare_base=table.config.deletes_compare_base)
    m1 = SliceMerger(prefix, schema, **kw)
    m2 = SliceMerger(whole, schema, **kw) if whole is not None else None
    del prefix, whole

    def produce(sink: _Sink) -> None:
        if spec.base_path:
            for batch in table.iter_base(spec.base_path, skip_columns=(FILE_NAME,), batch_rows=batch_rows or BATCH_ROWS):
                if m2 is None:
                    sink(m1.merge(batch))
                    continue
                merged, dropped = m1.merge(batch, with_dropped=True)
                sink(merged)
                m2.mark_present(batch)
                if dropped.num_rows:  # deleted by the prefix: alive again after the later logs?
                    sink(m2.merge(dropped))
        inserts = m1.unmatched()
        sink(inserts)
        if m2 is not None:  # keys no base row has, not alive after the prefix, alive after all logs
            sink(m2.unmatched(exclude=inserts.column(RECORD_KEY).combine_chunks()))

    return _write(table, rel, schema_json, file_name, event_time_field, produce)


def write_base_table(table: HudiTable, rel: str, rows: pa.Table, file_name: str, schema_json: str,
                     event_time_field: str | None) -> WrittenBase:
    """A new base file ``rel`` holding ``rows`` (already merged)."""
    return _write(table, rel, schema_json, file_name, event_time_field, lambda sink: sink(rows))
