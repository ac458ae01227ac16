"""Hashing a key to its bit positions: the plain reference (one key at a time, Python ints).

Hadoop's MurmurHash2 port and Bob Jenkins' lookup3 as Hudi uses them, and the chain of
``nbHash`` rounds (see the package docstring). :mod:`.hashing_fast` computes the same positions
for many keys at once with numpy; tests compare the two.
"""

from __future__ import annotations

import struct
from typing import Iterable

from ...errors import InvalidInputError
from .params import MURMUR_HASH, _check_params

_MASK32 = 0xFFFFFFFF
_M = 0x5BD1E995
_GOLDEN = 0xDEADBEEF


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


def positions_reference(data: bytes, nb_hash: int, vector_size: int, hash_type: int) -> list[int]:
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


def key_bytes(key: object) -> bytes:
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


def encode_keys(keys: Iterable[object]) -> list[bytes]:
    out: list[bytes] = []
    append = out.append
    for k in keys:
        if type(k) is str and k:
            append(k.encode("utf-8", "replace"))
        else:
            append(key_bytes(k))
    return out


def hash_positions(key: str | bytes, nb_hash: int, vector_size: int, hash_type: int = MURMUR_HASH) -> list[int]:
    """The ``nb_hash`` bit positions Hudi sets for ``key`` (UTF-8 of a str) in a vector of
    ``vector_size`` bits (``HashFunction.hash``)."""
    _check_params(vector_size, nb_hash, hash_type, error=InvalidInputError)
    return positions_reference(key_bytes(key), nb_hash, vector_size, hash_type)
