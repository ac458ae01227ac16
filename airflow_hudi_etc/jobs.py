"""Spark job entry points (what ``spark-submit`` runs).

``spark-submit [spark opts] airflow_hudi_etc/jobs.py [--result-file F] <hudi-etc command> [args]``

The commands and their arguments are exactly those of the ``hudi-etc`` CLI (write, schedule,
execute, rollback, unschedule, clean, sync-catalog, ...). The job builds the SparkSession that
spark-submit configured, runs the CLI command with that session (per-file-group tasks go to
Spark executors through :class:`~airflow_hudi_etc.engines.SparkEngine`), prints the result JSON
on stdout and writes it to ``--result-file`` (a local path or any fsspec URI; spark-submit
returns no value, so this is how the CLI and the Airflow operators get it back). Errors are
written the same way, as ``{"error": {"code", "type", "message"}}``, with exit status 2.
``spark_jobs/`` in the repo holds a thin script that calls :func:`main`.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile


def _write_result(path: str | None, result: dict) -> None:
    text = json.dumps(result, default=str)
    print(text)
    if path and "://" in path and not path.startswith("file://"):
        import fsspec

        with fsspec.open(path, "w") as f:  # cluster deploy mode: the driver runs elsewhere
            f.write(text)
    elif path:
        path = path[len("file://"):] if path.startswith("file://") else path
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".result-")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)


def _spark(args):
    from pyspark.sql import SparkSession

    if args.command == "sync-catalog":
        from airflow_hudi_etc.compaction.catalog import session_builder

        builder = session_builder(metastore_uri=args.metastore_uri, metastore_dir=args.metastore_dir,
                                  warehouse_dir=args.warehouse_dir)
    else:
        builder = SparkSession.builder
    return builder.appName(f"hudi-etc-{args.command}").getOrCreate()


def split_argv(argv: list[str]) -> tuple[str | None, list[str]]:
    """``[--result-file F] <command> ...`` → (F, the CLI argv)."""
    argv = list(argv)
    result_file = None
    if argv and argv[0] == "--result-file":
        result_file, argv = argv[1], argv[2:]
    elif argv and argv[0].startswith("--result-file="):
        result_file, argv = argv[0].split("=", 1)[1], argv[1:]
    return result_file, argv


def main(argv: list[str] | None = None) -> int:
    from airflow_hudi_etc.cli import build_parser
    from airflow_hudi_etc.hudi.errors import HudiEtcError

    result_file, cli_argv = split_argv(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(cli_argv)
    except HudiEtcError as e:  # ArgumentError: reported like any other error, no JVM started
        _write_result(result_file, {"error": {"code": e.code, "type": type(e).__name__, "message": str(e)}})
        return 2
    args.argv = cli_argv
    spark = _spark(args)
    args.spark_session = spark
    try:
        result = args.fn(args)
        if isinstance(result, dict) and "engine" in vars(args):
            result.setdefault("engine", "spark")
        _write_result(result_file, result)
        return 0
    except HudiEtcError as e:
        _write_result(result_file, {"error": {"code": e.code, "type": type(e).__name__, "message": str(e)}})
        return 2
    finally:
        spark.stop()


if __name__ == "__main__":
    # run as a file by spark-submit: drop this folder from sys.path so that our sub-packages
    # (hudi/, ...) never shadow top-level modules, and import the package absolutely
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.exit(main())
