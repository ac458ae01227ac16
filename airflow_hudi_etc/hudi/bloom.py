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
"""

from __future__ import annotations

import base64
import binascii
import math
import struct
from functools import lru_cache
from typing import Iterable, Iterator, Mapping, Sequence

import numpy as np

from .errors import InvalidInputError, UnsupportedFeatureError

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

# --------------------------------------------------------------------------- constants
BLOOM_FILTER_FOOTER_KEY = "org.apache.hudi.bloomfilter"
OLD_BLOOM_FILTER_FOOTER_KEY = "com.uber.hoodie.bloomfilter"
BLOOM_FILTER_TYPE_CODE_FOOTER_KEY = "hoodie_bloom_filter_type_code"
MIN_RECORD_KEY_FOOTER_KEY = "hoodie_min_record_key"
MAX_RECORD_KEY_FOOTER_KEY = "hoodie_max_record_key"

SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"

JENKINS_HASH = 0
MURMUR_HASH = 1

#: Hudi defaults: hoodie.index.bloom.num_entries / .fpp, hoodie.bloom.index.filter.type /
#: hoodie.bloom.index.filter.dynamic.max.entries
DEFAULT_NUM_ENTRIES = 60000
DEFAULT_FPP = 0.000000001
DEFAULT_TYPE_CODE = DYNAMIC_V0
DEFAULT_MAX_ENTRIES = 100000

_VERSION = -1
_INT_MAX = 0x7FFFFFFF
_MASK32 = 0xFFFFFFFF
_M = 0x5BD1E995
_M_U32 = np.uint32(_M)
_GOLDEN = 0xDEADBEEF
#: keys hashed per numpy batch (bounds the (batch, nbHash) int64 position matrix)
_BATCH = 1 << 16
#: below this many keys the pure-Python hash is faster than numpy's per-call overhead
_SCALAR_LIMIT = 8


class InvalidBloomFilterError(InvalidInputError, ValueError):
    """A serialized bloom filter (or its footer entries) is malformed: bad base64, truncated,
    trailing bytes, impossible sizes. Also a ``ValueError`` for callers that expect one."""

    code = "invalid_bloom_filter"


# --------------------------------------------------------------------------- sizing
def optimal_num_of_bits(num_entries: int, fpp: float) -> int:
    """Bit-vector size Hudi picks for ``num_entries`` keys at false-positive rate ``fpp``."""
    _check_sizing(num_entries, fpp)
    bits = math.ceil(num_entries * (-math.log(fpp) / (math.log(2) * math.log(2))))
    if bits > _INT_MAX:
        raise InvalidInputError(
            f"bloom filter of {num_entries} entries at fpp {fpp} needs {bits} bits, "
            f"more than a Java int can hold"
        )
    return int(bits)


def optimal_num_of_hash_functions(num_bits: int, num_entries: int) -> int:
    """Number of hash positions per key Hudi picks for a vector of ``num_bits`` bits."""
    if num_entries <= 0:
        raise InvalidInputError(f"bloom filter num_entries must be > 0, got {num_entries}")
    return int(math.ceil(math.log(2) * num_bits / num_entries))


def _check_sizing(num_entries: int, fpp: float) -> None:
    if not isinstance(num_entries, int) or isinstance(num_entries, bool) or num_entries <= 0:
        raise InvalidInputError(f"bloom filter num_entries must be a positive int, got {num_entries!r}")
    if num_entries > _INT_MAX:
        raise InvalidInputError(f"bloom filter num_entries {num_entries} exceeds a Java int")
    if not (isinstance(fpp, (int, float)) and 0.0 < float(fpp) < 1.0):
        raise InvalidInputError(f"bloom filter fpp must be in (0, 1), got {fpp!r}")


# --------------------------------------------------------------------------- hashing (scalar)
def _to_signed32(v: int) -> int:
    v &= _MASK32
    return v - 0x100000000 if v & 0x80000000 else v


def _murmur_blocks(data: bytes) -> tuple[list[int], int | None]:
    """The seed-independent part of Hadoop's MurmurHash2: mixed 4-byte blocks and the tail word."""
    n4 = len(data) >> 2
    blocks: list[int] = []
    for (k,) in struct.iter_unpack("<I", data[: n4 * 4]):
        k = (k * _M) & _MASK32
        k ^= k >> 24
        blocks.append((k * _M) & _MASK32)
    left = len(data) - n4 * 4
    if not left:
        return blocks, None
    tail = 0
    for j in range(left):
        b = data[n4 * 4 + j]
        if b >= 0x80:  # Java bytes are signed: sign-extend before shifting
            b -= 0x100
        tail ^= (b << (8 * (left - 1 - j))) & _MASK32
    return blocks, tail


def _murmur_finish(blocks: list[int], tail: int | None, length: int, seed: int) -> int:
    h = (seed ^ length) & _MASK32
    for k in blocks:
        h = ((h * _M) & _MASK32) ^ k
    if tail is not None:
        h = ((h ^ tail) * _M) & _MASK32
    h ^= h >> 13
    h = (h * _M) & _MASK32
    h ^= h >> 15
    return h


