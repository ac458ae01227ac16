"""Freshness metrics of a table, from its timeline and write stats (no data read).

``table_metrics`` is what ``hudi-etc status``, the Airflow hook and the report show;
``compaction_history`` lists every completed event-time compaction with the figures its commit
recorded. Names (all times UTC; ``*_ms`` epoch milliseconds; instant times are read in the
table's timeline zone, ``timeline_zone``: when it is unknown — a Java table whose zone nobody
recorded — the figures taken from instant times are None):

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

from ..hudi.protocol.coexistence import known_timeline_zone, metadata_table_state
from ..hudi.protocol.etc_metadata import CompactionExtra
from ..hudi.index.stats import iso_ms, table_status
from ..hudi.storage import Storage
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline.active import instant_to_epoch_ms
from .java_compaction import recorded
from .readiness import last_threshold

def _now_ms(now: _dt.datetime | None) -> int:
    now = now or _dt.datetime.now(_dt.timezone.utc)
    return int(now.timestamp() * 1000)


def compaction_history(table: HudiTable) -> list[dict]:
    """One entry per completed compaction (oldest first) with what its commit recorded; on
    table versions 8/9 the compactions Java archived into the LSM history come first."""
    zone = known_timeline_zone(table.config)
    out = [_history_entry(ts, extra, zone) for ts, extra in _archived_compactions(table)]
    for inst in table.timeline.completed_compactions:
        out.append(_history_entry(inst.timestamp, table.commit_metadata(inst).get("extraMetadata"), zone))
    return out


def _archived_compactions(table: HudiTable) -> list[tuple[str, dict]]:
    """(instant, extra metadata) of the archived compactions, oldest first (the LSM history of
    versions 8/9 only: a version-6 table has no history folder)."""
    if not table.config.history_dir:
        return []
    from ..hudi.timeline.commits import decode_avro_commit
    from ..hudi.errors import HudiEtcError
    from ..hudi.timeline.timeline_v2 import read_lsm_instants

    out = []
    for r in read_lsm_instants(table.storage, table.config.history_dir):
        if not r.get("instantTime") or r.get("action") not in ("commit", "compaction") or not r.get("metadata"):
            continue
        try:
            meta = decode_avro_commit(r["metadata"], f"archived commit {r['instantTime']}")
        except (HudiEtcError, ValueError):
            continue
        if r.get("plan") is not None or meta.get("compacted") or meta.get("operationType") == "COMPACT":
            out.append((r["instantTime"], dict(meta.get("extraMetadata") or {})))
    return sorted(out, key=lambda e: e[0])


def _history_entry(ts: str, extra, zone) -> dict:
    x = CompactionExtra.from_extra(extra)
    th = x.plan.threshold_ms
    at_ms = None if zone is None else instant_to_epoch_ms(ts, zone)
    return {
        "instant": ts,
        "instant_time_ms": at_ms,
        "strategy": x.plan.strategy,
        "threshold_ms": th,
        "threshold": iso_ms(th),
        "compaction_time": x.plan.compaction_time,
        "threshold_lag_seconds_at_compaction": None if th is None or at_ms is None else (at_ms - th) / 1000,
        "link_mode": x.plan.link_mode,
        "exact_split": x.plan.exact_split,
        "compacted_log_files": x.figures.compacted_log_files,
        "compacted_log_bytes": x.figures.compacted_log_bytes,
        "remaining_log_files": x.figures.remaining_log_files,
        "remaining_log_bytes": x.figures.remaining_log_bytes,
        "remaining_min_event_time_ms": x.figures.remaining_min_event_time_ms,
        "link_bytes_written": x.figures.link_bytes_written,
        "planning_seconds": x.plan.planning_seconds,
        "execution_seconds": x.figures.execution_seconds,
    }


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
    last = CompactionExtra()
    for inst in reversed(table.timeline.completed_compactions):
        last = CompactionExtra.from_extra(table.commit_metadata(inst).get("extraMetadata"))
        break
    # ours, or our plan's when Java's compactor executed it; lowered by hudi-etc reset-threshold
    th, th_inst = last_threshold(table)
    pending = list(st["pending_compactions"])
    zone = known_timeline_zone(table.config)
    oldest = None if zone is None else min((instant_to_epoch_ms(p, zone) for p in pending), default=None)
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
        "last_planning_seconds": last.plan.planning_seconds,
        "last_execution_seconds": last.figures.execution_seconds,
        "metadata_table": metadata_table_state(table.storage, table.config).as_dict(),
        "timeline_zone": None if zone is None else str(zone),
        # recorded "on"/"off", or "unknown": our execute is refused (compaction/java_compaction.py)
        "java_compaction": recorded(table) or "unknown",
    }
    m.pop("min_event_time_iso", None)
    if include_slices:
        m["slices"] = st["slices"]
    return m
