"""Tests of Hudi's footer bloom filter (airflow_hudi_etc.hudi.index.bloom).

The reference is real Java output: the base files of the hudi-rs test tables (written by Hudi on
Spark). Every filter there must decode, contain all of its file's record keys, re-serialize to the
identical string, and be reproduced bit for bit by a fresh filter fed the same keys.
"""

from __future__ import annotations

import base64
import struct
import time
import uuid
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from airflow_hudi_etc.hudi.index import bloom
from airflow_hudi_etc.hudi.index.bloom import hashing, hashing_fast
from airflow_hudi_etc.hudi.index.bloom import (
    BLOOM_FILTER_FOOTER_KEY,
    BLOOM_FILTER_TYPE_CODE_FOOTER_KEY,
    DYNAMIC_V0,
    JENKINS_HASH,
    MAX_RECORD_KEY_FOOTER_KEY,
    MIN_RECORD_KEY_FOOTER_KEY,
    MURMUR_HASH,
    OLD_BLOOM_FILTER_FOOTER_KEY,
    SIMPLE,
    DynamicBloomFilter,
    InvalidBloomFilterError,
    SimpleBloomFilter,
    bloom_filter_from_footer,
    create_bloom_filter,
    footer_entries,
    read_bloom_filter,
)
from airflow_hudi_etc.hudi.errors import HudiEtcError, InvalidInputError, UnsupportedFeatureError
from paths import FIXTURES

ZIPS = sorted(FIXTURES.rglob("*.zip")) if FIXTURES.is_dir() else []


def _has_base_files(z: Path) -> bool:
    with zipfile.ZipFile(z) as zf:
        return any(
            n.endswith(".parquet") and not n.startswith("__MACOSX/") and "/.hoodie/" not in n
            for n in zf.namelist()
        )


#: zips with base parquet files (v6_empty has none); listed at collection time from the zip index
ZIPS_WITH_BASE_FILES = [z for z in ZIPS if _has_base_files(z)]

# What Java's BloomFilterUtils gives for the Hudi defaults (num_entries=60000, fpp=1e-9):
# ceil(60000 * -ln(1e-9) / ln(2)^2) = ceil(2587965.76...) and ceil(ln(2) * 2587966 / 60000).
JAVA_DEFAULT_VECTOR_SIZE = 2587966
JAVA_DEFAULT_NB_HASH = 30


# --------------------------------------------------------------------------- fixture loading
@dataclass
class BaseFile:
    table: str
    path: Path
    meta: dict
    keys: list

    @property
    def serialized(self) -> str:
        return self.meta[BLOOM_FILTER_FOOTER_KEY.encode()].decode("ascii")

    @property
    def type_code(self) -> str | None:
        v = self.meta.get(BLOOM_FILTER_TYPE_CODE_FOOTER_KEY.encode())
        return None if v is None else v.decode()

    def __str__(self) -> str:
        return f"{self.table}/{self.path.name}"


@pytest.fixture(scope="module")
def fixture_files(tmp_path_factory) -> dict[str, list[BaseFile]]:
    """zip name -> its base files that carry a bloom filter (extracted once per module)."""
    if not ZIPS:
        pytest.skip(f"hudi-rs fixture tables not found under {FIXTURES}")
    pq = pytest.importorskip("pyarrow.parquet")
    root = tmp_path_factory.mktemp("hudi_rs_tables")
    out: dict[str, list[BaseFile]] = {}
    for z in ZIPS:
        rel = z.relative_to(FIXTURES).as_posix()
        dest = root / rel.replace("/", "__")
        with zipfile.ZipFile(z) as zf:
            zf.extractall(dest, members=[m for m in zf.namelist() if not m.startswith("__MACOSX/")])
        files = []
        for p in sorted(dest.rglob("*.parquet")):
            if ".hoodie" in p.relative_to(dest).parts:
                continue
            meta = pq.read_metadata(p).metadata or {}
            if BLOOM_FILTER_FOOTER_KEY.encode() not in meta:
                continue
            keys = pq.read_table(p, columns=["_hoodie_record_key"]).column(0).to_pylist()
            files.append(BaseFile(rel, p, meta, keys))
        out[rel] = files
    return out


def _zip_id(z: Path) -> str:
    return z.relative_to(FIXTURES).as_posix() if ZIPS else str(z)


zip_param = pytest.mark.parametrize("zip_rel", [_zip_id(z) for z in ZIPS_WITH_BASE_FILES] or ["<no fixtures>"])


