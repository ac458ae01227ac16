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
"""

from __future__ import annotations

import hashlib
import io
import itertools
from collections.abc import Iterable, Mapping
from typing import Any

import fastavro

from ..errors import InvalidTimelineError

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

NAMESPACE = "org.apache.hudi.avro.model"

#: refuse timeline files larger than this (a real plan is a few KB; a huge one is damage)
MAX_METADATA_BYTES = 512 * 1024 * 1024

_NO_DEFAULT = object()

# --------------------------------------------------------------------------- schema helpers


def _s() -> dict:
    return {"type": "string", "avro.java.string": "String"}


def _opt(t: Any) -> list:
    return ["null", t]


def _arr(items: Any) -> dict:
    return {"type": "array", "items": items}


def _map(values: Any) -> dict:
    # Java's generated schemas carry the string-type prop on the map (its keys are strings)
    return {"type": "map", "values": values, "avro.java.string": "String"}


def _f(name: str, type_: Any, default: Any = _NO_DEFAULT, doc: str | None = None) -> dict:
    f: dict = {"name": name, "type": type_}
    if doc:
        f["doc"] = doc
    if default is not _NO_DEFAULT:
        f["default"] = default
    return f


def _rec(name: str, fields: list, doc: str | None = None) -> dict:
    r: dict = {"type": "record", "name": name, "namespace": NAMESPACE, "fields": fields}
    if doc:
        r["doc"] = doc
    return r


def _version(default: int = 1) -> dict:
    return _f("version", ["int", "null"], default)


def _opt_str_field(name: str, doc: str | None = None) -> dict:
    return _f(name, _opt(_s()), None, doc)


def _opt_str_map_field(name: str) -> dict:
    return _f(name, _opt(_map(_s())), None)


# Named types. Each schema below is parsed on its own, so every builder returns a fresh
# definition; inside one schema a named type is defined once and then referenced by full name.


def _instant_info() -> dict:  # HoodieInstantInfo.avsc
    return _rec("HoodieInstantInfo", [_f("commitTime", _s()), _f("action", _s())])


def _action_instant() -> dict:  # inline in HoodieCleanerPlan.avsc
    return _rec("HoodieActionInstant", [_f("timestamp", _s()), _f("action", _s()), _f("state", _s())])


def _clean_file_info() -> dict:  # inline in HoodieCleanerPlan.avsc
    return _rec(
        "HoodieCleanFileInfo",
        [_opt_str_field("filePath"), _f("isBootstrapBaseFile", _opt("boolean"), None)],
    )


def _clean_partition_metadata() -> dict:  # HoodieCleanPartitionMetadata.avsc
    return _rec(
        "HoodieCleanPartitionMetadata",
        [
            _f("partitionPath", _s()),
            _f("policy", _s()),
            _f("deletePathPatterns", _arr(_s())),
            _f("successDeleteFiles", _arr(_s())),
            _f("failedDeleteFiles", _arr(_s())),
            _f("isPartitionDeleted", _opt("boolean"), None),
        ],
    )


def _compaction_strategy() -> dict:  # HoodieCompactionStrategy.avsc
    return _rec(
        "HoodieCompactionStrategy",
        [
            _opt_str_field(
                "compactorClassName",
                "The class name that is provided here should extend CompactionExecutionStrategy abstract class, "
                "idea is that the plan generator will also provide the execution strategy to use.",
            ),
            _f(
                "strategyParams",
                _opt(_map(_s())),
                None,
                "These parameters play a key role in determining which action type it is i.e. compaction or "
                "logcompaction and it will also include configs that determine how compaction needs to be executed.",
            ),
            _version(1),
        ],
    )


def _link_operation() -> dict:  # ours (not in Hudi)
    return _rec(
        "HoodieEtcLinkOperation",
        [_opt_str_field("link"), _opt_str_field("target")],
        doc="airflow-hudi-etc partial compaction: 'link' (a new log file name in the new slice) "
        "re-exposes 'target' (an existing log file name of the compacted slice).",
    )


def _compaction_operation() -> dict:  # inline in HoodieCompactionOperation.avsc
    return _rec(
        "HoodieCompactionOperation",
        [
            # baseInstantTime and fileId have no default in Hudi's avsc (pitfall 12): always written
            _f("baseInstantTime", _opt(_s())),
            _f("deltaFilePaths", _opt(_arr(_s())), None),
            _opt_str_field("dataFilePath"),
            _f("fileId", _opt(_s())),
            _opt_str_field("partitionPath"),
            _f("metrics", _opt(_map("double")), None),
            _opt_str_field("bootstrapFilePath"),  # named externalDataFilePath in very old avsc
            # Our extension. Avro spec, "Schema Resolution", records: "if the writer's record contains
            # a field with a name not present in the reader's record, the writer's value for that
            # field is ignored". Java's ResolvingGrammarGenerator turns such a writer-only field into
            # a skip action, so a stock SpecificDatumReader<HoodieCompactionPlan> skips these bytes
            # and never needs a class for HoodieEtcLinkOperation (tests simulate this with the
            # schema embedded in a real Java-written plan as the reader schema).
            _f("linkOperations", _opt(_arr(_link_operation())), None),
        ],
    )


def _rollback_request() -> dict:  # inline in HoodieRollbackPlan.avsc
    return _rec(
        "HoodieRollbackRequest",
        [
            _f("partitionPath", _s()),
            _opt_str_field("fileId"),
            _opt_str_field("latestBaseInstant"),
            _f("filesToBeDeleted", {"type": "array", "items": _s(), "default": []}, []),
            _f("logBlocksToBeDeleted", _opt(_map("long")), None),
        ],
    )


def _rollback_partition_metadata() -> dict:  # inline in HoodieRollbackMetadata.avsc (0.14/0.15)
    return _rec(
        "HoodieRollbackPartitionMetadata",
        [
            _f("partitionPath", _s()),
            _f("successDeleteFiles", _arr(_s())),
            _f("failedDeleteFiles", _arr(_s())),
            _f("rollbackLogFiles", _opt(_map("long")), None),
            # called writtenLogFiles in older avsc; has a default on both sides, so either is fine
            _f("logFilesFromFailedCommit", _opt(_map("long")), None),
        ],
    )


def _slice_info() -> dict:  # HoodieSliceInfo.avsc
    return _rec(
        "HoodieSliceInfo",
        [
            _opt_str_field("dataFilePath"),
            _f("deltaFilePaths", _opt(_arr(_s())), None),
            _f("fileId", _opt(_s())),  # no default in Hudi's avsc
            _opt_str_field("partitionPath"),
            _opt_str_field("bootstrapFilePath"),
            _version(1),
        ],
    )


def _clustering_group() -> dict:  # HoodieClusteringGroup.avsc
    return _rec(
        "HoodieClusteringGroup",
        [
            _f("slices", _opt(_arr(_slice_info())), None),
            _f("metrics", _opt(_map("double")), None),
            _f("numOutputFileGroups", ["int", "null"], 1),
            _version(1),
        ],
    )


def _clustering_strategy() -> dict:  # HoodieClusteringStrategy.avsc
    return _rec(
        "HoodieClusteringStrategy",
        [_opt_str_field("strategyClassName"), _opt_str_map_field("strategyParams"), _version(1)],
    )


def _clustering_plan() -> dict:  # HoodieClusteringPlan.avsc (superset of 0.x and 1.x)
    return _rec(
        "HoodieClusteringPlan",
        [
            _f("inputGroups", _opt(_arr(_clustering_group())), None),
            # old avsc: ["HoodieClusteringStrategy","null"] default null (spec-invalid): null first here
            _f("strategy", _opt(_clustering_strategy()), None),
            _opt_str_map_field("extraMetadata"),
            _version(1),
            _f("preserveHoodieMetadata", _opt("boolean"), None),
            _f("missingSchedulePartitions", _opt(_arr(_s())), None),  # 1.x addition
        ],
    )


# --------------------------------------------------------------------------- the six schemas


def _parse(schema: dict) -> dict:
    return fastavro.parse_schema(schema)


COMPACTION_PLAN = _parse(
    _rec(  # HoodieCompactionOperation.avsc; field set of the v8 file + our linkOperations
        "HoodieCompactionPlan",
        [
            _f("operations", _opt(_arr(_compaction_operation())), None),
            _opt_str_map_field("extraMetadata"),
            _version(1),  # current plans are version 2 (bare file names)
            _f("strategy", _opt(_compaction_strategy()), None),  # added for log compaction
            _f("preserveHoodieMetadata", ["boolean", "null"], False),
            _f("missingSchedulePartitions", _opt(_arr(_s())), None),  # 1.x addition
        ],
    )
)

CLEANER_PLAN = _parse(
    _rec(  # HoodieCleanerPlan.avsc, newest field set
        "HoodieCleanerPlan",
        [
            _f("earliestInstantToRetain", _opt(_action_instant()), None),
            _f("lastCompletedCommitTimestamp", _s(), ""),
            _f("policy", _s()),
            # deprecated, replaced by filePathsToBeDeletedPerPartition (Java v2 plans write {})
            _f("filesToBeDeletedPerPartition", _opt(_map(_arr(_s()))), None),
            _version(1),  # current plans are version 2
            _f(
                "filePathsToBeDeletedPerPartition",
                _opt(_map(_arr(_clean_file_info()))),
                None,
                "This field replaces the field filesToBeDeletedPerPartition",
            ),
            _f("partitionsToBeDeleted", _opt(_arr(_s())), None, "partitions to be deleted"),
            _opt_str_map_field("extraMetadata"),
        ],
    )
)

_CPM = NAMESPACE + ".HoodieCleanPartitionMetadata"

CLEAN_METADATA = _parse(
    _rec(  # HoodieCleanMetadata.avsc, superset of the versions in the index
        "HoodieCleanMetadata",
        [
            _f("startCleanTime", _s()),
            _f("timeTakenInMillis", "long"),
            _f("totalFilesDeleted", "int"),
            _f("earliestCommitToRetain", _s()),
            _f("lastCompletedCommitTimestamp", _s(), ""),
            _f("partitionMetadata", _map(_clean_partition_metadata())),
            _version(1),  # current metadata is version 2
            _f("bootstrapPartitionMetadata", _opt(_map(_CPM)), None),
            _opt_str_map_field("extraMetadata"),
            # only one avsc version in the index has a top-level policy (with default ""); the
            # mainline 0.14+ class has none. Harmless to readers that lack it.
            _f("policy", _s(), ""),
        ],
    )
)

ROLLBACK_PLAN = _parse(
    _rec(  # HoodieRollbackPlan.avsc (= schema in the v6 fixture)
        "HoodieRollbackPlan",
        [
            _f("instantToRollback", _opt(_instant_info()), None, "Hoodie instant that needs to be rolled back"),
            _f("RollbackRequests", _opt(_arr(_rollback_request())), None),  # capital R, as in Hudi
            _version(1),
        ],
    )
)

ROLLBACK_METADATA = _parse(
    _rec(  # HoodieRollbackMetadata.avsc (= schema in the v6 fixture)
        "HoodieRollbackMetadata",
        [
            _f("startRollbackTime", _s()),
            _f("timeTakenInMillis", "long"),
            _f("totalFilesDeleted", "int"),
            _f("commitsRollback", _arr(_s())),
            _f("partitionMetadata", _map(_rollback_partition_metadata())),
            _version(1),
            _f("instantsRollback", {"type": "array", "items": _instant_info(), "default": []}, []),
        ],
    )
)

SAVEPOINT_METADATA = _parse(
    _rec(  # HoodieSavepointMetadata.avsc (0.14/0.15): file names per partition path
        "HoodieSavepointMetadata",
        [
            _f("savepointedBy", _s()),
            _f("savepointedAt", "long"),
            _f("comments", _s()),
            _f("partitionMetadata", _map(_rec("HoodieSavepointPartitionMetadata", [
                _f("partitionPath", _s()),
                _f("savepointDataFile", _arr(_s())),
            ]))),
            _version(1),
        ],
    )
)

REQUESTED_REPLACE_METADATA = _parse(
    _rec(  # HoodieRequestedReplaceMetadata.avsc with the two invalid defaults fixed
        "HoodieRequestedReplaceMetadata",
        [
            _f("operationType", _opt(_s()), None),  # Hudi: default "" (invalid on a null-first union)
            _f("clusteringPlan", _opt(_clustering_plan()), None),  # Hudi: [plan, null] default null
            _opt_str_map_field("extraMetadata"),
            _version(1),
        ],
    )
)

# --------------------------------------------------------------------------- write / read


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


# --------------------------------------------------------------------------- builder helpers


def _req_str(name: str, v: Any, *, empty_ok: bool = False) -> str:
    if not isinstance(v, str) or (not empty_ok and not v):
        raise ValueError(f"{name} must be a {'string' if empty_ok else 'non-empty string'}, got {v!r}")
    return v


def _opt_str(name: str, v: Any) -> str | None:
    if v is None:
        return None
    return _req_str(name, v, empty_ok=True)


def _str_list(name: str, v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
        raise ValueError(f"{name} must be a list of strings, got {v!r}")
    out = list(v)
    for x in out:
        if not isinstance(x, str):
            raise ValueError(f"{name} must hold strings, got {x!r}")
    return out


def _bare_name(name: str, v: Any) -> str:
    s = _req_str(name, v)
    if "/" in s or "\\" in s or s in (".", ".."):
        raise ValueError(f"{name} must be a bare file name (plan version 2), got {s!r}")
    return s


def _string_map(name: str, m: Any) -> dict[str, str]:
    """map<string> for extraMetadata / strategy params: str keys; str/bool/int/float values."""
    if m is None:
        return {}
    if not isinstance(m, Mapping):
        raise ValueError(f"{name} must be a mapping, got {type(m).__name__}")
    out: dict[str, str] = {}
    for k, v in m.items():
        if not isinstance(k, str):
            raise ValueError(f"{name} keys must be strings, got {k!r}")
        if isinstance(v, bool):
            out[k] = "true" if v else "false"  # Java's Boolean.toString
        elif isinstance(v, (str, int, float)):
            out[k] = str(v)
        else:
            raise ValueError(f"{name}[{k!r}] must be a string, number or bool, got {v!r}")
    return out


def _double_map(name: str, m: Any) -> dict[str, float]:
    if m is None:
        return {}
    if not isinstance(m, Mapping):
        raise ValueError(f"{name} must be a mapping, got {type(m).__name__}")
    out = {}
    for k, v in m.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, (int, float)):
            raise ValueError(f"{name} must map strings to numbers, got {k!r}: {v!r}")
        out[k] = float(v)
    return out


def _long_map(name: str, m: Any) -> dict[str, int]:
    if m is None:
        return {}
    if not isinstance(m, Mapping):
        raise ValueError(f"{name} must be a mapping, got {type(m).__name__}")
    out = {}
    for k, v in m.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, int):
            raise ValueError(f"{name} must map strings to integers, got {k!r}: {v!r}")
        out[k] = v
    return out


def _instant_info_rec(name: str, v: Any) -> dict:
    if isinstance(v, Mapping):
        ts, action = v.get("commitTime"), v.get("action")
    elif isinstance(v, (tuple, list)) and len(v) == 2:
        ts, action = v
    else:
        raise ValueError(f"{name} must be (instant, action), got {v!r}")
    return {"commitTime": _req_str(f"{name} instant", ts), "action": _req_str(f"{name} action", action)}


# --------------------------------------------------------------------------- compaction


def compaction_operation(
    base_instant: str,
    file_id: str,
    partition_path: str,
    data_file_name: str | None,
    delta_file_names: Iterable[str],
    metrics: Mapping[str, float] | None = None,
    link_operations: Iterable | None = None,
    *,
    bootstrap_file_path: str | None = None,
) -> dict:
    """One HoodieCompactionOperation of a version-2 plan (bare file names).

    ``partition_path`` is relative ("" when non-partitioned); ``data_file_name`` the slice's base
    file name or None; ``delta_file_names`` the log file names to merge. ``metrics`` are doubles
    (Spark writes TOTAL_LOG_FILES, TOTAL_LOG_FILES_SIZE, TOTAL_IO_READ_MB, TOTAL_IO_WRITE_MB,
    TOTAL_IO_MB). ``link_operations`` (our extension) are ``(link, target)`` pairs, mappings with
    those keys, or objects with ``.link``/``.target``: ``link`` is a new log file name in the
    new slice, ``target`` the existing log file name it re-exposes. None leaves the field null.
    """
    links = None
    if link_operations is not None:
        links = []
        for lk in link_operations:
            if isinstance(lk, Mapping):
                link, target = lk.get("link"), lk.get("target")
            elif isinstance(lk, (tuple, list)) and len(lk) == 2:
                link, target = lk
            elif hasattr(lk, "link") and hasattr(lk, "target"):
                link, target = lk.link, lk.target
            else:
                raise ValueError(f"link operation must be (link, target), got {lk!r}")
            links.append({"link": _bare_name("link", link), "target": _bare_name("target", target)})
    return {
        "baseInstantTime": _req_str("base_instant", base_instant),
        "deltaFilePaths": [_bare_name("delta file name", x) for x in _str_list("delta_file_names", delta_file_names)],
        "dataFilePath": None if data_file_name is None else _bare_name("data_file_name", data_file_name),
        "fileId": _req_str("file_id", file_id),
        "partitionPath": _req_str("partition_path", partition_path, empty_ok=True),
        "metrics": _double_map("metrics", metrics),
        "bootstrapFilePath": _opt_str("bootstrap_file_path", bootstrap_file_path),
        "linkOperations": links,
    }


def compaction_strategy(
    compactor_class_name: str | None = None, strategy_params: Mapping | None = None, version: int = 1
) -> dict:
    """HoodieCompactionStrategy (used by log compaction; regular compaction plans leave it null)."""
    return {
        "compactorClassName": _opt_str("compactor_class_name", compactor_class_name),
        "strategyParams": None if strategy_params is None else _string_map("strategy_params", strategy_params),
        "version": int(version),
    }


def compaction_plan(
    operations: Iterable[Mapping],
    extra_metadata: Mapping | None = None,
    strategy: Mapping | None = None,
    version: int = 2,
    *,
    preserve_hoodie_metadata: bool = False,
    missing_schedule_partitions: Iterable[str] | None = None,
) -> dict:
    """HoodieCompactionPlan. ``extra_metadata`` is a map<string>: our plan metadata (threshold,
    strategy name, ...) goes here; numbers and bools are stringified. A file group may appear
    only once. ``preserve_hoodie_metadata`` defaults to False, what Spark writes for a regular
    compaction plan (the flag matters for log compaction)."""
    ops = []
    seen = set()
    for op in operations:
        if not isinstance(op, Mapping):
            raise ValueError(f"operation must be a mapping (see compaction_operation), got {op!r}")
        key = (op.get("partitionPath"), op.get("fileId"))
        if key in seen:
            raise ValueError(f"file group {key[0]!r}/{key[1]!r} appears twice in the plan")
        seen.add(key)
        ops.append(dict(op))
    if strategy is not None and not isinstance(strategy, Mapping):
        raise ValueError("strategy must be a mapping (see compaction_strategy)")
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"version must be a positive int, got {version!r}")
    return {
        "operations": ops,
        "extraMetadata": _string_map("extra_metadata", extra_metadata),
        "version": version,
        "strategy": None if strategy is None else compaction_strategy(
            strategy.get("compactorClassName"), strategy.get("strategyParams"), strategy.get("version", 1) or 1
        ),
        "preserveHoodieMetadata": bool(preserve_hoodie_metadata),
        "missingSchedulePartitions": None
        if missing_schedule_partitions is None
        else _str_list("missing_schedule_partitions", missing_schedule_partitions),
    }


# --------------------------------------------------------------------------- rollback


def rollback_request(
    partition_path: str,
    file_id: str | None,
    latest_base_instant: str | None,
    files_to_be_deleted: Iterable[str],
    log_blocks_to_be_deleted: Mapping[str, int] | None = None,
) -> dict:
    """HoodieRollbackRequest. Java writes "" for fileId/latestBaseInstant of a pure file-deletion
    request (seen in the v6 fixture); None is turned into "" the same way.
    ``log_blocks_to_be_deleted`` maps log file path → size."""
    return {
        "partitionPath": _req_str("partition_path", partition_path, empty_ok=True),
        "fileId": "" if file_id is None else _req_str("file_id", file_id, empty_ok=True),
        "latestBaseInstant": "" if latest_base_instant is None else _req_str(
            "latest_base_instant", latest_base_instant, empty_ok=True
        ),
        "filesToBeDeleted": _str_list("files_to_be_deleted", files_to_be_deleted),
        "logBlocksToBeDeleted": _long_map("log_blocks_to_be_deleted", log_blocks_to_be_deleted),
    }


def rollback_plan(
    instant_to_rollback: tuple[str, str] | Mapping, requests: Iterable[Mapping], version: int = 1
) -> dict:
    """HoodieRollbackPlan for ``(instant, action)`` (e.g. ``("2025…", "deltacommit")``)."""
    reqs = []
    for r in requests:
        if not isinstance(r, Mapping):
            raise ValueError(f"rollback request must be a mapping (see rollback_request), got {r!r}")
        reqs.append(dict(r))
    return {
        "instantToRollback": _instant_info_rec("instant_to_rollback", instant_to_rollback),
        "RollbackRequests": reqs,
        "version": int(version),
    }


def rollback_partition_metadata(
    partition_path: str,
    success_delete_files: Iterable[str] = (),
    failed_delete_files: Iterable[str] = (),
    rollback_log_files: Mapping[str, int] | None = None,
    log_files_from_failed_commit: Mapping[str, int] | None = None,
) -> dict:
    """HoodieRollbackPartitionMetadata (log file maps are path → size)."""
    return {
        "partitionPath": _req_str("partition_path", partition_path, empty_ok=True),
        "successDeleteFiles": _str_list("success_delete_files", success_delete_files),
        "failedDeleteFiles": _str_list("failed_delete_files", failed_delete_files),
        "rollbackLogFiles": _long_map("rollback_log_files", rollback_log_files),
        "logFilesFromFailedCommit": _long_map("log_files_from_failed_commit", log_files_from_failed_commit),
    }


def rollback_metadata(
    start_rollback_time: str,
    commits_rollback: Iterable[str],
    partition_metadata: Mapping[str, Mapping],
    instants_rollback: Iterable,
    time_taken_ms: int = 0,
) -> dict:
    """HoodieRollbackMetadata. ``partition_metadata`` maps partition → a mapping with the keys of
    :func:`rollback_partition_metadata` (missing keys get its defaults); ``instants_rollback`` holds
    ``(instant, action)`` pairs. ``totalFilesDeleted`` counts successful deletes, as Java does."""
    if not isinstance(partition_metadata, Mapping):
        raise ValueError("partition_metadata must map partition path → metadata")
    parts = {}
    for p, m in partition_metadata.items():
        if not isinstance(m, Mapping):
            raise ValueError(f"partition_metadata[{p!r}] must be a mapping")
        parts[_req_str("partition", p, empty_ok=True)] = rollback_partition_metadata(
            m.get("partitionPath", p),
            m.get("successDeleteFiles", ()),
            m.get("failedDeleteFiles", ()),
            m.get("rollbackLogFiles"),
            m.get("logFilesFromFailedCommit"),
        )
    if isinstance(time_taken_ms, bool) or not isinstance(time_taken_ms, int):
        raise ValueError(f"time_taken_ms must be an int, got {time_taken_ms!r}")
    return {
        "startRollbackTime": _req_str("start_rollback_time", start_rollback_time),
        "timeTakenInMillis": time_taken_ms,
        "totalFilesDeleted": sum(len(m["successDeleteFiles"]) for m in parts.values()),
        "commitsRollback": _str_list("commits_rollback", commits_rollback),
        "partitionMetadata": parts,
        "version": 1,
        "instantsRollback": [_instant_info_rec("instants_rollback", i) for i in instants_rollback],
    }


# --------------------------------------------------------------------------- clean


def clean_file_info(file_path: str, is_bootstrap_base_file: bool = False) -> dict:
    """HoodieCleanFileInfo (the cleaner plan v2 entry for one file to delete)."""
    return {"filePath": _req_str("file_path", file_path), "isBootstrapBaseFile": bool(is_bootstrap_base_file)}


def cleaner_plan(
    earliest_instant_to_retain: tuple | Mapping | None = None,
    policy: str = "KEEP_LATEST_COMMITS",
    file_paths_to_be_deleted_per_partition: Mapping[str, Iterable] | None = None,
    partitions_to_be_deleted: Iterable[str] | None = None,
    *,
    last_completed_commit_timestamp: str = "",
    extra_metadata: Mapping | None = None,
    version: int = 2,
) -> dict:
    """HoodieCleanerPlan, version 2. ``earliest_instant_to_retain`` is ``(instant, action[, state])``
    (state defaults to COMPLETED) or None; each partition's files are paths, ``(path, is_bootstrap)``
    pairs or :func:`clean_file_info` mappings. The deprecated v1 field is written as ``{}`` like
    Java's v2 planner does."""
    eitr = None
    if earliest_instant_to_retain is not None:
        v = earliest_instant_to_retain
        if isinstance(v, Mapping):
            ts, action, state = v.get("timestamp"), v.get("action"), v.get("state", "COMPLETED")
        elif isinstance(v, (tuple, list)) and len(v) in (2, 3):
            ts, action, state = (*v, "COMPLETED") if len(v) == 2 else v
        else:
            raise ValueError(f"earliest_instant_to_retain must be (instant, action[, state]), got {v!r}")
        eitr = {
            "timestamp": _req_str("earliest instant", ts),
            "action": _req_str("earliest action", action),
            "state": _req_str("earliest state", state),
        }
    per_part: dict[str, list] = {}
    for p, files in (file_paths_to_be_deleted_per_partition or {}).items():
        infos = []
        for f in files if not isinstance(files, str) else [files]:
            if isinstance(f, str):
                infos.append(clean_file_info(f))
            elif isinstance(f, Mapping):
                infos.append(clean_file_info(f.get("filePath"), bool(f.get("isBootstrapBaseFile"))))
            elif isinstance(f, (tuple, list)) and len(f) == 2:
                infos.append(clean_file_info(f[0], f[1]))
            else:
                raise ValueError(f"file to clean must be a path or (path, is_bootstrap), got {f!r}")
        per_part[_req_str("partition", p, empty_ok=True)] = infos
    return {
        "earliestInstantToRetain": eitr,
        "lastCompletedCommitTimestamp": _req_str(
            "last_completed_commit_timestamp", last_completed_commit_timestamp, empty_ok=True
        ),
        "policy": _req_str("policy", policy),
        "filesToBeDeletedPerPartition": {},
        "version": int(version),
        "filePathsToBeDeletedPerPartition": per_part,
        "partitionsToBeDeleted": _str_list("partitions_to_be_deleted", partitions_to_be_deleted),
        "extraMetadata": _string_map("extra_metadata", extra_metadata),
    }


