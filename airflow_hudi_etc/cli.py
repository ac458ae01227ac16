"""The ``hudi-etc`` command. Every command prints one JSON document on stdout.

Errors print ``{"error": {"code", "type", "message"}}`` on stdout, the message on stderr, and
exit with status 2 (bad input / refused) or 1 (unexpected failure).

A thin client of :class:`airflow_hudi_etc.api.Table`: the commands and their arguments are those
of :mod:`airflow_hudi_etc.contract` (the Spark job and the operators use the same definitions);
each command is argument → API call → printed result.

Storage options (fsspec; e.g. S3 ``key``/``secret``/``endpoint_url``/``client_kwargs``) come from
the environment variable ``HUDI_ETC_STORAGE_OPTIONS``, a JSON object — not from the command line,
where credentials would be visible to every user of the machine. Without it the filesystem's
defaults apply (S3: the ``AWS_*`` variables, profiles, instance roles). ``--engine spark`` jobs
inherit the variable; the driver ships the options to the executors inside the pickled tasks.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

from .contract import STORAGE_OPTIONS_ENV, build_parser, storage_options_from_env  # noqa: F401 - re-exported
from .hudi.errors import HudiEtcError


def _out(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


def _table(a):
    """The table of this command: ``Table(--path, storage_options=$HUDI_ETC_STORAGE_OPTIONS)``."""
    from .api import Table

    return Table(a.path, storage_options=storage_options_from_env())


def _engine(a):
    """The engine of this command: in a spark-submit job the job's SparkSession, else local."""
    spark = getattr(a, "spark_session", None)
    if spark is not None:
        from .spark.engines import SparkEngine

        engine = SparkEngine(spark)
        engine.check_executors()  # before the table is touched: executors lacking pyarrow fail once, typed
        return engine
    from .spark.engines import LocalEngine

    return LocalEngine()


def cmd_init(a) -> dict:
    from .api import Table

    t = Table.create(a.path, table_name=a.table_name, record_key=a.record_key, precombine_field=a.precombine_field,
                     event_time_field=a.event_time_field, partition_field=a.partition_field, payload=a.payload,
                     exclusive_cleaner=a.exclusive_cleaner, table_version=a.table_version,
                     java_compaction=a.java_compaction, partition_urlencode=a.partition_urlencode,
                     storage_options=storage_options_from_env())
    return {"path": t.storage.base_uri, "table": a.table_name, "created": t.created}


def cmd_configure(a) -> dict:
    from .contract import COMMANDS

    names = [x.name for x in COMMANDS["configure"].args if x.name != "path"]
    return dict(_table(a).configure(**{n: getattr(a, n) for n in names}))


def cmd_drop_metadata_table(a) -> dict:
    return dict(_table(a).drop_metadata_table())


def cmd_write(a) -> dict:
    from .hudi.write.writer import read_input

    engine = _engine(a)
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


def cmd_read(a) -> dict:
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


def cmd_status(a) -> dict | str:
    m = _table(a).status(sla=a.sla, include_slices=True).as_dict()
    if a.json:
        return m
    from .report import format_status

    return format_status(m)


def cmd_report(a) -> dict:
    return dict(_table(a).report(a.output, sla=a.sla))


def cmd_schedule(a) -> dict:
    return _table(a).compaction.schedule(a.data_latency, compaction_time=a.compaction_time, link_mode=a.link_mode,
                                         exact_split=a.exact_split, event_time_field=a.event_time_field,
                                         engine=_engine(a)).as_dict()


def cmd_execute(a) -> dict:
    return _table(a).compaction.execute(a.instant, engine=_engine(a)).as_dict()


def cmd_rollback(a) -> dict:
    return _table(a).compaction.rollback(a.instant).as_dict()


def cmd_unschedule(a) -> dict:
    return _table(a).compaction.unschedule(a.instant).as_dict()


def cmd_clean(a) -> dict:
    return dict(_table(a).clean(retain_commits=a.retain_commits))


def cmd_show_plan(a) -> dict:
    return dict(_table(a).compaction.plan(a.instant))


def cmd_reset_threshold(a) -> dict:
    return dict(_table(a).compaction.reset_threshold(to=a.to, instant=a.instant))


def cmd_validate(a) -> dict:
    return _table(a).validate().as_dict()


def cmd_repair_instant(a) -> dict:
    return dict(_table(a).repair_instant(a.instant))


def cmd_pack_env(a) -> dict:
    from .spark.shipping import pack_env

    return pack_env(a.output, extras=tuple(a.extra), python=a.python)


def cmd_py_files(a) -> dict:
    from .spark.shipping import package_zip

    return {"py_files": package_zip()}


def cmd_sync_catalog(a) -> dict:
    from .spark.catalog import sync_catalog

    return sync_catalog(a.path, database=a.database, table=a.table, spark=getattr(a, "spark_session", None),
                        metastore_uri=a.metastore_uri, metastore_dir=a.metastore_dir, warehouse_dir=a.warehouse_dir)


#: the function of every command of :data:`airflow_hudi_etc.contract.COMMANDS`
HANDLERS: dict[str, Callable[[Any], Any]] = {
    "init": cmd_init, "configure": cmd_configure, "drop-metadata-table": cmd_drop_metadata_table, "write": cmd_write, "read": cmd_read,
    "status": cmd_status, "report": cmd_report, "schedule": cmd_schedule, "execute": cmd_execute,
    "rollback": cmd_rollback, "unschedule": cmd_unschedule, "clean": cmd_clean, "show-plan": cmd_show_plan,
    "reset-threshold": cmd_reset_threshold, "validate": cmd_validate, "repair-instant": cmd_repair_instant,
    "pack-env": cmd_pack_env,
    "py-files": cmd_py_files, "sync-catalog": cmd_sync_catalog,
}


def run_command(args, argv: list[str], spark_session: Any = None) -> Any:
    """Run the parsed command: in a Spark job with its ``spark_session``; from the command line
    with ``--engine spark``, the same ``argv`` inside spark-submit (its result file read back)."""
    if spark_session is not None:
        args.spark_session = spark_session
    elif getattr(args, "engine", "local") == "spark":
        from .spark.spark_submit import run_job

        return run_job(argv)
    return HANDLERS[args.command](args)


#: exit status when stdout is closed early (``hudi-etc ... | head``): 128 + SIGPIPE, as shells report it
EXIT_BROKEN_PIPE = 141


def _error(e: HudiEtcError) -> int:
    from .hudi.errors import error_envelope

    _out(error_envelope(e))
    sys.stdout.flush()
    print(f"hudi-etc: {type(e).__name__}: {e}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            argv = [str(x) for x in argv]
            args = build_parser().parse_args(argv)  # argument errors: ArgumentError, printed below
            result = run_command(args, argv)
            if isinstance(result, str):
                print(result)
            else:
                _out(result)
            sys.stdout.flush()
            return 0
        except HudiEtcError as e:
            return _error(e)
    except BrokenPipeError:
        # the reader went away (``| head``): nothing more to say, and no traceback; stdout is
        # pointed at /dev/null so the interpreter's final flush does not fail again
        import os

        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
