"""The Spark side: everything that runs or starts Spark. ``jobs`` (the spark-submit entry point,
parsing its argv with the contract's parser), ``commands`` (the handler of every command, those of
:mod:`airflow_hudi_etc.commands` and the three below, run by the job and the CLI alike),
``engines`` (``SparkEngine``), ``spark_submit`` (the CLI's ``--engine spark``), ``shipping`` (the
package zip, interpreters, ``pack-env``) and ``catalog`` (the catalog sync). It talks to the Airflow side only through
:mod:`airflow_hudi_etc.contract` (argv, result file, error envelope). ``compaction/`` imports no
pyspark and nothing from here; the per-file-group kernel stays plain Python, run in-process or
inside Spark tasks."""
