"""Write stage: inserts, as new base files (new file groups) with Hudi's footer: the Avro schema,
the record-key bloom filter and the key range that Hudi's bloom index reads."""

from __future__ import annotations

import io
import json
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..index import bloom as bloom_mod
from ..config.schema import META_FIELDS, RECORD_KEY, arrow_schema_from_avro, conform
from .units import WriteOptions, WriteUnit, _meta_columns


def encode_base_file(unit: WriteUnit, rows: pa.Table) -> bytes:
    avro_schema = json.loads(unit.avro_schema_json)
    schema = arrow_schema_from_avro(avro_schema)
    rows = rows.sort_by([("__key", "ascending")])
    keys = rows.column("__key")
    meta = _meta_columns(unit, rows.num_rows, unit.file_name)
    meta[RECORD_KEY] = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    data = conform(rows, pa.schema([f for f in schema if f.name not in META_FIELDS]))
    cols = [meta[m] for m in META_FIELDS] + list(data.columns)
    out = pa.Table.from_arrays(cols, schema=schema)
    return base_file_bytes(out, unit.avro_schema_json, unit.options)


class BaseFileWriter:
    """Streams rows into a Hudi base parquet file: row groups as they fill, then the footer.

    The footer carries the Avro schema (``parquet.avro.schema``, as parquet-avro writes it)
    and what Hudi's bloom index needs, the record-key bloom
    filter and the key range (``hoodie_min_record_key``/``hoodie_max_record_key``); those are
    only known once every row is in, so they are added when the file is closed. Keys go into
    the filter in row order (the order decides which row of a dynamic filter a key fills).

    ``sink``: a binary file object. Rows are buffered until ``row_group_bytes`` of Arrow data,
    then written as one row group, so memory stays near one row group whatever the file size.
    """

    def __init__(self, sink: Any, schema: pa.Schema, avro_schema_json: str,
                 options: "WriteOptions" = None, *, row_group_bytes: int = 32 << 20) -> None:
        options = options or WriteOptions()
        self.schema = schema.remove_metadata()
        self.bloom = bloom_mod.create_bloom_filter(
            num_entries=options.bloom_num_entries,
            fpp=options.bloom_fpp,
            max_entries=options.bloom_max_entries,
        )
        # (with store_schema=False pyarrow writes no schema metadata: every footer entry is
        # added explicitly, at close)
        self._kv = {"parquet.avro.schema": avro_schema_json, "writer.model.name": "avro"}
        self._sink, self._compression = sink, options.compression
        self._writer: pq.ParquetWriter | None = None  # made at the first row group (see _dictionary_columns)
        self.row_group_bytes = row_group_bytes
        self._buf: list[pa.Table] = []
        self._buf_bytes = 0
        self.rows = 0
        self.min_key: str | None = None
        self.max_key: str | None = None

    def write(self, rows: pa.Table) -> None:
        if not rows.num_rows:
            return
        keys = rows.column(RECORD_KEY)
        self.bloom.add_all(keys)  # validates the keys (no nulls, no empty ones) first
        mm = pc.min_max(keys)
        lo, hi = mm["min"].as_py(), mm["max"].as_py()
        self.min_key = lo if self.min_key is None or lo < self.min_key else self.min_key
        self.max_key = hi if self.max_key is None or hi > self.max_key else self.max_key
        self.rows += rows.num_rows
        self._buf.append(rows.replace_schema_metadata(None))
        self._buf_bytes += rows.nbytes
        if self._buf_bytes >= self.row_group_bytes:
            self._flush()

    def _open(self, first: pa.Table | None) -> pq.ParquetWriter:
        if self._writer is None:
            self._writer = pq.ParquetWriter(
                self._sink, self.schema, compression=self._compression, store_schema=False,
                use_dictionary=_dictionary_columns(first) if first is not None else True)
        return self._writer

    def _flush(self) -> None:
        if self._buf:
            t = pa.concat_tables(self._buf)
            self._buf, self._buf_bytes = [], 0
            self._open(t).write_table(t, row_group_size=max(1, t.num_rows))

    def close(self) -> None:
        self._flush()
        kv = dict(self._kv)
        if self.rows:
            kv.update(bloom_mod.footer_entries(self.bloom, self.min_key, self.max_key))
        w = self._open(None)
        w.add_key_value_metadata(kv)
        w.close()


def _dictionary_columns(rows: pa.Table, sample: int = 16_384) -> list[str]:
    """The columns worth dictionary encoding, judged on a sample of the first row group: few
    distinct values (at most 1 in 10 rows). Parquet would try a dictionary on every column of
    every row group and fall back to plain pages once it outgrew its limit; on columns of
    mostly distinct values (record keys, sequence numbers, measures) that is work for nothing
    and larger files. Nested columns, which have no distinct count here, keep the dictionary."""
    head = rows.slice(0, sample)
    n = head.num_rows
    out = []
    for name, col in zip(head.column_names, head.columns):
        try:
            distinct = pc.count_distinct(col, mode="all").as_py()
        except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
            out.append(name)
            continue
        if distinct * 10 <= max(n, 10):
            out.append(name)
    return out


def base_file_bytes(out: pa.Table, avro_schema_json: str, options: WriteOptions = WriteOptions()) -> bytes:
    """Parquet bytes of a base file: meta columns first, Hudi's footer keys (schema, bloom, key range)."""
    sink = io.BytesIO()
    w = BaseFileWriter(sink, out.schema, avro_schema_json, options, row_group_bytes=1 << 62)
    w.write(out)
    w.close()
    return sink.getvalue()

