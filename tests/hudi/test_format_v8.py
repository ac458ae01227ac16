"""Table versions 8 and 9 (timeline layout 2): config, timeline, commit metadata, slicing, reads.

Judges: the fixture tables written by Java Hudi 1.0/1.1 (values from their README and the format
spec), hudi-rs 0.5.0 reading the same copies, and fixed values written here.
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from airflow_hudi_etc.hudi.timeline import commits as cm
from airflow_hudi_etc.hudi.protocol.coexistence import drop_metadata_table
from airflow_hudi_etc.hudi.errors import (
    InstantExistsError,
    MetadataTablePresentError,
    TableUpgradeIncompleteError,
    UnsupportedFeatureError,
    UnsupportedTableVersionError,
)
from airflow_hudi_etc.hudi.config.properties import (
    TableConfig,
    dumps,
    loads,
    new_table_properties_v8,
)
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.timeline.active import Action, State, Timeline, next_time_layout2
from airflow_hudi_etc.hudi.timeline import timeline_v2 as tv2
from paths import FIXTURES
from oracle import hudi_rs_read, norm

V8 = ("v8_trips_8i3u1d", "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip")
V9 = ("v9_timebasedkeygen_nonhivestyle", "sample_table/mor/avro/v9_timebasedkeygen_nonhivestyle.zip")


def _extract(which, dest: Path, *, drop_mdt=True) -> Path:
    name, rel = which
    z = FIXTURES / rel
    if not z.exists():
        pytest.skip(f"fixture {z} not available")
    with zipfile.ZipFile(z) as zf:
        zf.extractall(dest, members=[m for m in zf.namelist() if not m.startswith("__MACOSX/")])
    path = dest / name
    if drop_mdt:
        drop_metadata_table(Storage(str(path)))
    return path


@pytest.fixture(scope="module")
def v8(tmp_path_factory):
    return _extract(V8, tmp_path_factory.mktemp("v8"))


@pytest.fixture(scope="module")
def v9(tmp_path_factory):
    return _extract(V9, tmp_path_factory.mktemp("v9"))


def _rows(t: pa.Table, columns):
    """Rows as a sorted multiset of normalised values (v9 has one key in two file groups)."""
    return sorted((tuple(norm(r[c]) for c in columns) for r in t.select(columns).to_pylist()), key=repr)


def _same(ours: pa.Table, theirs: pa.Table):
    assert ours.num_rows == theirs.num_rows
    cols = [c for c in theirs.column_names if c in ours.column_names] if theirs.num_rows else []
    assert _rows(ours, cols) == _rows(theirs, cols)


def _props(path: Path) -> dict:
    return loads((path / ".hoodie/hoodie.properties").read_text())


# ------------------------------------------------------------------ 1. table config
def test_fixture_configs(v8, v9):
    c8 = TableConfig.from_properties(_props(v8))
    assert (c8.version, c8.layout_version, c8.timeline_dir, c8.history_dir) == (
        8, 2, ".hoodie/timeline", ".hoodie/timeline/history")
    assert (c8.ordering_fields, c8.precombine_field, c8.merge_mode, c8.key_generator_type) == (
        ("ts",), "ts", "EVENT_TIME_ORDERING", "SIMPLE")
    c9 = TableConfig.from_properties(_props(v9))
    assert (c9.version, c9.ordering_fields, c9.merge_mode, c9.key_generator_type, c9.partition_fields) == (
        9, ("txn_ts",), "EVENT_TIME_ORDERING", "TIMESTAMP", ("ts_str",))
    assert c9.event_time_ordering  # no payload key in v9: the merge mode decides


def _base_v8(**over):
    p = {"hoodie.table.name": "t", "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": "8",
         "hoodie.timeline.layout.version": "2", "hoodie.table.recordkey.fields": "id",
         "hoodie.table.precombine.field": "ts"}
    p.update(over)
    return {k: v for k, v in p.items() if v is not None}


@pytest.mark.parametrize("version,layout", [("7", "1"), ("10", "2"), ("5", "1"), ("11", "2")])
def test_unknown_versions_refused(version, layout):
    with pytest.raises(UnsupportedTableVersionError, match=f"table version {version}.*6.*8.*9"):
        TableConfig.from_properties(_base_v8(**{"hoodie.table.version": version,
                                                "hoodie.timeline.layout.version": layout}))


@pytest.mark.parametrize("version,layout", [("8", "1"), ("9", None), ("6", "2"), ("8", "3")])
def test_layout_must_match_version(version, layout):
    with pytest.raises(UnsupportedTableVersionError, match="layout"):
        TableConfig.from_properties(_base_v8(**{"hoodie.table.version": version,
                                                "hoodie.timeline.layout.version": layout}))


def test_merge_mode_rules():
    assert TableConfig.from_properties(_base_v8()).merge_mode == "EVENT_TIME_ORDERING"  # ordering set
    c = TableConfig.from_properties(_base_v8(**{"hoodie.table.precombine.field": None}))
    assert c.merge_mode == "COMMIT_TIME_ORDERING" and not c.event_time_ordering
    c = TableConfig.from_properties(_base_v8(**{
        "hoodie.record.merge.strategy.id": "ce9acb64-bde0-424c-9b91-f6ebba25356d"}))
    assert c.merge_mode == "COMMIT_TIME_ORDERING"
    with pytest.raises(UnsupportedFeatureError, match="CUSTOM"):
        TableConfig.from_properties(_base_v8(**{"hoodie.record.merge.mode": "CUSTOM"}))
    with pytest.raises(UnsupportedFeatureError, match="CUSTOM"):
        TableConfig.from_properties(_base_v8(**{
            "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000"}))
    with pytest.raises(UnsupportedFeatureError, match="partial"):
        TableConfig.from_properties(_base_v8(**{"hoodie.table.partial.update.mode": "IGNORE_DEFAULTS"}))


def test_v9_ordering_key_and_typed_partition_fields():
    c = TableConfig.from_properties(_base_v8(**{
        "hoodie.table.version": "9", "hoodie.table.precombine.field": None,
        "hoodie.table.ordering.fields": "event_ts", "hoodie.table.partition.fields": "city:simple,day:timestamp"}))
    assert c.ordering_fields == ("event_ts",) and c.precombine_field == "event_ts"
    assert c.partition_fields == ("city", "day")


@pytest.mark.parametrize("version", [8, 9])
def test_new_table_properties_v8_v9(version):
    props = new_table_properties_v8(version=version, table_name="v8_trips_8i3u1d", record_key="uuid",
                                    ordering_field="ts", event_time_field="ts", partition_field="city",
                                    schema=None)
    assert props["hoodie.table.checksum"] == "1197752875"  # spec §1.1, default.v8_trips_8i3u1d
    back = TableConfig.from_properties(loads(dumps(props)))
    assert (back.version, back.layout_version, back.merge_mode, back.ordering_fields) == (
        version, 2, "EVENT_TIME_ORDERING", ("ts",))
    key = "hoodie.table.precombine.field" if version == 8 else "hoodie.table.ordering.fields"
    other = "hoodie.table.ordering.fields" if version == 8 else "hoodie.table.precombine.field"
    assert props[key] == "ts" and other not in props
    assert props["hoodie.timeline.path"] == "timeline" and props["hoodie.table.metadata.partitions"] == ""
    assert ("hoodie.compaction.payload.class" in props) == (version == 8)


# ------------------------------------------------------------------ §8 mixed states
def _copy(src: Path, tmp_path: Path) -> Path:
    dst = tmp_path / src.name
    shutil.copytree(src, dst)
    return dst


def test_half_upgraded_states_refused(v8, tmp_path, fixture_root):
    t = _copy(v8, tmp_path)
    (t / ".hoodie/20251220210108078.deltacommit").write_bytes(b"{}")  # a layout-1 leftover in .hoodie/
    with pytest.raises(TableUpgradeIncompleteError, match="layout-1 instant files"):
        HudiTable.load(str(t))
    (t / ".hoodie/20251220210108078.deltacommit").unlink()
    (t / ".hoodie/timeline/20251220210199999.deltacommit").write_bytes(b"")  # completed without _<c>
    with pytest.raises(TableUpgradeIncompleteError, match="without its completion time"):
        HudiTable.load(str(t))
    (t / ".hoodie/timeline/20251220210199999.deltacommit").unlink()
    (t / ".hoodie/archived").mkdir()
    (t / ".hoodie/archived/.commits_.archive.1_1-0-1").write_bytes(b"x")
    with pytest.raises(TableUpgradeIncompleteError, match="archived"):
        HudiTable.load(str(t))
    shutil.rmtree(t / ".hoodie/archived")
    # a backup of the same version is a Java writer's rewrite under way (HoodieTableConfig.modify):
    # Java reads on; one of another version is an upgrade whose properties update was interrupted
    shutil.copy(t / ".hoodie/hoodie.properties", t / ".hoodie/hoodie.properties.backup")
    assert HudiTable.load(str(t)).read().num_rows == 6
    text = (t / ".hoodie/hoodie.properties").read_text()
    (t / ".hoodie/hoodie.properties.backup").write_text(
        text.replace("hoodie.table.version=8", "hoodie.table.version=6").replace(
            "hoodie.timeline.layout.version=2", "hoodie.timeline.layout.version=1"))
    with pytest.raises(TableUpgradeIncompleteError, match="backup"):
        HudiTable.load(str(t))
    (t / ".hoodie/hoodie.properties.backup").unlink()
    assert HudiTable.load(str(t)).read().num_rows == 6
    # a v6 table with instant files in .hoodie/timeline/: an upgrade running or crashed
    v6 = _copy(fixture_root / "v6_trips_8i1u", tmp_path)
    (v6 / ".hoodie/timeline").mkdir()
    (v6 / ".hoodie/timeline/20250101000000000_20250101000000001.deltacommit").write_bytes(b"")
    with pytest.raises(TableUpgradeIncompleteError, match="upgrade to table version 8/9"):
        HudiTable.load(str(v6))


# ------------------------------------------------------------------ timeline layout 2
def test_layout2_timeline_of_fixture(v8):
    tl = HudiTable.load(str(v8)).timeline
    assert tl.layout == 2
    got = [(i.timestamp, i.action.value, i.state.name, i.completion_time) for i in tl.instants]
    assert got == [  # the README's completed instants
        ("20251220210108078", "deltacommit", "COMPLETED", "20251220210109593"),
        ("20251220210117766", "indexing", "COMPLETED", "20251220210118628"),
        ("20251220210123755", "deltacommit", "COMPLETED", "20251220210124336"),
        ("20251220210125441", "deltacommit", "COMPLETED", "20251220210126002"),
        ("20251220210127080", "deltacommit", "COMPLETED", "20251220210127601"),
        ("20251220210128625", "deltacommit", "COMPLETED", "20251220210129197"),
        ("20251220210129235", "compaction", "COMPLETED", "20251220210129883"),
        ("20251220210130911", "deltacommit", "COMPLETED", "20251220210131755"),
    ]
    assert tl.instants[6].file_name() == "20251220210129235_20251220210129883.commit"
    assert tl.instants[6].path(State.REQUESTED) == ".hoodie/timeline/20251220210129235.compaction.requested"
    assert tl.completion_time("20251220210128625") == "20251220210129197"
    assert tl.is_completed_before("20251220210128625", "20251220210129235")
    assert not tl.is_completed_before("20251220210128625", "20251220210129197")
    assert tl.completion_time("20990101000000000") is None
    assert tl.completion_time("20200101000000000") == "20200101000000000"  # archived, no history
    assert tl.latest_time == "20251220210131755"


def test_layout2_names_and_states():
    names = ["20250101000000001.clustering.requested", "20250101000000001.clustering.inflight",
             "20250101000000002.deltacommit.requested", "20250101000000003.inflight",
             "20250101000000004.compaction.requested", "20250101000000004_20250101000000009.commit",
             "20250101000000005.deltacommit.requested", "20250101000000005_20250101000000006.deltacommit",
             "20250101000000005.deltacommit.inflight.crc", "history"]
    got = [(i.timestamp, i.action.value, i.state.name, i.completion_time)
           for i in tv2.parse_layout2(names, ".hoodie/timeline")]
    assert got == [
        ("20250101000000001", "clustering", "INFLIGHT", None),
        ("20250101000000002", "deltacommit", "REQUESTED", None),
        ("20250101000000003", "commit", "INFLIGHT", None),
        ("20250101000000004", "compaction", "COMPLETED", "20250101000000009"),
        ("20250101000000005", "deltacommit", "COMPLETED", "20250101000000006"),
    ]
    assert tv2.instant_file_name("20250101000000001", Action.CLUSTERING, State.COMPLETED,
                                 "20250101000000002") == "20250101000000001_20250101000000002.replacecommit"
    assert tv2.instant_file_name("20250101000000001", Action.COMPACTION, State.INFLIGHT) == \
        "20250101000000001.compaction.inflight"
    assert tv2.instant_file_name("20250101000000001", Action.COMMIT, State.INFLIGHT) == "20250101000000001.inflight"


def test_complete_instant_once_and_monotonic_time(tmp_path):
    st = Storage(str(tmp_path))
    (tmp_path / ".hoodie/timeline").mkdir(parents=True)
    (tmp_path / ".hoodie/timeline/20250101000000000.deltacommit.requested").write_bytes(b"")
    body = cm.encode_avro_commit({"partitionToWriteStats": {}, "operationType": "UPSERT"})
    n = tv2.complete_instant(st, ".hoodie/timeline", "20250101000000000", Action.DELTA_COMMIT,
                             "20250101000000005", body)
    assert n == "20250101000000000_20250101000000005.deltacommit"
    # a retry with the same bytes is a no-op (whatever completion time it chose); other bytes conflict
    assert tv2.complete_instant(st, ".hoodie/timeline", "20250101000000000", Action.DELTA_COMMIT,
                                "20250101000000007", body) == n
    with pytest.raises(InstantExistsError):
        tv2.complete_instant(st, ".hoodie/timeline", "20250101000000000", Action.DELTA_COMMIT,
                             "20250101000000008", body + b"x")
    tl = Timeline(tv2.parse_layout2(sorted(p.name for p in (tmp_path / ".hoodie/timeline").iterdir()),
                                    ".hoodie/timeline"))
    import datetime as dt

    early = dt.datetime(2025, 1, 1, tzinfo=dt.timezone.utc)  # a clock behind the completion time
    assert next_time_layout2(tl, now=early) == "20250101000000006"
    mdt = Timeline(tv2.parse_layout2(["20250101000000001_20250101000000010.deltacommit"], "m"))
    assert next_time_layout2(tl, mdt, now=early) == "20250101000000011"


def test_lsm_history_gives_completion_of_archived_instants(v9, tmp_path):
    t = _copy(v9, tmp_path)
    tdir = t / ".hoodie/timeline"
    for p in tdir.glob("20260403183858818*"):  # archive the first deltacommit
        p.unlink()
    hist = tdir / "history"
    rows = pa.table({"instantTime": ["20260403183858818"], "completionTime": ["20260403183902538"],
                     "action": ["deltacommit"], "metadata": pa.array([b""], pa.binary()),
                     "plan": pa.array([None], pa.binary()), "version": pa.array([1], pa.int32())})
    fname = "20260403183858818_20260403183902538_0.parquet"
    pq.write_table(rows, hist / fname)
    (hist / "manifest_1").write_text(json.dumps(
        {"files": [{"fileName": fname, "fileLen": (hist / fname).stat().st_size}]}, indent=2))
    (hist / "_version_").write_text("1")
    tl = HudiTable.load(str(t)).timeline
    assert tl.is_archived("20260403183858818")
    assert tl.completion_time("20260403183858818") == "20260403183902538"
    assert tl.completion_time("20260403183858000") == "20260403183858000"  # archived, not in history
    # the base files of the archived instant stay readable, as hudi-rs reads them
    _same(HudiTable.load(str(t)).read(read_optimized=True), hudi_rs_read(t, read_optimized=True))


# ------------------------------------------------------------------ commit metadata (Avro)
def _strip_java(x):
    if isinstance(x, dict):
        return {k: _strip_java(v) for k, v in x.items() if k != "avro.java.string"}
    if isinstance(x, list):
        return [_strip_java(v) for v in x]
    return x


@pytest.mark.parametrize("which", ["v8", "v9"])
def test_commit_schema_equals_fixture_and_round_trips(which, v8, v9):
    root = v8 if which == "v8" else v9
    files = sorted((root / ".hoodie/timeline").glob("*_*.*commit"))
    assert files
    for f in files:
        data = f.read_bytes()
        theirs = fastavro.reader(io.BytesIO(data)).writer_schema
        assert _strip_java(fastavro.parse_schema(theirs)) == _strip_java(
            fastavro.parse_schema(cm.COMMIT_METADATA_SCHEMA))
        meta = cm.decode_avro_commit(data)
        again = cm.decode_avro_commit(cm.encode_avro_commit(meta))
        assert again == meta
        typed = cm.CommitMetadata.from_dict(meta)
        assert typed.to_avro() == {k: meta[k] for k in typed.to_avro()}
    assert cm.decode_avro_single(b"") == {}


def test_fixture_compaction_commit_values(v8):
    t = HudiTable.load(str(v8))
    meta = cm.CommitMetadata.from_dict(t.commit_metadata("20251220210129235"))
    assert meta.compacted is True and meta.operationType == "COMPACT"
    chennai = [s for s in meta.write_stats() if s.partitionPath == "city=chennai"][0]
    assert chennai.prevBaseFile == "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_2-986-2794_20251220210108078.parquet"
    assert chennai.totalLogFilesCompacted == 2


# ------------------------------------------------------------------ slicing by completion time
def test_slices_by_completion_time(v8):
    view = HudiTable.load(str(v8)).file_system_view()
    g = [g for (p, f), g in view.groups.items() if p == "city=chennai"][0]
    assert sorted(g.base_files) == ["20251220210108078", "20251220210129235"]
    # both chennai logs completed (127601, 129197) before C=129235 was requested: old slice
    assert [lf.name.split("_", 1)[1] for lf in g.sorted_logs("20251220210108078")] == [
        "20251220210127080.log.1_0-1072-3078", "20251220210128625.log.1_0-1097-3150"]
    assert g.sorted_logs("20251220210129235") == ()
    sp = [g for (p, f), g in view.groups.items() if p == "city=sao_paulo"][0]
    assert [lf.base_instant for lf in sp.sorted_logs("20251220210129235")] == ["20251220210130911"]


def test_pending_compaction_and_uncommitted_files(v8, tmp_path):
    """Compaction C made pending again (its completed file removed): its base files vanish, the
    logs stay in the old slice; a log of a pending deltacommit is dropped; a log completed after a
    pending compaction's C joins slice C (merged into the slice before it for reads)."""
    t = _copy(v8, tmp_path)
    tdir = t / ".hoodie/timeline"
    (tdir / "20251220210129235_20251220210129883.commit").unlink()
    for p in tdir.glob("20251220210130911*"):
        p.unlink()
    part = t / "city=chennai"
    src = next(part.glob(".6e1d5cc4*20251220210128625.log.1_*"))
    # a deltacommit requested before C, completed after it (non-blocking compaction)
    (tdir / "20251220210129000.deltacommit.requested").write_bytes(b"")
    copy_name = ".6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210129000.log.1_0-1-1"
    meta = cm.decode_avro_commit((tdir / "20251220210128625_20251220210129197.deltacommit").read_bytes())
    for st in meta["partitionToWriteStats"]["city=chennai"]:
        st.update(path=f"city=chennai/{copy_name}", logFiles=[copy_name], prevCommit="20251220210129000")
    (tdir / "20251220210129000_20251220210140000.deltacommit").write_bytes(cm.encode_avro_commit(meta))
    shutil.copy(src, part / copy_name)
    # a pending one: invisible
    (tdir / "20251220210150000.deltacommit.requested").write_bytes(b"")
    shutil.copy(src, part / ".6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210150000.log.1_0-1-1")
    table = HudiTable.load(str(t))
    assert table.timeline.pending_compaction_times == {"20251220210129235"}
    g = [g for (p, f), g in table.file_system_view().groups.items() if p == "city=chennai"][0]
    assert sorted(g.base_files) == ["20251220210108078"]
    assert [lf.base_instant for lf in g.logs["20251220210129235"]] == ["20251220210129000"]
    assert "20251220210150000" not in {lf.base_instant for logs in g.logs.values() for lf in logs}
    s = table.file_system_view().latest_slice_of(g, table.timeline)
    assert s.base_instant == "20251220210108078"
    assert [lf.base_instant for lf in s.log_files] == ["20251220210127080", "20251220210128625", "20251220210129000"]
    _same(table.read(), hudi_rs_read(t))


