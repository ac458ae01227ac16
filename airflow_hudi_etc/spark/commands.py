"""The Spark room's commands (``pack-env``, ``py-files``, ``sync-catalog``), the handler of every
command, and running one: in this process (the CLI) or inside a spark-submit job with its
SparkSession (:mod:`airflow_hudi_etc.spark.jobs`). The table commands' handlers are
:mod:`airflow_hudi_etc.commands`; both callers dispatch through :func:`run` here, so the CLI and
the job cannot differ in what a command does.
"""

from __future__ import annotations

from typing import Any, Callable

from ..commands import HANDLERS as TABLE_HANDLERS
from ..commands import Runtime


def cmd_pack_env(a, rt: Runtime) -> dict:
    from .shipping import pack_env

    return pack_env(a.output, extras=tuple(a.extra), python=a.python)


def cmd_py_files(a, rt: Runtime) -> dict:
    from .shipping import package_zip

    return {"py_files": package_zip()}


def cmd_sync_catalog(a, rt: Runtime) -> dict:
    from .catalog import sync_catalog

    return sync_catalog(a.path, database=a.database, table=a.table, spark=rt.spark_session,
                        metastore_uri=a.metastore_uri, metastore_dir=a.metastore_dir, warehouse_dir=a.warehouse_dir)


#: the function of every command of :data:`airflow_hudi_etc.contract.COMMANDS`
HANDLERS: dict[str, Callable[[Any, Runtime], Any]] = {
    **TABLE_HANDLERS, "pack-env": cmd_pack_env, "py-files": cmd_py_files, "sync-catalog": cmd_sync_catalog,
}


def spark_runtime(spark) -> Runtime:
    """The runtime of a spark-submit job: its SparkSession, and a :class:`SparkEngine` on it whose
    executors are checked before the table is touched (executors lacking pyarrow fail once, typed)."""
    def engine():
        from .engines import SparkEngine

        e = SparkEngine(spark)
        e.check_executors()
        return e

    return Runtime(engine=engine, spark_session=spark)


def run(args, spark_session: Any = None) -> Any:
    """Run the parsed command: with ``spark_session`` as a spark-submit job does, else locally."""
    rt = Runtime() if spark_session is None else spark_runtime(spark_session)
    return HANDLERS[args.command](args, rt)
