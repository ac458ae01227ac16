"""Hudi log format (table version 6): checked against log files written by Java Hudi.

The fixture tables are real Spark/Hudi 0.14-0.15 output (``shared/fixtures/hudi-rs-tables``,
see its README). Expected values below come from that README, from the hexdump in
``shared/hudi-rs-oracle.md`` §10 and from the spec (``shared/hudi-format.md``), never from this
module's own output alone: every round trip is compared with the bytes Java wrote.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import random
import struct
import tracemalloc
import zipfile
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.logformat.avro_data import _parsed_schema, decode_avro_records_reference
from airflow_hudi_etc.hudi.logformat.avro_fast import fast_decoder
from airflow_hudi_etc.hudi.errors import (
    CorruptLogBlockError,
    HudiEtcError,
    TruncatedLogFileError,
    UnknownBlockTypeError,
    UnsupportedFeatureError,
)
from paths import FIXTURES, V6_MOR_FIXTURES
from random_avro import random_schema_and_records

V6_ZIPS = {k: v for k, v in V6_MOR_FIXTURES.items() if k != "v6_empty"}  # the ones with log files

BT, HK = lf.BlockType, lf.HeaderKey

#: per fixture: log file (relative to the table) -> [(block type, header without SCHEMA)]
#: (fixtures README "Per-fixture details"; header order as Java wrote it)
EXPECTED_LOGS = {
    "v6_trips_8i1u": {
        "city=san_francisco/.d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_20250331030642808.log.1_0-26-85": [
            (BT.AVRO_DATA, {HK.INSTANT_TIME: "20250331030645735"}),
        ],
    },
    "v6_trips_8i3d": {
        "city=san_francisco/.6d3d1d6e-2298-4080-a0c1-494877d6f40a-0_20250618054711154.log.1_0-26-85": [
            (BT.DELETE, {HK.INSTANT_TIME: "20250618054714114"}),
        ],
    },
    "v6_nonpartitioned": {
        ".d206069c-22c8-4532-b9ea-3cf4282342c4-0_20250117083125837.log.1_0-33-43": [
            (BT.PARQUET_DATA, {HK.INSTANT_TIME: "20250117083136333"}),
        ],
    },
    "v6_nonpartitioned_rollback": {
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.1_0-33-43": [
            (BT.PARQUET_DATA, {HK.INSTANT_TIME: "20250126040826878"}),
        ],
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1": [
            (BT.COMMAND, {HK.INSTANT_TIME: "20250126040936578", HK.COMMAND_BLOCK_TYPE: "0",
                          HK.TARGET_INSTANT_TIME: "20250126040826878"}),
        ],
        ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.3_0-13-9": [
            (BT.PARQUET_DATA, {HK.INSTANT_TIME: "20250126060846931"}),
        ],
    },
    "v6_simplekeygen_nonhivestyle": {
        "10/.26e33b7b-aa9f-4f2e-b683-a90ef0d5861d-0_20250121000547796.log.1_0-33-47": [
            (BT.PARQUET_DATA, {HK.INSTANT_TIME: "20250121000557095"}),
        ],
    },
    "v6_complexkeygen_hivestyle": {
        "byteField=10/shortField=300/.238de231-c807-4c22-8a6c-ca5619abe374-0_20250118044623136.log.1_0-33-47": [
            (BT.PARQUET_DATA, {HK.INSTANT_TIME: "20250118044632401"}),
        ],
    },
}

#: parquet log blocks: (record keys, isActive values) per fixture README
EXPECTED_PARQUET = {
    ("v6_nonpartitioned", "log.1_0-33-43"): (["1"], [False]),
    ("v6_nonpartitioned_rollback", "log.1_0-33-43"): (["1"], [False]),
    ("v6_nonpartitioned_rollback", "log.3_0-13-9"): (["2"], [True]),
    ("v6_simplekeygen_nonhivestyle", "log.1_0-33-47"): (["1"], [False]),
    ("v6_complexkeygen_hivestyle", "log.1_0-33-47"): (["id:1,name:Alice"], [False]),
}

META_FIELDS = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
               "_hoodie_file_name"]


# --------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="session")
def v6_tables(tmp_path_factory) -> dict[str, Path]:
    """The six v6 MOR fixture tables, extracted once (skips when ../shared is absent)."""
    if not FIXTURES.is_dir():
        pytest.skip(f"{FIXTURES} not available")
    root = tmp_path_factory.mktemp("logformat-fixtures")
    out = {}
    for name, rel in V6_ZIPS.items():
        z = FIXTURES / rel
        if not z.is_file():
            pytest.skip(f"fixture {z} not available")
        dest = root / name
        with zipfile.ZipFile(z) as zf:
            members = [m for m in zf.namelist() if not m.startswith("__MACOSX/")]
            zf.extractall(dest, members=members)
            (top,) = {m.split("/")[0] for m in members}
        out[name] = dest / top
    return out


def log_file_names(table: Path) -> list[str]:
    return sorted(str(p.relative_to(table)) for p in table.rglob(".*") if ".log." in p.name)


@pytest.fixture(scope="session")
def trips_log(v6_tables) -> bytes:
    """The 1148-byte Avro data block file of v6_trips_8i1u (hexdump: hudi-rs-oracle.md §10)."""
    (rel,) = EXPECTED_LOGS["v6_trips_8i1u"]
    return (v6_tables["v6_trips_8i1u"] / rel).read_bytes()


@pytest.fixture(scope="session")
def delete_log(v6_tables) -> bytes:
    (rel,) = EXPECTED_LOGS["v6_trips_8i3d"]
    return (v6_tables["v6_trips_8i3d"] / rel).read_bytes()


# --------------------------------------------------------------------------- 1. Java files
@pytest.mark.parametrize("name", sorted(EXPECTED_LOGS))
def test_java_log_files_parse_and_re_encode_byte_for_byte(v6_tables, name):
    table = v6_tables[name]
    assert log_file_names(table) == sorted(EXPECTED_LOGS[name])
    for rel, expected in EXPECTED_LOGS[name].items():
        data = (table / rel).read_bytes()
        blocks = lf.read_blocks(data)
        assert not [b for b in blocks if isinstance(b, lf.CorruptBlock)]
        assert lf.read_blocks(data, strict=True) == blocks
        assert lf.read_log_file(table / rel) == blocks == lf.read_blocks(table / rel) == lf.read_blocks(str(table / rel))
        assert [b.block_type for b in blocks] == [t for t, _h in expected]
        pos = 0
        for b, (_t, header) in zip(blocks, expected):
            assert (b.offset, b.format_version, b.footer) == (pos, 1, ())
            hd = b.header_dict
            assert {k: v for k, v in hd.items() if k != HK.SCHEMA} == header
            assert b.instant_time == header[HK.INSTANT_TIME]
            assert b.target_instant_time == header.get(HK.TARGET_INSTANT_TIME)
            if b.block_type != BT.COMMAND:  # data and delete blocks carry the writer schema
                schema = json.loads(b.schema_json)
                assert [f["name"] for f in schema["fields"][:5]] == META_FIELDS
            else:
                assert b.schema_json is None and b.content == b""
            # the framing fields, read straight from the file
            assert struct.unpack(">q", data[pos + 6 : pos + 14])[0] == b.size - 14
            assert struct.unpack(">q", data[b.end - 8 : b.end])[0] == b.size - 8
            rebuilt = lf.encode_block(b.block_type, b.header, b.content, b.footer)
            assert rebuilt == data[b.offset : b.end] == b.encode()
            pos = b.end
        assert pos == len(data)


def test_avro_block_matches_the_hexdump_and_re_encodes(trips_log):
    data = trips_log
    # hudi-rs-oracle.md §10: 1148 bytes, block length 0x46e, type 3, 2 header entries,
    # INSTANT_TIME (17 bytes) then SCHEMA (829 bytes), content 240 bytes, trailer 0x474
    assert len(data) == 1148 and data[:6] == b"#HUDI#"
    assert data[6:14] == (0x46E).to_bytes(8, "big") and data[-8:] == (0x474).to_bytes(8, "big")
    (b,) = lf.read_blocks(data, strict=True)
    assert (b.block_type, b.size, b.offset) == (BT.AVRO_DATA, 1148, 0)
    assert [k for k, _v in b.header] == [HK.INSTANT_TIME, HK.SCHEMA]
    assert b.instant_time == "20250331030645735" and len(b.schema_json.encode()) == 829
    assert len(b.content) == 240 and b.content[:12] == bytes.fromhex("00000003 00000001 000000e4")
    (rec,) = lf.decode_avro_records(b.content, b.schema_json)
    assert rec == {
        "_hoodie_commit_time": "20250331030645735",
        "_hoodie_commit_seqno": "20250331030645735_0_1",
        "_hoodie_record_key": "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
        "_hoodie_partition_path": "city=san_francisco",
        "_hoodie_file_name": "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0",
        "ts": 1695046462179,
        "uuid": "9909a8b1-2d15-4d3d-8ec9-efc48c536a00",
        "rider": "rider-D",
        "driver": "driver-L",
        "fare": 25.0,  # README: 25.0 in the snapshot (the update), 33.9 in the base file
        "city": "san_francisco",
    }
    assert lf.encode_avro_records(b.schema_json, [rec]) == b.content
    assert lf.encode_avro_records(json.loads(b.schema_json), [rec]) == b.content  # dict schema too
    assert lf.encode_data_block(b.instant_time, b.schema_json, [rec]) == data  # same header order as Java
    # the generated decoder handles this schema (no silent fallback) and agrees with fastavro
    assert fast_decoder(b.schema_json) is not None and not fast_decoder(b.schema_json).zero_size_arrays
    reference = fastavro.schemaless_reader(io.BytesIO(b.content[12:]), json.loads(b.schema_json))
    assert reference == rec


def test_delete_block_decodes_to_intwrapper_zero_and_re_encodes(delete_log):
    data = delete_log
    # hudi-format.md §1: 1098 bytes, block length 1084, trailer 1090, header 866, content 190
    assert len(data) == 1098
    (b,) = lf.read_blocks(data, strict=True)
    assert b.block_type == BT.DELETE and b.size - 14 == 1084 and len(b.content) == 190
    assert [k for k, _v in b.header] == [HK.SCHEMA, HK.INSTANT_TIME]  # Java's HashMap order, kept
    assert b.instant_time == "20250618054714114"
    dels = lf.decode_delete_records(b.content)
    assert len(dels) == 3
    assert sorted(d.record_key[:9] for d in dels) == ["334e26e9-", "9909a8b1-", "e96c4396-"]
    assert "9909a8b1-2d15-4d3d-8ec9-efc48c536a00" in {d.record_key for d in dels}
    assert {(d.partition_path, d.ordering_value, d.ordering_type) for d in dels} == {("city=san_francisco", 0, "int")}
    assert all(type(d.ordering_value) is int for d in dels)
    assert lf.encode_delete_records(dels) == b.content
    assert lf.encode_delete_records([lf.natural_order_delete(d.record_key, d.partition_path) for d in dels]) == b.content
    assert lf.encode_delete_block(b.instant_time, b.schema_json, dels)[-(len(b.content) + 12):] == data[-(len(b.content) + 12):]
    # the Avro payload, spelled out by hand: array block of 3, then per record key and partition
    # (union branch 1 = string) and orderingVal = union branch 2 (IntWrapper) holding 0, then 0
    payload = bytearray(b"\x06")
    for d in dels:
        for s in (d.record_key, d.partition_path):
            payload += b"\x02" + zigzag(len(s)) + s.encode()
        payload += b"\x04\x00"
    payload += b"\x00"
    assert b.content == struct.pack(">ii", 3, len(payload)) + bytes(payload)


def test_rollback_command_block_is_reproduced_exactly(v6_tables):
    rel = ".0712b9f9-d2d5-4cae-bcf4-8fd7146af503-0_20250126040823628.log.2_1-0-1"
    data = (v6_tables["v6_nonpartitioned_rollback"] / rel).read_bytes()
    assert len(data) == 105
    assert lf.encode_rollback_block("20250126040936578", "20250126040826878") == data


def test_parquet_blocks_decode_to_the_expected_rows(v6_tables):
    seen = set()
    for (name, suffix), (keys, active) in EXPECTED_PARQUET.items():
        (rel,) = [r for r in EXPECTED_LOGS[name] if r.endswith(suffix)]
        (b,) = lf.read_blocks((v6_tables[name] / rel).read_bytes(), strict=True)
        assert b.block_type == BT.PARQUET_DATA and b.content[:4] == b"PAR1" == b.content[-4:]
        t = lf.decode_parquet_content(b.content)
        assert t.column_names[:5] == META_FIELDS
        assert t.column("_hoodie_record_key").to_pylist() == keys
        assert t.column("isActive").to_pylist() == active
        assert t.column("_hoodie_commit_time").to_pylist() == [b.instant_time]
        seen.add((name, suffix))
        # our writer side: a whole Parquet file that reads back to the same table
        again = lf.encode_parquet_content(t, key_value_metadata={"hoodie.test": "x"})
        assert again[:4] == b"PAR1" == again[-4:]
        t2 = lf.decode_parquet_content(again)
        assert t2.drop_columns([]).equals(t) or t2.to_pylist() == t.to_pylist()
        assert t2.schema.metadata[b"hoodie.test"] == b"x"
        import pyarrow.parquet as pq

        assert pq.ParquetFile(pa.BufferReader(again)).metadata.row_group(0).column(0).compression == "GZIP"
    assert len(seen) == 5
    with pytest.raises(CorruptLogBlockError):
        lf.decode_parquet_content(b"PAR1 not really parquet PAR1")


# --------------------------------------------------------------------------- 3. corruption
def _blocks_summary(items):
    return [(type(b).__name__, b.offset, b.size) for b in items]


def test_truncation_at_every_offset_of_the_last_block(trips_log, delete_log):
    a, b = trips_log, delete_log
    two = a + b
    (block_a,) = lf.read_blocks(a)
    for cut in range(len(a) + 1, len(two)):
        data = two[:cut]
        got = lf.read_blocks(data)
        assert got[0] == block_a, cut
        assert len(got) == 2 and isinstance(got[1], lf.CorruptBlock), cut
        assert (got[1].offset, got[1].end) == (len(a), cut) and got[1].truncated, cut
        with pytest.raises(TruncatedLogFileError, match=f"offset {len(a)}"):
            lf.read_blocks(data, strict=True)
    # a single block cut anywhere: one corrupt (truncated) stretch, never another error type
    for cut in range(1, len(a)):
        got = lf.read_blocks(a[:cut])
        assert _blocks_summary(got) == [("CorruptBlock", 0, cut)] and got[0].truncated, cut
        with pytest.raises(TruncatedLogFileError):
            lf.read_blocks(a[:cut], strict=True)
    assert lf.read_blocks(two[: len(a)]) == [block_a]
    assert lf.read_blocks(b"") == []


@pytest.mark.parametrize("delta", [1, 5, 100, -1, -4])
def test_changed_block_length_makes_the_block_corrupt_and_reading_resyncs(trips_log, delete_log, delta):
    a, b = trips_log, delete_log
    assert lf.MAGIC not in a[1:]  # so the resync can only land on the next block
    length = struct.unpack(">q", a[6:14])[0]
    bad = a[:6] + struct.pack(">q", length + delta) + a[14:]
    got = lf.read_blocks(bad + b)
    assert _blocks_summary(got) == [("CorruptBlock", 0, len(a)), ("LogBlock", len(a), len(b))]
    assert got[1].content == lf.read_blocks(b)[0].content
    with pytest.raises(CorruptLogBlockError, match="offset 0"):
        lf.read_blocks(bad + b, strict=True)
    # as the last block, an enlarged length runs past the end of the file: truncated
    (c,) = lf.read_blocks(bad)
    assert c.truncated == (delta > 0)


def test_wrong_trailing_length(trips_log):
    bad = trips_log[:-8] + struct.pack(">q", 999)
    (c,) = lf.read_blocks(bad)
    assert isinstance(c, lf.CorruptBlock) and c.reason == "trailing length 999 != block length 1134 + 6"
    with pytest.raises(CorruptLogBlockError, match="trailing length 999") as e:
        lf.read_blocks(bad, strict=True)
    assert not isinstance(e.value, TruncatedLogFileError)


def test_junk_after_a_block(trips_log):
    a = trips_log
    # 6+ bytes that are not a magic make the block itself corrupt (Java's isBlockCorrupt)
    got = lf.read_blocks(a + b"junkjunk")
    assert _blocks_summary(got) == [("CorruptBlock", 0, len(a) + 8)] and got[0].reason.startswith("junk after block")
    with pytest.raises(CorruptLogBlockError, match="junk after block") as e:
        lf.read_blocks(a + b"junkjunk", strict=True)
    assert not isinstance(e.value, TruncatedLogFileError)
    # fewer than 6 bytes: Java reads EOF there, so the block stays valid; the tail is reported
    got = lf.read_blocks(a + b"xyz")
    assert _blocks_summary(got) == [("LogBlock", 0, len(a)), ("CorruptBlock", len(a), 3)] and got[1].truncated
    with pytest.raises(TruncatedLogFileError):
        lf.read_blocks(a + b"xyz", strict=True)


def test_valid_block_after_junk_is_found_again(trips_log, delete_log):
    a, b = trips_log, delete_log
    got = lf.read_blocks(a + b"garbage" + b + a)
    assert _blocks_summary(got) == [
        ("CorruptBlock", 0, len(a) + 7),
        ("LogBlock", len(a) + 7, len(b)),
        ("LogBlock", len(a) + 7 + len(b), len(a)),
    ]
    assert got[1].block_type == BT.DELETE and got[2] == lf.read_blocks(a)[0].__class__(
        **{**lf.read_blocks(a)[0].__dict__, "offset": len(a) + 7 + len(b)})


def test_garbage_before_the_first_magic(trips_log):
    a = trips_log
    got = lf.read_blocks(b"garbage" + a)
    assert _blocks_summary(got) == [("CorruptBlock", 0, 7), ("LogBlock", 7, len(a))]
    assert "no magic at offset 0" in got[0].reason
    assert got[1].content == lf.read_blocks(a)[0].content
    with pytest.raises(CorruptLogBlockError, match="no magic"):
        lf.read_blocks(b"garbage" + a, strict=True)
    assert _blocks_summary(lf.read_blocks(b"x" * 100)) == [("CorruptBlock", 0, 100)]


def test_file_ending_right_after_a_magic(trips_log):
    got = lf.read_blocks(lf.MAGIC)
    assert _blocks_summary(got) == [("CorruptBlock", 0, 6)] and got[0].truncated
    with pytest.raises(TruncatedLogFileError):
        lf.read_blocks(lf.MAGIC, strict=True)
    got = lf.read_blocks(trips_log + lf.MAGIC)
    assert _blocks_summary(got) == [("LogBlock", 0, 1148), ("CorruptBlock", 1148, 6)]


def test_huge_block_length_is_just_corrupt_without_allocating(trips_log):
    huge = lf.MAGIC + struct.pack(">q", 2**62) + b"\x00" * 20
    tracemalloc.start()
    try:
        got = lf.read_blocks(huge)
        with pytest.raises(TruncatedLogFileError):
            lf.read_blocks(huge, strict=True)
        bad = lf.MAGIC + struct.pack(">q", 2**62) + trips_log[14:]
        got2 = lf.read_blocks(bad + trips_log)
        _cur, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
    assert _blocks_summary(got) == [("CorruptBlock", 0, len(huge))] and got[0].truncated
    assert _blocks_summary(got2) == [("CorruptBlock", 0, 1148), ("LogBlock", 1148, 1148)]
    for length in (-1, 0, 7, -(2**63)):
        (c,) = lf.read_blocks(lf.MAGIC + struct.pack(">q", length) + trips_log[14:])
        assert isinstance(c, lf.CorruptBlock)


def _patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    b = bytearray(data)
    struct.pack_into(fmt, b, offset, value)
    return bytes(b)


# offsets inside the trips block: version @14, type @18, header count @22, first key @26
@pytest.mark.parametrize("ordinal", [9, 7, 2**31 - 1, -1, 2])
def test_unknown_block_type_raises_in_both_modes(trips_log, ordinal):
    bad = _patched(trips_log, 18, ">i", ordinal)
    for strict in (False, True):
        with pytest.raises(UnknownBlockTypeError, match=f"type {ordinal} at offset 18"):
            lf.read_blocks(bad, strict=strict)


def test_unknown_header_key_raises_and_newer_keys_are_readable(trips_log):
    bad = _patched(trips_log, 26, ">i", 9)
    with pytest.raises(UnknownBlockTypeError, match="header key ordinal 9 at offset 26"):
        lf.read_blocks(bad)
    # keys 4-8 are read (written by newer Hudi), even though a v6 writer must not emit them
    header = [(HK.INSTANT_TIME, "1"), (HK.IS_PARTIAL, "true"), (HK.BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS, "0")]
    blk = lf.encode_block(BT.AVRO_DATA, header, b"xyz", check_v6=False)
    (b,) = lf.read_blocks(blk, strict=True)
    assert b.header == tuple(header) and b.encode() == blk


def test_inconsistent_inside_of_a_sound_frame_raises_in_both_modes(trips_log):
    cases = {
        "header count": _patched(trips_log, 22, ">i", 2**31 - 1),
        "header value length": _patched(trips_log, 30, ">i", 2**30),
        "content length": _patched(trips_log, 14 + 4 + 4 + 4 + 8 + 17 + 8 + 829, ">q", 2**62),
    }
    for what, bad in cases.items():
        for strict in (False, True):
            tracemalloc.start()
            try:
                with pytest.raises(CorruptLogBlockError, match="offset 0") as e:
                    lf.read_blocks(bad, strict=strict)
                _cur, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert peak < 1 << 20, what
            assert not isinstance(e.value, TruncatedLogFileError)
    with pytest.raises(UnsupportedFeatureError, match="legacy log format version 0"):
        lf.read_blocks(_patched(trips_log, 14, ">i", 0))
    with pytest.raises(UnsupportedFeatureError, match="version 2"):
        lf.read_blocks(_patched(trips_log, 14, ">i", 2))


def _mutations(data: bytes):
    return st.one_of(
        st.tuples(st.just("flip"), st.integers(0, len(data) - 1), st.integers(1, 255)),
        st.tuples(st.just("cut"), st.integers(0, len(data) - 1), st.just(0)),
        st.tuples(st.just("insert"), st.integers(0, len(data)), st.integers(0, 255)),
        st.tuples(st.just("delete"), st.integers(0, len(data) - 1), st.integers(1, 40)),
    )


@pytest.fixture(scope="session")
def two_block_file(trips_log, delete_log) -> bytes:
    return trips_log + delete_log


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_damage_only_ever_gives_typed_results(two_block_file, data):
    raw = bytearray(two_block_file)
    for kind, at, arg in data.draw(st.lists(_mutations(two_block_file), min_size=1, max_size=3)):
        at = min(at, len(raw))
        if kind == "flip" and at < len(raw):
            raw[at] ^= arg
        elif kind == "cut":
            del raw[at:]
        elif kind == "insert":
            raw[at:at] = bytes([arg])
        elif kind == "delete":
            del raw[at : at + arg]
    damaged = bytes(raw)
    try:
        lenient = lf.read_blocks(damaged)
    except HudiEtcError:
        return  # a typed refusal (unknown type/key, inconsistent inside): strict refuses too
    covered = 0
    for item in lenient:  # the items tile the file, and sound blocks re-encode to their bytes
        assert item.offset == covered
        covered = item.end
        if isinstance(item, lf.LogBlock):
            # (malformed UTF-8 in a header value reads as U+FFFD, as in Java: then it cannot)
            if not any("\ufffd" in v for _k, v in item.header + item.footer):
                assert item.encode() == damaged[item.offset : item.end]
    assert covered == len(damaged)
    if any(isinstance(i, lf.CorruptBlock) for i in lenient):
        with pytest.raises(CorruptLogBlockError):
            lf.read_blocks(damaged, strict=True)
    else:
        assert lf.read_blocks(damaged, strict=True) == lenient


# --------------------------------------------------------------------------- 4. delete wrappers
def zigzag(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def java_big_integer_bytes(n: int) -> bytes:
    """Java ``BigInteger.toByteArray()``: big-endian two's complement, shortest form."""
    length = 1
    while not -(1 << (8 * length - 1)) <= n < (1 << (8 * length - 1)):
        length += 1
    return n.to_bytes(length, "big", signed=True)