# ------------------------------------------------------------------ reads equal hudi-rs
@pytest.mark.parametrize("which", ["v8", "v9"])
def test_reads_equal_hudi_rs(which, v8, v9):
    path = v8 if which == "v8" else v9
    t = HudiTable.load(str(path))
    expected = {"v8": (6, 6), "v9": (6, 7)}[which]  # fixtures README
    got = []
    for ro in (False, True):
        ours = t.read(read_optimized=ro)
        _same(ours, hudi_rs_read(path, read_optimized=ro))
        got.append(ours.num_rows)
    assert tuple(got) == expected
    for inst in t.timeline.completed_writes:
        for ro in (False, True):
            _same(t.read(as_of=inst.timestamp, read_optimized=ro),
                  hudi_rs_read(path, as_of=inst.timestamp, read_optimized=ro))
    for start in ["19700101000000000"] + [i.completion_time for i in t.timeline.completed_writes]:
        _same(t.read_incremental(start), hudi_rs_read(path, start=start))


def test_v8_values_from_readme(v8):
    t = HudiTable.load(str(v8))
    g = [r for r in t.read().to_pylist() if r["_hoodie_record_key"].startswith("7a84095f")]
    assert [r["fare"] for r in g] == [0.0]
    g = [r for r in t.read(read_optimized=True).to_pylist() if r["_hoodie_record_key"].startswith("7a84095f")]
    assert [r["fare"] for r in g] == [43.4]
    assert [t.read(as_of=a).num_rows for a in ("20251220210125441", "20251220210128625")] == [7, 6]