def murmur_hash(data: bytes, seed: int = -1) -> int:
    """Hadoop/Hudi ``MurmurHash.hash(data, data.length, seed)``; returns a signed 32-bit int."""
    blocks, tail = _murmur_blocks(bytes(data))
    return _to_signed32(_murmur_finish(blocks, tail, len(data), seed))


def _rot(x: int, k: int) -> int:
    return ((x << k) | (x >> (32 - k))) & _MASK32


def jenkins_hash(data: bytes, seed: int = -1) -> int:
    """Hadoop/Hudi ``JenkinsHash.hash(data, data.length, seed)`` (Bob Jenkins' lookup3
    ``hashlittle``); returns a signed 32-bit int. Only legacy filters use it."""
    data = bytes(data)
    length = len(data)
    a = b = c = (_GOLDEN + length + seed) & _MASK32
    if length == 0:
        return _to_signed32(c)
    # every block but the last (1..12 bytes) goes through mix(); the last one through final()
    nfull = (length - 1) // 12
    padded = data + bytes(12 * (nfull + 1) - length)
    words = struct.unpack(f"<{3 * (nfull + 1)}I", padded)
    for i in range(nfull):
        a = (a + words[3 * i]) & _MASK32
        b = (b + words[3 * i + 1]) & _MASK32
        c = (c + words[3 * i + 2]) & _MASK32
        a = (a - c) & _MASK32; a ^= _rot(c, 4); c = (c + b) & _MASK32  # noqa: E702
        b = (b - a) & _MASK32; b ^= _rot(a, 6); a = (a + c) & _MASK32  # noqa: E702
        c = (c - b) & _MASK32; c ^= _rot(b, 8); b = (b + a) & _MASK32  # noqa: E702
        a = (a - c) & _MASK32; a ^= _rot(c, 16); c = (c + b) & _MASK32  # noqa: E702
        b = (b - a) & _MASK32; b ^= _rot(a, 19); a = (a + c) & _MASK32  # noqa: E702
        c = (c - b) & _MASK32; c ^= _rot(b, 4); b = (b + a) & _MASK32  # noqa: E702
    a = (a + words[3 * nfull]) & _MASK32
    b = (b + words[3 * nfull + 1]) & _MASK32
    c = (c + words[3 * nfull + 2]) & _MASK32
    c ^= b; c = (c - _rot(b, 14)) & _MASK32  # noqa: E702
    a ^= c; a = (a - _rot(c, 11)) & _MASK32  # noqa: E702
    b ^= a; b = (b - _rot(a, 25)) & _MASK32  # noqa: E702
    c ^= b; c = (c - _rot(b, 16)) & _MASK32  # noqa: E702
    a ^= c; a = (a - _rot(c, 4)) & _MASK32  # noqa: E702
    b ^= a; b = (b - _rot(a, 14)) & _MASK32  # noqa: E702
    c ^= b; c = (c - _rot(b, 24)) & _MASK32  # noqa: E702
    return _to_signed32(c)


def _positions_scalar(data: bytes, nb_hash: int, vector_size: int, hash_type: int) -> list[int]:
    out: list[int] = []
    seed = 0
    if hash_type == MURMUR_HASH:
        blocks, tail = _murmur_blocks(data)
        length = len(data)
        for _ in range(nb_hash):
            seed = _to_signed32(_murmur_finish(blocks, tail, length, seed))
            out.append(abs(seed) % vector_size)  # == abs(seed % v) with Java's truncating %
    else:
        for _ in range(nb_hash):
            seed = jenkins_hash(data, seed)
            out.append(abs(seed) % vector_size)
    return out


# --------------------------------------------------------------------------- hashing (numpy)
def _rot_np(x: np.ndarray, k: int) -> np.ndarray:
    return (x << np.uint32(k)) | (x >> np.uint32(32 - k))


def _abs_mod(h: np.ndarray, vector_size: int, out: np.ndarray, tmp: np.ndarray) -> None:
    """``out[:] = abs(int32(h)) % vector_size`` for uint32 ``h`` (Java's ``Math.abs(h % size)``).

    The remainder is taken with a multiply and a shift instead of a division (an integer
    division costs as much as the whole hash round): for 0 <= n < 2**31 and
    ``m = ceil(2**(31 + l) / d)``, ``l = ceil(log2 d)``, ``n // d == (m * n) >> (31 + l)``
    exactly (Granlund & Montgomery 1994, thm. 4.2), and ``m * n`` < 2**64. The one value it
    does not cover, ``abs(INT_MIN) = 2**31``, is fixed up apart.
    """
    np.right_shift(h.view(np.int32), 31, out=tmp.view(np.int32))  # 0 or -1: the sign
    a = np.bitwise_xor(h, tmp)
    np.subtract(a, tmp, out=a)  # two's-complement abs, as uint32 (INT_MIN -> 2**31)
    m, shift = _div_magic(vector_size)
    n = a.astype(np.uint64)
    q = n * np.uint64(m)
    q >>= np.uint64(shift)
    q *= np.uint64(vector_size)
    n -= q
    top = a == np.uint32(1 << 31)
    if top.any():
        n[top] = (1 << 31) % vector_size
    out[:] = n


