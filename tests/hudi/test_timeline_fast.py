"""The lazy/fast timeline parse must agree with the reference parse (one regex per file name)."""

from __future__ import annotations

import random

from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.timeline.active import Action, Instant, State, Timeline, _GROUP, parse_instant_file


def _reference(names):
    names = frozenset(names)
    groups = {}
    for n in names:
        inst = parse_instant_file(n)
        if inst is not None:
            groups.setdefault((inst.timestamp, _GROUP.get(inst.action, inst.action)), []).append(inst)
    best = []
    for key, found in groups.items():
        state = max(i.state for i in found)
        special = [i.action for i in found if i.action in _GROUP]
        action = special[0] if special else max(found, key=lambda i: i.state).action
        best.append(Instant(key[0], action, state))
    return tuple(sorted(best))


def _random_names(rng, n):
    stamps = [f"2025010100{rng.randrange(10**7):07d}" for _ in range(n // 3 + 1)]
    stamps += [f"2025010100{rng.randrange(10**4):04d}" for _ in range(3)]  # 14-digit
    acts = [a.value for a in Action] + ["bogus", "commitx"]
    out = []
    for _ in range(n):
        ts = rng.choice(stamps)
        a = rng.choice(acts)
        suffix = rng.choice(["", ".requested", ".inflight", ".other"])
        name = f"{ts}.{a}{suffix}"
        r = rng.random()
        if r < 0.03:
            name = f"{ts}.inflight"
        elif r < 0.05:
            name = name + "\n"
        elif r < 0.07:
            name = "x" + name
        elif r < 0.08:
            name = "hoodie.properties"
        elif r < 0.10:  # an action twice in one name: the stamp after the first one is no prefix
            name = f"x.{a}{ts}.{a}{suffix}"
        elif r < 0.11:
            name = f"{ts}.{a}.{a}{suffix}"
        out.append(name)
    return out


def test_fast_parse_matches_reference():
    rng = random.Random(7)
    for trial in range(300):
        names = _random_names(rng, rng.randrange(0, 60))
        ref = _reference(names)
        for order in (names, list(reversed(names))):
            done = tuple(i for i in ref if i.action is Action.COMPACTION and i.is_completed)
            # the poke's path: newest completed compaction first, before anything else is parsed
            tl0 = Timeline.from_file_names(order)
            assert tuple(tl0.completed_compactions_newest_first()) == done[::-1]
            assert next(Timeline.from_file_names(order).completed_compactions_newest_first(), None) == \
                (done[-1] if done else None)
            tl = Timeline.from_file_names(order)
            assert tl.pending_compactions == tuple(i for i in ref if i.action is Action.COMPACTION and i.is_pending)
            assert tl.completed_compactions == tuple(i for i in ref if i.action is Action.COMPACTION and i.is_completed)
            assert tl.pending_replaces == tuple(i for i in ref if i.is_pending and i.action is Action.REPLACE_COMMIT)
            assert tl.instants == ref
            assert tl.files == frozenset(names)
            tl2 = Timeline.from_file_names(order)
            _ = tl2.instants  # full parse first, then the filters
            assert tl2.pending_compactions == tl.pending_compactions
            assert tl2.completed_compactions == tl.completed_compactions
            assert tl2.pending_replaces == tl.pending_replaces
            assert tuple(tl2.completed_compactions_newest_first()) == done[::-1]
            assert tl2 == tl and Timeline(ref, frozenset(names)) == tl


def test_list_names_matches_list(tmp_path):
    st = Storage(str(tmp_path))
    (tmp_path / "a").write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hudi-etc-tmp-zzz").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    (tmp_path / "dangling").symlink_to(tmp_path / "nope")
    assert sorted(st.list_names()) == sorted(f.name for f in st.list())
    assert sorted(st.list_names(include_temp=True)) == sorted(f.name for f in st.list(include_temp=True))
    assert st.list_names("missing") == []


def test_an_action_twice_in_one_name_is_no_instant():
    """The lazy search splits the names at ".compaction": the text between two of them in one
    name is not a timestamp prefix (the full parse takes no such name either)."""
    names = ["x.compaction12345678901234567.compaction.requested", "20250101000000000.deltacommit",
             "20250101000000001.compaction.compaction.inflight"]
    tl = Timeline.from_file_names(names)
    assert tl.pending_compactions == () and tl.completed_compactions == ()
    assert Timeline.from_file_names(names).instants == _reference(names)


def test_list_entry_names_lists_files_and_folders_in_one_call(tmp_path):
    st = Storage(str(tmp_path))
    (tmp_path / "a").write_text("x")
    (tmp_path / "sub").mkdir()
    (tmp_path / ".hudi-etc-tmp-zzz").write_text("x")
    (tmp_path / "link").symlink_to(tmp_path / "a")
    assert sorted(st.list_entry_names()) == ["a", "link", "sub"]
    assert sorted(st.list_entry_names(include_temp=True)) == [".hudi-etc-tmp-zzz", "a", "link", "sub"]
    assert st.list_entry_names("missing") == []


def test_timeline_load_ignores_hoodie_folders(tmp_path):
    hoodie = tmp_path / ".hoodie"
    for d in (".aux", ".temp", "archived", "metadata", ".schema"):
        (hoodie / d).mkdir(parents=True)
    names = ["20250101000000000.deltacommit.requested", "20250101000000000.deltacommit.inflight",
             "20250101000000000.deltacommit", "20250101000000001.compaction.requested", "hoodie.properties"]
    for n in names:
        (hoodie / n).write_text("")
    tl = Timeline.load(Storage(str(tmp_path)))
    assert tl.instants == _reference(names)
    assert tl.pending_compactions == (Instant("20250101000000001", Action.COMPACTION, State.REQUESTED),)
