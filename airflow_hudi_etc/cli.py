"""The ``hudi-etc`` command. Every command prints one JSON document on stdout.

Errors print ``{"error": {"code", "type", "message"}}`` on stdout, the message on stderr, and
exit with status 2 (bad input / refused) or 1 (unexpected failure).

Storage options (fsspec; e.g. S3 ``key``/``secret``/``endpoint_url``/``client_kwargs``) come from
the environment variable ``HUDI_ETC_STORAGE_OPTIONS``, a JSON object — not from the command line,
where credentials would be visible to every user of the machine. Without it the filesystem's
defaults apply (S3: the ``AWS_*`` variables, profiles, instance roles). ``--engine spark`` jobs
inherit the variable; the driver ships the options to the executors inside the pickled tasks.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .hudi.errors import HudiEtcError


STORAGE_OPTIONS_ENV = "HUDI_ETC_STORAGE_OPTIONS"


def storage_options_from_env(environ: Any = None) -> dict:
    """The fsspec storage options in ``$HUDI_ETC_STORAGE_OPTIONS`` (a JSON object), or {}."""
    import os

    from .hudi.errors import InvalidInputError

    text = (os.environ if environ is None else environ).get(STORAGE_OPTIONS_ENV, "").strip()
    if not text:
        return {}
    try:
        opts = json.loads(text)
    except ValueError as e:  # never echo the text: it holds credentials
        raise InvalidInputError(f"{STORAGE_OPTIONS_ENV} is not valid JSON (line {getattr(e, 'lineno', '?')}, "
                                f"column {getattr(e, 'colno', '?')})") from None
    if not isinstance(opts, dict):
        raise InvalidInputError(f"{STORAGE_OPTIONS_ENV} must be a JSON object of fsspec storage options, "
                                f"not {type(opts).__name__}")
    return opts


def _storage(a):
    """The table of this command: ``Storage(--path, $HUDI_ETC_STORAGE_OPTIONS)``."""
    from .hudi.storage import Storage

    return Storage(a.path, storage_options_from_env())


def _out(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


def cmd_init(a) -> dict:
    from .hudi.writer import init_table

    return init_table(
        _storage(a),
        table_name=a.table_name,
        record_key=a.record_key,
        precombine_field=a.precombine_field,
        event_time_field=a.event_time_field,
        partition_field=a.partition_field,
        payload=a.payload,
        exclusive_cleaner=a.exclusive_cleaner,
    )


def cmd_drop_metadata_table(a) -> dict:
    from .hudi.coexistence import drop_metadata_table

    return drop_metadata_table(_storage(a))


def _engine(a):
    """The engine of this command: in a spark-submit job the job's SparkSession, else local."""
    spark = getattr(a, "spark_session", None)
    if spark is not None:
        from .engines import SparkEngine

        return SparkEngine(spark)
    from .engines import LocalEngine

    return LocalEngine()


def _via_spark_submit(a) -> bool:
    """``--engine spark`` from the command line: run this same command inside spark-submit."""
    return getattr(a, "engine", "local") == "spark" and getattr(a, "spark_session", None) is None


def _submit(a) -> dict:
    from .spark_submit import run_job

    return run_job(a.argv)


def cmd_pack_env(a) -> dict:
    from .shipping import pack_env

    return pack_env(a.output, extras=tuple(a.extra), python=a.python)


def cmd_py_files(a) -> dict:
    from .shipping import package_zip

    return {"py_files": package_zip()}


def cmd_write(a) -> dict:
    if _via_spark_submit(a):
        return _submit(a)
    from .hudi.writer import read_input, write_batch

    engine = _engine(a)
    res = write_batch(_storage(a), read_input(a.input), operation=a.operation, engine=engine)
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
    from .hudi.table import HudiTable, normalize_as_of

    as_of = normalize_as_of(a.as_of) if a.as_of is not None else None
    _check_output_file(a.output)
    t = HudiTable.load(_storage(a))
    data = t.read(read_optimized=a.read_optimized, as_of=as_of)
    try:
        pq.write_table(data, a.output)
    except OSError as e:
        raise InvalidInputError(f"--output {a.output}: cannot write it: {e.strerror or e}") from None
    return {
        "rows": data.num_rows,
        "output": a.output,
        "query": "read_optimized" if a.read_optimized else "snapshot",
        "as_of": as_of,
    }