@lru_cache(maxsize=16)
def _div_magic(d: int) -> tuple[int, int]:
    ell = max(0, (d - 1).bit_length())
    return -(-(1 << (31 + ell)) // d), 31 + ell


def _murmur_positions_np(data: np.ndarray, nb_hash: int, vector_size: int) -> np.ndarray:
    """(n, L) uint8 keys of one length -> (n, nb_hash) positions (a transposed view of rows
    of one hash round each: every step works in place on contiguous uint32 vectors)."""
    n, length = data.shape
    n4 = length >> 2
    blocks = None
    if n4:
        words = np.ascontiguousarray(data[:, : n4 * 4]).view("<u4").astype(np.uint32)
        words *= _M_U32
        words ^= words >> np.uint32(24)
        words *= _M_U32
        blocks = np.ascontiguousarray(words.T)  # (n4, n): one contiguous row per block
    left = length - n4 * 4
    tail = None
    if left:
        signed = data[:, n4 * 4 :].view(np.int8).astype(np.int32).view(np.uint32)
        tail = np.zeros(n, dtype=np.uint32)
        for j in range(left):
            tail ^= signed[:, j] << np.uint32(8 * (left - 1 - j))
    out = np.empty((nb_hash, n), dtype=np.intp)  # bit positions, ready to index with
    h = np.zeros(n, dtype=np.uint32)  # the seed of round 0; each round's hash seeds the next
    tmp = np.empty(n, dtype=np.uint32)
    length_u = np.uint32(length)
    s13, s15 = np.uint32(13), np.uint32(15)
    for i in range(nb_hash):
        np.bitwise_xor(h, length_u, out=h)
        if blocks is not None:
            for j in range(n4):
                np.multiply(h, _M_U32, out=h)
                np.bitwise_xor(h, blocks[j], out=h)
        if tail is not None:
            np.bitwise_xor(h, tail, out=h)
            np.multiply(h, _M_U32, out=h)
        np.right_shift(h, s13, out=tmp)
        np.bitwise_xor(h, tmp, out=h)
        np.multiply(h, _M_U32, out=h)
        np.right_shift(h, s15, out=tmp)
        np.bitwise_xor(h, tmp, out=h)
        _abs_mod(h, vector_size, out[i], tmp)
    return out.T


def _jenkins_positions_np(data: np.ndarray, nb_hash: int, vector_size: int) -> np.ndarray:
    n, length = data.shape
    nblk = (length - 1) // 12 + 1
    padded = np.zeros((n, nblk * 12), dtype=np.uint8)
    padded[:, :length] = data
    words = padded.view("<u4").astype(np.uint32).reshape(n, nblk, 3)
    wa = [np.ascontiguousarray(words[:, i, 0]) for i in range(nblk)]
    wb = [np.ascontiguousarray(words[:, i, 1]) for i in range(nblk)]
    wc = [np.ascontiguousarray(words[:, i, 2]) for i in range(nblk)]
    out = np.empty((n, nb_hash), dtype=np.int64)
    seed = np.zeros(n, dtype=np.uint32)
    for r in range(nb_hash):
        a = seed + np.uint32((_GOLDEN + length) & _MASK32)
        b = a.copy()
        c = a.copy()
        for i in range(nblk - 1):
            a += wa[i]; b += wb[i]; c += wc[i]  # noqa: E702
            a -= c; a ^= _rot_np(c, 4); c += b  # noqa: E702
            b -= a; b ^= _rot_np(a, 6); a += c  # noqa: E702
            c -= b; c ^= _rot_np(b, 8); b += a  # noqa: E702
            a -= c; a ^= _rot_np(c, 16); c += b  # noqa: E702
            b -= a; b ^= _rot_np(a, 19); a += c  # noqa: E702
            c -= b; c ^= _rot_np(b, 4); b += a  # noqa: E702
        a += wa[-1]; b += wb[-1]; c += wc[-1]  # noqa: E702
        c ^= b; c -= _rot_np(b, 14)  # noqa: E702
        a ^= c; a -= _rot_np(c, 11)  # noqa: E702
        b ^= a; b -= _rot_np(a, 25)  # noqa: E702
        c ^= b; c -= _rot_np(b, 16)  # noqa: E702
        a ^= c; a -= _rot_np(c, 4)  # noqa: E702
        b ^= a; b -= _rot_np(a, 14)  # noqa: E702
        c ^= b; c -= _rot_np(b, 24)  # noqa: E702
        out[:, r] = np.abs(c.view(np.int32).astype(np.int64)) % vector_size
        seed = c
    return out


def _key_bytes(key: object) -> bytes:
    if isinstance(key, str):
        # Java's String.getBytes(UTF_8) writes '?' for unpaired surrogates; so does 'replace'
        b = key.encode("utf-8", "replace")
    elif isinstance(key, (bytes, bytearray, memoryview)):
        b = bytes(key)
    elif key is None:
        raise InvalidInputError("bloom filter key cannot be null")
    else:
        raise InvalidInputError(f"bloom filter key must be str or bytes, got {type(key).__name__}")
    if not b:
        raise InvalidInputError("bloom filter key must not be empty (Java rejects zero-length keys)")
    return b


def _encode_keys(keys: Iterable[object]) -> list[bytes]:
    out: list[bytes] = []
    append = out.append
    for k in keys:
        if type(k) is str and k:
            append(k.encode("utf-8", "replace"))
        else:
            append(_key_bytes(k))
    return out


def _iter_positions(
    encoded: Sequence[bytes], nb_hash: int, vector_size: int, hash_type: int
) -> Iterator[tuple[np.ndarray | slice, np.ndarray]]:
    """Yield (index into ``encoded``, (n, nb_hash) positions) for batches of equal-length keys."""
    total = len(encoded)
    if total == 0:
        return
    if total <= _SCALAR_LIMIT:
        pos = [_positions_scalar(b, nb_hash, vector_size, hash_type) for b in encoded]
        yield slice(0, total), np.asarray(pos, dtype=np.int64).reshape(total, nb_hash)
        return
    hasher = _murmur_positions_np if hash_type == MURMUR_HASH else _jenkins_positions_np
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=total)
    for start in range(0, total, _BATCH):
        stop = min(start + _BATCH, total)
        lens = lengths[start:stop]
        first = int(lens[0])
        if bool((lens == first).all()):
            raw = b"".join(encoded[start:stop])
            data = np.frombuffer(raw, dtype=np.uint8).reshape(stop - start, first)
            yield slice(start, stop), hasher(data, nb_hash, vector_size)
            continue
        for length in np.unique(lens).tolist():
            idx = np.flatnonzero(lens == length) + start
            raw = b"".join([encoded[i] for i in idx.tolist()])
            data = np.frombuffer(raw, dtype=np.uint8).reshape(len(idx), length)
            yield idx, hasher(data, nb_hash, vector_size)


