"""A Java Hudi 0.14.1 simulator: what its writers, rollbacks, compactor and cleaner write on a
table this product also maintains (shared/java-coexistence.md quotes the code paths).

A Java process cannot run here, so each function writes the files the quoted 0.14.1 code path
writes, with the naming and slice choices of that path (the block and file encodings are the
ones tests/hudi/test_logformat_bytes.py checks byte for byte against Java-written files):

* :meth:`JavaHudi.write` — a Spark datasource upsert/delete: ``HoodieAppendHandle`` appends a
  new log to the file group's latest slice *as Java's view sees it* (slice C while a compaction
  is pending: ``filterBaseFileAfterPendingCompaction``), version = max listed + 1 (no append on
  ``file:``, so a rollover), Spark write token ``partition-stage-attempt``; inserts go to new
  file groups (``CreateHandle``, ``{fileId}_{token}_{T}.parquet``); then ``T.deltacommit``.
* :meth:`JavaHudi.failed_write_then_rollback` — a write that dies after its files, then the next
  Java writer's eager rollback: a ``ROLLBACK_PREVIOUS_BLOCK`` command block in a new log of each
  touched slice, version max + 1 with the rollover token ``1-0-1``; the failed log stays.
* :meth:`JavaHudi.compact` — ``HoodieCompactor`` on the first pending plan, read with Java's plan
  schema (our ``linkOperations`` dropped): base + ``deltaFilePaths`` only, into
  ``{fileId}_{token}_{C}.parquet``; ``C.commit`` whose extra metadata is the schema alone.
* :meth:`JavaHudi.clean` — ``KEEP_LATEST_COMMITS``: every file slice but the latest of its group
  whose base instant is older than the earliest retained commit goes, logs included; slices a
  pending compaction needs are spared. It knows nothing of symlinks.
* :func:`enable_metadata_table` — a table config as Spark writers leave it (MDT on).

On a table of version 8 or 9 ``JavaHudi(path, seed)`` is a :class:`java_sim_v8.JavaHudi1x`: the
same methods, with what Java 1.0/1.1 writes (timeline layout 2, logs named with their own
instant, rollback by deletion); :func:`enable_metadata_table` likewise.
"""

from __future__ import annotations

import dataclasses
import json
import random
import uuid
from collections import defaultdict

import pyarrow as pa

from airflow_hudi_etc.compaction.base_merge import write_base_table
from airflow_hudi_etc.hudi.timeline import avro_models as am
from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.index.ordering_facts import STAT_KEY
from airflow_hudi_etc.hudi.file_group.fsview import base_file_name
from airflow_hudi_etc.hudi.protocol.plan import read_plan
from airflow_hudi_etc.hudi.config.properties import dumps, loads
from airflow_hudi_etc.hudi.protocol.rollback import rollback_with_instant
from airflow_hudi_etc.hudi.config.schema import FILE_NAME, with_meta_fields
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable, SliceReadSpec
from airflow_hudi_etc.hudi.timeline.active import Action, Instant, State, next_instant_time
from airflow_hudi_etc.hudi.format import V6
from airflow_hudi_etc.hudi.timeline.commits import CommitMetadata, WriteStat, commit_bytes
from airflow_hudi_etc.hudi.write.writer import WriteUnit, _ensure_partition_metadata, _ipc, prepare_batch, write_unit


def _commit(p2s, operation: str, schema: str | None = None, *, compacted: bool = False) -> CommitMetadata:
    """Commit metadata as Java 0.14 writes it: the schema (if any) in extra metadata."""
    return CommitMetadata(partitionToWriteStats={p: tuple(s) for p, s in p2s.items()}, compacted=compacted,
                          extraMetadata={} if schema is None else {"schema": schema}, operationType=operation)


def _table_version(storage: Storage) -> int:
    return int(loads(storage.read_text(".hoodie/hoodie.properties")).get("hoodie.table.version", "6"))


#: ``StorageSchemes.isAppendSupported`` (hc/common/fs/StorageSchemes.java): where Java appends to a log
APPEND_SCHEMES = ("hdfs", "viewfs", "maprfs", "afs", "igfs", "ofs", "jfs", "cfs", "dfs")


class JavaRollbackError(Exception):
    """What a Java rollback throws (``HoodieRollbackException``), with Java's message."""


