"""Fuzzing: damaged log files, compaction plans, commit JSON and ``hoodie.properties``.

Seeded mutations of real files written by this product (bit flips, byte runs, truncation,
insertion, deletion, duplicated stretches; for logs also wrong block/header/content lengths and
huge counts; for plans and commits also structural edits: values of the wrong type, unsafe
paths, changed writer schemas). Every case must end in one of these outcome classes:

* ``typed``: a :class:`~airflow_hudi_etc.hudi.errors.HudiEtcError` subclass;
* ``skipped-corrupt``: (logs) the damaged stretch read as a ``CorruptBlock``, as Hudi skips it;
* ``ok``: parsed; for plans, every path it names then stays inside its partition.

Any other exception fails the test (with the case's seed and mutation), and so does a case that
outlives its time budget (a watchdog alarm, not a timing assertion: the budget is 100x a
normal case). Length and count fields must not drive allocation: the huge-length cases run in
a child process with a 2 GiB address-space limit and report their tracemalloc peak. Table-level
cases (read, status, validate, schedule on a table with one damaged file) must also leave the
table's files exactly as they were, unless schedule succeeded in making a plan.

Counts per outcome class are printed (``pytest -s``); CI runs a few hundred cases per target,
``-m slow`` more than 10,000 in all.
"""

from __future__ import annotations

import copy
import io
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import fastavro
import pytest

from airflow_hudi_etc.hudi.protocol import plan as plan_mod
from airflow_hudi_etc.compaction.metrics import table_metrics
from airflow_hudi_etc.hudi.protocol.plan import CompactionPlan
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.validate import validate
from airflow_hudi_etc.hudi.logformat import avro_arrow
from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.errors import HudiEtcError
from airflow_hudi_etc.hudi.file_group.merge import BlockDecoder
from airflow_hudi_etc.hudi.config.properties import PROPERTIES_FILE, TableConfig, load_table_config, loads
from airflow_hudi_etc.hudi.storage import safe_relpath
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.timeline.active import iter_write_stats, load_commit_metadata
from airflow_hudi_etc.hudi.write.writer import write_batch
from scenario import COMPACTION_TIME, LATENCY, REPO, build
from tests_digest import tree_digest
from batches import batch

SLOW = pytest.mark.slow
BUDGET_S = 20  # per case; a normal case takes milliseconds


class CaseTimeout(BaseException):
    """Raised by the watchdog; a BaseException so that no ``except Exception`` swallows it."""


@contextmanager
def budget(what: str, seconds: float = BUDGET_S):
    def fire(*_):
        raise CaseTimeout(f"{what}: no result within {seconds}s (hang?)")

    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def classify(fn, what: str) -> str:
    with budget(what):
        try:
            return fn() or "ok"
        except HudiEtcError:
            return "typed"
        except CaseTimeout:
            raise
        except Exception as e:  # noqa: BLE001 - the test's point: report the case
            raise AssertionError(f"{what}: untyped {type(e).__name__}: {e}") from e


def report(name: str, counts: Counter) -> None:
    print(f"\nfuzz {name}: {sum(counts.values())} cases " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items())))


