"""airflow-hudi-etc: an event-time freshness guarantee for Hudi Merge-On-Read read-optimized views.

``from airflow_hudi_etc import Table`` is the Python API (:mod:`airflow_hudi_etc.api`); it is
imported lazily so that Airflow's provider discovery, which imports this package, stays cheap.
"""

__all__ = ["Table"]


def __getattr__(name: str):
    if name == "Table":
        from .api import Table

        return Table
    raise AttributeError(f"module 'airflow_hudi_etc' has no attribute {name!r}")
