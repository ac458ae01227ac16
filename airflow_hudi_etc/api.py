"""The Python API: one object per table, with the compaction service under ``table.compaction``.

    >>> from airflow_hudi_etc import Table
    >>> table = Table.open("/data/trips")                      # doctest: +SKIP
    >>> table.compaction.schedule(data_latency="2h")           # doctest: +SKIP
    >>> table.compaction.execute()                             # doctest: +SKIP
    >>> table.read(read_optimized=True)                        # doctest: +SKIP

Every method returns a frozen dataclass (or an Arrow table) and raises the typed errors of
:mod:`airflow_hudi_etc.hudi.errors`; nothing is written when one is raised. The CLI, the Spark
jobs and the Airflow operators call the same functions this object calls; the Airflow side reads
tables through this object alone (``table.compaction.check``, ``pending_plans``, ``state``,
``last_threshold``, ``table.status``, ``table.info``...). The times and thresholds the service
computes are here too (:func:`parse_duration`, :func:`parse_time`, :func:`threshold_ms_for`,
:func:`iso_ms`). docs/python-api.md has runnable examples (run as doctests by the tests).
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from types import MappingProxyType
from typing import Any, Iterable, Mapping

import pyarrow as pa

from .compaction.results import EventTimeCheck, PendingPlan, PublishedThreshold, ScheduleResult
from .compaction.times import parse_duration, parse_time
from .compaction.readiness import Readiness, threshold_ms_for
from .hudi.errors import InvalidInputError, TimelineChangedError
from .hudi.index.stats import iso_ms
from .hudi.storage import Storage
from .hudi.write.writer import WriteResult

__all__ = ["Table", "Compaction", "CompactionResult", "TableStatus", "TableInfo", "ValidationReport", "ScheduleResult",
           "WriteResult", "EventTimeCheck", "Readiness", "PendingPlan", "PublishedThreshold", "parse_duration",
           "parse_time", "threshold_ms_for", "iso_ms"]


def _frozen(d: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(d))


#: runs of a command whose timeline changed under it (a timeline file it listed was gone when it
#: read it: Java's archiver, cleaner or rollback next to it) before its ``conflict`` is raised
TIMELINE_ATTEMPTS = 3


def _fresh_timeline(fn):
    """Run ``fn`` again, from a fresh listing, when the table's timeline changed under it
    (:class:`~.hudi.errors.TimelineChangedError`, raised where a listed timeline file is read and
    found gone); the last attempt's error (``conflict``) propagates. For the commands that may run
    again from the start: reads, and those a retry resumes (schedule, execute, clean)."""
    @functools.wraps(fn)
    def run(*args, **kwargs):
        for attempt in range(1, TIMELINE_ATTEMPTS + 1):
            try:
                return fn(*args, **kwargs)
            except TimelineChangedError:
                if attempt == TIMELINE_ATTEMPTS:
                    raise
    return run


@dataclass(frozen=True)
class CompactionResult:
    """What ``execute``/``rollback``/``unschedule`` did to compaction ``instant``."""

    instant: str | None
    status: str
    threshold: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, d: Mapping[str, Any]) -> "CompactionResult":
        return cls(d.get("instant"), str(d.get("status")), d.get("threshold"), _frozen(d))

    def as_dict(self) -> dict:
        return dict(self.details)


@dataclass(frozen=True)
class TableStatus:
    """Freshness of the read-optimized view (``hudi-etc status --json``)."""

    threshold: str | None
    threshold_lag_seconds: float | None
    pending_compactions: tuple[str, ...]
    remaining_log_files: int
    metadata_table_present: bool
    details: Mapping[str, Any] = field(default_factory=dict, repr=False)
    #: with ``status(sla=...)``: is the threshold lag over the SLA (or is there no threshold yet)?
    sla_breached: bool | None = None

    def as_dict(self) -> dict:
        return dict(self.details)


@dataclass(frozen=True)
class TableInfo:
    """What the table says of itself (``table.info()``): its name, type and version from
    ``hoodie.properties``, and how many instants its active timeline holds."""

    name: str
    table_type: str
    table_version: int
    instants: int


@dataclass(frozen=True)
class ValidationReport:
    ok: bool
    problems: tuple[Mapping[str, Any], ...]
    details: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def as_dict(self) -> dict:
        return dict(self.details)


class Compaction:
    """Event-time compaction of one table (``table.compaction``)."""

    def __init__(self, table: "Table"):
        self._table = table

    @_fresh_timeline
    def schedule(self, data_latency: str | timedelta | float, *, compaction_time: str | datetime | None = None,
                 link_mode: str = "auto", exact_split: bool = False, event_time_field: str | None = None,
                 engine=None) -> ScheduleResult:
        """Plan a compaction of everything up to ``compaction_time − data_latency`` (docs/concepts.md, "schedule").
        ``data_latency``: ``"2h"``/``"PT2H"``, a ``timedelta`` or seconds; ``compaction_time``: ISO-8601
        or a ``datetime`` (naive: UTC), default now."""
        from .compaction.scheduling import schedule

        return schedule(self._table.storage, data_latency=data_latency, compaction_time=compaction_time,
                        link_mode=link_mode, exact_split=exact_split, event_time_field=event_time_field,
                        engine=engine)

    @_fresh_timeline
    def execute(self, instant: str | None = None, *, engine=None) -> CompactionResult:
        """Run the pending plan (or ``instant``); ``engine``: e.g. ``SparkEngine(spark)``."""
        from .compaction.execution import execute

        return CompactionResult.of(execute(self._table.storage, instant=instant, engine=engine))

    def rollback(self, instant: str) -> CompactionResult:
        from .compaction.lifecycle import rollback

        return CompactionResult.of(rollback(self._table.storage, instant=instant))

    def unschedule(self, instant: str) -> CompactionResult:
        from .compaction.lifecycle import unschedule

        return CompactionResult.of(unschedule(self._table.storage, instant=instant))

    @_fresh_timeline
    def pending(self) -> tuple[str, ...]:
        """Instants of the pending compaction plans (``TableNotFoundError`` for no table)."""
        from .hudi.config.properties import load_table_config
        from .hudi.timeline.active import Timeline

        storage = self._table.storage
        return tuple(i.timestamp for i in Timeline.load(storage, load_table_config(storage)).pending_compactions)

    def _loaded(self):
        from .hudi.table.hudi_table import HudiTable

        return HudiTable.load(self._table.storage)

    @_fresh_timeline
    def readiness(self, threshold_ms: int) -> Readiness:
        """The EVENT_TIME trigger's check for ``threshold_ms`` (epoch ms): pending compaction or
        clustering → wait; threshold not past the published one → covered; else ready. Reads only."""
        from .compaction.readiness import check_readiness

        return check_readiness(self._loaded(), threshold_ms=threshold_ms)

    @_fresh_timeline
    def check(self, threshold_ms: int) -> EventTimeCheck:
        """May an event-time compaction for ``threshold_ms`` go ahead: ``ready``, ``covered``,
        ``resume`` (a pending plan for exactly this threshold) or ``waiting``? The decision
        ``schedule`` makes; what the Airflow sensor and its trigger wait on. Like every command,
        it first finishes what a killed ``schedule`` left."""
        from .compaction.checks import event_time_check

        return event_time_check(self._loaded(), threshold_ms=threshold_ms)

    @_fresh_timeline
    def pending_plans(self) -> tuple[PendingPlan, ...]:
        """The pending compactions, oldest first, with the threshold each plan carries."""
        from .compaction.checks import pending_plans

        return tuple(pending_plans(self._loaded()))

    @_fresh_timeline
    def state(self, instant: str) -> str | None:
        """``requested``, ``inflight`` or ``completed``: compaction ``instant`` on the active
        timeline; None when it is not there."""
        from .compaction.checks import compaction_state

        return compaction_state(self._loaded(), instant)

    @_fresh_timeline
    def last_threshold(self) -> PublishedThreshold:
        """The threshold the read-optimized view holds (the latest completed event-time
        compaction's, lowered where ``reset-threshold`` lowered it)."""
        from .compaction.checks import read_published_threshold

        return read_published_threshold(self._loaded())

    @_fresh_timeline
    def java_compacts(self) -> bool:
        """Whether Java's compaction executes this table's plans: as recorded (``configure
        --java-compaction``), else as the timeline shows."""
        from .compaction.java_compaction import java_compacts

        return java_compacts(self._loaded())

    @_fresh_timeline
    def check_execute(self) -> None:
        """Refuse (``JavaCompactionError``) where our ``execute`` may not run: Java compacts the
        table, or nobody recorded whether it does. Reads only; ``execute`` makes the same check."""
        from .compaction.java_compaction import check_execute

        check_execute(self._loaded())

    @_fresh_timeline
    def java_execution(self, instant: str) -> CompactionResult:
        """Where Java executes our plans: plan ``instant``'s ``status`` — ``pending`` (not committed
        yet), or ``completed`` once Java's commit is there and verified (a commit that fails the
        checks is a typed error); ``details`` has ``executed_by``."""
        from .compaction.java_compaction import java_execution

        return CompactionResult.of(java_execution(self._table.storage, instant=instant))

    @_fresh_timeline
    def plan(self, instant: str) -> Mapping[str, Any]:
        """A plan as ``show-plan`` prints it."""
        from .compaction.plans import show_plan

        return _frozen(show_plan(self._table.storage, instant=instant))

    def reset_threshold(self, *, to: str | None = None, instant: str | None = None) -> Mapping[str, Any]:
        """Lower a threshold published by mistake (``to``; default the compaction's instant time
        minus its data latency) on compaction ``instant`` (default the latest); then sync the catalog."""
        from .compaction.threshold_reset import reset_threshold

        return _frozen(reset_threshold(self._table.storage, to=to, instant=instant))


def _batch(data: Any) -> pa.Table:
    """An Arrow table, or rows (mappings) made into one; anything else, or rows Arrow cannot
    type (mixed or unsupported value types), is an :class:`InvalidInputError`."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    if isinstance(data, (Mapping, str, bytes)) or not isinstance(data, Iterable):
        raise InvalidInputError(f"write: give an Arrow table or an iterable of rows (dicts), "
                                f"not {type(data).__name__}")
    rows = list(data)
    bad = next((r for r in rows if not isinstance(r, Mapping)), None)
    if bad is not None:
        raise InvalidInputError(f"write: every row must be a dict, not {type(bad).__name__} ({bad!r:.60})")
    try:
        return pa.Table.from_pylist(rows)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as e:
        raise InvalidInputError(f"write: the rows' values cannot make one Arrow table (a column with values "
                                f"of different types?): {e}") from None


class Table:
    """A Hudi table-version-6 Merge-On-Read table. Cheap to create: nothing is cached."""

    def __init__(self, path: str | os.PathLike, *, storage_options: Mapping[str, Any] | None = None):
        if isinstance(path, os.PathLike):
            path = os.fspath(path)
        if not isinstance(path, str) or not path:
            raise InvalidInputError(f"table path {path!r}: give a non-empty string (a local path or an fsspec URI)")
        if storage_options is not None and not isinstance(storage_options, Mapping):
            raise InvalidInputError(f"storage_options: give a mapping, not {type(storage_options).__name__}")
        self.path = path
        self.storage = Storage(path, dict(storage_options or {}))
        self.compaction = Compaction(self)
        #: after :meth:`create`: False when the table already existed with the same settings
        self.created: bool | None = None

    def __repr__(self) -> str:
        return f"Table({self.storage.base_uri!r})"

    @classmethod
    def open(cls, path: str, *, storage_options: Mapping[str, Any] | None = None) -> "Table":
        """An existing table (a typed ``TableNotFoundError`` / ``UnsupportedTableVersionError``...)."""
        from .hudi.config.properties import load_table_config

        t = cls(path, storage_options=storage_options)
        load_table_config(t.storage)
        return t

    @classmethod
    def create(cls, path: str, *, table_name: str, record_key: str, precombine_field: str, event_time_field: str,
               partition_field: str | None = None, payload: str = "overwrite-latest", exclusive_cleaner: bool = False,
               table_version: int = 6, java_compaction: str | None = "off", partition_urlencode: bool = False,
               storage_options: Mapping[str, Any] | None = None) -> "Table":
        """A new empty table (the same settings again: the existing table). ``java_compaction``
        is recorded for a new table: ``"off"`` (default; our execute may run), ``"on"`` (Java's
        inline/async compaction executes the plans), ``None``: nothing recorded, as on a table Java
        created (our execute is refused until ``configure(java_compaction=...)``).
        ``partition_urlencode``: partition values stored escaped as Hudi does
        (``hoodie.datasource.write.partitionpath.urlencode=true``; docs/operations.md, "Partition values")."""
        from .hudi.write.writer import init_table

        t = cls(path, storage_options=storage_options)
        res = init_table(t.storage, table_name=table_name, record_key=record_key, precombine_field=precombine_field,
                   event_time_field=event_time_field, partition_field=partition_field, payload=payload,
                   exclusive_cleaner=exclusive_cleaner, table_version=table_version, java_compaction=java_compaction,
                   partition_urlencode=partition_urlencode)
        t.created = bool(res.get("created"))
        return t

    # ------------------------------------------------------------------ data
    def write(self, data: pa.Table | Iterable[Mapping[str, Any]], *, operation: str = "upsert",
              engine=None) -> WriteResult:
        """One deltacommit: ``data`` as an Arrow table or rows (dicts)."""
        from .hudi.write.writer import write_batch

        from .compaction.intents import finish_stale_intents

        batch = _batch(data)  # bad input refused before anything is touched
        finish_stale_intents(self.storage)  # a crashed schedule's copies (compaction/intents.py)
        return write_batch(self.storage, batch, operation=operation, engine=engine)

    def delete(self, keys: pa.Table | Iterable[Mapping[str, Any]], *, engine=None) -> WriteResult:
        """Delete the records with these keys (rows holding the key and partition fields)."""
        return self.write(keys, operation="delete", engine=engine)

    @_fresh_timeline
    def read(self, *, read_optimized: bool = False, as_of: str | None = None) -> pa.Table:
        """The snapshot (or the read-optimized view, or the table as of an instant), meta columns included."""
        from .hudi.table.hudi_table import HudiTable

        return HudiTable.load(self.storage).read(read_optimized=read_optimized, as_of=as_of)

    @_fresh_timeline
    def read_incremental(self, start: str, end: str | None = None) -> pa.Table:
        from .hudi.table.hudi_table import HudiTable

        return HudiTable.load(self.storage).read_incremental(start, end)

    # ------------------------------------------------------------------ upkeep
    @_fresh_timeline
    def info(self) -> TableInfo:
        """Name, type, version and the number of instants on the active timeline (one read of
        ``hoodie.properties`` and one listing of the timeline)."""
        from .hudi.table.hudi_table import HudiTable

        t = HudiTable.load(self.storage)
        return TableInfo(t.config.name, t.config.table_type, t.config.version, len(t.timeline.instants))

    @_fresh_timeline
    def status(self, *, sla: str | None = None, include_slices: bool = False, allow_scan: bool = True) -> TableStatus:
        """Freshness of the RO view; ``sla`` (``6h``, ``PT30M``): also whether the threshold lag
        exceeds it (``details`` then holds ``sla_seconds`` and ``sla_breached``);
        ``include_slices``: the per-slice figures too (what ``hudi-etc status`` prints);
        ``allow_scan=False``: the timeline alone, a log without event-time stats is not read
        (its event times count as unknown)."""
        from .compaction.metrics import table_metrics

        m = table_metrics(self.storage, include_slices=include_slices, allow_scan=allow_scan)
        breached = None
        if sla:
            from .compaction.times import parse_duration

            sla_s = parse_duration(sla).total_seconds()
            lag = m.get("threshold_lag_seconds")
            breached = lag is None or lag > sla_s
            m["sla_seconds"] = sla_s
            m["sla_breached"] = breached
        return TableStatus(m.get("threshold"), m.get("threshold_lag_seconds"), tuple(m.get("pending_compactions") or ()),
                           int(m.get("remaining_log_files") or 0), bool(m["metadata_table"]["present"]), _frozen(m),
                           sla_breached=breached)

    @_fresh_timeline
    def report(self, output: str, *, sla: str | None = None) -> Mapping[str, Any]:
        """``freshness.png`` and ``index.html`` in folder ``output`` (needs the ``report`` extra)."""
        from .report import write_report

        return _frozen(write_report(self.path, output, sla=sla, storage_options=self.storage.options))

    @_fresh_timeline
    def validate(self) -> ValidationReport:
        from .compaction.validate import validate

        r = validate(self.storage)
        return ValidationReport(bool(r["ok"]), tuple(_frozen(p) for p in r["problems"]), _frozen(r))

    def repair_instant(self, instant: str) -> Mapping[str, Any]:
        """Rewrite the 0-byte completed commit file of ``instant`` (a writer killed while writing
        it; ``validate``'s ``corrupt-instant``) as the empty commit every reader takes it for."""
        from .compaction.repair import repair_instant

        return _frozen(repair_instant(self.storage, instant=instant))

    @_fresh_timeline
    def clean(self, retain_commits: int = 10) -> Mapping[str, Any]:
        from .compaction.clean import clean

        return _frozen(clean(self.storage, retain_commits=retain_commits))

    def configure(self, *, timeline_zone: str | None = None, java_compaction: str | None = None,
                  hoodie: Mapping[str, Any] | None = None, **settings: Any) -> Mapping[str, Any]:
        """Record decisions about the table once, in ``.hoodie/.aux/hudi-etc/settings.json``
        (``hudi-etc configure``; Java's CREATE TABLE rewrites ``hoodie.properties`` without them): ``timeline_zone``, the Java writers' JVM zone (e.g. ``"Europe/Paris"``) of a
        table whose ``hoodie.table.timeline.timezone`` is LOCAL, checked against its instants;
        ``java_compaction``: ``"on"`` (Java executes the compactions) or ``"off"``; ``hoodie``: the Hudi
        write settings of the table's Java writers that our commands share with them (their
        concurrency mode and lock provider, e.g. ``{"hoodie.write.concurrency.mode":
        "optimistic_concurrency_control", "hoodie.write.lock.provider": "org.apache.hudi.client.
        transaction.lock.ZookeeperBasedLockProvider", ...}``; an empty value removes a key)."""
        from .compaction.configure import configure

        return _frozen(configure(self.storage, timeline_zone=timeline_zone, java_compaction=java_compaction,
                                 hoodie=hoodie, **settings))

    def drop_metadata_table(self) -> Mapping[str, Any]:
        from .hudi.protocol.coexistence import drop_metadata_table

        return _frozen(drop_metadata_table(self.storage))
