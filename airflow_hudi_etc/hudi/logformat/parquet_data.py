"""PARQUET_DATA block content (§2.2): one complete Parquet file."""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Iterator, Mapping

from ..errors import CorruptLogBlockError

if TYPE_CHECKING:  # pragma: no cover
    import pyarrow.parquet as pq

    from ..storage import Storage


def read_parquet_bytes(content, columns=None):
    """A whole Parquet file held in memory, read into a ``pyarrow.Table`` on the calling thread.

    Not ``pq.read_table``: that scans through Arrow's dataset layer, whose worker threads may drop
    the last reference to the buffer wrapping our Python bytes after the call returned; when that
    happens while the interpreter exits, the worker cannot take the GIL and the process aborts
    (SIGABRT, "terminate called without an active exception") after its work is done. A
    ``ParquetFile`` read without threads keeps the buffer's owner on this thread, closed here."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    pf = pq.ParquetFile(pa.BufferReader(content))
    try:
        return pf.read(columns=None if columns is None else list(columns), use_threads=False)
    finally:
        pf.close()


@contextlib.contextmanager
def open_parquet_file(storage: "Storage", rel: str) -> Iterator[tuple["pq.ParquetFile", bool]]:
    """A table's Parquet file and whether Arrow's threads may read it: a local file is opened by
    its path (threads welcome); elsewhere the storage's Python file object, which must be read
    without Arrow threads — one of them could drop the last reference to it at interpreter exit
    (see :func:`read_parquet_bytes`). Closed on leaving."""
    import pyarrow.parquet as pq

    by_path = storage.local_paths
    with (contextlib.nullcontext(storage.full(rel)) if by_path else storage.open(rel)) as src:
        pf = pq.ParquetFile(src)
        try:
            yield pf, by_path
        finally:
            pf.close()


def decode_parquet_content(content: bytes):
    """PARQUET_DATA content (§2.2): a whole Parquet file, read into a ``pyarrow.Table``."""
    import pyarrow as pa

    try:
        return read_parquet_bytes(content)
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
