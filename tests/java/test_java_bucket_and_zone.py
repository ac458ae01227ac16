"""Issue 35 item 4 with real Java Hudi.

* Item 4, bucket-index tables: Java writers with ``hoodie.index.type=BUCKET`` name every file
  group by its bucket (``00000003-<uuid rest>-0``) and record nothing of it in hoodie.properties
  (measured on 0.14/v6 and 1.1/v9). Our write used to add a UUID-named file group, and every later
  Java write failed (``NumberFormatException`` in ``BucketIdentifier.bucketIdFromFileId``). Now,
  with no bucket settings recorded, our write is refused (nothing written); with the writers'
  settings recorded (``configure --hoodie hoodie.index.type=BUCKET ...``) it routes each key to
  Java's bucket. The proof is Java's own next upsert of every key: it finds each key in the file
  group we put it in (no key read twice, no new file group), simple and composite keys.
Tables are small; nothing sleeps.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.hudi.config.properties import PROPERTIES_FILE, dumps, loads
from airflow_hudi_etc.hudi.errors import InvalidInputError
from java_checks import assert_all, new_table, row, timeline_names

pytestmark = pytest.mark.java

LINES = [(6, "0.14"), (9, "1.1")]
IDS = [f"v{v}-{ln}" for v, ln in LINES]
#: what the Java writers of the bucket tables are configured with
BUCKET5 = {"hoodie.index.type": "BUCKET", "hoodie.bucket.index.num.buckets": "5"}
#: keys whose Java hashCodes cover both signs, non-ASCII and a surrogate pair
KEYS = [f"user-{i}" for i in range(12)] + ["é-ü", "\U0001F600x", "polygenelubricants"]


def run(capsys, *args) -> tuple[int, dict]:
    rc = cli_main([str(a) for a in args])
    return rc, json.loads(capsys.readouterr().out)


def city(i: int) -> str:
    return "sf" if i % 2 else "la"


def data_files(path) -> dict[str, bytes]:
    """Every file of the table outside ``.hoodie`` (data, logs, partition metadata), with its bytes."""
    out = {}
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        for f in files:
            p = Path(root, f)
            out[str(p.relative_to(path))] = p.read_bytes()
    return out


def file_groups(path) -> set[tuple[str, str]]:
    """(partition, file id) of every data file (base files and logs; not Hadoop's ``.crc`` files)."""
    out = set()
    for rel in data_files(path):
        part, name = os.path.split(rel)
        if name.endswith(".crc"):
            continue
        if name.endswith(".parquet"):
            out.add((part, name.split("_")[0]))
        elif ".log." in name:
            out.add((part, name[1:].split("_")[0]))
    return out


def bucket_files_ok(groups) -> None:
    """Every file group named by a bucket below 5, at most one per partition and bucket."""
    seen = {}
    for part, fid in groups:
        assert fid[:8].isdigit() and fid[8] == "-" and int(fid[:8]) < 5, fid
        assert seen.setdefault((part, fid[:8]), fid) == fid, f"two file groups of bucket {fid[:8]} in {part}"


# ---------------------------------------------------------------- item 4
@pytest.mark.parametrize("version,line", LINES, ids=IDS)
def test_our_write_between_java_bucket_index_writes(java_hudi, tmp_path, capsys, version, line):
    java = java_hudi(line)
    t = new_table(tmp_path, version)
    java.upsert(t.path, [row(k, 1, 10, i, city(i)) for i, k in enumerate(KEYS[:4])], options=BUCKET5)
    assert (Path(t.path) / PROPERTIES_FILE).read_text().count("bucket") == 0  # measured: nothing recorded
    bucket_files_ok(file_groups(t.path))
    # no bucket settings recorded: refused, nothing written
    before, timeline = data_files(t.path), timeline_names(t.path)
    with pytest.raises(InvalidInputError, match="named by buckets"):
        t.write([row(k, 2, 11, 100 + i, city(i)) for i, k in enumerate(KEYS)])
    assert data_files(t.path) == before and timeline_names(t.path) == timeline
    rc, out = run(capsys, "configure", "--path", t.path, "--hoodie", "hoodie.index.type=BUCKET",
                  "--hoodie", "hoodie.bucket.index.num.buckets=5")
    assert rc == 0 and out["hoodie"] == BUCKET5, out
    # updates of Java's keys and new keys, in existing buckets and in new ones
    res = t.write([row(k, 2, 11, 100 + i, city(i)) for i, k in enumerate(KEYS)])
    assert res.inserts and res.updates
    ours = file_groups(t.path)
    bucket_files_ok(ours)
    assert_all(java, t.path, {k: 100.0 + i for i, k in enumerate(KEYS)})
    # Java's next upsert of every key routes it by its own hashing: each lands in the file group we
    # put it in (a key we routed elsewhere would be read twice, or get a new file group)
    java.upsert(t.path, [row(k, 3, 12, 200 + i, city(i)) for i, k in enumerate(KEYS)], options=BUCKET5)
    assert file_groups(t.path) == ours
    assert_all(java, t.path, {k: 200.0 + i for i, k in enumerate(KEYS)})
    # and a delete of ours goes to the key's bucket too
    t.delete([{"k": KEYS[5], "city": city(5)}])
    java.upsert(t.path, [row(KEYS[6], 4, 12, 306, city(6))], options=BUCKET5)
    expect = {k: 200.0 + i for i, k in enumerate(KEYS) if i != 5}
    assert_all(java, t.path, {**expect, KEYS[6]: 306.0})


def _composite(path, version: int) -> None:
    """Make the (empty) table's record key ``k,city`` (Java's ComplexKeyGenerator)."""
    f = Path(path) / PROPERTIES_FILE
    props = loads(f.read_text())
    props["hoodie.table.recordkey.fields"] = "k,city"
    if version == 6:
        props["hoodie.table.keygenerator.class"] = "org.apache.hudi.keygen.ComplexKeyGenerator"
    else:
        props["hoodie.table.keygenerator.type"] = "COMPLEX"
    f.write_text(dumps(props))


@pytest.mark.parametrize("version,line", LINES, ids=IDS)
def test_composite_keys_hashed_on_one_field(java_hudi, tmp_path, capsys, version, line):
    """Record key ``k:<k>,city:<city>``, hash field ``k``: Java takes the value of ``k`` out of the
    key (0.14: split on ',' and ':'; 1.x: its own parser) and hashes that."""
    java = java_hudi(line)
    t = new_table(tmp_path, version)
    _composite(t.path, version)
    opts = {**BUCKET5, "hoodie.bucket.index.hash.field": "k"}
    java.upsert(t.path, [row(k, 1, 10, i, city(i)) for i, k in enumerate(KEYS[:3])], options=opts)
    pairs = [a for k, v in opts.items() for a in ("--hoodie", f"{k}={v}")]
    assert run(capsys, "configure", "--path", t.path, *pairs)[0] == 0
    t.write([row(k, 2, 11, 100 + i, city(i)) for i, k in enumerate(KEYS)])
    ours = file_groups(t.path)
    bucket_files_ok(ours)
    java.upsert(t.path, [row(k, 3, 12, 200 + i, city(i)) for i, k in enumerate(KEYS)], options=opts)
    assert file_groups(t.path) == ours
    assert_all(java, t.path, {k: 200.0 + i for i, k in enumerate(KEYS)})
