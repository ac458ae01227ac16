"""Hudi's record-key bloom filter, as stored in the footer of base parquet files.

A base file written by Hudi (table version 6, Hudi 0.14/0.15; unchanged in 1.x) carries four
key-value entries in its parquet footer::

    org.apache.hudi.bloomfilter    base64 of the filter (see the layout below)
    hoodie_bloom_filter_type_code  "DYNAMIC_V0"; written only for dynamic filters; absent = SIMPLE
    hoodie_min_record_key          smallest record key of the file
    hoodie_max_record_key          largest record key of the file

(very old files use ``com.uber.hoodie.bloomfilter`` for the filter; it is read as a fallback.)
The Java BLOOM index prunes file groups with the key range and then the filter, so a writer that
puts wrong bits here makes Java writers miss updates (duplicates). This module reads filters
written by Java and writes filters Java reads back bit for bit.

Serialized form (``java.io.DataOutputStream``, all integers big-endian, no padding):

* The string is standard base64 (``java.util.Base64`` basic alphabet, ``=`` padding, no line
  breaks) of the bytes below.
* One standard filter ("row", Hadoop's ``Filter``/``BloomFilter`` Writable layout)::

      int32  version     = -1        (a positive value here is the legacy unversioned layout:
                                      it is nbHash itself, and the hash is Jenkins)
      int32  nbHash                  number of hash positions per key (30 for the defaults)
      int8   hashType                0 = Jenkins (lookup3 hashlittle), 1 = Murmur2 (Hadoop's)
      int32  vectorSize              number of bits (2,587,966 for the defaults)
      bytes  ceil(vectorSize / 8)    bit i is byte i // 8, mask 1 << (i % 8) (LSB first);
                                     unused high bits of the last byte are zero

* ``SIMPLE`` is exactly one row.
* ``DYNAMIC_V0`` (Hudi's bounded dynamic filter) is a header, three counters, then the rows::

      int32 -1, int32 nbHash, int8 hashType, int32 vectorSize      (same header as a row)
      int32  nr                 keys per row (= num_entries, 60,000 by default)
      int32  currentNbRecord    keys added to the active row so far (keeps counting once the
                                bound is reached)
      int32  rows               number of rows that follow (1 until nr keys were added)
      row * rows                each a full standard filter as above, with its own header

  The bound (``maxNr`` = ``hoodie.bloom.index.filter.dynamic.max.entries``) is *not* serialized.

Hashing a key: the key is the UTF-8 bytes of the record key. Position ``i`` (0 <= i < nbHash) is
``abs(h_i % vectorSize)`` with Java's truncating ``%`` on the signed 32-bit ``h_i``, where
``h_0 = hash(key, seed=0)`` and ``h_i = hash(key, seed=h_{i-1})``: the full previous hash value
seeds the next round. The Murmur variant is Hadoop's MurmurHash2 port, whose tail bytes are
*sign-extended* and taken in the order ``tail[0] << 16``, ``tail[-2] << 8``, ``tail[-1]`` (for a
3-byte tail), which differs from the reference C code for non-ASCII bytes and 2/3-byte tails.

Sizing (``BloomFilterUtils``): ``bits = ceil(n * (-ln(fpp) / ln(2)^2))`` and
``nbHash = ceil(ln(2) * bits / n)``.

Dynamic filter growth (``InternalDynamicBloomFilter.add``): keys go into the last row until it
holds ``nr`` keys; then a new row is added while ``rows * nr < maxNr``; once that bound is reached
keys are spread round-robin over all rows starting again at row 0. A filter *deserialized* by Java
has ``maxNr = 0`` (it is not in the bytes), so adding to it never adds rows; we mirror that.

Modules, one rule each: :mod:`.params` (constants, sizing), :mod:`.hashing` (the reference hash
of one key), :mod:`.hashing_fast` (the same positions for many keys with numpy: the fast path),
:mod:`.codec` (bytes and base64), :mod:`.filters` (interface, SIMPLE), :mod:`.dynamic`
(DYNAMIC_V0), :mod:`.footer` (parquet footer entries, factory).
"""

from __future__ import annotations

from .dynamic import DynamicBloomFilter
from .filters import BloomFilter, SimpleBloomFilter
from .footer import bloom_filter_from_footer, create_bloom_filter, footer_entries, read_bloom_filter
from .hashing import hash_positions, jenkins_hash, murmur_hash
from .params import (
    BLOOM_FILTER_FOOTER_KEY,
    BLOOM_FILTER_TYPE_CODE_FOOTER_KEY,
    DEFAULT_FPP,
    DEFAULT_MAX_ENTRIES,
    DEFAULT_NUM_ENTRIES,
    DEFAULT_TYPE_CODE,
    DYNAMIC_V0,
    JENKINS_HASH,
    MAX_RECORD_KEY_FOOTER_KEY,
    MIN_RECORD_KEY_FOOTER_KEY,
    MURMUR_HASH,
    OLD_BLOOM_FILTER_FOOTER_KEY,
    SIMPLE,
    InvalidBloomFilterError,
    optimal_num_of_bits,
    optimal_num_of_hash_functions,
)

__all__ = [
    "BLOOM_FILTER_FOOTER_KEY",
    "OLD_BLOOM_FILTER_FOOTER_KEY",
    "BLOOM_FILTER_TYPE_CODE_FOOTER_KEY",
    "MIN_RECORD_KEY_FOOTER_KEY",
    "MAX_RECORD_KEY_FOOTER_KEY",
    "SIMPLE",
    "DYNAMIC_V0",
    "JENKINS_HASH",
    "MURMUR_HASH",
    "DEFAULT_NUM_ENTRIES",
    "DEFAULT_FPP",
    "DEFAULT_TYPE_CODE",
    "DEFAULT_MAX_ENTRIES",
    "InvalidBloomFilterError",
    "BloomFilter",
    "SimpleBloomFilter",
    "DynamicBloomFilter",
    "optimal_num_of_bits",
    "optimal_num_of_hash_functions",
    "murmur_hash",
    "jenkins_hash",
    "hash_positions",
    "create_bloom_filter",
    "bloom_filter_from_footer",
    "read_bloom_filter",
    "footer_entries",
]