class _PackedKeys:
    """Keys as one UTF-8 buffer plus offsets (what Arrow holds): no bytes object per key."""

    __slots__ = ("data", "offsets")

    def __init__(self, data: np.ndarray, offsets: np.ndarray):
        self.data, self.offsets = data, offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1


def _pack_keys(keys: Iterable[object]) -> "_PackedKeys | list[bytes]":
    """The keys as :class:`_PackedKeys` when they are many non-empty strings that Arrow holds
    as UTF-8 exactly as ``str.encode('utf-8')`` gives it (no lone surrogates): a list of ``str``
    or an Arrow string array; otherwise the per-key encoding of :func:`_encode_keys` (which
    also raises for bad keys)."""
    import pyarrow as pa

    if isinstance(keys, (pa.Array, pa.ChunkedArray)):
        arr = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
        if len(arr) <= _SCALAR_LIMIT or arr.null_count or not (pa.types.is_string(arr.type)
                                                               or pa.types.is_large_string(arr.type)):
            return _encode_keys(arr.to_pylist())
    else:
        if not isinstance(keys, list) or len(keys) <= _SCALAR_LIMIT:
            return _encode_keys(keys)
        try:
            arr = pa.array(keys, from_pandas=False)
        except Exception:  # mixed types, surrogates (Arrow refuses them), ...: the per-key path decides
            return _encode_keys(keys)
        if not isinstance(arr, pa.Array) or arr.type != pa.string() or arr.null_count:
            return _encode_keys(keys)
    arr = arr.cast(pa.large_string())
    bufs = arr.buffers()
    n = len(arr)
    offsets = np.frombuffer(bufs[1], dtype=np.int64, count=n + 1, offset=arr.offset * 8)
    if n and bool((offsets[1:] == offsets[:-1]).any()):  # an empty key: the per-key path raises
        return _encode_keys(arr.to_pylist())
    base = int(offsets[0])
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    if base:
        data, offsets = data[base:], offsets - base
    return _PackedKeys(data, offsets)


def _iter_positions_packed(
    keys: _PackedKeys, nb_hash: int, vector_size: int, hash_type: int
) -> Iterator[tuple[np.ndarray | slice, np.ndarray]]:
    """:func:`_iter_positions` over packed keys: the same batches, indexes and positions."""
    hasher = _murmur_positions_np if hash_type == MURMUR_HASH else _jenkins_positions_np
    total = len(keys)
    offsets, data = keys.offsets, keys.data
    lengths = offsets[1:] - offsets[:-1]
    for start in range(0, total, _BATCH):
        stop = min(start + _BATCH, total)
        lens = lengths[start:stop]
        first = int(lens[0])
        if bool((lens == first).all()):
            raw = data[int(offsets[start]) : int(offsets[stop])]
            yield slice(start, stop), hasher(raw.reshape(stop - start, first), nb_hash, vector_size)
            continue
        for length in np.unique(lens).tolist():
            idx = np.flatnonzero(lens == length) + start
            rows = data[offsets[idx][:, None] + np.arange(length, dtype=np.int64)]
            yield idx, hasher(rows, nb_hash, vector_size)