def _files(fixture_files, zip_rel) -> list[BaseFile]:
    files = fixture_files[zip_rel]
    if not files:
        pytest.skip(f"{zip_rel} has no base files with a bloom filter")
    return files


# --------------------------------------------------------------------------- 1. decode Java filters
def test_fixture_set_is_not_vacuous(fixture_files):
    total = sum(len(v) for v in fixture_files.values())
    v6 = [f for k, v in fixture_files.items() for f in v if Path(k).name.startswith("v6_")]
    print(f"\nbase files with a bloom filter: {total} ({len(v6)} from v6 tables)")
    assert total >= 20
    assert len(v6) >= 15
    assert sum(len(f.keys) for v in fixture_files.values() for f in v) >= 40


@zip_param
def test_decode_java_filters_contain_every_record_key(fixture_files, zip_rel):
    expected_bits = bloom.optimal_num_of_bits(bloom.DEFAULT_NUM_ENTRIES, bloom.DEFAULT_FPP)
    expected_k = bloom.optimal_num_of_hash_functions(expected_bits, bloom.DEFAULT_NUM_ENTRIES)
    assert (expected_bits, expected_k) == (JAVA_DEFAULT_VECTOR_SIZE, JAVA_DEFAULT_NB_HASH)
    for bf in _files(fixture_files, zip_rel):
        f = read_bloom_filter(bf.meta)
        print(f"\n{bf}: type={bf.type_code} {f!r} keys={len(bf.keys)}")
        assert bf.type_code == DYNAMIC_V0
        assert isinstance(f, DynamicBloomFilter)
        assert f.type_code == DYNAMIC_V0
        assert f.vector_size == JAVA_DEFAULT_VECTOR_SIZE
        assert f.nb_hash == JAVA_DEFAULT_NB_HASH
        assert f.hash_type == MURMUR_HASH
        assert f.nr == bloom.DEFAULT_NUM_ENTRIES
        assert f.num_rows == 1
        assert f.current_nb_record == len(bf.keys)
        assert bf.keys, "base file without record keys"
        # scalar and vectorized lookups, both must find every key
        assert all(f.might_contain(k) for k in bf.keys), str(bf)
        assert f.might_contain_many(bf.keys) == [True] * len(bf.keys)
        # the footer's key range covers the file's keys
        assert bf.meta[MIN_RECORD_KEY_FOOTER_KEY.encode()].decode() == min(bf.keys)
        assert bf.meta[MAX_RECORD_KEY_FOOTER_KEY.encode()].decode() == max(bf.keys)


@zip_param
def test_java_filters_reject_most_absent_keys(fixture_files, zip_rel):
    # a decoder that ignored the bits (all True) would pass the test above; this one would not
    absent = [f"absent-{i}-{uuid.UUID(int=i)}" for i in range(2000)]
    for bf in _files(fixture_files, zip_rel):
        f = read_bloom_filter(bf.meta)
        assert sum(f.might_contain_many(absent)) == 0, str(bf)
        assert not f.might_contain("not-a-key-of-this-file")


# --------------------------------------------------------------------------- 2. byte-exact round trip
@zip_param
def test_reserialize_java_filter_is_byte_exact(fixture_files, zip_rel):
    for bf in _files(fixture_files, zip_rel):
        f = bloom_filter_from_footer(bf.type_code, bf.serialized)
        assert f.serialize() == bf.serialized, str(bf)
        assert footer_entries(f, min(bf.keys), max(bf.keys)) == {
            k.decode(): v.decode()
            for k, v in bf.meta.items()
            if k.decode()
            in (BLOOM_FILTER_FOOTER_KEY, BLOOM_FILTER_TYPE_CODE_FOOTER_KEY, MIN_RECORD_KEY_FOOTER_KEY, MAX_RECORD_KEY_FOOTER_KEY)
        }


# --------------------------------------------------------------------------- 3. we write what Java writes
@zip_param
@pytest.mark.parametrize("path", ["scalar", "numpy"])
def test_fresh_filter_with_fixture_keys_reproduces_java_string(fixture_files, zip_rel, path, monkeypatch):
    # force the pure-Python hash or the vectorized one (the fixtures have few keys per file)
    monkeypatch.setattr(hashing_fast, "_SCALAR_LIMIT", 10**9 if path == "scalar" else 0)
    for bf in _files(fixture_files, zip_rel):
        fresh = create_bloom_filter()  # Hudi defaults: DYNAMIC_V0, 60000, 1e-9, max 100000
        fresh.add_all(bf.keys)
        assert fresh.serialize() == bf.serialized, str(bf)
        one_by_one = create_bloom_filter()
        for k in bf.keys:
            one_by_one.add(k)
        assert one_by_one.serialize() == bf.serialized, str(bf)


