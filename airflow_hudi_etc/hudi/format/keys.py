"""The ``hoodie.properties`` vocabulary the format profiles read and write: keys, the values Hudi
gives them, and the table-name checksum (shared/hudi-format.md §5). ``config.properties``
re-exports every name, so its importers keep their imports."""

from __future__ import annotations

import zlib

from .. import etc_keys as _keys

TABLE_VERSION_KEY = "hoodie.table.version"
LAYOUT_VERSION_KEY = "hoodie.timeline.layout.version"

OVERWRITE_LATEST_PAYLOAD = "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"
DEFAULT_PAYLOAD = "org.apache.hudi.common.model.DefaultHoodieRecordPayload"
DEFAULT_MERGER_STRATEGY = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"

#: our own table property naming the event-time field (Hudi ignores unknown keys)
EVENT_TIME_FIELD_KEY = _keys.EVENT_TIME_FIELD
#: Hudi's own key for the event-time field of the payload (used by DefaultHoodieRecordPayload)
HUDI_EVENT_TIME_FIELD_KEY = "hoodie.payload.event.time.field"

META_FOLDER = ".hoodie"
TIMELINE_PATH_KEY = "hoodie.timeline.path"
HISTORY_PATH_KEY = "hoodie.timeline.history.path"
DEFAULT_TIMELINE_PATH = "timeline"
DEFAULT_HISTORY_PATH = "history"
ORDERING_FIELDS_KEY = "hoodie.table.ordering.fields"
PRECOMBINE_KEY = "hoodie.table.precombine.field"
MERGE_MODE_KEY = "hoodie.record.merge.mode"
MERGE_STRATEGY_KEYS = ("hoodie.record.merge.strategy.id", "hoodie.compaction.record.merger.strategy")
PARTIAL_UPDATE_MODE_KEY = "hoodie.table.partial.update.mode"
KEYGEN_TYPE_KEY = "hoodie.table.keygenerator.type"
URLENCODE_KEY = "hoodie.datasource.write.partitionpath.urlencode"
EVENT_TIME_ORDERING = "EVENT_TIME_ORDERING"
COMMIT_TIME_ORDERING = "COMMIT_TIME_ORDERING"
CUSTOM_MERGE = "CUSTOM"
#: hc/model/HoodieRecordMerger constants → merge mode
STRATEGY_MODES = {
    "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5": EVENT_TIME_ORDERING,
    "ce9acb64-bde0-424c-9b91-f6ebba25356d": COMMIT_TIME_ORDERING,
    "1897ef5f-18bc-4557-939c-9d6a8afd1519": CUSTOM_MERGE,
    "00000000-0000-0000-0000-000000000000": CUSTOM_MERGE,  # payload-based
}


def table_checksum(table_name: str, database: str | None) -> int:
    """CRC32 of ``"<db>.<table>"`` (leading dot when there is no database)."""
    return zlib.crc32(f"{database or ''}.{table_name}".encode("utf-8")) & 0xFFFFFFFF
