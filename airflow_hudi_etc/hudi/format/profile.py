"""What a table version is made of: :class:`FormatProfile`, the base of one profile per version.

A profile holds every way one supported table version differs from another, as attributes (facts
and capabilities) and methods (the rules that read or write ``hoodie.properties``). Code elsewhere
asks the profile (``config.profile``, ``table.profile``, ``timeline.profile``) and never compares
version numbers. Where a version needs its own codec (the timeline's class, the commit metadata
encoding, the archived timeline's reader), the profile names it here and the room that holds the
codec keeps one table from that name to its implementation.
"""

from __future__ import annotations

import json
from typing import Mapping

from ..errors import UnsupportedTableVersionError
from .keys import (
    EVENT_TIME_FIELD_KEY, HUDI_EVENT_TIME_FIELD_KEY, LAYOUT_VERSION_KEY, META_FOLDER, URLENCODE_KEY, table_checksum,
)

#: commit metadata encodings (:attr:`FormatProfile.commit_encoding`; codecs in ``timeline.commits``)
JSON_COMMITS = "json"
AVRO_COMMITS = "avro"
#: archived timelines (:attr:`FormatProfile.archive_format`; readers in ``timeline.archived``)
ARCHIVED_LOG = "archived-log"
LSM_HISTORY = "lsm-history"


