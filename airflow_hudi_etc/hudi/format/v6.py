"""Table version 6 (Hudi 0.14/0.15): timeline layout 1 in ``.hoodie/``, JSON commit metadata, the
archived timeline in ``.hoodie/archived``, merging by payload class, logs named with their slice's
base instant (shared/hudi-format.md)."""

from __future__ import annotations

from .keys import DEFAULT_MERGER_STRATEGY, META_FOLDER
from .profile import ARCHIVED_LOG, JSON_COMMITS, FormatProfile


class V6Profile(FormatProfile):
    table_version = 6
    release = "Hudi 0.14/0.15"
    timeline_layout = 1
    layout_key_optional = True
    commit_encoding = JSON_COMMITS
    archive_format = ARCHIVED_LOG
    plan_aux_copy = True
    guard_savepoint = True
    occ_refuses_writes_under_new_plan = True
    new_table_folders = (f"{META_FOLDER}/archived",)

    def new_table_properties(self, *, table_name, record_key, ordering_field, event_time_field, partition_field,
                             payload, schema, database="default", hive_style=True, urlencode=False):
        """As Spark with Hudi 0.15 writes it."""
        props = {
            "hoodie.table.name": table_name,
            "hoodie.table.type": "MERGE_ON_READ",
            "hoodie.table.version": "6",
            "hoodie.timeline.layout.version": "1",
            "hoodie.table.recordkey.fields": record_key,
            "hoodie.table.precombine.field": ordering_field,
            "hoodie.table.keygenerator.class": (
                "org.apache.hudi.keygen.SimpleKeyGenerator"
                if partition_field
                else "org.apache.hudi.keygen.NonpartitionedKeyGenerator"
            ),
            "hoodie.compaction.payload.class": payload,
            "hoodie.compaction.record.merger.strategy": DEFAULT_MERGER_STRATEGY,
            **self._common_settings(hive_style, urlencode),
        }
        return self._finish_new_table(props, table_name=table_name, database=database,
                                      event_time_field=event_time_field, partition_field=partition_field,
                                      schema=schema)