# ------------------------------------------------------------------ refusals of mutating paths
def test_writing_v8_v9_allowed_without_metadata_table(v8, v9):
    from airflow_hudi_etc.hudi.protocol.coexistence import key_generator

    for p in (v8, v9):
        t = HudiTable.load_writable(str(p))  # the fixtures' metadata tables were dropped
        assert t.config.layout_version == 2
    # v9 names only its key generator's type (TIMESTAMP): honoured, not taken for a simple one
    assert key_generator(HudiTable.load(str(v9)).config).kind == "timestamp"
    assert key_generator(HudiTable.load(str(v8)).config).kind == "simple"


def test_metadata_table_refusal_and_drop_on_v8(tmp_path):
    p = _extract(V8, tmp_path, drop_mdt=False)
    with pytest.raises(MetadataTablePresentError):
        HudiTable.load_writable(str(p))
    tdir = p / ".hoodie/timeline"
    (tdir / "20251220210140000.indexing.requested").write_bytes(b"")
    with pytest.raises(MetadataTablePresentError, match="indexing"):
        drop_metadata_table(Storage(str(p)))
    assert (p / ".hoodie/metadata").is_dir()
    (tdir / "20251220210140000.indexing.requested").unlink()
    assert drop_metadata_table(Storage(str(p)))["status"] == "dropped"
    assert not (p / ".hoodie/metadata").exists()
    assert _props(p)["hoodie.table.metadata.partitions"] == ""
    assert TableConfig.from_properties(_props(p)).version == 8


