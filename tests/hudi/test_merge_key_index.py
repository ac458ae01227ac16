"""The merge's base-key lookup (sorted log keys, each batch looked up in its own key range)
gives what one ``pc.index_in`` against every log key gives: on sorted, shuffled and partly
overlapping batches, keys outside every range, empty batches, non-ASCII keys and a log key
listed twice (the first index wins, as index_in's)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from airflow_hudi_etc.hudi.file_group.merge import _KeyIndex


def _want(keys: pa.Array, lookup: pa.Array) -> list[int]:
    return pc.fill_null(pc.index_in(keys, value_set=lookup), -1).to_pylist()


def _keys(ids) -> pa.Array:
    return pa.array([f"k{i:07d}" for i in ids], pa.string())


@pytest.mark.parametrize("seed", range(6))
def test_batches_give_index_in_against_every_log_key(seed):
    rng = np.random.default_rng(seed)
    base = np.arange(5_000)
    if seed % 2:
        rng.shuffle(base)  # a base file not sorted by key: ranges cover everything
    log_ids = rng.choice(6_000, 900, replace=False)  # some keys beyond the base (inserts)
    lookup = _keys(log_ids)
    idx = _KeyIndex(lookup)
    for start in range(0, len(base), 700):
        batch = _keys(base[start:start + 700])
        assert idx.positions(batch).tolist() == _want(batch, lookup), start


def test_edges():
    lookup = pa.array(["b", "d", "é", "d", "a\u00e9z", "zz"], pa.string())  # "d" twice: first index
    idx = _KeyIndex(lookup)
    for keys in (["a", "c"], ["zzz"], ["d", "b", "zz", "e"], ["é", "a\u00e9z", "aa"], ["d"], []):
        arr = pa.array(keys, pa.string())
        assert idx.positions(arr).tolist() == _want(arr, lookup), keys
    nulls = pa.array([None, "d", None], pa.string())
    assert idx.positions(nulls).tolist() == [-1, 1, -1]
    assert idx.positions(pa.array([None], pa.string())).tolist() == [-1]
    assert idx.positions(pa.array(["b", "q"], pa.large_string())).tolist() == [0, -1]
