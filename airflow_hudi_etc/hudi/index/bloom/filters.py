"""The filter interface (add / might_contain) and the ``SIMPLE`` filter."""

from __future__ import annotations

import base64
from typing import Iterable

import numpy as np

from ...errors import InvalidInputError
from .codec import _b64decode, _bits_bytes, _check_consumed, _header_bytes, _read_bits, _read_header, _Reader
from .hashing import key_bytes, positions_reference
from .hashing_fast import pack_keys_fast, positions_fast
from .params import DEFAULT_FPP, DEFAULT_NUM_ENTRIES, MURMUR_HASH, SIMPLE, _check_params, optimal_num_of_bits, optimal_num_of_hash_functions


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
        pos = positions_reference(key_bytes(key), self._nb_hash, self._vector_size, self._hash_type)
        return any(bool(row[pos].all()) for row in self._rows())

    def __contains__(self, key: object) -> bool:
        return self.might_contain(key)  # type: ignore[arg-type]

    # -- batches
    def add_all(self, keys: Iterable[str | bytes]) -> None:
        """Add keys in order (the order matters only for which row of a dynamic filter they fill).

        The rows are one array laid end to end (:meth:`_flat_bits`): a key's positions are
        offset by the start of its row and every batch is one scatter, whichever rows its keys
        fall in."""
        encoded = pack_keys_fast(keys)  # validate everything before changing any state
        if not len(encoded):
            return
        targets = self._assign_rows(len(encoded))
        offsets = None
        if targets is not None and targets.any():
            offsets = targets * np.int64(self._vector_size)
        flat = self._flat_bits()
        for _idx, pos in positions_fast(encoded, self._nb_hash, self._vector_size, self._hash_type, offsets):
            flat[pos.T.ravel()] = True  # (nb_hash, n): contiguous for the numpy Murmur path

    def might_contain_many(self, keys: Iterable[str | bytes]) -> list[bool]:
        encoded = pack_keys_fast(keys)
        result = np.zeros(len(encoded), dtype=np.bool_)
        rows = self._rows()
        for idx, pos in positions_fast(encoded, self._nb_hash, self._vector_size, self._hash_type):
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

    def _flat_bits(self) -> np.ndarray:
        """The rows laid end to end, one writable 1-D array (row ``r`` at ``r * vector_size``)."""
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

    def _flat_bits(self) -> np.ndarray:
        return self._bits

    @property
    def bit_count(self) -> int:
        return int(np.count_nonzero(self._bits))
