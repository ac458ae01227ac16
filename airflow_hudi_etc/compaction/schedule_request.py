"""A schedule request, checked before anything is read from the timeline or written: the link
mode against the storage and the table's promises, the times, the event-time field, and the exact
split against what the table's readers and writers can keep in order."""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from typing import Any, Mapping

from ..hudi.concurrency import jvm_metadata
from ..hudi.errors import InvalidInputError, UnsupportedFeatureError
from ..hudi.protocol.coexistence import K_EXCLUSIVE_CLEANER, symlinks_allowed
from ..hudi.storage import Storage
from ..hudi.table.hudi_table import HudiTable
from .plans import K_ET_FIELD, K_EXACT_SPLIT, K_LINK_MODE, K_STRATEGY
from .readiness import threshold_ms_for
from .strategy import CompactAllStrategy, EventTimeStrategy
from .times import check_not_future, parse_duration, parse_time


@dataclass(frozen=True)
class Request:
    """A schedule request, checked: nothing is written before these checks pass."""

    storage: Storage
    table: HudiTable
    compaction_time: _dt.datetime
    latency: _dt.timedelta
    threshold_ms: int
    strategy: str
    exact_split: bool
    mode: str  # copy or symlink ("auto" resolved)
    et_field: str | None

    def settings(self) -> dict[str, str]:
        """What a pending plan must carry to be this request's own (a retry's)."""
        name = EventTimeStrategy(self.threshold_ms).name if self.strategy == "event-time" else CompactAllStrategy().name
        return {K_STRATEGY: name, K_EXACT_SPLIT: "true" if self.exact_split else "false", K_LINK_MODE: self.mode,
                K_ET_FIELD: self.et_field or ""}


def check_request(path: str | Storage, *, data_latency: str, compaction_time: str | None, link_mode: str, strategy: str,
             exact_split: bool, event_time_field: str | None, storage_options: Mapping[str, Any] | None) -> Request:
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    if link_mode not in ("auto", "copy", "symlink"):
        raise InvalidInputError(f"link mode {link_mode!r}: use auto, copy or symlink")
    if link_mode == "symlink" and not storage.supports_symlinks:
        raise InvalidInputError(f"{storage.scheme} storage has no symlinks: use copy")
    ct = parse_time(compaction_time)
    check_not_future(ct)
    latency = parse_duration(data_latency)
    threshold_ms = threshold_ms_for(ct, latency)
    table = HudiTable.load_writable(storage)
    if link_mode == "symlink" and table.profile.reexposed_logs_are_copies:
        raise UnsupportedFeatureError(
            f"link mode symlink on table version {table.config.version}: Java 1.x's cleaner deletes the originals "
            f"with the old slice, leaving symlinks dangling; re-exposed logs are copies there (use copy or auto)")
    # symlinks only by contract: Java's cleaner deletes what they point to (java-coexistence §5.1)
    if link_mode == "symlink" and not symlinks_allowed(table.config):
        raise InvalidInputError(
            f"link mode symlink: the table does not promise that no Java cleaner runs on it ({K_EXCLUSIVE_CLEANER} "
            f"is not true in hoodie.properties), and a Java cleaner deletes the files the symlinks point to with "
            f"the old slice. Use copy (or auto), or make the promise: create the table with --exclusive-cleaner "
            f"(or set {K_EXCLUSIVE_CLEANER}=true) once no Java cleaner runs on it")
    auto_symlink = storage.supports_symlinks and symlinks_allowed(table.config)
    mode = ("symlink" if auto_symlink else "copy") if link_mode == "auto" else link_mode
    et_field = event_time_field or table.config.event_time_field
    if event_time_field and event_time_field not in {f.name for f in table.arrow_schema}:
        raise InvalidInputError(f"event-time field {event_time_field!r} is not a column of the table")
    if exact_split and not et_field:
        raise InvalidInputError("exact split needs an event-time field (table property or --event-time-field)")
    if exact_split and not table.profile.logs_named_by_writing_instant and jvm_metadata.present(storage, table.config.raw):
        # the placeholder holds log version 1 of slice C so that a Java writer's log of slice C sorts
        # after the split log; Hudi's metadata table takes no empty file, and a Java writer listing
        # slice C through it names its own log version 1, which sorts first (its Spark write token
        # before ours): an older record of the split would then overwrite, or bring back, its own
        raise UnsupportedFeatureError(
            f"--exact-split on table version {table.config.version} with a metadata table: the split placeholder "
            f"(an empty file) cannot enter the metadata table, so a Java writer would name its log of slice C before "
            f"the split log and older records would overwrite or bring back its own. Schedule without --exact-split "
            f"(the remaining logs are then copied into slice C and registered before the plan is visible); "
            f"nothing was written")
    return Request(storage, table, ct, latency, threshold_ms, strategy, exact_split, mode, et_field)