def _header(raw: bytes) -> tuple:
    """(version, nbHash, hashType, vectorSize, nr, currentNbRecord, rows, row version, row nbHash,
    row hashType, row vectorSize) of a DYNAMIC_V0 filter."""
    return struct.unpack(">iibiiiiiibi", raw[:38])


def test_fresh_filter_layout_matches_java_header(fixture_files):
    java = next(f for v in fixture_files.values() for f in v)
    jraw = base64.b64decode(java.serialized)
    jh = _header(jraw)
    assert jh[:4] == (-1, JAVA_DEFAULT_NB_HASH, MURMUR_HASH, JAVA_DEFAULT_VECTOR_SIZE)
    ours = create_bloom_filter()
    keys = [f"key-{i:06d}" for i in range(5000)]
    ours.add_all(keys)
    raw = base64.b64decode(ours.serialize())
    oh = _header(raw)
    print(f"\njava header {jh}\nours header {oh}")
    # same version, nbHash, hashType, vectorSize, nr, rows, and row headers; count = our keys
    assert oh[:5] == jh[:5]
    assert oh[6:] == jh[6:]
    assert oh[5] == len(keys)
    assert len(raw) == len(jraw) == 13 + 12 + 13 + (JAVA_DEFAULT_VECTOR_SIZE + 7) // 8
    # unused high bits of the last byte stay zero, as Java writes them
    assert raw[-1] >> (JAVA_DEFAULT_VECTOR_SIZE % 8) == 0


# --------------------------------------------------------------------------- 4. false positives
@pytest.mark.parametrize("type_code", [DYNAMIC_V0, SIMPLE])
def test_false_positive_rate(type_code):
    f = create_bloom_filter(type_code=type_code)
    present = [str(uuid.UUID(int=i * 7919 + 1)) for i in range(10_000)]
    absent = [str(uuid.UUID(int=(1 << 100) + i)) for i in range(100_000)]
    f.add_all(present)
    assert all(f.might_contain_many(present))
    fp = sum(f.might_contain_many(absent))
    print(f"\n{type_code}: {fp} false positives of {len(absent)}")
    assert fp / len(absent) < 1e-3


def test_small_filter_false_positive_rate_is_near_target():
    # a filter sized for 1000 keys at 1% must behave like one (catches broken position spreading)
    f = create_bloom_filter(num_entries=1000, fpp=0.01, type_code=SIMPLE)
    assert (f.vector_size, f.nb_hash) == (9586, 7)
    f.add_all(f"k{i}" for i in range(1000))
    fp = sum(f.might_contain_many(f"a{i}" for i in range(20_000))) / 20_000
    assert 0.002 < fp < 0.03


# --------------------------------------------------------------------------- 5. malformed input
@pytest.fixture(scope="module")
def java_serialized(fixture_files) -> str:
    return next(f for v in fixture_files.values() for f in v).serialized


def _valid_small() -> str:
    f = create_bloom_filter(num_entries=100, fpp=0.01)
    f.add_all(["a", "b", "c"])
    return f.serialize()


@pytest.mark.parametrize(
    "bad",
    ["not base64!", "AAAA AAAA", "A", "AAAA=AAA", "é" * 8, "", "AAAA"],
    ids=["punct", "space", "one-char", "inner-pad", "non-ascii", "empty", "too-short"],
)
def test_bad_base64_or_too_short_raises_typed_error(bad):
    with pytest.raises(InvalidBloomFilterError) as e:
        bloom_filter_from_footer(DYNAMIC_V0, bad)
    assert isinstance(e.value, InvalidInputError) and isinstance(e.value, ValueError)


@pytest.mark.parametrize("cut", [1, 12, 13, 20, 25, 30, 38, 39, 100])
def test_truncated_bytes_raise(cut):
    raw = base64.b64decode(_valid_small())
    for code in (DYNAMIC_V0,):
        with pytest.raises(InvalidBloomFilterError, match="truncated"):
            bloom_filter_from_footer(code, base64.b64encode(raw[:cut]).decode())
    with pytest.raises(InvalidBloomFilterError, match="truncated"):
        bloom_filter_from_footer(None, base64.b64encode(raw[:cut] if cut < 13 else raw[25 : 25 + cut]).decode())


