"""``hudi-etc configure``: record a decision about the table once, in the table itself (the
``hoodie.etc.*`` keys of :data:`~airflow_hudi_etc.hudi.protocol.etc_metadata.TABLE_SETTINGS`, kept in
``.hoodie/.aux/hudi-etc/settings.json``: :mod:`~airflow_hudi_etc.hudi.config.etc_settings`, since a Java
``CREATE TABLE ... LOCATION`` rewrites ``hoodie.properties`` without them), so that
every later command, wherever it runs (CLI, API, Airflow workers, Spark drivers and executors),
reads it from the table instead of from a variable set in every shell.

Each value is normalized, then checked against the table where the table allows it (for the
timeline zone: the instants already on the timeline, read in that zone, may not lie in the future,
nor all disagree with their files' modification times (:mod:`.zone_evidence`); a table whose
``hoodie.table.timeline.timezone`` is UTC takes only UTC; for the writers' bucket index
(``--hoodie hoodie.index.type=BUCKET ...``): a count that names every file group of the table).
A refusal writes nothing;
the same values again write nothing (``unchanged``); a table configured by an earlier release
(its ``hoodie.etc.*`` keys in ``hoodie.properties``) has them copied into the settings file by
its next configure (``hoodie.properties`` itself is no longer written).
"""

from __future__ import annotations

import datetime as _dt
from typing import Any, Callable, Mapping

from ..hudi.protocol.coexistence import K_TIMEZONE, timeline_zone_source, zone_named
from ..hudi.errors import InvalidInputError
from ..hudi.protocol.etc_metadata import TABLE_SETTINGS
from ..hudi.concurrency.providers import provider_for
from ..hudi.concurrency.write_config import WriteConfig, check_keys, parse_pairs
from ..hudi.index.bucket import BUCKET_INDEX_META, bucket_index, settings_of as bucket_settings
from ..hudi.config.etc_settings import SETTINGS_PATH, read_hoodie, read_recorded, record, record_hoodie
from ..hudi.config.properties import load_table_config
from ..hudi.storage import Storage
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline.active import parse_instant_time
from .times import max_clock_skew
from .zone_evidence import describe_offset, timeline_evidence, zone_disagreement


def _check_timeline_zone(table: HudiTable, name: str, now: _dt.datetime) -> None:
    """The zone must be the one the table's instants were made in, as far as they tell: UTC for
    a table that says UTC; else no instant (requested or completion time) may lie in the future
    when read in it (a zone west of the writers' puts their latest instants ahead of the clock),
    and the timeline files' modification times may not all disagree with their instant times
    read in it (:mod:`.zone_evidence`: a zone east of the writers' too)."""
    declared = (table.config.raw.get(K_TIMEZONE) or "LOCAL").strip()
    if declared.upper() == "UTC" and name != "UTC":
        raise InvalidInputError(f"the table's {K_TIMEZONE} is UTC: its instants are UTC times, whatever the JVM's "
                                f"zone; {name!r} would be wrong")
    latest = table.timeline.latest_time
    if latest is None:
        return
    zone = zone_named(name, "timeline zone")
    at = parse_instant_time(latest, zone)
    skew = max_clock_skew()
    if at > now + skew:
        raise InvalidInputError(
            f"timeline zone {name}: the latest instant on the timeline, {latest}, would be "
            f"{at.astimezone(_dt.timezone.utc).isoformat(timespec='seconds')}, "
            f"{at - now} ahead of now (allowed clock skew {skew}): the table's writers do not run in {name} "
            f"(their zone is further east)")
    if declared.upper() == "UTC":
        return  # Java writes UTC times there, whatever its JVM's zone
    evidence = timeline_evidence(table)
    found = zone_disagreement(evidence, zone, skew)
    if found is not None:
        offset, when = found
        raise InvalidInputError(
            f"timeline zone {name}: the modification times of the timeline's latest files ({len(evidence)}) all "
            f"disagree with their instant times read in {name}, by more than the allowed clock skew ({skew}): "
            f"the instants were made on a clock at {describe_offset(offset, when)}. Configure the Java "
            f"writers' JVM zone (the zone with that offset then), not {name}; nothing was recorded")


