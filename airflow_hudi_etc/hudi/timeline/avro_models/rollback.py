"""The rollback plan and the rollback metadata (``HoodieRollbackPlan``, ``HoodieRollbackMetadata``):
schemas and builders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._build import (
    _s, _opt, _arr, _map, _f, _rec, _version, _opt_str_field, _parse, _req_str, _str_list, _long_map,
    _instant_info_rec,
)


def _instant_info() -> dict:  # HoodieInstantInfo.avsc
    return _rec("HoodieInstantInfo", [_f("commitTime", _s()), _f("action", _s())])


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
