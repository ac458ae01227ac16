"""What the write stages share: the options of a write, the unit of work a task writes (one new
base file or one new log file, rows as Arrow IPC so that a task ships to a Spark executor), and
the write-once put a retried task may repeat."""

from __future__ import annotations

import io
import posixpath
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from ..crash import crashpoint
from ..errors import InstantExistsError
from ..config.schema import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, PARTITION_PATH, event_time_millis
from ..format import V6, FormatProfile
from ..storage import Storage


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


def _ipc(table: pa.Table) -> bytes:
    sink = io.BytesIO()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue()


def _from_ipc(data: bytes) -> pa.Table:
    return pa.ipc.open_stream(data).read_all()


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
    #: the table's format profile (how the log's write stat is completed)
    profile: FormatProfile = V6

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

