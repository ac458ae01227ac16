"""Spark job entry points (what ``spark-submit`` runs).

``spark-submit [spark opts] airflow_hudi_etc/jobs.py <command> [args] --result-file F``

Each command builds the SparkSession that spark-submit configured, runs the same library
function the local engine runs with a :class:`~airflow_hudi_etc.engines.SparkEngine`, prints
the result JSON on stdout and writes it to ``--result-file`` (spark-submit returns no value,
so this is how the CLI and the Airflow operators get it back). ``spark_jobs/`` in the repo
holds thin scripts that call :func:`main`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile


def _write_result(path: str | None, result: dict) -> None:
    text = json.dumps(result, default=str)
    print(text)
    if path:
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".result-")
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)


def _spark(app_name: str):
    from pyspark.sql import SparkSession

    return SparkSession.builder.appName(app_name).getOrCreate()


def main(argv: list[str] | None = None) -> int:
    from airflow_hudi_etc.hudi.errors import HudiEtcError

    p = argparse.ArgumentParser(prog="hudi-etc-spark-job")
    p.add_argument("--result-file")
    sub = p.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write")
    w.add_argument("--path", required=True)
    w.add_argument("--input", required=True)
    w.add_argument("--operation", default="upsert", choices=["upsert", "delete"])
    w.add_argument("--result-file", dest="result_file_sub")
    args = p.parse_args(argv)
    result_file = getattr(args, "result_file_sub", None) or args.result_file
    spark = _spark(f"hudi-etc-{args.command}")
    try:
        from airflow_hudi_etc.engines import SparkEngine

        engine = SparkEngine(spark)
        if args.command == "write":
            from airflow_hudi_etc.hudi.writer import read_input, write_batch

            res = write_batch(args.path, read_input(args.input), operation=args.operation, engine=engine)
            _write_result(result_file, {**res.as_dict(), "engine": "spark"})
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
