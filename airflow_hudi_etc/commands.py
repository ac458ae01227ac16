"""The commands' handlers: a parsed command of :mod:`airflow_hudi_etc.contract` → one call of
:class:`airflow_hudi_etc.api.Table` → its result (a JSON-able dict; ``status`` without ``--json``:
the text it prints).

The CLI and the Spark job run the same handlers; only :class:`Runtime` differs (the local engine in
this process, or the job's SparkSession and its :class:`~airflow_hudi_etc.spark.engines.SparkEngine`).
This module imports neither Spark nor the Spark room: the commands that belong there (``pack-env``,
``py-files``, ``sync-catalog``) are handled in :mod:`airflow_hudi_etc.spark.commands`, which also
holds the table of every command. Everything heavy is imported inside the handlers, so the CLI's
``--help`` stays fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from .contract import storage_options_from_env


def _local_engine():
    from .hudi.write.writer import LocalEngine

    return LocalEngine()


@dataclass(frozen=True)
class Runtime:
    """Where a command runs. ``engine`` makes the engine of the commands that take one (write,
    schedule, execute): it is called by those alone, so a Spark job checks its executors only for
    a command that uses them. ``spark_session``: the SparkSession of a spark-submit job, else None."""

    engine: Callable[[], Any] = _local_engine
    spark_session: Any = None


def _table(a):
    """The table of this command: ``Table(--path, storage_options=$HUDI_ETC_STORAGE_OPTIONS)``."""
    from .api import Table

    return Table(a.path, storage_options=storage_options_from_env())


def cmd_init(a, rt: Runtime) -> dict:
    from .api import Table

    t = Table.create(a.path, table_name=a.table_name, record_key=a.record_key, precombine_field=a.precombine_field,
                     event_time_field=a.event_time_field, partition_field=a.partition_field, payload=a.payload,
                     exclusive_cleaner=a.exclusive_cleaner, table_version=a.table_version,
                     java_compaction=a.java_compaction, partition_urlencode=a.partition_urlencode,
                     storage_options=storage_options_from_env())
    return {"path": t.storage.base_uri, "table": a.table_name, "created": t.created}


def cmd_configure(a, rt: Runtime) -> dict:
    from .contract import COMMANDS

    names = [x.name for x in COMMANDS["configure"].args if x.name != "path"]
    return dict(_table(a).configure(**{n: getattr(a, n) for n in names}))


def cmd_drop_metadata_table(a, rt: Runtime) -> dict:
    return dict(_table(a).drop_metadata_table())


def cmd_write(a, rt: Runtime) -> dict:
    from .hudi.write.writer import read_input

    engine = rt.engine()
    res = _table(a).write(read_input(a.input), operation=a.operation, engine=engine)
    return {**res.as_dict(), "engine": engine.name}


def _check_output_file(path: str) -> None:
    """Refuse an ``--output`` file that cannot be written, before any work is done."""
    import os

    from .hudi.errors import InvalidInputError

    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise InvalidInputError(f"--output {path}: is a folder, give a file name")
    if not os.path.isdir(folder):
        raise InvalidInputError(f"--output {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise InvalidInputError(f"--output {path}: not writable")


def cmd_read(a, rt: Runtime) -> dict:
    import pyarrow.parquet as pq

    from .hudi.errors import InvalidInputError
    from .hudi.table.hudi_table import normalize_as_of

    as_of = normalize_as_of(a.as_of) if a.as_of is not None else None
    if a.incremental_start is not None or a.incremental_end is not None:
        return _read_incremental(a, as_of)
    _check_output_file(a.output)
    data = _table(a).read(read_optimized=a.read_optimized, as_of=as_of)
    try:
        pq.write_table(data, a.output)
    except OSError as e:
        raise InvalidInputError(f"--output {a.output}: cannot write it: {e.strerror or e}") from None
    return {"rows": data.num_rows, "output": a.output, "query": "read_optimized" if a.read_optimized else "snapshot",
            "as_of": as_of}


def _read_incremental(a, as_of) -> dict:
    import pyarrow.parquet as pq

    from .hudi.errors import InvalidInputError
    from .hudi.table.hudi_table import normalize_incremental_range

    if a.incremental_start is None:
        raise InvalidInputError("--incremental-end needs --incremental-start")
    if as_of is not None or a.read_optimized:
        raise InvalidInputError("an incremental read takes neither --as-of nor --read-optimized")
    start, end = normalize_incremental_range(a.incremental_start, a.incremental_end)
    _check_output_file(a.output)
    data = _table(a).read_incremental(start, end)
    try:
        pq.write_table(data, a.output)
    except OSError as e:
        raise InvalidInputError(f"--output {a.output}: cannot write it: {e.strerror or e}") from None
    return {"rows": data.num_rows, "output": a.output, "query": "incremental", "start": start, "end": end}


def cmd_status(a, rt: Runtime) -> dict | str:
    m = _table(a).status(sla=a.sla, include_slices=True).as_dict()
    if a.json:
        return m
    from .report import format_status

    return format_status(m)


def cmd_report(a, rt: Runtime) -> dict:
    return dict(_table(a).report(a.output, sla=a.sla))


def cmd_schedule(a, rt: Runtime) -> dict:
    return _table(a).compaction.schedule(a.data_latency, compaction_time=a.compaction_time, link_mode=a.link_mode,
                                         exact_split=a.exact_split, event_time_field=a.event_time_field,
                                         engine=rt.engine()).as_dict()


def cmd_execute(a, rt: Runtime) -> dict:
    return _table(a).compaction.execute(a.instant, engine=rt.engine()).as_dict()


def cmd_rollback(a, rt: Runtime) -> dict:
    return _table(a).compaction.rollback(a.instant).as_dict()


def cmd_unschedule(a, rt: Runtime) -> dict:
    return _table(a).compaction.unschedule(a.instant).as_dict()


def cmd_clean(a, rt: Runtime) -> dict:
    return dict(_table(a).clean(retain_commits=a.retain_commits))


def cmd_show_plan(a, rt: Runtime) -> dict:
    return dict(_table(a).compaction.plan(a.instant))


def cmd_reset_threshold(a, rt: Runtime) -> dict:
    return dict(_table(a).compaction.reset_threshold(to=a.to, instant=a.instant))


def cmd_validate(a, rt: Runtime) -> dict:
    return _table(a).validate().as_dict()


def cmd_repair_instant(a, rt: Runtime) -> dict:
    return dict(_table(a).repair_instant(a.instant))


#: the handler of every command of :data:`airflow_hudi_etc.contract.COMMANDS` that is a call of
#: the table API (the Spark room's commands are in :data:`airflow_hudi_etc.spark.commands.HANDLERS`)
HANDLERS: dict[str, Callable[[Any, Runtime], Any]] = {
    "init": cmd_init, "configure": cmd_configure, "drop-metadata-table": cmd_drop_metadata_table, "write": cmd_write,
    "read": cmd_read, "status": cmd_status, "report": cmd_report, "schedule": cmd_schedule, "execute": cmd_execute,
    "rollback": cmd_rollback, "unschedule": cmd_unschedule, "clean": cmd_clean, "show-plan": cmd_show_plan,
    "reset-threshold": cmd_reset_threshold, "validate": cmd_validate, "repair-instant": cmd_repair_instant,
}
