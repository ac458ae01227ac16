"""The Spark side: code that imports pyspark (the catalog sync so far). ``compaction/`` imports no
pyspark; the per-file-group kernel stays plain Python, run in-process or inside Spark tasks."""
