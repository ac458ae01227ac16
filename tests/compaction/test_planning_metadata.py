"""The planner's metadata path: write stats decoded with msgspec (same verdicts as the json path),
event ranges merged over every stat of a log (logs appended to across deltacommits), only the
commits that can name a current log read, and the listing/name parsing shortcuts — each compared
with the general code path or with hand-written values."""

from __future__ import annotations

import gc
import json
import os
import random

import pytest

from airflow_hudi_etc.compaction import scheduling
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.lifecycle import unschedule
from airflow_hudi_etc.compaction.plans import show_plan
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.file_group import fsview
from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.timeline import commit_json as tlm
from airflow_hudi_etc.hudi.errors import InvalidTimelineError
from airflow_hudi_etc.hudi.protocol.plan import LINK_TOKEN
from airflow_hudi_etc.hudi.index.stats import SOURCE_SCAN, SOURCE_STATS, EventRange, log_event_ranges
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.timeline.active import Timeline, load_commit_metadata, load_log_write_stats
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from batches import batch

DAY = 86_400_000
T0 = 1_700_000_000_000


def _verdict(data: bytes):
    try:
        return "ok", load_log_write_stats(data, "c")
    except InvalidTimelineError as e:
        return "error", str(e)


def _fast_verdict(data: bytes):
    return _verdict(data)  # as deep in the stack as _slow_verdict's call (the depth test needs it)


