"""Write stage: tag, the file group of each key of a batch (Hudi's bloom index and more).

First one task per base file of a latest slice in the batch's partitions: the footer's key
range and bloom filter, then the file's own keys. Then, for the keys no base file holds, one task
per latest slice with logs in their partitions: a key can live in logs only (below),
and updating it anywhere else would start a second live copy of it."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from ..logformat import avro_arrow
from ..logformat.parquet_data import read_parquet_bytes
from ..index import bloom as bloom_mod
from .. import logformat as lf
from ..file_group.fsview import FileSlice, FileSystemView
from ..file_group.merge import ReadFilter, queue_blocks
from ..config.schema import RECORD_KEY
from ..index.stats import LogScanner
from ..storage import Storage
from ..table.hudi_table import HudiTable, data_file_errors
from ..timeline.active import Action, iter_write_stats


def tag_keys(table: HudiTable, view: FileSystemView, by_part: Mapping[str, list[str]], engine) -> dict[tuple[str, str], str]:
    """``(partition, key) → file id`` of the keys of ``by_part`` (partition → keys) that the
    table holds; keys absent from the result are new."""
    tasks = [TagTask(table.storage, s.base_file.path, s.partition, s.file_id, tuple(by_part[s.partition]))
             for s in view.latest_slices() if s.base_file is not None and s.partition in by_part]
    located: dict[tuple[str, str], str] = {}
    for part, fid, found in engine.map(tag_task, tasks):
        for k in found:
            located[(part, k)] = fid
    # keys no base file holds may still live in a latest slice's logs only: look them up there
    unlocated = {p: [k for k in ks if (p, k) not in located] for p, ks in by_part.items()}
    for part, fid, found in engine.map(log_tag_task, _log_tag_tasks(table, view, unlocated)):
        for k in found:
            located.setdefault((part, k), fid)
    return located


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
    pending) re-inserted it (Java's compactor leaves this too), or an exact
    split's records after the threshold. Updating such a key anywhere else would start a second
    live copy of it. Logs whose write stats show they hold only keys of the slice's base file or
    its earlier logs (:func:`covered_logs`) are not read."""
    slices = [s for s in view.latest_slices() if s.log_files and unlocated.get(s.partition)]
    if not slices:
        return []
    covered = covered_logs(table, slices)
    committed = LogScanner.of(table).is_committed
    out = []
    for s in slices:
        paths = tuple(p for p in s.log_paths if p not in covered)
        if paths:
            out.append(LogTagTask(table.storage, s.partition, s.file_id, tuple(unlocated[s.partition]), paths,
                                  committed))
    return out


def covered_logs(table: HudiTable, slices: Iterable[FileSlice]) -> set[str]:
    """The logs of ``slices`` that cannot hold a key absent from their slice's base file and
    earlier logs: every write stat naming the log is a deltacommit's, inserted nothing into it
    (``numInserts`` 0: its keys were tagged, not new), and was written against this slice's base
    file — version 6: the stat's ``baseFile`` is that file (a log written into slice C while its
    plan was pending names the older base); where slices go by completion time (8/9): the
    deltacommit was requested after the base file's instant completed. A log no stat names (an
    archived deltacommit, a compaction's copy or split, a rollback's) is read."""
    by_path = {p: s for s in slices if s.base_file is not None for p in s.log_paths}
    if not by_path:
        return set()
    tl = table.timeline
    by_completion = table.profile.slices_by_completion_time
    since = min(by_path[p].base_instant for p in by_path)
    verdict: dict[str, bool] = {}
    for inst in tl.completed_writes:
        if inst.action is not Action.DELTA_COMMIT or not _later(inst.timestamp, since, or_same=True):
            continue
        for st in iter_write_stats(table.commit_metadata(inst)):
            s = by_path.get(st.get("path"))
            if s is None:
                continue
            if by_completion:
                done = tl.completion_time(s.base_instant)
                ok = done is not None and _later(inst.timestamp, done)
            else:
                ok = st.get("baseFile") == s.base_file.name
            verdict[st["path"]] = verdict.get(st["path"], True) and ok and not st.get("numInserts")
    return {p for p, ok in verdict.items() if ok}


def _later(a: str, b: str, *, or_same: bool = False) -> bool:
    """``a`` after ``b`` (instant times; a 14- and a 17-digit time compare on their seconds, and
    the same second counts as after only with ``or_same``: the doubtful side)."""
    if len(a) != len(b):
        a, b = a[:14], b[:14]
        return a >= b if or_same else a > b
    return a >= b if or_same else a > b


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
            keys = _avro_block_keys(b.content, b.schema_json)
        else:  # PARQUET_DATA (queue_blocks passes data and delete blocks only)
            keys = _parquet_block_keys(b.content)
        seen.update(k for k in keys if k in wanted)
    return (t.partition, t.file_id, [k for k in t.keys if k in seen])


def _avro_block_keys(content: bytes, schema_json: str) -> list:
    """Record keys of an AVRO_DATA block: column-wise (:mod:`.avro_arrow`, a schema cut after the
    key) for blocks of many records, else, or when that declines, record by record."""
    content = bytes(content)
    count = lf._avro_block_header(content)
    prefix = lf.key_prefix_schema(schema_json)
    if prefix is not None and count >= avro_arrow.MIN_RECORDS:
        try:
            return avro_arrow.decode_avro_content(content, count, prefix).column(RECORD_KEY).to_pylist()
        except (avro_arrow.Unsupported, avro_arrow.Mismatch):
            pass
    return lf.decode_avro_record_keys(content, schema_json)


def _parquet_block_keys(content: bytes) -> list:
    try:
        return read_parquet_bytes(bytes(content), columns=[RECORD_KEY]).column(0).to_pylist()
    except (pa.ArrowException, OSError, ValueError, KeyError):
        return lf.decode_parquet_content(content).column(RECORD_KEY).to_pylist()


def tag_task(t: TagTask) -> tuple[str, str, list[str]]:
    """Keys of ``t.keys`` present in the base file (range + bloom, then the file's own keys)."""
    st = t.storage
    with data_file_errors(t.base_path):  # damaged or gone: a typed error naming it (as a read gives)
        if st.local_paths:
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
        # a Python file object: no Arrow threads (read_parquet_bytes says why)
        present = set(pf.read(columns=[RECORD_KEY], use_threads=st.local_paths).column(0).to_pylist())
    return (t.partition, t.file_id, [k for k in cands if k in present])

