"""PARQUET_DATA block content (§2.2): one complete Parquet file."""

from __future__ import annotations

from typing import Mapping

from ..errors import CorruptLogBlockError


def decode_parquet_content(content: bytes):
    """PARQUET_DATA content (§2.2): a whole Parquet file, read into a ``pyarrow.Table``."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return pq.read_table(pa.BufferReader(content))
    except (pa.ArrowException, OSError, ValueError) as e:
        raise CorruptLogBlockError(f"undecodable Parquet data block: {e}") from None


def encode_parquet_content(
    table, compression: str = "gzip", key_value_metadata: Mapping[str, str] | None = None
) -> bytes:
    """A complete Parquet file holding ``table``, for a PARQUET_DATA block (§2.2).

    Hudi writes these GZIP-compressed by default. ``key_value_metadata`` is added to the file
    footer (e.g. ``parquet.avro.schema``).
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    if key_value_metadata:
        meta = dict(table.schema.metadata or {})
        meta.update({k.encode(): v.encode() for k, v in key_value_metadata.items()})
        table = table.replace_schema_metadata(meta)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression=compression)
    return sink.getvalue().to_pybytes()
