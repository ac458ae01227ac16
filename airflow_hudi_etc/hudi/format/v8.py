"""Table version 8 (Hudi 1.0; shared/hudi-format-v8-v9.md): timeline layout 2 in
``.hoodie/<hoodie.timeline.path>`` with completion times, Avro commit metadata, the LSM history,
merge modes, logs named with their writing instant and file slices by completion time."""

from __future__ import annotations

from .keys import (
    COMMIT_TIME_ORDERING, DEFAULT_HISTORY_PATH, DEFAULT_PAYLOAD, DEFAULT_TIMELINE_PATH, EVENT_TIME_ORDERING,
    HISTORY_PATH_KEY, KEYGEN_TYPE_KEY, MERGE_MODE_KEY, META_FOLDER, OVERWRITE_LATEST_PAYLOAD, PRECOMBINE_KEY,
    TIMELINE_PATH_KEY,
)
from .profile import AVRO_COMMITS, LSM_HISTORY, FormatProfile


class V8Profile(FormatProfile):
    table_version = 8
    release = "Hudi 1.0"
    timeline_layout = 2
    java_1x = True
    commit_encoding = AVRO_COMMITS
    archive_format = LSM_HISTORY
    merge_modes = True
    deletes_compare_base = True
    slices_by_completion_time = True
    logs_named_by_writing_instant = True
    reexposed_logs_are_copies = True
    compaction_stats_name_prev_base = True
    # the active timeline and its LSM history (spec §2.1)
    new_table_folders = (f"{META_FOLDER}/timeline", f"{META_FOLDER}/timeline/history")

    def timeline_dir(self, props):
        return f"{META_FOLDER}/{(props.get(TIMELINE_PATH_KEY) or DEFAULT_TIMELINE_PATH).strip('/')}"

    def history_dir(self, props):
        return f"{self.timeline_dir(props)}/{(props.get(HISTORY_PATH_KEY) or DEFAULT_HISTORY_PATH).strip('/')}"

    def new_table_properties(self, *, table_name, record_key, ordering_field, event_time_field, partition_field,
                             payload, schema, database="default", hive_style=True, urlencode=False):
        """As the fixtures' writers made them (spec §1, §9 "New tables"): layout 2, ``timeline``/
        ``history`` folders, the merge mode ``payload`` stands for, the version's ordering key
        (:meth:`_ordering_keys`), the key generator type, no metadata table."""
        mode = EVENT_TIME_ORDERING if payload == DEFAULT_PAYLOAD else COMMIT_TIME_ORDERING
        props = {
            "hoodie.table.name": table_name,
            "hoodie.table.type": "MERGE_ON_READ",
            "hoodie.table.version": str(self.table_version),
            "hoodie.table.initial.version": str(self.table_version),
            "hoodie.timeline.layout.version": "2",
            TIMELINE_PATH_KEY: DEFAULT_TIMELINE_PATH,
            HISTORY_PATH_KEY: DEFAULT_HISTORY_PATH,
            "hoodie.table.recordkey.fields": record_key,
            KEYGEN_TYPE_KEY: "SIMPLE" if partition_field else "NON_PARTITION",
            MERGE_MODE_KEY: mode,
            **self._common_settings(hive_style, urlencode),
            "hoodie.table.metadata.partitions": "",
            "hoodie.table.metadata.partitions.inflight": "",
        }
        return self._finish_new_table(props, table_name=table_name, database=database,
                                      event_time_field=event_time_field, partition_field=partition_field,
                                      schema=schema, after_checksum=self._ordering_keys(ordering_field, mode))

    def _ordering_keys(self, ordering_field: str, mode: str) -> dict[str, str]:
        """Version 8 names the ordering field as the precombine field, with the merge strategy and
        the payload class that stand for the merge mode."""
        event_time = mode == EVENT_TIME_ORDERING
        return {
            PRECOMBINE_KEY: ordering_field,
            "hoodie.record.merge.strategy.id": (
                "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5" if event_time else "ce9acb64-bde0-424c-9b91-f6ebba25356d"),
            "hoodie.compaction.payload.class": DEFAULT_PAYLOAD if event_time else OVERWRITE_LATEST_PAYLOAD,
        }
