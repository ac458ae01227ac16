"""Typed views of the product's own extra metadata (keys: :mod:`.etc_keys`).

A compaction plan's ``extraMetadata`` says how the plan was made (:class:`PlanExtra`); our
compaction commit copies it and adds what the execution did (:class:`CompactionExtra`). Both are
string maps on storage (Hudi's Avro and JSON models hold ``map<string>``), written by this product
and read back by the metrics, the sensor, the catalog sync and validation: these classes are the one
place that knows each key's type. Reading is lenient — a value that does not parse reads as None,
as a Java-written plan or commit simply lacks our keys — and :meth:`to_extra` writes only the keys
that have a value.

>>> p = PlanExtra.from_extra({"hoodie.etc.threshold.ms": "1700000000000", "hoodie.etc.exact.split": "true"})
>>> p.threshold_ms, p.exact_split, p.strategy
(1700000000000, True, None)
>>> p.to_extra()["hoodie.etc.threshold.ms"]
'1700000000000'
>>> CompactionExtra.from_extra({"hoodie.etc.remaining.log.files": "x"}).figures.remaining_log_files is None
True
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

from .. import etc_keys as keys


def _int(v: Any) -> int | None:
    try:
        return None if v is None or v == "" else int(v)
    except (TypeError, ValueError):
        return None


def _float(v: Any) -> float | None:
    try:
        return None if v is None or v == "" else float(v)
    except (TypeError, ValueError):
        return None


def _str(v: Any) -> str | None:
    return None if v is None else str(v)


#: field → (key, parse); booleans read as "true"/anything else and write as "true"/"false"
_PLAN_FIELDS: dict[str, tuple[str, Any]] = {
    "threshold_ms": (keys.THRESHOLD_MS, _int),
    "threshold": (keys.THRESHOLD, _str),
    "data_latency_ms": (keys.LATENCY_MS, _int),
    "compaction_time": (keys.COMPACTION_TIME, _str),
    "strategy": (keys.STRATEGY, _str),
    "link_mode": (keys.LINK_MODE, _str),
    "event_time_source": (keys.EVENT_TIME_SOURCE, _str),
    "event_time_field": (keys.EVENT_TIME_FIELD, _str),
    "exact_split": (keys.EXACT_SPLIT, keys.is_true),
    "links_precreated": (keys.LINKS_PRECREATED, keys.is_true),
    "planning_seconds": (keys.PLANNING_SECONDS, _float),
    "planning_listing": (keys.PLANNING_LISTING, _str),
}

_COMMIT_FIELDS: dict[str, tuple[str, Any]] = {
    "execution_seconds": (keys.EXECUTION_SECONDS, _float),
    "remaining_log_files": (keys.REMAINING_LOG_FILES, _int),
    "remaining_log_bytes": (keys.REMAINING_LOG_BYTES, _int),
    "remaining_min_event_time_ms": (keys.REMAINING_MIN_EVENT_TIME_MS, _int),
    "compacted_log_files": (keys.COMPACTED_LOG_FILES, _int),
    "compacted_log_bytes": (keys.COMPACTED_LOG_BYTES, _int),
    "link_bytes_written": (keys.LINK_BYTES_WRITTEN, _int),
    "split_log_records": (keys.SPLIT_LOG_RECORDS, _int),
}


def _write(fields: Mapping[str, tuple[str, Any]], obj) -> dict[str, str]:
    out = {}
    for name, (key, parse) in fields.items():
        v = getattr(obj, name)
        if parse is keys.is_true:
            out[key] = "true" if v else "false"
        elif v is not None:
            out[key] = str(v)
    return out


@dataclasses.dataclass(frozen=True)
class PlanExtra:
    """How a plan was made: the threshold (epoch ms and ISO), the data latency, the compaction
    time, the strategy, the link mode, where event times came from, exact split, whether the
    re-exposed logs were created before the plan was published, the planning time and where
    planning listed the files ("metadata-table" or "storage")."""

    threshold_ms: int | None = None
    threshold: str | None = None
    data_latency_ms: int | None = None
    compaction_time: str | None = None
    strategy: str | None = None
    link_mode: str | None = None
    event_time_source: str | None = None
    event_time_field: str | None = None
    exact_split: bool = False
    links_precreated: bool = False
    planning_seconds: float | None = None
    planning_listing: str | None = None

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any] | None) -> "PlanExtra":
        extra = extra or {}
        return cls(**{name: parse(extra.get(key)) for name, (key, parse) in _PLAN_FIELDS.items()})

    def to_extra(self) -> dict[str, str]:
        return _write(_PLAN_FIELDS, self)

    @property
    def ours(self) -> bool:
        """True when the plan carries a threshold (a plan of this product, not Java's)."""
        return self.threshold_ms is not None


@dataclasses.dataclass(frozen=True)
class ExecutionFigures:
    """What an execution did, as its commit records it: time, logs compacted and remaining
    (files, bytes, the earliest remaining event time), bytes written for re-exposed logs,
    records of split logs."""

    execution_seconds: float | None = None
    remaining_log_files: int | None = None
    remaining_log_bytes: int | None = None
    remaining_min_event_time_ms: int | None = None
    compacted_log_files: int | None = None
    compacted_log_bytes: int | None = None
    link_bytes_written: int | None = None
    split_log_records: int | None = None

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any] | None) -> "ExecutionFigures":
        extra = extra or {}
        return cls(**{name: parse(extra.get(key)) for name, (key, parse) in _COMMIT_FIELDS.items()})

    def to_extra(self) -> dict[str, str]:
        return _write(_COMMIT_FIELDS, self)