def _slow_verdict(data: bytes, monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(tlm, "_STATS_DECODER", None)
        return _verdict(data)


def _log_stat(path, **kw):
    return {"fileId": "f1", "path": path, "partitionPath": "p", "prevCommit": "20240101000000000", "numWrites": 1,
            "numDeletes": 0, "fileSizeInBytes": 10, "minEventTime": 5, "maxEventTime": 7, "logFiles": [path], **kw}


def _commit(stats, **top) -> bytes:
    return json.dumps({"partitionToWriteStats": {"p": stats}, "compacted": False,
                       "extraMetadata": {"schema": '{"type": "record"}'}, "operationType": "UPSERT", **top}).encode()


GOOD = _commit([_log_stat("p/.f1_20240101000000000.log.1_0-1-0"),
                _log_stat("p/f1_0-1-0_20240101000000000.parquet", minEventTime=None)])


def test_fast_decode_is_used_and_gives_the_json_paths_values(monkeypatch):
    assert tlm._STATS_DECODER is not None, "msgspec (a dependency of Airflow) should be importable here"
    assert tlm._decode_fast(GOOD) is not None
    want = [("p/.f1_20240101000000000.log.1_0-1-0", 5, 7, 1, 0, None)]  # log stats only, written by hand
    assert load_log_write_stats(GOOD) == want
    assert _slow_verdict(GOOD, monkeypatch) == ("ok", want)


# every case: what msgspec and json could disagree on; the verdict (and message) must not change
EDGE_CASES = {
    "NaN in a skipped field (json takes it)": b'{"x": NaN, "partitionToWriteStats": {}}',
    "Infinity in a stat": _commit([_log_stat("p/.a_1.log.1_0-0-0", other=float("inf"))]),
    "invalid UTF-8 in a skipped field": b'{"x": "\xff\xfe", "partitionToWriteStats": {}}',
    "overlong UTF-8 in a skipped field": b'{"x": "\xc0\xaf"}',
    "UTF-8 surrogate bytes in a skipped field": b'{"x": "\xed\xa0\x80"}',
    "invalid UTF-8 in a path": b'{"partitionToWriteStats": {"p": [{"path": "p/.a_1.log.1\xff"}]}}',
    "non-ASCII path": '{"partitionToWriteStats": {"p": [{"path": "p\u00e9/.a_1.log.1_0-0-0"}]}}'.encode(),
    "lone surrogate escape": b'{"partitionToWriteStats": {"p": [{"path": "p/.a_1.log.1_0-0-0\\ud800"}]}}',
    "int above int64": _commit([_log_stat("p/.a_1.log.1_0-0-0", minEventTime=2**63)]),
    "int64 max": _commit([_log_stat("p/.a_1.log.1_0-0-0", minEventTime=2**63 - 1)]),
    "int below int64": _commit([_log_stat("p/.a_1.log.1_0-0-0", maxEventTime=-(2**63) - 1)]),
    "bool as int": _commit([_log_stat("p/.a_1.log.1_0-0-0", numWrites=True)]),
    "float as int": _commit([_log_stat("p/.a_1.log.1_0-0-0", minEventTime=5.0)]),
    "exponent as int": b'{"partitionToWriteStats": {"p": [{"path": "p/.a_1.log.1_0-0-0", "minEventTime": 1e3}]}}',
    "int as string": _commit([_log_stat("p/.a_1.log.1_0-0-0", fileId=5)]),
    "unchecked field of any type": _commit([_log_stat("p/.a_1.log.1_0-0-0", totalLogBlocks="x", cdcStats=[1])]),
    "logFiles not strings": _commit([_log_stat("p/.a_1.log.1_0-0-0", logFiles=[1])]),
    "null write stat": b'{"partitionToWriteStats": {"p": [null]}}',
    "stats not a list": b'{"partitionToWriteStats": {"p": {}}}',
    "partitionToWriteStats empty list (falsy: no stats)": b'{"partitionToWriteStats": []}',
    "partitionToWriteStats a string": b'{"partitionToWriteStats": "x"}',
    "extraMetadata a list (falsy)": b'{"extraMetadata": []}',
    "extraMetadata not strings": b'{"extraMetadata": {"a": 1}}',
    "schema not JSON": b'{"extraMetadata": {"schema": "{"}}',
    "schema not a record": b'{"extraMetadata": {"schema": "[1]"}}',
    "replaced file ids malformed": b'{"partitionToReplaceFileIds": {"p": [1]}}',
    "duplicate keys: the last wins": b'{"partitionToWriteStats": {"p": [{"path": "p/.a_1.log.1_0-0-0", '
                                     b'"minEventTime": "x", "minEventTime": 3}]}}',
    "duplicate keys: a bad last one": b'{"partitionToWriteStats": {"p": [{"path": "p/.a_1.log.1_0-0-0", '
                                      b'"minEventTime": 3, "minEventTime": "x"}]}}',
    "top-level array": b"[]",
    "empty": b"",
    "whitespace": b" \n\t",
    "trailing data": GOOD + b" x",
    "byte order mark": b"\xef\xbb\xbf" + GOOD,
    "control character in a string": b'{"x": "a\x01b"}',
    "truncated": GOOD[:-3],
}


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_fast_decode_gives_the_json_paths_verdict(case, monkeypatch):
    data = EDGE_CASES[case]
    assert _fast_verdict(data) == _slow_verdict(data, monkeypatch)


def test_nesting_depth_verdicts_agree_at_the_recursion_limit(monkeypatch):
    """msgspec and json both count JSON nesting against the recursion limit; json runs a few
    frames deeper: the fast path must never accept a nesting json refuses."""
    seen = set()
    for where in ("top", "stat"):
        for depth in range(sys_limit() - 60, sys_limit() + 10):
            nest = b"[" * depth + b"1" + b"]" * depth
            data = (b'{"x": ' + nest + b', "partitionToWriteStats": {}}' if where == "top" else
                    b'{"partitionToWriteStats": {"p": [{"path": "p/.a_1.log.1_0-0-0", "y": ' + nest + b"}]}}")
            v = _fast_verdict(data)
            assert v == _slow_verdict(data, monkeypatch), (where, depth)
            seen.add(v[0])
    assert seen == {"ok", "error"}  # the boundary was crossed


def sys_limit():
    import sys

    return sys.getrecursionlimit()


def _mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.choice((1, 1, 2, 3))):
        i = rng.randrange(len(b))
        kind = rng.random()
        if kind < 0.4:
            b[i] = rng.choice(b'{}[]",:0123456789.-eE tnfalsuNI\\\xff\xc3\xa9x')
        elif kind < 0.6:
            del b[i]
        elif kind < 0.8:
            b[i:i] = rng.choice((b'"', b"1", b"-", b"null", b"true", b"1.5", b"NaN", b'\\u00e9', b"\xe2\x82", b"[", b"}"))
        else:
            j = rng.randrange(len(b))
            b[i:i] = b[j:j + rng.randrange(1, 30)]
    return bytes(b)


def test_fast_decode_agrees_with_json_on_damaged_commits(tmp_path, monkeypatch):
    """Differential fuzz: byte mutations of real commit metadata (our writer's deltacommits)."""
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time",
               partition_field="region")
    rows = [{"key": f"k{i}", "ts": 1, "event_time": T0 + i, "value": 1.0, "note": "n", "region": "ab"[i % 2]}
            for i in range(6)]
    write_batch(str(path), batch(rows))
    write_batch(str(path), batch([{**r, "ts": 2, "event_time": T0 + DAY} for r in rows[:4]]))
    commits = [p.read_bytes() for p in sorted((path / ".hoodie").glob("*.deltacommit"))]
    rng = random.Random(11)
    outcomes = {"ok": 0, "error": 0}
    for i in range(1500):
        data = _mutate(rng, rng.choice(commits))
        v = _fast_verdict(data)
        assert v == _slow_verdict(data, monkeypatch), f"case {i}: {data[:300]!r}"
        outcomes[v[0]] += 1
    assert outcomes["ok"] > 100 and outcomes["error"] > 100, outcomes


