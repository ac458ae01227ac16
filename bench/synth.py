"""Hand-built synthetic tables for the planning (P2) and readiness (P3) benchmarks.

Built with the project's own helpers (schema, base-file, log-block and commit-metadata
writers) instead of ``write_batch``, so a table of 10,000 file groups takes seconds, not
hours. They are valid tables: ``HudiTable.load`` and the file-system view read them, every
file is named and framed as Hudi names and frames it, and every deltacommit lists its files
in write stats.
"""

from __future__ import annotations

import json
import os

import pyarrow as pa

from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.file_group.fsview import base_file_name
from airflow_hudi_etc.hudi.index.ordering_facts import STAT_KEY
from airflow_hudi_etc.hudi.config.schema import (
    RECORD_KEY,
    arrow_schema_from_avro,
    avro_schema_from_arrow,
    with_meta_fields,
)
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.timeline.active import Action, Instant, State
from airflow_hudi_etc.hudi.format import V6
from airflow_hudi_etc.hudi.timeline.commits import CommitMetadata, WriteStat, commit_bytes
from airflow_hudi_etc.hudi.write.writer import WriteOptions, _ensure_partition_metadata, base_file_bytes, init_table

from .data import DAY_MS, T0_MS

#: tiny bloom filters: the base files here hold one record each
_SMALL_BLOOM = WriteOptions(bloom_num_entries=16, bloom_max_entries=32)
_DATA_SCHEMA = pa.schema([("id", pa.string()), ("part", pa.string()), ("updated_at", pa.int64()),
                          ("event_time", pa.int64()), ("value", pa.float64())])


