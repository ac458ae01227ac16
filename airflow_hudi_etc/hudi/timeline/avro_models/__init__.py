"""Avro timeline metadata files: compaction plan, cleaner plan/metadata, rollback plan/metadata,
requested-replace (clustering) metadata.

Hudi writes these as an Avro Object Container File holding exactly one record, codec null, with
the generated Java class's schema embedded (``TimelineMetadataUtils.serializeAvroMetadata``), and
reads them with ``DataFileReader`` + the compiled class schema as *reader* schema, so ordinary Avro
schema resolution applies (shared/hudi-format.md §4 "Avro timeline files", pitfall 17).

Schemas below are written from the avsc files in ``hudi-common/src/main/avro/`` (namespace
``org.apache.hudi.avro.model``) and checked against the schemas embedded in real 0.14/0.15 (v6)
and 1.x (v8) files. Where versions differ we write the **superset**: a writer field unknown to
an older reader is ignored by it, while a reader field missing from our writer schema would need
a default. Each string type carries ``"avro.java.string": "String"`` like Java's generated
schemas. Two Hudi defaults are invalid per the Avro spec (a union default must match the union's
*first* branch) and are fixed here:

* ``HoodieRequestedReplaceMetadata.operationType``: Hudi declares ``["null","string"]`` with
  default ``""``; we declare default ``null``.
* ``HoodieRequestedReplaceMetadata.clusteringPlan`` (and, in old versions,
  ``HoodieClusteringPlan.strategy``): Hudi declares ``[record, "null"]`` with default null; we
  put ``"null"`` first. Union branch order in a *writer* schema does not matter to a reader:
  Avro resolves a writer union value by matching its branch against the reader's union.

Our extension: ``HoodieCompactionOperation.linkOperations`` (optional, default null), the link
operations of a partial compaction (see :func:`compaction_operation`).

Modules: :mod:`.compaction`, :mod:`.clean`, :mod:`.rollback`, :mod:`.savepoint`, :mod:`.clustering`
(schemas and builders, one Hudi structure each); the container files are written and read
here.
"""

from __future__ import annotations

import hashlib
import io
import itertools
from typing import Any, Mapping

import fastavro

from ...errors import InvalidTimelineError
from ._build import NAMESPACE
from .clean import CLEAN_METADATA, CLEANER_PLAN, clean_file_info, clean_metadata, clean_partition_metadata, cleaner_plan
from .clustering import (
    REQUESTED_REPLACE_METADATA, clustering_group, clustering_plan, requested_replace_metadata, slice_info,
)
from .compaction import COMPACTION_PLAN, compaction_operation, compaction_plan, compaction_strategy
from .rollback import (
    ROLLBACK_METADATA, ROLLBACK_PLAN, rollback_metadata, rollback_partition_metadata, rollback_plan,
    rollback_request,
)
from .savepoint import SAVEPOINT_METADATA

__all__ = [
    "NAMESPACE",
    "MAX_METADATA_BYTES",
    "COMPACTION_PLAN",
    "CLEANER_PLAN",
    "CLEAN_METADATA",
    "ROLLBACK_PLAN",
    "ROLLBACK_METADATA",
    "REQUESTED_REPLACE_METADATA",
    "write_avro_metadata",
    "read_avro_metadata",
    "is_clustering_request",
    "compaction_operation",
    "compaction_strategy",
    "compaction_plan",
    "rollback_request",
    "rollback_plan",
    "rollback_partition_metadata",
    "rollback_metadata",
    "clean_file_info",
    "cleaner_plan",
    "clean_partition_metadata",
    "clean_metadata",
    "slice_info",
    "clustering_group",
    "clustering_plan",
    "requested_replace_metadata",
]

#: refuse timeline files larger than this (a real plan is a few KB; a huge one is damage)
MAX_METADATA_BYTES = 512 * 1024 * 1024


def _container(schema: dict, record: dict, sync_marker: bytes) -> bytes:
    out = io.BytesIO()
    # validator: wrong types raise; strict_allow_default: unknown fields raise, and so do missing
    # fields unless the schema gives them a default
    fastavro.writer(
        out, schema, [record], codec="null", validator=True, sync_marker=sync_marker, strict_allow_default=True
    )
    return out.getvalue()


def write_avro_metadata(schema: dict, record: Mapping) -> bytes:
    """Serialize one record as Hudi does: an Avro container file, codec null, exactly one record.

    The output is deterministic: the 16-byte sync marker is a hash of the file written with a
    zero marker (i.e. of schema + record), so the same input always gives the same bytes
    (idempotent retries can compare bytes) and different content gets a different marker.
    Raises ``ValueError`` when the record does not match the schema (unknown fields, wrong types,
    a missing field that has no default).
    """
    if not isinstance(record, Mapping):
        raise ValueError(f"record must be a mapping, got {type(record).__name__}")
    record = dict(record)
    try:
        draft = _container(schema, record, bytes(16))
    except Exception as e:  # fastavro's ValidationError is not a ValueError; wrong types raise TypeError
        msg = " ".join(str(e).split())
        if len(msg) > 500:
            msg = msg[:500] + "..."
        raise ValueError(f"record does not match schema {schema.get('name')}: {msg}") from None
    return _container(schema, record, hashlib.blake2b(draft, digest_size=16).digest())


