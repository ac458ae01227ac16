"""A loaded table: storage + validated config + timeline, and the merged reads over it.

>>> # doctest-style sketch (see tests for runnable versions)
>>> # t = HudiTable.load("/data/trips")
>>> # t.read()                        # snapshot, meta columns included
>>> # t.read(read_optimized=True)     # base files only
>>> # t.read(as_of="20250101000000000")
>>> # t.read_incremental(start="20250101000000000")
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Callable, Iterable, Iterator, Mapping

import pyarrow as pa
import pyarrow.parquet as pq

from .. import etc_keys
from ..errors import CorruptDataFileError, InvalidInputError, InvalidTimelineError, MissingDataFileError
from ..file_group.fsview import FileSlice, FileSystemView
from ..logformat.parquet_data import open_parquet_file
from ..file_group.merge import BlockDecoder, FoldedLogs, ReadFilter, ScanStats, fold_blocks, merge_slice, queue_blocks
from ..config.properties import TableConfig, load_table_config
from ..format import FormatProfile
from ..config.schema import COMMIT_TIME, arrow_schema_from_avro, conform, meta_arrow_schema, with_meta_fields
from ..storage import Storage
from ..timeline.instant import read_listed
from ..timeline.active import (
    INSTANT_FORMAT,
    Action,
    Instant,
    State,
    Timeline,
    format_instant,
    iter_write_stats,
)
from ..timeline.commits import load_commit


@contextlib.contextmanager
def data_file_errors(rel: str):
    """A data file that is gone or not Parquet is a typed error naming it (not an OSError or
    an ArrowInvalid from deep inside pyarrow)."""
    try:
        yield
    except FileNotFoundError:
        raise MissingDataFileError(f"{rel} is missing (deleted, or a symlink whose target is gone)") from None
    except (pa.ArrowInvalid, OSError) as e:
        if isinstance(e, PermissionError):
            raise
        raise CorruptDataFileError(f"{rel} is not readable: {e}") from None


@dataclass(frozen=True)
class SliceReadSpec:
    """Everything a task needs to merge one file slice (picklable, shipped to Spark)."""

    partition: str
    file_id: str
    base_path: str | None
    log_paths: tuple[str, ...]


class HudiTable:
    """Read access to one MOR table (versions 6, 8, 9). Cheap to create; reload to refresh."""

    def __init__(self, storage: Storage, config: TableConfig, timeline: Timeline):
        self.storage = storage
        self.config = config
        self.timeline = timeline
        #: the files of every partition ({partition: {file name: size}}) when they come from
        #: another source than listing storage (the metadata table's listing): see file_system_view
        self.listed: Mapping[str, Mapping[str, int]] | None = None

    @classmethod
    def load(cls, path: str | Storage, storage_options: Mapping[str, Any] | None = None) -> "HudiTable":
        storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
        config = load_table_config(storage)
        return cls(storage, config, Timeline.load(storage, config))

    @classmethod
    def load_writable(cls, path: str | Storage, storage_options: Mapping[str, Any] | None = None) -> "HudiTable":
        """:meth:`load`, then the Java coexistence checks every mutating command makes first
        (metadata table, timeline zone: :func:`~airflow_hudi_etc.hudi.protocol.coexistence.check_writable`)."""
        from ..protocol.coexistence import check_writable

        table = cls.load(path, storage_options)
        check_writable(table.storage, table.config)
        return table

    @property
    def profile(self) -> FormatProfile:
        """The format profile of the table's version (:attr:`TableConfig.profile`)."""
        return self.config.profile

    @property
    def timeline_zone(self):
        """The zone new instants are made in (a typed error for a zone we cannot know)."""
        from ..protocol.coexistence import timeline_zone

        return timeline_zone(self.config)

    def reload(self) -> "HudiTable":
        config = load_table_config(self.storage)
        return HudiTable(self.storage, config, Timeline.load(self.storage, config))

    # ------------------------------------------------------------ timeline contents
    def instant_bytes(self, instant: Instant, state: State | None = None) -> bytes:
        """A timeline file's bytes (:class:`TimelineChangedError` when it left the timeline since the listing)."""
        return read_listed(self.storage, instant.path(state), self.timeline)

    def commit_metadata(self, instant: Instant | str) -> dict:
        if isinstance(instant, str):
            matches = [i for i in self.timeline.get(instant) if i.is_completed]
            if not matches:
                raise InvalidTimelineError(f"no completed instant {instant}")
            instant = matches[0]
        return load_commit(self.instant_bytes(instant, State.COMPLETED), self.profile, str(instant))

    @cached_property
    def avro_schema(self) -> dict:
        """Latest writer schema without meta fields (commit metadata → create schema → base file)."""
        for inst in reversed(self.timeline.completed_writes):
            try:
                s = self.commit_metadata(inst).get("extraMetadata", {}).get("schema")
            except InvalidTimelineError:
                continue
            if s:
                return json.loads(s)
        if self.config.create_schema:
            return self.config.create_schema
        view = self.file_system_view()
        for s in view.latest_slices():
            if s.base_file is not None:
                md = pq.read_metadata(self.storage.open(s.base_file.path)).metadata or {}
                if b"parquet.avro.schema" in md:
                    return json.loads(md[b"parquet.avro.schema"])
        raise InvalidTimelineError("the table has no schema yet (no commit, no create schema)")

    @property
    def arrow_schema(self) -> pa.Schema:
        """Read schema: meta columns then data columns."""
        data = arrow_schema_from_avro(self.avro_schema)
        metas = meta_arrow_schema()
        names = {f.name for f in metas}
        return pa.schema(metas + [f for f in data if f.name not in names])

    @property
    def avro_schema_with_meta(self) -> dict:
        return with_meta_fields(self.avro_schema)

    # ------------------------------------------------------------ file system view
    def file_system_view(self, partitions: Iterable[str] | None = None, *, sizes: bool = True) -> FileSystemView:
        """``sizes=False``: local file sizes are left unknown (-1) instead of one stat per file.
        From :attr:`listed` when set (only files of completed instants there: what a view of
        committed slices needs, not what a sweep of leftovers does), else from storage."""
        view = FileSystemView.load(self.storage, self.timeline, partitions, sizes=sizes, listed=self.listed)
        return view.with_replaced(self.replaced_file_groups())

    def pending_compaction_groups(self) -> dict[tuple[str, str], str]:
        """(partition, fileId) → instant of the pending compaction that plans it.

        New writes to such a file group belong to the (still empty of base files) slice at that
        instant, after the logs the plan re-exposes there (created before the plan was published).
        """
        from ..protocol.plan import pending_plan_groups

        return pending_plan_groups(self.storage, [i.timestamp for i in self.timeline.pending_compactions],
                                   self.config.timeline_dir, self.timeline)

    def replaced_file_groups(self) -> set[tuple[str, str]]:
        out: set[tuple[str, str]] = set()
        for inst in self.timeline.completed_writes:
            if inst.action is not Action.REPLACE_COMMIT:
                continue
            meta = self.commit_metadata(inst)
            for part, fids in (meta.get("partitionToReplaceFileIds") or {}).items():
                out.update((part, f) for f in fids)
        return out

    # ------------------------------------------------------------ reads
    def _filter(self, as_of: str | None = None, start: str | None = None, end: str | None = None) -> ReadFilter:
        tl = self.timeline if as_of is None else self.timeline.as_of(as_of)
        pending = {i.timestamp for i in tl.instants if i.is_pending}

        def committed(ts: str) -> bool:
            return ts not in pending and tl.is_committed(ts)

        return ReadFilter(committed, max_instant=as_of, start_instant=start, end_instant=end)

    def read_slice(
        self,
        s: FileSlice | SliceReadSpec,
        *,
        read_optimized: bool = False,
        as_of: str | None = None,
        start: str | None = None,
        end: str | None = None,
        schema: pa.Schema | None = None,
        stats: ScanStats | None = None,
        log_record_filter: Callable[[pa.Table], pa.Array] | None = None,
        base_filter: Callable[[pa.Table], pa.Table] | None = None,
        skip_base_columns: Iterable[str] = (),
    ) -> pa.Table:
        """Merged records of one file slice. ``log_record_filter`` (a table → boolean mask) /
        ``base_filter`` leave records out of the merge as if never written (deletes still apply).
        ``skip_base_columns``: base-file columns not read (null in the base rows of the result;
        for a caller that overwrites them, e.g. compaction's ``_hoodie_file_name``)."""
        schema = schema or self.arrow_schema
        base_path = s.base_path if isinstance(s, SliceReadSpec) else (s.base_file.path if s.base_file else None)
        log_paths = s.log_paths if isinstance(s, SliceReadSpec) else tuple(s.log_paths)
        base = self._read_base(base_path, skip_base_columns) if base_path else None
        if base is not None and base_filter is not None:
            base = base_filter(base)
        if read_optimized or not log_paths:
            return conform(base, schema) if base is not None else schema.empty_table()
        folded = self.fold_logs(log_paths, self._filter(as_of, start, end), stats, log_record_filter, schema=schema)
        return merge_slice(base, folded, schema, precombine_field=self.config.precombine_field,
                           event_time_ordering=self.config.event_time_ordering,
                           deletes_compare_base=self.config.deletes_compare_base)

    @property
    def _fold_ordering_field(self) -> str | None:
        """The ordering field the log-against-log fold compares (None: processing order, which is
        what COMMIT_TIME_ORDERING of a v8/v9 table means)."""
        if self.config.merge_mode == "COMMIT_TIME_ORDERING":
            return None
        return self.config.precombine_field

    def _read_log(self, rel: str) -> bytes:
        with data_file_errors(rel):
            return self.storage.read_bytes(rel)

    def read_log_files(self, log_paths: Iterable[str]) -> list[tuple[str, bytes, list]]:
        """(path, bytes, parsed blocks) of each log file, for :meth:`fold_logs` and friends."""
        from .. import logformat as lf

        out = []
        for p in log_paths:
            data = self._read_log(p)
            out.append((p, data, lf.read_blocks(data)))
        return out

    def fold_logs(self, log_paths: Iterable[str] | list[tuple], accept: ReadFilter, stats: ScanStats | None = None,
                  record_filter: Callable[[pa.Table], pa.Array] | None = None, *, schema: pa.Schema | None = None,
                  decoder: BlockDecoder | None = None) -> FoldedLogs:
        """Each key's last state over the committed blocks of these log files (in this order).
        ``log_paths`` may be what :meth:`read_log_files` returned (files read and parsed once)."""
        files = [f if isinstance(f, tuple) else (f, self._read_log(f)) for f in log_paths]
        stats = stats if stats is not None else ScanStats()
        schema = schema or self.arrow_schema
        blocks = queue_blocks(files, accept, stats)
        return fold_blocks(blocks, schema, self._fold_ordering_field, stats=stats, record_filter=record_filter,
                           decoder=decoder or BlockDecoder(schema))

    def iter_base(self, rel: str, skip_columns: Iterable[str] = (), batch_rows: int = 65_536) -> Iterator[pa.Table]:
        """A base file's rows in batches of up to ``batch_rows`` (memory: one batch, not the file)."""
        skip = set(skip_columns)
        with data_file_errors(rel), open_parquet_file(self.storage, rel) as (pf, threads):
            cols = [n for n in pf.schema_arrow.names if n not in skip]
            for batch in pf.iter_batches(batch_size=batch_rows, columns=cols, use_threads=threads):
                yield pa.Table.from_batches([batch])

    def _read_base(self, rel: str, skip_columns: Iterable[str] = ()) -> pa.Table:
        with data_file_errors(rel):
            return self._read_base_file(rel, skip_columns)

    def _read_base_file(self, rel: str, skip_columns: Iterable[str] = ()) -> pa.Table:
        skip = set(skip_columns)
        if self.storage.local_paths:
            src = self.storage.full(rel)
            cols = [n for n in pq.read_schema(src).names if n not in skip] if skip else None
            return pq.read_table(src, columns=cols)
        with self.storage.open(rel) as f:  # a Python file object: no Arrow threads (see iter_base)
            pf = pq.ParquetFile(f)
            return pf.read(columns=[n for n in pf.schema_arrow.names if n not in skip] if skip else None,
                           use_threads=False)

    def read(
        self,
        *,
        read_optimized: bool = False,
        as_of: str | None = None,
        partitions: Iterable[str] | None = None,
    ) -> pa.Table:
        """Snapshot (default), read-optimized, or time-travel read of the whole table. ``as_of``:
        any format Hudi's ``as.of.instant`` takes (see :func:`normalize_as_of`)."""
        if as_of is not None:
            as_of = normalize_as_of(as_of)
        schema = self.arrow_schema if self.timeline.completed_writes or self.config.create_schema else None
        if schema is None:
            return pa.table({})
        view = self.file_system_view(partitions)
        tables = [
            self.read_slice(s, read_optimized=read_optimized, as_of=as_of, schema=schema)
            for s in view.latest_slices(as_of)
        ]
        return pa.concat_tables(tables) if tables else schema.empty_table()

    def read_incremental(self, start: str, end: str | None = None) -> pa.Table:
        """Records changed by completed commits in (start, end], as Hudi's incremental query.
        ``start``/``end``: the formats of :func:`normalize_as_of`; ``start`` may also be ``000``
        (Hudi's "from the beginning"). Anything else, or an end before the start, is an
        :class:`InvalidInputError`."""
        start, end = normalize_incremental_range(start, end)
        schema = self.arrow_schema
        if self.profile.slices_by_completion_time:
            return self._read_incremental_by_completion(start, end, schema)
        instants = [
            i
            for i in self.timeline.completed_writes
            if i.timestamp > start and (end is None or i.timestamp <= end)
        ]
        if not instants:
            return schema.empty_table()
        end = end or instants[-1].timestamp
        files: set[str] = set()
        for inst in instants:
            meta = self.commit_metadata(inst)
            carried = set(self.carried_over_files(meta))
            for st in iter_write_stats(meta):
                p = st.get("path")
                if p and p not in carried:
                    files.add(p)
        view = FileSystemView.load(self.storage, self.timeline)
        wanted = {(p.rsplit("/", 1)[0] if "/" in p else "") for p in files}
        touched_groups = set()
        for p in files:
            part, name = (p.rsplit("/", 1) if "/" in p else ("", p))
            for (gp, fid), g in view.groups.items():
                if gp == part and name.lstrip(".").startswith(fid + "_"):
                    touched_groups.add((gp, fid))
        out = []
        for key in sorted(touched_groups):
            g = view.groups[key]
            s = view.latest_slice_of(g, self.timeline.as_of(end))
            if s is None:
                continue
            t = self.read_slice(s, as_of=end, start=start, end=end, schema=schema)
            ct = t.column(COMMIT_TIME)
            import pyarrow.compute as pc

            mask = pc.and_(pc.greater(ct, start), pc.less_equal(ct, end))
            out.append(t.filter(mask))
        del wanted
        return pa.concat_tables(out) if out else schema.empty_table()

    def _read_incremental_by_completion(self, start: str, end: str | None, schema: pa.Schema) -> pa.Table:
        """Hudi 1.x incremental query: the instants whose **completion** time is in (start, end];
        the records they wrote, merged over the latest slices, keeping the rows those instants wrote."""
        import pyarrow.compute as pc

        tl = self.timeline
        chosen = [i for i in tl.completed_writes
                  if i.completion_time is not None and i.completion_time > start
                  and (end is None or i.completion_time <= end)]
        if not chosen:
            return schema.empty_table()
        times = {i.timestamp for i in chosen}
        # the records as they stood at the window's end (a later write must not hide one of the window's)
        as_of = None if end is None else max(times)
        view = self.file_system_view()
        out = []
        for s in view.latest_slices(as_of):
            t = self.read_slice(s, schema=schema, as_of=as_of)
            if t.num_rows:
                out.append(t.filter(pc.is_in(t.column(COMMIT_TIME), value_set=pa.array(sorted(times)))))
        return pa.concat_tables(out) if out else schema.empty_table()

    @staticmethod
    def carried_over_files(meta: Mapping) -> list[str]:
        """Log files a partial compaction re-exposed (copies/links): not new data of that instant."""
        raw = (meta.get("extraMetadata") or {}).get(etc_keys.LINK_OPERATIONS)
        if not raw:
            return []
        try:
            ops = json.loads(raw)
        except ValueError:
            return []
        return [op["link"] for op in ops if isinstance(op, dict) and "link" in op]


