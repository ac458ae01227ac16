"""Issue 23 item 5: a partition value stock readers cannot read is refused by ``write`` (typed,
nothing written); every other value from the whole Unicode range is written and read back by
hudi-rs (the judge) as given."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest

from airflow_hudi_etc.hudi.errors import InvalidInputError
from airflow_hudi_etc.hudi.write.writer import init_table, write_batch
from oracle import hudi_rs_read

#: the characters hudi-rs's object-store paths refuse (found by probing every ASCII character,
#: C1 controls and a sample of the whole range): C0 controls and DEL
CONTROL = [chr(c) for c in range(0x01, 0x20)] + ["\x7f"]


def new_table(path: Path) -> str:
    init_table(str(path), table_name="t", record_key="id", precombine_field="ts", event_time_field="et",
               partition_field="p")  # hive-style folders: p=<value>
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
    vals |= {"%41", "a b", " ", "a:b", "a?b", "a#b", "a*b", "~", "a|b", "<>", '"', "'", "a..b", "a=b"}
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
