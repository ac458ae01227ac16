"""Writing upsert and delete batches, one deltacommit each, as Hudi's Spark writer does it.

Flow of :func:`write_batch` (the driver side):

1. Roll back failed earlier writes (pending deltacommits; Hudi's eager policy, single writer).
2. Validate and de-duplicate the batch (larger precombine value wins, as ``combine.before.upsert``).
3. ``<t>.deltacommit.requested``.
4. Tag: find the file group of each key through the base files' key range and bloom filter,
   then confirm against the file's keys (one task per candidate base file); keys no base file
   holds are then looked up in the logs of the latest slices of their partition (record keys
   only), where a compaction can leave a live key (issue 22 item 5).
5. ``<t>.deltacommit.inflight`` with the workload profile.
6. One task per work unit: updates/deletes → a new log file of the key's file group (named with
   the slice's base instant, or the pending compaction instant); inserts → new file groups
   (base files with Hudi's footer keys).
7. Partition metadata, then ``<t>.deltacommit`` (the commit point) with write stats that carry
   ``minEventTime``/``maxEventTime`` per file.

If anything fails before step 7 completes, every file the batch planned is removed and the
instant's timeline files are deleted: no pending instant and no stray file stays behind.
Tasks are plain functions over picklable arguments, so ``engine.map`` may run them in-process
or in Spark executors; a retried task that finds its own complete file from an earlier attempt
accepts it when the bytes are identical.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import io
import json
import math
import posixpath
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Iterable, Mapping, Sequence

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from . import bloom as bloom_mod
from . import heartbeat
from . import logformat as lf
from . import layout, markers
from .crash import crashpoint
from .merge import ReadFilter, queue_blocks
from .naming import log_file_name_v8
from .rollback import rollback_with_instant
from . import ordering_facts
from .coexistence import KeyGen, key_generator
from .errors import (
    InstantExistsError,
    InvalidInputError,
    InvalidTimelineError,
    TableExistsError,
    TableNotFoundError,
    UnsafePathError,
)
from .fsview import PARTITION_METAFILE, FileSystemView, base_file_name, parse_base_file_name
from .properties import (
    PAYLOAD_ALIASES,
    PROPERTIES_FILE,
    dumps as dump_properties,
    load_table_config,
    new_table_properties,
)
from .schema import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    META_FIELDS,
    PARTITION_PATH,
    RECORD_KEY,
    arrow_schema_from_avro,
    avro_schema_from_arrow,
    check_avro_names,
    conform,
    event_time_millis,
    normalize_input,
    with_meta_fields,
)
from .stats import LogScanner
from .storage import Storage, temp_owner
from .table import HudiTable, data_file_errors
from .timeline import (
    META_DIR,
    TEMP_DIR,
    Action,
    Instant,
    State,
    Timeline,
    commit_metadata,
    dump_commit_metadata,
    next_instant_time,
    write_stat,
)


class LocalEngine:
    """Runs tasks in the calling process, in order."""

    name = "local"

    def map(self, fn: Callable, items: Sequence) -> list:
        return [fn(x) for x in items]


@dataclass(frozen=True)
class WriteOptions:
    #: rows per new base file (Hudi sizes by bytes, 120 MB default; rows are a stable proxy)
    max_rows_per_base_file: int = 500_000
    #: base file compression (Hudi 0.14 default is gzip; snappy reads and writes faster)
    compression: str = "snappy"
    bloom_num_entries: int = 60_000
    bloom_fpp: float = 1e-9
    bloom_max_entries: int = 100_000
    #: roll back pending deltacommits left by crashed writers before writing (Hudi's eager policy)
    rollback_failed_writes: bool = True


# ---------------------------------------------------------------------------- init
def init_table(
    path: str | Storage,
    *,
    table_name: str,
    record_key: str,
    precombine_field: str,
    event_time_field: str,
    partition_field: str | None = None,
    payload: str = "overwrite-latest",
    storage_options: Mapping[str, Any] | None = None,
    exclusive_cleaner: bool = False,
    table_version: int = 6,
) -> dict:
    """Create an empty MOR table of ``table_version`` 6 (Hudi 0.14/0.15, timeline layout 1), 8
    (Hudi 1.0) or 9 (Hudi 1.1; both layout 2: ``.hoodie/timeline/`` and its ``history/``, no
    metadata table); re-running with the same settings is a no-op. On 8/9 the payload names
    the merge mode: ``event-time-ordering`` → EVENT_TIME_ORDERING, ``overwrite-latest`` →
    COMMIT_TIME_ORDERING.
    ``exclusive_cleaner``: the table says only this product cleans it (no Java cleaner runs), so
    link mode ``auto`` may re-expose logs by symlink (java-coexistence §5.1; v6 only: v8/v9
    re-expose logs by copy)."""
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    import re

    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", table_name or ""):
        raise InvalidInputError(f"table name {table_name!r}: use letters, digits and underscores")
    for what, f in (("record key", record_key), ("precombine", precombine_field), ("event time", event_time_field)):
        if not f or "," in f:
            raise InvalidInputError(f"{what} field {f!r}: give exactly one field")
    for what, f in (("record key", record_key), ("precombine", precombine_field), ("event time", event_time_field),
                    ("partition", partition_field)):
        if f and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", f):
            raise InvalidInputError(f"{what} field {f!r}: not a valid Avro name (letters, digits and underscores, "
                                    "not starting with a digit)")
    payload_class = PAYLOAD_ALIASES.get(payload, payload)
    if payload_class not in PAYLOAD_ALIASES.values():
        raise InvalidInputError(f"payload {payload!r}: use overwrite-latest or event-time-ordering")
    try:
        table_version = int(table_version)
    except (TypeError, ValueError):
        table_version = -1
    if table_version not in (6, 8, 9):
        raise InvalidInputError(f"table version {table_version!r}: use 6, 8 or 9")
    if table_version == 6:
        props = new_table_properties(
            table_name=table_name,
            record_key=record_key,
            precombine_field=precombine_field,
            event_time_field=event_time_field,
            partition_field=partition_field,
            payload=payload_class,
            schema=None,
        )
    else:
        from .properties import COMMIT_TIME_ORDERING, DEFAULT_PAYLOAD, EVENT_TIME_ORDERING, new_table_properties_v8

        props = new_table_properties_v8(
            version=table_version,
            table_name=table_name,
            record_key=record_key,
            ordering_field=precombine_field,
            event_time_field=event_time_field,
            partition_field=partition_field,
            schema=None,
            merge_mode=EVENT_TIME_ORDERING if payload_class == DEFAULT_PAYLOAD else COMMIT_TIME_ORDERING,
        )
    if exclusive_cleaner:
        from .coexistence import K_EXCLUSIVE_CLEANER

        props[K_EXCLUSIVE_CLEANER] = "true"
    if storage.exists(PROPERTIES_FILE):
        cfg = load_table_config(storage)
        Timeline.load(storage, cfg)  # a half-upgraded table is refused (spec §8), also here
        same = (
            cfg.name == table_name
            and cfg.record_key_fields == (record_key,)
            and cfg.precombine_field == precombine_field
            and cfg.partition_fields == ((partition_field,) if partition_field else ())
            and cfg.payload_class == payload_class
            and cfg.event_time_field == event_time_field
            and cfg.version == table_version
        )
        if not same:
            raise TableExistsError(f"a different table already exists at {storage.base_uri}")
        return {"path": storage.base_uri, "table": table_name, "created": False}
    folders = [META_DIR, f"{META_DIR}/.temp", f"{META_DIR}/.schema",
               f"{META_DIR}/.aux/.bootstrap/.partitions", f"{META_DIR}/.aux/.bootstrap/.fileids"]
    if table_version == 6:
        folders.append(f"{META_DIR}/archived")
    else:  # layout 2: the active timeline and its LSM history (spec §2.1)
        folders += [f"{META_DIR}/timeline", f"{META_DIR}/timeline/history"]
    for d in folders:
        storage.mkdirs(d)
    try:
        storage.create_if_absent(PROPERTIES_FILE, dump_properties(props, "Created by airflow-hudi-etc").encode())
    except InstantExistsError:  # a concurrent init won; accept it if it is the same table
        return init_table(storage, table_name=table_name, record_key=record_key,
                          precombine_field=precombine_field, event_time_field=event_time_field,
                          partition_field=partition_field, payload=payload, exclusive_cleaner=exclusive_cleaner,
                          table_version=table_version)
    if not partition_field:
        _ensure_partition_metadata(storage, "", "00000000000000")
    return {"path": storage.base_uri, "table": table_name, "created": True}


def _ensure_partition_metadata(storage: Storage, partition: str, instant: str) -> None:
    rel = posixpath.join(partition, PARTITION_METAFILE) if partition else PARTITION_METAFILE
    if storage.exists(rel):
        return
    depth = len([p for p in partition.split("/") if p]) if partition else 0
    now = _dt.datetime.now(_dt.timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
    body = f"#partition metadata\n#{now}\ncommitTime={instant}\npartitionDepth={depth}\n"
    storage.mkdirs(partition) if partition else None
    try:
        storage.create_if_absent(rel, body.encode())
    except InstantExistsError:
        pass


# ---------------------------------------------------------------------------- input
def read_input(path: str) -> pa.Table:
    """Read a batch from ``.parquet`` or ``.jsonl``/``.json`` (newline-delimited)."""
    import pyarrow.json as pj

    low = path.lower()
    try:
        if low.endswith(".parquet"):
            return pq.read_table(path)
        if low.endswith(".jsonl") or low.endswith(".json") or low.endswith(".ndjson"):
            return pj.read_json(path)
    except FileNotFoundError:
        raise InvalidInputError(f"input file not found: {path}") from None
    except (pa.ArrowInvalid, OSError) as e:
        raise InvalidInputError(f"cannot read {path}: {e}") from None
    raise InvalidInputError(f"input {path}: use a .parquet or .jsonl file")


def _partition_values(table: pa.Table, field: str, hive_style: bool) -> pa.Array:
    col = table.column(field)
    if col.null_count:
        raise InvalidInputError(f"partition field {field!r} has null values")
    strs = pc.cast(col, pa.string())
    if hive_style:
        strs = pc.binary_join_element_wise(pa.scalar(f"{field}="), strs, "")
    # a value is one folder name: no separator, not "." / ".." (names merely holding dots, e.g.
    # "v1..2", are fine), not hidden (Hudi's partition listing skips names starting with "."),
    # nothing stock readers cannot read (:func:`_unreadable_folder`)
    prefix = len(f"{field}=") if hive_style else 0

    def unusable(folder: str) -> bool:
        value = folder[prefix:]
        return (any(c in value for c in "/\\") or folder.startswith(".") or value in (".", "..")
                or _unreadable_folder(folder))

    bad = sorted(v for v in set(strs.to_pylist()) if unusable(v))
    if bad:
        raise InvalidInputError(f"partition values {bad[:3]} are not usable folder names (no '/', '\\', "
                                f"leading '.', control characters; at most {MAX_FOLDER_BYTES} bytes)")
    return strs.combine_chunks() if isinstance(strs, pa.ChunkedArray) else strs


#: the longest folder name (UTF-8 bytes) most filesystems take (ext4, XFS, APFS, NTFS: 255)
MAX_FOLDER_BYTES = 255


def _unreadable_folder(folder: str) -> bool:
    """A partition folder name stock readers cannot read: a control character (U+0000..U+001F,
    DEL U+007F; hudi-rs's object-store paths refuse them and then fail on the whole table), or
    longer than :data:`MAX_FOLDER_BYTES` (the filesystem refuses it)."""
    return any(c < " " or c == "\x7f" for c in folder) or len(folder.encode("utf-8", "surrogatepass")) > MAX_FOLDER_BYTES


def _timestamp_partition_values(batch: pa.Table, kg: KeyGen, hive_style: bool) -> pa.Array:
    """TimestampBasedKeyGenerator's partition paths (the output format may hold ``/``: one
    folder per level); each level must be a usable folder name."""
    f = kg.partition_fields[0]
    vals = kg.timestamp.values(batch.column(f))
    if hive_style:
        vals = [f"{f}={v}" for v in vals]
    bad = sorted({v for v in vals if any(not seg or seg.startswith(".") or _unreadable_folder(seg) for seg in v.split("/"))})
    if bad:
        raise InvalidInputError(f"partition paths {bad[:3]} are not usable folder names")
    return pa.array(vals, pa.string())


def _record_keys(batch: pa.Table, kg: KeyGen) -> pa.Array:
    """``_hoodie_record_key`` as Java's key generator makes it: the value for one key field,
    ``f1:v1,f2:v2`` for a complex key (an empty value is ``__empty__``, as KeyGenUtils writes it)."""
    if not kg.composite_key:
        return pc.cast(batch.column(kg.key_fields[0]), pa.string())
    parts = []
    for f in kg.key_fields:
        v = pc.cast(batch.column(f), pa.string())
        v = pc.if_else(pc.equal(v, ""), pa.scalar("__empty__"), v)
        parts.append(pc.binary_join_element_wise(pa.scalar(f + ":"), v, ""))
    out = pc.binary_join_element_wise(*parts, ",")
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def prepare_batch(table: HudiTable, batch: pa.Table, operation: str) -> pa.Table:
    """Validate a batch and return it de-duplicated with ``_hoodie_record_key`` / partition columns."""
    cfg = table.config
    kg = key_generator(cfg)  # refuses key generators whose keys we would make differently
    for key in kg.key_fields:
        if key not in batch.column_names:
            raise InvalidInputError(f"input lacks the record key field {key!r}")
        if batch.column(key).null_count:
            raise InvalidInputError(f"record key field {key!r} has null values")
    if operation == "upsert":
        for what, f in (("precombine", cfg.precombine_field), ("event-time", cfg.event_time_field)):
            if f and f not in batch.column_names:
                raise InvalidInputError(f"input lacks the {what} field {f!r}")
        if cfg.precombine_field and batch.column(cfg.precombine_field).null_count:
            raise InvalidInputError(f"precombine field {cfg.precombine_field!r} has null values")
    for pf in cfg.partition_fields:
        if pf not in batch.column_names:
            raise InvalidInputError(f"input lacks the partition field {pf!r}")
    bad = [c for c in batch.column_names if c in META_FIELDS]
    if bad:
        batch = batch.drop_columns(bad)
    check_avro_names(batch.schema)
    batch = normalize_input(batch)
    if cfg.event_time_field and cfg.event_time_field in batch.column_names:
        event_time_millis(batch.column(cfg.event_time_field), cfg.event_time_field)  # validates
    keys = _record_keys(batch, kg)
    if kg.timestamp is not None:
        parts = _timestamp_partition_values(batch, kg, cfg.hive_style_partitioning)
    elif kg.partition_fields:
        cols = [_partition_values(batch, f, cfg.hive_style_partitioning) for f in kg.partition_fields]
        parts = cols[0] if len(cols) == 1 else pc.binary_join_element_wise(*cols, "/")
    else:
        parts = pa.array([""] * batch.num_rows, pa.string())
    batch = batch.append_column("__key", keys).append_column("__part", parts)
    batch = batch.append_column("__row", pa.array(range(batch.num_rows), pa.int64()))
    # de-duplicate per key: larger precombine wins, the later row on ties
    sort_keys = [("__key", "ascending")]
    if cfg.precombine_field and cfg.precombine_field in batch.column_names:
        sort_keys.append((cfg.precombine_field, "descending"))
    sort_keys.append(("__row", "descending"))
    batch = batch.sort_by(sort_keys)
    k = batch.column("__key").to_numpy(zero_copy_only=False)
    import numpy as np

    first = np.ones(len(k), dtype=bool)
    if len(k) > 1:
        first[1:] = k[1:] != k[:-1]
    return batch.filter(pa.array(first)).drop_columns(["__row"])


# ---------------------------------------------------------------------------- tasks
def _ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def _from_ipc(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(data).read_all()


@dataclass(frozen=True)
class TagTask:
    storage: Storage
    base_path: str
    partition: str
    file_id: str
    keys: tuple[str, ...]


@dataclass(frozen=True)
class LogTagTask:
    """Keys to look up in the logs of one file slice: their committed data and delete blocks
    (rollback blocks applied), as a read of the slice takes them."""

    storage: Storage
    partition: str
    file_id: str
    keys: tuple[str, ...]
    log_paths: tuple[str, ...]
    is_committed: Callable[[str], bool]


def _log_tag_tasks(table: HudiTable, view: FileSystemView, unlocated: Mapping[str, list[str]]) -> list[LogTagTask]:
    """Tag tasks over the logs of the latest slices of the partitions with keys no base file
    holds. A key lives in logs only when its slice's base lacks it: a compaction whose compacted
    logs deleted it while a later log (re-exposed in slice C, or written while the plan was
    pending) re-inserted it (issue 22 item 5; Java's compactor leaves this too), or an exact
    split's records after the threshold. Updating such a key anywhere else would start a second
    live copy of it."""
    slices = [s for s in view.latest_slices() if s.log_files and unlocated.get(s.partition)]
    if not slices:
        return []
    committed = LogScanner.of(table).is_committed
    return [LogTagTask(table.storage, s.partition, s.file_id, tuple(unlocated[s.partition]), tuple(s.log_paths),
                       committed) for s in slices]


def log_tag_task(t: LogTagTask) -> tuple[str, str, list[str]]:
    """Keys of ``t.keys`` named by a committed data or delete block of the slice's logs (a key
    only deleted there is routed there too, as Hudi routes a key its base file holds); only the
    record key of each record is decoded."""
    st = t.storage
    blocks = queue_blocks([(rel, st.read_bytes(rel)) for rel in t.log_paths], ReadFilter(t.is_committed))
    wanted = set(t.keys)
    seen: set[str] = set()
    for b in blocks:
        if b.block_type == lf.BlockType.DELETE:
            keys = [d.record_key for d in lf.decode_delete_records(b.content)]
        elif b.block_type == lf.BlockType.AVRO_DATA:
            if b.schema_json is None:
                raise lf.CorruptLogBlockError("Avro data block without a SCHEMA header")
            keys = lf.decode_avro_record_keys(b.content, b.schema_json)
        else:  # PARQUET_DATA (queue_blocks passes data and delete blocks only)
            keys = _parquet_block_keys(b.content)
        seen.update(k for k in keys if k in wanted)
    return (t.partition, t.file_id, [k for k in t.keys if k in seen])


def _parquet_block_keys(content: bytes) -> list:
    try:
        return pq.read_table(pa.BufferReader(bytes(content)), columns=[RECORD_KEY]).column(0).to_pylist()
    except (pa.ArrowException, OSError, ValueError, KeyError):
        return lf.decode_parquet_content(content).column(RECORD_KEY).to_pylist()


def tag_task(t: TagTask) -> tuple[str, str, list[str]]:
    """Keys of ``t.keys`` present in the base file (range + bloom, then the file's own keys)."""
    st = t.storage
    with data_file_errors(t.base_path):  # damaged or gone: a typed error naming it (as a read gives)
        if st.is_local:
            pf = pq.ParquetFile(st.full(t.base_path))
        else:
            pf = pq.ParquetFile(io.BytesIO(st.read_bytes(t.base_path)))
        md = pf.metadata.metadata or {}
        lo = md.get(b"hoodie_min_record_key", b"").decode() or None
        hi = md.get(b"hoodie_max_record_key", b"").decode() or None
        cands = [k for k in t.keys if (lo is None or k >= lo) and (hi is None or k <= hi)]
        bf = bloom_mod.read_bloom_filter(md) if cands else None
        if bf is not None:
            cands = [k for k, hit in zip(cands, bf.might_contain_many(cands)) if hit]
        if not cands:
            return (t.partition, t.file_id, [])
        present = set(pf.read(columns=[RECORD_KEY]).column(0).to_pylist())
    return (t.partition, t.file_id, [k for k in cands if k in present])


@dataclass(frozen=True)
class WriteUnit:
    """One file to write: a new base file (inserts) or a new log file (updates/deletes)."""

    storage: Storage
    kind: str  # "insert" | "update" | "delete"
    instant: str
    task_index: int
    partition: str
    file_id: str
    file_name: str
    rows: bytes  # Arrow IPC of the data columns (+ __key)
    avro_schema_json: str  # data schema with meta fields
    precombine_field: str | None
    event_time_field: str | None
    base_instant: str | None = None  # log files: slice base instant
    base_file: str | None = None  # log files: the slice's base file name
    log_version: int | None = None
    options: WriteOptions = field(default_factory=WriteOptions)
    #: timeline layout of the table (2: versions 8/9, logs named with the writing instant)
    layout: int = 1

    @property
    def path(self) -> str:
        return posixpath.join(self.partition, self.file_name) if self.partition else self.file_name


def _event_range(table: pa.Table, field_name: str | None) -> tuple[int | None, int | None]:
    if not field_name or field_name not in table.column_names or table.num_rows == 0:
        return (None, None)
    ms = event_time_millis(table.column(field_name), field_name)
    mm = pc.min_max(ms)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    return (lo, hi)


def _put_file(storage: Storage, rel: str, data: bytes) -> None:
    try:
        storage.create_if_absent(rel, data)
        crashpoint("write.after-file")
    except InstantExistsError:
        # a retried task: accept its own identical file from an earlier attempt
        if storage.read_bytes(rel) != data:
            raise


def _meta_columns(unit: WriteUnit, n: int, file_name_value: str) -> dict[str, pa.Array]:
    seq = [f"{unit.instant}_{unit.task_index}_{i}" for i in range(n)]
    return {
        COMMIT_TIME: pa.array([unit.instant] * n, pa.string()),
        COMMIT_SEQNO: pa.array(seq, pa.string()),
        PARTITION_PATH: pa.array([unit.partition] * n, pa.string()),
        FILE_NAME: pa.array([file_name_value] * n, pa.string()),
    }


def encode_base_file(unit: WriteUnit, rows: pa.Table) -> bytes:
    avro_schema = json.loads(unit.avro_schema_json)
    schema = arrow_schema_from_avro(avro_schema)
    rows = rows.sort_by([("__key", "ascending")])
    keys = rows.column("__key")
    meta = _meta_columns(unit, rows.num_rows, unit.file_name)
    meta[RECORD_KEY] = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    data = conform(rows, pa.schema([f for f in schema if f.name not in META_FIELDS]))
    cols = [meta[m] for m in META_FIELDS] + list(data.columns)
    out = pa.Table.from_arrays(cols, schema=schema)
    return base_file_bytes(out, unit.avro_schema_json, unit.options)


class BaseFileWriter:
    """Streams rows into a Hudi base parquet file: row groups as they fill, then the footer.

    The footer carries the Avro schema (``parquet.avro.schema``, as parquet-avro writes it)
    and what Hudi's bloom index needs, the record-key bloom
    filter and the key range (``hoodie_min_record_key``/``hoodie_max_record_key``); those are
    only known once every row is in, so they are added when the file is closed. Keys go into
    the filter in row order (the order decides which row of a dynamic filter a key fills).

    ``sink``: a binary file object. Rows are buffered until ``row_group_bytes`` of Arrow data,
    then written as one row group, so memory stays near one row group whatever the file size.
    """

    def __init__(self, sink: Any, schema: pa.Schema, avro_schema_json: str,
                 options: "WriteOptions" = None, *, row_group_bytes: int = 32 << 20) -> None:
        options = options or WriteOptions()
        self.schema = schema.remove_metadata()
        self.bloom = bloom_mod.create_bloom_filter(
            num_entries=options.bloom_num_entries,
            fpp=options.bloom_fpp,
            max_entries=options.bloom_max_entries,
        )
        # (with store_schema=False pyarrow writes no schema metadata: every footer entry is
        # added explicitly, at close)
        self._kv = {"parquet.avro.schema": avro_schema_json, "writer.model.name": "avro"}
        self._sink, self._compression = sink, options.compression
        self._writer: pq.ParquetWriter | None = None  # made at the first row group (see _dictionary_columns)
        self.row_group_bytes = row_group_bytes
        self._buf: list[pa.Table] = []
        self._buf_bytes = 0
        self.rows = 0
        self.min_key: str | None = None
        self.max_key: str | None = None

    def write(self, rows: pa.Table) -> None:
        if not rows.num_rows:
            return
        keys = rows.column(RECORD_KEY)
        self.bloom.add_all(keys)  # validates the keys (no nulls, no empty ones) first
        mm = pc.min_max(keys)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        self.min_key = lo if self.min_key is None or lo < self.min_key else self.min_key
        self.max_key = hi if self.max_key is None or hi > self.max_key else self.max_key
        self.rows += rows.num_rows
        self._buf.append(rows.replace_schema_metadata(None))
        self._buf_bytes += rows.nbytes
        if self._buf_bytes >= self.row_group_bytes:
            self._flush()

    def _open(self, first: pa.Table | None) -> pq.ParquetWriter:
        if self._writer is None:
            self._writer = pq.ParquetWriter(
                self._sink, self.schema, compression=self._compression, store_schema=False,
                use_dictionary=_dictionary_columns(first) if first is not None else True)
        return self._writer

    def _flush(self) -> None:
        if self._buf:
            t = pa.concat_tables(self._buf)
            self._buf, self._buf_bytes = [], 0
            self._open(t).write_table(t, row_group_size=max(1, t.num_rows))

    def close(self) -> None:
        self._flush()
        kv = dict(self._kv)
        if self.rows:
            kv.update(bloom_mod.footer_entries(self.bloom, self.min_key, self.max_key))
        w = self._open(None)
        w.add_key_value_metadata(kv)
        w.close()


def _dictionary_columns(rows: pa.Table, sample: int = 16_384) -> list[str]:
    """The columns worth dictionary encoding, judged on a sample of the first row group: few
    distinct values (at most 1 in 10 rows). Parquet would try a dictionary on every column of
    every row group and fall back to plain pages once it outgrew its limit; on columns of
    mostly distinct values (record keys, sequence numbers, measures) that is work for nothing
    and larger files. Nested columns, which have no distinct count here, keep the dictionary."""
    head = rows.slice(0, sample)
    n = head.num_rows
    out = []
    for name, col in zip(head.column_names, head.columns):
        try:
            distinct = pc.count_distinct(col, mode="all").as_py()
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
            out.append(name)
            continue
        if distinct * 10 <= max(n, 10):
            out.append(name)
    return out


def base_file_bytes(out: pa.Table, avro_schema_json: str, options: WriteOptions = WriteOptions()) -> bytes:
    """Parquet bytes of a base file: meta columns first, Hudi's footer keys (schema, bloom, key range)."""
    sink = io.BytesIO()
    w = BaseFileWriter(sink, out.schema, avro_schema_json, options, row_group_bytes=1 << 62)
    w.write(out)
    w.close()
    return sink.getvalue()


def encode_log_file(unit: WriteUnit, rows: pa.Table) -> bytes:
    if unit.kind == "delete":
        # as Spark's delete operation: natural order (Integer 0), the delete wins over earlier logs
        recs = [lf.natural_order_delete(k, unit.partition) for k in rows.column("__key").to_pylist()]
        return lf.encode_delete_block(unit.instant, unit.avro_schema_json, recs)
    avro_schema = json.loads(unit.avro_schema_json)
    schema = arrow_schema_from_avro(avro_schema)
    meta = _meta_columns(unit, rows.num_rows, unit.file_id)
    keys = rows.column("__key")
    meta[RECORD_KEY] = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    data = conform(rows, pa.schema([f for f in schema if f.name not in META_FIELDS]))
    out = pa.Table.from_arrays([meta[m] for m in META_FIELDS] + list(data.columns), schema=schema)
    return lf.encode_data_block(unit.instant, unit.avro_schema_json, out.to_pylist(maps_as_pydicts="strict"))


def write_unit(unit: WriteUnit) -> dict:
    """Task body: write one file and return its write stat (with ``partitionPath``)."""
    t0 = time.monotonic()
    rows = _from_ipc(unit.rows)
    lo, hi = _event_range(rows, unit.event_time_field)
    if unit.kind == "insert":
        data = encode_base_file(unit, rows)
    else:
        data = encode_log_file(unit, rows)
    with temp_owner(unit.instant):  # a crashed task's temp file is known by its instant
        _put_file(unit.storage, unit.path, data)
    n = rows.num_rows
    is_log = unit.kind != "insert"
    stat = write_stat(
        file_id=unit.file_id,
        path=unit.path,
        partition_path=unit.partition,
        prev_commit=unit.base_instant if is_log else None,
        num_writes=0 if unit.kind == "delete" else n,
        num_deletes=n if unit.kind == "delete" else 0,
        num_update_writes=n if unit.kind == "update" else 0,
        num_inserts=n if unit.kind == "insert" else 0,
        file_size=len(data),
        min_event_time=lo,
        max_event_time=hi,
        base_file=unit.base_file if is_log else None,
        log_files=[unit.file_name] if is_log else None,
        log_version=unit.log_version,
    )
    stat["runtimeStats"]["totalUpsertTime" if is_log else "totalCreateTime"] = int((time.monotonic() - t0) * 1000)
    if unit.layout == 2 and is_log:  # spec §2.3: prevCommit is the writing instant, no base file
        stat.update(prevCommit=unit.instant, baseFile=None, logOffset=None)
    elif is_log:  # what schedule's prefix check needs, so that it reads this log only if it can matter
        facts = _ordering_facts(unit, rows)
        if facts is not None:
            stat[ordering_facts.STAT_KEY] = facts.to_json()
    return stat


def _ordering_facts(unit: WriteUnit, rows: pa.Table) -> "ordering_facts.OrderingFacts | None":
    """A log's ordering facts (:mod:`.ordering_facts`): our deletes carry the natural order (no
    ordering value); updates the precombine field's range (None: not recordable)."""
    n = rows.num_rows
    if unit.kind == "delete":
        return ordering_facts.OrderingFacts(0, n, None, None)
    pre = unit.precombine_field
    if not pre or pre not in rows.column_names:
        return None
    ok, lo, hi = ordering_facts.column_range(rows.column(pre))
    return ordering_facts.OrderingFacts(n, 0, lo, hi) if ok else None


# ---------------------------------------------------------------------------- driver
@dataclass(frozen=True)
class WriteResult:
    instant: str
    operation: str
    inserts: int
    updates: int
    deletes: int
    files_written: int
    bytes_written: int
    rolled_back: tuple[str, ...] = ()
    seconds: float = 0.0

    def as_dict(self) -> dict:
        d = dict(self.__dict__)
        d["rolled_back"] = list(self.rolled_back)
        return d


def rollback_failed_writes(storage: Storage, timeline: Timeline | None = None) -> list[str]:
    """Remove pending deltacommits left by crashed writers: their marked files, then the instant.

    Files are found through the markers ``.hoodie/.temp/<t>/<partition>/<name>.marker.*`` the
    writer creates before each data file (hudi/markers.py). A pending deltacommit whose heartbeat
    is alive belongs to a running writer: single-writer rule, a typed ``conflict`` (Hudi's lazy
    policy likewise leaves instants with a live heartbeat alone).
    """
    timeline = timeline or Timeline.load(storage)
    done = []
    for inst in timeline.pending_writes:
        if inst.action is not Action.DELTA_COMMIT:
            continue
        markers.check_markers(storage, inst.timestamp)  # a planted marker is refused before anything
        _refuse_live_write(storage, inst.timestamp)
        _remove_instant_files(storage, inst.timestamp, record=True, tl=timeline)
        done.append(inst.timestamp)
    return done


def _refuse_live_write(storage: Storage, instant: str) -> None:
    if heartbeat.is_alive(storage, instant):
        raise InstantExistsError(f"conflict: write {instant} is running (its heartbeat is alive): one writer at a "
                                 f"time; nothing was written, try again after it ends")


def rollback_write(storage: Storage, instant: str) -> int:
    """Roll back one pending deltacommit (a crashed writer's): its marked files, then the instant.
    Returns how many data files were removed. Completed instants, and running writes (live
    heartbeat: a typed ``conflict``), are refused."""
    tl = Timeline.load(storage)
    if layout.completed_path(storage, tl, instant, Action.DELTA_COMMIT) is not None:
        raise InvalidTimelineError(f"deltacommit {instant} is completed; it cannot be rolled back here")
    markers.check_markers(storage, instant)
    _refuse_live_write(storage, instant)
    return _remove_instant_files(storage, instant, record=True, tl=tl)


def _remove_instant_files(storage: Storage, instant: str, *, record: bool = False,
                          also: Iterable[str] = (), tl: Timeline | None = None) -> int:
    """Delete a failed deltacommit's marked files (only those it wrote itself), its markers,
    then its timeline files and its heartbeat.

    ``record``: under a rollback instant (hudi/rollback.py), as Hudi does for a crashed writer's
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


class _PlansChanged(Exception):
    """The pending compaction plans changed while a batch was being written (see write_batch)."""


#: how often a batch is written again when compaction plans keep changing under it
PLAN_CHANGE_RETRIES = 3


def write_batch(
    path: str | Storage,
    batch: pa.Table,
    *,
    operation: str = "upsert",
    engine=None,
    options: WriteOptions = WriteOptions(),
    storage_options: Mapping[str, Any] | None = None,
    now: _dt.datetime | None = None,
) -> WriteResult:
    """Write one batch as one deltacommit; see the module docstring.

    Just before committing, the writer lists the pending compaction plans again. If they
    changed since it chose its file slices (a plan appeared: the logs it wrote into a slice that
    plan closes would be dropped by its execution; a plan completed or vanished: keys were
    located against base files that are no longer the latest), the batch is undone and written
    again from the start, at most ``PLAN_CHANGE_RETRIES`` times; then a conflict is raised.
    """
    if operation not in ("upsert", "delete"):
        raise InvalidInputError(f"operation {operation!r}: use upsert or delete")
    t_start = time.monotonic()
    engine = engine or LocalEngine()
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    rolled_back: list[str] = []  # by any attempt
    for _ in range(PLAN_CHANGE_RETRIES):
        try:
            with contextlib.ExitStack() as held:  # the attempt's heartbeat, released at its end
                return _write_batch_once(storage, batch, operation=operation, engine=engine, options=options,
                                         now=now, t_start=t_start, rolled_back=rolled_back, held=held)
        except _PlansChanged:
            continue
    raise InstantExistsError(f"conflict: compaction plans changed during each of {PLAN_CHANGE_RETRIES} attempts "
                             "to write this batch; nothing was written, try again")


def _write_batch_once(storage: Storage, batch: pa.Table, *, operation: str, engine, options: WriteOptions,
                      now, t_start: float, rolled_back: list[str], held: contextlib.ExitStack) -> WriteResult:
    table = HudiTable.load_writable(storage)
    cfg = table.config
    prepared = prepare_batch(table, batch, operation)  # bad input is refused before anything is written
    if options.rollback_failed_writes and table.timeline.pending_writes:
        rolled_back += rollback_failed_writes(storage, table.timeline)
        table = table.reload()
    data_cols = [c for c in prepared.column_names if c not in ("__key", "__part")]
    # schema: the table's schema, widened by new input columns
    if table.timeline.completed_writes or cfg.create_schema:
        existing = table.avro_schema
        have = {f["name"] for f in existing["fields"]}
        new_fields = [c for c in data_cols if c not in have]
        if new_fields and operation == "upsert":
            extra = avro_schema_from_arrow(prepared.select(new_fields).schema, cfg.name)["fields"]
            existing = {**existing, "fields": existing["fields"] + extra}
        data_schema = existing
        _check_types(prepared, arrow_schema_from_avro(existing))
    else:
        if operation == "delete":
            raise InvalidInputError("cannot delete from a table that has no data yet")
        data_schema = avro_schema_from_arrow(prepared.select(data_cols).schema, cfg.name)
    schema_json = json.dumps(with_meta_fields(data_schema), separators=(",", ":"))
    data_schema_json = json.dumps(data_schema, separators=(",", ":"))

    tl0 = table.timeline
    layout2 = layout.layout_of(tl0) == 2
    instant = layout.new_time(tl0, zone=table.timeline_zone, now=now)
    requested = layout.instant(tl0, instant, Action.DELTA_COMMIT, State.REQUESTED)
    hb = held.enter_context(heartbeat.hold(storage, instant, what="write"))  # before the instant is visible
    storage.create_if_absent(requested.path(), b"")
    crashpoint("write.after-requested")
    planned: list[WriteUnit] = []
    try:
        _single_writer_check(storage, instant)
        view = table.file_system_view()
        # ---- tag
        by_part: dict[str, list[str]] = defaultdict(list)
        for k, p in zip(prepared.column("__key").to_pylist(), prepared.column("__part").to_pylist()):
            by_part[p].append(k)
        tag_tasks = []
        for s in view.latest_slices():
            if s.base_file is None or s.partition not in by_part:
                continue
            tag_tasks.append(TagTask(storage, s.base_file.path, s.partition, s.file_id, tuple(by_part[s.partition])))
        located: dict[tuple[str, str], str] = {}
        heartbeat.remove_stale_temp_files(storage, [META_DIR, *sorted(by_part)], own=instant)  # crashed writers' leftovers
        for part, fid, found in engine.map(tag_task, tag_tasks):
            for k in found:
                located[(part, k)] = fid
        # keys no base file holds may still live in a latest slice's logs only: look them up there
        unlocated = {p: [k for k in ks if (p, k) not in located] for p, ks in by_part.items()}
        for part, fid, found in engine.map(log_tag_task, _log_tag_tasks(table, view, unlocated)):
            for k in found:
                located.setdefault((part, k), fid)
        # ---- plan work units
        keys = prepared.column("__key").to_pylist()
        parts = prepared.column("__part").to_pylist()
        fids = [located.get((p, k)) for p, k in zip(parts, keys)]
        prepared = prepared.append_column("__fid", pa.array(fids, pa.string()))
        # the logs a pending plan re-exposes in slice C exist before it is published: the
        # listing has them, and new logs go after them
        versions = _log_versions(view) if not layout2 else {}
        pending_groups = (table.pending_compaction_groups() if table.timeline.pending_compactions and not layout2
                          else {})
        idx = 0
        kind = "update" if operation == "upsert" else "delete"
        updates = prepared.filter(pc.is_valid(prepared.column("__fid")))
        if updates.num_rows:
            for (part, fid), grp in _group(updates, ["__part", "__fid"]):
                base_instant, base_name = _target_slice_instant(view, part, fid, pending_groups)
                token = f"{idx}-1-0"
                if layout2:  # named with this deltacommit, version 1 (no cross-commit append in 1.x)
                    v = 1
                    name = log_file_name_v8(fid, instant, token, v)
                else:
                    v = versions[(part, fid, base_instant)] + 1
                    name = lf.format_log_file_name(fid, base_instant, v, token)
                planned.append(
                    WriteUnit(storage, kind, instant, idx, part, fid, name,
                              _ipc(grp.drop_columns(["__part", "__fid"])), schema_json,
                              cfg.precombine_field, cfg.event_time_field, base_instant, base_name, v, options,
                              layout=2 if layout2 else 1)
                )
                idx += 1
        inserts = prepared.filter(pc.is_null(prepared.column("__fid")))
        if operation == "upsert" and inserts.num_rows:
            for (part,), grp in _group(inserts, ["__part"]):
                n_files = max(1, math.ceil(grp.num_rows / options.max_rows_per_base_file))
                per = math.ceil(grp.num_rows / n_files)
                for i in range(n_files):
                    chunk = grp.slice(i * per, per)
                    fid = f"{uuid.uuid4()}-0"
                    token = f"{idx}-1-0"
                    name = base_file_name(fid, token, instant)
                    planned.append(
                        WriteUnit(storage, "insert", instant, idx, part, fid, name,
                                  _ipc(chunk.drop_columns(["__part", "__fid"])), schema_json,
                                  cfg.precombine_field, cfg.event_time_field, options=options,
                                  layout=2 if layout2 else 1)
                    )
                    idx += 1
        # ---- inflight (workload profile), markers, then the files
        inflight = commit_metadata(
            {
                p: [write_stat(file_id=u.file_id if u.kind != "insert" else "", path=None, partition_path=None,
                               prev_commit=u.base_instant)
                    for u in planned if u.partition == p]
                for p in sorted({u.partition for u in planned})
            },
            operation=operation.upper(),
            schema=None,
        )
        storage.create_if_absent(requested.path(State.INFLIGHT), layout.commit_data(tl0, inflight))
        crashpoint("write.after-inflight")
        for u in planned:  # Java's DIRECT markers (hudi/markers.py), each before its file
            if u.kind == "insert":
                markers.mark_create(storage, instant, u.path)
            elif layout2:
                markers.mark_append_log(storage, instant, u.path)
            else:
                markers.mark_append(storage, instant, u.partition, u.file_id,
                                    lf.parse_log_file_name(u.file_name).write_token, u.base_instant)
        stats = engine.map(write_unit, planned)
        for part in sorted({u.partition for u in planned}):
            if part:
                _ensure_partition_metadata(storage, part, instant)
        p2s: dict[str, list[dict]] = defaultdict(list)
        for st in stats:
            p2s[st["partitionPath"]].append(st)
        meta = commit_metadata(p2s, operation=operation.upper(), schema=data_schema_json)
        crashpoint("write.before-commit")
        if Timeline.load(storage).pending_compaction_times != table.timeline.pending_compaction_times:
            raise _PlansChanged()
        hb.check()  # still this writer's instant (no other process judged it dead meanwhile)
        layout.complete(storage, tl0, instant, Action.DELTA_COMMIT, layout.commit_data(tl0, meta),
                        zone=table.timeline_zone, now=now)
    except BaseException:
        _abort(storage, instant, planned, tl0)
        raise
    markers.remove_markers(storage, instant)
    return WriteResult(
        instant=instant,
        operation=operation,
        inserts=sum(s["numInserts"] for s in stats),
        updates=sum(s["numUpdateWrites"] for s in stats),
        deletes=sum(s["numDeletes"] for s in stats),
        files_written=len(stats),
        bytes_written=sum(s["fileSizeInBytes"] for s in stats),
        rolled_back=tuple(rolled_back),
        seconds=round(time.monotonic() - t_start, 3),
    )


_WIDENINGS = {(pa.int32(), pa.int64()), (pa.float32(), pa.float64()), (pa.int32(), pa.float64()),
              (pa.int64(), pa.float64()), (pa.int32(), pa.float32())}


def _check_types(batch: pa.Table, schema: pa.Schema) -> None:
    """Refuse input columns whose type differs from the table's (widening ints/floats is fine)."""
    for f in schema:
        if f.name not in batch.column_names:
            continue
        got = batch.schema.field(f.name).type
        if got == f.type or pa.types.is_null(got) or (got, f.type) in _WIDENINGS:
            continue
        col = batch.column(f.name)
        if col.null_count == len(col):  # all null (JSON's null column arrives as string): fits any type
            continue
        if pa.types.is_timestamp(got) and pa.types.is_timestamp(f.type):
            continue
        if pa.types.is_integer(got) and pa.types.is_integer(f.type):
            try:  # a safe cast, e.g. JSON's int64 into an int32 column, when every value fits
                batch.column(f.name).cast(f.type)
                continue
            except pa.ArrowInvalid:
                pass
        raise InvalidInputError(f"column {f.name!r} is {got} in the input but {f.type} in the table")


def _single_writer_check(storage: Storage, instant: str) -> None:
    """Single-writer rule, checked once this write's instant is visible: another write's pending
    instant before it, with a live heartbeat, is a running writer (typed ``conflict``). Of two
    writers starting together the later instant gives way; the earlier one proceeds."""
    for other in Timeline.load(storage).pending_writes:
        if other.action is Action.DELTA_COMMIT and other.timestamp < instant:
            _refuse_live_write(storage, other.timestamp)


def _abort(storage: Storage, instant: str, planned: Iterable[WriteUnit], tl: Timeline) -> None:
    """Undo a failed batch: the files it wrote itself (another writer may have made a file of
    the same name), markers, then the instant's timeline files."""
    if layout.completed_path(storage, tl, instant, Action.DELTA_COMMIT) is not None:
        return  # committed after all: nothing to undo
    _remove_instant_files(storage, instant, also=[u.path for u in planned], tl=tl)


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