def test_truncated_java_filter_raises(java_serialized):
    raw = base64.b64decode(java_serialized)
    with pytest.raises(InvalidBloomFilterError):
        bloom_filter_from_footer(DYNAMIC_V0, base64.b64encode(raw[:-1]).decode())
    with pytest.raises(InvalidBloomFilterError, match="trailing"):
        bloom_filter_from_footer(DYNAMIC_V0, base64.b64encode(raw + b"\0").decode())
    # a dynamic filter read as SIMPLE (type code lost) is refused, not silently misread
    with pytest.raises(InvalidBloomFilterError):
        bloom_filter_from_footer(None, java_serialized)


@pytest.mark.parametrize("code", ["DYNAMIC_V1", "BLOOM", "", "simple_v0"])
def test_unknown_type_code_raises(code):
    with pytest.raises(UnsupportedFeatureError):
        bloom_filter_from_footer(code, _valid_small())
    with pytest.raises(UnsupportedFeatureError):
        create_bloom_filter(type_code=code)
    with pytest.raises(UnsupportedFeatureError):
        read_bloom_filter({BLOOM_FILTER_FOOTER_KEY.encode(): b"AAAA", BLOOM_FILTER_TYPE_CODE_FOOTER_KEY.encode(): code.encode()})


def test_type_code_is_case_insensitive_like_java():
    s = _valid_small()
    assert isinstance(bloom_filter_from_footer("dynamic_v0", s), DynamicBloomFilter)
    assert isinstance(bloom_filter_from_footer(b"DYNAMIC_V0", s), DynamicBloomFilter)


def _patched(raw: bytes, offset: int, fmt: str, value) -> str:
    b = bytearray(raw)
    struct.pack_into(fmt, b, offset, value)
    return base64.b64encode(bytes(b)).decode()


def test_bad_header_fields_raise_typed_errors():
    raw = base64.b64decode(_valid_small())
    with pytest.raises(UnsupportedFeatureError, match="version"):
        bloom_filter_from_footer(DYNAMIC_V0, _patched(raw, 0, ">i", -2))
    with pytest.raises(InvalidBloomFilterError):
        bloom_filter_from_footer(DYNAMIC_V0, _patched(raw, 4, ">i", 0))  # nbHash 0
    with pytest.raises(UnsupportedFeatureError, match="hash type"):
        bloom_filter_from_footer(DYNAMIC_V0, _patched(raw, 8, ">b", 7))
    with pytest.raises(InvalidBloomFilterError):
        bloom_filter_from_footer(DYNAMIC_V0, _patched(raw, 9, ">i", 0))  # vector size 0
    with pytest.raises(InvalidBloomFilterError):
        bloom_filter_from_footer(DYNAMIC_V0, _patched(raw, 9, ">i", -5))
    with pytest.raises(InvalidBloomFilterError):
        bloom_filter_from_footer(DYNAMIC_V0, _patched(raw, 13, ">i", 0))  # nr 0
    with pytest.raises(InvalidBloomFilterError):
        bloom_filter_from_footer(DYNAMIC_V0, _patched(raw, 21, ">i", -1))  # rows
    with pytest.raises(InvalidBloomFilterError):
        bloom_filter_from_footer(DYNAMIC_V0, _patched(raw, 21, ">i", 0x7FFFFFFF))  # no alloc blow-up
    with pytest.raises(InvalidBloomFilterError, match="row 0"):
        bloom_filter_from_footer(DYNAMIC_V0, _patched(raw, 25 + 4, ">i", 29))  # row nbHash differs
    with pytest.raises(InvalidBloomFilterError):
        bloom_filter_from_footer(DYNAMIC_V0, 12345)  # type: ignore[arg-type]


def test_empty_or_null_keys_raise():
    f = create_bloom_filter(num_entries=10, fpp=0.1)
    for bad in ("", b"", None, 5):
        with pytest.raises(InvalidInputError):
            f.add(bad)  # type: ignore[arg-type]
        with pytest.raises(InvalidInputError):
            f.might_contain(bad)  # type: ignore[arg-type]
    # a batch with one bad key changes nothing
    before = f.serialize()
    with pytest.raises(InvalidInputError):
        f.add_all(["ok", ""])
    assert f.serialize() == before


