"""Writing a base file as a stream: the create-once file, the row groups and Hudi's footer."""

from __future__ import annotations

import io
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_hudi_etc.hudi.index import bloom
from airflow_hudi_etc.hudi.errors import InstantExistsError
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.write.writer import BaseFileWriter, base_file_bytes

SCHEMA = pa.schema([pa.field("_hoodie_record_key", pa.string()), pa.field("n", pa.int64())])


def rows(keys):
    return pa.table({"_hoodie_record_key": keys, "n": list(range(len(keys)))}, schema=SCHEMA)


def test_create_streamed_appears_whole_and_once(tmp_path):
    st = Storage(str(tmp_path))
    with st.create_streamed("p/a.bin") as f:
        f.write(b"hello ")
        assert not (tmp_path / "p" / "a.bin").exists()  # nothing visible before the end
        f.write(b"world")
    assert (tmp_path / "p" / "a.bin").read_bytes() == b"hello world"
    with pytest.raises(InstantExistsError):
        with st.create_streamed("p/a.bin") as f:
            f.write(b"hello world")
    with st.create_streamed("p/a.bin", same_ok=True) as f:  # a retry that wrote the same bytes
        f.write(b"hello world")
    with pytest.raises(InstantExistsError):
        with st.create_streamed("p/a.bin", same_ok=True) as f:
            f.write(b"hello there")
    with pytest.raises(RuntimeError):
        with st.create_streamed("p/b.bin") as f:
            f.write(b"half")
            raise RuntimeError("the task died")
    assert sorted(os.listdir(tmp_path / "p")) == ["a.bin"]  # no target, no temp file left
    assert (tmp_path / "p" / "a.bin").read_bytes() == b"hello world"


def test_streamed_base_file_has_row_groups_and_hudi_footer():
    keys = [f"key{i:05d}" for i in range(3000)][::-1]
    sink = io.BytesIO()
    w = BaseFileWriter(sink, SCHEMA, '{"type": "record"}', row_group_bytes=8 * 1024)
    for i in range(0, 3000, 700):
        w.write(rows(keys[i:i + 700]))
    w.close()
    data = sink.getvalue()
    md = pq.read_metadata(io.BytesIO(data))
    assert md.num_rows == 3000 and md.num_row_groups > 1
    kv = {k.decode(): v.decode() for k, v in md.metadata.items()}
    assert kv["parquet.avro.schema"] == '{"type": "record"}'
    assert (kv["hoodie_min_record_key"], kv["hoodie_max_record_key"]) == ("key00000", "key02999")
    f = bloom.read_bloom_filter(md.metadata)
    assert all(f.might_contain(k) for k in keys)
    assert sum(f.might_contain(f"other{i}") for i in range(2000)) == 0
    # the whole table at once gives the same footer (keys enter the filter in the same order)
    one = pq.read_metadata(io.BytesIO(base_file_bytes(rows(keys), '{"type": "record"}'))).metadata
    assert one[b"org.apache.hudi.bloomfilter"] == md.metadata[b"org.apache.hudi.bloomfilter"]
    assert pq.read_table(io.BytesIO(data)).column("_hoodie_record_key").to_pylist() == keys


def test_empty_base_file_has_no_bloom_filter():
    sink = io.BytesIO()
    w = BaseFileWriter(sink, SCHEMA, "{}")
    w.close()
    md = pq.read_metadata(io.BytesIO(sink.getvalue()))
    assert md.num_rows == 0 and b"org.apache.hudi.bloomfilter" not in (md.metadata or {})


