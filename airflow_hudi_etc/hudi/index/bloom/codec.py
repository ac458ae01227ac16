"""The ``DataOutputStream`` bytes of a filter row and its base64 footer string (layout in the
package docstring)."""

from __future__ import annotations

import base64
import binascii
import struct

import numpy as np

from ...errors import UnsupportedFeatureError
from .params import _VERSION, JENKINS_HASH, InvalidBloomFilterError, _check_params


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


def _check_consumed(r: _Reader) -> None:
    if r.pos != len(r.buf):
        raise InvalidBloomFilterError(f"bloom filter has {len(r.buf) - r.pos} unexpected trailing bytes")
