"""hoodie.properties codec, timeline parsing, instant times, storage safety — fixed expectations."""

from __future__ import annotations

import datetime as dt
import os

import pytest

from airflow_hudi_etc.hudi.config import properties as hp
from airflow_hudi_etc.hudi.errors import (
    InstantExistsError,
    InvalidPropertiesError,
    TableNotFoundError,
    UnsafePathError,
    UnsupportedTableTypeError,
    UnsupportedTableVersionError,
)
from airflow_hudi_etc.hudi.storage import Storage, safe_relpath
from airflow_hudi_etc.hudi.timeline.active import (
    Action,
    State,
    Timeline,
    format_instant,
    next_instant_time,
    parse_instant_file,
)


def test_properties_parse_java_escapes():
    text = "#c\n! also a comment\nhoodie.table.create.schema={\"type\"\\:\"record\"}\na\\=b=c\\:d\nsp = x y\nu=caf\\u00E9\ncont=one\\\n    two\n"
    p = hp.loads(text)
    assert p["hoodie.table.create.schema"] == '{"type":"record"}'
    assert p["a=b"] == "c:d"
    assert p["sp"] == "x y"
    assert p["u"] == "café"
    assert p["cont"] == "onetwo"


def test_properties_round_trip_and_escaping():
    props = {"k:1": "v=1#x", "name": "café ☕", "lead": " space", "s": '{"a":"b"}'}
    text = hp.dumps(props)
    assert "k\\:1=v\\=1\\#x" in text
    assert "caf\\u00E9 \\u2615" in text
    assert hp.loads(text) == props


def test_checksum_matches_java_written_fixture():
    assert hp.table_checksum("v6_trips_8i3d", "default") == 3180720914
    assert hp.table_checksum("t", None) == __import__("zlib").crc32(b".t")


def test_fixture_properties_load(fixture_root):
    cfg = hp.load_table_config(Storage(str(fixture_root / "v6_trips_8i1u")))
    assert cfg.name == "v6_trips_8i1u" and cfg.record_key_field == "uuid"
    assert cfg.precombine_field == "ts" and cfg.partition_fields == ("city",)
    assert not cfg.event_time_ordering


def test_refusals(fixture_root, tmp_path):
    with pytest.raises(UnsupportedTableTypeError):
        hp.load_table_config(Storage(str(fixture_root / "v6_cow_nonpartitioned")))
    assert hp.load_table_config(Storage(str(fixture_root / "v8_trips_8i3u1d"))).version == 8  # read since v8/v9
    (tmp_path / "v7" / ".hoodie").mkdir(parents=True)
    (tmp_path / "v7" / ".hoodie" / "hoodie.properties").write_text(
        "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=7\n")
    with pytest.raises(UnsupportedTableVersionError, match="table version 7"):
        hp.load_table_config(Storage(str(tmp_path / "v7")))
    with pytest.raises(TableNotFoundError):
        hp.load_table_config(Storage(str(tmp_path / "nothing")))
    (tmp_path / "bad" / ".hoodie").mkdir(parents=True)
    (tmp_path / "bad" / ".hoodie" / "hoodie.properties").write_text("hoodie.table.type=MERGE_ON_READ\n")
    with pytest.raises(InvalidPropertiesError, match="hoodie.table.name"):
        hp.load_table_config(Storage(str(tmp_path / "bad")))
    base = "hoodie.table.name=t\nhoodie.table.type=MERGE_ON_READ\nhoodie.table.version=6\nhoodie.table.recordkey.fields=id\n"
    (tmp_path / "bad" / ".hoodie" / "hoodie.properties").write_text(base + "hoodie.table.checksum=1\n")
    with pytest.raises(InvalidPropertiesError, match="checksum"):
        hp.load_table_config(Storage(str(tmp_path / "bad")))
    (tmp_path / "bad" / ".hoodie" / "hoodie.properties").write_text(base.replace("version=6", "version=5"))
    with pytest.raises(UnsupportedTableVersionError, match="version 5"):
        hp.load_table_config(Storage(str(tmp_path / "bad")))


def test_instant_file_names():
    assert parse_instant_file("20250101000000000.deltacommit.inflight").state is State.INFLIGHT
    assert parse_instant_file("20250101000000000.inflight").action is Action.COMMIT
    assert parse_instant_file("20250101000000000.commit").state is State.COMPLETED
    assert parse_instant_file("hoodie.properties") is None
    assert parse_instant_file("2025.commit") is None


