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
* Table versions 8/9 (Hudi 1.x): EVENT_TIME_ORDERING is the ``DefaultHoodieRecordPayload`` rule,
  and also a delete carrying a real ordering value loses to a base record whose value is
  strictly greater (the natural-order ``Integer 0`` delete still always wins);
  COMMIT_TIME_ORDERING is processing order (``OverwriteWithLatestAvroPayload``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..logformat import avro_arrow
from .. import logformat as lf
from ..errors import UnsupportedFeatureError
from ..config.schema import IS_DELETED, RECORD_KEY, conform

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


def queue_blocks(
    log_files: Sequence[tuple], accept: ReadFilter, stats: ScanStats | None = None
) -> list[lf.LogBlock]:
    """Valid data/delete blocks of the given log files in merge order, rollbacks applied.

    A file may come with its blocks already parsed (``(name, bytes, blocks)``), so that two
    queues over the same files (a compaction's prefix and whole slice) parse them once.
    """
    stats = stats if stats is not None else ScanStats()
    queue: list[lf.LogBlock | lf.CorruptBlock] = []
    for item in log_files:
        data = item[1]
        stats.log_files += 1
        stats.log_bytes += len(data)
        for b in item[2] if len(item) > 2 else lf.read_blocks(data):
            stats.blocks += 1
            if isinstance(b, lf.CorruptBlock):
                stats.corrupt_blocks += 1
                queue.append(b)
                continue
            t = b.block_type
            if t in (lf.BlockType.AVRO_DATA, lf.BlockType.PARQUET_DATA, lf.BlockType.DELETE):
                hd = b.header_dict
                if (hd.get(lf.HeaderKey.IS_PARTIAL) or "").strip().lower() == "true":
                    raise UnsupportedFeatureError(
                        f"{item[0]}: a partial-update log block (IS_PARTIAL=true, table version 8/9) at offset "
                        f"{b.offset}: partial merging is not supported")
                inst = hd.get(lf.HeaderKey.INSTANT_TIME)
                if inst is None or not accept.accepts(inst):
                    stats.skipped_blocks += 1
                    continue
                queue.append(b)
            elif t == lf.BlockType.COMMAND:
                # a rollback block removes every queued block of its target instant, wherever it is
                # in the queue, and every corrupt block (Java 0.14+ and 1.x: ``removeIf`` over the
                # queued blocks): another writer's block can sit between a failed write's block and
                # the rollback block that undoes it, in another log file of the slice
                stats.rollback_blocks += 1
                target = b.target_instant_time
                queue = [q for q in queue if not isinstance(q, lf.CorruptBlock) and q.instant_time != target]
            elif t == lf.BlockType.HFILE_DATA:
                raise UnsupportedFeatureError("HFile data blocks (metadata table) are not supported")
            else:  # CDC blocks carry change data, not table records
                stats.skipped_blocks += 1
    return [b for b in queue if not isinstance(b, lf.CorruptBlock)]


# ----------------------------------------------------------------- data blocks as Arrow tables
def _types_match(got: pa.Schema, want: pa.Schema) -> bool:
    """Every column both have is of the same type (then selecting/adding columns is exact)."""
    return all(got.field(f.name).type == f.type for f in want if f.name in got.names)


class BlockDecoder:
    """Data blocks → Arrow tables in the read schema, each block decoded once.

    Avro blocks go through the column-wise decoder of :mod:`.avro_arrow`; Parquet blocks are
    Arrow already. What that cannot take (a schema it does not handle, bytes it will not judge,
    a column whose block type differs from the read schema's) is decoded record by record and
    converted with the read schema, as Arrow converts Python values: the same table, or the
    same error.
    """

    def __init__(self, schema: pa.Schema):
        self.schema = schema
        self._cache: dict[int, tuple[lf.LogBlock, pa.Table]] = {}

    def table(self, block: lf.LogBlock) -> pa.Table:
        hit = self._cache.get(id(block))
        if hit is not None and hit[0] is block:
            return hit[1]
        t = self._decode(block)
        self._cache[id(block)] = (block, t)
        return t

    def prefetch(self, blocks: Sequence[lf.LogBlock]) -> None:
        """Decode runs of consecutive small Avro blocks of one schema together (streaming writers
        make many blocks of a few records; one at a time they would each pay the column-wise
        decoder's fixed cost, or go record by record). A run the column-wise decoder does not
        take is left to :meth:`table`, block by block."""
        run: list[tuple[lf.LogBlock, bytes, int]] = []
        for b in blocks:
            small = None
            if (b.block_type == lf.BlockType.AVRO_DATA and b.schema_json is not None
                    and id(b) not in self._cache):
                content = bytes(b.content)
                try:
                    count = lf._avro_block_header(content)
                except lf.CorruptLogBlockError:
                    count = None  # table() reports it, in its turn
                if count is not None and count < avro_arrow.MIN_RECORDS:
                    small = (b, content, count)
            if small is None or (run and run[-1][0].schema_json != b.schema_json):
                self._decode_run(run)
                run = []
            if small is not None:
                run.append(small)
        self._decode_run(run)

    def _decode_run(self, run: list[tuple[lf.LogBlock, bytes, int]]) -> None:
        if len(run) < 2:
            return
        try:
            t = avro_arrow.decode_avro_contents([c for _, c, _ in run], [n for _, _, n in run], run[0][0].schema_json)
        except (avro_arrow.Unsupported, avro_arrow.Mismatch):
            return
        if not _types_match(t.schema, self.schema):
            return
        t = conform(t, self.schema)
        at = 0
        for b, _, n in run:
            self._cache[id(b)] = (b, t.slice(at, n))
            at += n

    def _decode(self, block: lf.LogBlock) -> pa.Table:
        if block.block_type == lf.BlockType.AVRO_DATA:
            if block.schema_json is None:
                raise lf.CorruptLogBlockError("Avro data block without a SCHEMA header")
            content = bytes(block.content)
            count = lf._avro_block_header(content)
            try:
                t = avro_arrow.decode_avro_content(content, count, block.schema_json)
            except (avro_arrow.Unsupported, avro_arrow.Mismatch):
                t = None
            if t is not None and _types_match(t.schema, self.schema):
                return conform(t, self.schema)
            return self._from_records(block, lf.decode_avro_records(content, block.schema_json))
        if block.block_type == lf.BlockType.PARQUET_DATA:
            t = lf.decode_parquet_content(block.content)
            if _types_match(t.schema, self.schema):
                return conform(t, self.schema)
            return self._from_records(block, t.to_pylist())
        raise UnsupportedFeatureError(f"data block type {block.block_type.name} is not supported")

    def _from_records(self, block: lf.LogBlock, records: list[dict]) -> pa.Table:
        try:
            return pa.Table.from_pylist(records, schema=self.schema)
        except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
            # e.g. an Avro int of more than 32 bits (Java refuses it: "Invalid int encoding"),
            # or a column whose type changed in a way Hudi's schema evolution does not allow
            raise lf.CorruptLogBlockError(
                f"the records of the data block of instant {block.instant_time} do not fit the table's "
                f"schema: {type(e).__name__}: {e}") from None


# ----------------------------------------------------------------- folding the log blocks
@dataclass
class FoldedLogs:
    """Each key's last state over a slice's log blocks: a data record or a delete.

    ``records``: one row per key whose last state is a data record, in the read schema (a row
    with ``_hoodie_is_deleted = true`` is still a record here: it deletes when merged with the
    base). ``deleted``: the keys whose last state is a delete.
    """

    records: pa.Table
    deleted: pa.Array
    stats: ScanStats = field(default_factory=ScanStats)
    #: per key of ``deleted``: (ordering value, natural-order marker) of its last delete
    delete_orderings: tuple = ()


def _null_keys_dropped(t: pa.Table) -> pa.Table:
    keys = t.column(RECORD_KEY)
    return t if not keys.null_count else t.filter(pc.is_valid(keys))


def _as_array(col: pa.ChunkedArray | pa.Array) -> pa.Array:
    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


def _sortable(t: pa.DataType) -> bool:
    return (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_string(t) or pa.types.is_binary(t)
            or pa.types.is_boolean(t) or pa.types.is_decimal(t) or pa.types.is_temporal(t)
            or pa.types.is_large_string(t) or pa.types.is_large_binary(t))


def _last_per_key(keys: pa.Array, ordering: pa.Array | None, seq: np.ndarray) -> np.ndarray:
    """Row numbers of each key's winner among data records only (no deletes, no null or NaN
    ordering): the largest ordering value, the later record on ties; without an ordering field
    the last record."""
    n = len(keys)
    cols = {"k": keys}
    sort_keys = [("k", "ascending")]
    if ordering is not None:
        cols["o"] = ordering
        sort_keys.append(("o", "ascending"))
    cols["s"] = pa.array(seq)
    order = pc.sort_indices(pa.table(cols), sort_keys=sort_keys + [("s", "ascending")]).to_numpy()
    sorted_keys = keys.take(pa.array(order))
    last = np.ones(n, dtype=bool)
    if n > 1:
        last[:-1] = pc.not_equal(sorted_keys.slice(0, n - 1), sorted_keys.slice(1)).to_numpy(zero_copy_only=False)
    return order[last]


def _fold_sequentially(events: list[tuple], precombine: bool) -> tuple[dict[str, tuple], dict[str, tuple]]:
    """Hudi's per-key rules, one event at a time (shared/hudi-format.md §6.4).

    ``events``: ``(seq, key, "data", row, ordering, otype)`` or ``(seq, key, "delete", None,
    ordering, otype, natural_zero)`` in log order. Returns (key → (row, ordering) of the winning
    data record, key → (ordering, natural_zero) of the keys whose last state is a delete).
    """
    state: dict[str, tuple] = {}  # key → ("data"|"delete", row, ordering, otype)
    for ev in events:
        key, kind, row, o, otype = ev[1], ev[2], ev[3], ev[4], ev[5]
        prev = state.get(key)
        if kind == "delete":
            if (prev is not None and not ev[6] and otype == prev[3] and prev[2] is not None and o is not None
                    and prev[2] > o):
                continue  # an older delete does not undo a newer record (or delete)
            state[key] = ("delete", None, o, otype, bool(ev[6]))
            continue
        if not precombine:
            o = None
        if prev is not None and prev[0] == "data" and prev[2] is not None and o is not None and prev[2] > o:
            continue  # log against log: the larger ordering value stays, ties go to the later
        state[key] = ("data", row, o, otype)
    records = {k: (v[1], v[2]) for k, v in state.items() if v[0] == "data"}
    deleted = {k: (v[2], v[4]) for k, v in state.items() if v[0] == "delete"}
    return records, deleted


def fold_blocks(
    blocks: Iterable[lf.LogBlock],
    schema: pa.Schema,
    precombine_field: str | None,
    *,
    stats: ScanStats | None = None,
    record_filter: Callable[[pa.Table], pa.Array] | None = None,
    decoder: BlockDecoder | None = None,
) -> FoldedLogs:
    """Fold queued blocks into each key's last state (log-against-log rules).

    Keys with only data records and non-null orderings are folded with one sort of (key,
    ordering, log position); keys that a delete touches or that have a null or NaN ordering
    value go through the rules one record at a time (:func:`_fold_sequentially`).

    ``record_filter``: a table → boolean mask; data records it rejects are left out as if never
    written (deletes are always applied). Exact-split compaction uses it to merge only the
    records up to a threshold.
    """
    stats = stats if stats is not None else ScanStats()
    decoder = decoder or BlockDecoder(schema)
    blocks = list(blocks)
    decoder.prefetch(blocks)
    pre = precombine_field if precombine_field and precombine_field in schema.names else None
    chunks: list[pa.Table] = []
    seqs: list[np.ndarray] = []
    otypes: list[np.ndarray] = []
    otype_names: list[str | None] = []
    otype_of_schema: dict[str | None, int] = {}
    dels: list[tuple] = []
    seq = 0
    for b in blocks:
        if b.block_type == lf.BlockType.DELETE:
            for d in lf.decode_delete_records(b.content):
                if d.record_key is None:
                    continue
                stats.log_records += 1
                dels.append((seq, d.record_key, "delete", None, d.ordering_value, d.ordering_type,
                             _is_natural_zero(d.ordering_value, d.ordering_type)))
                seq += 1
            continue
        t = _null_keys_dropped(decoder.table(b))
        if record_filter is not None and t.num_rows:
            t = t.filter(record_filter(t))
        n = t.num_rows
        if not n:
            continue
        stats.log_records += n
        sj = b.schema_json
        if sj not in otype_of_schema:
            otype_of_schema[sj] = len(otype_names)
            otype_names.append(ordering_java_type(json.loads(sj) if sj else None, precombine_field))
        chunks.append(t)
        seqs.append(np.arange(seq, seq + n, dtype=np.int64))
        otypes.append(np.full(n, otype_of_schema[sj], dtype=np.int32))
        seq += n
    data = pa.concat_tables(chunks) if chunks else schema.empty_table()
    data_seq = np.concatenate(seqs) if seqs else np.zeros(0, np.int64)
    data_otype = np.concatenate(otypes) if otypes else np.zeros(0, np.int32)
    keys = _as_array(data.column(RECORD_KEY))
    ordering = _as_array(data.column(pre)) if pre is not None else None

    # keys for the one-at-a-time rules: touched by a delete, or with a null/NaN ordering value
    slow = pa.array(sorted({d[1] for d in dels}), pa.string())
    if ordering is not None and len(ordering):
        odd = pc.is_null(ordering, nan_is_null=True) if pa.types.is_floating(ordering.type) else pc.is_null(ordering)
        if not _sortable(ordering.type):
            odd = pa.array(np.ones(len(ordering), dtype=bool))
        if pc.any(odd).as_py():
            slow = pc.unique(pa.concat_arrays([slow, keys.filter(odd)]))
    is_slow = (pc.fill_null(pc.is_in(keys, value_set=slow), False).to_numpy(zero_copy_only=False)
               if len(slow) and len(keys) else np.zeros(len(keys), dtype=bool))
    fast_rows = np.flatnonzero(~is_slow)
    winners = [fast_rows[_last_per_key(keys.take(pa.array(fast_rows)),
                                       ordering.take(pa.array(fast_rows)) if ordering is not None else None,
                                       data_seq[fast_rows])]] if len(fast_rows) else []
    deleted: dict[str, tuple] = {}
    if len(slow):
        rows = np.flatnonzero(is_slow)
        rkeys = keys.take(pa.array(rows)).to_pylist()
        rord = ordering.take(pa.array(rows)).to_pylist() if ordering is not None else [None] * len(rows)
        events = [(int(data_seq[r]), k, "data", int(r), o, otype_names[data_otype[r]])
                  for r, k, o in zip(rows.tolist(), rkeys, rord)]
        events += dels
        events.sort(key=lambda e: e[0])
        recs, deleted = _fold_sequentially(events, pre is not None)
        if recs:
            winners.append(np.fromiter((r for r, _ in recs.values()), dtype=np.int64, count=len(recs)))
    idx = np.concatenate(winners) if winners else np.zeros(0, np.int64)
    return FoldedLogs(data.take(pa.array(idx)) if len(idx) else schema.empty_table(),
                      pa.array(list(deleted), pa.string()), stats, tuple(deleted.values()))


# ----------------------------------------------------------------- merging with the base
class _KeyIndex:
    """Base keys → their index among the log keys, batch by batch.

    ``pc.index_in`` hashes its whole value set at every call: a base file read in batches
    would hash every log key once per batch. The log keys are sorted once instead, and each
    batch is looked up only among the log keys inside its own key range (min to max): one
    sorted slice of them. A base file whose batches cover narrow key ranges (written sorted,
    as bulk inserts and compactions of sorted files leave them) then hashes each log key about
    once; a batch whose range covers every log key is looked up among all of them, as before.
    """

    def __init__(self, lookup: pa.Array):
        self.lookup = lookup
        order = pc.sort_indices(lookup)  # stable: a duplicate key keeps its first index first
        self.sorted = lookup.take(order)
        self.order = order.to_numpy(zero_copy_only=False).astype(np.int64)

    def positions(self, keys: pa.Array) -> np.ndarray:
        n = len(self.lookup)
        if keys.type != self.lookup.type:
            keys = keys.cast(self.lookup.type)
        mm = pc.min_max(keys)
        lo, hi = mm["min"], mm["max"]
        if not lo.is_valid:  # no key in the batch
            return np.full(len(keys), -1, dtype=np.int64)
        start = pc.sum(pc.less(self.sorted, lo)).as_py() or 0
        stop = pc.sum(pc.less_equal(self.sorted, hi)).as_py() or 0
        if stop <= start:
            return np.full(len(keys), -1, dtype=np.int64)
        whole = start == 0 and stop == n
        value_set = self.lookup if whole else self.sorted.slice(start, stop - start)
        pos = pc.fill_null(pc.index_in(keys, value_set=value_set), -1).to_numpy(zero_copy_only=False).astype(np.int64)
        if not whole:
            hit = pos >= 0
            pos[hit] = self.order[start + pos[hit]]
        return pos


class SliceMerger:
    """Applies folded log records to base records, batch by batch (log against base).

    :meth:`merge` takes base rows (the whole base file or a batch of it) and returns them
    merged; :meth:`unmatched` then gives the log records whose key no base row had (inserts).
    A delete, or a record with ``_hoodie_is_deleted = true``, removes the key. With
    ``event_time_ordering`` (``DefaultHoodieRecordPayload``) a base record whose ordering value
    is strictly greater stays; otherwise the log record replaces it.
    """

    def __init__(self, folded: FoldedLogs, schema: pa.Schema, *, precombine_field: str | None,
                 event_time_ordering: bool, deletes_compare_base: bool = False):
        self.schema = schema
        self.records = conform(folded.records, schema)
        self.n_records = self.records.num_rows
        self.lookup = pa.concat_arrays([_as_array(self.records.column(RECORD_KEY)).cast(pa.string()),
                                        folded.deleted.cast(pa.string())])
        self.compare = (precombine_field if event_time_ordering and precombine_field
                        and precombine_field in schema.names else None)
        self.matched = np.zeros(self.n_records, dtype=bool)
        self._index: _KeyIndex | None = None  # made at the first lookup
        deleted_flag = np.zeros(self.n_records, dtype=bool)
        if IS_DELETED in schema.names and pa.types.is_boolean(schema.field(IS_DELETED).type):
            deleted_flag = pc.fill_null(_as_array(self.records.column(IS_DELETED)), False).to_numpy(
                zero_copy_only=False)
        self.record_deletes = deleted_flag
        # Hudi 1.x EVENT_TIME_ORDERING: a delete with a real ordering value loses to a base record
        # whose value is larger (a natural-order delete, Integer 0, always wins: it comes later)
        self.delete_orderings = (folded.delete_orderings if deletes_compare_base and self.compare is not None
                                 else ())

    def positions(self, base: pa.Table) -> np.ndarray:
        """For each base row: the index of its key among the log keys (records, then deletes), or -1."""
        if self._index is None:
            self._index = _KeyIndex(self.lookup)
        return self._index.positions(_as_array(base.column(RECORD_KEY)))

    def merge(self, base: pa.Table, *, with_dropped: bool = False):
        """Merged rows of ``base`` (conformed to the schema); with ``with_dropped`` also the base
        rows a delete removed (``(merged, dropped)``)."""
        base = conform(base, self.schema)
        if not len(self.lookup) or not base.num_rows:
            return (base, base.slice(0, 0)) if with_dropped else base
        pos = self.positions(base)
        hit = pos >= 0
        if not hit.any():
            return (base, base.slice(0, 0)) if with_dropped else base
        rec_hit = hit & (pos < self.n_records)
        keep_base = np.zeros(len(pos), dtype=bool)
        rec_rows = np.flatnonzero(rec_hit)
        rec_pos = pos[rec_rows]
        if self.compare is not None and len(rec_rows):
            base_o = base.column(self.compare).take(pa.array(rec_rows))
            log_o = self.records.column(self.compare).take(pa.array(rec_pos))
            keep_base[rec_rows] = pc.fill_null(pc.greater(base_o, log_o), False).to_numpy(zero_copy_only=False)
        self.matched[rec_pos] = True
        replaced = rec_hit & ~keep_base
        rep_pos = pos[replaced]
        live = ~self.record_deletes[rep_pos]
        parts = [base.filter(pa.array(~hit))]
        if keep_base.any():
            parts.append(base.filter(pa.array(keep_base)))
        if live.any():
            parts.append(self.records.take(pa.array(rep_pos[live])))
        dropped = hit & ~rec_hit
        if self.delete_orderings and dropped.any():
            survive = self._base_beats_delete(base, np.flatnonzero(dropped), pos)
            if survive.any():
                parts.append(base.filter(pa.array(survive)))
                dropped &= ~survive
        merged = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        if not with_dropped:
            return merged
        dropped[np.flatnonzero(replaced)[~live]] = True
        return merged, base.filter(pa.array(dropped))

    def _base_beats_delete(self, base: pa.Table, rows: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """Base rows (of ``rows``, hit by a delete) whose ordering value is strictly larger than
        that delete's real ordering value (values of different kinds are not compared)."""
        out = np.zeros(base.num_rows, dtype=bool)
        values = base.column(self.compare).take(pa.array(rows)).to_pylist()
        for r, b, p in zip(rows.tolist(), values, pos[rows].tolist()):
            o, natural = self.delete_orderings[p - self.n_records]
            if natural or o is None or b is None:
                continue
            try:
                out[r] = b > o and isinstance(b, bool) == isinstance(o, bool)
            except TypeError:
                continue
        return out

    def mark_present(self, base: pa.Table) -> None:
        """Note the log records whose key is in these base rows, without merging them."""
        pos = self.positions(base)
        pos = pos[(pos >= 0) & (pos < self.n_records)]
        self.matched[pos] = True

    def unmatched(self, exclude: pa.Array | None = None) -> pa.Table:
        """Log records no base row had (inserts), minus ``_hoodie_is_deleted`` ones and the keys
        in ``exclude``."""
        keep = ~self.matched & ~self.record_deletes
        if exclude is not None and len(exclude) and keep.any():
            inside = pc.fill_null(pc.is_in(_as_array(self.records.column(RECORD_KEY)), value_set=exclude), False)
            keep &= ~inside.to_numpy(zero_copy_only=False)
        if keep.all():
            return self.records
        return self.records.filter(pa.array(keep))


def merge_slice(base: pa.Table | None, folded: FoldedLogs, schema: pa.Schema, *, precombine_field: str | None,
                event_time_ordering: bool, deletes_compare_base: bool = False) -> pa.Table:
    """A whole slice merged: base rows (merged) then inserts; rows in ``schema``."""
    m = SliceMerger(folded, schema, precombine_field=precombine_field, event_time_ordering=event_time_ordering,
                    deletes_compare_base=deletes_compare_base)
    parts = [m.merge(base)] if base is not None and base.num_rows else []
    ins = m.unmatched()
    if ins.num_rows or not parts:
        parts.append(ins)
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def _is_natural_zero(value: Any, otype: str | None) -> bool:
    return otype == "int" and value == 0 and not isinstance(value, bool)

