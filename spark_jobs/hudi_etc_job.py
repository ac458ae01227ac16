"""spark-submit entry point: ``spark-submit spark_jobs/hudi_etc_job.py write --path ... --input ...``.

A thin wrapper over :func:`airflow_hudi_etc.spark.jobs.main`. The package must be installed where the
driver runs; executors of a cluster get it from the driver (the job adds the cached zip of the
package with ``addPyFile`` unless ``--py-files`` was given or ``HUDI_ETC_PY_FILES=none``).
"""

import sys

from airflow_hudi_etc.spark.jobs import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
