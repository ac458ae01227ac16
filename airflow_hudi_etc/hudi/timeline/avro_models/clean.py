"""The cleaner plan and the clean metadata (``HoodieCleanerPlan``, ``HoodieCleanMetadata``): schemas and
builders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._build import (
    NAMESPACE, _s, _opt, _arr, _map, _f, _rec, _version, _opt_str_field, _opt_str_map_field, _parse, _req_str,
    _str_list, _string_map,
)


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