UTC = dt.timezone.utc
WRAPPER_CASES = [
    # kind, value, union branch index, Avro bytes of the wrapper's value
    ("boolean", True, 1, b"\x01"),
    ("int", 7, 2, zigzag(7)),
    ("int", -(2**31), 2, zigzag(-(2**31))),
    ("long", 7, 3, zigzag(7)),
    ("long", 2**62, 3, zigzag(2**62)),
    ("float", 1.5, 4, struct.pack("<f", 1.5)),
    ("double", 2.25, 5, struct.pack("<d", 2.25)),
    ("bytes", b"\x00\xff", 6, zigzag(2) + b"\x00\xff"),
    ("string", "héllo", 7, zigzag(6) + "héllo".encode()),
    ("date", dt.date(2024, 2, 29), 8, zigzag(19782)),
    ("decimal", decimal.Decimal("1.5"), 9, zigzag(7) + java_big_integer_bytes(1_500_000_000_000_000)),
    ("decimal", decimal.Decimal("-0.000000000000128"), 9, zigzag(1) + b"\x80"),  # -128 unscaled: 1 byte
    ("decimal", decimal.Decimal("0"), 9, zigzag(1) + b"\x00"),
    ("time_micros", dt.time(1, 2, 3, 4), 10, zigzag(3_723_000_004)),
    ("timestamp_micros", dt.datetime(2020, 1, 1, tzinfo=UTC), 11, zigzag(1_577_836_800_000_000)),
]


