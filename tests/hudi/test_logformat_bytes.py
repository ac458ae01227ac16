"""Log format against Java-written files, byte for byte, and Hudi's corrupt-block rules."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.errors import CorruptLogBlockError, TruncatedLogFileError, UnknownBlockTypeError
from paths import V6_MOR_FIXTURES


def log_files(root: Path):
    for name in sorted(V6_MOR_FIXTURES):
        for p in sorted((root / name).rglob(".*.log.*")):
            yield name, p


def test_every_v6_fixture_block_re_encodes_byte_for_byte(fixture_root):
    seen = {}
    for name, p in log_files(fixture_root):
        data = p.read_bytes()
        blocks = lf.read_blocks(data, strict=True)
        rebuilt = b"".join(lf.encode_block(b.block_type, b.header, b.content, b.footer) for b in blocks)
        assert rebuilt == data, p.name
        for b in blocks:
            seen[b.block_type] = seen.get(b.block_type, 0) + 1
            if b.block_type == lf.BlockType.AVRO_DATA:
                recs = lf.decode_avro_records(b.content, b.schema_json)
                assert lf.encode_avro_records(b.schema_json, recs) == b.content
            elif b.block_type == lf.BlockType.DELETE:
                assert lf.encode_delete_records(lf.decode_delete_records(b.content)) == b.content
            elif b.block_type == lf.BlockType.COMMAND:
                assert lf.encode_rollback_block(b.instant_time, b.target_instant_time) == data
    assert seen == {lf.BlockType.AVRO_DATA: 1, lf.BlockType.DELETE: 1, lf.BlockType.PARQUET_DATA: 5,
                    lf.BlockType.COMMAND: 1}


def test_known_values_of_java_blocks(fixture_root):
    p = next((fixture_root / "v6_trips_8i1u").rglob(".*.log.*"))
    (b,) = lf.read_blocks(p.read_bytes(), strict=True)
    assert b.instant_time == "20250331030645735" and b.size == 1148 == p.stat().st_size
    (rec,) = lf.decode_avro_records(b.content, b.schema_json)
    assert rec["fare"] == 25.0 and rec["_hoodie_commit_seqno"] == "20250331030645735_0_1"
    assert rec["_hoodie_file_name"] == "d0304c53-6fd2-4b7a-a9d6-5ff632f79224-0"
    p = next((fixture_root / "v6_trips_8i3d").rglob(".*.log.*"))
    (b,) = lf.read_blocks(p.read_bytes(), strict=True)
    dels = lf.decode_delete_records(b.content)
    assert sorted(d.record_key[:8] for d in dels) == ["334e26e9", "9909a8b1", "e96c4396"]
    assert {(d.ordering_value, d.ordering_type) for d in dels} == {(0, "int")}
    logs = sorted((fixture_root / "v6_nonpartitioned_rollback").glob(".*.log.*"), key=lambda q: lf.log_file_sort_key(q.name))
    assert [lf.parse_log_file_name(q.name).version for q in logs] == [1, 2, 3]
    (cmd,) = lf.read_blocks(logs[1].read_bytes(), strict=True)
    assert cmd.block_type == lf.BlockType.COMMAND and cmd.target_instant_time == "20250126040826878"
    assert len(logs[1].read_bytes()) == 105
    (pb,) = lf.read_blocks(logs[0].read_bytes(), strict=True)
    t = lf.decode_parquet_content(pb.content)
    assert t.column("isActive").to_pylist() == [False] and t.column("_hoodie_record_key").to_pylist() == ["1"]


@pytest.fixture
def java_block(fixture_root) -> bytes:
    return next((fixture_root / "v6_trips_8i1u").rglob(".*.log.*")).read_bytes()


def test_truncation_at_every_offset_is_detected(java_block):
    for cut in range(1, len(java_block)):
        data = java_block[:cut]
        with pytest.raises(CorruptLogBlockError):  # TruncatedLogFileError is one
            lf.read_blocks(data, strict=True)
        got = lf.read_blocks(data)
        assert len(got) == 1 and isinstance(got[0], lf.CorruptBlock)


def test_corruptions_match_hudi_rules(java_block):
    good = lf.read_blocks(java_block)[0]
    # enlarged block length
    bad = java_block[:6] + struct.pack(">q", struct.unpack(">q", java_block[6:14])[0] + 5) + java_block[14:]
    assert isinstance(lf.read_blocks(bad)[0], lf.CorruptBlock)
    # wrong trailer
    bad = java_block[:-8] + struct.pack(">q", 999)
    assert "trailing length" in lf.read_blocks(bad)[0].reason
    # junk after the block makes the block itself corrupt (Java: next bytes must be magic or EOF)
    assert isinstance(lf.read_blocks(java_block + b"junkjunk")[0], lf.CorruptBlock)
    # a valid block after junk is found again (resync at the next magic)
    got = lf.read_blocks(java_block + b"garbage" + java_block)
    assert isinstance(got[0], lf.CorruptBlock) and got[1].content == good.content and len(got) == 2
    got = lf.read_blocks(b"garbage" + java_block)
    assert isinstance(got[0], lf.CorruptBlock) and got[1].content == good.content
    # a partial block appended: the first block stays valid
    got = lf.read_blocks(java_block + java_block[:40])
    assert got[0].content == good.content and isinstance(got[1], lf.CorruptBlock)
    # huge length: no allocation, just corrupt
    huge = lf.MAGIC + struct.pack(">q", 2**62) + b"\x00" * 20
    assert isinstance(lf.read_blocks(huge)[0], lf.CorruptBlock)
    with pytest.raises(TruncatedLogFileError):
        lf.read_blocks(huge, strict=True)
    with pytest.raises(TruncatedLogFileError):
        lf.read_blocks(lf.MAGIC, strict=True)


def test_unknown_block_type_is_a_typed_error(java_block):
    bad = java_block[:18] + struct.pack(">i", 9) + java_block[22:]
    with pytest.raises(UnknownBlockTypeError, match="block type 9"):
        lf.read_blocks(bad)


@pytest.mark.parametrize(
    "kind,value,branch",
    [("boolean", True, 1), ("int", 7, 2), ("long", 7, 3), ("float", 1.5, 4), ("double", 2.5, 5),
     ("bytes", b"x", 6), ("string", "s", 7), ("timestamp_micros", 123, 11)],
)
def test_delete_ordering_wrappers_land_in_their_union_branch(kind, value, branch):
    content = lf.encode_delete_records([lf.DeleteRecord("k", "p", value, kind)])
    (d,) = lf.decode_delete_records(content)
    if kind == "timestamp_micros":  # decoded like the Arrow reader decodes the data column
        import datetime as dt

        value = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=value)
    assert (d.ordering_value, d.ordering_type) == (value, kind)
    # payload: array block count (zigzag 1 = 0x02), key union idx 1 (0x02) + "k", partition 0x02 + "p", then the union index
    payload = content[8:]
    assert payload[:7] == b"\x02\x02\x02k\x02\x02p"
    assert payload[7] == branch * 2  # zig-zag varint of the branch index


def test_log_file_names():
    n = lf.format_log_file_name("abc-0", "20250101000000000", 3, "1-0-1")
    assert n == ".abc-0_20250101000000000.log.3_1-0-1"
    p = lf.parse_log_file_name(n)
    assert (p.file_id, p.base_instant, p.version, p.write_token) == ("abc-0", "20250101000000000", 3, "1-0-1")
    assert lf.parse_log_file_name("abc_1.parquet") is None
    names = [".f_1.log.2_2-1-1", ".f_1.log.2_10-1-1", ".f_1.log.1_9-9-9", ".f_0.log.9_0-0-0"]
    assert sorted(names, key=lf.log_file_sort_key) == [".f_0.log.9_0-0-0", ".f_1.log.1_9-9-9", ".f_1.log.2_10-1-1", ".f_1.log.2_2-1-1"]
    with pytest.raises(ValueError):
        lf.format_log_file_name("a_b", "1", 1, "0-0-0")
    with pytest.raises(ValueError):
        lf.encode_block(lf.BlockType.AVRO_DATA, [(lf.HeaderKey.IS_PARTIAL, "true")], b"")


@settings(max_examples=200, deadline=None)
@given(
    btype=st.sampled_from([lf.BlockType.AVRO_DATA, lf.BlockType.DELETE, lf.BlockType.COMMAND, lf.BlockType.PARQUET_DATA]),
    header=st.lists(st.tuples(st.sampled_from(sorted(lf.V6_WRITABLE_KEYS)), st.text(max_size=30)), max_size=4),
    content=st.binary(max_size=200),
    n=st.integers(1, 3),
)
def test_blocks_round_trip(btype, header, content, n):
    one = lf.encode_block(btype, header, content)
    got = lf.read_blocks(one * n, strict=True)
    assert len(got) == n and all(b.content == content and list(b.header) == header for b in got)