def test_bad_sizing_raises():
    for n, p in [(0, 0.1), (-1, 0.1), (10, 0.0), (10, 1.0), (10, -0.5), (10**9, 1e-300)]:
        with pytest.raises(InvalidInputError):
            create_bloom_filter(num_entries=n, fpp=p)


def test_errors_are_hudi_etc_errors():
    assert issubclass(InvalidBloomFilterError, HudiEtcError)
    assert issubclass(UnsupportedFeatureError, HudiEtcError)


# --------------------------------------------------------------------------- hashing
def test_jenkins_hash_matches_lookup3_reference_vectors():
    # values printed by driver5() in Bob Jenkins' lookup3.c (hashlittle)
    def u(x: int) -> int:
        return x & 0xFFFFFFFF

    assert u(bloom.jenkins_hash(b"", 0)) == 0xDEADBEEF
    assert u(bloom.jenkins_hash(b"", 0xDEADBEEF - (1 << 32))) == 0xBD5B7DDE
    assert u(bloom.jenkins_hash(b"Four score and seven years ago", 0)) == 0x17770551
    assert u(bloom.jenkins_hash(b"Four score and seven years ago", 1)) == 0xCD628161


def test_murmur_hash_sign_extends_tail_bytes():
    # Hadoop's port sign-extends tail bytes: a 0xFF tail byte flips all high bits of h, which
    # an unsigned implementation would not. Compare against a hand-rolled unsigned variant.
    data = b"\xff"
    m = 0x5BD1E995
    h = (0 ^ 1) & 0xFFFFFFFF
    h ^= 0xFF  # unsigned
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    assert bloom.murmur_hash(data, 0) & 0xFFFFFFFF != h


def test_hash_positions_chain_previous_hash_as_seed():
    key = b"some-record-key"
    pos = bloom.hash_positions(key, 5, 1000)
    h = 0
    expected = []
    for _ in range(5):
        h = bloom.murmur_hash(key, h)
        expected.append(abs(h) % 1000)
    assert pos == expected
    assert all(0 <= p < 1000 for p in pos)


hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    keys=st.lists(st.binary(min_size=1, max_size=40), min_size=9, max_size=60),
    hash_type=st.sampled_from([MURMUR_HASH, JENKINS_HASH]),
    vector_size=st.integers(min_value=1, max_value=2**31 - 1),
    nb_hash=st.integers(min_value=1, max_value=8),
)
def test_vectorized_positions_equal_scalar(keys, hash_type, vector_size, nb_hash):
    scalar = [hashing.positions_reference(k, nb_hash, vector_size, hash_type) for k in keys]
    got = [None] * len(keys)
    for idx, pos in hashing_fast.iter_positions_fast(keys, nb_hash, vector_size, hash_type):
        ids = range(len(keys))[idx] if isinstance(idx, slice) else idx.tolist()
        for i, row in zip(ids, pos.tolist()):
            got[i] = row
    assert got == scalar


@settings(max_examples=40, deadline=None)
@given(keys=st.lists(st.text(min_size=1, max_size=20), min_size=1, max_size=30, unique=True))
def test_text_keys_batch_and_single_agree(keys):
    a = create_bloom_filter(num_entries=50, fpp=0.01)
    a.add_all(keys)
    b = create_bloom_filter(num_entries=50, fpp=0.01)
    for k in keys:
        b.add(k)
    assert a.serialize() == b.serialize()
    assert all(a.might_contain(k) for k in keys)
    assert all(a.might_contain_many(keys))
    c = bloom_filter_from_footer(DYNAMIC_V0, a.serialize())
    assert all(c.might_contain_many(keys))


def test_unpaired_surrogate_hashes_like_java_question_mark():
    f = create_bloom_filter(num_entries=10, fpp=0.01)
    f.add("a\ud800b")
    assert f.might_contain("a?b")