@pytest.mark.parametrize("kind,value,branch,value_bytes", WRAPPER_CASES)
def test_delete_ordering_values_land_in_their_union_branch(kind, value, branch, value_bytes):
    content = lf.encode_delete_records([lf.DeleteRecord("k", "p", value, kind)])
    # array block of 1, key "k" (branch 1 = string), partition "p", then the orderingVal union
    # index (zig-zag varint) right before the wrapper's value, then the end of the array
    expected = b"\x02" + b"\x02\x02k" + b"\x02\x02p" + zigzag(branch) + value_bytes + b"\x00"
    assert content == struct.pack(">ii", 3, len(expected)) + expected
    assert lf.ORDERING_TYPES[branch - 1] == kind
    (d,) = lf.decode_delete_records(content)
    assert (d.record_key, d.partition_path, d.ordering_type) == ("k", "p", kind)
    assert d.ordering_value == value and type(d.ordering_value) is type(value)
    # decoding with Hudi's own schema (wrapper names, namespace, branch order) agrees
    rec = fastavro.schemaless_reader(io.BytesIO(content[8:]), lf.DELETE_RECORD_LIST_SCHEMA, return_record_name=True)
    (item,) = rec["deleteRecordList"]
    assert item["orderingVal"][0] == f"org.apache.hudi.avro.model.{kind.title().replace('_', '')}Wrapper"


