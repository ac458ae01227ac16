"""Event times of log files, and the table status summary.

The min/max event time of a log file comes from the ``minEventTime``/``maxEventTime`` of the
write stats that wrote it (Hudi's own fields; our writer fills them): one stat per log, or, where
Java appends to a log across deltacommits (HDFS), one per append, whose ranges are merged. Logs
written by writers that did not record them (Java before 1.1; Java 1.1 without
``hoodie.write.track.event.time.watermark``: docs/java-writers.md, "Event times Java writers
record") fall
back to a scan of the event-time column of their committed data blocks.
"""

from __future__ import annotations

import datetime as _dt
from typing import NamedTuple

import pyarrow.compute as pc

from .. import logformat as lf
from ..file_group.fsview import FileSlice, LogFile
from ..file_group.merge import BlockDecoder, ReadFilter, queue_blocks
from ..config.properties import HUDI_EVENT_TIME_FIELD_KEY
from ..config.schema import event_time_millis
from .ordering_facts import OrderingFacts, column_range, from_json, merged, widen
from ..format import JSON_COMMITS
from ..timeline.active import Action, State, iter_write_stats, load_log_write_stats
from ..timeline.commits import load_commit
from ..timeline.instant import read_listed

SOURCE_STATS = "write-stats"
SOURCE_SCAN = "scan"


class EventRange(NamedTuple):
    """Min/max event time (epoch ms; None: unknown) of a log file, and where they came from;
    ``ordering``: its ordering facts (:mod:`.ordering_facts`; None: unknown). A named tuple: one
    is made per log file when planning."""

    min_ms: int | None
    max_ms: int | None
    source: str
    ordering: OrderingFacts | None = None


def iso_ms(ms: int | None) -> str | None:
    if ms is None:
        return None
    try:  # integer arithmetic: ms / 1000 as a float is 1 ms off for many times far from 1970
        dt = _EPOCH + _dt.timedelta(milliseconds=int(ms))
    except OverflowError:  # outside years 1..9999 (e.g. a damaged write stat): no ISO form
        return None
    return dt.isoformat(timespec="milliseconds").replace("+00:00", "Z")


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


_LOG_WRITE_ACTIONS = (Action.DELTA_COMMIT, Action.COMPACTION, Action.COMMIT)


_tuple_new = tuple.__new__


def stats_describe(config, field: str | None) -> bool:
    """Are the ``minEventTime``/``maxEventTime`` of this table's write stats times of ``field``?

    Our writer records the table's event-time field (``config.event_time_field``). Java 1.1 with
    ``hoodie.write.track.event.time.watermark`` records ``hoodie.payload.event.time.field``, which
    its Spark writer takes from ``hoodie.properties`` unless a write option names another. So only
    when ``field`` is the table's event-time field and the properties' Hudi key, where present,
    names the same one; otherwise (e.g. a plan asked for another field) the logs are scanned."""
    if not field or field != config.event_time_field:
        return False
    hudi_field = config.raw.get(HUDI_EVENT_TIME_FIELD_KEY)
    return not hudi_field or hudi_field == field