# ------------------------------------------------------------------ event ranges over appended logs
class _Table:
    """What log_event_ranges reads: a timeline and the completed instants' bytes."""

    def __init__(self, tmp_path, commits: dict[str, bytes]):
        hoodie = tmp_path / ".hoodie"
        hoodie.mkdir(parents=True)
        for ts, data in commits.items():
            (hoodie / f"{ts}.deltacommit").write_bytes(data)
        self.storage = Storage(str(tmp_path))
        self.timeline = Timeline.load(self.storage)


LOG = "p/.f1_20240101000000000.log.1_0-1-0"


def test_appended_log_gets_min_of_mins_and_max_of_maxes(tmp_path):
    other = "p/.f2_20240101000000000.log.1_0-1-0"
    t = _Table(tmp_path, {
        "20240102000000000": _commit([_log_stat(LOG, minEventTime=50, maxEventTime=60),
                                      _log_stat(other, minEventTime=1, maxEventTime=2)]),
        "20240103000000000": _commit([_log_stat(LOG, minEventTime=10, maxEventTime=20)]),  # an append
        "20240104000000000": _commit([_log_stat(LOG, minEventTime=30, maxEventTime=90)]),  # another
    })
    got = log_event_ranges(t)
    assert got == {LOG: EventRange(10, 90, SOURCE_STATS), other: EventRange(1, 2, SOURCE_STATS)}


@pytest.mark.parametrize("second,want", [
    # an append that wrote records without recording event times: the log must be scanned
    (dict(minEventTime=None, maxEventTime=None, numWrites=3), None),
    (dict(minEventTime=None, maxEventTime=None, numWrites=0, numDeletes=0), None),
    # a delete-only append without event times counts, with no range of its own
    (dict(minEventTime=None, maxEventTime=None, numWrites=0, numDeletes=2), EventRange(50, 60, SOURCE_STATS)),
    # a range with only a max
    (dict(minEventTime=70, maxEventTime=None), EventRange(50, 60, SOURCE_STATS)),
])
def test_appended_log_without_event_times(tmp_path, second, want):
    t = _Table(tmp_path, {
        "20240102000000000": _commit([_log_stat(LOG, minEventTime=50, maxEventTime=60)]),
        "20240103000000000": _commit([_log_stat(LOG, **second)]),
    })
    assert log_event_ranges(t) == {LOG: want}


def test_delete_only_logs_have_no_range_and_merge(tmp_path):
    dels = dict(minEventTime=None, maxEventTime=None, numWrites=0, numDeletes=2)
    t = _Table(tmp_path, {"20240102000000000": _commit([_log_stat(LOG, **dels)]),
                          "20240103000000000": _commit([_log_stat(LOG, **dels)])})
    assert log_event_ranges(t) == {LOG: EventRange(None, None, SOURCE_STATS)}


def test_since_skips_older_commits_comparing_14_and_17_digit_instants(tmp_path):
    t = _Table(tmp_path, {
        "20240101000000000": b"{ damaged",  # before `since`: never read
        "20240102120000": _commit([_log_stat(LOG, minEventTime=1, maxEventTime=2)]),  # 14 digits, same second
        "20240102120000500": _commit([_log_stat(LOG, minEventTime=7, maxEventTime=9)]),
    })
    assert log_event_ranges(t, since="20240102120000000") == {LOG: EventRange(1, 9, SOURCE_STATS)}
    # 17 against 17 digits: exact; 14 against 17: the same second is kept
    assert log_event_ranges(t, since="20240102120000999") == {LOG: EventRange(1, 2, SOURCE_STATS)}
    assert log_event_ranges(t, since="20240102120000") == {LOG: EventRange(1, 9, SOURCE_STATS)}
    assert log_event_ranges(t, since="20240102120001000") == {}
    with pytest.raises(InvalidTimelineError, match="20240101000000000"):
        log_event_ranges(t)


def _write(path, rows):
    write_batch(str(path), batch(rows))
    return HudiTable.load(str(path)).timeline.completed_writes[-1].timestamp


