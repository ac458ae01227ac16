"""Writing upsert and delete batches, one deltacommit each, as Hudi's Spark writer does it.

Flow of :func:`write_batch` (the driver side):

1. Roll back failed earlier writes (pending deltacommits; Hudi's eager policy, single writer).
2. Validate and de-duplicate the batch (larger precombine value wins, as ``combine.before.upsert``).
3. ``<t>.deltacommit.requested``.
4. Tag: find the file group of each key through the base files' key range and bloom filter,
   then confirm against the file's keys (one task per candidate base file); keys no base file
   holds are then looked up in the logs of the latest slices of their partition (record keys
   only), where a compaction can leave a live key (see :mod:`.tag`).
5. ``<t>.deltacommit.inflight`` with the workload profile.
6. One task per work unit: updates/deletes → a new log file of the key's file group (named with
   the slice's base instant, or the pending compaction instant); inserts → new file groups
   (base files with Hudi's footer keys).
7. Partition metadata, then ``<t>.deltacommit`` (the commit point) with write stats that carry
   ``minEventTime``/``maxEventTime`` per file.

The stages live in their own modules: prepare (:mod:`.write_prepare`), tag
(:mod:`.write_tag`), route (:mod:`.write_route`), append (:mod:`.write_append`), insert
(:mod:`.write_insert`), with the shared work unit in :mod:`.write_units` and the single-writer
rule and undo in :mod:`.write_undo`; this module is the driver and the commit.

If anything fails before step 7 completes, every file the batch planned is removed and the
instant's timeline files are deleted: no pending instant and no stray file stays behind.
Tasks are plain functions over picklable arguments, so ``engine.map`` may run them in-process
or in Spark executors; a retried task that finds its own complete file from an earlier attempt
accepts it when the bytes are identical.
"""


from __future__ import annotations

import contextlib
import datetime as _dt
import posixpath
import time
from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import pyarrow as pa

from ..protocol import heartbeat
from .. import logformat as lf
from ..timeline import layout
from ..protocol import markers
from ..crash import crashpoint
from ..errors import InstantExistsError, InvalidInputError, InvalidTimelineError, TableExistsError
from ..file_group.fsview import PARTITION_METAFILE
from ..config.properties import (
    PAYLOAD_ALIASES,
    BACKUP_FILE,
    PROPERTIES_FILE,
    dumps as dump_properties,
    load_table_config,
)
from ..format import PROFILES, supported_versions_text
from ..storage import Storage, temp_owner
from ..table.hudi_table import HudiTable
from ..timeline.active import META_DIR, Action, State, Timeline, iter_write_stats
from ..timeline.commits import CommitMetadata, RuntimeStats, WriteStat
# the stages (and what callers import from here: this module stays the writer's public face)
from .append import complete_log_stat, encode_log_file
from .insert import BaseFileWriter, base_file_bytes, encode_base_file
from .prepare import batch_schemas, prepare_batch, read_input
from .route import plan_units
from .tag import tag_keys
from ..index import bucket as bucket_mod
from ..concurrency.conflicts import find_conflict
from ..protocol.rollback import pending_rollback_of
from ..concurrency import jvm_metadata
from ..concurrency.transaction import WriteConflictError, table_write_config, transaction
from ..concurrency.write_config import WriteConfig
from .undo import _abort, _single_writer_check, rollback_failed_writes, rollback_write
from .units import WriteOptions, WriteUnit, _event_range, _from_ipc, _ipc, _put_file

__all__ = [
    "BaseFileWriter", "LocalEngine", "WriteOptions", "WriteResult", "WriteUnit", "base_file_bytes", "encode_base_file",
    "encode_log_file", "init_table", "prepare_batch", "read_input", "rollback_failed_writes", "rollback_write",
    "write_batch", "write_unit",
    # for the Java simulators of the tests and the bench
    "_from_ipc", "_ipc",
]