def cmd_status(a) -> dict | str:
    from .compaction.metrics import table_metrics

    m = table_metrics(_storage(a))
    if a.sla:
        from .compaction.times import parse_duration

        sla_s = parse_duration(a.sla).total_seconds()
        lag = m.get("threshold_lag_seconds")
        m["sla_seconds"] = sla_s
        m["sla_breached"] = lag is None or lag > sla_s
    if a.json:
        return m
    from .report import format_status

    return format_status(m)


def cmd_report(a) -> dict:
    from .report import write_report

    return write_report(a.path, a.output, sla=a.sla, storage_options=storage_options_from_env())


def cmd_schedule(a) -> dict:
    if _via_spark_submit(a):
        return _submit(a)
    from .compaction.scheduling import schedule

    return schedule(_storage(a), data_latency=a.data_latency, compaction_time=a.compaction_time,
                    link_mode=a.link_mode, exact_split=a.exact_split, event_time_field=a.event_time_field,
                    engine=_engine(a)).as_dict()


def cmd_execute(a) -> dict:
    if _via_spark_submit(a):
        return _submit(a)
    from .compaction.execution import execute

    return execute(_storage(a), instant=a.instant, engine=_engine(a))


def cmd_rollback(a) -> dict:
    if _via_spark_submit(a):
        return _submit(a)
    from .compaction.lifecycle import rollback

    return rollback(_storage(a), instant=a.instant)


def cmd_unschedule(a) -> dict:
    if _via_spark_submit(a):
        return _submit(a)
    from .compaction.lifecycle import unschedule

    return unschedule(_storage(a), instant=a.instant)


def cmd_clean(a) -> dict:
    if _via_spark_submit(a):
        return _submit(a)
    from .compaction.clean import clean

    return clean(_storage(a), retain_commits=a.retain_commits)


def cmd_show_plan(a) -> dict:
    from .compaction.plans import show_plan

    return show_plan(_storage(a), instant=a.instant)


def cmd_reset_threshold(a) -> dict:
    from .compaction.threshold_reset import reset_threshold

    return reset_threshold(_storage(a), to=a.to, instant=a.instant)


def cmd_validate(a) -> dict:
    from .compaction.validate import validate

    return validate(_storage(a))


