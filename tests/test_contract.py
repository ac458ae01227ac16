"""The one contract (``airflow_hudi_etc.contract``): the CLI's parser, the Spark job's parser and
the argv the operators build come from the same command definitions; the result file and the
error envelope are the wire format back. No JVM, no Airflow (the operators' side of the contract
is tested in test_airflow_operators.py)."""

from __future__ import annotations

import argparse
import re

import pytest

from airflow_hudi_etc import contract
from airflow_hudi_etc.cli import HANDLERS
from airflow_hudi_etc.contract import COMMANDS, job_argv, read_result, split_job_argv, to_argv, unwrap, write_result
from airflow_hudi_etc.hudi.errors import ArgumentError, TableNotFoundError, error_envelope
from airflow_hudi_etc.spark.jobs import parse_job_argv
from paths import REPO


def test_the_cli_has_a_function_for_every_command_and_no_other():
    sub = next(a for a in contract.build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) == set(COMMANDS) == set(HANDLERS)
    # the commands docs/cli.md documents, as fixed values
    assert set(COMMANDS) == {"init", "configure", "drop-metadata-table", "write", "read", "status", "report", "schedule", "execute",
                             "rollback", "unschedule", "clean", "show-plan", "reset-threshold", "validate", "repair-instant",
                             "pack-env", "py-files", "sync-catalog"}
    assert {c.name for c in COMMANDS.values() if c.spark} == {"write", "schedule", "execute", "rollback", "unschedule",
                                                              "clean", "sync-catalog"}


def test_the_command_line_manual_shows_every_command_and_no_other():
    """docs/cli.md's synopsis has a line ``hudi-etc <command> ...`` for each command."""
    synopsis = (REPO / "docs" / "cli.md").read_text(encoding="utf-8")
    shown = re.findall(r"^hudi-etc ([a-z-]+)", synopsis, flags=re.M)
    assert set(shown) == set(COMMANDS), set(shown) ^ set(COMMANDS)


def test_fixed_argv():
    assert to_argv("schedule", path="/t", data_latency="2h", exact_split=True, event_time_field=None) == [
        "schedule", "--path", "/t", "--data-latency", "2h", "--exact-split"]
    assert to_argv("pack-env", output="e.tar.gz", extra=["s3"]) == ["pack-env", "--output", "e.tar.gz", "--extra", "s3"]
    assert to_argv("clean", path="s3://b/t", retain_commits=3, engine="spark") == [
        "clean", "--path", "s3://b/t", "--retain-commits", "3", "--engine", "spark"]
    assert job_argv("/r.json", ["execute", "--path", "/t"]) == ["--result-file", "/r.json", "execute", "--path", "/t"]
    assert split_job_argv(["--result-file=/r", "validate", "--path", "/t"]) == ("/r", ["validate", "--path", "/t"])
    assert split_job_argv(["validate", "--path", "/t"]) == (None, ["validate", "--path", "/t"])


def _sample(a: contract.Arg):
    if a.type is bool:
        return True
    if a.type is int:
        return 7
    if a.type is list:
        return list((a.choices or ("x",))[:1])
    return a.choices[-1] if a.choices else f"v-{a.name}"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_argument_round_trips_through_the_job_parser(name):
    """Any value of every argument, built into argv by the contract, parses back to that value
    with the Spark job's parser (the CLI's)."""
    c = COMMANDS[name]
    values = {a.name: _sample(a) for a in c.all_args}
    result_file, args, argv = parse_job_argv(job_argv("/tmp/r.json", to_argv(name, **values)))
    assert (result_file, args.command, argv[0]) == ("/tmp/r.json", name, name)
    assert {k: getattr(args, k) for k in values} == values
    # nothing set but the required arguments: the defaults of the definitions
    required = {a.name: _sample(a) for a in c.all_args if a.required}
    args = contract.parse(to_argv(name, **required))
    for a in c.all_args:
        want = required[a.name] if a.required else (False if a.type is bool else
                                                      list(a.default or ()) if a.type is list else a.default)
        assert getattr(args, a.name) == want, a.name


def test_a_caller_out_of_step_with_the_contract_fails_where_it_builds_the_argv():
    with pytest.raises(ValueError, match="no argument"):
        to_argv("schedule", path="/t", data_latncy="2h")
    with pytest.raises(ValueError, match="required"):
        to_argv("schedule", path="/t")
    with pytest.raises(ValueError, match="unknown hudi-etc command"):
        to_argv("compact", path="/t")
    with pytest.raises(ArgumentError, match="unrecognized arguments: --data-latncy"):
        parse_job_argv(["--result-file", "/r", "schedule", "--path", "/t", "--data-latency", "2h",
                        "--data-latncy", "2h"])


def test_result_file_and_error_envelope_are_the_wire_format(tmp_path):
    loc = str(tmp_path / "sub" / "result.json")
    assert read_result(loc) is None
    write_result(loc, {"instant": "20260102000000000", "operations": 2})
    assert unwrap(read_result("file://" + loc)) == {"instant": "20260102000000000", "operations": 2}
    write_result(loc, error_envelope(TableNotFoundError("no Hudi table at /x")))
    with pytest.raises(TableNotFoundError, match="no Hudi table at /x"):
        unwrap(read_result(loc))
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["result.json"]  # no temporary file left
    # a URI goes through fsspec (here its in-memory filesystem), and may be removed after reading
    write_result("memory://hudi-etc-test/r.json", {"status": "completed"})
    assert read_result("memory://hudi-etc-test/r.json", remove=True) == {"status": "completed"}
    assert read_result("memory://hudi-etc-test/r.json") is None
