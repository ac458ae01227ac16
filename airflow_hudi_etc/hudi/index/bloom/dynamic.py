"""``DYNAMIC_V0``: Hudi's bounded dynamic filter, rows added as keys arrive (growth rule in the
package docstring)."""

from __future__ import annotations

import struct

import numpy as np

from ...errors import InvalidInputError
from .codec import _b64decode, _bits_bytes, _check_consumed, _header_bytes, _read_bits, _read_header, _Reader
from .filters import BloomFilter
from .hashing import _to_signed32
from .params import (DEFAULT_FPP, DEFAULT_MAX_ENTRIES, DEFAULT_NUM_ENTRIES, DYNAMIC_V0, MURMUR_HASH, _INT_MAX,
                     InvalidBloomFilterError, optimal_num_of_bits, optimal_num_of_hash_functions)


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
        # the rows, laid end to end in one array (capacity grows by half when full): a batch of
        # keys spread over rows is then one scatter; ``_matrix`` gives the rows as views
        self._store = np.zeros((1, self._vector_size), dtype=np.bool_)
        self._nrows = 1

    @property
    def _matrix(self) -> list[np.ndarray]:
        return [self._store[i] for i in range(self._nrows)]

    def _set_rows(self, rows: list[np.ndarray]) -> None:
        self._store = np.stack(rows) if rows else np.zeros((0, self._vector_size), dtype=np.bool_)
        self._nrows = len(rows)

    def _add_row(self) -> None:
        if self._nrows == len(self._store):
            grown = np.zeros((max(self._nrows + 1, self._nrows * 3 // 2), self._vector_size), dtype=np.bool_)
            grown[: self._nrows] = self._store[: self._nrows]
            self._store = grown
        self._nrows += 1

    def _flat_bits(self) -> np.ndarray:
        return self._store[: self._nrows].reshape(-1)  # a view: the store is C-contiguous

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
        f._set_rows(matrix)
        return f

    @classmethod
    def deserialize(cls, serialized: str | bytes, max_entries: int = 0) -> "DynamicBloomFilter":
        return cls.from_bytes(_b64decode(serialized), max_entries)

    def to_bytes(self) -> bytes:
        header = _header_bytes(self._nb_hash, self._hash_type, self._vector_size)
        counters = struct.pack(">iii", self._nr, _to_signed32(self._current_nb_record), self._nrows)
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
        return self._nrows

    def _rows(self) -> list[np.ndarray]:
        return self._matrix

    def _assign_rows(self, n: int) -> np.ndarray:
        """Replay ``InternalDynamicBloomFilter.add``'s row choice for ``n`` keys, in bulk."""
        out = np.empty(n, dtype=np.int64)
        done = 0
        while done < n:
            rows = self._nrows
            if self._reached_max:
                cnt = n - done
                out[done:] = (self._cur_matrix_index + np.arange(cnt, dtype=np.int64)) % rows
                self._cur_matrix_index += cnt
                self._current_nb_record += cnt
                done = n
            elif self._current_nb_record >= self._nr:
                if rows * self._nr < self._max_entries:
                    self._add_row()
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
            f"hash_type={self._hash_type}, nr={self._nr}, rows={self._nrows}, "
            f"current_nb_record={self._current_nb_record}, max_entries={self._max_entries})"
        )