def _instant(i: int) -> str:
    # 2026-01-01 00:00:00.000 + i seconds, 17 digits
    s = i
    d, s = divmod(s, 86_400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"202601{1 + d:02d}{h:02d}{m:02d}{s:02d}000"


def _meta(p2s: dict, operation: str, schema: str, *, compacted: bool = False, extra: dict | None = None) -> CommitMetadata:
    return CommitMetadata(partitionToWriteStats={p: tuple(s) for p, s in p2s.items()}, compacted=compacted,
                          extraMetadata={**(extra or {}), "schema": schema}, operationType=operation)


def _commit(storage: Storage, inst: str, action: Action, meta: CommitMetadata, *, requested: bytes = b"") -> None:
    i = Instant(inst, action, State.COMPLETED)
    storage.create_if_absent(i.path(State.REQUESTED), requested)
    storage.create_if_absent(i.path(State.INFLIGHT), b"")
    storage.create_if_absent(i.path(State.COMPLETED), commit_bytes(meta, V6))


def build_planning_table(path: str, *, groups: int, logs_per_group: int = 4, partitions: int = 100,
                         event_time_stats: bool = True, records_per_log: int = 1) -> dict:
    """``groups`` file groups (one 1-record base file each) spread over ``partitions``
    partitions, and ``logs_per_group`` deltacommits each adding one log of ``records_per_log``
    records (one Avro data block) to every group: the base file's key, then new keys. Log ``v``
    (1-based) holds event times on day ``v`` (one second apart); with ``event_time_stats`` the
    deltacommits' write stats carry ``minEventTime``/``maxEventTime``, without them a planner
    has to scan the logs."""
    storage = Storage(path)
    init_table(storage, table_name="plan_bench", record_key="id", precombine_field="updated_at",
               event_time_field="event_time", partition_field="part")
    avro = avro_schema_from_arrow(_DATA_SCHEMA, "plan_bench")
    meta_avro = with_meta_fields(avro)
    schema_json = json.dumps(meta_avro, separators=(",", ":"))
    data_schema_json = json.dumps(avro, separators=(",", ":"))
    arrow_schema = arrow_schema_from_avro(meta_avro)
    partitions = max(1, min(partitions, groups))
    base_inst = _instant(0)
    parts = [f"p{k:03d}" for k in range(partitions)]
    for p in parts:
        os.makedirs(os.path.join(path, p), exist_ok=True)
        _ensure_partition_metadata(storage, p, base_inst)
    fids = [f"{g:08x}-0000-4000-8000-{g:012x}-0" for g in range(groups)]
    part_of = [parts[g % partitions] for g in range(groups)]
    stats = {p: [] for p in parts}
    for g, (fid, p) in enumerate(zip(fids, part_of)):
        name = base_file_name(fid, "0-1-0", base_inst)
        row = {"_hoodie_commit_time": base_inst, "_hoodie_commit_seqno": f"{base_inst}_0_{g}",
               RECORD_KEY: f"key{g:08d}", "_hoodie_partition_path": p, "_hoodie_file_name": name,
               "id": f"key{g:08d}", "part": p, "updated_at": 0, "event_time": T0_MS, "value": 1.0}
        data = base_file_bytes(pa.Table.from_pylist([row], schema=arrow_schema), schema_json, _SMALL_BLOOM)
        with open(os.path.join(path, p, name), "wb") as f:
            f.write(data)
        stats[p].append(WriteStat.for_base(fileId=fid, path=f"{p}/{name}", partitionPath=p, prevCommit=None,
                                           numWrites=1, numInserts=1, file_size=len(data),
                                           minEventTime=T0_MS if event_time_stats else None,
                                           maxEventTime=T0_MS if event_time_stats else None))
    _commit(storage, base_inst, Action.DELTA_COMMIT, _meta(stats, "UPSERT", data_schema_json))
    for v in range(1, logs_per_group + 1):
        inst = _instant(v * 60)
        et = T0_MS + v * DAY_MS
        stats = {p: [] for p in parts}
        for g, (fid, p) in enumerate(zip(fids, part_of)):
            name = lf.format_log_file_name(fid, base_inst, v, "0-1-0")
            recs = []
            for i in range(records_per_log):
                key = f"key{g:08d}" if i == 0 else f"key{g:08d}-{i:06d}"
                recs.append({"_hoodie_commit_time": inst, "_hoodie_commit_seqno": f"{inst}_{i}_{g}",
                             RECORD_KEY: key, "_hoodie_partition_path": p, "_hoodie_file_name": fid,
                             "id": key, "part": p, "updated_at": v, "event_time": et + 1000 * i, "value": float(v)})
            data = lf.encode_data_block(inst, schema_json, recs)
            with open(os.path.join(path, p, name), "wb") as f:
                f.write(data)
            n = records_per_log
            stats[p].append(WriteStat.for_log(fileId=fid, path=f"{p}/{name}", partitionPath=p, prevCommit=base_inst,
                                              numWrites=n, numUpdateWrites=1, numInserts=n - 1, file_size=len(data),
                                              minEventTime=et if event_time_stats else None,
                                              maxEventTime=et + 1000 * (n - 1) if event_time_stats else None,
                                              baseFile=base_file_name(fid, "0-1-0", base_inst), logFiles=[name],
                                              logVersion=v,
                                              # the ordering facts our writer records (not when Java-like)
                                              extra={STAT_KEY: {"data": n, "deletes": 0, "min": v, "max": v}}
                                              if event_time_stats else None))
        _commit(storage, inst, Action.DELTA_COMMIT, _meta(stats, "UPSERT", data_schema_json))
    return {"groups": groups, "logs": groups * logs_per_group, "partitions": partitions,
            "records_per_log": records_per_log}


def build_timeline_table(path: str, *, instants: int, compaction_every: int = 10) -> dict:
    """A table whose active timeline holds ``instants`` completed instants (three files each:
    requested, inflight, completed): deltacommits, and every ``compaction_every``-th one a
    completed event-time compaction whose commit carries a threshold. No pending instant."""
    storage = Storage(path)
    init_table(storage, table_name="tl_bench", record_key="id", precombine_field="updated_at",
               event_time_field="event_time")
    schema = json.dumps(avro_schema_from_arrow(_DATA_SCHEMA, "tl_bench"), separators=(",", ":"))
    meta_dir = os.path.join(path, ".hoodie")
    n_comp = 0
    for k in range(instants):
        inst = _instant(k)
        if k % compaction_every == compaction_every - 1:
            n_comp += 1
            th = T0_MS + k * 1000
            meta = _meta({}, "COMPACT", schema, compacted=True,
                         extra={"hoodie.etc.threshold.ms": str(th), "hoodie.etc.strategy": "event-time"})
            files = [(f"{inst}.compaction.requested", b""), (f"{inst}.compaction.inflight", b""),
                     (f"{inst}.commit", commit_bytes(meta, V6))]
        else:
            meta = _meta({}, "UPSERT", schema)
            files = [(f"{inst}.deltacommit.requested", b""), (f"{inst}.deltacommit.inflight", b""),
                     (f"{inst}.deltacommit", commit_bytes(meta, V6))]
        for name, data in files:  # plain writes: building 30,000 timeline files must be quick
            with open(os.path.join(meta_dir, name), "wb") as f:
                f.write(data)
    return {"instants": instants, "compactions": n_comp, "timeline_files": instants * 3}