def _check_write_config(table: HudiTable, before: Mapping[str, str], given: Mapping[str, str]) -> None:
    """The write settings after the change must name a lock provider this process can take, with
    its settings, and reach it (a ZooKeeper server that answers), and a bucket index our writes
    can follow whose count names every file group of the table: else a typed refusal."""
    storage = table.storage
    after = {**before, **given}
    config = WriteConfig({k: v for k, v in after.items() if v})
    config.concurrency_mode  # noqa: B018 - a mode Hudi does not know is refused
    buckets = bucket_index(bucket_settings({**table.config.raw, **config.conf}),
                           record_key_fields=table.config.record_key_fields, table_version=table.config.version,
                           bucket_meta=lambda: storage.exists(BUCKET_INDEX_META),
                           concurrency_mode=config.concurrency_mode)
    if buckets is not None:
        view = table.file_system_view()
        buckets.file_groups(view.latest_slices(), set(view.partitions))
    provider = provider_for(storage, config)
    if provider is not None:
        try:
            provider.check()
        finally:
            provider.close()


#: setting name → check(table, normalized value, now); raises a typed error to refuse
CHECKS: dict[str, Callable[[HudiTable, str, _dt.datetime], None]] = {
    "timeline_zone": _check_timeline_zone,
}


def configure(path: str | Storage, *, storage_options: Mapping[str, Any] | None = None,
              now: _dt.datetime | None = None, hoodie: Mapping[str, Any] | list | None = None,
              **settings: Any) -> dict:
    """Record ``settings`` (names of :data:`TABLE_SETTINGS`; None values are left out) in the
    table's settings file, and ``hoodie``, the Hudi write settings of the table's writers (a
    mapping, or the CLI's ``KEY=VALUE`` strings; an empty value removes a key). Returns ``{status:
    configured|unchanged, settings: {name: value}, before: {name: value or None}, hoodie: {key:
    value}, recorded_in}``: every recorded setting after the command, and before."""
    unknown = sorted(set(settings) - set(TABLE_SETTINGS))
    if unknown:
        raise InvalidInputError(f"configure: no setting(s) {unknown}; known: {sorted(TABLE_SETTINGS)}")
    given = {k: v for k, v in settings.items() if v is not None}
    hoodie_given = (parse_pairs(hoodie) if isinstance(hoodie, (list, tuple))
                    else check_keys(hoodie, "configure hoodie") if hoodie else {})
    if not given and not hoodie_given:
        raise InvalidInputError(f"configure: give at least one setting ({', '.join(sorted(TABLE_SETTINGS))}, "
                                "or --hoodie KEY=VALUE)")
    storage = path if isinstance(path, Storage) else Storage(path, dict(storage_options or {}))
    table = HudiTable.load(storage)  # typed refusals: no table, an unsupported version...
    hoodie_before = read_hoodie(storage)
    if hoodie_given:
        _check_write_config(table, hoodie_before, hoodie_given)  # refused before anything is written
    if not given:
        after = record_hoodie(storage, {k: v for k, v in hoodie_given.items() if v},
                              remove=[k for k, v in hoodie_given.items() if not v])
        return {"status": "configured" if after != hoodie_before else "unchanged", "recorded_in": SETTINGS_PATH,
                "hoodie": after, "hoodie_before": hoodie_before}
    now = now or _dt.datetime.now(_dt.timezone.utc)
    values = {k: TABLE_SETTINGS[k].normalize(v) for k, v in given.items()}
    for k, v in values.items():
        check = CHECKS.get(k)
        if check is not None:
            check(table, v, now)
    raw = table.config.raw  # hoodie.properties with the recorded settings over it
    before = {k: raw.get(s.key) for k, s in TABLE_SETTINGS.items()}
    file_before = read_recorded(storage)
    # the settings file, with the legacy hoodie.etc.* keys of hoodie.properties migrated into it
    # (kept there too: hoodie.properties is not rewritten)
    recorded = record(storage, raw, {TABLE_SETTINGS[k].key: v for k, v in values.items()})
    zone, source = timeline_zone_source(load_table_config(storage))
    hoodie_after = hoodie_before
    if hoodie_given:
        hoodie_after = record_hoodie(storage, {k: v for k, v in hoodie_given.items() if v},
                                     remove=[k for k, v in hoodie_given.items() if not v])
    return {"status": "configured" if (recorded, hoodie_after) != (file_before, hoodie_before) else "unchanged",
            "before": before, "recorded_in": SETTINGS_PATH, "hoodie": hoodie_after, "hoodie_before": hoodie_before,
            "settings": {**before, **values},
            # what the commands use now: $HUDI_ETC_TIMELINE_TIMEZONE, when set, wins over the record
            "timeline_zone_in_use": None if zone is None else str(zone), "timeline_zone_source": source}