class LocalEngine:
    """Runs tasks in the calling process, in order."""

    name = "local"

    def map(self, fn: Callable, items: Sequence) -> list:
        return [fn(x) for x in items]


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
    java_compaction: str | None = "off",
    partition_urlencode: bool = False,
) -> dict:
    """Create an empty MOR table of ``table_version`` 6 (Hudi 0.14/0.15, timeline layout 1), 8
    (Hudi 1.0) or 9 (Hudi 1.1; both layout 2: ``.hoodie/timeline/`` and its ``history/``, no
    metadata table); re-running with the same settings is a no-op. On 8/9 the payload names
    the merge mode: ``event-time-ordering`` → EVENT_TIME_ORDERING, ``overwrite-latest`` →
    COMMIT_TIME_ORDERING.
    ``exclusive_cleaner``: the table says only this product cleans it (no Java cleaner runs), so
    link mode ``auto`` may re-expose logs by symlink (java-coexistence §5.1; v6 only: v8/v9
    re-expose logs by copy).
    ``java_compaction``: recorded for the new table (``hoodie.etc.java.compaction``): ``"off"``
    (default: its Java writers, if any, run with their compaction off, so our execute may run) or
    ``"on"`` (Java executes the compactions); ``None`` records nothing — what a table Java created
    looks like (our execute refuses it until ``hudi-etc configure --java-compaction`` says). An
    existing table is left as it is (its setting is changed with ``configure``).
    ``partition_urlencode``: the table says ``hoodie.datasource.write.partitionpath.urlencode=true``
    — partition values stored escaped as Hudi's ``escapePathName`` does (``a:b`` in ``city=a%3Ab``),
    so values such as ``a:b``, ``a/b`` or ``%41`` are readable by Java; its Java writers then
    take the same setting (Java reads it from hoodie.properties). Fixed for the table's life."""
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
    profile = PROFILES.get(table_version)
    if profile is None:
        raise InvalidInputError(f"table version {table_version!r}: use {supported_versions_text()}")
    if java_compaction is not None:
        from ..protocol.etc_metadata import TABLE_SETTINGS

        java_compaction = TABLE_SETTINGS["java_compaction"].normalize(java_compaction)
    props = profile.new_table_properties(
        table_name=table_name,
        record_key=record_key,
        ordering_field=precombine_field,
        event_time_field=event_time_field,
        partition_field=partition_field,
        payload=payload_class,
        schema=None,
        urlencode=bool(partition_urlencode),
    )
    if exclusive_cleaner:
        from ..protocol.coexistence import K_EXCLUSIVE_CLEANER

        props[K_EXCLUSIVE_CLEANER] = "true"
    if storage.exists(PROPERTIES_FILE) or storage.exists(BACKUP_FILE):  # (the backup: a rewrite under way)
        cfg = load_table_config(storage)
        Timeline.load(storage, cfg)  # a half-upgraded table is refused (spec §8), also here
        same = (
            cfg.name == table_name
            and cfg.record_key_fields == (record_key,)
            and cfg.precombine_field == precombine_field
            and cfg.partition_fields == ((partition_field,) if partition_field else ())
            and cfg.payload_class == payload_class
            and cfg.event_time_field == event_time_field
            and cfg.profile is profile
            and cfg.partition_urlencode == bool(partition_urlencode)
        )
        if not same:
            raise TableExistsError(f"a different table already exists at {storage.base_uri}")
        return {"path": storage.base_uri, "table": table_name, "created": False}
    folders = [META_DIR, f"{META_DIR}/.temp", f"{META_DIR}/.schema",
               f"{META_DIR}/.aux/.bootstrap/.partitions", f"{META_DIR}/.aux/.bootstrap/.fileids",
               *profile.new_table_folders]
    for d in folders:
        storage.mkdirs(d)
    try:
        storage.create_if_absent(PROPERTIES_FILE, dump_properties(props, "Created by airflow-hudi-etc").encode())
    except InstantExistsError:  # a concurrent init won; accept it if it is the same table
        return init_table(storage, table_name=table_name, record_key=record_key,
                          precombine_field=precombine_field, event_time_field=event_time_field,
                          partition_field=partition_field, payload=payload, exclusive_cleaner=exclusive_cleaner,
                          table_version=table_version, java_compaction=java_compaction,
                          partition_urlencode=partition_urlencode)
    _record_created_settings(storage, props, java_compaction)
    if not partition_field:
        _ensure_partition_metadata(storage, "", "00000000000000")
    return {"path": storage.base_uri, "table": table_name, "created": True}


def _record_created_settings(storage: Storage, props: dict, java_compaction: str | None) -> None:
    """Our ``hoodie.etc.*`` keys of a new table (event-time field, exclusive cleaner) recorded
    beside hoodie.properties too: a Java ``CREATE TABLE ... LOCATION`` drops them from it
    (:mod:`.etc_settings`); and, unless None, whether Java compacts it."""
    from ..config.etc_settings import record
    from ..etc_keys import JAVA_COMPACTION

    record(storage, props, {JAVA_COMPACTION: java_compaction} if java_compaction is not None else {})


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