def _positions_of(encoded, nb_hash: int, vector_size: int, hash_type: int):
    if isinstance(encoded, _PackedKeys):
        return _iter_positions_packed(encoded, nb_hash, vector_size, hash_type)
    return _iter_positions(encoded, nb_hash, vector_size, hash_type)


def hash_positions(key: str | bytes, nb_hash: int, vector_size: int, hash_type: int = MURMUR_HASH) -> list[int]:
    """The ``nb_hash`` bit positions Hudi sets for ``key`` (UTF-8 of a str) in a vector of
    ``vector_size`` bits (``HashFunction.hash``)."""
    _check_params(vector_size, nb_hash, hash_type, error=InvalidInputError)
    return _positions_scalar(_key_bytes(key), nb_hash, vector_size, hash_type)


def _check_params(vector_size: int, nb_hash: int, hash_type: int, error: type[Exception]) -> None:
    if not 0 < vector_size <= _INT_MAX:
        raise error(f"bloom filter vector size must be in 1..2^31-1, got {vector_size}")
    if not 0 < nb_hash <= _INT_MAX:
        raise error(f"bloom filter number of hash functions must be > 0, got {nb_hash}")
    if hash_type not in (JENKINS_HASH, MURMUR_HASH):
        raise UnsupportedFeatureError(f"bloom filter hash type {hash_type} is not known (0=Jenkins, 1=Murmur)")


# --------------------------------------------------------------------------- byte codec
class _Reader:
    __slots__ = ("buf", "pos")

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def take(self, n: int) -> bytes:
        end = self.pos + n
        if n < 0 or end > len(self.buf):
            raise InvalidBloomFilterError(
                f"bloom filter is truncated: needs {n} bytes at offset {self.pos}, "
                f"only {len(self.buf) - self.pos} left"
            )
        out = self.buf[self.pos : end]
        self.pos = end
        return out

    def int32(self) -> int:
        return struct.unpack(">i", self.take(4))[0]

    def int8(self) -> int:
        return struct.unpack(">b", self.take(1))[0]


def _read_header(r: _Reader) -> tuple[int, int, int]:
    ver = r.int32()
    if ver > 0:  # legacy unversioned Hadoop layout: the first int is nbHash, hash is Jenkins
        nb_hash, hash_type = ver, JENKINS_HASH
    elif ver == _VERSION:
        nb_hash = r.int32()
        hash_type = r.int8()
    else:
        raise UnsupportedFeatureError(f"bloom filter serialization version {ver} is not supported")
    vector_size = r.int32()
    _check_params(vector_size, nb_hash, hash_type, error=InvalidBloomFilterError)
    return nb_hash, hash_type, vector_size


def _header_bytes(nb_hash: int, hash_type: int, vector_size: int) -> bytes:
    return struct.pack(">iibi", _VERSION, nb_hash, hash_type, vector_size)


def _read_bits(r: _Reader, vector_size: int) -> np.ndarray:
    raw = r.take((vector_size + 7) // 8)
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8), bitorder="little")
    # a copy of exactly vector_size bits; Java ignores the unused high bits of the last byte
    return bits[:vector_size].astype(np.bool_)


def _bits_bytes(bits: np.ndarray) -> bytes:
    return np.packbits(bits, bitorder="little").tobytes()


def _b64decode(serialized: str | bytes) -> bytes:
    if isinstance(serialized, (bytes, bytearray, memoryview)):
        raw = bytes(serialized)
    elif isinstance(serialized, str):
        try:
            raw = serialized.encode("ascii")
        except UnicodeEncodeError as e:
            raise InvalidBloomFilterError("bloom filter string is not base64 (non-ASCII characters)") from e
    else:
        raise InvalidBloomFilterError(f"bloom filter must be a base64 string, got {type(serialized).__name__}")
    if len(raw) % 4 and b"=" not in raw:
        raw += b"=" * (-len(raw) % 4)  # java.util.Base64's decoder accepts missing padding
    try:
        return base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError) as e:
        raise InvalidBloomFilterError(f"bloom filter string is not valid base64: {e}") from e


