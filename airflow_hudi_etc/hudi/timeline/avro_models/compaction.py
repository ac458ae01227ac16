"""The compaction plan (``HoodieCompactionPlan``) with our link operations: schema and builders."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ._build import (
    _s, _opt, _arr, _map, _f, _rec, _version, _opt_str_field, _opt_str_map_field, _parse, _req_str, _opt_str,
    _str_list, _bare_name, _string_map, _double_map,
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