class FormatProfile:
    """The format rules of one Hudi table version. Subclasses set every attribute below."""

    #: ``hoodie.table.version``
    table_version: int
    #: the Hudi releases that write this version (for messages)
    release: str
    #: ``hoodie.timeline.layout.version``: selects the timeline's class (``timeline.active``);
    #: layout 2 completes an instant as ``<requested>_<completion>.<action>`` in ``timeline_dir``,
    #: and takes new requested and completion times after every time on the timeline
    timeline_layout: int
    #: a ``hoodie.properties`` without ``hoodie.timeline.layout.version`` is read as this layout
    layout_key_optional: bool = False
    #: written by Java Hudi 1.x: its writers take ``hoodie.write.table.version``, its bucket index
    #: parses record keys as 1.x does, its metadata table derives the record index from commits
    java_1x: bool = False
    #: the mutating commands (write, schedule, execute, rollback, clean) support the version
    writable: bool = True

    # ---- the timeline
    #: the encoding of commit metadata: :data:`JSON_COMMITS` or :data:`AVRO_COMMITS`
    commit_encoding: str
    #: where archived instants go: :data:`ARCHIVED_LOG` (``.hoodie/archived`` log files) or
    #: :data:`LSM_HISTORY` (the LSM timeline under ``<timeline>/history``)
    archive_format: str
    #: a requested compaction plan is also copied to ``.hoodie/.aux`` (Hudi 0.x readers want it)
    plan_aux_copy: bool = False

    # ---- merging
    #: merging is configured by ``hoodie.record.merge.mode`` (EVENT_TIME_ORDERING or
    #: COMMIT_TIME_ORDERING), the payload class stands for the mode; else by the payload class
    merge_modes: bool = False
    #: under EVENT_TIME_ORDERING a delete with a real ordering value is compared with the base
    #: record too, which stays when its value is larger (else a delete in the logs always wins)
    deletes_compare_base: bool = False

    # ---- file slices and log files
    #: a file joins the file slice by the completion time of the instant that wrote it, and files
    #: of instants not completed are invisible; incremental queries select by completion time
    slices_by_completion_time: bool = False
    #: a log file is named with the requested time of the instant that writes it, its versions
    #: start at 1 for every such instant (each log is a new file, marked CREATE as Java marks
    #: it), and its write stat names that instant as ``prevCommit`` with no base file; else a log
    #: is named with its slice's base instant and appended to across commits
    logs_named_by_writing_instant: bool = False
    #: a compaction re-exposes the logs it does not compact by byte copies only (Java's cleaner
    #: deletes the originals with the old slice, so a symlink would dangle)
    reexposed_logs_are_copies: bool = False
    #: between withdrawing a plan and deleting its copies, a guard savepoint keeps Java's archiver
    #: before the plan's instant (past it, every reader takes the copies' slice, on no timeline, for
    #: committed) and Java's cleaner off the slice before it; not needed where a log named with an
    #: instant that never completed is in no slice (8/9)
    guard_savepoint: bool = False
    #: under OCC, Java refuses at its commit a write that was pending when a plan touching its
    #: file groups was scheduled (so scheduling need not wait for pending writes)
    occ_refuses_writes_under_new_plan: bool = False
    #: a compaction's write stat names the base file it replaces (``prevBaseFile``) and counts
    #: the logs it compacted (``totalLogFiles``)
    compaction_stats_name_prev_base: bool = False
    #: the folders of a new table besides the common ones (``.temp``, ``.schema``, ``.aux``)
    new_table_folders: tuple[str, ...] = ()

    #: the one instance of each profile class
    _instances: dict[type, "FormatProfile"] = {}

    def __new__(cls):
        inst = FormatProfile._instances.get(cls)
        if inst is None:
            inst = FormatProfile._instances[cls] = super().__new__(cls)
        return inst

    def __reduce__(self):  # unpickled (a Spark task's unit), a profile is the same object again
        return type(self), ()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(table_version={self.table_version})"

    # ---- hoodie.properties
    def check_layout(self, props: Mapping[str, str]) -> None:
        """Refuse properties whose ``hoodie.timeline.layout.version`` is not this version's."""
        layout = props.get(LAYOUT_VERSION_KEY)
        if layout is None and self.layout_key_optional:
            return
        if layout is None or layout.strip() != str(self.timeline_layout):
            raise UnsupportedTableVersionError(
                f"table version {self.table_version} needs {LAYOUT_VERSION_KEY}={self.timeline_layout}, the "
                f"table says {layout!r}: not a consistent Hudi table")

    def names_other_layout(self, props: Mapping[str, str]) -> bool:
        """Do these properties name a timeline layout other than this version's?"""
        layout = (props.get(LAYOUT_VERSION_KEY) or "").strip()
        return bool(layout) and layout != str(self.timeline_layout)

    def timeline_dir(self, props: Mapping[str, str]) -> str:
        """The folder of the active timeline."""
        return META_FOLDER

    def history_dir(self, props: Mapping[str, str]) -> str | None:
        """The folder of the LSM archived timeline, None when the version has none."""
        return None

    def new_table_properties(self, *, table_name: str, record_key: str, ordering_field: str, event_time_field: str,
                             partition_field: str | None, payload: str, schema: dict | None,
                             database: str = "default", hive_style: bool = True, urlencode: bool = False
                             ) -> dict[str, str]:
        """The ``hoodie.properties`` of a new MOR table of this version (in file order).
        ``payload``: the payload class that says how updates merge (on a merge-mode version, the
        mode it stands for)."""
        raise NotImplementedError

    @staticmethod
    def _common_settings(hive_style: bool, urlencode: bool) -> dict[str, str]:
        """The keys every new table of ours carries, whatever its version (in file order)."""
        return {
            "hoodie.archivelog.folder": "archived",
            "hoodie.table.base.file.format": "PARQUET",
            "hoodie.populate.meta.fields": "true",
            "hoodie.table.timeline.timezone": "UTC",
            "hoodie.datasource.write.hive_style_partitioning": "true" if hive_style else "false",
            URLENCODE_KEY: "true" if urlencode else "false",
            "hoodie.datasource.write.drop.partition.columns": "false",
        }

    @staticmethod
    def _finish_new_table(props: dict[str, str], *, table_name: str, database: str, event_time_field: str,
                          partition_field: str | None, schema: dict | None,
                          after_checksum: Mapping[str, str] = {}) -> dict[str, str]:  # noqa: B006 - never changed
        """The keys every new table ends with, in file order: the database, the event-time field
        (Hudi's key and ours), the checksum, ``after_checksum``, then the partition fields and the
        create schema when given."""
        props["hoodie.database.name"] = database
        props[HUDI_EVENT_TIME_FIELD_KEY] = event_time_field
        props[EVENT_TIME_FIELD_KEY] = event_time_field
        props["hoodie.table.checksum"] = str(table_checksum(table_name, database))
        props.update(after_checksum)
        if partition_field:
            props["hoodie.table.partition.fields"] = partition_field
        if schema is not None:
            props["hoodie.table.create.schema"] = json.dumps(schema, separators=(",", ":"))
        return props