# ------------------------------------------------------------------ the corpus: real files
@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A table after a partial compaction with links and a write into slice C, one pending
    exact-split plan on a copy of it, and the raw bytes of its files."""
    sc = build(tmp_path_factory.mktemp("fz"), 4, exact=False, link_mode="symlink")
    rows = sc.w1_rows()
    write_batch(str(sc.path), batch(rows))
    res = schedule(str(sc.path), data_latency=LATENCY, compaction_time=COMPACTION_TIME, link_mode="symlink")
    write_batch(str(sc.path), batch(sc.w2_rows()))
    execute(str(sc.path))
    from airflow_hudi_etc.hudi.write.writer import write_batch as wb
    import pyarrow as pa

    wb(str(sc.path), pa.table({"key": ["k00001", "k00004"], "region": ["b", "b"]}), operation="delete")
    pending = sc.path.parent / "pending"
    shutil.copytree(sc.path, pending, symlinks=True)
    later = schedule(str(pending), data_latency="1h", compaction_time="2023-11-20T00:00:00Z", link_mode="copy",
                     exact_split=True)
    assert later.instant
    hoodie = sc.path / ".hoodie"
    logs = sorted({p.resolve() for p in sc.path.rglob(".*.log.*")})
    logs = [p.read_bytes() for p in logs]
    assert any(lf.read_blocks(b)[0].block_type == lf.BlockType.DELETE for b in logs)
    # multi-block files as Hudi appends them: data, delete, rollback command
    multi = logs[0] + logs[-1] + lf.encode_rollback_block("20990101000000000", "20990101000000000")
    return {
        "table": sc.path,
        "pending": pending,
        "pending_plan": pending / ".hoodie" / f"{later.instant}.compaction.requested",
        "logs": logs + [multi],
        "plans": [(hoodie / f"{res.instant}.compaction.requested").read_bytes(),
                  (pending / ".hoodie" / f"{later.instant}.compaction.requested").read_bytes()],
        "commits": {p.name: p.read_bytes() for p in sorted(hoodie.glob("*.deltacommit"))[-3:]}
        | {f"{res.instant}.commit": (hoodie / f"{res.instant}.commit").read_bytes()},
        "props": (hoodie / "hoodie.properties").read_bytes(),
        "schema": HudiTable.load(str(sc.path)).arrow_schema,
    }


# ------------------------------------------------------------------ byte mutations
EVIL_INTS = (0, 1, -1, 7, 8, 2**31 - 1, 2**31, 2**32 + 5, 2**62, -(2**63), 2**63 - 1)


def mutate_bytes(rng: random.Random, data: bytes) -> tuple[bytes, list]:
    b = bytearray(data)
    desc = []
    for _ in range(rng.randint(1, 3)):
        kind = rng.choice(("flip", "flip", "byte", "truncate", "insert", "delete", "dup", "run"))
        at = rng.randrange(len(b) + 1) if b else 0
        if kind == "flip" and at < len(b):
            bit = 1 << rng.randrange(8)
            b[at] ^= bit
            desc.append((kind, at, bit))
        elif kind == "byte" and at < len(b):
            b[at] = rng.randrange(256)
            desc.append((kind, at, b[at]))
        elif kind == "truncate":
            del b[at:]
            desc.append((kind, at))
        elif kind == "insert":
            junk = bytes(rng.randrange(256) for _ in range(rng.randint(1, 16)))
            b[at:at] = junk
            desc.append((kind, at, junk.hex()))
        elif kind == "delete":
            n = rng.randint(1, 32)
            del b[at : at + n]
            desc.append((kind, at, n))
        elif kind == "dup" and b:
            n = rng.randint(1, 64)
            b[at:at] = b[max(0, at - n) : at]
            desc.append((kind, at, n))
        elif kind == "run":
            n = rng.randint(1, 12)
            v = rng.choice((0x00, 0xFF, 0x7F, 0x80))
            b[at : at + n] = bytes([v]) * n
            desc.append((kind, at, n, v))
    return bytes(b), desc


# ------------------------------------------------------------------ log files
def _block_fields(data: bytes, pos: int) -> dict[str, tuple[int, str]]:
    """Offsets of a sound block's length and count fields (for targeted damage)."""
    out = {"block length": (pos + 6, ">q"), "format version": (pos + 14, ">i"), "block type": (pos + 18, ">i"),
           "header count": (pos + 22, ">i")}
    at = pos + 26
    (count,) = struct.unpack_from(">i", data, pos + 22)
    for i in range(count):
        out[f"header {i} key"] = (at, ">i")
        out[f"header {i} length"] = (at + 4, ">i")
        (n,) = struct.unpack_from(">i", data, at + 4)
        at += 8 + n
    out["content length"] = (at, ">q")
    content = at + 8
    (clen,) = struct.unpack_from(">q", data, at)
    (btype,) = struct.unpack_from(">i", data, pos + 18)
    if btype in (lf.BlockType.AVRO_DATA, lf.BlockType.DELETE) and clen >= 8:
        out["content version"] = (content, ">i")
        out["record count / content bytes"] = (content + 4, ">i")
        if btype == lf.BlockType.AVRO_DATA and clen >= 12:
            out["first record length"] = (content + 8, ">i")
    out["footer count"] = (content + clen, ">i")
    out["trailing size"] = (pos + 6 + struct.unpack_from(">q", data, pos + 6)[0], ">q")
    return out


