"""Spark job entry points (what ``spark-submit`` runs).

``spark-submit [spark opts] airflow_hudi_etc/spark/jobs.py [--result-file F] <hudi-etc command> [args]``

The commands and their arguments are those of :mod:`airflow_hudi_etc.contract` (the parser is
generated from the same definitions as the CLI's and the operators' argv). The job builds the
SparkSession that spark-submit configured, runs the command's handler with that session (the
CLI's, :func:`airflow_hudi_etc.spark.commands.run`; per-file-group tasks go to Spark executors
through :class:`~airflow_hudi_etc.spark.engines.SparkEngine`), prints
the result JSON on stdout and writes it to ``--result-file`` (a local path or any fsspec URI;
spark-submit returns no value, so this is how the CLI and the Airflow operators get it back).
Errors are written the same way, as the error envelope ``{"error": {"code", "type", "message"}}``,
with exit status 2. ``spark_jobs/`` in the repo holds a thin script that calls :func:`main`.

Spark logs at WARN unless ``spark.log.level`` says otherwise, and the job prints one human line
(``hudi-etc summary: ...``: the threshold, logs compacted, the read-optimized view's remaining lag,
whether an earlier attempt was rolled back, the seconds) to stderr, which ends up in the task log.
"""

from __future__ import annotations

import json
import os
import sys
import time


def _write_result(path: str | None, result: dict) -> None:
    from airflow_hudi_etc.contract import write_result

    if path:
        write_result(path, result)  # cluster deploy mode: a URI, the driver runs elsewhere
    print(json.dumps(result, default=str))


def _spark(args):
    from pyspark.sql import SparkSession

    if args.command == "sync-catalog":
        from airflow_hudi_etc.spark.catalog import session_builder

        builder = session_builder(metastore_uri=args.metastore_uri, metastore_dir=args.metastore_dir,
                                  warehouse_dir=args.warehouse_dir)
    else:
        builder = SparkSession.builder
    spark = builder.appName(f"hudi-etc-{args.command}").getOrCreate()
    if not spark.sparkContext.getConf().get("spark.log.level", None):
        spark.sparkContext.setLogLevel("WARN")  # quiet by default; spark.log.level overrides it
    _ship_package(spark)
    return spark


def _ship_package(spark) -> str | None:
    """A job submitted without ``--py-files`` (e.g. ``spark-submit spark_jobs/hudi_etc_job.py ...``
    by hand) to a cluster ships the package itself: the driver has it installed, the executors
    may not. Not when the submitter shipped files, opted out (``HUDI_ETC_PY_FILES=none``), or the
    executors are this machine's (``local[...]``). Returns the zip added, if any."""
    from airflow_hudi_etc.spark import shipping

    conf = spark.sparkContext.getConf()
    if (conf.get("spark.submit.pyFiles", None) or shipping.is_local_master(conf.get("spark.master", ""))
            or os.environ.get("HUDI_ETC_PY_FILES", "").strip().lower() == shipping.NO_PY_FILES
            or not shipping.package_root().is_dir()):
        return None
    path = shipping.package_zip()
    spark.sparkContext.addPyFile(path)
    return path


def _earlier_attempt(args) -> bool | None:
    """``execute`` only: will the compaction to execute be rolled back first (an inflight one,
    left by an earlier attempt that died)? ``None`` when it cannot tell."""
    if args.command != "execute":
        return None
    try:
        from airflow_hudi_etc.contract import storage_options_from_env
        from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
        from airflow_hudi_etc.hudi.timeline.active import State

        pending = HudiTable.load(args.path, storage_options_from_env()).timeline.pending_compactions
        instant = getattr(args, "instant", None) or (pending[0].timestamp if pending else None)
        return any(i.timestamp == instant and i.state is State.INFLIGHT for i in pending)
    except Exception:  # noqa: BLE001 - the command itself reports a bad table
        return None


def _duration(seconds: float) -> str:
    s = int(max(0, seconds))
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{d}d{h}h{m:02d}m" if d else (f"{h}h{m:02d}m" if h else f"{m}m{s:02d}s")


