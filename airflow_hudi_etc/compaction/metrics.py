"""Freshness metrics of a table, from its timeline and write stats (no data read).

``table_metrics`` is what ``hudi-etc status``, the Airflow hook and the report show;
``compaction_history`` lists every completed event-time compaction with the figures its commit
recorded. Names (all times UTC; ``*_ms`` epoch milliseconds):

* ``threshold`` / ``threshold_ms``: the RO view holds every record with event time ≤ this
  (the last completed event-time compaction's threshold), ``last_compaction_instant``.
* ``threshold_lag_seconds``: now − threshold.
* ``min_event_time`` / ``min_event_time_ms``: smallest event time over all current log files
  (what the next compaction could bring into RO).
* ``remaining_log_files`` / ``remaining_log_bytes``: log files of the latest slices, i.e. not
  yet in any base file; ``slices_with_logs``: file slices that have some.
* ``pending_compactions`` / ``pending_clustering``; ``pending_plan_age_seconds``: age of the
  oldest pending compaction plan (from its instant time).
* ``last_planning_seconds`` / ``last_execution_seconds``: of the last compaction.
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Mapping

from ..hudi import etc_keys as keys
from ..hudi.coexistence import metadata_table_state
from ..hudi.stats import iso_ms, table_status
from ..hudi.storage import Storage
from ..hudi.table import HudiTable
from ..hudi.timeline import instant_to_epoch_ms
from .trigger import last_threshold

# extra-metadata keys of our compaction commits / plans (one home: hudi/etc_keys.py)
K_THRESHOLD_MS = keys.THRESHOLD_MS
K_PLANNING = keys.PLANNING_SECONDS
K_EXECUTION = keys.EXECUTION_SECONDS
K_REMAINING_FILES = keys.REMAINING_LOG_FILES
K_REMAINING_BYTES = keys.REMAINING_LOG_BYTES
K_REMAINING_MIN_ET = keys.REMAINING_MIN_EVENT_TIME_MS
K_COMPACTED_LOGS = keys.COMPACTED_LOG_FILES
K_COMPACTED_BYTES = keys.COMPACTED_LOG_BYTES
K_LINK_BYTES = keys.LINK_BYTES_WRITTEN
K_EXACT_SPLIT = keys.EXACT_SPLIT
K_SPLIT_RECORDS = keys.SPLIT_LOG_RECORDS


def _now_ms(now: _dt.datetime | None) -> int:
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return int(now.timestamp() * 1000)


def _f(v: Any) -> float | None:
    try:
        return None if v is None else float(v)
    except (TypeError, ValueError):
        return None


def _i(v: Any) -> int | None:
    try:
        return None if v is None else int(v)
    except (TypeError, ValueError):
        return None


def compaction_history(table: HudiTable) -> list[dict]:
    """One entry per completed compaction (oldest first) with what its commit recorded."""
    out = []
    for inst in table.timeline.completed_compactions:
        meta = table.commit_metadata(inst)
        extra = meta.get("extraMetadata") or {}
        th = _i(extra.get(K_THRESHOLD_MS))
        at_ms = instant_to_epoch_ms(inst.timestamp)
        out.append({
            "instant": inst.timestamp,
            "instant_time_ms": at_ms,
            "strategy": extra.get(keys.STRATEGY),
            "threshold_ms": th,
            "threshold": iso_ms(th),
            "compaction_time": extra.get(keys.COMPACTION_TIME),
            "threshold_lag_seconds_at_compaction": None if th is None else (at_ms - th) / 1000,
            "link_mode": extra.get(keys.LINK_MODE),
            "exact_split": extra.get(K_EXACT_SPLIT) == "true",
            "compacted_log_files": _i(extra.get(K_COMPACTED_LOGS)),
            "compacted_log_bytes": _i(extra.get(K_COMPACTED_BYTES)),
            "remaining_log_files": _i(extra.get(K_REMAINING_FILES)),
            "remaining_log_bytes": _i(extra.get(K_REMAINING_BYTES)),
            "remaining_min_event_time_ms": _i(extra.get(K_REMAINING_MIN_ET)),
            "link_bytes_written": _i(extra.get(K_LINK_BYTES)),
            "planning_seconds": _f(extra.get(K_PLANNING)),
            "execution_seconds": _f(extra.get(K_EXECUTION)),
        })
    return out


def table_metrics(
    path: str | Storage | HudiTable,
    *,
    storage_options: Mapping[str, Any] | None = None,
    now: _dt.datetime | None = None,
    allow_scan: bool = True,
    include_slices: bool = True,
) -> dict:
    table = path if isinstance(path, HudiTable) else HudiTable.load(path, storage_options)
    st = table_status(table, allow_scan=allow_scan)
    now_ms = _now_ms(now)
    last = None
    for inst in reversed(table.timeline.completed_compactions):
        last = (inst.timestamp, table.commit_metadata(inst).get("extraMetadata") or {})
        break
    # ours, or our plan's when Java's compactor executed it; lowered by hudi-etc reset-threshold
    th, th_inst = last_threshold(table)
    pending = list(st["pending_compactions"])
    oldest = min((instant_to_epoch_ms(p) for p in pending), default=None)
    m = {
        **({k: v for k, v in st.items() if k != "slices"}),
        "now": iso_ms(now_ms),
        "threshold": iso_ms(th),
        "threshold_ms": th,
        "last_compaction_instant": th_inst,
        "threshold_lag_seconds": None if th is None else (now_ms - th) / 1000,
        "min_event_time_ms": st["min_event_time"],
        "min_event_time": st["min_event_time_iso"],
        "remaining_log_files": st["log_files"],
        "remaining_log_bytes": st["log_bytes"],
        "pending_plan_age_seconds": None if oldest is None else max(0.0, (now_ms - oldest) / 1000),
        "last_planning_seconds": _f((last or (None, {}))[1].get(K_PLANNING)),
        "last_execution_seconds": _f((last or (None, {}))[1].get(K_EXECUTION)),
        "metadata_table": metadata_table_state(table.storage, table.config).as_dict(),
    }
    m.pop("min_event_time_iso", None)
    if include_slices:
        m["slices"] = st["slices"]
    return m