_AS_OF_FORMATS = {  # length → (shape, strptime format)
    17: (r"\d{17}", None),
    14: (r"\d{14}", INSTANT_FORMAT),
    23: (r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}", "%Y-%m-%d %H:%M:%S.%f"),
    19: (r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "%Y-%m-%d %H:%M:%S"),
    10: (r"\d{4}-\d\d-\d\d", "%Y-%m-%d"),
}


def normalize_incremental_range(start: Any, end: Any = None) -> tuple[str, str | None]:
    """(start, end) of an incremental read as instant times (:func:`normalize_as_of`, whose
    refusals name ``as-of``: here they name the bound); ``start`` ``0``/``000``: the beginning."""
    def one(name: str, v: Any) -> str:
        if name == "start" and isinstance(v, str) and v in ("0", "00", "000"):
            return "000"
        try:
            return normalize_as_of(v)
        except InvalidInputError as e:
            raise InvalidInputError(f"incremental {name}" + str(e)[len("as-of"):]) from None

    s = one("start", start)
    e = None if end is None else one("end", end)
    if e is not None and e < s:
        raise InvalidInputError(f"incremental end {end!r} is before its start {start!r}")
    return s, e


def normalize_as_of(value: str) -> str:
    """The instant time a time-travel read compares instants with, from the formats Hudi 0.14's
    ``HoodieSqlCommonUtils.formatQueryInstant`` accepts: ``yyyyMMddHHmmss[SSS]`` (as given),
    ``yyyy-MM-dd HH:mm:ss[.SSS]`` (→ ``yyyyMMddHHmmssSSS``) and ``yyyy-MM-dd`` (→ that day's
    ``yyyyMMdd000000000``): wall-clock times of the table's timeline zone, as its instant times
are (Hudi reformats them the same way, without conversion). Anything else
    is an :class:`InvalidInputError`."""
    import datetime as _dt
    import re

    s = value if isinstance(value, str) else ""
    shape, fmt = _AS_OF_FORMATS.get(len(s), ("", None))
    try:
        if not shape or not re.fullmatch(shape, s, re.ASCII):
            raise ValueError
        dt = _dt.datetime.strptime(s[:14] if fmt is None else s, fmt or INSTANT_FORMAT)
    except ValueError:
        raise InvalidInputError(
            f"as-of {value!r}: use yyyyMMddHHmmssSSS, yyyyMMddHHmmss, 'yyyy-MM-dd HH:mm:ss[.SSS]' or yyyy-MM-dd "
            "(wall-clock times of the table's timeline zone)") from None
    if len(s) in (14, 17):
        return s  # as Hudi: an instant time is used as given
    return format_instant(dt)
