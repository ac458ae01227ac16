"""The protocol of a writer on a table shared with Java Hudi: the files and rules every writer
writes and honours so that the others see its work as Hudi's own.

* :mod:`.plan` — the compaction plan file (Hudi's Avro plan, plus our link operations);
* :mod:`.rollback` — rollback instants, as Hudi records the undoing of a failed instant;
* :mod:`.markers` — DIRECT write markers, one before each data file;
* :mod:`.heartbeat` — heartbeats of running writes and executions (Java's expiry rule);
* :mod:`.coexistence` — the rules checked before any change: the metadata table, the timeline
  zone, the key generators, symbolic links;
* :mod:`.etc_metadata` — the typed views of the product's own keys in plan, commit and table
  settings.

(The crash points are at the top of ``hudi/``: :mod:`airflow_hudi_etc.hudi.crash`.)
"""
