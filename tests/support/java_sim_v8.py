"""Java Hudi 1.0/1.1 (table versions 8 and 9) in the simulator: what its writers, rollbacks,
compactor and cleaner write (shared/hudi-format-v8-v9.md §2.3–§2.5, §3.1–§3.2, §5.1–§5.4, §6).

:class:`java_sim.JavaHudi` hands a version-8/9 table to :class:`JavaHudi1x` (it reads the version
from ``hoodie.properties``). Every timeline file goes to ``.hoodie/timeline/``, every time (requested
and completion alike) comes from the one monotonic rule (:func:`next_time_layout2`), and every
commit file is an Avro container named ``<r>_<c>.<action>`` written once:

* :meth:`JavaHudi1x.write` — a Spark datasource upsert/delete: ``<T>.deltacommit.requested`` (empty),
  ``<T>.deltacommit.inflight`` (Avro workload profile: one insert stat per partition with fileId ""
  and prevCommit "null", one per updated file group with its base instant), a log per touched file
  group named with T itself at version 1 (``.{fileId}_{T}.log.1_{token}``, one block with SCHEMA and
  INSTANT_TIME headers), base files for inserts, each file after its ``.marker.CREATE`` (what real
  Java 1.0/1.1 leaves for a log too; the markers go at the commit), then ``<T>_<D>.deltacommit`` with the stat values
  the v8 fixture shows (log: prevCommit T, baseFile "", logVersion 1, logOffset 0; insert: prevCommit
  "null", numInserts = numWrites). :meth:`start_write` stops before the commit file and returns a
  :class:`PendingWrite` to complete later: a non-blocking write requested before a compaction C that
  completes after it.
* :meth:`JavaHudi1x.failed_write_then_rollback` — a write that dies after its files, then the next
  writer's rollback the 1.x way: every file named with the failed instant deleted (plan with
  ``filesToBeDeleted``, ``logBlocksToBeDeleted`` an empty map), ``<r>_<c>.rollback``, the failed instant's
  requested/inflight files deleted. No command block.
* :meth:`JavaHudi1x.compact` — ``HoodieCompactor``: executes the first pending plan (with Java's plan
  schema: ``deltaFilePaths`` only, links and extra metadata ignored), or with ``schedule=True`` plans
  its own at a new C (latest slice of every file group not in a pending compaction, logs completed
  before C) and executes it; ``<C>_<c>.commit`` with ``prevBaseFile``.
* :meth:`JavaHudi1x.clean` — ``KEEP_LATEST_COMMITS`` over the completion-time slices: Java's
  ``CleanPlanner`` keeps each group's latest slice and its latest slice older than the earliest
  retained commit; slices a pending compaction needs are spared; plan version 2 with
  ``lastCompletedCommitTimestamp``; ``<t>_<c>.clean``.
* :func:`enable_metadata_table_v8` — the table config and ``.hoodie/metadata/`` (layout-2 timeline)
  a 1.x writer with ``hoodie.metadata.enable=true`` leaves.
* :func:`create_table` — a new version-8/9 table as a 1.x Spark writer creates it (no MDT).
"""

from __future__ import annotations

import json
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field

import pyarrow as pa

from airflow_hudi_etc.compaction.base_merge import write_base_table
from airflow_hudi_etc.hudi.timeline import avro_models as am
from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.timeline.commits import CommitMetadata, RuntimeStats, WriteStat, encode_avro_commit
from airflow_hudi_etc.hudi.file_group.fsview import base_file_name, parse_base_file_name
from airflow_hudi_etc.hudi.file_group.naming import log_file_name_v8
from airflow_hudi_etc.hudi.protocol.plan import CompactionPlan
from airflow_hudi_etc.hudi.config.properties import dumps, loads, new_table_properties_v8
from airflow_hudi_etc.hudi.config.schema import FILE_NAME, avro_schema_from_arrow, with_meta_fields
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable, SliceReadSpec
from airflow_hudi_etc.hudi.timeline.active import Action, Instant, State, Timeline, next_time_layout2
from airflow_hudi_etc.hudi.timeline.timeline_v2 import complete_instant, parse_layout2
from airflow_hudi_etc.hudi.write.writer import WriteUnit, _ensure_partition_metadata, _ipc, prepare_batch, write_unit
from java_sim import delete_marker_dir, mark, marked_files, reconcile_against_markers