def _bytes(n) -> str:
    if not isinstance(n, (int, float)):
        return "? bytes"
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{n / size:.1f} {unit}"
    return f"{int(n)} bytes"


def summary_line(command: str, result: dict, *, rolled_back: bool | None, seconds: float,
                 now_ms: int | None = None) -> str:
    """The job's one human line: what it did, the threshold and how far behind now it is."""
    from airflow_hudi_etc.contract import SUMMARY_PREFIX

    if "error" in result:
        err = result["error"]
        return f"{SUMMARY_PREFIX} {command} failed: {err.get('type')}: {err.get('message')} ({seconds:.1f} s)"
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    th_ms = result.get("threshold_ms")
    threshold = (f"threshold {result.get('threshold')} (read-optimized lag {_duration((now_ms - th_ms) / 1000)})"
                 if isinstance(th_ms, int) else "no threshold")
    inst = result.get("instant")
    status = result.get("status") or (("scheduled" if inst else "nothing scheduled") if command == "schedule" else "done")
    parts = [f"{command} {inst or '-'}: {status}"]
    if command == "execute":
        parts.append(threshold)
        if status in ("completed", "already completed"):
            parts.append(f"{result.get('logs_compacted')} logs compacted, {result.get('remaining_log_files')} "
                         f"remaining ({_bytes(result.get('remaining_log_bytes'))})")
        parts.append("earlier attempt rolled back: " + {True: "yes", False: "no", None: "unknown"}[rolled_back])
    elif command == "schedule":
        parts.append(threshold)
        parts.append(f"{result.get('operations', 0)} file groups" if inst else f"reason: {result.get('reason')}")
    elif command == "sync-catalog":
        parts.append(threshold)
        if result.get("reason"):
            parts.append(f"reason: {result.get('reason')}")
    elif command == "rollback":
        parts.append(f"{result.get('files_removed', 0)} files removed")
    parts.append(f"{seconds:.1f} s")
    return f"{SUMMARY_PREFIX} " + ", ".join(parts)


def parse_job_argv(argv: list[str]):
    """``[--result-file F] <command> <args>`` → (F, the parsed command, its argv), parsed with the
    contract's parser (:func:`airflow_hudi_etc.contract.build_parser`, the CLI's); a bad argv
    raises ``ArgumentError``."""
    from airflow_hudi_etc.contract import parse, split_job_argv

    result_file, cli_argv = split_job_argv([str(x) for x in argv])
    return result_file, parse(cli_argv), cli_argv


def main(argv: list[str] | None = None) -> int:
    from airflow_hudi_etc.contract import parse, split_job_argv
    from airflow_hudi_etc.hudi.errors import HudiEtcError, error_envelope
    from airflow_hudi_etc.spark.commands import run

    result_file, cli_argv = split_job_argv([str(x) for x in (sys.argv[1:] if argv is None else argv)])
    try:
        args = parse(cli_argv)
    except HudiEtcError as e:  # ArgumentError: reported like any other error, no JVM started
        _write_result(result_file, error_envelope(e))
        return 2
    t0 = time.monotonic()
    spark = _spark(args)
    from airflow_hudi_etc.hudi.concurrency.jvm_lock import use_jvm

    use_jvm(spark)  # the table's lock provider: Hudi's own class when the bundle is on the classpath
    rolled_back = _earlier_attempt(args)
    try:
        result = run(args, spark_session=spark)
        if isinstance(result, dict) and "engine" in vars(args):
            result.setdefault("engine", "spark")
        _write_result(result_file, result)
        code = 0
    except HudiEtcError as e:
        result = error_envelope(e)
        _write_result(result_file, result)
        code = 2
    finally:
        spark.stop()
    if isinstance(result, dict):
        print(summary_line(args.command, result, rolled_back=rolled_back, seconds=time.monotonic() - t0),
              file=sys.stderr, flush=True)
    return code


if __name__ == "__main__":
    # run as a file by spark-submit: drop this folder from sys.path so that our sub-packages
    # (hudi/, ...) never shadow top-level modules, and import the package absolutely
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    sys.exit(main())