# --------------------------------------------------------------------------- dynamic growth
def test_dynamic_filter_grows_and_wraps_like_java():
    def state(f):
        return f.num_rows, f.current_nb_record

    f = DynamicBloomFilter.create(num_entries=10, fpp=0.01, max_entries=25)
    keys = [f"k{i:03d}" for i in range(40)]
    seen = []
    for k in keys:
        f.add(k)
        seen.append(state(f))
    assert seen[9] == (1, 10)
    assert seen[10] == (2, 1)  # row full and 1*10 < 25: new row
    assert seen[20] == (3, 1)  # 2*10 < 25: another row
    assert seen[29] == (3, 10)
    assert seen[30] == (3, 11)  # 3*10 >= 25: bound reached, no new row, counter keeps going
    assert seen[39] == (3, 20)
    assert all(f.might_contain(k) for k in keys)
    # batches (whole and in uneven chunks) replay the same row choice, so the same bytes
    g = DynamicBloomFilter.create(num_entries=10, fpp=0.01, max_entries=25)
    g.add_all(keys)
    h = DynamicBloomFilter.create(num_entries=10, fpp=0.01, max_entries=25)
    for i in range(0, 40, 7):
        h.add_all(keys[i : i + 7])
    assert f.serialize() == g.serialize() == h.serialize()
    # keys 30.. go round-robin starting at row 0: key 30 -> row 0, 31 -> row 0, 32 -> row 1, ...
    rows = [SimpleBloomFilter.create(num_entries=10, fpp=0.01) for _ in range(3)]
    raw = base64.b64decode(f.serialize())
    decoded = bloom_filter_from_footer(DYNAMIC_V0, base64.b64encode(raw).decode())
    assert decoded.num_rows == 3 and decoded.current_nb_record == 20
    for r, row_keys in enumerate([keys[0:10], keys[10:20], keys[20:30]]):
        rows[r].add_all(row_keys)
    rows[0].add_all([keys[30], keys[31], keys[34], keys[37]])
    rows[1].add_all([keys[32], keys[35], keys[38]])
    rows[2].add_all([keys[33], keys[36], keys[39]])
    header = 13 + 12
    row_len = 13 + (decoded.vector_size + 7) // 8
    for r in range(3):
        single = base64.b64decode(rows[r].serialize())  # a SIMPLE filter is exactly one row
        assert raw[header + r * row_len : header + (r + 1) * row_len] == single


def test_decoded_dynamic_filter_never_grows_like_java():
    # Java does not serialize maxNr, so a deserialized filter has maxNr = 0: when its row is full
    # the next keys go round-robin over the existing rows instead of adding one
    f = DynamicBloomFilter.create(num_entries=5, fpp=0.01, max_entries=1000)
    f.add_all([f"x{i}" for i in range(5)])
    d = bloom_filter_from_footer(DYNAMIC_V0, f.serialize())
    d.add_all(["y1", "y2"])
    assert d.num_rows == 1 and d.current_nb_record == 7
    f.add_all(["y1", "y2"])
    assert f.num_rows == 2


def test_default_dynamic_bound_is_two_rows():
    f = create_bloom_filter()
    f.add_all([f"r{i}" for i in range(130_000)])
    assert (f.num_rows, f.current_nb_record) == (2, 70_000)


# --------------------------------------------------------------------------- simple / legacy / footer
def test_simple_filter_round_trip_and_footer():
    f = create_bloom_filter(type_code=SIMPLE)
    assert isinstance(f, SimpleBloomFilter) and f.type_code == SIMPLE
    assert (f.vector_size, f.nb_hash, f.hash_type) == (JAVA_DEFAULT_VECTOR_SIZE, JAVA_DEFAULT_NB_HASH, MURMUR_HASH)
    f.add_all(["1", "2", "3"])
    raw = base64.b64decode(f.serialize())
    assert struct.unpack(">iibi", raw[:13]) == (-1, 30, 1, JAVA_DEFAULT_VECTOR_SIZE)
    assert len(raw) == 13 + (JAVA_DEFAULT_VECTOR_SIZE + 7) // 8
    assert f.bit_count <= 90
    entries = footer_entries(f, "1", "3")
    # Java writes the type code only for dynamic filters; absent means SIMPLE
    assert entries == {BLOOM_FILTER_FOOTER_KEY: f.serialize(), MIN_RECORD_KEY_FOOTER_KEY: "1", MAX_RECORD_KEY_FOOTER_KEY: "3"}
    g = read_bloom_filter({k.encode(): v.encode() for k, v in entries.items()})
    assert isinstance(g, SimpleBloomFilter) and g.serialize() == f.serialize()
    assert g.might_contain_many(["1", "2", "3", "4"])[:3] == [True] * 3
    # the same bits as row 0 of a dynamic filter fed the same keys
    d = create_bloom_filter()
    d.add_all(["1", "2", "3"])
    assert base64.b64decode(d.serialize())[25:] == raw