#: the counters Java writes as 0 in every stat of the v8 fixture (the rest of the fields are null)
_ZERO = ("numWrites", "numDeletes", "numUpdateWrites", "totalWriteBytes", "totalWriteErrors", "totalLogRecords",
         "totalUpdatedRecordsCompacted", "numInserts", "totalLogBlocks", "totalCorruptLogBlock",
         "totalRollbackBlocks", "fileSizeInBytes", "totalLogFilesCompacted", "totalLogReadTimeMs",
         "totalLogSizeCompacted", "numUpdates")


def java_stat(**kw) -> WriteStat:
    """A ``HoodieWriteStat`` as Java 1.x fills it: the counters 0 unless given, the rest null."""
    return WriteStat(**{**dict.fromkeys(_ZERO, 0), **kw})


def _meta(p2s: dict, *, operation: str, schema: str | None, compacted: bool = False, extra=None) -> bytes:
    em = dict(extra or {})
    if schema is not None:
        em["schema"] = schema
    return encode_avro_commit(CommitMetadata({p: tuple(s) for p, s in p2s.items()}, compacted, em, operation, None))


def create_table(path, *, version: int, table_name: str, schema: pa.Schema, record_key: str = "key",
                 ordering_field: str = "ts", event_time_field: str = "event_time",
                 partition_field: str | None = "region", merge_mode: str = "EVENT_TIME_ORDERING") -> None:
    """A new table of version 8 (Hudi 1.0) or 9 (Hudi 1.1) as a Spark writer creates it, with the
    metadata table off (``hoodie.metadata.enable=false``, as the coexistence rules require)."""
    storage = Storage(str(path))
    avro = avro_schema_from_arrow(schema, table_name)
    props = new_table_properties_v8(version=version, table_name=table_name, record_key=record_key,
                                    ordering_field=ordering_field, event_time_field=event_time_field,
                                    partition_field=partition_field, schema=avro, merge_mode=merge_mode)
    for d in (".hoodie/timeline/history", ".hoodie/.temp", ".hoodie/.aux", ".hoodie/.schema"):
        storage.mkdirs(d)
    storage.create_if_absent(".hoodie/hoodie.properties", dumps(props, comment="Properties saved by Java").encode())


def _mdt_timeline(storage: Storage) -> Timeline | None:
    folder = ".hoodie/metadata/.hoodie/timeline"
    try:
        names = storage.list_entry_names(folder)
    except FileNotFoundError:
        return None
    return Timeline(parse_layout2(names, folder), names)


@dataclass
class PendingWrite:
    """A 1.x deltacommit whose files are written and whose commit file is not (yet)."""

    sim: "JavaHudi1x"
    instant: str
    operation: str
    schema: str
    stats: dict = field(default_factory=dict)
    paths: list = field(default_factory=list)
    completion: str | None = None

    def complete(self) -> str:
        """Write ``<T>_<D>.deltacommit`` with D a fresh time (> everything on the timeline)."""
        st = self.sim.storage
        d = self.sim.now()
        extra = {"_hoodie.spark.sql.writes.prepped": "true"} if self.operation.endswith("_PREPPED") else None
        complete_instant(st, ".hoodie/timeline", self.instant, Action.DELTA_COMMIT, d,
                         _meta(self.stats, operation=self.operation, schema=self.schema, extra=extra))
        self.completion = d
        delete_marker_dir(st, self.instant)  # as Java's commit does
        return d


