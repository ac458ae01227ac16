"""Merging a file slice: base file + log blocks → records, with Hudi 0.14/0.15 rules.

This is the per-file-group kernel shared by snapshot reads and compaction. It is plain Python
over pyarrow/fastavro so it runs in-process or inside a Spark task alike.

Rules (shared/hudi-format.md §6.2-6.4, pitfall 21):

* Log blocks are taken in log-file order (base instant, version, write token), then file order.
  Data and delete blocks of instants that are not completed on the reader's timeline are
  skipped; so are blocks after the reader's instant and, for incremental reads, blocks
  outside the instant range. A rollback command block drops the queued blocks of its target
  instant (and corrupt blocks) from the end of the queue.
* Log against log, per key (``preCombine``): a data record replaces a buffered delete; between
  two data records the larger ordering value wins, ties go to the later record. A delete
  replaces the buffered record unless its ordering value is not the natural-order marker
  ``Integer 0``, has the same type as the buffered record's, and is smaller.
* Log result against base (``combineAndGetUpdateValue``): a delete (or a record with
  ``_hoodie_is_deleted = true``) removes the key. ``OverwriteWithLatestAvroPayload``: the log
  record replaces the base record whatever its ordering value. ``DefaultHoodieRecordPayload``:
  the base record stays when its ordering value is strictly greater.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import logformat as lf
from .errors import UnsupportedFeatureError
from .schema import IS_DELETED, RECORD_KEY, conform

# Java class of an ordering value, from the Avro type of the precombine field
_AVRO_TO_JAVA = {
    "int": "int",
    "long": "long",
    "float": "float",
    "double": "double",
    "string": "string",
    "boolean": "boolean",
    "bytes": "bytes",
}


def ordering_java_type(avro_schema: dict | None, field_name: str | None) -> str | None:
    """Name of the delete-block wrapper matching the precombine field's Avro type."""
    if not avro_schema or not field_name:
        return None
    for f in avro_schema.get("fields", []):
        if f["name"] != field_name:
            continue
        t = f["type"]
        if isinstance(t, list):
            t = next((x for x in t if x != "null"), None)
        if isinstance(t, dict):
            lt = t.get("logicalType")
            if lt == "date":
                return "date"
            if lt == "decimal":
                return "decimal"
            if lt == "timestamp-micros":
                return "timestamp_micros"
            if lt == "time-micros":
                return "time_micros"
            t = t.get("type")
        return _AVRO_TO_JAVA.get(t) if isinstance(t, str) else None
    return None


@dataclass(frozen=True)
class ReadFilter:
    """Which log blocks a reader accepts."""

    is_committed: Callable[[str], bool]
    max_instant: str | None = None
    #: incremental range (start exclusive, end inclusive)
    start_instant: str | None = None
    end_instant: str | None = None

    def accepts(self, instant: str) -> bool:
        if self.max_instant is not None and instant > self.max_instant:
            return False
        if not self.is_committed(instant):
            return False
        if self.start_instant is not None and instant <= self.start_instant:
            return False
        if self.end_instant is not None and instant > self.end_instant:
            return False
        return True


@dataclass
class LogEntry:
    """The buffered state of one key: a data record or a tombstone."""

    __slots__ = ("record", "ordering", "otype", "deleted")
    record: dict | None
    ordering: Any
    otype: str | None
    deleted: bool


@dataclass
class ScanStats:
    log_files: int = 0
    log_bytes: int = 0
    blocks: int = 0
    corrupt_blocks: int = 0
    rollback_blocks: int = 0
    skipped_blocks: int = 0
    log_records: int = 0

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass
class LogScan:
    entries: dict[str, LogEntry] = field(default_factory=dict)
    stats: ScanStats = field(default_factory=ScanStats)
    #: per log file: (min, max) of the event-time field over its accepted data records
    block_instants: list[str] = field(default_factory=list)


def _is_natural_zero(value: Any, otype: str | None) -> bool:
    return otype == "int" and value == 0 and not isinstance(value, bool)


def _block_records(block: lf.LogBlock) -> list[dict]:
    if block.block_type == lf.BlockType.AVRO_DATA:
        return lf.decode_avro_records(block.content, block.schema_json)
    if block.block_type == lf.BlockType.PARQUET_DATA:
        return lf.decode_parquet_content(block.content).to_pylist()
    raise UnsupportedFeatureError(f"data block type {block.block_type.name} is not supported")


