"""One home for the product's own metadata keys (``hoodie.etc.*``): Hudi, Java's included,
ignores keys it does not know in ``hoodie.properties``, in a plan's and a commit's extra metadata.

* table properties: :data:`EVENT_TIME_FIELD`, :data:`EXCLUSIVE_CLEANER`, :data:`TIMELINE_ZONE`,
  :data:`JAVA_COMPACTION`
  (the settings ``hudi-etc configure`` records: :data:`airflow_hudi_etc.hudi.protocol.etc_metadata.TABLE_SETTINGS`);
* compaction plan extra metadata (copied into the commit by our execution): the threshold and how
  it was planned;
* compaction commit extra metadata: the link operations and the execution's figures;
* the cleaner plan: :data:`RETAIN_COMMITS`.
"""

from __future__ import annotations

PREFIX = "hoodie.etc."

# ---- table properties
EVENT_TIME_FIELD = PREFIX + "event.time.field"  # also a plan key: the field the plan used
#: "only this product cleans this table" (no Java cleaner runs): link mode auto may use symlinks
EXCLUSIVE_CLEANER = PREFIX + "exclusive.cleaner"
#: the Java writers' JVM time zone (an IANA name), for a table whose hoodie.table.timeline.timezone
#: is LOCAL or unset: the zone its instant times are wall-clock times of
TIMELINE_ZONE = PREFIX + "timeline.zone"
#: "off": every Java writer runs with its compaction off (our execute may run); "on": Java executes
#: the compactions (compaction/java_compaction.py)
JAVA_COMPACTION = PREFIX + "java.compaction"

# ---- compaction plans (and the commits our execution writes)
THRESHOLD_MS = PREFIX + "threshold.ms"
THRESHOLD = PREFIX + "threshold"
LATENCY_MS = PREFIX + "data.latency.ms"
COMPACTION_TIME = PREFIX + "compaction.time"
STRATEGY = PREFIX + "strategy"
LINK_MODE = PREFIX + "link.mode"
EVENT_TIME_SOURCE = PREFIX + "event.time.source"
EXACT_SPLIT = PREFIX + "exact.split"
#: "true": the plan's re-exposed logs (and exact-split placeholder) were created in slice C before
#: the plan was published, so any executor, Java's included, yields a correct slice C
LINKS_PRECREATED = PREFIX + "links.precreated"
PLANNING_SECONDS = PREFIX + "planning.seconds"
#: where planning listed the table's files: "metadata-table" or "storage"
PLANNING_LISTING = PREFIX + "planning.listing"

# ---- compaction commits
LINK_OPERATIONS = PREFIX + "link.operations"
EXECUTION_SECONDS = PREFIX + "execution.seconds"
REMAINING_LOG_FILES = PREFIX + "remaining.log.files"
REMAINING_LOG_BYTES = PREFIX + "remaining.log.bytes"
REMAINING_MIN_EVENT_TIME_MS = PREFIX + "remaining.min.event.time.ms"
COMPACTED_LOG_FILES = PREFIX + "compacted.log.files"
COMPACTED_LOG_BYTES = PREFIX + "compacted.log.bytes"
LINK_BYTES_WRITTEN = PREFIX + "link.bytes.written"
SPLIT_LOG_RECORDS = PREFIX + "split.log.records"

# ---- cleaner plans
RETAIN_COMMITS = PREFIX + "retain.commits"


def is_true(v) -> bool:
    return str(v if v is not None else "").strip().lower() == "true"
