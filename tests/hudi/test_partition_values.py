"""Issue 23 item 5: a partition value stock readers cannot read is refused by ``write`` (typed,
nothing written); every other value from the whole Unicode range is written and read back by
hudi-rs (the judge) as given.

Issue 35 items 2 and 3: a table with ``hoodie.datasource.write.partitionpath.urlencode=true``
gets Java's folder names (escaped as Hudi's ``escapePathName``; the expected names below are the
ones real Java 0.14 and 1.1 wrote); without it, the values real Java cannot read back as written
(tests/java/test_java_partition_paths.py) are refused."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from airflow_hudi_etc.hudi.errors import InvalidInputError
from airflow_hudi_etc.hudi.protocol.coexistence import update_table_properties
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.write.partition_paths import escape_path_name, unescape_path_name
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from oracle import hudi_rs_read

#: the characters hudi-rs's object-store paths refuse (found by probing every ASCII character,
#: C1 controls and a sample of the whole range): C0 controls and DEL
CONTROL = [chr(c) for c in range(0x01, 0x20)] + ["\x7f"]


def new_table(path: Path, *, urlencode: bool = False) -> str:
    init_table(str(path), table_name="t", record_key="id", precombine_field="ts", event_time_field="et",
               partition_field="p", partition_urlencode=urlencode)  # hive-style folders: p=<value>
    return str(path)


def snapshot(path: Path) -> dict:
    return {str(p.relative_to(path)): (p.read_bytes() if p.is_file() else None) for p in sorted(path.rglob("*"))}


def rows(values):
    n = len(values)
    return pa.table({"id": [f"k{i}" for i in range(n)], "ts": [1] * n, "et": [1] * n, "p": list(values)})


def test_control_characters_and_overlong_folder_names_are_refused(tmp_path):
    p = new_table(tmp_path / "t")
    write_batch(p, rows(["ok"]))
    before = snapshot(tmp_path / "t")
    for c in CONTROL + ["\x00"]:
        for v in (f"a{c}b", c, f"{c}x"):
            with pytest.raises(InvalidInputError, match="not usable folder names"):
                write_batch(p, rows(["fine", v]))
    with pytest.raises(InvalidInputError, match="at most 255 bytes"):
        write_batch(p, rows(["é" * 127]))  # "p=" + 254 bytes = 256 bytes
    assert snapshot(tmp_path / "t") == before
    write_batch(p, rows(["é" * 126 + "x"]))  # 255 bytes: fine
    assert sorted(hudi_rs_read(p).column("p").to_pylist()) == sorted(["ok", "é" * 126 + "x"])


def _unicode_sample(step: int) -> list[str]:
    cps = [c for c in range(0x20, 0x110000, step) if not 0xD800 <= c < 0xE000 and c != 0x7F]
    cps += [0x80, 0x85, 0x9F, 0xA0, 0xAD, 0x200B, 0x2028, 0x2029, 0xFEFF, 0xFFFE, 0xFFFF, 0x10FFFF]
    vals = {f"v{chr(c)}w" for c in cps} | {chr(c) for c in cps if chr(c) not in "./\\"}
    vals |= {"a b", " ", "a?b", "a#b", "a*b", "~", "a|b", "<>", '"', "'", "a..b", "a=b", "50%", "a%", "%zz", "{a,b}"}
    return sorted(vals)


@pytest.mark.parametrize("step", [pytest.param(4999, id="sample"), pytest.param(211, id="dense", marks=pytest.mark.slow)])
def test_values_from_the_whole_unicode_range_read_back_with_hudi_rs(tmp_path, step):
    vals = _unicode_sample(step)
    p = new_table(tmp_path / "t")
    write_batch(p, rows(vals))
    got = hudi_rs_read(p)
    assert sorted(got.column("p").to_pylist()) == vals
    assert sorted(got.column("_hoodie_partition_path").to_pylist()) == sorted(f"p={v}" for v in vals)
    assert all(os.path.isdir(os.path.join(p, f"p={v}")) for v in vals)


# ------------------------------------------------------------------ issue 35: Java's folder names
#: value → folder name (without ``p=``) real Java 0.14 and 1.1 wrote with urlencode=true (the
#: characters Hudi's escapePathName escapes: C0 controls, DEL, " # % ' * / : = ? \ { [ ] ^)
JAVA_ESCAPED = {
    "x:y": "x%3Ay", "a/b": "a%2Fb", "50%": "50%25", "a b": "a b", "k=v": "k%3Dv", "café": "café", "中": "中",
    "{c}": "%7Bc}", "q?": "q%3F", "h#": "h%23", "[s]": "%5Bs%5D", "^": "%5E", "*": "%2A", "'": "%27", '"': "%22",
    "\\": "%5C", " lead": " lead", "trail ": "trail ", "%41": "%2541", "ok": "ok", "-_.~": "-_.~",
}
#: folder name → the partition value real Java 1.1 read back (Hudi 1.x decodes folder names,
#: whatever the table's urlencode setting; Integer.parseInt's signs and Unicode digits included)
JAVA_DECODED = {
    "%41": "A", "%zz": "%zz", "a%": "a%", "%": "%", "50%": "50%", "%-0x": "\x00x", "%\u0664\u0661": "A",
    "%\uff21\uff22": "\xab", "a%+fz": "a\x0fz", "%4": "%4", "x%4": "x%4", "a%+1b": "a\x01b", "a%-1b": "a%-1b",
    "x%2Fy": "x/y", "x%3Ay": "x:y", "%2541": "%41",
}


def test_escape_and_unescape_as_java():
    assert {v: escape_path_name(v) for v in JAVA_ESCAPED} == JAVA_ESCAPED
    assert {n: unescape_path_name(n) for n in JAVA_DECODED} == JAVA_DECODED
    # from escapePathName's source: controls and DEL as upper-case %XX, an empty value to the default folder
    assert escape_path_name("a\nb\x7f\x01]") == "a%0Ab%7F%01%5D"
    assert escape_path_name("") == "__HIVE_DEFAULT_PARTITION__"


#: values real Java cannot read back as written from a table without urlencode (hive-style)
JAVA_UNREADABLE = {
    "a:b": "':'", ":": "':'", "%41": "reads 'A' back", "a%+1b": "reads 'a\\x01b' back",
    "%-0x": "reads '\\x00x' back", "%\u0664\u0661": "reads 'A' back", "": "empty value",
    "__HIVE_DEFAULT_PARTITION__": "back as null",
}


def test_values_java_cannot_read_are_refused(tmp_path):
    p = new_table(tmp_path / "t")
    write_batch(p, rows(["ok"]))
    before = snapshot(tmp_path / "t")
    for v, why in JAVA_UNREADABLE.items():
        with pytest.raises(InvalidInputError, match="not usable folder names") as e:
            write_batch(p, rows(["fine", v]))
        assert repr(v) in str(e.value) and why in str(e.value), (v, str(e.value))
        # urlencode is the way out for what escaping fixes, not for the empty or the default value
        assert ("--partition-urlencode" in str(e.value)) == (v not in ("", "__HIVE_DEFAULT_PARTITION__")), v
    assert snapshot(tmp_path / "t") == before


def test_equals_sign_without_hive_style_is_refused(tmp_path):
    """Hudi 1.x reads a folder ``a=b`` of a non-hive-style table as ``name=value`` (``b``)."""
    p = new_table(tmp_path / "t")
    update_table_properties(Storage(p), {"hoodie.datasource.write.hive_style_partitioning": "false"})
    write_batch(p, rows(["ok"]))
    before = snapshot(tmp_path / "t")
    with pytest.raises(InvalidInputError, match="reads 'b' back"):
        write_batch(p, rows(["ok", "a=b"]))
    assert snapshot(tmp_path / "t") == before
    write_batch(p, rows(["ok", "x%zz"]))
    assert sorted(os.listdir(p)) == [".hoodie", "ok", "x%zz"]


def test_urlencoded_table_gets_javas_folder_names(tmp_path):
    """A table of ours with urlencode=true: the values refused above are stored escaped, in the
    folders Java writes; hudi-rs reads them back as written; an update finds its keys there."""
    p = new_table(tmp_path / "t", urlencode=True)
    props = (tmp_path / "t" / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.datasource.write.partitionpath.urlencode=true" in props
    vals = sorted([*JAVA_ESCAPED, "a\nb", "\x7f"])
    write_batch(p, rows(vals))
    folders = {f for f in os.listdir(p) if f != ".hoodie"}
    assert folders == {f"p={n}" for n in JAVA_ESCAPED.values()} | {"p=a%0Ab", "p=%7F"}
    got = hudi_rs_read(p)
    assert sorted(got.column("p").to_pylist()) == vals
    write_batch(p, rows(vals))  # the same keys again: updates in the same file groups
    got = hudi_rs_read(p)
    assert sorted(got.column("id").to_pylist()) == sorted(f"k{i}" for i in range(len(vals)))
    assert {f for f in os.listdir(p) if f != ".hoodie"} == folders
    # what escaping does not fix stays refused (nothing written)
    before = snapshot(tmp_path / "t")
    for bad in ("", "__HIVE_DEFAULT_PARTITION__", ".", "..", ":" * 85):  # 'p=' + 85 x '%3A': 257 bytes
        with pytest.raises(InvalidInputError, match="not usable folder names"):
            write_batch(p, rows(["ok", bad]))
    assert snapshot(tmp_path / "t") == before
    write_batch(p, rows([":" * 84]))  # 254 bytes: fine
    assert os.path.isdir(os.path.join(p, "p=" + "%3A" * 84))


def test_timestamp_partition_paths_escaped_as_a_whole(tmp_path):
    """TimestampBasedKeyGenerator on a urlencode table: Java escapes the formatted time as one
    value (``/`` → ``%2F``: one folder); without urlencode a ':' in the format is refused."""
    p = new_table(tmp_path / "t", urlencode=True)
    update_table_properties(Storage(p), {
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
        "hoodie.keygen.timebased.timestamp.type": "EPOCHMILLISECONDS",
        "hoodie.keygen.timebased.output.dateformat": "yyyy/MM/dd HH:mm",
        "hoodie.keygen.timebased.timezone": "UTC",
    })
    t = pa.table({"id": ["a"], "ts": [1], "et": [1], "p": [1_736_937_000_000]})  # 2025-01-15T10:30Z
    write_batch(p, t)
    assert sorted(os.listdir(p)) == [".hoodie", "p=2025%2F01%2F15 10%3A30"]
    assert hudi_rs_read(p).column("id").to_pylist() == ["a"]
    update_table_properties(Storage(p), {"hoodie.datasource.write.partitionpath.urlencode": "false"})
    before = snapshot(tmp_path / "t")
    with pytest.raises(InvalidInputError, match="':'"):
        write_batch(p, t)
    assert snapshot(tmp_path / "t") == before