def clean_partition_metadata(
    partition_path: str,
    policy: str,
    success_delete_files: Iterable[str] = (),
    failed_delete_files: Iterable[str] = (),
    delete_path_patterns: Iterable[str] | None = None,
    is_partition_deleted: bool = False,
) -> dict:
    """HoodieCleanPartitionMetadata; ``delete_path_patterns`` defaults to the *names* of the
    success + failed files, as Java's cleaner records them (``deletePath.getName()``; the
    metadata table deletes its entries by these names)."""
    ok = _str_list("success_delete_files", success_delete_files)
    failed = _str_list("failed_delete_files", failed_delete_files)
    return {
        "partitionPath": _req_str("partition_path", partition_path, empty_ok=True),
        "policy": _req_str("policy", policy),
        "deletePathPatterns": [f.rstrip("/").rsplit("/", 1)[-1] for f in ok + failed]
        if delete_path_patterns is None
        else _str_list("delete_path_patterns", delete_path_patterns),
        "successDeleteFiles": ok,
        "failedDeleteFiles": failed,
        "isPartitionDeleted": bool(is_partition_deleted),
    }


def _clean_parts(name: str, m: Mapping | None) -> dict:
    if m is None:
        return {}
    if not isinstance(m, Mapping):
        raise ValueError(f"{name} must map partition path → metadata")
    out = {}
    for p, v in m.items():
        if not isinstance(v, Mapping):
            raise ValueError(f"{name}[{p!r}] must be a mapping")
        out[_req_str("partition", p, empty_ok=True)] = clean_partition_metadata(
            v.get("partitionPath", p),
            v.get("policy"),
            v.get("successDeleteFiles", ()),
            v.get("failedDeleteFiles", ()),
            v.get("deletePathPatterns"),
            bool(v.get("isPartitionDeleted")),
        )
    return out


