"""The Hudi format layer, in rooms; a room imports only the modules at this level and the
rooms before it (tests/test_layers.py checks):

* here: ``errors`` (the typed errors), ``etc_keys`` (the product's own metadata keys), ``storage``
  (the storage backends), ``owners`` (which process holds a file), ``crash`` (the named crash points);
* ``format/`` — one profile per table version (6, 8, 9): what differs between them;
* ``config/`` — hoodie.properties and the record schema;
* ``logformat/`` — log files byte for byte (blocks, names, Avro/Parquet/delete contents);
* ``timeline/`` — instants, both timeline layouts, the archived history, commit metadata;
* ``file_group/`` — the file-system view, file names, the merge of a slice;
* ``index/`` — bloom filters, event-time stats, ordering facts, the event-time index;
* ``concurrency/`` — the commit path: the table's lock, the conflict check, Hudi's metadata writer;
* ``protocol/`` — what every writer on a table shared with Java writes and honours: the compaction
  plan file, rollback instants, markers, heartbeats, the coexistence rules, the typed views of our
  keys;
* ``table/`` — the loaded table and its reads;
* ``write/`` — the writer.
"""
