"""The requested-replace metadata and its clustering plan (``HoodieRequestedReplaceMetadata``):
schemas and builders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._build import (
    _s, _opt, _arr, _map, _f, _rec, _version, _opt_str_field, _opt_str_map_field, _parse, _req_str, _opt_str,
    _str_list, _string_map, _double_map,
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