# ---------------------------------------------------------------------------- tasks
def write_unit(unit: WriteUnit) -> WriteStat:
    """Task body: write one file and return its write stat (with ``partitionPath``)."""
    t0 = time.monotonic()
    rows = _from_ipc(unit.rows)
    lo, hi = _event_range(rows, unit.event_time_field)
    is_log = unit.kind != "insert"
    data = encode_log_file(unit, rows) if is_log else encode_base_file(unit, rows)
    with temp_owner(unit.instant):  # a crashed task's temp file is known by its instant
        _put_file(unit.storage, unit.path, data)
    n = rows.num_rows
    fields = dict(
        fileId=unit.file_id,
        path=unit.path,
        partitionPath=unit.partition,
        numWrites=0 if unit.kind == "delete" else n,
        numDeletes=n if unit.kind == "delete" else 0,
        numUpdateWrites=n if unit.kind == "update" else 0,
        numInserts=n if unit.kind == "insert" else 0,
        file_size=len(data),
        minEventTime=lo,
        maxEventTime=hi,
    )
    ms = int((time.monotonic() - t0) * 1000)
    if not is_log:
        return WriteStat.for_base(prevCommit=None, runtimeStats=RuntimeStats(totalScanTime=0, totalCreateTime=ms, totalUpsertTime=0), **fields)
    stat = WriteStat.for_log(prevCommit=unit.base_instant, baseFile=unit.base_file, logFiles=[unit.file_name],
                             logVersion=unit.log_version,
                             runtimeStats=RuntimeStats(totalScanTime=0, totalCreateTime=0, totalUpsertTime=ms),
                             **fields)
    return complete_log_stat(unit, rows, stat)


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
    config = table_write_config(storage)
    why = "compaction plans changed"
    for _ in range(PLAN_CHANGE_RETRIES):
        try:
            with contextlib.ExitStack() as held:  # the attempt's heartbeat, released at its end
                return _write_batch_once(storage, batch, operation=operation, engine=engine, options=options,
                                         now=now, t_start=t_start, rolled_back=rolled_back, held=held, config=config)
        except _PlansChanged:
            continue
        except WriteConflictError as e:  # another writer committed on our file groups: write again
            why = str(e)
            continue
    raise InstantExistsError(f"conflict: {why} during each of {PLAN_CHANGE_RETRIES} attempts "
                             "to write this batch; nothing was written, try again")


def _write_batch_once(storage: Storage, batch: pa.Table, *, operation: str, engine, options: WriteOptions,
                      now, t_start: float, rolled_back: list[str], held: contextlib.ExitStack,
                      config: WriteConfig) -> WriteResult:
    table = HudiTable.load_writable(storage)
    prepared = prepare_batch(table, batch, operation)  # bad input is refused before anything is written
    # a bucket-index table: keys go to Java's buckets (None: another index; ``index_named``: the
    # writers' settings name it, else file groups named by buckets are refused)
    buckets, index_named = _bucket_index(table, config, prepared)
    if options.rollback_failed_writes and table.timeline.pending_writes:
        rolled_back += rollback_failed_writes(storage, table.timeline, lazy=config.lazy_failed_writes)
        table = table.reload()
    _, schema_json, data_schema_json = batch_schemas(table, prepared, operation)

    tl0 = table.timeline
    metadata_table_before = jvm_metadata.present(storage, table.config.raw)
    instant = layout.new_time(tl0, zone=table.timeline_zone, now=now)
    requested = layout.instant(tl0, instant, Action.DELTA_COMMIT, State.REQUESTED)
    hb = held.enter_context(heartbeat.hold(storage, instant, what="write"))  # before the instant is visible
    storage.create_if_absent(requested.path(), b"")
    crashpoint("write.after-requested")
    planned: list[WriteUnit] = []
    try:
        if not config.multi_writer:  # multi-writer tables: conflicts are found at commit, under the lock
            _single_writer_check(storage, instant)
        view = table.file_system_view()
        by_part: dict[str, list[str]] = defaultdict(list)
        for k, p in zip(prepared.column("__key").to_pylist(), prepared.column("__part").to_pylist()):
            by_part[p].append(k)
        heartbeat.remove_stale_temp_files(storage, [META_DIR, *sorted(by_part)], own=instant)  # crashed writers' leftovers
        new_fids = None
        if buckets is None:
            if not index_named:
                bucket_mod.refuse_unconfigured(s.file_id for s in view.latest_slices())
            located = tag_keys(table, view, by_part, engine)
        else:
            located, new_fids = buckets.locate(view.latest_slices(), prepared.column("__part").to_pylist(),
                                               prepared.column("__key").to_pylist())
        planned = plan_units(table, view, prepared, located, instant=instant, operation=operation,
                             schema_json=schema_json, options=options, new_fids=new_fids)
        # ---- inflight (workload profile), markers, then the files
        storage.create_if_absent(requested.path(State.INFLIGHT),
                                 layout.commit_data(tl0, _workload_profile(planned, operation)))
        crashpoint("write.after-inflight")
        _mark(storage, instant, planned, table.profile.logs_named_by_writing_instant)
        stats = engine.map(write_unit, planned)
        for part in sorted({u.partition for u in planned}):
            if part:
                _ensure_partition_metadata(storage, part, instant)
        p2s: dict[str, list[WriteStat]] = defaultdict(list)
        for st in stats:
            p2s[st.partitionPath].append(st)
        meta = CommitMetadata(partitionToWriteStats={p: tuple(s) for p, s in p2s.items()}, compacted=False,
                              extraMetadata={"schema": data_schema_json}, operationType=operation.upper())
        crashpoint("write.before-commit")
        touched = {(st.partitionPath or "", st.fileId) for st in stats}
        with transaction(storage, what=f"write {instant}", config=config) as txn:
            fresh = txn.timeline()
            if fresh.pending_compaction_times != table.timeline.pending_compaction_times:
                raise _PlansChanged()
            if not any(i.is_pending for i in fresh.get(instant)) or pending_rollback_of(storage, fresh, instant):
                # a Java writer of the eager failed-writes policy took this write for a failed one
                raise WriteConflictError(f"conflict: write {instant} was rolled back by another writer while it ran "
                                         "(Java's eager failed-writes policy; the LAZY policy with a shared lock "
                                         "leaves a write with a live heartbeat alone)")
            hb.check()  # still this writer's instant (no other process judged it dead meanwhile)
            txn.complete(tl0, instant, Action.DELTA_COMMIT, layout.commit_data(tl0, meta),
                         zone=table.timeline_zone, now=now,
                         conflict=lambda: find_conflict(HudiTable(storage, table.config, fresh), tl0, instant,
                                                        touched, by_bucket=buckets is not None))
    except BaseException:
        _abort(storage, instant, planned, tl0, metadata_table_before=metadata_table_before)
        raise
    markers.remove_markers(storage, instant)
    return WriteResult(
        instant=instant,
        operation=operation,
        inserts=sum(s.numInserts for s in stats),
        updates=sum(s.numUpdateWrites for s in stats),
        deletes=sum(s.numDeletes for s in stats),
        files_written=len(stats),
        bytes_written=sum(s.fileSizeInBytes for s in stats),
        rolled_back=tuple(rolled_back),
        seconds=round(time.monotonic() - t_start, 3),
    )


