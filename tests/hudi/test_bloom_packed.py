"""The Arrow-buffer (packed) key path of the bloom filter sets exactly the bits of the per-key path."""

from __future__ import annotations

import random

import pytest

from airflow_hudi_etc.hudi.index import bloom
from airflow_hudi_etc.hudi.index.bloom import filters
from airflow_hudi_etc.hudi.index.bloom.hashing import encode_keys
from airflow_hudi_etc.hudi.index.bloom.hashing_fast import PackedKeys, iter_positions_fast, iter_positions_packed_fast, pack_keys_fast
from airflow_hudi_etc.hudi.errors import InvalidInputError


def _keys(rng, n):
    alphabet = "abcXYZ0189-_é漢😀"
    out = []
    for _ in range(n):
        if rng.random() < 0.7:
            out.append(f"key-{rng.randrange(10**9):09d}")
        else:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 30))))
    return out


@pytest.mark.parametrize("type_code", ["SIMPLE", "DYNAMIC_V0"])
def test_packed_matches_per_key(monkeypatch, type_code):
    rng = random.Random(11)
    keys = _keys(rng, 150_000)
    sliced = keys[3:]

    def make():
        return bloom.create_bloom_filter(num_entries=20_000, fpp=1e-6, type_code=type_code, max_entries=200_000)

    a, b = make(), make()
    a.add_all(sliced)
    with monkeypatch.context() as m:
        m.setattr(filters, "pack_keys_fast", encode_keys)
        b.add_all(sliced)
        expect = b.might_contain_many(keys[:5000])
    assert a.might_contain_many(keys[:5000]) == expect
    assert a.serialize() == b.serialize()
    assert isinstance(pack_keys_fast(sliced), PackedKeys)


@pytest.mark.parametrize("hash_type", [bloom.MURMUR_HASH, bloom.JENKINS_HASH])
def test_packed_positions_match(hash_type):
    keys = _keys(random.Random(5), 70_000)[1:]
    ref = list(iter_positions_fast(encode_keys(keys), 7, 100_003, hash_type))
    got = list(iter_positions_packed_fast(pack_keys_fast(keys), 7, 100_003, hash_type))
    assert len(ref) == len(got)
    for (i1, p1), (i2, p2) in zip(ref, got):
        assert str(i1) == str(i2) if isinstance(i1, slice) else (i1 == i2).all()
        assert (p1 == p2).all()


def test_packed_falls_back_and_rejects_like_per_key():
    assert isinstance(pack_keys_fast(["a\ud800b"] * 20), list)  # lone surrogate: 'replace' encoding
    with pytest.raises(InvalidInputError):
        pack_keys_fast(["a"] * 20 + [""])
    with pytest.raises(InvalidInputError):
        pack_keys_fast(["a"] * 20 + [None])
    assert pack_keys_fast([b"ab"] * 20) == [b"ab"] * 20
