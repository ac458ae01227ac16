"""The file-system view's shortcuts for big listings, compared with the general code paths
and a hand-written model: one listing per folder, names matched without intermediate objects,
Hudi's log order, the latest slices of one-slice groups."""

from __future__ import annotations

import os
import random
import string

from airflow_hudi_etc.hudi.file_group import fsview
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.timeline.active import Action, Instant, State, Timeline


def _random_name(rng: random.Random) -> str:
    fid = rng.choice(["f1", "abc-DEF-09", "a_b", "a.b", "é", "", "x" * 70, "f1\n"])
    inst = rng.choice(["20240101000000000", "1", "", "2024_01", "12.3", "٣"])
    ext = rng.choice(["log", "log", "archive", "lo"])
    ver = rng.choice(["1", "12", "0", "01", "", "x", "١"])
    tok = rng.choice(["_0-1-0", "_12-345-6789", "_1-0-1", "", "_1-2", "_a-b-c", "_1-2-3.cdc", "_1-2-3xcdc",
                      "_1-2-3junk", "_1-2-3\n", "_1-2-3_4-5-6"])
    name = f".{fid}_{inst}.{ext}.{ver}{tok}"
    kind = rng.random()
    if kind < 0.15:
        name = f"{fid}_{rng.choice(['0-1-0', 'x'])}_{inst}.parquet" + rng.choice(["", "", "\n", ".x"])
    elif kind < 0.3:
        name = "".join(rng.choice(string.ascii_letters + "._-0123456789\n") for _ in range(rng.randrange(1, 40)))
        if rng.random() < 0.5:
            name = "." + name
    return name


def test_partition_scan_parses_names_as_the_name_parsers_do():
    rng = random.Random(5)
    names = list(dict.fromkeys(_random_name(rng) for _ in range(4000)))
    names += [".f1_20240101000000000.log.1_0-1-0", ".f1_2024.log.1_0-1-0.log.2_0-1-0", ".f_1_2.log.3_4-5-6",
              ".f1_2.log.1_0-1-0.cdc", ".f1_2.archive.1_0-1-0", "f1_0-1-0_20240101000000000.parquet"]
    links = {n for n in names if rng.random() < 0.1}
    for partition in ("", "p", "a/b", "p/"):
        bases, logs = fsview._scan(partition, names, None, links)
        want_b = [b for n in names if not n.startswith(".") and (b := fsview.parse_base_file_name(n, partition))]
        want_l = [x for n in names if (x := fsview.as_log_file(partition, n, -1, n in links)) is not None]
        assert bases == want_b
        assert logs == want_l
        assert [x.path for x in bases + logs] == [fsview._join(partition, x.name) if partition else x.name
                                                  for x in want_b + want_l]
        assert [x.is_link for x in logs] == [x.name in links for x in want_l]
    assert any(x.name == ".f_1_2.log.3_4-5-6" and x.file_id == "f_1" for x in logs)


def test_slice_log_order_is_hudis(tmp_path):
    rng = random.Random(2)
    for _ in range(300):
        g = fsview.FileGroup("p", "f")
        logs = [fsview.LogFile("p", f"n{i}", "f", "1", rng.choice((1, 2, 3, 10)),
                               rng.choice((None, "0-1-0", "1-0-1", "10-0-1")))
                for i in range(rng.randrange(1, 7))]
        g.logs["1"] = logs
        assert list(g.sorted_logs("1")) == sorted(logs, key=lambda x: x.sort_key)


def test_local_listings_from_one_scandir(tmp_path):
    st = Storage(str(tmp_path))
    p = tmp_path / "p"
    (p / "sub").mkdir(parents=True)
    (p / "sub2").mkdir()
    for n in ("a", ".b", "c.parquet"):
        (p / n).write_bytes(b"x" * 3)
    (p / ".hudi-etc-tmp-123-a").write_bytes(b"")
    os.symlink("a", p / "link")
    os.symlink("missing", p / "dangling")
    os.symlink("sub", p / "dirlink")
    names, links, dirs = st.list_names_and_dirs("p")
    assert sorted(names) == sorted(st.list_names("p")) == sorted(["a", ".b", "c.parquet", "link", "dangling", "dirlink"])
    assert links == {"link", "dangling", "dirlink"}
    assert dirs == st.list_dirs("p") == ["p/sub", "p/sub2"]
    for sizes in (True, False):
        files, dirs2 = st.list_files_and_dirs("p", sizes=sizes)
        assert sorted(files, key=lambda f: f.path) == sorted(st.list("p", sizes=sizes), key=lambda f: f.path)
        assert dirs2 == dirs
    assert st.list_names_and_dirs("missing") == ([], set(), [])
    assert st.list_files_and_dirs("missing") == ([], [])