class JavaHudi1x:
    """The Java 1.0/1.1 code paths (see the module docstring), put in front of ``java_sim.JavaHudi``
    (its clock-free helpers such as the write token) when that meets a version-8/9 table."""

    meta_dir = ".hoodie/timeline"

    # ------------------------------------------------------------------ clock
    def now(self) -> str:
        """A new requested or completion time: greater than every time on the data and metadata
        timelines (WAIT_TO_ADJUST_SKEW under the table lock)."""
        tl = Timeline.load(self.storage, HudiTable.load(self.storage).config)
        mdt = _mdt_timeline(self.storage)
        return next_time_layout2(tl, *([mdt] if mdt is not None else []))

    def _requested(self, t: str, action: Action, data: bytes) -> None:
        self.storage.create_if_absent(Instant(t, action, State.REQUESTED, None, self.meta_dir).path(), data)

    def _inflight(self, t: str, action: Action, data: bytes) -> None:
        p = Instant(t, action, State.INFLIGHT, None, self.meta_dir).path()
        if not self.storage.exists(p):
            self.storage.create_if_absent(p, data)

    # ------------------------------------------------------------------ writes
    def _live_keys(self, table: HudiTable) -> dict[tuple[str, str], str]:
        """(partition, key) → file id of the keys Java's index finds (merged latest slices)."""
        out = {}
        for s in table.file_system_view().latest_slices():
            spec = SliceReadSpec(s.partition, s.file_id, s.base_file.path if s.base_file else None,
                                 tuple(x.path for x in s.log_files))
            for k in table.read_slice(spec).column("_hoodie_record_key").to_pylist():
                out[(s.partition, k)] = s.file_id
        return out

    def start_write(self, batch: pa.Table, operation: str = "upsert", *, small_files: bool = False) -> PendingWrite:
        """Requested, inflight and the data files of a deltacommit; :meth:`PendingWrite.complete`
        commits it. ``small_files``: inserts go into a small file group of their partition (a base,
        no log, no pending compaction) with that group's updates, merged into a new base version
        at T (``java_sim.JavaHudi._merged_base_unit``; a MERGE marker), as real Java 1.0/1.1 do —
        the v6 path, which real Java 1.x was seen to take (tests/java: a killed write's
        ``.parquet.marker.MERGE``)."""
        table = HudiTable.load(self.storage)
        cfg = table.config
        prepared = prepare_batch(table, batch, operation)
        schema = table.avro_schema
        schema_json = json.dumps(with_meta_fields(schema), separators=(",", ":"))
        t = self.now()
        op_type = "UPSERT" if operation == "upsert" else "DELETE"
        self._requested(t, Action.DELTA_COMMIT, b"")
        located = self._live_keys(table)
        view = table.file_system_view()
        groups = defaultdict(list)
        for i, (k, p) in enumerate(zip(prepared.column("__key").to_pylist(), prepared.column("__part").to_pylist())):
            groups[(p, located.get((p, k)))].append(i)
        profile: dict[str, list] = defaultdict(list)
        units = self._small_file_units(table, prepared, groups, t, schema_json, small_files and operation == "upsert")
        for u in units:
            prev, n_upd, n_ins = self._merged[u.path]
            profile[u.partition].append(java_stat(fileId=u.file_id, prevCommit=prev, numInserts=n_ins,
                                                  numUpdateWrites=n_upd))
        for idx, ((part, fid), rows) in enumerate(sorted(groups.items(), key=lambda x: (x[0][0], x[0][1] or "")),
                                                  start=len(units)):
            sub = prepared.take(pa.array(rows)).drop_columns(["__part"])
            if fid is None:
                if operation != "upsert":
                    continue  # deleting an absent key: nothing to write
                profile[part].append(java_stat(fileId="", prevCommit="null", numInserts=len(rows)))
                new_fid = f"{uuid.uuid4()}-0"
                units.append(WriteUnit(self.storage, "insert", t, idx, part, new_fid,
                                       base_file_name(new_fid, self._token(idx), t), _ipc(sub), schema_json,
                                       cfg.precombine_field, cfg.event_time_field))
                continue
            g = view.group(part, fid)
            s = view.latest_slice_of(g, view.timeline) if g is not None else None
            profile[part].append(java_stat(fileId=fid, prevCommit=s.base_instant if s else "null",
                                           numUpdateWrites=len(rows) if operation == "upsert" else 0))
            units.append(WriteUnit(self.storage, "update" if operation == "upsert" else "delete", t, idx, part, fid,
                                   log_file_name_v8(fid, t, self._token(idx)), _ipc(sub), schema_json,
                                   cfg.precombine_field, cfg.event_time_field, t, None, 1))
        self._inflight(t, Action.DELTA_COMMIT, _meta(profile, operation=op_type, schema=None))
        pw = PendingWrite(self, t, op_type, json.dumps(schema, separators=(",", ":")))
        stats: dict[str, list] = defaultdict(list)
        for u in units:
            t0 = time.monotonic()
            merged = self._merged.get(u.path)
            mark(self.storage, t, u.path, "MERGE" if merged else "CREATE")  # 1.x: a CREATE marker per file, a log's too
            size = write_unit(u).fileSizeInBytes
            ms = int((time.monotonic() - t0) * 1000)
            n = _ipc_rows(u.rows)
            if merged:
                prev, n_upd, n_ins = merged
                st = java_stat(fileId=u.file_id, path=u.path, prevCommit=prev, numWrites=n, numInserts=n_ins,
                               numUpdateWrites=n_upd, totalWriteBytes=size, fileSizeInBytes=size,
                               partitionPath=u.partition, runtimeStats=RuntimeStats(0, ms, 0))
            elif u.kind == "insert":
                st = java_stat(fileId=u.file_id, path=u.path, prevCommit="null", numWrites=n, numInserts=n,
                               totalWriteBytes=size, fileSizeInBytes=size, partitionPath=u.partition,
                               runtimeStats=RuntimeStats(0, ms, 0))
            else:
                st = java_stat(fileId=u.file_id, path=u.path, prevCommit=t, partitionPath=u.partition,
                               numWrites=n if u.kind == "update" else 0, numUpdateWrites=n if u.kind == "update" else 0,
                               numDeletes=n if u.kind == "delete" else 0, totalWriteBytes=size, fileSizeInBytes=size,
                               logVersion=1, logOffset=0, baseFile="", logFiles=(u.file_name,),
                               runtimeStats=RuntimeStats(0, 0, ms))
            stats[u.partition].append(st)
            pw.paths.append(u.path)
        for part in sorted(stats):
            if part:
                _ensure_partition_metadata(self.storage, part, t)
        pw.stats = dict(stats)
        return pw

    def write(self, batch: pa.Table, operation: str = "upsert", *, commit: bool = True,
              small_files: bool = False) -> tuple[str, list[str]]:
        pw = self.start_write(batch, operation, small_files=small_files)
        if commit:
            pw.complete()
        return pw.instant, pw.paths

    def failed_write_then_rollback(self, batch: pa.Table, operation: str = "upsert") -> tuple[str, list[str]]:
        """A write that dies after its files, then the next writer's rollback of it (1.x: the
        files named with the failed instant are deleted; no command block). Returns the failed
        instant and the files deleted."""
        pw = self.start_write(batch, operation)
        self.rollback_failed(pw.instant)
        return pw.instant, pw.paths

    def rollback_failed(self, t: str) -> str:
        """``BaseRollbackActionExecutor`` on pending deltacommit ``t`` (v8+): ``r.rollback.requested``
        (plan: every file whose name-instant is t in ``filesToBeDeleted``), inflight, the deletes,
        ``<r>_<c>.rollback``, then t's requested/inflight files go. Like Java (``Found commits after
        time``; tests/java: Java 1.x compacts past its killed write) it refuses, changing nothing,
        while a commit newer than t completed and t has no heartbeat file (writers of the eager
        policy keep none)."""
        from java_sim import JavaRollbackError

        tl = HudiTable.load(self.storage).timeline
        if not self.storage.exists(f".hoodie/.heartbeat/{t}") and any(
                i.is_completed and i.timestamp > t and i.action in (Action.COMMIT, Action.DELTA_COMMIT,
                                                                   Action.REPLACE_COMMIT, Action.COMPACTION)
                for i in tl.instants):
            raise JavaRollbackError(f"Found commits after time :{t}, please rollback greater commits first")
        doomed: dict[str, list[str]] = defaultdict(list)
        for f in self.storage.walk_files("", skip_dirs=(".hoodie",)):
            name = f.path.rsplit("/", 1)[-1]
            part = f.path.rsplit("/", 1)[0] if "/" in f.path else ""
            b = parse_base_file_name(name)
            p = lf.parse_log_file_name(name)
            if (b is not None and b.instant == t) or (p is not None and p.base_instant == t):
                doomed[part].append(f.path)
        r = self.now()
        requests = [{**am.rollback_request(part, None, None, [self.storage.uri(x) for x in sorted(fs)]),
                     "logBlocksToBeDeleted": {}}  # v8+: files only, an empty map (what Java 1.x resumes)
                    for part, fs in sorted(doomed.items())]
        plan = am.rollback_plan((t, Action.DELTA_COMMIT.value), requests)
        self._requested(r, Action.ROLLBACK, am.write_avro_metadata(am.ROLLBACK_PLAN, plan))
        self._inflight(r, Action.ROLLBACK, b"")
        t0 = time.monotonic()
        for fs in doomed.values():
            for x in fs:
                self.storage.delete(x)
        meta = am.rollback_metadata(r, [t], {part: {"successDeleteFiles": [self.storage.uri(x) for x in sorted(fs)]}
                                             for part, fs in doomed.items()},
                                    [(t, Action.DELTA_COMMIT.value)], int((time.monotonic() - t0) * 1000))
        complete_instant(self.storage, self.meta_dir, r, Action.ROLLBACK, self.now(),
                         am.write_avro_metadata(am.ROLLBACK_METADATA, meta))
        delete_marker_dir(self.storage, t)
        for state in (State.INFLIGHT, State.REQUESTED):
            p = Instant(t, Action.DELTA_COMMIT, state, None, self.meta_dir).path()
            if self.storage.exists(p):
                self.storage.delete(p)
        return r

    # ------------------------------------------------------------------ compaction
    def read_plan(self, c: str) -> CompactionPlan:
        """A plan as Java reads it: ``.hoodie/timeline/<C>.compaction.requested`` (no ``.aux``)."""
        return CompactionPlan.from_bytes(c, self.storage.read_bytes(f"{self.meta_dir}/{c}.compaction.requested"))

    def pending_plan_groups(self, table: HudiTable) -> dict[tuple[str, str], str]:
        out = {}
        for i in table.timeline.pending_compactions:
            for op in self.read_plan(i.timestamp).operations:
                out[(op.partition, op.file_id)] = i.timestamp
        return out

    def schedule_compaction(self) -> str | None:
        """``BaseHoodieCompactionPlanGenerator``: the latest slice of every file group not in a pending
        compaction (this simulator writes no clustering or log compaction), restricted to log files
        whose instant completed before C; groups without such logs are left out."""
        table = HudiTable.load(self.storage)
        tl = table.timeline
        busy = self.pending_plan_groups(table)
        c = self.now()
        view = table.file_system_view()
        ops = []
        for key in sorted(view.groups):
            if key in busy or key in view.replaced_file_ids:
                continue
            s = view.latest_slice_of(view.groups[key], tl)
            if s is None:
                continue
            logs = [x for x in s.log_files if (tl.completion_time(x.base_instant) or "9" * 17) < c]
            if not logs:
                continue
            size = float(sum(max(x.size, 0) for x in logs))
            ops.append(am.compaction_operation(
                s.base_instant, s.file_id, s.partition, s.base_file.name if s.base_file else None,
                [x.name for x in logs], {"TOTAL_LOG_FILES": float(len(logs)), "TOTAL_LOG_FILES_SIZE": size,
                                         "TOTAL_IO_READ_MB": 0.0, "TOTAL_IO_WRITE_MB": 0.0, "TOTAL_IO_MB": 0.0}))
        if not ops:
            return None
        self._requested(c, Action.COMPACTION, am.write_avro_metadata(
            am.COMPACTION_PLAN, am.compaction_plan(ops, missing_schedule_partitions=[])))
        return c

    def compact(self, *, schedule: bool = False, instant: str | None = None, between=None) -> str | None:
        """``HoodieCompactor`` on the first pending plan (or plan ``instant``), links and extra
        metadata dropped by Java's plan schema; with none pending and ``schedule``, Java plans its
        own first. Returns C."""
        table = HudiTable.load(self.storage)
        pending = table.timeline.pending_compactions
        if instant is not None:
            assert instant in {i.timestamp for i in pending}, instant
            c = instant
        elif pending:
            c = pending[0].timestamp
        elif schedule:
            c = self.schedule_compaction()
            if c is None:
                return None
            table = HudiTable.load(self.storage)
        else:
            return None
        if any(i.timestamp == c and i.state is State.INFLIGHT for i in table.timeline.pending_compactions):
            self.rollback_inflight_compaction(c)
        plan = self.read_plan(c)
        self._inflight(c, Action.COMPACTION, b"")
        schema_json = json.dumps(table.avro_schema_with_meta, separators=(",", ":"))
        p2s = defaultdict(list)
        for idx, op in enumerate(plan.operations):
            t0 = time.monotonic()
            logs = tuple(op.path(n) for n in op.compact_logs)  # deltaFilePaths only
            spec = SliceReadSpec(op.partition, op.file_id, op.path(op.base_file) if op.base_file else None, logs)
            merged = table.read_slice(spec, skip_base_columns=(FILE_NAME,))
            name = base_file_name(op.file_id, self._token(idx), c)
            mark(self.storage, c, op.path(name), "CREATE")
            out = write_base_table(table, op.path(name), merged, name, schema_json, table.config.event_time_field)
            ms = int((time.monotonic() - t0) * 1000)
            log_size = sum(self.storage.size(p) for p in logs)
            p2s[op.partition].append(java_stat(
                fileId=op.file_id, path=op.path(name), prevCommit=op.base_instant, partitionPath=op.partition,
                numWrites=out.rows, totalWriteBytes=out.size, fileSizeInBytes=out.size, prevBaseFile=op.base_file,
                totalLogFilesCompacted=len(logs), totalLogSizeCompacted=log_size, totalLogReadTimeMs=ms,
                runtimeStats=RuntimeStats(ms, 0, ms)))
        if between is not None:
            between(c)
        reconcile_against_markers(self.storage, c, {st.path for sts in p2s.values() for st in sts})
        complete_instant(self.storage, self.meta_dir, c, Action.COMPACTION, self.now(),
                         _meta(p2s, operation="COMPACT", schema=json.dumps(table.avro_schema, separators=(",", ":")),
                               compacted=True))
        delete_marker_dir(self.storage, c)
        return c

    def rollback_inflight_compaction(self, c: str) -> list[str]:
        """``rollbackInflightCompaction`` the 1.x way (no heartbeat check): table version >= 8
        deletes every CREATE/MERGE-marked file (``createRollbackRequestForCreateAndMerge``), logs
        included; ``<r>_<d>.rollback``; C's markers and inflight file go (back to requested)."""
        doomed = marked_files(self.storage, c)
        r = self.now()
        by_part: dict[str, list[str]] = defaultdict(list)
        for f in doomed:
            by_part[f.rsplit("/", 1)[0] if "/" in f else ""].append(f)
        requests = [{**am.rollback_request(part, None, None, [self.storage.uri(x) for x in fs]),
                     "logBlocksToBeDeleted": None} for part, fs in sorted(by_part.items())]
        self._requested(r, Action.ROLLBACK, am.write_avro_metadata(
            am.ROLLBACK_PLAN, am.rollback_plan((c, Action.COMPACTION.value), requests)))
        self._inflight(r, Action.ROLLBACK, b"")
        for f in doomed:
            self.storage.delete(f)
        meta = am.rollback_metadata(r, [c], {part: {"successDeleteFiles": [self.storage.uri(x) for x in fs]}
                                             for part, fs in by_part.items()}, [(c, Action.COMPACTION.value)], 0)
        complete_instant(self.storage, self.meta_dir, r, Action.ROLLBACK, self.now(),
                         am.write_avro_metadata(am.ROLLBACK_METADATA, meta))
        delete_marker_dir(self.storage, c)
        self.storage.delete(Instant(c, Action.COMPACTION, State.INFLIGHT, None, self.meta_dir).path())
        return doomed

    # ------------------------------------------------------------------ clean
    def clean(self, retain_commits: int = 10) -> list[str]:
        """``CleanPlanner`` KEEP_LATEST_COMMITS on 1.x file slices; returns the deleted paths."""
        table = HudiTable.load(self.storage)
        tl = table.timeline
        commits = [i.timestamp for i in tl.completed_writes]
        if len(commits) <= retain_commits:
            return []
        earliest = commits[-retain_commits]
        earliest_action = next(i.action for i in tl.completed_writes if i.timestamp == earliest)
        plans = {i.timestamp: self.read_plan(i.timestamp) for i in tl.pending_compactions}
        in_plan = {(op.partition, op.file_id): (c, op.base_instant) for c, p in plans.items() for op in p.operations}
        view = table.file_system_view()
        doomed: dict[str, list[str]] = defaultdict(list)
        for key, g in view.groups.items():
            # Java's slices of this group: a pending compaction's key only for the plan's own groups
            slices: list[tuple[str, list[str]]] = []
            for inst in g.slice_instants():
                s = g.slice(inst)
                files = ([s.base_file.path] if s.base_file else []) + [x.path for x in s.log_files]
                if inst in tl.pending_compaction_times and in_plan.get(key, (None,))[0] != inst:
                    if slices:
                        slices[-1][1].extend(files)
                        continue
                slices.append((inst, files))
            slices.reverse()  # newest first, as Java lists them
            if not slices:
                continue
            last = slices[0][0]
            before = next((k for k, _ in slices if k < earliest), None)
            spared = in_plan.get(key, (None, None))[1]
            for k, files in slices:
                if k in (last, before, spared) or k in tl.pending_compaction_times or k >= earliest:
                    continue
                doomed[key[0]] += files
        if not doomed:
            return []
        t = self.now()
        plan = am.cleaner_plan((earliest, earliest_action.value), "KEEP_LATEST_COMMITS",
                               {p: [self.storage.uri(f) for f in fs] for p, fs in doomed.items()},
                               last_completed_commit_timestamp=commits[-1])
        plan_bytes = am.write_avro_metadata(am.CLEANER_PLAN, plan)
        self._requested(t, Action.CLEAN, plan_bytes)
        self._inflight(t, Action.CLEAN, plan_bytes)
        t0 = time.monotonic()
        for fs in doomed.values():
            for f in fs:
                self.storage.delete(f)
        meta = am.clean_metadata(t, earliest, {p: {"policy": "KEEP_LATEST_COMMITS",
                                                   "successDeleteFiles": [f.rsplit("/", 1)[-1] for f in fs]}
                                               for p, fs in doomed.items()},
                                 int((time.monotonic() - t0) * 1000), last_completed_commit_timestamp=commits[-1])
        complete_instant(self.storage, self.meta_dir, t, Action.CLEAN, self.now(),
                         am.write_avro_metadata(am.CLEAN_METADATA, meta))
        return [f for fs in doomed.values() for f in fs]


