"""spark-submit entry point: ``spark-submit spark_jobs/hudi_etc_job.py write --path ... --input ...``.

A thin wrapper over :func:`airflow_hudi_etc.jobs.main` (the package must be installed on the
driver and the executors, or shipped with ``--py-files``).
"""

import sys

from airflow_hudi_etc.jobs import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