class JavaHudi:
    """``append``: the table is on storage whose scheme Java appends on (HDFS...): writers and
    rollback command blocks go *into* the slice's latest log. ``incremental_view``:
    ``hoodie.filesystem.view.incr.timeline.sync.enable=true`` in a long-lived writer: a pending
    compaction it learns incrementally is an empty slice C (no listing). ``line``: the Java line
    whose marker-based rollback runs ("0.14", or "1.x" for a Hudi 1.x writer kept at version 6)."""

    def __new__(cls, path, seed: int = 0, **kw):
        if cls is JavaHudi and _table_version(Storage(str(path))) >= 8:
            from java_sim_v8 import JavaHudi1x

            return super().__new__(_JavaHudi1x(JavaHudi1x))
        return super().__new__(cls)

    def __init__(self, path, seed: int = 0, *, append: bool = False, incremental_view: bool = False,
                 line: str = "0.14"):
        self.storage = Storage(str(path))
        self.rng = random.Random(seed)
        self.stage = self.rng.randint(5, 40)
        self.version = _table_version(self.storage)
        self.append = append
        self.incremental_view = incremental_view
        self.line = line
        self._own_logs: dict[tuple[str, str, str], list[str]] = defaultdict(list)  # incr. view: what it wrote

    def _token(self, partition_id: int) -> str:
        self.stage += 1
        return f"{partition_id}-{self.stage}-{self.rng.randint(10, 9999)}"

    # ------------------------------------------------------------------ writes
    def _live_keys(self, table: HudiTable) -> dict[tuple[str, str], str]:
        """(partition, key) → file id: Java's index (bloom over the base files of the latest
        slices, merged with a pending compaction's slice) as the keys it finds."""
        out = {}
        for s in table.file_system_view().latest_slices():
            spec = SliceReadSpec(s.partition, s.file_id, s.base_file.path if s.base_file else None,
                                 tuple(x.path for x in s.log_files))
            t = table.read_slice(spec)
            for k in t.column("_hoodie_record_key").to_pylist():
                out[(s.partition, k)] = s.file_id
        return out

    def _target_slice(self, table: HudiTable, part: str, fid: str) -> tuple[str, str | None, int, str | None]:
        """(base instant, base file name, log version, log to append into or None) of the slice
        Java writes to: ``HoodieWriteHandle.createLogWriter`` takes the view's latest log of the
        slice (version and write token; none: version 1 with the task's token); where the path
        exists ``HoodieLogFormatWriter.getOutputStream`` appends (append schemes) or rolls over to
        the *listed* max version + 1."""
        pending = table.pending_compaction_groups()
        view = table.file_system_view()
        g = view.group(part, fid)
        s = view.latest_slice_of(g, view.timeline, merge_pending=True)
        base = s.base_file.name if s is not None and s.base_file is not None else None
        inst = pending.get((part, fid)) or s.base_instant
        listed = [x for x in view.all_log_files() if x.partition == part and x.file_id == fid and x.base_instant == inst]
        known = listed
        if self.incremental_view and inst in pending.values():  # learnt as an empty slice C
            own = set(self._own_logs[(part, fid, inst)])
            known = [x for x in listed if x.path in own]
        if not known:
            return inst, base, 1, None
        latest = max(known, key=lambda x: lf.log_file_sort_key(x.name))
        if self.append:
            return inst, base, latest.version, latest.path
        return inst, base, max(x.version for x in listed) + 1, None

    def _small_file_group(self, table: HudiTable, part: str, taken: set) -> tuple[str, object] | None:
        """A file group of ``part`` Java's ``UpsertPartitioner`` takes as a small file for inserts:
        its latest slice has a base file and no log, and no compaction is pending on it."""
        pending = table.pending_compaction_groups()
        for s in table.file_system_view().latest_slices():
            if (s.partition == part and s.base_file is not None and not s.log_files
                    and (part, s.file_id) not in pending and s.file_id not in taken):
                return s.file_id, s
        return None

    def _merged_base_unit(self, table: HudiTable, t: str, idx: int, part: str, s, sub: pa.Table, n_upd: int,
                          schema_json: str) -> WriteUnit:
        """Java's small-file path (``BaseSparkDeltaCommitActionExecutor.handleUpdate``: a small
        file group receiving inserts, no log): ``HoodieMergeHandle`` writes a new base version of
        the group at T holding its records with the updates and inserts merged in (the incoming
        record wins: the histories' ordering values rise). Carried-over records get T's commit
        time here (Java keeps theirs; nothing read here depends on it)."""
        spec = SliceReadSpec(s.partition, s.file_id, s.base_file.path, ())
        old = table.read_slice(spec)
        incoming = set(sub.column("__key").to_pylist())
        keep = [i for i, k in enumerate(old.column("_hoodie_record_key").to_pylist()) if k not in incoming]
        kept = old.take(pa.array(keep, pa.int64()))
        carried = pa.table({f.name: kept.column("_hoodie_record_key" if f.name == "__key" else f.name).cast(f.type)
                            for f in sub.schema})
        rows = pa.concat_tables([carried, sub])
        cfg = table.config
        name = base_file_name(s.file_id, self._token(idx), t)
        u = WriteUnit(self.storage, "insert", t, idx, part, s.file_id, name, _ipc(rows), schema_json,
                      cfg.precombine_field, cfg.event_time_field)
        self._merged[u.path] = (s.base_instant, n_upd, sub.num_rows - n_upd)
        return u

    def _small_file_units(self, table: HudiTable, prepared: pa.Table, groups: dict, t: str, schema_json: str,
                          on: bool) -> list[WriteUnit]:
        """Java's small-file routing (``UpsertPartitioner``), ``on`` or not: in each partition with
        inserts, a small file group (:meth:`_small_file_group`) takes them with its updates, merged
        into a new base version at T (:meth:`_merged_base_unit`). The routed rows leave ``groups``
        (``(partition, file id or None)`` → row indexes of ``prepared``); ``self._merged`` maps each
        such unit's path to (the slice before, updates, inserts)."""
        self._merged = {}
        units: list[WriteUnit] = []
        if not on:
            return units
        taken: set = set()
        for part in sorted({p for p, f in groups if f is None}):
            found = self._small_file_group(table, part, taken)
            if found is None:
                continue
            fid, s = found
            taken.add(fid)
            upd, ins = groups.pop((part, fid), []), groups.pop((part, None))
            sub = prepared.take(pa.array(upd + ins)).drop_columns(["__part"])
            units.append(self._merged_base_unit(table, t, len(units), part, s, sub, len(upd), schema_json))
        return units

    def write(self, batch: pa.Table, operation: str = "upsert", *, commit: bool = True,
              small_files: bool = False) -> tuple[str, list[str]]:
        """``small_files``: inserts go into a small file group of their partition as Java's
        ``UpsertPartitioner`` routes them (:meth:`_merged_base_unit`), with that group's updates."""
        table = HudiTable.load(self.storage)
        cfg = table.config
        prepared = prepare_batch(table, batch, operation)
        schema = table.avro_schema
        schema_json = json.dumps(with_meta_fields(schema), separators=(",", ":"))
        t = next_instant_time(table.timeline)
        req = Instant(t, Action.DELTA_COMMIT, State.REQUESTED)
        self.storage.create_if_absent(req.path(), b"")
        self.storage.create_if_absent(req.path(State.INFLIGHT),
                                      commit_bytes(_commit({}, operation.upper()), V6))
        located = self._live_keys(table)
        groups = defaultdict(list)
        for i, (k, p) in enumerate(zip(prepared.column("__key").to_pylist(), prepared.column("__part").to_pylist())):
            groups[(p, located.get((p, k)))].append(i)
        units = self._small_file_units(table, prepared, groups, t, schema_json, small_files and operation == "upsert")
        for idx, ((part, fid), rows) in enumerate(sorted(groups.items(), key=lambda x: (x[0][0], x[0][1] or ""))):
            sub = prepared.take(pa.array(rows)).drop_columns(["__part"])
            if fid is None:
                if operation != "upsert":
                    continue
                new_fid = f"{uuid.uuid4()}-0"
                name = base_file_name(new_fid, self._token(idx), t)
                units.append(WriteUnit(self.storage, "insert", t, idx, part, new_fid, name, _ipc(sub), schema_json,
                                       cfg.precombine_field, cfg.event_time_field))
                continue
            inst, base, v, into = self._target_slice(table, part, fid)
            name = into.rsplit("/", 1)[-1] if into else lf.format_log_file_name(fid, inst, v, self._token(idx))
            units.append(WriteUnit(self.storage, "update" if operation == "upsert" else "delete", t, idx, part, fid,
                                   name, _ipc(sub), schema_json, cfg.precombine_field, cfg.event_time_field, inst,
                                   base, v))
            self._own_logs[(part, fid, inst)].append(units[-1].path)
        # our writer's ordering facts: no Java writer records them
        stats = [dataclasses.replace(st, extra={k: v for k, v in st.extra.items() if k != STAT_KEY})
                 for st in map(self._write_unit, units)]
        for i, st in enumerate(stats):  # a merged base: the slice before, its updates and inserts
            if st.path in self._merged:
                prev, n_upd, n_ins = self._merged[st.path]
                stats[i] = dataclasses.replace(st, prevCommit=prev, numUpdateWrites=n_upd, numInserts=n_ins)
        for part in sorted({u.partition for u in units}):
            if part:
                _ensure_partition_metadata(self.storage, part, t)
        if commit:
            p2s = defaultdict(list)
            for st in stats:
                p2s[st.partitionPath].append(st)
            meta = _commit(p2s, operation.upper(), json.dumps(schema, separators=(",", ":")))
            self.storage.create_if_absent(req.path(State.COMPLETED), commit_bytes(meta, V6))
        return t, [u.path for u in units]

    def _write_unit(self, u: WriteUnit) -> WriteStat:
        if u.kind == "insert" or not self.storage.exists(u.path):
            return write_unit(u)
        # fs.append: the blocks go at the end of the existing log (the same name, the same token)
        from airflow_hudi_etc.hudi.write.writer import _from_ipc, encode_log_file

        data = encode_log_file(u, _from_ipc(u.rows))
        append_bytes(self.storage, u.path, data)
        return WriteStat.for_log(fileId=u.file_id, path=u.path, partitionPath=u.partition, prevCommit=u.base_instant,
                                 numWrites=0 if u.kind == "delete" else _from_ipc(u.rows).num_rows,
                                 file_size=self.storage.size(u.path), baseFile=u.base_file, logFiles=[u.file_name],
                                 logVersion=u.log_version)

    def failed_write_then_rollback(self, batch: pa.Table, operation: str = "upsert") -> tuple[str, list[str]]:
        """A write that dies after its files, then the next Java writer's eager rollback of it
        (MarkerBasedRollbackStrategy: CREATE-marked base files deleted, a command block for each
        APPEND-marked log)."""
        t, paths = self.write(batch, operation, commit=False)
        logs = [p for p in paths if lf.parse_log_file_name(p.rsplit("/", 1)[-1]) is not None]
        blocks: list[str] = []

        def command_blocks():
            table = HudiTable.load(self.storage)
            r = next(i.timestamp for i in table.timeline.instants if i.action is Action.ROLLBACK and i.is_pending)
            for rel in logs:
                part, name = (rel.rsplit("/", 1) if "/" in rel else ("", rel))
                p = lf.parse_log_file_name(name)
                slice_logs = [x for x in table.file_system_view().all_log_files()
                              if x.partition == part and x.file_id == p.file_id and x.base_instant == p.base_instant]
                if self.append:  # BaseRollbackHelper: the writer without a version appends to the latest log
                    dst = max(slice_logs, key=lambda x: lf.log_file_sort_key(x.name)).path
                    append_bytes(self.storage, dst, lf.encode_rollback_block(r, t))
                else:
                    nm = lf.format_log_file_name(p.file_id, p.base_instant,
                                                 max(x.version for x in slice_logs) + 1, "1-0-1")
                    dst = f"{part}/{nm}" if part else nm
                    self.storage.create_if_absent(dst, lf.encode_rollback_block(r, t))
                blocks.append(dst)

        created: dict[str, list[str]] = defaultdict(list)  # CREATE markers: the new base files go
        for rel in paths:
            if rel not in logs:
                created[rel.rsplit("/", 1)[0] if "/" in rel else ""].append(rel)
        rollback_with_instant(self.storage, instant=t, action=Action.DELTA_COMMIT, files=created,
                              before_complete=command_blocks)
        for state in (State.INFLIGHT, State.REQUESTED):
            self.storage.delete(Instant(t, Action.DELTA_COMMIT, state).path())
        return t, blocks

    # ------------------------------------------------------------------ table services
    def rollback_inflight_compaction(self, c: str) -> list[str]:
        """``HoodieTable.rollbackInflightCompaction`` (no heartbeat check): a marker-based rollback
        of C (``MarkerBasedRollbackStrategy.getRollbackRequests``: every CREATE/MERGE-marked file
        deleted; a Hudi 1.x writer on a version-6 table throws on a CREATE/MERGE marker naming a
        log file), C's markers gone, then ``revertInstantFromInflightToRequested``. Returns the
        deleted files."""
        doomed = marked_files(self.storage, c)
        if self.line != "0.14":
            logs = [f for f in doomed if lf.parse_log_file_name(f.rsplit("/", 1)[-1]) is not None]
            if logs:
                raise JavaRollbackError(f"Log files should have only APPEND as IOTypes {self.storage.uri(logs[0])}")
        files: dict[str, list[str]] = defaultdict(list)
        for f in doomed:
            files[f.rsplit("/", 1)[0] if "/" in f else ""].append(f)
        rollback_with_instant(self.storage, instant=c, action=Action.COMPACTION, files=files)
        delete_marker_dir(self.storage, c)
        self.storage.delete(Instant(c, Action.COMPACTION, State.INFLIGHT).path())
        return doomed

    def compact(self, *, between=None) -> str | None:
        """``SparkRDDTableServiceClient.compact`` on the first pending plan: an inflight one is
        rolled back first (:meth:`rollback_inflight_compaction`); then ``HoodieCompactor`` (links
        dropped by Java's plan schema: base + ``deltaFilePaths`` only), each new base file after its
        CREATE marker; then ``reconcileAgainstMarkers`` deletes every CREATE/MERGE-marked file of C
        not in its write stats; ``C.commit`` (extra metadata: the schema alone); the markers go.
        ``between(c)`` runs after the base files are written, before the reconcile (a concurrent
        process)."""
        table = HudiTable.load(self.storage)
        pending = table.timeline.pending_compactions
        if not pending:
            return None
        c = pending[0].timestamp
        if pending[0].state is State.INFLIGHT:
            self.rollback_inflight_compaction(c)
        plan = read_plan(self.storage, c)
        infl = Instant(c, Action.COMPACTION, State.INFLIGHT)
        self.storage.create_if_absent(infl.path(), b"")
        schema_json = json.dumps(table.avro_schema_with_meta, separators=(",", ":"))
        p2s = defaultdict(list)
        for idx, op in enumerate(plan.operations):
            spec = SliceReadSpec(op.partition, op.file_id, op.path(op.base_file) if op.base_file else None,
                                 tuple(op.path(n) for n in op.compact_logs))  # deltaFilePaths only
            merged = table.read_slice(spec, skip_base_columns=(FILE_NAME,))
            name = base_file_name(op.file_id, self._token(idx), c)
            mark(self.storage, c, op.path(name), "CREATE")
            out = write_base_table(table, op.path(name), merged, name, schema_json, table.config.event_time_field)
            p2s[op.partition].append(WriteStat.for_base(
                fileId=op.file_id, path=op.path(name), partitionPath=op.partition, prevCommit=op.base_instant,
                numWrites=out.rows, file_size=out.size, totalLogFilesCompacted=len(op.compact_logs)))
        if between is not None:
            between(c)
        reconcile_against_markers(self.storage, c, {st.path for sts in p2s.values() for st in sts})
        meta = _commit(p2s, "COMPACT", json.dumps(table.avro_schema, separators=(",", ":")), compacted=True)
        self.storage.create_if_absent(infl.path(State.COMPLETED), commit_bytes(meta, V6))
        delete_marker_dir(self.storage, c)
        return c

    def clean(self, retain_commits: int = 10) -> list[str]:
        """KEEP_LATEST_COMMITS (``CleanPlanner.getFilesToCleanKeepingLatestCommits``): per file
        group, the latest slice and the latest slice older than the earliest retained commit
        (``lastVersionBeforeEarliestCommitToRetain``) stay; every other slice older than that
        commit goes, logs included; slices a pending compaction needs are spared, and so is a
        slice one of whose files a completed savepoint lists (``isFileSliceExistInSavepointedFiles``)."""
        table = HudiTable.load(self.storage)
        tl = table.timeline
        commits = [i.timestamp for i in tl.completed_writes]
        if len(commits) <= retain_commits:
            return []
        earliest = commits[-retain_commits]
        pending = table.pending_compaction_groups()
        spared = set()
        for (part, fid), c in pending.items():
            for op in read_plan(self.storage, c).operations:
                if (op.partition, op.file_id) == (part, fid):
                    spared.add((part, fid, op.base_instant))
        view = table.file_system_view()
        savepointed = savepointed_files(self.storage, tl)
        doomed: dict[str, list[str]] = defaultdict(list)
        for (part, fid), g in view.groups.items():
            insts = [i for i in g.slice_instants() if tl.is_committed(i) or i in tl.pending_compaction_times]
            before = max((i for i in insts if i < earliest), default=None)
            for inst in insts[:-1]:  # every slice but the latest
                if inst >= earliest or inst == before or (part, fid, inst) in spared \
                        or inst in tl.pending_compaction_times:
                    continue
                s = g.slice(inst)
                files = ([s.base_file.path] if s.base_file else []) + [x.path for x in s.log_files]
                if any(f.rpartition("/")[2] in savepointed for f in files):
                    continue
                doomed[part] += files
        if not doomed:
            return []
        c = next_instant_time(tl)
        plan = am.cleaner_plan((earliest, "deltacommit"), "KEEP_LATEST_COMMITS",
                               {p: [self.storage.uri(f) for f in fs] for p, fs in doomed.items()},
                               last_completed_commit_timestamp=commits[-1])
        self.storage.create_if_absent(Instant(c, Action.CLEAN, State.REQUESTED).path(),
                                      am.write_avro_metadata(am.CLEANER_PLAN, plan))
        from airflow_hudi_etc.compaction.clean import _execute

        import time

        _execute(self.storage, table, c, plan, time.monotonic(), resumed=False)
        return [f for fs in doomed.values() for f in fs]