def test_timeline_highest_state_and_compaction_grouping():
    tl = Timeline.from_file_names(
        [
            "20250101000000000.deltacommit.requested", "20250101000000000.deltacommit.inflight",
            "20250101000000000.deltacommit",
            "20250102000000000.compaction.requested", "20250102000000000.compaction.inflight",
            "20250102000000000.commit",
            "20250103000000000.compaction.requested",
            "20250104000000000.deltacommit.requested", "20250104000000000.deltacommit.inflight",
            "20250105000000000.replacecommit.requested",
        ]
    )
    assert [(i.timestamp[-10:-9], i.action.value, i.state.name) for i in tl] == [
        ("1", "deltacommit", "COMPLETED"),
        ("2", "compaction", "COMPLETED"),
        ("3", "compaction", "REQUESTED"),
        ("4", "deltacommit", "INFLIGHT"),
        ("5", "replacecommit", "REQUESTED"),
    ]
    assert tl.pending_compaction_times == {"20250103000000000"}
    assert tl.completed_write_times == {"20250101000000000", "20250102000000000"}
    assert [i.timestamp for i in tl.pending_writes] == ["20250104000000000"]
    assert tl.is_committed("20240101000000000")  # before the timeline starts: archived
    assert not tl.is_committed("20250104000000000")


def test_next_instant_time_is_after_pending_ones():
    tl = Timeline.from_file_names(["29991231235959999.deltacommit.requested"])
    now = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
    assert next_instant_time(tl, now) == "30000101000000000"
    assert format_instant(dt.datetime(2026, 1, 2, 3, 4, 5, 678900, tzinfo=dt.timezone.utc)) == "20260102030405678"
    assert next_instant_time(Timeline.from_file_names([]), now) == "20260101000000000"


def test_safe_paths():
    for bad in ["../x", "a/../../x", "/etc/passwd", "s3://b/k", "a/\x00"]:
        with pytest.raises(UnsafePathError):
            safe_relpath(bad)
    assert safe_relpath("a/./b") == "a/b"


def test_create_if_absent_never_overwrites(tmp_path):
    st = Storage(str(tmp_path))
    st.create_if_absent(".hoodie/1.deltacommit", b"one")
    with pytest.raises(InstantExistsError):
        st.create_if_absent(".hoodie/1.deltacommit", b"two")
    assert st.read_bytes(".hoodie/1.deltacommit") == b"one"
    assert [f.name for f in st.list(".hoodie")] == ["1.deltacommit"]  # no temp files left
    assert st.read_bytes(".hoodie/1.deltacommit", 1, 3) == b"ne"


@pytest.mark.parametrize("mode", ["default", "hardlink", "hardlink-refused"])
def test_a_local_copy_keeps_its_bytes_when_the_original_goes(tmp_path, monkeypatch, mode):
    # locally a copy is the bytes copied; with HUDI_ETC_LOCAL_COPY=hardlink a hard link where the
    # file system allows one (else the bytes copied)
    import errno

    from airflow_hudi_etc.hudi import storage as storage_mod

    if mode != "default":
        monkeypatch.setenv(storage_mod.LOCAL_COPY_ENV, "hardlink")
    if mode == "hardlink-refused":
        real = os.link

        def no_link(src, dst, **k):  # the atomic create's own link of its temp file still works
            if os.path.basename(src).startswith(storage_mod._TMP_PREFIX):
                return real(src, dst, **k)
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        monkeypatch.setattr(os, "link", no_link)
    st = Storage(str(tmp_path))
    st.create_if_absent("p/.f_1.log.1_0-0-0", b"data")
    st.symlink("p/.f_1.log.1_0-0-0", "p/.f_2.log.1_0-0-0")
    st.copy("p/.f_2.log.1_0-0-0", "q/.f_3.log.1_0-0-0")  # through the symlink, into a new folder
    with pytest.raises(InstantExistsError):
        st.copy("p/.f_1.log.1_0-0-0", "q/.f_3.log.1_0-0-0")
    copy = tmp_path / "q" / ".f_3.log.1_0-0-0"
    assert not copy.is_symlink() and os.stat(copy).st_nlink == (2 if mode == "hardlink" else 1)
    st.delete("p/.f_1.log.1_0-0-0")  # Java's cleaner deletes the original
    assert st.read_bytes("q/.f_3.log.1_0-0-0") == b"data"
    assert [f.name for f in st.list("q")] == [".f_3.log.1_0-0-0"]  # no temp file left
    with pytest.raises(FileNotFoundError):
        st.copy("p/.f_1.log.1_0-0-0", "q/.f_4.log.1_0-0-0")


def test_symlink_is_relative_and_copy_refuses_existing(tmp_path):
    st = Storage(str(tmp_path))
    st.create_if_absent("p/.f_1.log.1_0-0-0", b"data")
    st.symlink("p/.f_1.log.1_0-0-0", "p/.f_2.log.1_0-0-0")
    assert os.readlink(tmp_path / "p" / ".f_2.log.1_0-0-0") == ".f_1.log.1_0-0-0"
    assert st.read_bytes("p/.f_2.log.1_0-0-0") == b"data"
    assert {f.name: f.is_link for f in st.list("p")} == {".f_1.log.1_0-0-0": False, ".f_2.log.1_0-0-0": True}
    st.copy("p/.f_1.log.1_0-0-0", "p/.f_3.log.1_0-0-0")
    with pytest.raises(InstantExistsError):
        st.copy("p/.f_1.log.1_0-0-0", "p/.f_3.log.1_0-0-0")