# ------------------------------------------------------------------ v8 log names, partial blocks
def test_v8_log_names():
    from airflow_hudi_etc.hudi.file_group.naming import log_file_name_v8, next_log_version_v8

    fid = "6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0"
    assert log_file_name_v8(fid, "20251220210127080", "0-1072-3078") == (
        ".6e1d5cc4-c487-487d-abbe-fe9b30b1c0cc-0_20251220210127080.log.1_0-1072-3078")  # fixture name
    names = [f".{fid}_20251220210127080.log.1_0-1-1", f".{fid}_20251220210127080.log.2_0-1-1",
             f".{fid}_20251220210128625.log.1_0-1-1", ".other-0_20251220210130000.log.4_0-1-1"]
    assert next_log_version_v8(names, fid, "20251220210127080") == 3  # roll-over within T
    assert next_log_version_v8(names, fid, "20251220210130000") == 1  # a new instant starts at 1


def test_partial_update_block_refused(v8, tmp_path):
    from airflow_hudi_etc.hudi import logformat as lf

    t = _copy(v8, tmp_path)
    log = next((t / "city=sao_paulo").glob(".8aa68f7e*20251220210130911.log.1_*"))
    blocks = lf.read_blocks(log.read_bytes())
    b = blocks[0]
    header = list(b.header) + [(lf.HeaderKey.IS_PARTIAL, "true")]
    log.write_bytes(lf.encode_block(b.block_type, header, b.content, b.footer, check_v6=False))
    table = HudiTable.load(str(t))
    assert table.read(read_optimized=True).num_rows == 6
    with pytest.raises(UnsupportedFeatureError, match="IS_PARTIAL"):
        table.read()
