"""A small Spark job (run with spark-submit): print a Hudi table's catalog entries as JSON.

    spark-submit scripts/show_catalog.py --metastore-dir DIR --database D --table T [--out F]

Reads ``<T>_ro`` / ``<T>_rt`` from the embedded Derby metastore in DIR: their table properties
(``hoodie.eventtime.threshold`` & co. on the RO table) and type/location/provider.
"""

import argparse
import json
import os
import sys


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--metastore-dir", required=True)
    ap.add_argument("--database", required=True)
    ap.add_argument("--table", required=True)
    ap.add_argument("--out")
    a = ap.parse_args()
    from pyspark.sql import SparkSession

    d = os.path.abspath(a.metastore_dir)
    spark = (SparkSession.builder.enableHiveSupport()
             .config("spark.hadoop.javax.jdo.option.ConnectionURL", f"jdbc:derby:;databaseName={d}/metastore_db;create=false")
             .config("spark.sql.warehouse.dir", os.path.join(d, "spark-warehouse"))
             .getOrCreate())
    out = {}
    for view in ("ro", "rt"):
        q = f"`{a.database}`.`{a.table}_{view}`"
        out[f"{view}_props"] = {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {q}").collect()}
        out[f"{view}_desc"] = {r[0].strip(): (r[1] or "").strip() for r in spark.sql(f"DESCRIBE TABLE EXTENDED {q}").collect()
                               if r[0] and r[0].strip() in ("Type", "Location", "Provider")}
    spark.stop()
    text = json.dumps(out, indent=2)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text + "\n")


if __name__ == "__main__":
    main()