def savepointed_files(storage: Storage, tl) -> set[str]:
    """File names every completed savepoint lists (``CleanPlanner.getSavepointedDataFiles``)."""
    out: set[str] = set()
    for i in tl.instants:
        if i.action is Action.SAVEPOINT and i.is_completed:
            rec = am.read_avro_metadata(storage.read_bytes(i.path()), am.SAVEPOINT_METADATA)
            out.update(n for pm in rec["partitionMetadata"].values() for n in pm["savepointDataFile"])
    return out


def append_bytes(storage: Storage, rel: str, data: bytes) -> None:
    """``fs.append``: ``data`` at the end of an existing file (same name)."""
    storage.write_atomic(rel, storage.read_bytes(rel) + data)


def mark(storage: Storage, instant: str, rel: str, kind: str) -> None:
    """A DIRECT-layout marker ``.hoodie/.temp/<instant>/<partition>/<name>.marker.<kind>``."""
    storage.create_if_absent(f".hoodie/.temp/{instant}/{rel}.marker.{kind}", b"")


def marked_files(storage: Storage, c: str) -> list[str]:
    """``DirectWriteMarkers.createdAndMergedDataPaths``: the files C's CREATE/MERGE markers name."""
    root = f".hoodie/.temp/{c}/"
    out = []
    for f in storage.walk_files(root.rstrip("/"), skip_dirs=()):
        inner, sep, kind = f.path[len(root):].rpartition(".marker.")
        if sep and kind in ("CREATE", "MERGE"):
            out.append(inner)
    return sorted(out)