@dataclasses.dataclass(frozen=True)
class CompactionExtra:
    """Our compaction commit's extra metadata: the plan's (:attr:`plan`), the link operations
    (``[{"link": ..., "target": ...}]``; None when absent or not JSON) and the execution's
    :attr:`figures`."""

    plan: PlanExtra = PlanExtra()
    link_operations: tuple[Mapping[str, Any], ...] | None = None
    figures: ExecutionFigures = ExecutionFigures()

    @classmethod
    def from_extra(cls, extra: Mapping[str, Any] | None) -> "CompactionExtra":
        extra = extra or {}
        links = None
        raw = extra.get(keys.LINK_OPERATIONS)
        if raw not in (None, ""):
            try:
                parsed = json.loads(raw)
                links = tuple(x for x in parsed if isinstance(x, Mapping)) if isinstance(parsed, list) else None
            except ValueError:
                links = None
        return cls(plan=PlanExtra.from_extra(extra), link_operations=links, figures=ExecutionFigures.from_extra(extra))

    def to_extra(self) -> dict[str, str]:
        out = {**self.plan.to_extra(), **self.figures.to_extra()}
        if self.link_operations is not None:
            out[keys.LINK_OPERATIONS] = json.dumps([dict(x) for x in self.link_operations], separators=(",", ":"))
        return out


# ------------------------------------------------------------------ recorded table settings
@dataclasses.dataclass(frozen=True)
class TableSetting:
    """One decision ``hudi-etc configure`` records (``hoodie.etc.*``, in the settings file of
    :mod:`.etc_settings`: a Java ``CREATE TABLE ... LOCATION`` drops them from ``hoodie.properties``). ``name``: the API keyword and the CLI option
    (``--<name with dashes>``, defined in :data:`airflow_hudi_etc.contract.COMMANDS`);
    ``normalize``: the given value as stored, or :class:`~.errors.InvalidInputError`. Checks of a
    value against the table (its timeline, its other properties) live in
    :mod:`airflow_hudi_etc.compaction.configure`. To add a setting: one entry here, one ``Arg``
    of the ``configure`` command, optionally one check there."""

    name: str
    key: str
    help: str
    normalize: Any


def _zone_name(value: Any) -> str:
    """An IANA zone name as recorded (``UTC`` for UTC/utc/Etc/UTC...)."""
    from .coexistence import zone_named
    from ..errors import HudiEtcError, InvalidInputError

    name = value.strip() if isinstance(value, str) else ""
    if name.upper() in ("UTC", "ETC/UTC", "Z", "ZULU", "UCT", "ETC/UCT", "ETC/ZULU"):
        return "UTC"
    try:
        if name.upper() == "LOCAL":
            raise ValueError(name)
        zone_named(name, "timeline zone")
    except (HudiEtcError, ValueError):
        raise InvalidInputError(f"timeline zone {value!r}: give the Java writers' JVM time zone as an IANA name "
                                "(e.g. UTC, Europe/Paris, America/Los_Angeles)") from None
    return name


def _on_off(value: Any) -> str:
    from ..errors import InvalidInputError

    v = value.strip().lower() if isinstance(value, str) else value
    if v is True or v is False:
        return "on" if v else "off"
    if v not in ("on", "off"):
        raise InvalidInputError(f"java compaction {value!r}: give on (Java executes the compactions) or off "
                                "(every Java writer runs with its compaction off)")
    return v


#: every recorded setting, by name
TABLE_SETTINGS: dict[str, TableSetting] = {s.name: s for s in (
    TableSetting("timeline_zone", keys.TIMELINE_ZONE,
                 "the Java writers' JVM time zone (IANA name), for a table whose hoodie.table.timeline.timezone "
                 "is LOCAL or unset", _zone_name),
    TableSetting("java_compaction", keys.JAVA_COMPACTION,
                 "on: Java's inline/async compaction executes the compactions; off: every Java writer runs with "
                 "its compaction off, so our execute may run", _on_off),
)}
