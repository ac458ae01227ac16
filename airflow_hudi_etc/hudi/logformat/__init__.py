"""Hudi log files of table version 6 (Hudi 0.14/0.15): block framing, block contents, file names.

Everything here is specified in ``shared/hudi-format.md``; section numbers below point there.

Block framing (§1)
------------------
A log file is a plain sequence of blocks; there is no file header. Every integer is big-endian
(Java ``DataOutputStream``). One block::

    "#HUDI#"                 6 bytes magic
    block length             int64: every byte after this field, the trailing int64 included
    log format version       int32, always 1 (0 is the pre-2018 legacy layout, not supported)
    block type               int32, ordinal of :class:`BlockType`
    header                   int32 count, then per entry: int32 key ordinal (:class:`HeaderKey`),
                             int32 byte length, that many UTF-8 bytes. No length prefix of its own.
    content length           int64
    content                  type specific, see below
    footer                   same encoding as the header; empty (``00000000``) in practice
    total block size         int64 = block length + 6 (bytes from the magic through the footer)

The trailing size lets Java walk a file backwards, and, with the magic, detects torn writes.

Corrupt and truncated blocks (§1, Java ``HoodieLogFileReader``)
---------------------------------------------------------------
After a magic the reader takes the block length and checks the block *before* parsing it
(``isBlockCorrupt``): the trailing int64 must lie inside the file and equal block length + 6,
and the 6 bytes after it must be another magic or the end of the file. A block that fails is a
corrupt block; reading resumes at the next ``#HUDI#`` found after the corrupt block's magic
(the whole stretch up to there is the corrupt block). :func:`iter_blocks` applies exactly these
rules and reports such stretches as :class:`CorruptBlock` (or raises in ``strict`` mode).
Where this module differs from Java, on purpose, it says so:

* bytes that do not start with a magic at the beginning of the file: Java fails the read
  (``CorruptedLogFileException`` from ``hasNext``); hudi-rs fails too. Here they become a
  :class:`CorruptBlock` and reading resyncs at the next magic (``strict`` raises).
* 1-5 bytes left after the last block (a torn magic): Java's ``readFully`` hits EOF and it
  silently treats the file as ended; the preceding block is valid in both. Here the tail is
  also reported as a :class:`CorruptBlock` with reason ``truncated: ...`` so it is visible;
  which blocks are valid is the same as in Java.
* Java casts the block length to a 32-bit ``int`` before checking it; lengths are taken as the
  full signed 64-bit value here. The two only differ for lengths of 2 GiB or more, which Java
  cannot write (blocks are byte arrays), and such blocks are corrupt in both.
* A block that passes the framing check but whose inside does not parse (header entries or
  content running past the trailer, bytes left over before the trailer) makes Java fail the
  whole read with an exception. Here it raises :class:`~.errors.CorruptLogBlockError` in both
  modes: skipping it silently could drop committed records from a compaction.
* No length field is ever used to allocate memory before it is checked against the bytes that
  are actually there (Java allocates first).

Block contents (§2)
-------------------
* AVRO_DATA (§2.1): int32 version (3), int32 record count, then per record an int32 byte length
  and the record as schemaless Avro binary in the writer schema of the SCHEMA header.
  :func:`encode_avro_records`, :func:`decode_avro_records`. Decoding is the hot path of a
  compaction: it runs a decoder generated per schema (about twice fastavro's per-record speed)
  whose results are checked to be fastavro's, and falls back to fastavro on anything unusual.
* PARQUET_DATA (§2.2): one complete Parquet file. :func:`encode_parquet_content`,
  :func:`decode_parquet_content`.
* DELETE (§2.3): int32 version (3), int32 byte length, then schemaless Avro of
  ``HoodieDeleteRecordList`` whose ordering values use Hudi's wrapper-record union.
  :func:`encode_delete_records`, :func:`decode_delete_records`, :class:`DeleteRecord`.
* COMMAND (§2.4): empty content; a rollback of the blocks of TARGET_INSTANT_TIME.
  :func:`encode_rollback_block`.

Log file names (§3)
-------------------
``.{fileId}_{baseInstant}.log.{version}_{writeToken}`` (optionally ``.cdc``); in table version 6
the instant in the name is the *base instant* of the file slice, not the writing deltacommit.
:func:`parse_log_file_name`, :func:`format_log_file_name`, :func:`log_file_sort_key`.

Modules, one rule each
----------------------
:mod:`.cursor` (big-endian integers, bounded reads), :mod:`.metadata` (headers and footers),
:mod:`.framing` (magic, lengths, trailer, block types, :class:`LogBlock`, :class:`CorruptBlock`),
:mod:`.reader` (iterating a file, corrupt-block handling), :mod:`.avro_data` (AVRO_DATA content and
its reference decoder), :mod:`.avro_fast` (the generated decoder: the fast path),
:mod:`.parquet_data`, :mod:`.delete` (DELETE content), :mod:`.blocks` (whole data, delete and
command blocks), :mod:`.names` (file names).

This room also holds :mod:`.avro_arrow`: AVRO_DATA blocks decoded column by column
straight into Arrow.
"""

from __future__ import annotations

from .avro_data import (
    AVRO_BLOCK_VERSION,
    decode_avro_record_keys,
    decode_avro_records,
    encode_avro_records,
    key_prefix_schema,
)
# merge.py uses these two through this package (lf._avro_block_header, lf.CorruptLogBlockError)
from ..errors import CorruptLogBlockError  # noqa: F401
from .avro_data import _avro_block_header  # noqa: F401
from .blocks import ROLLBACK_COMMAND, encode_data_block, encode_delete_block, encode_rollback_block
from .delete import (
    DELETE_BLOCK_VERSION,
    DELETE_RECORD_LIST_SCHEMA,
    ORDERING_TYPES,
    DeleteRecord,
    decode_delete_records,
    encode_delete_records,
    natural_order_delete,
)
from .framing import FORMAT_VERSION, MAGIC, BlockType, CorruptBlock, LogBlock, encode_block
from .metadata import V6_WRITABLE_KEYS, HeaderKey
from .names import LogFileName, format_log_file_name, log_file_sort_key, parse_log_file_name
from .parquet_data import decode_parquet_content, encode_parquet_content
from .reader import iter_blocks, read_blocks, read_log_file

__all__ = [
    "MAGIC",
    "FORMAT_VERSION",
    "AVRO_BLOCK_VERSION",
    "DELETE_BLOCK_VERSION",
    "ROLLBACK_COMMAND",
    "BlockType",
    "HeaderKey",
    "V6_WRITABLE_KEYS",
    "LogBlock",
    "CorruptBlock",
    "encode_block",
    "iter_blocks",
    "read_blocks",
    "read_log_file",
    "encode_avro_records",
    "decode_avro_record_keys",
    "decode_avro_records",
    "key_prefix_schema",
    "decode_parquet_content",
    "encode_parquet_content",
    "DeleteRecord",
    "ORDERING_TYPES",
    "DELETE_RECORD_LIST_SCHEMA",
    "natural_order_delete",
    "encode_delete_records",
    "decode_delete_records",
    "encode_data_block",
    "encode_delete_block",
    "encode_rollback_block",
    "LogFileName",
    "parse_log_file_name",
    "format_log_file_name",
    "log_file_sort_key",
]
