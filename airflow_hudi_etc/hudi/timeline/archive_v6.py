"""The archived timeline of table version 6 (Hudi 0.14/0.15, hudi-format.md §4).

Java's archiver moves instants out of ``.hoodie/`` into ``.hoodie/<hoodie.archivelog.folder>/``
(default ``archived``): Hudi log files ``.commits_.archive.<n>_<token>`` (file id ``commits``, no
base instant, extension ``archive``) holding AVRO_DATA blocks of ``HoodieArchivedMetaEntry``
records, one per archived instant file: ``commitTime``, ``actionType``, ``actionState`` and one
nullable member per metadata kind (``hoodieCommitMetadata`` for a completed commit/deltacommit,
``hoodieCompactionPlan`` for a requested compaction, ...).

Read here only for what the product needs of archived instants: which instants completed (a
slice or file of an archived instant is not an orphan) and the extra metadata of our archived
compaction commits and plans (the published threshold). Each block is decoded with the writer
schema in its header, so the reader does not depend on the Java version's schema.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from .. import logformat as lf
from ..errors import HudiEtcError
from .active import META_DIR

#: name prefix of the archive's log files
ARCHIVE_PREFIX = ".commits_.archive."


@dataclass(frozen=True)
class ArchivedEntry:
    """One archived instant file: ``commitTime``, ``actionType`` (``commit``, ``deltacommit``,
    ``compaction``, ``clean``, ...), ``actionState`` (``COMPLETED``, ``REQUESTED``, ``INFLIGHT``;
    None in archives of old releases, which archived completed instants only) and the extra
    metadata of its commit metadata or compaction plan, if any."""

    instant: str
    action: str
    state: str | None
    extra: dict = field(default_factory=dict)
    #: a completed commit whose metadata says it was a compaction (``operationType`` COMPACT)
    compacted: bool = False

    @property
    def is_completed(self) -> bool:
        return self.state in (None, "COMPLETED")


def archive_dir(config) -> str:
    """The v6 archive folder (``hoodie.archivelog.folder``, default ``archived``), table-relative."""
    raw = getattr(config, "raw", None) or {}
    sub = (raw.get("hoodie.archivelog.folder") or "archived").strip("/") or "archived"
    return f"{META_DIR}/{sub}"


def archive_files(storage, folder: str) -> list[str]:
    """The archive's log files, in Java's order (by version, then write token)."""
    names = [n for n in storage.list_names(folder) if n.startswith(ARCHIVE_PREFIX)]
    return [posixpath.join(folder, n) for n in sorted(names, key=_archive_sort_key)]


def _archive_sort_key(name: str) -> tuple:
    rest = name[len(ARCHIVE_PREFIX):]
    ver, _, token = rest.partition("_")
    return (int(ver) if ver.isdigit() else -1, token)


def read_archived_entries(storage, folder: str) -> list[ArchivedEntry]:
    """Every archived instant file of the v6 archive in ``folder`` (missing folder: none). A block
    that does not decode is skipped, as Java's archived-timeline loader skips corrupt blocks."""
    out: list[ArchivedEntry] = []
    for rel in archive_files(storage, folder):
        try:
            data = storage.read_bytes(rel)
        except FileNotFoundError:
            continue  # merged away meanwhile (hoodie.archive.merge.enable)
        for block in lf.iter_blocks(data):
            if not isinstance(block, lf.LogBlock) or block.block_type is not lf.BlockType.AVRO_DATA:
                continue
            try:
                records = lf.decode_avro_records(block.content, block.schema_json)
            except (HudiEtcError, ValueError):
                continue
            out += [e for e in (_entry(r) for r in records) if e is not None]
    return out


def _entry(rec) -> ArchivedEntry | None:
    if not isinstance(rec, dict) or not rec.get("commitTime"):
        return None
    meta = rec.get("hoodieCommitMetadata") or rec.get("hoodieReplaceCommitMetadata") or {}
    plan = rec.get("hoodieCompactionPlan") or {}
    extra = dict((meta.get("extraMetadata") if isinstance(meta, dict) else None) or {})
    plan_extra = (plan.get("extraMetadata") if isinstance(plan, dict) else None) or {}
    for k, v in plan_extra.items():
        extra.setdefault(k, v)
    compacted = isinstance(meta, dict) and (meta.get("operationType") == "COMPACT" or bool(meta.get("compacted")))
    return ArchivedEntry(str(rec["commitTime"]), str(rec.get("actionType") or ""), rec.get("actionState"),
                         extra, compacted)


def archived_completed_times(storage, config) -> frozenset[str]:
    """Instant times the v6 archive holds as completed (any action)."""
    return frozenset(e.instant for e in read_archived_entries(storage, archive_dir(config)) if e.is_completed)