@pytest.mark.parametrize("seed", [3, 4])
def test_every_base_file_we_write_carries_the_footer_hudis_bloom_index_reads(tmp_path, seed):
    """Java's BLOOM index prunes a file group by the key range in the footer, then by the bloom
    filter: both must be there and hold exactly the file's keys, for inserts and compactions."""
    from airflow_hudi_etc.compaction.execution import execute
    from airflow_hudi_etc.compaction.scheduling import schedule
    from batches import run_history

    path, _ = run_history(tmp_path, seed, partitioned=seed % 2 == 0, batches=5)
    assert schedule(str(path), data_latency="0s").instant  # now: every event time is past
    assert execute(str(path))["status"] == "completed"
    files = sorted(path.rglob("*.parquet"))
    assert any("-2-0_" in f.name for f in files)  # a compacted base file is among them
    for f in files:
        md = pq.read_metadata(f).metadata
        keys = pq.read_table(f, columns=["_hoodie_record_key"]).column(0).to_pylist()
        assert md[b"parquet.avro.schema"].startswith(b'{"type":"record"')
        if not keys:
            continue
        assert (md[b"hoodie_min_record_key"].decode(), md[b"hoodie_max_record_key"].decode()) == (min(keys), max(keys))
        f_ = bloom.read_bloom_filter(md)
        assert f_ is not None and all(f_.might_contain(k) for k in keys)


def test_dictionary_encoding_only_where_values_repeat():
    n = 20_000
    t = pa.table({"_hoodie_record_key": [f"k{i:06d}" for i in range(n)], "n": list(range(n))}, schema=SCHEMA)
    t = t.append_column("city", pa.array(["sf", "nyc", "la"] * (n // 3) + ["sf"] * (n % 3)))
    sink = io.BytesIO()
    w = BaseFileWriter(sink, t.schema, "{}")
    w.write(t)
    w.close()
    rg = pq.read_metadata(io.BytesIO(sink.getvalue())).row_group(0)
    enc = {rg.column(i).path_in_schema: rg.column(i).encodings for i in range(rg.num_columns)}
    assert "RLE_DICTIONARY" in enc["city"]
    assert "RLE_DICTIONARY" not in enc["_hoodie_record_key"] and "RLE_DICTIONARY" not in enc["n"]
    assert pq.read_table(io.BytesIO(sink.getvalue())).equals(t)


@pytest.mark.parametrize("kernel", ["copy_file_range", "refused", "absent"])
def test_stage_copy_writes_every_byte_of_the_source_once(tmp_path, monkeypatch, kernel):
    """Staged copies (schedule's copy phase): the kernel's in-place copy, and the read/write path
    taken where copy_file_range is refused (EXDEV, ENOSYS, ...) or missing, give the same bytes;
    the staged name is never overwritten."""
    import errno

    from airflow_hudi_etc.hudi.storage import local as storage_mod

    if kernel == "refused":
        def refuse(*_a):
            raise OSError(errno.EXDEV, "cross-device")
        monkeypatch.setattr(storage_mod, "_copy_file_range", refuse)
    elif kernel == "absent" or storage_mod._copy_file_range is None:
        monkeypatch.setattr(storage_mod, "_copy_file_range", None)
    data = bytes(range(256)) * 1025 + b"tail"  # more than one 64 KiB chunk, not a multiple of it
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "src").write_bytes(data)
    (tmp_path / "p" / "empty").write_bytes(b"")
    st = Storage(str(tmp_path))
    st.stage_copy("p/src", "p/.staged-a", durable=False)
    st.stage_copy("p/empty", "p/.staged-b")
    st.stage_copy(None, "q/.staged-c")  # a placeholder, in a folder made for it
    assert (tmp_path / "p" / ".staged-a").read_bytes() == data
    assert (tmp_path / "p" / ".staged-b").read_bytes() == b""
    assert (tmp_path / "q" / ".staged-c").read_bytes() == b""
    with pytest.raises(InstantExistsError):
        st.stage_copy("p/empty", "p/.staged-a")
    assert (tmp_path / "p" / ".staged-a").read_bytes() == data


def test_stage_copy_of_an_unreadable_source_leaves_no_staged_file(tmp_path):
    (tmp_path / "p" / "adir").mkdir(parents=True)
    st = Storage(str(tmp_path))
    with pytest.raises(IsADirectoryError):
        st.stage_copy("p/adir", "p/.staged")
    with pytest.raises(FileNotFoundError):
        st.stage_copy("p/missing", "p/.staged")
    assert sorted(os.listdir(tmp_path / "p")) == ["adir"]