def mutate_content(rng: random.Random, data: bytes) -> tuple[bytes, list]:
    """Damage the content of one data or delete block and frame it again soundly: the block
    reads, so its records are what gets decoded (column-wise and record by record)."""
    blocks = [b for b in lf.read_blocks(data) if isinstance(b, lf.LogBlock) and b.content]
    if not blocks:
        return mutate_bytes(rng, data)
    blk = rng.choice(blocks)
    content = bytearray(blk.content)
    desc = []
    for _ in range(rng.randrange(1, 4)):
        at = rng.randrange(8 if len(content) > 8 else 0, len(content))
        content[at] ^= rng.randrange(1, 256)
        desc.append(("content-flip", at))
    framed = lf.encode_block(blk.block_type, blk.header, bytes(content), blk.footer, check_v6=False)
    return data[: blk.offset] + framed + data[blk.end:], desc


def mutate_log(rng: random.Random, data: bytes) -> tuple[bytes, list]:
    if rng.random() < 0.3:
        return mutate_content(rng, data)
    if rng.random() < 0.4:
        blocks = [b for b in lf.read_blocks(data) if isinstance(b, lf.LogBlock)]
        blk = rng.choice(blocks)
        fields = _block_fields(data, blk.offset)
        name = rng.choice(sorted(fields))
        at, fmt = fields[name]
        size = struct.calcsize(fmt)
        lo, hi = (-(2**31), 2**31 - 1) if fmt == ">i" else (-(2**63), 2**63 - 1)
        v = rng.choice(EVIL_INTS + (rng.randint(-64, 64) + struct.unpack_from(fmt, data, at)[0],))
        v = max(lo, min(hi, v))
        b = bytearray(data)
        if at + size <= len(b):
            struct.pack_into(fmt, b, at, v)
        out, desc = bytes(b), [("set", name, v)]
        if rng.random() < 0.3:
            out, more = mutate_bytes(rng, out)
            desc += more
        return out, desc
    return mutate_bytes(rng, data)


def read_and_decode(data: bytes, schema) -> str:
    """What a read or a compaction does with a log file's blocks: data blocks into Arrow tables
    of the table's schema (column-wise, or record by record when the column-wise decoder will
    not judge the bytes), delete blocks into delete records."""
    blocks = lf.read_blocks(data)
    for b in blocks:
        if isinstance(b, lf.CorruptBlock):
            continue
        if b.block_type in (lf.BlockType.AVRO_DATA, lf.BlockType.PARQUET_DATA):
            if b.block_type == lf.BlockType.AVRO_DATA:
                lf.decode_avro_records(b.content, b.schema_json)  # the record path on its own, too
            BlockDecoder(schema).table(b)
        elif b.block_type == lf.BlockType.DELETE:
            lf.decode_delete_records(b.content)
    if any(isinstance(b, lf.CorruptBlock) for b in blocks):
        try:
            lf.read_blocks(data, strict=True)
        except HudiEtcError:
            return "skipped-corrupt"
        raise AssertionError("lenient read found a corrupt block, strict read did not refuse")
    return "ok"