def clean_metadata(
    start_clean_time: str,
    earliest_commit_to_retain: str | None,
    partition_metadata: Mapping[str, Mapping],
    time_taken_ms: int = 0,
    *,
    last_completed_commit_timestamp: str = "",
    bootstrap_partition_metadata: Mapping[str, Mapping] | None = None,
    extra_metadata: Mapping | None = None,
    version: int = 2,
    policy: str = "",
) -> dict:
    """HoodieCleanMetadata, version 2. Partition values take the keys of
    :func:`clean_partition_metadata`; ``totalFilesDeleted`` counts successful deletes (Java)."""
    parts = _clean_parts("partition_metadata", partition_metadata)
    if isinstance(time_taken_ms, bool) or not isinstance(time_taken_ms, int):
        raise ValueError(f"time_taken_ms must be an int, got {time_taken_ms!r}")
    return {
        "startCleanTime": _req_str("start_clean_time", start_clean_time),
        "timeTakenInMillis": time_taken_ms,
        "totalFilesDeleted": sum(len(m["successDeleteFiles"]) for m in parts.values()),
        "earliestCommitToRetain": "" if earliest_commit_to_retain is None else _req_str(
            "earliest_commit_to_retain", earliest_commit_to_retain, empty_ok=True
        ),
        "lastCompletedCommitTimestamp": _req_str(
            "last_completed_commit_timestamp", last_completed_commit_timestamp, empty_ok=True
        ),
        "partitionMetadata": parts,
        "version": int(version),
        "bootstrapPartitionMetadata": _clean_parts("bootstrap_partition_metadata", bootstrap_partition_metadata),
        "extraMetadata": _string_map("extra_metadata", extra_metadata),
        "policy": _req_str("policy", policy, empty_ok=True),
    }


