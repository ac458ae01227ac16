"""Every fast path of the bloom package gives what its plain reference gives.

hashing_fast (numpy, many keys) against hashing.positions_reference (one key, Python ints) on
random keys and on edges: every tail length of both hashes, bytes >= 0x80 (sign extension),
vector sizes 1, powers of two and 2**31-1, a hash of INT_MIN; the remainder
against Python's ``%``; the bulk row assignment of the dynamic filter against a key-by-key replay
of Java's ``InternalDynamicBloomFilter.add``.
"""

from __future__ import annotations

import numpy as np
import pytest

from airflow_hudi_etc.hudi.index.bloom import JENKINS_HASH, MURMUR_HASH, DynamicBloomFilter
from airflow_hudi_etc.hudi.index.bloom.hashing import encode_keys, positions_reference
from airflow_hudi_etc.hudi.index.bloom.hashing_fast import (
    abs_mod_fast,
    jenkins_positions_fast,
    murmur_positions_fast,
    pack_keys_fast,
    positions_fast,
)

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

EDGE_SIZES = [1, 2, 3, 7, 8, 1 << 16, (1 << 16) + 1, 2_587_966, 2**30, 2**31 - 1]
FAST = {MURMUR_HASH: murmur_positions_fast, JENKINS_HASH: jenkins_positions_fast}


def _fast(keys: list[bytes], nb_hash: int, vector_size: int, hash_type: int) -> list[list[int]]:
    data = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), len(keys[0]))
    return np.asarray(FAST[hash_type](data, nb_hash, vector_size)).tolist()


@pytest.mark.parametrize("hash_type", [MURMUR_HASH, JENKINS_HASH])
@pytest.mark.parametrize("length", list(range(1, 27)))
def test_fast_hash_equals_reference_for_every_tail_length(hash_type, length):
    rng = np.random.default_rng(length)
    keys = [bytes(rng.integers(0, 256, length, dtype=np.uint8)) for _ in range(20)]
    keys += [b"\x80" * length, b"\xff" * length, b"\x00" * length, b"\x7f" * length]
    for vs in EDGE_SIZES:
        want = [positions_reference(k, 5, vs, hash_type) for k in keys]
        assert _fast(keys, 5, vs, hash_type) == want, (vs, length)


@settings(max_examples=80, deadline=None)
@given(
    length=st.integers(min_value=1, max_value=40),
    n=st.integers(min_value=1, max_value=12),
    seed=st.integers(min_value=0, max_value=2**32 - 1),
    hash_type=st.sampled_from([MURMUR_HASH, JENKINS_HASH]),
    vector_size=st.one_of(st.sampled_from(EDGE_SIZES), st.integers(min_value=1, max_value=2**31 - 1)),
    nb_hash=st.integers(min_value=1, max_value=12),
)
def test_fast_hash_equals_reference_random(length, n, seed, hash_type, vector_size, nb_hash):
    rng = np.random.default_rng(seed)
    keys = [bytes(rng.integers(0, 256, length, dtype=np.uint8)) for _ in range(n)]
    want = [positions_reference(k, nb_hash, vector_size, hash_type) for k in keys]
    assert _fast(keys, nb_hash, vector_size, hash_type) == want


@settings(max_examples=80, deadline=None)
@given(
    hashes=st.lists(st.integers(min_value=0, max_value=2**32 - 1), min_size=1, max_size=50),
    vector_size=st.one_of(st.sampled_from(EDGE_SIZES), st.integers(min_value=1, max_value=2**31 - 1)),
)
def test_remainder_equals_java_abs_mod(hashes, vector_size):
    hashes = hashes + [0, 1, 2**31 - 1, 2**31, 2**31 + 1, 2**32 - 1]  # 2**31 is INT_MIN: abs overflows
    h = np.asarray(hashes, dtype=np.uint32)
    out = np.empty(len(hashes), dtype=np.intp)
    abs_mod_fast(h, vector_size, out, np.empty(len(hashes), dtype=np.uint32))
    signed = [x - 2**32 if x >= 2**31 else x for x in hashes]
    assert out.tolist() == [abs(s) % vector_size for s in signed]


@settings(max_examples=60, deadline=None)
@given(keys=st.lists(st.text(min_size=1, max_size=12), min_size=9, max_size=80),
       hash_type=st.sampled_from([MURMUR_HASH, JENKINS_HASH]))
def test_packed_keys_give_the_reference_positions(keys, hash_type):
    packed = pack_keys_fast(keys)
    got = [None] * len(keys)
    for idx, pos in positions_fast(packed, 3, 1009, hash_type):
        ids = range(len(keys))[idx] if isinstance(idx, slice) else idx.tolist()
        for i, row in zip(ids, np.asarray(pos).tolist()):
            got[i] = row
    assert got == [positions_reference(k, 3, 1009, hash_type) for k in encode_keys(keys)]


def _rows_one_by_one(nr: int, max_entries: int, batches: list[int]) -> list[int]:
    """Java's InternalDynamicBloomFilter.add, one key at a time: the row each key lands in."""
    rows, current, reached, cur_index, out = 1, 0, False, 0, []
    for n in batches:
        for _ in range(n):
            if reached:
                out.append(cur_index % rows)
                cur_index += 1
            else:
                if current >= nr:
                    if rows * nr < max_entries:
                        rows += 1
                        current = 0
                    else:
                        reached = True
                if reached:
                    out.append(0)
                else:
                    out.append(rows - 1)
            current += 1
    return out


@settings(max_examples=100, deadline=None)
@given(nr=st.integers(min_value=1, max_value=20), max_entries=st.integers(min_value=0, max_value=90),
       batches=st.lists(st.integers(min_value=1, max_value=40), min_size=1, max_size=6))
def test_bulk_row_assignment_equals_key_by_key_replay(nr, max_entries, batches):
    f = DynamicBloomFilter(64, 2, MURMUR_HASH, nr, max_entries)
    got = []
    for n in batches:
        got += f._assign_rows(n).tolist()
    assert got == _rows_one_by_one(nr, max_entries, batches)


@pytest.mark.parametrize("chunk", [7, 64, 500])
def test_keys_spread_over_rows_set_each_rows_bits(chunk):
    """One scatter over the rows laid end to end sets, in each row, the bits of the keys Java's
    row rule gives it: each row equals a SIMPLE filter of just those keys (keys of mixed lengths,
    so the packed path's per-length batches carry their keys' rows too)."""
    from airflow_hudi_etc.hudi.index.bloom import SimpleBloomFilter

    rng = np.random.default_rng(chunk)
    keys = [f"key-{int(i)}" + "x" * int(rng.integers(0, 4)) for i in rng.choice(10**6, 500, replace=False)]
    f = DynamicBloomFilter.create(num_entries=40, fpp=0.01, max_entries=150)  # 4 rows, then round-robin
    batches = [keys[i:i + chunk] for i in range(0, len(keys), chunk)]
    for b in batches:
        f.add_all(b)
    rows = _rows_one_by_one(40, 150, [len(b) for b in batches])
    assert f.num_rows == 4
    for r in range(4):
        want = SimpleBloomFilter(f.vector_size, f.nb_hash, MURMUR_HASH)
        want.add_all([k for k, row in zip(keys, rows) if row == r])
        assert np.array_equal(f._matrix[r], want._rows()[0]), r