@pytest.mark.parametrize("n,seed", [(400, 1), pytest.param(4000, 2, marks=SLOW)])
def test_fuzz_log_files(corpus, n, seed, monkeypatch):
    monkeypatch.setattr(avro_arrow, "MIN_RECORDS", 0)  # the corpus's blocks are small: decode them column-wise too
    rng = random.Random(seed)
    counts = Counter()
    for i in range(n):
        src = rng.randrange(len(corpus["logs"]))
        data, desc = mutate_log(rng, corpus["logs"][src])
        counts[classify(lambda: read_and_decode(data, corpus["schema"]), f"log case {seed}/{i} (file {src}, {desc})")] += 1
    report("log files", counts)
    assert counts["typed"] and counts["skipped-corrupt"] and counts["ok"]


# ------------------------------------------------------------------ compaction plans
UNSAFE = ("..", "../x", "../../etc/passwd", "/etc/passwd", "s3://other/bucket/x", "file:///etc/passwd", "a/../../b",
          "", ".", "x\x00y", "\\\\server\\share", "C:\\Windows", ".hoodie", ".hoodie/hoodie.properties",
          "%2e%2e/x", "a" * 5000, "ok_name")


def plan_is_safe(p: CompactionPlan) -> str:
    """A plan that parsed may only name files inside its partitions (and not in .hoodie)."""
    for op in p.operations:
        part = safe_relpath(op.partition)
        assert part.split("/")[0] != ".hoodie"
        names = list(op.compact_logs) + [n for lk in op.links for n in (lk.link, lk.target)]
        names += [op.base_file] if op.base_file else []
        for name in names:
            rel = safe_relpath(op.path(name))
            assert "/" not in name and rel.rsplit("/", 1)[0] == part if part else "/" not in rel, (op, name)
    return "ok"


def mutate_plan_record(rng: random.Random, rec: dict) -> tuple[dict, list]:
    rec = copy.deepcopy(rec)
    op = rng.choice(rec["operations"])
    field = rng.choice(("partitionPath", "fileId", "dataFilePath", "deltaFilePaths", "link", "target",
                        "baseInstantTime", "extra"))
    v = rng.choice(UNSAFE)
    if field == "deltaFilePaths":
        op[field] = (op.get(field) or []) + [v]
    elif field in ("link", "target"):
        ops = op.get("linkOperations") or []
        if ops:
            rng.choice(ops)[field] = v
        else:
            op["linkOperations"] = [{"link": v, "target": v}]
    elif field == "extra":
        rec["extraMetadata"][rng.choice(sorted(rec["extraMetadata"]))] = v
    else:
        op[field] = v
    return rec, [("set", field, v[:40])]


def write_plan(schema, rec) -> bytes:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), [rec], codec="null")
    return buf.getvalue()


# writer schemas a damaged or hostile plan file might carry: fields of other types
OTHER_SCHEMAS = [
    {"type": "record", "name": "HoodieCompactionPlan", "fields": [
        {"name": "operations", "type": {"type": "array", "items": "string"}}]},
    {"type": "record", "name": "HoodieCompactionPlan", "fields": [
        {"name": "operations", "type": "string"}, {"name": "extraMetadata", "type": {"type": "array", "items": "int"}}]},
    {"type": "record", "name": "HoodieCompactionPlan", "fields": [
        {"name": "operations", "type": {"type": "array", "items": {"type": "record", "name": "Op", "fields": [
            {"name": "fileId", "type": "long"}, {"name": "partitionPath", "type": "string"},
            {"name": "deltaFilePaths", "type": {"type": "map", "values": "string"}},
            {"name": "linkOperations", "type": {"type": "array", "items": "string"}}]}}},
        {"name": "extraMetadata", "type": {"type": "map", "values": "long"}}]},
]


