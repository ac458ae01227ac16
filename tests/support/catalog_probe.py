"""A Spark job for the Airflow tests (run with spark-submit): read back what the catalog holds.

Builds its own Hive-enabled session on the embedded Derby metastore in ``--metastore-dir`` (the
configuration written out here, not taken from airflow_hudi_etc), prints the RO/RT tables'
properties and descriptions as JSON to ``--out``. With ``--bump-ms N`` it then moves the RO
threshold property ahead to N (as a later sync would have) and runs ``sync_catalog`` in this same
session, recording its result and the properties afterwards.
"""

import argparse
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]


def describe(spark, qname):
    rows = spark.sql(f"DESCRIBE TABLE EXTENDED {qname}").collect()
    return {(r[0] or "").strip(): (r[1] or "").strip() for r in rows if r[0] and r[0].strip() in
            ("Type", "Location", "Provider", "Comment")}


def props(spark, qname):
    return {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {qname}").collect()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--metastore-dir", required=True)
    ap.add_argument("--database", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--bump-ms", type=int)
    a = ap.parse_args()
    from pyspark.sql import SparkSession

    d = os.path.abspath(a.metastore_dir)
    spark = (SparkSession.builder.enableHiveSupport()
             .config("spark.hadoop.javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={d}/metastore_db;create=false")
             .config("spark.sql.warehouse.dir", os.path.join(d, "spark-warehouse"))
             .getOrCreate())
    ro, rt = f"`{a.database}`.`{a.table}_ro`", f"`{a.database}`.`{a.table}_rt`"
    out = {"tables": sorted(r.tableName for r in spark.sql(f"SHOW TABLES IN `{a.database}`").collect()),
           "ro_props": props(spark, ro), "rt_props": props(spark, rt),
           "ro_desc": describe(spark, ro), "rt_desc": describe(spark, rt)}
    if a.bump_ms is not None:
        spark.sql(f"ALTER TABLE {ro} SET TBLPROPERTIES ('hoodie.eventtime.threshold.ms'='{a.bump_ms}')")
        from airflow_hudi_etc.spark.catalog import sync_catalog

        out["sync"] = sync_catalog(a.path, database=a.database, table=a.table, spark=spark)
        out["ro_props_after"] = props(spark, ro)
    spark.stop()
    with open(a.out, "w") as f:
        json.dump(out, f, default=str)


if __name__ == "__main__":
    main()