def test_delete_ordering_value_alternative_inputs_and_nulls():
    enc = lf.encode_delete_records
    assert enc([lf.DeleteRecord("k", "p", 19782, "date")]) == enc([lf.DeleteRecord("k", "p", dt.date(2024, 2, 29), "date")])
    assert enc([lf.DeleteRecord("k", "p", 3_723_000_004, "time_micros")]) == enc(
        [lf.DeleteRecord("k", "p", dt.time(1, 2, 3, 4), "time_micros")])
    ts = dt.datetime(2020, 1, 1, 1, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    assert enc([lf.DeleteRecord("k", "p", 1_577_836_800_000_000, "timestamp_micros")]) == enc(
        [lf.DeleteRecord("k", "p", ts, "timestamp_micros")])
    assert enc([lf.DeleteRecord("k", "p", 3, "decimal")]) == enc([lf.DeleteRecord("k", "p", decimal.Decimal(3), "decimal")])
    # null ordering value: union branch 0; null key and partition: branch 0 as well
    content = enc([lf.DeleteRecord(None, None, None, None)])
    assert content[8:] == b"\x02\x00\x00\x00\x00"
    assert lf.decode_delete_records(content) == [lf.DeleteRecord(None, None, None, None)]
    assert lf.decode_delete_records(enc([])) == []
    nat = lf.natural_order_delete("k", "")
    assert (nat.ordering_value, nat.ordering_type) == (0, "int")
    assert enc([nat])[8:] == b"\x02\x02\x02k\x02\x00\x04\x00\x00"


@pytest.mark.parametrize(
    "value,kind",
    [
        (2**31, "int"),  # never silently widened into LongWrapper
        (True, "int"),
        (1, "boolean"),
        (2**63, "long"),
        ("1", "long"),
        (1e39, "float"),
        (10**400, "double"),
        ("x", "bytes"),
        (b"x", "string"),
        (dt.datetime(2020, 1, 1), "date"),
        (decimal.Decimal("1e-16"), "decimal"),
        (decimal.Decimal("1e15"), "decimal"),  # 31 digits at scale 15
        (decimal.Decimal("NaN"), "decimal"),
        (dt.datetime(2020, 1, 1), "timestamp_micros"),  # naive: ambiguous
        (1, "uuid"),
        (1, None),
        (None, "int"),
    ],
)
def test_delete_ordering_values_that_do_not_fit_are_refused(value, kind):
    with pytest.raises(ValueError):
        lf.encode_delete_records([lf.DeleteRecord("k", "p", value, kind)])


def test_delete_content_errors():
    good = lf.encode_delete_records([lf.natural_order_delete("k", "p")])
    for version in (1, 2):
        with pytest.raises(UnsupportedFeatureError, match="Kryo"):
            lf.decode_delete_records(struct.pack(">i", version) + good[4:])
    for bad in (good[:5], struct.pack(">i", 4) + good[4:], good[:4] + struct.pack(">i", 10**6) + good[8:],
                good[:4] + struct.pack(">i", -1) + good[8:], good[:4] + struct.pack(">i", 5) + good[8:13],
                good[:8] + b"\x02\x02\x02k\x02\x02p\x30"):
        with pytest.raises(CorruptLogBlockError):
            lf.decode_delete_records(bad)


# --------------------------------------------------------------------------- Avro content
def test_avro_content_errors(trips_log):
    (b,) = lf.read_blocks(trips_log)
    c, schema = b.content, b.schema_json
    with pytest.raises(CorruptLogBlockError, match="SCHEMA"):
        lf.decode_avro_records(c, None)
    with pytest.raises(CorruptLogBlockError, match="invalid Avro schema"):
        lf.decode_avro_records(c, "{not json")
    with pytest.raises(ValueError):  # a writer handing in a broken schema
        lf.encode_avro_records("{not json", [])
    bad_cases = {
        "short": c[:6],
        "version 0": _patched(c, 0, ">i", 0),
        "version 4": _patched(c, 0, ">i", 4),
        "count overruns": _patched(c, 4, ">i", 2),
        "huge count": _patched(c, 4, ">i", 2**31 - 1),
        "negative count": _patched(c, 4, ">i", -1),
        "length overruns": _patched(c, 8, ">i", 229),
        "negative length": _patched(c, 8, ">i", -1),
        "datum needs more than its length": _patched(c, 8, ">i", 200)[:212],
        "garbage datum": c[:12] + b"\x09" * 228,
    }
    for what, bad in bad_cases.items():
        with pytest.raises(CorruptLogBlockError):
            lf.decode_avro_records(bad, schema)
    # Java decodes each record from its own length and skips by that length: a datum shorter
    # than its prefix, and bytes after the last record, are accepted
    (rec,) = lf.decode_avro_records(c, schema)
    padded = _patched(c, 8, ">i", 230)[:12] + c[12:] + b"\xff\xff" + b"trailing"
    assert lf.decode_avro_records(padded, schema) == [rec]
    assert lf.decode_avro_records(struct.pack(">ii", 2, 1) + c[8:], schema) == [rec]  # older version, same layout


def test_avro_reader_schema_resolution(trips_log):
    (b,) = lf.read_blocks(trips_log)
    reader = json.loads(b.schema_json)
    reader["fields"] = [f for f in reader["fields"] if f["name"] != "driver"] + [
        {"name": "tip", "type": ["null", "double"], "default": None}]
    (rec,) = lf.decode_avro_records(b.content, b.schema_json, reader)
    assert "driver" not in rec and rec["tip"] is None and rec["fare"] == 25.0


@pytest.mark.parametrize("seed", range(40))
def test_generated_avro_decoder_equals_fastavro(seed):
    """Random schemas and records: the fast path gives exactly fastavro's records, and on
    damaged content the same records or a CorruptLogBlockError, as fastavro does."""
    rng = random.Random(seed)
    schema, records = random_schema_and_records(rng, max_fields=12)
    sj = json.dumps(schema)
    content = lf.encode_avro_records(sj, records)
    fast = fast_decoder(sj)
    assert fast is not None
    reference = decode_avro_records_reference(content, len(records), _parsed_schema(sj), None)
    # repr: the same types too (True is not 1), and NaN from damaged doubles compares equal
    assert repr(lf.decode_avro_records(content, sj)) == repr(reference)
    assert lf.encode_avro_records(sj, reference) == content
    for _ in range(30):
        bad = bytearray(content)
        for _ in range(rng.randrange(1, 4)):
            bad[rng.randrange(8, len(bad))] ^= rng.randrange(1, 256)
        bad = bytes(bad)
        if fast.zero_size_arrays:  # fastavro itself may loop without bound here: never ask it
            try:
                lf.decode_avro_records(bad, sj)
            except CorruptLogBlockError:
                pass
            continue
        try:
            expected = decode_avro_records_reference(bad, len(records), _parsed_schema(sj), None)
        except CorruptLogBlockError:
            with pytest.raises(CorruptLogBlockError):
                lf.decode_avro_records(bad, sj)
        else:
            assert repr(lf.decode_avro_records(bad, sj)) == repr(expected)


def test_hostile_item_counts_are_refused_without_allocating():
    schema = {"type": "record", "name": "r", "fields": [
        {"name": "nulls", "type": {"type": "array", "items": "null"}},
        {"name": "longs", "type": {"type": "array", "items": "long"}}]}
    ok = lf.encode_avro_records(schema, [{"nulls": [None, None], "longs": [1]}])
    assert lf.decode_avro_records(ok, schema) == [{"nulls": [None, None], "longs": [1]}]
    datum_nulls = zigzag(2**40) + b"\x00" + b"\x00"  # 2**40 nulls take no bytes at all
    datum_longs = b"\x00" + zigzag(2**40) + b"\x02\x00"
    reader = {**schema, "fields": schema["fields"] + [{"name": "x", "type": "int", "default": 0}]}
    for datum in (datum_nulls, datum_longs):
        content = struct.pack(">iii", 3, 1, len(datum)) + datum
        for rs in (None, reader):
            tracemalloc.start()
            try:
                with pytest.raises(CorruptLogBlockError, match="items"):
                    lf.decode_avro_records(content, schema, rs)
                _cur, peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            assert peak < 1 << 20


@pytest.mark.parametrize("depth", [3, 12, 60])
def test_deeply_nested_schemas_still_decode(depth):
    items = "long"
    value = 5
    for _ in range(depth):
        items, value = {"type": "array", "items": items}, [value]
    schema = {"type": "record", "name": "deep", "fields": [{"name": "a", "type": items}]}
    content = lf.encode_avro_records(schema, [{"a": value}])
    assert lf.decode_avro_records(content, schema) == [{"a": value}]  # generated or fastavro


def test_recursive_schema_and_large_varints():
    schema = {"type": "record", "name": "Node", "fields": [
        {"name": "v", "type": "long"}, {"name": "next", "type": ["null", "Node"]}]}
    recs = [{"v": v, "next": {"v": ~v, "next": None}} for v in (0, 1, -1, 2**63 - 1, -(2**63), 2**35)]
    content = lf.encode_avro_records(schema, recs)
    assert fast_decoder(json.dumps(schema, separators=(",", ":"))) is not None
    assert lf.decode_avro_records(content, schema) == recs


# --------------------------------------------------------------------------- 5. file names
def test_fixture_log_file_names_parse_and_format_back(v6_tables):
    for name, logs in EXPECTED_LOGS.items():
        for rel in logs:
            file_name = rel.rsplit("/", 1)[-1]
            p = lf.parse_log_file_name(file_name)
            assert p is not None and p.extension == "log" and p.suffix == ""
            assert lf.format_log_file_name(p.file_id, p.base_instant, p.version, p.write_token) == file_name == str(p)
    p = lf.parse_log_file_name(".d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0_20250331030642808.log.1_0-26-85")
    assert p == lf.LogFileName("d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0", "20250331030642808", 1, "0-26-85")


def test_rollback_fixture_logs_sort_by_version(v6_tables):
    names = [r for r in EXPECTED_LOGS["v6_nonpartitioned_rollback"]]
    for shuffled in (names, names[::-1], [names[1], names[2], names[0]]):
        ordered = sorted(shuffled, key=lf.log_file_sort_key)
        assert [lf.parse_log_file_name(n).version for n in ordered] == [1, 2, 3]
        assert [lf.parse_log_file_name(n).write_token for n in ordered] == ["0-33-43", "1-0-1", "0-13-9"]


def test_log_file_comparator_order():
    names = [
        ".f-0_2.log.1_0-0-0",  # later base instant sorts last
        ".f-0_1.log.10_0-0-0",  # version 10 after version 9 (a number, not a string)
        ".f-0_1.log.9_0-0-0",
        ".f-0_1.log.2_2-1-1",
        ".f-0_1.log.2_10-1-1",  # token "10-1-1" < "2-1-1" as strings
        ".f-0_1.log.2",  # no token: first among version 2
        ".f-0_1.log.2_2-1-1.cdc",  # suffix last
    ]
    assert sorted(names, key=lf.log_file_sort_key) == [
        ".f-0_1.log.2", ".f-0_1.log.2_10-1-1", ".f-0_1.log.2_2-1-1", ".f-0_1.log.2_2-1-1.cdc",
        ".f-0_1.log.9_0-0-0", ".f-0_1.log.10_0-0-0", ".f-0_2.log.1_0-0-0",
    ]
    assert lf.parse_log_file_name(".f-0_1.log.2").write_token is None
    assert lf.parse_log_file_name(".f-0_1.log.2_2-1-1.cdc").suffix == ".cdc"
    with pytest.raises(ValueError):
        lf.log_file_sort_key("f-0_1_2.parquet")


def test_non_log_names_and_invalid_formats():
    for name in ("", "abc.parquet", "d0304c53-0_0-13-60_20250331030642808.parquet", ".hoodie_partition_metadata",
                 ".f_1.log", "f_1.log.1_0-0-0", ".f_1.log.x_0-0-0", ".f.log.1_0-0-0", ".f_1.txt.1_0-0-0",
                 ".hudi-etc-tmp-0123abcd-1"):
        assert lf.parse_log_file_name(name) is None, name
    # Java's pattern is only anchored at the start: text after the token still matches
    assert lf.parse_log_file_name(".f_1.log.3_0-1-2.crc") == lf.LogFileName("f", "1", 3, "0-1-2")
    assert lf.parse_log_file_name(".f_1.archive.3_0-1-2").extension == "archive"
    assert lf.format_log_file_name("f-0", "20250101000000000", 3, "1-0-1") == ".f-0_20250101000000000.log.3_1-0-1"
    bad = [("a_b", "1", 1, "0-0-0"), ("a.b", "1", 1, "0-0-0"), ("", "1", 1, "0-0-0"), ("a", "x1", 1, "0-0-0"),
           ("a", "1", 0, "0-0-0"), ("a", "1", -1, "0-0-0"), ("a", "1", 1, "a-b-c"), ("a", "1", 1, "0_0-0"),
           ("a", "1", 1, None), ("a", "1", True, "0-0-0")]
    for args in bad:
        with pytest.raises(ValueError):
            lf.format_log_file_name(*args)
    with pytest.raises(ValueError):
        lf.format_log_file_name("a", "1", 1, "0-0-0", extension="txt")
    with pytest.raises(ValueError):
        lf.format_log_file_name("a", "1", 1, "0-0-0", suffix=".tmp")


# --------------------------------------------------------------------------- 6. framing properties
def test_encode_block_refusals():
    with pytest.raises(ValueError, match="IS_PARTIAL"):
        lf.encode_block(BT.AVRO_DATA, [(HK.IS_PARTIAL, "true")], b"")
    with pytest.raises(ValueError, match="RECORD_POSITIONS"):
        lf.encode_block(BT.DELETE, [(HK.INSTANT_TIME, "1")], b"", [(HK.RECORD_POSITIONS, "x")])
    with pytest.raises(ValueError):
        lf.encode_block(BT.CORRUPT, [], b"")
    with pytest.raises(ValueError):
        lf.encode_block(9, [], b"")
    with pytest.raises(ValueError):
        lf.encode_block(BT.COMMAND, [(9, "x")], b"", check_v6=False)
    with pytest.raises(ValueError):
        lf.encode_block(BT.COMMAND, [(HK.INSTANT_TIME, 1)], b"")
    # an empty block is 14 + 32 bytes; footer and header count 0
    empty = lf.encode_block(BT.COMMAND, [], b"")
    assert empty == b"#HUDI#" + bytes.fromhex("0000000000000020 00000001 00000000 00000000 0000000000000000 00000000 0000000000000026")


@settings(max_examples=200, deadline=None)
@given(
    blocks=st.lists(
        st.tuples(
            st.sampled_from([BT.AVRO_DATA, BT.DELETE, BT.COMMAND, BT.PARQUET_DATA, BT.HFILE_DATA, BT.CDC_DATA]),
            st.lists(st.tuples(st.sampled_from(list(HK)), st.text(max_size=30)), max_size=5),
            st.binary(max_size=300),
            st.lists(st.tuples(st.sampled_from(list(HK)), st.text(max_size=10)), max_size=2),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_blocks_round_trip(blocks):
    encoded = [lf.encode_block(t, h, c, f, check_v6=False) for t, h, c, f in blocks]
    data = b"".join(encoded)
    got = lf.read_blocks(data, strict=True)
    assert len(got) == len(blocks)
    pos = 0
    for b, (t, h, c, f), raw in zip(got, blocks, encoded):
        assert (b.block_type, b.header, b.content, b.footer) == (t, tuple(h), c, tuple(f))
        assert (b.offset, b.size) == (pos, len(raw))
        assert b.header_dict == dict(h)
        pos += len(raw)
        if all(k in lf.V6_WRITABLE_KEYS for k, _v in h + f):
            assert lf.encode_block(t, h, c, f) == raw


def test_every_ordering_type_has_one_converter_in_union_order():
    from airflow_hudi_etc.hudi.logformat import delete

    assert tuple(delete._WRAP) == lf.ORDERING_TYPES
    with pytest.raises(ValueError, match="does not fit ordering type 'int'"):
        delete._wrap_ordering_value("int", 2**31)
    with pytest.raises(ValueError, match="unknown ordering type"):
        delete._wrap_ordering_value("uuid", "x")
