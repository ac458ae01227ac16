"""Where per-file-group tasks run: in this process, or in Spark executors.

Both engines expose ``map(fn, items) -> list``: ``fn`` is a module-level function and the
items are picklable task descriptions, so the same task code runs in either. Spark is
imported only when a :class:`SparkEngine` is built.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..hudi.write.writer import LocalEngine

__all__ = ["LocalEngine", "SparkEngine", "get_engine"]


class SparkEngine:
    """Parallelise tasks over a SparkSession's executors (one task per item)."""

    name = "spark"

    def __init__(self, spark: Any):
        self.spark = spark
        self.sc = spark.sparkContext
        self._checked = False

    def check_executors(self) -> None:
        """One Spark task that imports what the per-file-group tasks need and *returns* what it
        could not import (never raises: a raising task is retried ``spark.task.maxFailures`` times,
        4 by default, for an error no retry fixes). A missing module is an
        :class:`~airflow_hudi_etc.hudi.errors.ExecutorEnvironmentError` naming the interpreter, the
        fix (``hudi-etc pack-env``) and ``spark.pyspark.python``."""
        if self._checked:
            return

        def probe(_):  # nested: pickled by value, so it runs even where this package is absent
            import socket
            import sys

            missing = []
            for mod in ("pyarrow", "fastavro", "numpy", "fsspec", "msgspec", "airflow_hudi_etc.hudi.table.hudi_table"):
                try:
                    __import__(mod)
                except ImportError as e:
                    missing.append(f"{mod} ({e})")
            return {"python": sys.executable, "version": sys.version.split()[0], "host": socket.gethostname(),
                    "missing": missing}

        got = self.sc.parallelize([0], 1).map(probe).collect()[0]
        if got["missing"]:
            from ..hudi.errors import ExecutorEnvironmentError

            conf = self.sc.getConf()
            raise ExecutorEnvironmentError(
                f"Spark executors cannot import {', '.join(got['missing'])}: their Python {got['python']} "
                f"({got['version']}, host {got['host']}) has neither this package nor its dependencies "
                f"(spark.pyspark.python = {conf.get('spark.pyspark.python', None) or 'unset'}). Build an environment "
                f"with `hudi-etc pack-env --output env.tar.gz` and submit with spark.archives=env.tar.gz#environment "
                f"and spark.pyspark.python=./environment/bin/python (or point spark.pyspark.python at an "
                f"interpreter that has them); the package itself is shipped with --py-files")
        self._checked = True

    def map(self, fn: Callable, items: Sequence) -> list:
        items = list(items)
        if not items:
            return []
        self.check_executors()
        slices = max(1, min(len(items), self.sc.defaultParallelism * 4))
        return self.sc.parallelize(items, slices).map(fn).collect()


def get_engine(name: str, spark: Any = None):
    if name == "local":
        return LocalEngine()
    if name == "spark":
        if spark is None:
            from pyspark.sql import SparkSession

            spark = SparkSession.builder.getOrCreate()
        return SparkEngine(spark)
    raise ValueError(f"unknown engine {name!r}: use local or spark")
