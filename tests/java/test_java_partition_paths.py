"""Issue 35 items 2 and 3 with real Java Hudi: partition folders as Java writes and reads them.

* Item 2: a table Java created with ``hoodie.datasource.write.partitionpath.urlencode=true``
  (Java 0.14 and 1.1 record it, with hive-style, in hoodie.properties) holds ``city=x%3Ay``; our
  update and insert must land in Java's folders (before: ``city=x:y`` beside it, the key read
  twice, and Java no longer read the table at all: ``URISyntaxException``).
* Item 3: without urlencode (Hudi's default, our tables') a value Java cannot read back as
  written is refused, nothing written: a ``:`` (every Java line fails on the whole table),
  ``%XX`` Java decodes and ``__HIVE_DEFAULT_PARTITION__`` (Hudi 1.x reads the partition column
  from the folder name: ``A``, null), an empty value (``city=``: unreadable); ``=`` in a
  non-hive-style table (1.x reads ``a=b`` as ``b``). What Java reads back as written still is.
  A table of ours created with ``partition_urlencode=True`` stores those values as Java does.

Every test: Java's snapshot read, hudi-rs and our reader agree on each key's partition value and
value, no key is read twice, and Java writes again after us. Hudi 0.14 (table version 6) and 1.1
(version 9): 0.14 reads partition values from the data files, 1.1 from the folder names.
"""

from __future__ import annotations

import os

import pytest

from airflow_hudi_etc import Table
from airflow_hudi_etc.hudi.errors import InvalidInputError
from java_checks import new_table, row
from oracle import hudi_rs_read

pytestmark = pytest.mark.java

LINES = [(6, "0.14"), (9, "1.1")]
IDS = [f"v{v}-{ln}" for v, ln in LINES]
SCHEMA = "`k` string, `ts` bigint, `city` string, `v` double"
URLENCODE = "hoodie.datasource.write.partitionpath.urlencode"