def log_event_ranges(table, *, since: str | None = None,
                     schemas: dict[str, str | None] | None = None) -> dict[str, "EventRange | None"]:
    """Table-relative log path → its event range from the write stats of the completed
    deltacommits and commits (compactions re-expose logs) that name it; ``None``: a stat of it
    lacks ``minEventTime`` although it wrote records, so the log must be scanned. Paths no stat
    names are absent (scan them too).

    A stat without ``minEventTime`` that only deleted (``numDeletes`` and no ``numWrites``)
    counts, with no range. Several stats of one path (Java appending to a log across
    deltacommits on HDFS) merge: min of the mins, max of the maxes.

    ``since``: only instants at or after it are read. A v6 log belongs to the slice whose base
    instant is in its name, and only a write at or after that instant (a deltacommit, or the
    compaction that re-exposes it) writes it: ``since`` = the oldest base instant named by the
    logs asked about skips the commits that cannot name them. A 14-digit and a 17-digit instant
    are compared on their first 14 digits (the same second is never skipped).

    ``schemas``: a dict that receives completed instant file → writer schema
    (``extraMetadata.schema``, None without one) of each commit read here as JSON (table version
    6), from the same decoding: a caller needing them does not decode those commits again."""
    out: dict[str, EventRange | None] = {}
    storage = table.storage
    new, cls = _tuple_new, EventRange
    profile = table.timeline.profile
    json_commits = profile.commit_encoding == JSON_COMMITS  # the msgspec fast path decodes JSON
    for inst in table.timeline.completed_writes:
        if inst.action not in _LOG_WRITE_ACTIONS:
            continue
        ts = inst.timestamp
        if since and (ts < since if len(ts) == len(since) else ts[:14] < since[:14]):
            continue
        done = inst.path(State.COMPLETED)
        data = read_listed(storage, done, table.timeline)  # (gone since the listing: TimelineChangedError)
        if not json_commits:  # Avro commit metadata (table versions 8/9)
            rows = [(p, st.get("minEventTime"), st.get("maxEventTime"), st.get("numWrites"), st.get("numDeletes"), None)
                    for stats in (load_commit(data, profile, str(inst)).get("partitionToWriteStats") or {}).values()
                    for st in stats if (p := st.get("path")) and ".log." in p]
        elif schemas is None:
            rows = load_log_write_stats(data, str(inst))
        else:
            extra: dict = {}
            rows = load_log_write_stats(data, str(inst), extra)
            schemas[done] = extra.get("schema")
        for p, lo, hi, nw, nd, of in rows:
            ok = lo is not None or (nd and not nw)
            if of is not None:
                of = from_json(of)
            if p not in out:
                out[p] = new(cls, (lo, hi, SOURCE_STATS, of)) if ok else None
                continue
            prev = out[p]
            if prev is None or not ok:
                out[p] = None
                continue
            a, b = prev[0], prev[1]
            out[p] = new(cls, (lo if a is None else a if lo is None else min(a, lo),
                               hi if b is None else b if hi is None else max(b, hi), SOURCE_STATS,
                               merged(prev[3], of)))
    return out


def scan_event_range(table, log_path: str, field: str | None = None, *, ordering: bool = False) -> EventRange:
    """Min/max event time over the committed data records of one log file (its data blocks
    decoded as a read decodes them: :class:`~.merge.BlockDecoder`, column-wise where it can);
    with ``ordering``, its ordering facts too, from the same read (:class:`LogScanner`)."""
    return LogScanner.of(table, field, ordering=ordering)(log_path)


class LogScanner:
    """Scans log files for their event range (and ordering facts): a picklable callable, so that
    an engine can spread the scans of many logs (``engine.map(scanner, paths)``).

    Ordering facts: the precombine field's range over data records and over deletes carrying a
    real ordering value, and the delete records counted. The file is read alone (committed
    blocks, its own rollback blocks applied): a rollback block in a later log that drops blocks
    of this one is not seen, so the facts may cover more records than a read of the slice —
    never fewer (the prefix check stays on the safe side)."""

    def __init__(self, storage, schema, field: str | None, pre: str | None, completed: frozenset,
                 first: str | None, pending: frozenset):
        self.storage, self.schema, self.field, self.pre = storage, schema, field, pre
        self.completed, self.first, self.pending = completed, first, pending

    @classmethod
    def of(cls, table, field: str | None = None, *, ordering: bool = False) -> "LogScanner":
        tl = table.timeline
        field = field or table.config.event_time_field
        return cls(table.storage, table.arrow_schema, field, table.config.precombine_field if ordering else None,
                   frozenset(tl.completed_write_times), tl.first_write_time,
                   frozenset(i.timestamp for i in tl.instants if i.is_pending))

    def is_committed(self, ts: str) -> bool:  # HudiTable._filter()'s, as plain data
        if ts in self.pending:
            return False
        return ts in self.completed or (self.first is not None and ts < self.first)

    def __call__(self, log_path: str) -> EventRange:
        from ..file_group.merge import _is_natural_zero

        field, pre, schema = self.field, self.pre, self.schema
        has_field = bool(field) and field in schema.names
        if not has_field and not pre:
            return EventRange(None, None, SOURCE_SCAN)
        blocks = queue_blocks([(log_path, self.storage.read_bytes(log_path))], ReadFilter(self.is_committed))
        decoder = BlockDecoder(schema)  # one per file: its block cache is keyed by id()
        decoder.prefetch([b for b in blocks if b.block_type != lf.BlockType.DELETE])
        lo = hi = None
        ok, ndata, ndel, olo, ohi = bool(pre), 0, 0, None, None
        for b in blocks:
            if b.block_type == lf.BlockType.DELETE:
                if ok:
                    for d in lf.decode_delete_records(b.content):
                        ndel += 1
                        if not _is_natural_zero(d.ordering_value, d.ordering_type):
                            ok, olo, ohi = widen(olo, ohi, d.ordering_value)
                            if not ok:
                                break
                continue
            t = decoder.table(b)
            if not t.num_rows:
                continue
            if has_field:
                mm = pc.min_max(event_time_millis(t.column(field), field))
                bl, bh = mm["min"].as_py(), mm["max"].as_py()
                if bl is not None:
                    lo = bl if lo is None or bl < lo else lo
                    hi = bh if hi is None or bh > hi else hi
            if ok:
                ndata += t.num_rows
                ok, bl, bh = column_range(t.column(pre)) if pre in t.column_names else (False, None, None)
                for v in (bl, bh):
                    if ok and v is not None:
                        ok, olo, ohi = widen(olo, ohi, v)
        return EventRange(lo, hi, SOURCE_SCAN, OrderingFacts(ndata, ndel, olo, ohi) if ok else None)