def queue_blocks(
    log_files: Sequence[tuple[str, bytes]], accept: ReadFilter, stats: ScanStats | None = None
) -> list[lf.LogBlock]:
    """Valid data/delete blocks of the given log files in merge order, rollbacks applied."""
    stats = stats if stats is not None else ScanStats()
    queue: list[lf.LogBlock | lf.CorruptBlock] = []
    for _name, data in log_files:
        stats.log_files += 1
        stats.log_bytes += len(data)
        for b in lf.read_blocks(data):
            stats.blocks += 1
            if isinstance(b, lf.CorruptBlock):
                stats.corrupt_blocks += 1
                queue.append(b)
                continue
            t = b.block_type
            if t in (lf.BlockType.AVRO_DATA, lf.BlockType.PARQUET_DATA, lf.BlockType.DELETE):
                inst = b.instant_time
                if inst is None or not accept.accepts(inst):
                    stats.skipped_blocks += 1
                    continue
                queue.append(b)
            elif t == lf.BlockType.COMMAND:
                stats.rollback_blocks += 1
                target = b.target_instant_time
                while queue:
                    last = queue[-1]
                    if isinstance(last, lf.CorruptBlock) or last.instant_time == target:
                        queue.pop()
                    else:
                        break
            elif t == lf.BlockType.HFILE_DATA:
                raise UnsupportedFeatureError("HFile data blocks (metadata table) are not supported")
            else:  # CDC blocks carry change data, not table records
                stats.skipped_blocks += 1
    return [b for b in queue if not isinstance(b, lf.CorruptBlock)]


def scan_log_blocks(
    blocks: Iterable[lf.LogBlock],
    precombine_field: str | None,
    stats: ScanStats | None = None,
    record_filter: Callable[[dict], bool] | None = None,
) -> LogScan:
    """Fold queued blocks into one entry per key (log-against-log rules).

    ``record_filter``: data records it rejects are left out as if never written (deletes are
    always applied); exact-split compaction uses it to merge only records up to a threshold.
    """
    scan = LogScan(stats=stats or ScanStats())
    entries = scan.entries
    otype_cache: dict[str, str | None] = {}
    import json as _json

    for b in blocks:
        if b.block_type == lf.BlockType.DELETE:
            for d in lf.decode_delete_records(b.content):
                key = d.record_key
                if key is None:
                    continue
                scan.stats.log_records += 1
                prev = entries.get(key)
                if prev is not None:
                    if (
                        not _is_natural_zero(d.ordering_value, d.ordering_type)
                        and d.ordering_type == prev.otype
                        and prev.ordering is not None
                        and d.ordering_value is not None
                        and prev.ordering > d.ordering_value
                    ):
                        continue
                entries[key] = LogEntry(None, d.ordering_value, d.ordering_type, True)
            continue
        schema_json = b.schema_json
        if schema_json not in otype_cache:
            otype_cache[schema_json] = ordering_java_type(_json.loads(schema_json) if schema_json else None, precombine_field)
        otype = otype_cache[schema_json]
        for rec in _block_records(b):
            key = rec.get(RECORD_KEY)
            if key is None or (record_filter is not None and not record_filter(rec)):
                continue
            scan.stats.log_records += 1
            o = rec.get(precombine_field) if precombine_field else None
            prev = entries.get(key)
            if prev is not None and not prev.deleted and prev.ordering is not None and o is not None:
                if prev.ordering > o:
                    continue
            entries[key] = LogEntry(rec, o, otype, False)
    return scan


def _record_deleted(rec: dict) -> bool:
    return rec.get(IS_DELETED) is True


def merge_with_base(
    base: pa.Table | None,
    scan: LogScan,
    schema: pa.Schema,
    *,
    precombine_field: str | None,
    event_time_ordering: bool,
) -> pa.Table:
    """Apply the folded log entries to the base records; returns rows in ``schema``."""
    entries = scan.entries
    base = conform(base, schema) if base is not None else None
    parts: list[pa.Table] = []
    log_rows: list[dict] = []
    if base is not None and base.num_rows:
        keys = base.column(RECORD_KEY)
        if entries:
            touched = pc.is_in(keys, value_set=pa.array(list(entries.keys()), pa.string()))
            touched = pc.fill_null(touched, False)
            parts.append(base.filter(pc.invert(touched)))
            hit = base.filter(touched)
            hit_keys = hit.column(RECORD_KEY).to_pylist()
            hit_ord = (
                hit.column(precombine_field).to_pylist()
                if event_time_ordering and precombine_field and precombine_field in hit.column_names
                else None
            )
            keep_base_idx = []
            seen = set()
            for i, k in enumerate(hit_keys):
                e = entries[k]
                seen.add(k)
                if e.deleted:
                    continue
                if hit_ord is not None:
                    bo = hit_ord[i]
                    if bo is not None and e.ordering is not None and bo > e.ordering:
                        keep_base_idx.append(i)
                        continue
                if not _record_deleted(e.record):
                    log_rows.append(e.record)
            if keep_base_idx:
                parts.append(hit.take(pa.array(keep_base_idx, pa.int64())))
            for k, e in entries.items():
                if k not in seen and not e.deleted and not _record_deleted(e.record):
                    log_rows.append(e.record)
        else:
            parts.append(base)
    else:
        for e in entries.values():
            if not e.deleted and not _record_deleted(e.record):
                log_rows.append(e.record)
    if log_rows:
        parts.append(pa.Table.from_pylist(log_rows, schema=schema))
    if not parts:
        return schema.empty_table()
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def read_parquet_bytes(data: bytes, columns: list[str] | None = None) -> pa.Table:
    return pq.read_table(io.BytesIO(data), columns=columns)
