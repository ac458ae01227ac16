"""``SyncEventTimeThresholdOperator``: publish the read-optimized threshold in the Hive metastore
(``hudi-etc sync-catalog``); sends ``hudi_etc.catalog_threshold_lag_seconds`` to Airflow's ``Stats``.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..failfast import fail_fast
from .base import HudiEtcSparkJobOperator, emit_gauges, none_if_empty

if TYPE_CHECKING:
    from airflow.sdk import Context


class SyncEventTimeThresholdOperator(HudiEtcSparkJobOperator):
    """Publish the RO threshold in the Hive metastore (``hudi-etc sync-catalog``): registers
    ``<table>_ro`` / ``<table>_rt`` and sets ``hoodie.eventtime.*`` on ``<table>_ro``; never moves
    the threshold back. XCom: the sync result (``status``: ``updated`` / ``unchanged`` /
    ``no threshold yet``).

    :param database: Hive database (created when absent).
    :param table: base name of the catalog tables.
    :param metastore_uri: ``thrift://host:9083``; default an embedded Derby metastore in
        ``metastore_dir`` (on the driver's machine).
    :param metastore_dir: directory of the embedded Derby metastore.
    :param warehouse_dir: ``spark.sql.warehouse.dir``.
    """

    template_fields: Sequence[str] = (*HudiEtcSparkJobOperator.template_fields, "database", "table", "metastore_uri",
                                      "metastore_dir", "warehouse_dir")
    command = "sync-catalog"

    def __init__(self, *, table: str, database: str = "default", metastore_uri: str | None = None,
                 metastore_dir: str | None = None, warehouse_dir: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.database = database
        self.table = table
        self.metastore_uri = metastore_uri
        self.metastore_dir = metastore_dir
        self.warehouse_dir = warehouse_dir

    def job_values(self) -> dict[str, Any]:
        return {"path": self.table_path, "database": self.database, "table": self.table,
                **{k: none_if_empty(getattr(self, k)) for k in ("metastore_uri", "metastore_dir", "warehouse_dir")}}

    def spark_conf(self) -> dict[str, Any]:
        conf = super().spark_conf()
        if not none_if_empty(self.metastore_uri) and none_if_empty(self.metastore_dir):
            # the driver JVM starts before the job: put derby.log next to the metastore, not in the cwd
            conf.setdefault("spark.driver.extraJavaOptions",
                            f"-Dderby.system.home={os.path.abspath(str(self.metastore_dir))}")
        return conf

    @fail_fast
    def execute(self, context: Context) -> dict:
        from ..spark.catalog import catalog_names

        catalog_names(self.database, self.table)
        result = self.run_job(self.job_argv(), context)
        from ..sensors.freshness import catalog_threshold_ms

        catalog_ms = catalog_threshold_ms(result)  # what the catalog holds now
        if catalog_ms is not None:
            lag = time.time() - catalog_ms / 1000
            result["metrics_sent"] = emit_gauges({"catalog_threshold_lag_seconds": lag},
                                                 table=self.table_tag or self.table, log=self.log)
        self.log.info("catalog sync: %s (%s)", result.get("status"), result.get("reason"))
        self._lineage_result = result
        return result

    def lineage_outputs(self, result: Mapping[str, Any]) -> list:
        from ..assets import catalog_datasets

        return catalog_datasets(self.database, self.table, none_if_empty(self.metastore_uri))


__all__ = ["SyncEventTimeThresholdOperator"]
