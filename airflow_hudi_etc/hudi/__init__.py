"""The Hudi format layer, in rooms; a room imports only the modules at this level and the
rooms before it (tests/test_layers.py checks):

* here: ``errors`` (the typed errors), ``etc_keys`` (the product's own metadata keys), ``storage``
  (fsspec storage, table-relative paths, write-once files);
* ``config/`` — hoodie.properties and the record schema;
* ``logformat/`` — log files byte for byte (blocks, names, Avro/Parquet/delete contents);
* ``timeline/`` — instants, both timeline layouts, the archived history, commit metadata;
* ``file_group/`` — the file-system view, file names, the merge of a slice;
* ``index/`` — bloom filters, event-time stats, ordering facts, the event-time index;
* ``services/`` — compaction plan, Java coexistence, rollback, markers, heartbeats, crash points,
  the typed views of our keys;
* ``table/`` — the loaded table and its reads;
* ``write/`` — the writer.
"""
