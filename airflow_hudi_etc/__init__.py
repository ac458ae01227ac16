"""airflow-hudi-etc: an event-time freshness guarantee for Hudi Merge-On-Read read-optimized views.

*etc* stands for Event-Time Compaction: compact into the base files every log whose
events are older than a threshold, so that the read-optimized view holds every event up to it.
The product's own keys in Hudi's metadata are named ``hoodie.etc.*`` after it.

``from airflow_hudi_etc import Table`` is the Python API (:mod:`airflow_hudi_etc.api`); it is
imported lazily so that Airflow's provider discovery, which imports this package, stays cheap.
"""

__all__ = ["Table"]


def __getattr__(name: str):
    if name == "Table":
        from .api import Table

        return Table
    raise AttributeError(f"module 'airflow_hudi_etc' has no attribute {name!r}")