# --------------------------------------------------------------------------- filters
class BloomFilter:
    """Common interface of Hudi's bloom filters (``org.apache.hudi.common.bloom.BloomFilter``).

    Keys are record keys (``str``, hashed as UTF-8) or raw ``bytes``; empty keys are rejected
    as Java does. ``serialize()`` gives the footer string Java writes and reads.
    """

    type_code: str = ""

    def __init__(self, vector_size: int, nb_hash: int, hash_type: int = MURMUR_HASH) -> None:
        _check_params(vector_size, nb_hash, hash_type, error=InvalidInputError)
        self._vector_size = int(vector_size)
        self._nb_hash = int(nb_hash)
        self._hash_type = int(hash_type)

    # -- parameters
    @property
    def vector_size(self) -> int:
        return self._vector_size

    @property
    def nb_hash(self) -> int:
        return self._nb_hash

    @property
    def hash_type(self) -> int:
        return self._hash_type

    # -- single keys
    def add(self, key: str | bytes) -> None:
        self.add_all([key])

    def might_contain(self, key: str | bytes) -> bool:
        pos = _positions_scalar(_key_bytes(key), self._nb_hash, self._vector_size, self._hash_type)
        return any(bool(row[pos].all()) for row in self._rows())

    def __contains__(self, key: object) -> bool:
        return self.might_contain(key)  # type: ignore[arg-type]

    # -- batches
    def add_all(self, keys: Iterable[str | bytes]) -> None:
        """Add keys in order (the order matters only for which row of a dynamic filter they fill)."""
        encoded = _pack_keys(keys)  # validate everything before changing any state
        if not len(encoded):
            return
        targets = self._assign_rows(len(encoded))
        rows = self._rows()
        for idx, pos in _positions_of(encoded, self._nb_hash, self._vector_size, self._hash_type):
            by_round = pos.T  # (nb_hash, n): contiguous for the numpy Murmur path
            if targets is None:
                rows[0][by_round.ravel()] = True
                continue
            t = targets[idx]
            first = int(t[0])
            if bool((t == first).all()):
                rows[first][by_round.ravel()] = True
                continue
            # keys spread over rows: one scatter into the rows laid end to end, then per row
            lo, hi = int(t.min()), int(t.max())
            span = np.zeros((hi - lo + 1) * self._vector_size, dtype=np.bool_)
            span[(by_round + ((t - lo) * self._vector_size)[None, :]).ravel()] = True
            for r in range(lo, hi + 1):
                rows[r] |= span[(r - lo) * self._vector_size : (r - lo + 1) * self._vector_size]

    def might_contain_many(self, keys: Iterable[str | bytes]) -> list[bool]:
        encoded = _pack_keys(keys)
        result = np.zeros(len(encoded), dtype=np.bool_)
        rows = self._rows()
        for idx, pos in _positions_of(encoded, self._nb_hash, self._vector_size, self._hash_type):
            hit = np.zeros(pos.shape[0], dtype=np.bool_)
            for row in rows:
                hit |= row[pos].all(axis=1)
            result[idx] = hit
        return result.tolist()

    # -- serialization
    def to_bytes(self) -> bytes:
        raise NotImplementedError

    def serialize(self) -> str:
        """The footer string: base64 of the ``DataOutputStream`` bytes (``serializeToString``)."""
        return base64.b64encode(self.to_bytes()).decode("ascii")

    # -- to implement
    def _rows(self) -> list[np.ndarray]:
        raise NotImplementedError

    def _assign_rows(self, n: int) -> np.ndarray | None:
        """Row index for each of ``n`` keys about to be added (None: all in row 0)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(vector_size={self._vector_size}, nb_hash={self._nb_hash}, "
            f"hash_type={self._hash_type})"
        )


class SimpleBloomFilter(BloomFilter):
    """``SIMPLE``: one fixed-size standard filter (Hadoop ``BloomFilter`` layout)."""

    type_code = SIMPLE

    def __init__(self, vector_size: int, nb_hash: int, hash_type: int = MURMUR_HASH) -> None:
        super().__init__(vector_size, nb_hash, hash_type)
        self._bits = np.zeros(self._vector_size, dtype=np.bool_)

    @classmethod
    def create(cls, num_entries: int = DEFAULT_NUM_ENTRIES, fpp: float = DEFAULT_FPP) -> "SimpleBloomFilter":
        bits = optimal_num_of_bits(num_entries, fpp)
        return cls(bits, optimal_num_of_hash_functions(bits, num_entries), MURMUR_HASH)

    @classmethod
    def from_bytes(cls, data: bytes) -> "SimpleBloomFilter":
        r = _Reader(bytes(data))
        nb_hash, hash_type, vector_size = _read_header(r)
        bits = _read_bits(r, vector_size)
        _check_consumed(r)
        f = cls.__new__(cls)
        BloomFilter.__init__(f, vector_size, nb_hash, hash_type)
        f._bits = bits
        return f

    @classmethod
    def deserialize(cls, serialized: str | bytes) -> "SimpleBloomFilter":
        return cls.from_bytes(_b64decode(serialized))

    def to_bytes(self) -> bytes:
        return _header_bytes(self._nb_hash, self._hash_type, self._vector_size) + _bits_bytes(self._bits)

    def _rows(self) -> list[np.ndarray]:
        return [self._bits]

    def _assign_rows(self, n: int) -> None:
        return None

    @property
    def bit_count(self) -> int:
        return int(np.count_nonzero(self._bits))


class DynamicBloomFilter(BloomFilter):
    """``DYNAMIC_V0``: Hudi's bounded dynamic filter (``HoodieDynamicBoundedBloomFilter``).

    Rows of ``nr`` keys each are added as keys arrive, up to ``max_entries`` keys in all; past the
    bound keys are spread round-robin over the existing rows (false-positive rate then degrades).
    """

    type_code = DYNAMIC_V0

    def __init__(
        self,
        vector_size: int,
        nb_hash: int,
        hash_type: int = MURMUR_HASH,
        nr: int = DEFAULT_NUM_ENTRIES,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> None:
        super().__init__(vector_size, nb_hash, hash_type)
        if not 0 < nr <= _INT_MAX:
            raise InvalidInputError(f"dynamic bloom filter rows must hold 1..2^31-1 keys, got {nr}")
        self._nr = int(nr)
        self._max_entries = int(max_entries)
        self._current_nb_record = 0
        self._reached_max = False
        self._cur_matrix_index = 0
        self._matrix: list[np.ndarray] = [np.zeros(self._vector_size, dtype=np.bool_)]

    @classmethod
    def create(
        cls,
        num_entries: int = DEFAULT_NUM_ENTRIES,
        fpp: float = DEFAULT_FPP,
        max_entries: int = DEFAULT_MAX_ENTRIES,
    ) -> "DynamicBloomFilter":
        bits = optimal_num_of_bits(num_entries, fpp)
        return cls(bits, optimal_num_of_hash_functions(bits, num_entries), MURMUR_HASH, num_entries, max_entries)

    @classmethod
    def from_bytes(cls, data: bytes, max_entries: int = 0) -> "DynamicBloomFilter":
        """Decode the bytes. ``max_entries`` is not serialized; Java leaves it 0 (never grow)."""
        r = _Reader(bytes(data))
        nb_hash, hash_type, vector_size = _read_header(r)
        nr = r.int32()
        current = r.int32()
        nrows = r.int32()
        if nr <= 0 or current < 0:
            raise InvalidBloomFilterError(f"dynamic bloom filter has impossible counters nr={nr}, current={current}")
        if nrows <= 0:
            raise InvalidBloomFilterError(f"dynamic bloom filter has {nrows} rows")
        # each row needs at least its header and bit vector: refuse absurd counts before allocating
        row_len = 13 + (vector_size + 7) // 8
        if nrows * row_len > len(r.buf) - r.pos:
            raise InvalidBloomFilterError(
                f"bloom filter is truncated: {nrows} rows of {row_len} bytes do not fit in "
                f"{len(r.buf) - r.pos} bytes"
            )
        matrix: list[np.ndarray] = []
        for i in range(nrows):
            row_params = _read_header(r)
            if row_params != (nb_hash, hash_type, vector_size):
                raise InvalidBloomFilterError(
                    f"dynamic bloom filter row {i} has parameters {row_params}, "
                    f"the filter {(nb_hash, hash_type, vector_size)}"
                )
            matrix.append(_read_bits(r, vector_size))
        _check_consumed(r)
        f = cls(vector_size, nb_hash, hash_type, nr, max_entries)
        f._current_nb_record = current
        f._matrix = matrix
        return f

    @classmethod
    def deserialize(cls, serialized: str | bytes, max_entries: int = 0) -> "DynamicBloomFilter":
        return cls.from_bytes(_b64decode(serialized), max_entries)

    def to_bytes(self) -> bytes:
        header = _header_bytes(self._nb_hash, self._hash_type, self._vector_size)
        counters = struct.pack(">iii", self._nr, _to_signed32(self._current_nb_record), len(self._matrix))
        parts = [header, counters]
        for row in self._matrix:
            parts.append(header)
            parts.append(_bits_bytes(row))
        return b"".join(parts)

    @property
    def nr(self) -> int:
        """Keys per row (``num_entries`` at creation)."""
        return self._nr

    @property
    def max_entries(self) -> int:
        return self._max_entries

    @property
    def current_nb_record(self) -> int:
        """Keys added to the active row (serialized as ``currentNbRecord``)."""
        return self._current_nb_record

    @property
    def num_rows(self) -> int:
        return len(self._matrix)

    def _rows(self) -> list[np.ndarray]:
        return self._matrix

    def _assign_rows(self, n: int) -> np.ndarray:
        """Replay ``InternalDynamicBloomFilter.add``'s row choice for ``n`` keys, in bulk."""
        out = np.empty(n, dtype=np.int64)
        done = 0
        while done < n:
            rows = len(self._matrix)
            if self._reached_max:
                cnt = n - done
                out[done:] = (self._cur_matrix_index + np.arange(cnt, dtype=np.int64)) % rows
                self._cur_matrix_index += cnt
                self._current_nb_record += cnt
                done = n
            elif self._current_nb_record >= self._nr:
                if rows * self._nr < self._max_entries:
                    self._matrix.append(np.zeros(self._vector_size, dtype=np.bool_))
                    self._current_nb_record = 0
                else:  # bound reached: this key goes to row 0, later ones round-robin
                    self._reached_max = True
                    out[done] = 0
                    self._current_nb_record += 1
                    done += 1
            else:
                cnt = min(self._nr - self._current_nb_record, n - done)
                out[done : done + cnt] = rows - 1
                self._current_nb_record += cnt
                done += cnt
        return out

    def __repr__(self) -> str:
        return (
            f"DynamicBloomFilter(vector_size={self._vector_size}, nb_hash={self._nb_hash}, "
            f"hash_type={self._hash_type}, nr={self._nr}, rows={len(self._matrix)}, "
            f"current_nb_record={self._current_nb_record}, max_entries={self._max_entries})"
        )