# --------------------------------------------------------------------------- replace / clustering


def slice_info(
    file_id: str,
    partition_path: str,
    data_file_path: str | None = None,
    delta_file_paths: Iterable[str] = (),
    bootstrap_file_path: str | None = None,
) -> dict:
    """HoodieSliceInfo (one input file slice of a clustering group)."""
    return {
        "dataFilePath": _opt_str("data_file_path", data_file_path),
        "deltaFilePaths": _str_list("delta_file_paths", delta_file_paths),
        "fileId": _req_str("file_id", file_id),
        "partitionPath": _req_str("partition_path", partition_path, empty_ok=True),
        "bootstrapFilePath": _opt_str("bootstrap_file_path", bootstrap_file_path),
        "version": 1,
    }


def clustering_group(
    slices: Iterable[Mapping], metrics: Mapping | None = None, num_output_file_groups: int = 1
) -> dict:
    """HoodieClusteringGroup."""
    return {
        "slices": [dict(s) for s in slices],
        "metrics": _double_map("metrics", metrics),
        "numOutputFileGroups": int(num_output_file_groups),
        "version": 1,
    }


def clustering_plan(
    input_groups: Iterable[Mapping],
    strategy_class_name: str | None = None,
    strategy_params: Mapping | None = None,
    extra_metadata: Mapping | None = None,
    *,
    preserve_hoodie_metadata: bool = True,
    version: int = 1,
) -> dict:
    """HoodieClusteringPlan."""
    return {
        "inputGroups": [dict(g) for g in input_groups],
        "strategy": {
            "strategyClassName": _opt_str("strategy_class_name", strategy_class_name),
            "strategyParams": _string_map("strategy_params", strategy_params),
            "version": 1,
        },
        "extraMetadata": _string_map("extra_metadata", extra_metadata),
        "version": int(version),
        "preserveHoodieMetadata": bool(preserve_hoodie_metadata),
        "missingSchedulePartitions": None,
    }


def requested_replace_metadata(
    operation_type: str, clustering_plan: Mapping | None = None, extra_metadata: Mapping | None = None
) -> dict:
    """HoodieRequestedReplaceMetadata for a ``.replacecommit.requested`` file.

    ``operation_type`` is a WriteOperationType name (CLUSTER, INSERT_OVERWRITE, ...); a CLUSTER
    request needs its ``clustering_plan``."""
    op = _req_str("operation_type", operation_type)
    if op == "CLUSTER" and clustering_plan is None:
        raise ValueError("a CLUSTER request needs a clustering plan")
    if clustering_plan is not None and not isinstance(clustering_plan, Mapping):
        raise ValueError("clustering_plan must be a mapping (see clustering_plan)")
    return {
        "operationType": op,
        "clusteringPlan": None if clustering_plan is None else dict(clustering_plan),
        "extraMetadata": _string_map("extra_metadata", extra_metadata),
        "version": 1,
    }