def other_schema_plan(rng: random.Random) -> bytes:
    i = rng.randrange(len(OTHER_SCHEMAS))
    recs = [
        {"operations": ["x", "../y"]},
        {"operations": "abc", "extraMetadata": [1, 2]},
        {"operations": [{"fileId": 5, "partitionPath": rng.choice(UNSAFE), "deltaFilePaths": {"a": "b"},
                         "linkOperations": ["../x"]}], "extraMetadata": {"k": 1}},
    ]
    return write_plan(OTHER_SCHEMAS[i], recs[i])


@pytest.mark.parametrize("n,seed", [(400, 3), pytest.param(3500, 4, marks=SLOW)])
def test_fuzz_compaction_plans(corpus, n, seed):
    rng = random.Random(seed)
    counts = Counter()
    recs = [next(iter(fastavro.reader(io.BytesIO(p)))) for p in corpus["plans"]]
    for i in range(n):
        r = rng.random()
        if r < 0.55:
            data, desc = mutate_bytes(rng, rng.choice(corpus["plans"]))
        elif r < 0.9:
            rec, desc = mutate_plan_record(rng, rng.choice(recs))
            data = write_plan(plan_mod.COMPACTION_PLAN, rec)
        else:
            data, desc = other_schema_plan(rng), ["other writer schema"]
        counts[classify(lambda: plan_is_safe(CompactionPlan.from_bytes("20260101000000000", data)),
                        f"plan case {seed}/{i} ({desc})")] += 1
    report("compaction plans", counts)
    assert counts["typed"] and counts["ok"]


# ------------------------------------------------------------------ commit JSON
def mutate_json(rng: random.Random, data: bytes) -> tuple[bytes, list]:
    if rng.random() < 0.4:
        return mutate_bytes(rng, data)
    doc = json.loads(data)
    nodes = []

    def walk(x, parent, key):
        nodes.append((parent, key))
        if isinstance(x, dict):
            for k, v in x.items():
                walk(v, x, k)
        elif isinstance(x, list):
            for j, v in enumerate(x):
                walk(v, x, j)

    walk(doc, None, None)
    parent, key = rng.choice(nodes[1:])
    v = rng.choice((None, 0, -1, 2**70, 1.5, True, "", "../../etc/passwd", "/abs", "s3://other/x", [], {}, [1, "a"],
                    {"link": "../x"}, "not json {", json.dumps([{"link": "../../x", "target": 5}])))
    if rng.random() < 0.15 and isinstance(parent, dict):
        del parent[key]
        desc = [("delete", key)]
    else:
        parent[key] = v
        desc = [("set", key, str(v)[:40])]
    return json.dumps(doc).encode(), desc


def use_commit(data: bytes) -> str:
    meta = load_commit_metadata(data)
    for st in iter_write_stats(meta):
        st.get("path")
    HudiTable.carried_over_files(meta)
    return "ok"


@pytest.mark.parametrize("n,seed", [(300, 5), pytest.param(2500, 6, marks=SLOW)])
def test_fuzz_commit_json(corpus, n, seed):
    rng = random.Random(seed)
    counts = Counter()
    names = sorted(corpus["commits"])
    for i in range(n):
        name = rng.choice(names)
        data, desc = mutate_json(rng, corpus["commits"][name])
        counts[classify(lambda: use_commit(data), f"commit case {seed}/{i} ({name}, {desc})")] += 1
    report("commit JSON", counts)
    assert counts["typed"] and counts["ok"]


# ------------------------------------------------------------------ hoodie.properties
class _PropsOnly:
    base_uri = "mem://t"

    def __init__(self, data: bytes):
        self.data = data

    def read_text(self, rel):
        return self.read_bytes(rel).decode("utf-8")

    def read_bytes(self, rel):  # (the properties are read as bytes, as Java reads them: issue 35 item 8)
        if rel != PROPERTIES_FILE:
            raise FileNotFoundError(rel)
        return self.data


