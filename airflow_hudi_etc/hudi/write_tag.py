"""Write stage: tag, the file group of each key of a batch (Hudi's bloom index and more).

First one task per base file of a latest slice in the batch's partitions: the footer's key
range and bloom filter, then the file's own keys. Then, for the keys no base file holds, one task
per latest slice with logs in their partitions: a key can live in logs only (issue 22 item 5),
and updating it anywhere else would start a second live copy of it."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Callable, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from . import bloom as bloom_mod
from . import logformat as lf
from .fsview import FileSystemView
from .merge import ReadFilter, queue_blocks
from .schema import RECORD_KEY
from .stats import LogScanner
from .storage import Storage
from .table import HudiTable, data_file_errors


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

