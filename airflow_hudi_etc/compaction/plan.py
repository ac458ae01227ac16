"""The compaction plan file: Hudi's HoodieCompactionPlan (Avro container, one record) + link ops.

Stock Hudi readers parse it with their own schema: our extra field ``linkOperations`` on each
operation has a default, and Avro resolution drops writer fields the reader does not know.
Plan version 2 stores bare file names (shared/hudi-format.md §4, §7, pitfall 12).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import fastavro

from ..hudi.errors import InvalidTimelineError, UnsafePathError
from ..hudi.storage import safe_filename, safe_relpath

NS = "org.apache.hudi.avro.model"
_S = {"type": "string", "avro.java.string": "String"}
_OPT_S = ["null", _S]

LINK_OPERATION = {
    "type": "record",
    "name": "HoodieEtcLinkOperation",
    "namespace": NS,
    "fields": [
        {"name": "link", "type": _OPT_S, "default": None},
        {"name": "target", "type": _OPT_S, "default": None},
    ],
}
COMPACTION_OPERATION = {
    "type": "record",
    "name": "HoodieCompactionOperation",
    "namespace": NS,
    "fields": [
        {"name": "baseInstantTime", "type": _OPT_S},
        {"name": "deltaFilePaths", "type": ["null", {"type": "array", "items": _S}], "default": None},
        {"name": "dataFilePath", "type": _OPT_S, "default": None},
        {"name": "fileId", "type": _OPT_S},
        {"name": "partitionPath", "type": _OPT_S, "default": None},
        {"name": "metrics", "type": ["null", {"type": "map", "values": "double", "avro.java.string": "String"}], "default": None},
        {"name": "bootstrapFilePath", "type": _OPT_S, "default": None},
        {"name": "linkOperations", "type": ["null", {"type": "array", "items": LINK_OPERATION}], "default": None},
    ],
}
COMPACTION_PLAN = fastavro.parse_schema(
    {
        "type": "record",
        "name": "HoodieCompactionPlan",
        "namespace": NS,
        "fields": [
            {"name": "operations", "type": ["null", {"type": "array", "items": COMPACTION_OPERATION}], "default": None},
            {"name": "extraMetadata", "type": ["null", {"type": "map", "values": _S, "avro.java.string": "String"}], "default": None},
            {"name": "version", "type": ["int", "null"], "default": 1},
            {
                "name": "strategy",
                "type": [
                    "null",
                    {
                        "type": "record",
                        "name": "HoodieCompactionStrategy",
                        "namespace": NS,
                        "fields": [
                            {"name": "compactorClassName", "type": _OPT_S, "default": None},
                            {"name": "strategyParams", "type": ["null", {"type": "map", "values": _S}], "default": None},
                            {"name": "version", "type": ["int", "null"], "default": 1},
                        ],
                    },
                ],
                "default": None,
            },
            {"name": "preserveHoodieMetadata", "type": ["boolean", "null"], "default": False},
        ],
    }
)
_SYNC = b"hudi-etc-plan-v1"  # a fixed sync marker: the same plan always has the same bytes


@dataclass(frozen=True)
class LinkOp:
    link: str  # new log file name in slice C
    target: str  # existing log file name it re-exposes (same partition)


@dataclass(frozen=True)
class Operation:
    partition: str
    file_id: str
    base_instant: str
    base_file: str | None
    compact_logs: tuple[str, ...]
    links: tuple[LinkOp, ...] = ()
    metrics: dict = field(default_factory=dict)

    def path(self, name: str) -> str:
        return f"{self.partition}/{name}" if self.partition else name


@dataclass(frozen=True)
class CompactionPlan:
    instant: str
    operations: tuple[Operation, ...]
    extra: dict

    def to_bytes(self) -> bytes:
        ops = [
            {
                "baseInstantTime": o.base_instant,
                "deltaFilePaths": list(o.compact_logs),
                "dataFilePath": o.base_file,
                "fileId": o.file_id,
                "partitionPath": o.partition,
                "metrics": {k: float(v) for k, v in o.metrics.items()},
                "bootstrapFilePath": None,
                "linkOperations": [{"link": lk.link, "target": lk.target} for lk in o.links],
            }
            for o in self.operations
        ]
        rec = {"operations": ops, "extraMetadata": {k: str(v) for k, v in self.extra.items()}, "version": 2,
               "strategy": None, "preserveHoodieMetadata": True}
        buf = io.BytesIO()
        fastavro.writer(buf, COMPACTION_PLAN, [rec], codec="null", sync_marker=_SYNC)
        return buf.getvalue()

    @classmethod
    def from_bytes(cls, instant: str, data: bytes) -> "CompactionPlan":
        try:
            recs = list(fastavro.reader(io.BytesIO(data)))
        except Exception as e:
            raise InvalidTimelineError(f"compaction plan {instant} is not valid Avro: {e}") from None
        if len(recs) != 1 or not isinstance(recs[0], dict):
            raise InvalidTimelineError(f"compaction plan {instant} must hold exactly one record")
        rec = recs[0]
        ops = []
        for o in rec.get("operations") or []:
            part = safe_relpath(o.get("partitionPath") or "")
            fid = o.get("fileId")
            if not fid:
                raise InvalidTimelineError(f"compaction plan {instant}: an operation has no fileId")
            try:
                links = tuple(LinkOp(safe_filename(x["link"]), safe_filename(x["target"])) for x in o.get("linkOperations") or [])
                logs = tuple(safe_filename(n) for n in o.get("deltaFilePaths") or [])
                base = safe_filename(o["dataFilePath"]) if o.get("dataFilePath") else None
            except (UnsafePathError, KeyError, TypeError) as e:
                raise UnsafePathError(f"compaction plan {instant}: {e}") from None
            ops.append(Operation(part, fid, o.get("baseInstantTime") or "", base, logs, links, dict(o.get("metrics") or {})))
        return cls(instant, tuple(ops), dict(rec.get("extraMetadata") or {}))