def mutate_props(rng: random.Random, data: bytes) -> tuple[bytes, list]:
    if rng.random() < 0.5:
        return mutate_bytes(rng, data)
    lines = data.decode().splitlines()
    j = rng.randrange(len(lines))
    kind = rng.choice(("drop", "value", "escape", "dup"))
    if kind == "drop":
        del lines[j]
    elif kind == "dup":
        lines.insert(j, lines[j])
    else:
        k = lines[j].split("=", 1)[0]
        v = rng.choice(("", "5", "8", "COPY_ON_WRITE", "x" * 10000, "\\u12", "\\uZZZZ", "\\", "-1", "2147483648",
                        "org.apache.Other", "{not json", "a,b"))
        lines[j] = f"{k}={v}"
    return "\n".join(lines).encode(), [(kind, j)]


@pytest.mark.parametrize("n,seed", [(300, 7), pytest.param(2500, 8, marks=SLOW)])
def test_fuzz_properties(corpus, n, seed):
    rng = random.Random(seed)
    counts = Counter()
    for i in range(n):
        data, desc = mutate_props(rng, corpus["props"])
        counts[classify(lambda: load_table_config(_PropsOnly(data)) and "ok", f"properties case {seed}/{i} ({desc})")] += 1
    report("hoodie.properties", counts)
    assert counts["typed"] and counts["ok"]


# ------------------------------------------------------------------ table-level: nothing written
def _table_targets(corpus):
    t = corpus["table"]
    logs = sorted(p for p in t.rglob(".*.log.*") if not p.is_symlink())
    commits = sorted((t / ".hoodie").glob("*.deltacommit"))[-2:] + sorted((t / ".hoodie").glob("*.commit"))
    return logs[:4] + commits + [t / ".hoodie" / "hoodie.properties"]


def _operations(path: Path):
    return {
        "read": lambda: HudiTable.load(str(path)).read() and "ok",
        "read-ro": lambda: HudiTable.load(str(path)).read(read_optimized=True) and "ok",
        "status": lambda: table_metrics(str(path)) and "ok",
        "validate": lambda: validate(str(path)) and "ok",
        "schedule": lambda: "planned" if schedule(str(path), data_latency="1h",
                                                  compaction_time="2023-11-21T00:00:00Z").instant else "ok",
    }


@pytest.mark.parametrize("n,seed", [(40, 9), pytest.param(600, 10, marks=SLOW)])
def test_fuzz_table_level_operations_write_nothing(corpus, tmp_path, n, seed):
    rng = random.Random(seed)
    counts = Counter()
    pristine = corpus["table"]
    targets = [p.relative_to(pristine) for p in _table_targets(corpus)]
    plan_rel = corpus["pending_plan"].relative_to(corpus["pending"])
    for i in range(n):
        pending = rng.random() < 0.25
        src = corpus["pending"] if pending else pristine
        rel = plan_rel if pending else rng.choice(targets)
        work = tmp_path / f"c{i}"
        shutil.copytree(src, work, symlinks=True)
        f = work / rel
        raw = f.read_bytes()
        if rel.name.startswith("."):
            data, desc = mutate_log(rng, raw)
        elif rel.name.endswith(".properties"):
            data, desc = mutate_props(rng, raw)
        elif rel.name.endswith(".requested"):
            data, desc = mutate_bytes(rng, raw)
        else:
            data, desc = mutate_json(rng, raw)
        f.write_bytes(data)
        before = tree_digest(work)
        ops = _operations(work)
        name = rng.choice(sorted(ops))
        out = classify(ops[name], f"table case {seed}/{i}: {name} with {rel} damaged ({desc})")
        counts[f"{name}:{out}"] += 1
        if out != "planned":
            assert tree_digest(work) == before, f"table case {seed}/{i}: {name} changed the table ({rel}, {desc})"
        shutil.rmtree(work)
    report("table-level", counts)


