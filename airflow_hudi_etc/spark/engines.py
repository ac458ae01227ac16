"""Where per-file-group tasks run: in this process, or in Spark executors.

Both engines expose ``map(fn, items) -> list``: ``fn`` is a module-level function and the
items are picklable task descriptions, so the same task code runs in either. Spark is
imported only when a :class:`SparkEngine` is built.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..hudi.writer import LocalEngine

__all__ = ["LocalEngine", "SparkEngine", "get_engine"]


class SparkEngine:
    """Parallelise tasks over a SparkSession's executors (one task per item)."""

    name = "spark"

    def __init__(self, spark: Any):
        self.spark = spark
        self.sc = spark.sparkContext

    def map(self, fn: Callable, items: Sequence) -> list:
        items = list(items)
        if not items:
            return []
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
