"""Issue 23 item 6: the start and end of an incremental read are parsed and validated as
``read --as-of`` is (typed error for 'bogus' or '!', 'yyyy-MM-dd HH:mm:ss[.SSS]' accepted).

Judged by the fixture's documented values (v6_trips_8i1u: the update at 20250331030642808 changed
one trip) and by hudi-rs given the same window as an instant time."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from airflow_hudi_etc.api import Table
from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.hudi.errors import InvalidInputError
from oracle import hudi_rs_read

UPDATE = "20250331030642808"  # the fixture's README: the update of trip 9909a8b1-...
UID = "9909a8b1-2d15-4d3d-8ec9-efc48c536a00"


@pytest.mark.parametrize("start,end", [("bogus", None), ("!", None), ("", None), ("2025-13-01", None),
                                       ("20250331", None), (UPDATE, "bogus"), (UPDATE, "!"),
                                       ("20250401000000000", UPDATE)])
def test_a_bound_that_is_no_time_is_a_typed_error(fixture_root, start, end):
    with pytest.raises(InvalidInputError, match="incremental"):
        Table(str(fixture_root / "v6_trips_8i1u")).read_incremental(start, end)


def test_the_as_of_formats_name_the_same_window(fixture_root):
    path = fixture_root / "v6_trips_8i1u"
    t = Table(str(path))
    for start in (UPDATE, "2025-03-31 03:06:42.808"):
        assert t.read_incremental(start).column("uuid").to_pylist() == [UID]
    everything = hudi_rs_read(path, start="19700101000000000").num_rows
    assert t.read_incremental("000").num_rows == everything > 1
    day = hudi_rs_read(path, start="20250331000000000").num_rows
    assert t.read_incremental("2025-03-31").num_rows == day
    window = hudi_rs_read(path, start="20250331030642000", end=UPDATE)
    assert sorted(t.read_incremental("2025-03-31 03:06:42", UPDATE).column("uuid").to_pylist()) \
        == sorted(window.column("uuid").to_pylist())


def test_read_incremental_on_the_command_line(fixture_root, tmp_path, capsys):
    path = fixture_root / "v6_trips_8i1u"
    out = tmp_path / "inc.parquet"
    for bad in ("bogus", "!", "2026-11-26T06:45:50"):
        rc = cli_main(["read", "--path", str(path), "--incremental-start", bad, "--output", str(out)])
        err = json.loads(capsys.readouterr().out)["error"]
        assert rc == 2 and err["code"] == "invalid_input" and "incremental start" in err["message"]
    assert not out.exists()
    rc = cli_main(["read", "--path", str(path), "--incremental-start", "2025-03-31 03:06:42.808", "--output", str(out)])
    res = json.loads(capsys.readouterr().out)
    assert rc == 0 and res["start"] == UPDATE and res["rows"] == 1
    assert pq.read_table(out).column("uuid").to_pylist() == [UID]
    rc = cli_main(["read", "--path", str(path), "--incremental-end", UPDATE, "--output", str(out)])
    assert rc == 2 and json.loads(capsys.readouterr().out)["error"]["code"] == "invalid_input"