def log_event_range(table, log: LogFile, index: dict[str, EventRange | None] | None = None, *,
                    allow_scan: bool = True, field: str | None = None) -> EventRange:
    """A log's event range: from ``index`` (:func:`log_event_ranges`), else scanned (or unknown
    without ``allow_scan``)."""
    index = log_event_ranges(table) if index is None else index
    r = index.get(log.path)
    if r is not None:
        return r
    if not allow_scan:
        return EventRange(None, None, "unknown")
    return scan_event_range(table, log.path, field)


def table_status(table, *, allow_scan: bool = True) -> dict:
    """Timeline summary, pending plans, per-slice log counts/bytes, min event time over current logs."""
    tl = table.timeline
    counts: dict[str, int] = {}
    for i in tl.instants:
        if i.is_completed:
            key = "compaction" if i.action is Action.COMPACTION else i.action.value
            counts[key] = counts.get(key, 0) + 1
    pending = [
        {"instant": i.timestamp, "action": i.action.value, "state": i.state.name}
        for i in tl.instants
        if i.is_pending
    ]
    view = table.file_system_view()
    slices: list[FileSlice] = view.latest_slices()
    cfg = table.config
    index = log_event_ranges(table) if stats_describe(cfg, cfg.event_time_field) else {}
    per_slice = []
    lo_all = None
    sources = set()
    total_logs = total_bytes = 0
    for s in slices:
        lo_s = None
        for log in s.log_files:
            r = log_event_range(table, log, index, allow_scan=allow_scan)
            sources.add(r.source)
            if r.min_ms is not None:
                lo_s = r.min_ms if lo_s is None else min(lo_s, r.min_ms)
        nbytes = sum(max(0, lg.size) for lg in s.log_files)
        total_logs += len(s.log_files)
        total_bytes += nbytes
        if lo_s is not None:
            lo_all = lo_s if lo_all is None else min(lo_all, lo_s)
        per_slice.append(
            {
                "partition": s.partition,
                "file_id": s.file_id,
                "base_instant": s.base_instant,
                "base_file": s.base_file.name if s.base_file else None,
                "log_files": len(s.log_files),
                "log_bytes": nbytes,
                "min_event_time": lo_s,
            }
        )
    last = tl.last_completed_write
    return {
        "path": table.storage.base_uri,
        "table": table.config.name,
        "table_type": table.config.table_type,
        "table_version": table.config.version,
        "timeline": {
            "instants": len(tl.instants),
            "completed": counts,
            "latest_completed": last.timestamp if last else None,
            "pending": pending,
        },
        "pending_compactions": [i.timestamp for i in tl.pending_compactions],
        "pending_clustering": pending_clustering(table),
        "file_groups": len(slices),
        "slices_with_logs": sum(1 for s in slices if s.log_files),
        "log_files": total_logs,
        "log_bytes": total_bytes,
        "min_event_time": lo_all,
        "min_event_time_iso": iso_ms(lo_all),
        "event_time_source": "+".join(sorted(sources)) if sources else None,
        "slices": per_slice,
    }


def is_clustering_request(data: bytes) -> bool:
    """Hudi's rule: a non-empty requested replacecommit whose Avro metadata says ``CLUSTER``."""
    if not data:
        return False
    from ..timeline.avro_models import read_avro_metadata
    from ..errors import InvalidTimelineError

    try:  # the bounded reader: a crafted array count must not build a list of billions of entries
        rec = read_avro_metadata(data)
    except InvalidTimelineError:  # unparseable: Hudi's getClusteringPlan yields empty, i.e. not clustering
        return False
    return rec.get("operationType") == "CLUSTER"


def pending_clustering(table) -> list[str]:
    """Pending replacecommits whose requested file is a clustering plan (Hudi's rule)."""
    out = []
    for i in table.timeline.pending_replaces:
        try:
            data = table.storage.read_bytes(i.path(State.REQUESTED))
        except FileNotFoundError:
            continue
        if is_clustering_request(data):
            out.append(i.timestamp)
    return out