def test_dynamic_footer_entries_and_str_metadata():
    f = create_bloom_filter()
    f.add_all(["b", "a", "c"])
    entries = footer_entries(f, "a", "c")
    assert set(entries) == {BLOOM_FILTER_FOOTER_KEY, BLOOM_FILTER_TYPE_CODE_FOOTER_KEY, MIN_RECORD_KEY_FOOTER_KEY, MAX_RECORD_KEY_FOOTER_KEY}
    assert entries[BLOOM_FILTER_TYPE_CODE_FOOTER_KEY] == "DYNAMIC_V0"
    g = read_bloom_filter(entries)  # str keys/values work too
    assert isinstance(g, DynamicBloomFilter) and g.serialize() == f.serialize()
    assert footer_entries(f, None, None) == {BLOOM_FILTER_FOOTER_KEY: f.serialize(), BLOOM_FILTER_TYPE_CODE_FOOTER_KEY: "DYNAMIC_V0"}
    with pytest.raises(InvalidInputError):
        footer_entries(f, "a", None)
    with pytest.raises(InvalidInputError):
        footer_entries(f, "z", "a")


def test_read_bloom_filter_absent_and_legacy_key():
    assert read_bloom_filter({}) is None
    assert read_bloom_filter(None) is None
    assert read_bloom_filter({b"parquet.avro.schema": b"{}"}) is None
    f = create_bloom_filter(num_entries=100, fpp=0.01, type_code=SIMPLE)
    f.add("k")
    g = read_bloom_filter({OLD_BLOOM_FILTER_FOOTER_KEY.encode(): f.serialize().encode()})
    assert isinstance(g, SimpleBloomFilter) and g.might_contain("k")


def test_legacy_unversioned_jenkins_filter():
    # pre-versioning Hadoop layout: int nbHash (positive), int vectorSize, bits; Jenkins hash
    f = SimpleBloomFilter(vector_size=1000, nb_hash=4, hash_type=JENKINS_HASH)
    f.add_all(["alpha", "beta"])
    versioned = base64.b64decode(f.serialize())
    assert struct.unpack(">iibi", versioned[:13]) == (-1, 4, JENKINS_HASH, 1000)
    legacy = struct.pack(">ii", 4, 1000) + versioned[13:]
    g = bloom_filter_from_footer(SIMPLE, base64.b64encode(legacy).decode())
    assert g.hash_type == JENKINS_HASH and g.nb_hash == 4
    assert g.might_contain("alpha") and g.might_contain("beta")
    assert g.serialize() == f.serialize()  # written back in the versioned layout, as Java does


def test_unpadded_base64_is_accepted_like_java():
    s = _valid_small()
    assert bloom_filter_from_footer(DYNAMIC_V0, s.rstrip("=")).serialize() == s


def test_padding_bits_of_last_byte_are_ignored():
    f = SimpleBloomFilter(vector_size=10, nb_hash=2)
    raw = bytearray(base64.b64decode(f.serialize()))
    raw[-1] |= 0xFC  # bits 10..15 do not exist
    g = bloom_filter_from_footer(SIMPLE, base64.b64encode(bytes(raw)).decode())
    assert g.bit_count == 0
    assert g.serialize() == f.serialize()


def test_sizing_formula():
    assert bloom.optimal_num_of_bits(60000, 1e-9) == 2587966
    assert bloom.optimal_num_of_hash_functions(2587966, 60000) == 30
    assert bloom.optimal_num_of_bits(1000, 0.01) == 9586
    f = create_bloom_filter(num_entries=1000, fpp=0.01, type_code=DYNAMIC_V0, max_entries=5000)
    assert (f.vector_size, f.nb_hash, f.nr, f.max_entries) == (9586, 7, 1000, 5000)


# --------------------------------------------------------------------------- performance
def test_batch_throughput():
    keys = [str(uuid.UUID(int=i)) for i in range(200_000)]
    f = create_bloom_filter()
    t0 = time.perf_counter()
    f.add_all(keys)
    t1 = time.perf_counter()
    hits = f.might_contain_many(keys)
    t2 = time.perf_counter()
    print(f"\nadd {len(keys) / (t1 - t0):,.0f} keys/s, test {len(keys) / (t2 - t1):,.0f} keys/s")
    assert all(hits)
    assert t1 - t0 < 20 and t2 - t1 < 20  # ~0.1 s each on a laptop; generous for slow CI