def java_created(java, path, rows, *, urlencode: bool, hive: bool = True) -> None:
    """Java creates the table with its first write (its own defaults, these options)."""
    java.upsert(path, rows, schema=SCHEMA, options={
        "hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "k",
        "hoodie.datasource.write.partitionpath.field": "city", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.datasource.write.hive_style_partitioning": str(hive).lower(), URLENCODE: str(urlencode).lower()})
    Table.open(str(path)).configure(timeline_zone="UTC")  # the Java server's JVM runs on UTC


def by_key(rows) -> dict:
    """``{k: (city, v)}``; a key read more than once maps to ``("read twice", ...)``."""
    out: dict = {}
    for r in rows:
        got = (r["city"], r["v"])
        out[r["k"]] = ("read twice", out[r["k"]], got) if r["k"] in out else got
    return out


def judges(java, path) -> dict:
    rs = hudi_rs_read(path)
    return {"java": by_key(java.snapshot(path)), "hudi-rs": by_key(rs.to_pylist() if rs.num_rows else []),
            "ours": by_key(Table.open(str(path)).read().to_pylist())}


def assert_all(java, path, model: dict) -> None:
    got = judges(java, path)
    assert got == {j: model for j in got}, f"expected {model}, read {got}"


def folders(path) -> set[str]:
    return {f for f in os.listdir(path) if f != ".hoodie"}


def files(path) -> dict:
    return {str(p.relative_to(path)): p.read_bytes() for p in path.rglob("*") if p.is_file()}


# ---------------------------------------------------------------- item 2
#: value → the folder real Java wrote for it with urlencode=true (measured on 0.14 and 1.1)
JAVA_FOLDERS = {"x:y": "city=x%3Ay", "a/b": "city=a%2Fb", "50%": "city=50%25", "a b": "city=a b",
                "k=v": "city=k%3Dv", "café": "city=café", "%41": "city=%2541", "ok": "city=ok"}


@pytest.mark.parametrize("version,line", LINES, ids=IDS)
def test_write_into_javas_urlencoded_partitions(java_hudi, tmp_path, version, line):
    java = java_hudi(line)
    path = tmp_path / "t"
    start = {f"k{i}": (c, float(i)) for i, c in enumerate(JAVA_FOLDERS)}
    java_created(java, path, [{"k": k, "ts": 1, "city": c, "v": v} for k, (c, v) in start.items()], urlencode=True)
    props = (path / ".hoodie" / "hoodie.properties").read_text()
    assert f"{URLENCODE}=true" in props and "hoodie.datasource.write.hive_style_partitioning=true" in props
    assert f"hoodie.table.version={version}" in props.splitlines()
    assert folders(path) == set(JAVA_FOLDERS.values())
    # ours: updates in Java's folders and an insert into one of them (before: a folder city=x:y
    # beside Java's, k0 read twice, and Java's read failed on it: URISyntaxException)...
    ours = {"k0": ("x:y", 100.0), "k6": ("%41", 106.0), "n1": ("x:y", 200.0)}
    Table.open(str(path)).write([{"k": k, "ts": 2, "city": c, "v": v} for k, (c, v) in ours.items()])
    model = {**start, **ours}
    assert_all(java, path, model)
    assert folders(path) == set(JAVA_FOLDERS.values())
    # ... values holding '/' (one folder: escaped) and a new partition
    ours = {"k1": ("a/b", 101.0), "k2": ("50%", 102.0), "n2": ("new:1/2%", 201.0)}
    Table.open(str(path)).write([{"k": k, "ts": 2, "city": c, "v": v} for k, (c, v) in ours.items()])
    model.update(ours)
    assert folders(path) == set(JAVA_FOLDERS.values()) | {"city=new%3A1%2F2%25"}
    assert_all(java, path, model)
    # Java writes on: into our new partition and over our updates
    java_rows = {"k0": ("x:y", 300.0), "n2": ("new:1/2%", 301.0), "j1": ("a/b", 302.0)}
    java.upsert(path, [{"k": k, "ts": 3, "city": c, "v": v} for k, (c, v) in java_rows.items()], schema=SCHEMA)
    model.update(java_rows)
    assert folders(path) == set(JAVA_FOLDERS.values()) | {"city=new%3A1%2F2%25"}
    assert_all(java, path, model)


# ---------------------------------------------------------------- item 3
#: values of a table without urlencode that real Java cannot read back as written (0.14 and 1.1:
#: ':' and ''; 1.1 also the others) → what the refusal names
REFUSED = {"a:b": "':'", "%41": "reads 'A' back", "__HIVE_DEFAULT_PARTITION__": "back as null", "": "empty value"}
#: values Java (both lines), hudi-rs and ours read back as written
KEPT = ["50%", "%zz", "a%", " lead", "trail ", "{a,b}", "?", "#", "[ab]", "*", "a=b", "default", "é", "😀", "\u00a0"]


@pytest.mark.parametrize("version,line", LINES, ids=IDS)
def test_values_java_cannot_read_are_refused(java_hudi, tmp_path, version, line):
    java = java_hudi(line)
    t = new_table(tmp_path, version)
    path = tmp_path / "t"
    t.write([row("k0", 1, 10, 0, "ok")])
    before = files(path)
    for value, why in REFUSED.items():
        with pytest.raises(InvalidInputError) as e:
            t.write([row("k1", 1, 10, 1, "fine"), row("k2", 1, 10, 2, value)])
        assert repr(value) in str(e.value) and why in str(e.value), str(e.value)
        assert files(path) == before, value
    assert_all(java, path, {"k0": ("ok", 0.0)})
    # what works stays working, for every judge; Java's updates find the same file groups
    kept = {f"g{i}": (c, float(i)) for i, c in enumerate(KEPT)}
    t.write([row(k, 1, 10, v, c) for k, (c, v) in kept.items()])
    model = {"k0": ("ok", 0.0), **kept}
    assert_all(java, path, model)
    again = {k: (c, v + 100) for k, (c, v) in kept.items()}
    java.upsert(path, [row(k, 2, 11, v, c) for k, (c, v) in again.items()])
    model.update(again)
    assert_all(java, path, model)


@pytest.mark.parametrize("version,line", LINES, ids=IDS)
def test_equals_sign_in_a_java_table_without_hive_style(java_hudi, tmp_path, version, line):
    """Hudi 1.x reads a folder ``a=b`` as ``name=value``: in a table without hive-style folders
    (and without urlencode) a value holding ``=`` is refused; Java's own ``ok`` stays readable."""
    java = java_hudi(line)
    path = tmp_path / "t"
    java_created(java, path, [{"k": "k0", "ts": 1, "city": "ok", "v": 0.0}], urlencode=False, hive=False)
    before = files(path)
    with pytest.raises(InvalidInputError, match="reads 'b' back"):
        Table.open(str(path)).write([{"k": "k1", "ts": 1, "city": "a=b", "v": 1.0}])
    assert files(path) == before
    Table.open(str(path)).write([{"k": "k1", "ts": 1, "city": "x y", "v": 1.0}])
    assert folders(path) == {"ok", "x y"}
    assert_all(java, path, {"k0": ("ok", 0.0), "k1": ("x y", 1.0)})


@pytest.mark.parametrize("version,line", LINES, ids=IDS)
def test_our_table_with_urlencode(java_hudi, tmp_path, version, line):
    """The way out the refusal names: a table of ours created with ``partition_urlencode=True``
    stores ``a:b``, ``%41``, ``a/b`` and a newline escaped, in the folders Java makes for them."""
    java = java_hudi(line)
    t = Table.create(str(tmp_path / "t"), table_name="t", record_key="k", precombine_field="ts",
                     event_time_field="event_time", partition_field="city", table_version=version,
                     java_compaction="off", partition_urlencode=True)
    path = tmp_path / "t"
    vals = {"u0": "a:b", "u1": "%41", "u2": "a/b", "u3": "line\nbreak", "u4": "ok"}
    t.write([row(k, 1, 10, i, c) for i, (k, c) in enumerate(vals.items())])
    assert folders(path) == {"city=a%3Ab", "city=%2541", "city=a%2Fb", "city=line%0Abreak", "city=ok"}
    model = {k: (c, float(i)) for i, (k, c) in enumerate(vals.items())}
    assert_all(java, path, model)
    # Java takes the setting from hoodie.properties: its updates and inserts land in the same folders
    java_rows = {"u0": ("a:b", 10.0), "u3": ("line\nbreak", 13.0), "j0": ("%41", 20.0)}
    java.upsert(path, [row(k, 2, 11, v, c) for k, (c, v) in java_rows.items()])
    model.update(java_rows)
    assert folders(path) == {"city=a%3Ab", "city=%2541", "city=a%2Fb", "city=line%0Abreak", "city=ok"}
    assert_all(java, path, model)
