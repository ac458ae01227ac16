"""What defines a table: ``hoodie.properties`` read and written with Java's escaping and
checksum (:mod:`.properties`), and the record schema, Arrow ↔ Avro as Spark-with-Hudi
writes it, meta fields and event-time values (:mod:`.schema`).
"""