def cmd_sync_catalog(a) -> dict:
    if _via_spark_submit(a):
        return _submit(a)
    from .spark.catalog import sync_catalog

    spark = getattr(a, "spark_session", None)
    return sync_catalog(a.path, database=a.database, table=a.table, spark=spark,
                        metastore_uri=a.metastore_uri, metastore_dir=a.metastore_dir,
                        warehouse_dir=a.warehouse_dir)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage text and exits 2: a typed error instead
        from .hudi.errors import ArgumentError

        raise ArgumentError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="hudi-etc", description="Event-time compaction for Hudi MOR tables")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)

    s = sub.add_parser("init", help="create an empty table-version-6 MOR table")
    s.add_argument("--path", required=True)
    s.add_argument("--table-name", required=True)
    s.add_argument("--record-key", required=True)
    s.add_argument("--precombine-field", required=True)
    s.add_argument("--event-time-field", required=True)
    s.add_argument("--partition-field")
    s.add_argument("--payload", default="overwrite-latest", choices=["overwrite-latest", "event-time-ordering"])
    s.add_argument("--exclusive-cleaner", action="store_true",
                   help="only hudi-etc cleans this table (no Java cleaner): link mode auto may then use symlinks")
    s.set_defaults(fn=cmd_init)

    s = sub.add_parser("drop-metadata-table",
                       help="drop the Hudi metadata table as a Java writer with hoodie.metadata.enable=false does")
    s.add_argument("--path", required=True)
    s.set_defaults(fn=cmd_drop_metadata_table)

    s = sub.add_parser("write", help="upsert or delete a batch (one deltacommit)")
    s.add_argument("--path", required=True)
    s.add_argument("--input", required=True, help=".parquet or .jsonl file")
    s.add_argument("--operation", default="upsert", choices=["upsert", "delete"])
    _engine_arg(s)
    s.set_defaults(fn=cmd_write)

    s = sub.add_parser("read", help="read the table into a parquet file (meta columns included)")
    s.add_argument("--path", required=True)
    s.add_argument("--read-optimized", action="store_true")
    s.add_argument("--as-of")
    s.add_argument("--output", required=True)
    s.set_defaults(fn=cmd_read)

    s = sub.add_parser("status", help="timeline, pending plans, logs per slice, min event time")
    s.add_argument("--path", required=True)
    s.add_argument("--json", action="store_true", help="JSON instead of the readable table")
    s.add_argument("--sla", help="warn when the threshold lag exceeds this (e.g. 6h)")
    s.set_defaults(fn=cmd_status)

    s = sub.add_parser("report", help="freshness chart (PNG) and HTML page, built from the timeline")
    s.add_argument("--path", required=True)
    s.add_argument("--output", required=True, help="directory for freshness.png and index.html")
    s.add_argument("--sla", help="draw this lag limit (e.g. 6h)")
    s.set_defaults(fn=cmd_report)

    s = sub.add_parser("schedule", help="plan an event-time partial compaction")
    s.add_argument("--path", required=True)
    s.add_argument("--data-latency", required=True, help="e.g. 30m, 2h, PT2H")
    s.add_argument("--compaction-time", help="ISO-8601 (default: now, UTC)")
    s.add_argument("--link-mode", default="auto", choices=["auto", "copy", "symlink"])
    s.add_argument("--exact-split", action="store_true",
                   help="records after the threshold stay out of the base file (RO holds exactly <= threshold)")
    s.add_argument("--event-time-field", help="event-time column, for tables whose properties name none")
    _engine_arg(s)
    s.set_defaults(fn=cmd_schedule)

    s = sub.add_parser("execute", help="run a planned compaction; prints its metrics")
    s.add_argument("--path", required=True)
    s.add_argument("--instant", help="default: the pending compaction (or the last completed: a no-op)")
    _engine_arg(s)
    s.set_defaults(fn=cmd_execute)

    for name, fn, hlp in (("rollback", cmd_rollback, "undo a failed or inflight execution (plan stays requested)"),
                          ("unschedule", cmd_unschedule, "remove a requested plan")):
        s = sub.add_parser(name, help=hlp)
        s.add_argument("--path", required=True)
        s.add_argument("--instant", required=True)
        _engine_arg(s)
        s.set_defaults(fn=fn)

    s = sub.add_parser("clean", help="delete file slices older than the last N commits (link targets kept)")
    s.add_argument("--path", required=True)
    s.add_argument("--retain-commits", type=int, default=10)
    _engine_arg(s)
    s.set_defaults(fn=cmd_clean)

    s = sub.add_parser("show-plan", help="a compaction plan as JSON")
    s.add_argument("--path", required=True)
    s.add_argument("--instant", required=True)
    s.set_defaults(fn=cmd_show_plan)

    s = sub.add_parser("reset-threshold", help="lower a threshold published by mistake (then sync-catalog)")
    s.add_argument("--path", required=True)
    s.add_argument("--to", help="ISO-8601 (default: the compaction's instant time minus its data latency)")
    s.add_argument("--instant", help="the compaction whose threshold is lowered (default: the latest)")
    s.set_defaults(fn=cmd_reset_threshold)

    s = sub.add_parser("validate", help="plan vs storage: dangling links, orphan files, broken plans")
    s.add_argument("--path", required=True)
    s.set_defaults(fn=cmd_validate)

    s = sub.add_parser("pack-env", help="a packed virtualenv of the executors' dependencies, for spark.archives")
    s.add_argument("--output", required=True, help="the .tar.gz to write")
    s.add_argument("--extra", action="append", default=[], choices=["s3"], help="add an extra's dependencies")
    s.add_argument("--python", help="base interpreter of the venv (default: this one's); must exist on every worker")
    s.set_defaults(fn=cmd_pack_env)

    s = sub.add_parser("py-files", help="path of the cached zip of this package (what --engine spark ships)")
    s.set_defaults(fn=cmd_py_files)

    s = sub.add_parser("sync-catalog", help="publish the RO threshold as table properties in the Hive metastore")
    s.add_argument("--path", required=True)
    s.add_argument("--database", default="default")
    s.add_argument("--table", required=True, help="base name: registers <table>_ro and <table>_rt")
    s.add_argument("--metastore-uri", help="thrift://host:9083 (default: embedded Derby metastore)")
    s.add_argument("--metastore-dir", help="directory of the embedded Derby metastore")
    s.add_argument("--warehouse-dir", help="spark.sql.warehouse.dir")
    _engine_arg(s, default="local")
    s.set_defaults(fn=cmd_sync_catalog)
    return p


def _engine_arg(s, default: str = "local") -> None:
    s.add_argument("--engine", default=default, choices=["local", "spark"],
                   help="local: this process; spark: the same command inside spark-submit")


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
            args = build_parser().parse_args(argv)  # argument errors: ArgumentError, printed below
            args.argv = [str(x) for x in argv]
            result = args.fn(args)
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