def _model_latest(groups: dict, tl: Timeline) -> list[tuple]:
    """Hudi's latest merged slices, written out: per group (in key order) the slices whose
    instant is on or before the last instant and committed (or a pending compaction's), a base
    file only if committed, empty slices dropped unless a pending compaction's; the latest one,
    merged with the one before when it is a pending compaction's."""
    last = max((i.timestamp for i in tl.instants), default=None)
    done = {i.timestamp for i in tl.instants if i.is_completed and i.action in (
        Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION, Action.LOG_COMPACTION)}
    first = min((i.timestamp for i in tl.instants if i.action in (
        Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT, Action.COMPACTION, Action.LOG_COMPACTION)), default=None)
    pending = {i.timestamp for i in tl.instants if i.action is Action.COMPACTION and i.is_pending}

    def committed(ts):
        return ts in done or (first is not None and ts < first)

    out = []
    for key in sorted(groups):
        g = groups[key]
        vis = []
        for inst in sorted(set(g.base_files) | set(g.logs)):
            if last is None or inst > last or not (committed(inst) or inst in pending):
                continue
            b = g.base_files.get(inst)
            b = b if b is not None and committed(b.instant) else None
            logs = sorted(g.logs.get(inst, []), key=lambda x: x.sort_key)
            if b is None and not logs and inst not in pending:
                continue
            vis.append((inst, b, logs))
        if not vis:
            continue
        inst, b, logs = vis[-1]
        if inst in pending and len(vis) > 1:
            pinst, pb, plogs = vis[-2]
            inst, b, logs = pinst, pb, plogs + logs
        if b is not None or logs:
            out.append((key, inst, b.name if b else None, [x.name for x in logs]))
    return out


def test_latest_slices_follow_the_model():
    rng = random.Random(9)
    stamps = [f"2025010100000000{i}" for i in range(8)]
    for _ in range(400):
        instants = []
        for ts in stamps[: rng.randrange(1, 8)]:
            act = rng.choice((Action.DELTA_COMMIT, Action.DELTA_COMMIT, Action.COMPACTION, Action.COMMIT))
            st = rng.choice((State.COMPLETED, State.COMPLETED, State.REQUESTED, State.INFLIGHT))
            instants.append(Instant(ts, act, st))
        tl = Timeline(instants)
        groups = {}
        for gi in range(rng.randrange(1, 6)):
            g = fsview.FileGroup("p", f"f{gi}")
            for inst in rng.sample(stamps, rng.randrange(0, 3)):
                g.base_files[inst] = fsview.BaseFile("p", f"f{gi}_0-1-0_{inst}.parquet", f"f{gi}", "0-1-0", inst)
            for inst in rng.sample(stamps, rng.randrange(0, 3)):
                g.logs[inst] = [fsview.LogFile("p", f".f{gi}_{inst}.log.{v}_{t}", f"f{gi}", inst, v, t)
                                for v, t in {(rng.choice((1, 2, 3)), rng.choice(("0-1-0", "1-0-1"))) for _ in range(3)}]
            if g.base_files or g.logs:
                groups[("p", f"f{gi}")] = g
        view = fsview.FileSystemView(tl, groups, ("p",))
        got = [((s.partition, s.file_id), s.base_instant, s.base_file.name if s.base_file else None,
                [x.name for x in s.log_files]) for s in view.latest_slices()]
        assert got == _model_latest(groups, tl)


def test_a_listing_from_the_metadata_table_replaces_the_storage_listing(tmp_path):
    """``listed`` (the metadata table's {partition: {name: size}}) is the whole listing: a file
    only on storage (a leftover no commit wrote) is not in the view, a file only in the listing
    is, with its size; a partition asked for that the listing lacks is listed from storage."""
    st = Storage(str(tmp_path))
    for rel in ("a/.hoodie_partition_metadata", "a/f1_0-1-0_20240101000000001.parquet", "a/.f1_20240101000000001.log.2_0-1-0",
                "b/.hoodie_partition_metadata", "b/f2_0-1-0_20240101000000001.parquet"):
        os.makedirs(os.path.dirname(tmp_path / rel), exist_ok=True)
        (tmp_path / rel).write_bytes(b"x")
    tl = Timeline.from_file_names([Instant("20240101000000001", Action.DELTA_COMMIT, State.COMPLETED).file_name(),
                                   Instant("20240101000000002", Action.DELTA_COMMIT, State.COMPLETED).file_name()])
    listed = {"a": {"f1_0-1-0_20240101000000001.parquet": 40, ".f1_20240101000000001.log.1_0-1-0": 7}}
    view = fsview.FileSystemView.load(st, tl, listed=listed)
    got = {(s.partition, s.file_id): (s.base_file.name, s.base_file.size, [(x.name, x.size) for x in s.log_files])
           for s in view.latest_slices()}
    assert got == {("a", "f1"): ("f1_0-1-0_20240101000000001.parquet", 40, [(".f1_20240101000000001.log.1_0-1-0", 7)])}
    view = fsview.FileSystemView.load(st, tl, ["a", "b"], listed=listed)
    assert sorted((s.partition, s.file_id) for s in view.latest_slices()) == [("a", "f1"), ("b", "f2")]