# ------------------------------------------------------------------ bounded memory
HUGE_CASES = {
    "log block length 2^62": "log_len",
    "log header count 2^31-1": "log_hcount",
    "avro record count 2^31-1": "log_records",
    "avro first record length 2^31-1": "log_reclen",
    "plan: array of nulls, count 2^40": "plan_nulls",
    "plan: string length 2^40": "plan_strlen",
    "replace request: array of nulls, count 2^40": "replace_nulls",
    "commit JSON: 10^6-deep nesting": "json_deep",
}

_CHILD = r"""
import io, json, resource, struct, sys, tracemalloc
resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))
import fastavro
from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.errors import HudiEtcError
from airflow_hudi_etc.hudi.index.stats import is_clustering_request
from airflow_hudi_etc.hudi.timeline.active import load_commit_metadata
from airflow_hudi_etc.hudi.protocol.plan import CompactionPlan

def zz(n):
    n = (n << 1) ^ (n >> 63); out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80); n >>= 7
    out.append(n); return bytes(out)

def container(items, body):
    schema = fastavro.parse_schema({"type": "record", "name": "HoodieCompactionPlan", "fields": [
        {"name": "operations", "type": {"type": "array", "items": items}}]})
    buf = io.BytesIO(); w = fastavro.write.Writer(buf, schema, codec="null", sync_marker=b"S" * 16); w.flush()
    return buf.getvalue() + zz(1) + zz(len(body)) + body + b"S" * 16

log = open(sys.argv[2], "rb").read()
case = sys.argv[1]
def setf(at, fmt, v):
    b = bytearray(log); struct.pack_into(fmt, b, at, v); return bytes(b)
hcount_at = 22
def content_at():
    at = 26
    (count,) = struct.unpack_from(">i", log, 22)
    for _ in range(count):
        (n,) = struct.unpack_from(">i", log, at + 4); at += 8 + n
    return at + 8
tracemalloc.start()
result = None
try:
    if case == "log_len":
        r = lf.read_blocks(setf(6, ">q", 2**62))
        result = "skipped-corrupt" if len(r) == 1 and isinstance(r[0], lf.CorruptBlock) else "not skipped"
    elif case == "log_hcount":
        r = lf.read_blocks(setf(hcount_at, ">i", 2**31 - 1))
    elif case in ("log_records", "log_reclen"):
        data = setf(content_at() + (4 if case == "log_records" else 8), ">i", 2**31 - 1)
        for b in lf.read_blocks(data):
            lf.decode_avro_records(b.content, b.schema_json)
    elif case == "plan_nulls":
        CompactionPlan.from_bytes("1", container("null", zz(2**40) + zz(0)))
    elif case == "plan_strlen":
        CompactionPlan.from_bytes("1", container("string", zz(1) + zz(2**40) + b"x" * 10 + zz(0)))
    elif case == "replace_nulls":
        # status's rule: an unreadable replace request is not a clustering plan
        result = "unreadable: not clustering" if not is_clustering_request(container("null", zz(2**40) + zz(0))) else "?"
    elif case == "json_deep":
        load_commit_metadata(b"[" * 1000000 + b"]" * 1000000)
    outcome = result or "ok"
except HudiEtcError as e:
    outcome = "typed"
except BaseException as e:
    outcome = "untyped " + type(e).__name__ + ": " + str(e)[:200]
print(json.dumps({"outcome": outcome, "peak": tracemalloc.get_traced_memory()[1]}))
"""


@pytest.mark.parametrize("case", sorted(HUGE_CASES))
def test_length_fields_do_not_drive_allocation(corpus, tmp_path, case):
    avro_log = next(b for b in corpus["logs"] if lf.read_blocks(b)[0].block_type == lf.BlockType.AVRO_DATA)
    f = tmp_path / "log"
    f.write_bytes(avro_log[: lf.read_blocks(avro_log)[0].end])
    proc = subprocess.run([sys.executable, "-c", _CHILD, HUGE_CASES[case], str(f)], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["outcome"] in ("typed", "skipped-corrupt", "unreadable: not clustering"), res
    assert res["peak"] < 64 << 20, f"{case}: peak {res['peak']} bytes"
