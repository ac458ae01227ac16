"""Fast path of :mod:`.hashing`: the bit positions of many keys at once, vectorised with numpy.

Every function here computes exactly what :func:`.hashing.positions_reference` gives key by key
(tests check it on random and edge inputs): Murmur and Jenkins rounds on uint32 vectors of keys
of one length, the remainder by numpy's division by a scalar, and keys packed in one
UTF-8 buffer (:class:`PackedKeys`) instead of a bytes object per key.
"""

from __future__ import annotations

from typing import Iterable, Iterator, Sequence

import numpy as np

from .hashing import _GOLDEN, _M, _MASK32, encode_keys, positions_reference
from .params import MURMUR_HASH

_M_U32 = np.uint32(_M)
#: keys hashed per numpy batch (bounds the (batch, nbHash) int64 position matrix)
_BATCH = 1 << 16
#: below this many keys the pure-Python hash is faster than numpy's per-call overhead
_SCALAR_LIMIT = 8


def _rot_fast(x: np.ndarray, k: int) -> np.ndarray:
    return (x << np.uint32(k)) | (x >> np.uint32(32 - k))


def abs_mod_fast(h: np.ndarray, vector_size: int, out: np.ndarray, tmp: np.ndarray) -> None:
    """``out[:] = abs(int32(h)) % vector_size`` for uint32 ``h`` (Java's ``Math.abs(h % size)``).

    ``abs`` on the int32 view leaves INT_MIN as it is; read back as uint32 that is 2**31, its
    true absolute value, so every value is then a non-negative uint32 and Java's truncating
    ``%`` of the signed value has the same magnitude as the unsigned remainder. The remainder
    is ``a - (a // size) * size``: numpy divides a uint32 vector by one scalar with a
    precomputed multiply-and-shift (several times faster than its ``%``, which divides
    element by element).
    """
    np.abs(h.view(np.int32), out=tmp.view(np.int32))
    d = np.uint32(vector_size)
    q = np.floor_divide(tmp, d)
    np.multiply(q, d, out=q)
    np.subtract(tmp, q, out=tmp)  # in uint32, then one widening copy (a mixed-type ufunc is slower)
    out[:] = tmp


def murmur_positions_fast(data: np.ndarray, nb_hash: int, vector_size: int,
                          offsets: np.ndarray | None = None) -> np.ndarray:
    """(n, L) uint8 keys of one length -> (n, nb_hash) positions (a transposed view of rows
    of one hash round each: every step works in place on contiguous uint32 vectors).
    ``offsets``: one int64 per key added to each of its positions (the start of the key's row
    when the rows of a dynamic filter are laid end to end)."""
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
        abs_mod_fast(h, vector_size, out[i], tmp)
        if offsets is not None:
            out[i] += offsets
    return out.T


def jenkins_positions_fast(data: np.ndarray, nb_hash: int, vector_size: int,
                           offsets: np.ndarray | None = None) -> np.ndarray:
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
            a -= c; a ^= _rot_fast(c, 4); c += b  # noqa: E702
            b -= a; b ^= _rot_fast(a, 6); a += c  # noqa: E702
            c -= b; c ^= _rot_fast(b, 8); b += a  # noqa: E702
            a -= c; a ^= _rot_fast(c, 16); c += b  # noqa: E702
            b -= a; b ^= _rot_fast(a, 19); a += c  # noqa: E702
            c -= b; c ^= _rot_fast(b, 4); b += a  # noqa: E702
        a += wa[-1]; b += wb[-1]; c += wc[-1]  # noqa: E702
        c ^= b; c -= _rot_fast(b, 14)  # noqa: E702
        a ^= c; a -= _rot_fast(c, 11)  # noqa: E702
        b ^= a; b -= _rot_fast(a, 25)  # noqa: E702
        c ^= b; c -= _rot_fast(b, 16)  # noqa: E702
        a ^= c; a -= _rot_fast(c, 4)  # noqa: E702
        b ^= a; b -= _rot_fast(a, 14)  # noqa: E702
        c ^= b; c -= _rot_fast(b, 24)  # noqa: E702
        out[:, r] = np.abs(c.view(np.int32).astype(np.int64)) % vector_size
        if offsets is not None:
            out[:, r] += offsets
        seed = c
    return out