def _bucket_index(table: HudiTable, config: WriteConfig, prepared: pa.Table):
    """``(bucket index or None, whether the settings name an index)``: the table's bucket index
    (:mod:`..index.bucket`) from its recorded write settings (over any index keys of
    hoodie.properties), with every key's bucket checked computable. No index named: refused when
    the latest write's file groups are all named by buckets (its Java writers use the bucket
    index, and nothing says how many buckets)."""
    conf = {**bucket_mod.settings_of(table.config.raw), **config.conf}
    b = bucket_mod.bucket_index(conf, record_key_fields=table.config.record_key_fields,
                                table_version=table.config.version,
                                bucket_meta=lambda: table.storage.exists(bucket_mod.BUCKET_INDEX_META),
                                concurrency_mode=config.concurrency_mode)
    if b is not None:
        b.buckets(prepared.column("__key").to_pylist())  # a key whose bucket is not reproduced: refused
        return b, True
    named = bool((conf.get(bucket_mod.K_INDEX_TYPE) or "").strip())  # another index: as the writers say
    if not named:
        for inst in reversed(table.timeline.completed_writes):
            try:
                fids = [st.get("fileId") or "" for st in iter_write_stats(table.commit_metadata(inst))]
            except (InvalidTimelineError, FileNotFoundError):
                continue
            if fids:
                bucket_mod.refuse_unconfigured(fids)
                break
    return None, named


def _workload_profile(planned: list[WriteUnit], operation: str) -> CommitMetadata:
    """The inflight file's commit metadata: one stat per planned file (no path yet)."""
    return CommitMetadata(
        partitionToWriteStats={
            p: tuple(WriteStat.for_base(fileId=u.file_id if u.kind != "insert" else "", path=None, partitionPath=None,
                                        prevCommit=u.base_instant)
                     for u in planned if u.partition == p)
            for p in sorted({u.partition for u in planned})
        },
        compacted=False,
        extraMetadata={},
        operationType=operation.upper(),
    )


def _mark(storage: Storage, instant: str, planned: list[WriteUnit], logs_are_new_files: bool) -> None:
    """Java's DIRECT markers (hudi/protocol/markers.py), each before its file."""
    for u in planned:
        if u.kind == "insert":
            markers.mark_create(storage, instant, u.path)
        elif logs_are_new_files:  # as Java 1.x marks a log on versions 8/9; Hudi 1.2's rollback refuses an APPEND marker there
            markers.mark_create(storage, instant, u.path)
        else:
            markers.mark_append(storage, instant, u.partition, u.file_id,
                                lf.parse_log_file_name(u.file_name).write_token, u.base_instant)