def reconcile_against_markers(storage: Storage, c: str, valid: set[str]) -> list[str]:
    """``HoodieTable.reconcileAgainstMarkers``: every CREATE/MERGE-marked file of C that is not in
    the commit's write stats is deleted (a task attempt's leftovers, to Java)."""
    gone = [f for f in marked_files(storage, c) if f not in valid and storage.delete(f)]
    return gone


def delete_marker_dir(storage: Storage, instant: str) -> None:
    """``WriteMarkers.quietDeleteMarkerDir``."""
    for f in list(storage.walk_files(f".hoodie/.temp/{instant}", skip_dirs=())):
        storage.delete(f.path)


_CLASSES: dict = {}


def _JavaHudi1x(mixin):
    """JavaHudi with the 1.x code paths of ``mixin`` in front (one class, made once)."""
    if mixin not in _CLASSES:
        _CLASSES[mixin] = type("JavaHudi1x", (mixin, JavaHudi), {})
    return _CLASSES[mixin]


def enable_metadata_table(path, *, inflight: bool = False, folder: bool = True) -> None:
    """The table config a Spark writer with ``hoodie.metadata.enable=true`` (its default) leaves:
    ``hoodie.table.metadata.partitions=files`` and a ``.hoodie/metadata`` table."""
    storage = Storage(str(path))
    if _table_version(storage) >= 8:
        from java_sim_v8 import enable_metadata_table_v8

        return enable_metadata_table_v8(path, inflight=inflight, folder=folder)
    props = loads(storage.read_text(".hoodie/hoodie.properties"))
    props["hoodie.table.metadata.partitions" + (".inflight" if inflight else "")] = "files"
    storage.write_atomic(".hoodie/hoodie.properties", dumps(props, comment="Updated by Java").encode())
    if folder:
        storage.create_if_absent(".hoodie/metadata/.hoodie/hoodie.properties", b"hoodie.table.name=mdt\n")
        storage.create_if_absent(".hoodie/metadata/files/.files-0000-0_00000000000000010.log.1_0-0-0", b"#HUDI#")