def _zero_size_array_items(schema: Any) -> bool:
    """True if some array in ``schema`` has items that may encode to zero bytes.

    Such an array lets a corrupt block count make the decoder loop without consuming input (a
    hang). Every other Avro value read consumes at least one byte or is bounded by the input
    length, so refusing these schemas bounds decoding work by the data size.
    """
    names: dict[str, Any] = {}

    def collect(s: Any, ns: str | None) -> None:
        if isinstance(s, list):
            for b in s:
                collect(b, ns)
        elif isinstance(s, dict):
            t = s.get("type")
            if t in ("record", "error", "enum", "fixed") and isinstance(s.get("name"), str):
                name = s["name"]
                nns = s.get("namespace", ns)
                full = name if "." in name or not nns else f"{nns}.{name}"
                names[full] = s
                names.setdefault(name, s)
                ns = full.rpartition(".")[0] or None
            if t in ("record", "error"):
                for f in s.get("fields") or []:
                    if isinstance(f, dict):
                        collect(f.get("type"), ns)
            elif t == "array":
                collect(s.get("items"), ns)
            elif t == "map":
                collect(s.get("values"), ns)
            elif isinstance(t, (dict, list)):
                collect(t, ns)

    collect(schema, None)
    bad = False
    memo: dict[int, int] = {}

    def min_size(s: Any, stack: frozenset) -> int:
        nonlocal bad
        if isinstance(s, str):
            if s == "null":
                return 0
            if s in ("boolean", "int", "long", "bytes", "string"):
                return 1
            if s == "float":
                return 4
            if s == "double":
                return 8
            ref = names.get(s)
            if ref is None:
                return 1  # unknown name: fastavro will refuse it anyway
            return min_size(ref, stack)
        if isinstance(s, list):  # union: index varint + smallest branch
            return 1 + min((min_size(b, stack) for b in s), default=0)
        if not isinstance(s, dict):
            return 1
        key = id(s)
        if key in memo:
            return memo[key]
        t = s.get("type")
        if t in ("record", "error"):
            if key in stack:
                return 0  # recursion: reached again only through a union/array (>= 1 byte)
            st = stack | {key}
            size = sum(min_size(f.get("type"), st) for f in s.get("fields") or [] if isinstance(f, dict))
        elif t == "enum":
            size = 1
        elif t == "fixed":
            size = s.get("size", 0) if isinstance(s.get("size"), int) else 0
        elif t == "array":
            if min_size(s.get("items"), stack) == 0:
                bad = True
            size = 1
        elif t == "map":
            min_size(s.get("values"), stack)  # keys take >= 1 byte each
            size = 1
        else:
            size = min_size(t, stack)
        memo[key] = size
        return size

    min_size(schema, frozenset())
    return bad


def read_avro_metadata(data: bytes, schema: dict | None = None, *, allow_empty: bool = False) -> dict | None:
    """Read the single record of a Hudi Avro timeline file.

    Decodes with the writer schema embedded in the file, resolved to ``schema`` as reader schema
    when given (what Java does with its compiled class schema). Empty data raises
    :class:`InvalidTimelineError` unless ``allow_empty`` (then returns None). Anything that is not
    a container file with exactly one record (of record type) raises :class:`InvalidTimelineError`
    with a short reason; data over :data:`MAX_METADATA_BYTES` is refused unread.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise InvalidTimelineError(f"timeline file content must be bytes, got {type(data).__name__}")
    n = len(data)
    if n > MAX_METADATA_BYTES:
        raise InvalidTimelineError(f"Avro timeline file too large ({n} bytes > {MAX_METADATA_BYTES})")
    if n == 0:
        if allow_empty:
            return None
        raise InvalidTimelineError("Avro timeline file is empty")
    reason = None
    recs: list = []
    try:
        rdr = fastavro.reader(io.BytesIO(bytes(data)), reader_schema=schema)
        if _zero_size_array_items(rdr.writer_schema):
            reason = "writer schema has an array of zero-size items"
        else:
            recs = list(itertools.islice(rdr, 2))  # a second record (or junk after the first) fails
    except Exception as e:  # fastavro raises many types on damaged input (ValueError, EOFError, ...)
        msg = str(e).replace("\n", " ")
        if len(msg) > 200:
            msg = msg[:200] + "..."
        reason = f"{type(e).__name__}: {msg}" if msg else type(e).__name__
    if reason is not None:
        raise InvalidTimelineError(f"unreadable Avro timeline file: {reason}")
    if len(recs) != 1:
        found = "more" if recs else "none"
        raise InvalidTimelineError(f"Avro timeline file must hold exactly one record, found {found}")
    if not isinstance(recs[0], dict):
        raise InvalidTimelineError(f"Avro timeline record is not a record (got {type(recs[0]).__name__})")
    return recs[0]


def is_clustering_request(data: bytes, *, strict: bool = False) -> bool:
    """Hudi's rule for a pending replacecommit: is its ``.requested`` file a clustering plan?

    True iff the file is non-empty, deserializes as HoodieRequestedReplaceMetadata and has
    ``operationType == "CLUSTER"`` (``ClusteringUtils.getRequestedReplaceMetadata`` /
    ``getClusteringPlan``). Empty → False (insert_overwrite and similar write empty files).

    Unparseable content: Java does **not** treat it as "not clustering". In 0.14/0.15
    ``getRequestedReplaceMetadata`` only short-circuits on empty content, then calls
    ``deserializeRequestedReplaceMetadata``; an IOException becomes a HoodieIOException in
    ``getClusteringPlan`` and other Avro errors propagate (1.x retries an emptiness check, then
    rethrows). So Java fails on such a table. By default this returns False (status display);
    pass ``strict=True`` to get :class:`InvalidTimelineError` like Java, which is what a writer
    deciding which file groups are free should do.
    """
    if data is None or len(data) == 0:
        return False
    try:
        rec = read_avro_metadata(data, REQUESTED_REPLACE_METADATA)
    except InvalidTimelineError:
        if strict:
            raise
        return False
    return rec.get("operationType") == "CLUSTER"