def test_schedule_uses_every_stat_of_an_appended_log(tmp_path):
    """Hudi on HDFS appends a deltacommit's block to the slice's latest log: two stats, one path.
    The log holds day-1 records (first stat) and day-5 records (second): with a threshold on day 3
    it must be compacted — the last stat alone (min day 5) would leave it out."""
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time")
    row = {"key": "k1", "ts": 1, "event_time": T0, "value": 1.0, "note": "n", "region": "a"}
    _write(path, [row])
    first = _write(path, [{**row, "ts": 2, "event_time": T0 + DAY}])
    second = _write(path, [{**row, "key": "k2", "ts": 2, "event_time": T0 + 5 * DAY}])  # a new file group
    meta1 = json.loads((path / ".hoodie" / f"{first}.deltacommit").read_text())
    (log_stat,) = [s for v in meta1["partitionToWriteStats"].values() for s in v]
    assert ".log." in log_stat["path"]
    # make the second deltacommit an append to the first one's log (stats only: the scan is not used)
    f2 = path / ".hoodie" / f"{second}.deltacommit"
    meta2 = json.loads(f2.read_text())
    meta2["partitionToWriteStats"][log_stat["partitionPath"]].append(
        {**log_stat, "prevCommit": log_stat["prevCommit"], "minEventTime": T0 + 5 * DAY, "maxEventTime": T0 + 5 * DAY})
    f2.write_text(json.dumps(meta2))
    res = schedule(str(path), data_latency="1d", compaction_time=svc_iso(T0 + 4 * DAY))
    assert res.instant, res
    plan = show_plan(str(path), instant=res.instant)
    compacted = {n for op in plan["operations"] for n in op["compact_logs"]}
    assert os.path.basename(log_stat["path"]) in compacted
    assert plan["extra_metadata"]["hoodie.etc.event.time.source"] == SOURCE_STATS


def svc_iso(ms):
    import datetime as dt

    return dt.datetime.fromtimestamp(ms / 1000, dt.timezone.utc).isoformat()


def test_schedule_reads_no_commit_before_the_oldest_log_base_instant(tmp_path):
    """After a full compaction every log names the compaction's instant: the deltacommits before
    it cannot have written one, and are not read (a damaged one does not stop planning)."""
    path = tmp_path / "t"
    init_table(str(path), table_name="t", record_key="key", precombine_field="ts", event_time_field="event_time")
    row = {"key": "k1", "ts": 1, "event_time": T0, "value": 1.0, "note": "n", "region": "a"}
    old = _write(path, [row])
    _write(path, [{**row, "ts": 2, "event_time": T0 + DAY}])
    res = schedule(str(path), data_latency="1h", compaction_time=svc_iso(T0 + 3 * DAY), strategy="compact-all")
    execute(str(path))
    _write(path, [{**row, "ts": 3, "event_time": T0 + 2 * DAY}])  # a log in slice res.instant
    (path / ".hoodie" / f"{old}.deltacommit").write_bytes(b"{ damaged")
    again = schedule(str(path), data_latency="1h", compaction_time=svc_iso(T0 + 4 * DAY))
    assert again.instant and again.operations == 1
    # a damaged commit at or after that instant is still refused, nothing written
    last = HudiTable.load(str(path)).timeline.completed_writes[-1].timestamp
    unschedule(str(path), instant=again.instant)
    (path / ".hoodie" / f"{last}.deltacommit").write_bytes(b"{ damaged")
    before = sorted(os.listdir(path / ".hoodie"))
    with pytest.raises(InvalidTimelineError):
        schedule(str(path), data_latency="1h", compaction_time=svc_iso(T0 + 4 * DAY))
    assert sorted(os.listdir(path / ".hoodie")) == before


def test_link_operation_names_are_format_log_file_names():
    logs = [fsview.LogFile("p", f".x_1.log.{v}_0-1-0", "x", "1", v, "0-1-0") for v in (3, 4, 5)]
    for fid in ("f1", "abc-DEF-0", "f1\n"):
        for first in (1, 2):
            got = scheduling._link_ops(fid, "20991231000000000", first, logs)
            assert [(x.link, x.target) for x in got] == [
                (lf.format_log_file_name(fid, "20991231000000000", first + i, LINK_TOKEN), x.name)
                for i, x in enumerate(logs)]
    for fid in ("a_b", "a.b", "", "é"):
        with pytest.raises(ValueError, match="file id"):
            scheduling._link_ops(fid, "20991231000000000", 1, logs)
    assert scheduling._link_ops("a_b", "20991231000000000", 1, []) == ()


def test_gc_pause_restores_the_collector_as_it_was():
    assert gc.isenabled()
    with scheduling._gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with scheduling._gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
    with pytest.raises(RuntimeError):
        with scheduling._gc_paused():
            raise RuntimeError
    assert gc.isenabled()