def iter_positions_fast(
    encoded: Sequence[bytes], nb_hash: int, vector_size: int, hash_type: int, offsets: np.ndarray | None = None
) -> Iterator[tuple[np.ndarray | slice, np.ndarray]]:
    """Yield (index into ``encoded``, (n, nb_hash) positions) for batches of equal-length keys
    (``offsets``: one int64 per key of ``encoded``, added to its positions)."""
    total = len(encoded)
    if total == 0:
        return
    if total <= _SCALAR_LIMIT:
        pos = [positions_reference(b, nb_hash, vector_size, hash_type) for b in encoded]
        pos = np.asarray(pos, dtype=np.int64).reshape(total, nb_hash)
        yield slice(0, total), pos if offsets is None else pos + offsets[:, None]
        return
    hasher = murmur_positions_fast if hash_type == MURMUR_HASH else jenkins_positions_fast
    lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=total)
    for start in range(0, total, _BATCH):
        stop = min(start + _BATCH, total)
        lens = lengths[start:stop]
        first = int(lens[0])
        if bool((lens == first).all()):
            raw = b"".join(encoded[start:stop])
            data = np.frombuffer(raw, dtype=np.uint8).reshape(stop - start, first)
            yield slice(start, stop), hasher(data, nb_hash, vector_size, _part(offsets, slice(start, stop)))
            continue
        for length in np.unique(lens).tolist():
            idx = np.flatnonzero(lens == length) + start
            raw = b"".join([encoded[i] for i in idx.tolist()])
            data = np.frombuffer(raw, dtype=np.uint8).reshape(len(idx), length)
            yield idx, hasher(data, nb_hash, vector_size, _part(offsets, idx))


class PackedKeys:
    """Keys as one UTF-8 buffer plus offsets (what Arrow holds): no bytes object per key."""

    __slots__ = ("data", "offsets")

    def __init__(self, data: np.ndarray, offsets: np.ndarray):
        self.data, self.offsets = data, offsets

    def __len__(self) -> int:
        return len(self.offsets) - 1


def pack_keys_fast(keys: Iterable[object]) -> "PackedKeys | list[bytes]":
    """The keys as :class:`PackedKeys` when they are many non-empty strings that Arrow holds
    as UTF-8 exactly as ``str.encode('utf-8')`` gives it (no lone surrogates): a list of ``str``
    or an Arrow string array; otherwise the per-key encoding of :func:`encode_keys` (which
    also raises for bad keys)."""
    import pyarrow as pa

    if isinstance(keys, (pa.Array, pa.ChunkedArray)):
        arr = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
        if len(arr) <= _SCALAR_LIMIT or arr.null_count or not (pa.types.is_string(arr.type)
                                                               or pa.types.is_large_string(arr.type)):
            return encode_keys(arr.to_pylist())
    else:
        if not isinstance(keys, list) or len(keys) <= _SCALAR_LIMIT:
            return encode_keys(keys)
        try:
            arr = pa.array(keys, from_pandas=False)
        except Exception:  # mixed types, surrogates (Arrow refuses them), ...: the per-key path decides
            return encode_keys(keys)
        if not isinstance(arr, pa.Array) or arr.type != pa.string() or arr.null_count:
            return encode_keys(keys)
    arr = arr.cast(pa.large_string())
    bufs = arr.buffers()
    n = len(arr)
    offsets = np.frombuffer(bufs[1], dtype=np.int64, count=n + 1, offset=arr.offset * 8)
    if n and bool((offsets[1:] == offsets[:-1]).any()):  # an empty key: the per-key path raises
        return encode_keys(arr.to_pylist())
    base = int(offsets[0])
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, np.uint8)
    if base:
        data, offsets = data[base:], offsets - base
    return PackedKeys(data, offsets)


def _part(offsets: np.ndarray | None, idx: np.ndarray | slice) -> np.ndarray | None:
    return None if offsets is None else np.ascontiguousarray(offsets[idx])


def iter_positions_packed_fast(
    keys: PackedKeys, nb_hash: int, vector_size: int, hash_type: int, offsets: np.ndarray | None = None
) -> Iterator[tuple[np.ndarray | slice, np.ndarray]]:
    """:func:`iter_positions_fast` over packed keys: the same batches, indexes and positions."""
    hasher = murmur_positions_fast if hash_type == MURMUR_HASH else jenkins_positions_fast
    total = len(keys)
    row_offsets = offsets
    key_offsets, data = keys.offsets, keys.data
    lengths = key_offsets[1:] - key_offsets[:-1]
    for start in range(0, total, _BATCH):
        stop = min(start + _BATCH, total)
        lens = lengths[start:stop]
        first = int(lens[0])
        if bool((lens == first).all()):
            raw = data[int(key_offsets[start]) : int(key_offsets[stop])]
            yield slice(start, stop), hasher(raw.reshape(stop - start, first), nb_hash, vector_size,
                                             _part(row_offsets, slice(start, stop)))
            continue
        for length in np.unique(lens).tolist():
            idx = np.flatnonzero(lens == length) + start
            rows = data[key_offsets[idx][:, None] + np.arange(length, dtype=np.int64)]
            yield idx, hasher(rows, nb_hash, vector_size, _part(row_offsets, idx))


def positions_fast(encoded, nb_hash: int, vector_size: int, hash_type: int, offsets: np.ndarray | None = None):
    if isinstance(encoded, PackedKeys):
        return iter_positions_packed_fast(encoded, nb_hash, vector_size, hash_type, offsets)
    return iter_positions_fast(encoded, nb_hash, vector_size, hash_type, offsets)