def _ipc_rows(data: bytes) -> int:
    return pa.ipc.open_stream(data).read_all().num_rows


def enable_metadata_table_v8(path, *, inflight: bool = False, folder: bool = True) -> None:
    """What a 1.x Spark writer with ``hoodie.metadata.enable=true`` leaves: ``files`` listed in
    ``hoodie.table.metadata.partitions`` and a metadata table at ``.hoodie/metadata/`` with its own
    layout-2 timeline (the initialising instant ``00000000000000000`` of the files partition) and
    an empty DELETE block initialising the ``files`` file group (spec §4, §6)."""
    storage = Storage(str(path))
    props = loads(storage.read_text(".hoodie/hoodie.properties"))
    props["hoodie.table.metadata.partitions" + (".inflight" if inflight else "")] = "files"
    storage.write_atomic(".hoodie/hoodie.properties", dumps(props, comment="Updated by Java").encode())
    if not folder:
        return
    name = props["hoodie.table.name"] + "_metadata"
    mdt = {"hoodie.table.name": name, "hoodie.table.type": "MERGE_ON_READ",
           "hoodie.table.version": props["hoodie.table.version"], "hoodie.timeline.layout.version": "2",
           "hoodie.timeline.path": "timeline", "hoodie.timeline.history.path": "history",
           "hoodie.table.base.file.format": "HFILE", "hoodie.populate.meta.fields": "false",
           "hoodie.record.merge.mode": "CUSTOM", "hoodie.table.recordkey.fields": "key",
           "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA"}
    storage.create_if_absent(".hoodie/metadata/.hoodie/hoodie.properties", dumps(mdt, comment="Properties saved").encode())
    tl = ".hoodie/metadata/.hoodie/timeline"
    init = "00000000000000000"
    storage.create_if_absent(f"{tl}/{init}.deltacommit.requested", b"")
    storage.create_if_absent(f"{tl}/{init}.deltacommit.inflight", b"")
    data_tl = Timeline.load(storage, HudiTable.load(storage).config)
    c = next_time_layout2(data_tl)
    storage.create_if_absent(f"{tl}/{init}_{c}.deltacommit", _meta({}, operation="UPSERT_PREPPED", schema=None))
    storage.mkdirs(f"{tl}/history")
    storage.create_if_absent(f".hoodie/metadata/files/.files-0000-0_{init}.log.1_0-0-0",
                             lf.encode_block(lf.BlockType.DELETE, [(lf.HeaderKey.INSTANT_TIME, init)], lf.encode_delete_records([])))