def _check_consumed(r: _Reader) -> None:
    if r.pos != len(r.buf):
        raise InvalidBloomFilterError(f"bloom filter has {len(r.buf) - r.pos} unexpected trailing bytes")


# --------------------------------------------------------------------------- factory / footer
def _normalize_type_code(type_code: str | bytes | None) -> str:
    if type_code is None:
        return SIMPLE  # Java assumes SIMPLE when the footer has no type code
    if isinstance(type_code, (bytes, bytearray)):
        type_code = bytes(type_code).decode("utf-8", "replace")
    code = str(type_code).strip().upper()  # Java compares with equalsIgnoreCase
    if code in (SIMPLE, DYNAMIC_V0):
        return code
    raise UnsupportedFeatureError(f"bloom filter type code {type_code!r} is not recognizable")


def create_bloom_filter(
    num_entries: int = DEFAULT_NUM_ENTRIES,
    fpp: float = DEFAULT_FPP,
    type_code: str = DEFAULT_TYPE_CODE,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> BloomFilter:
    """A new empty filter sized as ``BloomFilterFactory.createBloomFilter`` does (Murmur hash)."""
    code = _normalize_type_code(type_code)
    if code == SIMPLE:
        return SimpleBloomFilter.create(num_entries, fpp)
    return DynamicBloomFilter.create(num_entries, fpp, max_entries)


def bloom_filter_from_footer(type_code: str | bytes | None, serialized: str | bytes) -> BloomFilter:
    """Decode a footer's filter string (``BloomFilterFactory.fromString``); no type = SIMPLE."""
    code = _normalize_type_code(type_code)
    if code == SIMPLE:
        return SimpleBloomFilter.deserialize(serialized)
    return DynamicBloomFilter.deserialize(serialized)


def _meta_get(meta: Mapping, name: str) -> str | None:
    for k in (name.encode("ascii"), name):
        if k in meta:
            v = meta[k]
            if v is None:
                return None
            if isinstance(v, (bytes, bytearray, memoryview)):
                try:
                    return bytes(v).decode("utf-8")
                except UnicodeDecodeError as e:
                    raise InvalidBloomFilterError(f"footer entry {name} is not UTF-8") from e
            return str(v)
    return None


def read_bloom_filter(parquet_key_value_metadata: Mapping | None) -> BloomFilter | None:
    """The filter of a base file's footer (``pyarrow.parquet.read_metadata(p).metadata``: keys and
    values may be bytes or str), or None when the file carries none."""
    if not parquet_key_value_metadata:
        return None
    serialized = _meta_get(parquet_key_value_metadata, BLOOM_FILTER_FOOTER_KEY)
    if serialized is None:
        serialized = _meta_get(parquet_key_value_metadata, OLD_BLOOM_FILTER_FOOTER_KEY)
    if serialized is None:
        return None
    type_code = _meta_get(parquet_key_value_metadata, BLOOM_FILTER_TYPE_CODE_FOOTER_KEY)
    return bloom_filter_from_footer(type_code, serialized)


def footer_entries(filter: BloomFilter, min_key: str | None, max_key: str | None) -> dict[str, str]:
    """Footer key-value entries for a base file, as ``HoodieBloomFilterWriteSupport`` writes them:
    the filter, the type code (only for dynamic filters, as Java does), and the key range (only
    when both ends are given). ``min_key``/``max_key`` are the smallest/largest record key."""
    if (min_key is None) != (max_key is None):
        raise InvalidInputError("footer_entries needs both min_key and max_key, or neither")
    out = {BLOOM_FILTER_FOOTER_KEY: filter.serialize()}
    if "DYNAMIC" in filter.type_code:
        out[BLOOM_FILTER_TYPE_CODE_FOOTER_KEY] = filter.type_code
    if min_key is not None and max_key is not None:
        if min_key > max_key:
            raise InvalidInputError(f"min record key {min_key!r} is greater than max record key {max_key!r}")
        out[MIN_RECORD_KEY_FOOTER_KEY] = str(min_key)
        out[MAX_RECORD_KEY_FOOTER_KEY] = str(max_key)
    return out
