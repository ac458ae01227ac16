"""Paths from table files never leave the table; spark-submit gets an argument list; no secrets
in what we print.

A plan, commit, clean plan or marker is a file anyone with write access to the table can put
there. Whatever path such a file names (``..``, absolute, another scheme, ``.hoodie`` itself),
every command must refuse it with :class:`UnsafePathError` (a broken plan: a typed timeline error)
and leave every file, inside and outside the table, as it was.
"""

from __future__ import annotations

import io
import json
import os
import pickle
import stat
import sys
from pathlib import Path

import fastavro
import pytest

from airflow_hudi_etc.cli import main as cli_main
from airflow_hudi_etc.hudi.protocol import plan as plan_mod
from airflow_hudi_etc.compaction.execution import CompactTask, execute
from airflow_hudi_etc.compaction.plans import read_plan
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.compaction.validate import validate
from airflow_hudi_etc.hudi.timeline import avro_models as am
from airflow_hudi_etc.hudi.errors import UnsafePathError
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.table.hudi_table import HudiTable
from airflow_hudi_etc.hudi.write.writer import write_batch
from scenario import COMPACTION_TIME, LATENCY, build, clone
from tests_digest import tree_digest
from batches import batch as _batch


def run_cli(capsys, *args):
    rc = cli_main([str(a) for a in args])
    cap = capsys.readouterr()
    return rc, json.loads(cap.out), cap.err


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """A table with a pending partial-compaction plan that has link operations."""
    sc = build(tmp_path_factory.mktemp("sec"), 4, exact=False, link_mode="symlink")
    rows = sc.w1_rows()
    write_batch(str(sc.path), _batch(rows))
    sc.applied(rows, before_plan=True)
    res = schedule(str(sc.path), data_latency=LATENCY, compaction_time=COMPACTION_TIME, link_mode="symlink")
    assert res.instant
    return sc, res.instant


@pytest.fixture
def victim(tmp_path):
    """A file outside the table that nothing may touch."""
    d = tmp_path / "outside"
    d.mkdir()
    f = d / "victim"
    f.write_bytes(b"precious")
    return f


def outside_intact(victim: Path) -> bool:
    return victim.exists() and victim.read_bytes() == b"precious"


# ------------------------------------------------------------------ compaction plans
UNSAFE_PLAN_EDITS = [
    ("partitionPath", "../outside"),
    ("partitionPath", "/etc"),
    ("partitionPath", "s3://other-bucket/table"),
    ("partitionPath", "file:///etc"),
    ("partitionPath", ".hoodie"),
    ("dataFilePath", "../../outside/victim"),
    ("dataFilePath", "/etc/passwd"),
    ("deltaFilePaths", "../outside/victim"),
    ("deltaFilePaths", "file:///etc/passwd"),
    ("link", "../../outside/victim"),
    ("target", "/etc/passwd"),
    ("target", "s3://other-bucket/x.log.1_0-1-0"),
]


def plant_plan(path: Path, instant: str, field: str, value: str) -> None:
    """Rewrite the pending plan (timeline file and .aux copy) with one unsafe value."""
    f = path / ".hoodie" / f"{instant}.compaction.requested"
    rec = next(iter(fastavro.reader(io.BytesIO(f.read_bytes()))))
    op = next(o for o in rec["operations"] if o.get("linkOperations")) if field in ("link", "target") \
        else rec["operations"][0]
    if field == "deltaFilePaths":
        op[field] = list(op[field] or []) + [value]
    elif field in ("link", "target"):
        op["linkOperations"][0][field] = value
    else:
        op[field] = value
    buf = io.BytesIO()
    fastavro.writer(buf, plan_mod.COMPACTION_PLAN, [rec], codec="null")
    for g in (f, path / ".hoodie" / ".aux" / f.name):
        g.chmod(stat.S_IWUSR | stat.S_IRUSR)
        g.write_bytes(buf.getvalue())


@pytest.mark.parametrize("field,value", UNSAFE_PLAN_EDITS, ids=[f"{f}={v}" for f, v in UNSAFE_PLAN_EDITS])
def test_a_plan_naming_a_path_outside_the_table_is_refused_by_every_command(planned, tmp_path, capsys, victim,
                                                                              field, value):
    sc0, instant = planned
    sc = clone(sc0, tmp_path)
    p = sc.path
    plant_plan(p, instant, field, value)
    batch = tmp_path / "b.parquet"
    import pyarrow.parquet as pq

    pq.write_table(_batch(sc.w2_rows()), batch)
    before = tree_digest(p)
    commands = [
        ("execute", "--path", p),
        ("execute", "--path", p, "--instant", instant),
        ("rollback", "--path", p, "--instant", instant),
        ("unschedule", "--path", p, "--instant", instant),
        ("show-plan", "--path", p, "--instant", instant),
        ("clean", "--path", p, "--retain-commits", 1),
        ("write", "--path", p, "--input", batch),
        ("schedule", "--path", p, "--data-latency", LATENCY, "--compaction-time", COMPACTION_TIME,
         "--link-mode", "symlink"),
    ]
    for args in commands:
        rc, out, _err = run_cli(capsys, *args)
        assert rc == 2 and out["error"]["type"] == "UnsafePathError", (args[0], out)
        assert tree_digest(p) == before, f"{args[0]} changed the table"
    rc, out, _ = run_cli(capsys, "validate", "--path", p)
    assert rc == 0 and not out["ok"]
    assert [x["kind"] for x in out["problems"]] == ["broken-plan"] and "compaction plan" in out["problems"][0]["detail"]
    assert tree_digest(p) == before and outside_intact(victim)


def test_plan_names_must_be_files_of_their_own_file_group(planned, tmp_path):
    """Inside the table but not a log/base file of the operation's group: refused as a broken plan."""
    sc0, instant = planned
    sc = clone(sc0, tmp_path)
    plant_plan(sc.path, instant, "deltaFilePaths", ".hoodie_partition_metadata")
    from airflow_hudi_etc.hudi.errors import InvalidTimelineError

    before = tree_digest(sc.path)
    with pytest.raises(InvalidTimelineError, match="not a log file of that file group"):
        execute(str(sc.path))
    assert tree_digest(sc.path) == before


def test_a_planted_symlink_out_of_the_table_is_not_read_by_execute(planned, tmp_path, victim):
    sc0, instant = planned
    sc = clone(sc0, tmp_path)
    plan = read_plan(HudiTable.load(str(sc.path)), instant)
    op = next(o for o in plan.operations if o.compact_logs)
    log = sc.path / op.path(op.compact_logs[0])
    log.unlink()
    log.symlink_to(os.path.relpath(victim, log.parent))
    before = tree_digest(sc.path)
    with pytest.raises(UnsafePathError):
        execute(str(sc.path))
    assert tree_digest(sc.path) == before and outside_intact(victim)
    report = validate(str(sc.path))
    assert "link-outside-table" in {x["kind"] for x in report["problems"]}


# ------------------------------------------------------------------ commits, clean plans, markers
def test_commit_link_operations_outside_the_table_are_only_reported(planned, tmp_path, victim):
    """A completed compaction whose commit names outside paths: readers use these names only to
    leave files out of incremental reads, validate reports them, nothing opens or deletes them."""
    sc0, instant = planned
    sc = clone(sc0, tmp_path)
    assert execute(str(sc.path))["status"] == "completed"
    f = sc.path / ".hoodie" / f"{instant}.commit"
    meta = json.loads(f.read_text())
    evil = [{"link": "../outside/victim", "target": "/etc/passwd"}, {"link": "file:///etc/passwd", "target": None}]
    meta["extraMetadata"]["hoodie.etc.link.operations"] = json.dumps(evil)
    f.write_text(json.dumps(meta))
    before = tree_digest(sc.path)
    t = HudiTable.load(str(sc.path))
    assert HudiTable.carried_over_files(t.commit_metadata(instant)) == ["../outside/victim", "file:///etc/passwd"]
    t.read()
    t.read_incremental(t.timeline.completed_writes[0].timestamp)
    report = validate(str(sc.path))
    assert [x["kind"] for x in report["problems"]] == ["unsafe-path", "unsafe-path"]
    assert tree_digest(sc.path) == before and outside_intact(victim)
    from airflow_hudi_etc.compaction.clean import clean

    clean(str(sc.path), retain_commits=1)  # plans from the file-system view, never from commit paths
    assert outside_intact(victim)


@pytest.mark.parametrize("evil", ["outside", "traversal", "scheme", "metadata"])
def test_a_clean_plan_naming_outside_files_deletes_nothing(planned, tmp_path, victim, evil):
    sc0, instant = planned
    sc = clone(sc0, tmp_path)
    assert execute(str(sc.path))["status"] == "completed"
    base = str(sc.path)
    legit = next(p for p in sc.path.rglob("*.parquet"))
    bad = {"outside": str(victim), "traversal": f"{base}/../outside/victim", "scheme": "s3://other-bucket/t/x.parquet",
           "metadata": f"{base}/.hoodie/hoodie.properties"}[evil]
    plan = am.cleaner_plan(("00000000000000000", "commit"), "KEEP_LATEST_COMMITS",
                           {legit.parent.name: [str(legit), bad]}, last_completed_commit_timestamp=instant)
    (sc.path / ".hoodie" / "20990101000000000.clean.requested").write_bytes(am.write_avro_metadata(am.CLEANER_PLAN, plan))
    before = tree_digest(sc.path)
    from airflow_hudi_etc.compaction.clean import clean

    with pytest.raises(UnsafePathError):
        clean(str(sc.path), retain_commits=1)
    assert tree_digest(sc.path) == before and legit.exists() and outside_intact(victim)


@pytest.mark.parametrize("marker", ["..%2F..%2Foutside%2Fvictim.marker.CREATE", ".hoodie%2Fhoodie.properties.marker.CREATE",
                                    "%2Fetc%2Fpasswd.marker.CREATE"])
def test_a_planted_marker_makes_no_rollback_delete_anything(planned, tmp_path, capsys, victim, marker):
    sc0, _ = planned
    sc = clone(sc0, tmp_path)
    dead = "20990101000000000"
    (sc.path / ".hoodie" / f"{dead}.deltacommit.requested").write_bytes(b"")
    mdir = sc.path / ".hoodie" / ".temp" / dead
    mdir.mkdir(parents=True)
    (mdir / marker).write_bytes(b"")
    before = tree_digest(sc.path)
    rc, out, _ = run_cli(capsys, "rollback", "--path", sc.path, "--instant", dead)
    assert rc == 2 and out["error"]["type"] == "UnsafePathError"
    with pytest.raises(UnsafePathError):
        write_batch(str(sc.path), _batch(sc.w2_rows()))  # the next writer's eager rollback refuses too
    assert tree_digest(sc.path) == before and outside_intact(victim)


@pytest.mark.parametrize("instant", ["../../outside/victim", "/etc/passwd", "2026*", "s3://x/y"])
def test_instant_arguments_are_instant_times(planned, tmp_path, capsys, instant):
    sc0, _ = planned
    sc = clone(sc0, tmp_path)
    before = tree_digest(sc.path)
    for cmd in ("rollback", "unschedule"):
        rc, out, _ = run_cli(capsys, cmd, "--path", sc.path, "--instant", instant)
        assert rc == 2 and out["error"]["code"] == "invalid_input", out
    assert tree_digest(sc.path) == before


# ------------------------------------------------------------------ spark-submit: an argument list
FAKE_SPARK_SUBMIT = """#!{python}
import json, os, sys
with open(os.environ["FAKE_SPARK_ARGV_FILE"], "w") as f:
    json.dump(sys.argv[1:], f)
args = sys.argv[1:]
result = args[args.index("--result-file") + 1]
with open(result, "w") as f:
    json.dump({{"ran": True}}, f)
"""


def test_spark_submit_gets_its_arguments_as_a_list(tmp_path, monkeypatch):
    """A fake ``spark-submit`` on PATH records its argv: every argument arrives whole, shell
    metacharacters unexpanded (no shell in between)."""
    from airflow_hudi_etc.spark import spark_submit

    fake_bin = tmp_path / "bin"
    fake_bin.mkdir()
    exe = fake_bin / "spark-submit"
    exe.write_text(FAKE_SPARK_SUBMIT.format(python=sys.executable))
    exe.chmod(0o755)
    record = tmp_path / "argv.json"
    monkeypatch.setenv("PATH", f"{fake_bin}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_SPARK_ARGV_FILE", str(record))
    # the venv's own spark-submit (next to the interpreter) comes first: look from elsewhere
    monkeypatch.setattr(sys, "executable", str(tmp_path / "nowhere" / "python"))
    sentinel = tmp_path / "pwned"
    hostile = f"/tmp/a b; touch {sentinel} $(touch {sentinel}) `touch {sentinel}` | & > <'\"*"
    argv = ["execute", "--path", hostile, "--instant", "20260101000000000"]
    out = spark_submit.run_job(argv, master="local[1]", conf={"spark.x": "a b;c"})
    assert out == {"ran": True}
    got = json.loads(record.read_text())
    assert got[:2] == ["--master", "local[1]"]
    assert "spark.x=a b;c" in got
    i = got.index(spark_submit.JOB_SCRIPT)
    assert got[i + 1] == "--result-file" and got[i + 3:] == argv
    assert not sentinel.exists()


# ------------------------------------------------------------------ no credentials in output
SECRET = "S3CR3T-do-not-print"


def test_storage_options_never_show_in_reprs_or_errors(tmp_path):
    st = Storage(str(tmp_path / "none"), {"key": "AKIAEXAMPLE", "secret": SECRET, "client_kwargs": {"token": SECRET}})
    for text in (repr(st), str(st), f"{st}", repr([st])):
        assert SECRET not in text and "AKIAEXAMPLE" not in text
    # a task description (shipped to Spark, shown in its logs and errors) inherits it
    from airflow_hudi_etc.hudi.protocol.plan import Operation

    task = CompactTask(st, "20260101000000000", Operation("", "f-0", "1", None, ()), 0, "copy", "{}")
    assert SECRET not in repr(task)
    # the options still travel with the object (pickled to executors)
    assert pickle.loads(pickle.dumps(st)).options["secret"] == SECRET
    with pytest.raises(Exception) as e:
        HudiTable.load(st)
    assert SECRET not in str(e.value) and SECRET not in repr(e.value)
    assert "***@" in repr(Storage("s3://user:" + SECRET + "@bucket/t"))
    assert SECRET not in repr(Storage("s3://user:" + SECRET + "@bucket/t"))


def test_cli_output_and_errors_carry_no_credentials_from_the_environment(planned, tmp_path, capsys, monkeypatch):
    sc0, instant = planned
    sc = clone(sc0, tmp_path)
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAEXAMPLE")
    outs = []
    for args in (("status", "--path", sc.path, "--json"), ("show-plan", "--path", sc.path, "--instant", instant),
                 ("validate", "--path", sc.path), ("status", "--path", tmp_path / "missing"),
                 ("execute", "--path", sc.path), ("clean", "--path", sc.path, "--retain-commits", 1)):
        cli_main([str(a) for a in args])
        cap = capsys.readouterr()
        outs.append(cap.out + cap.err)
    for text in outs:
        assert SECRET not in text and "AKIAEXAMPLE" not in text


def test_a_marker_naming_no_data_file_deletes_only_itself(planned, tmp_path, capsys):
    """Inside the table but not a base or log file (e.g. partition metadata; or Java's
    timeline-server ``MARKERS`` files): the rollback removes the marker and nothing else."""
    sc0, _ = planned
    sc = clone(sc0, tmp_path)
    dead = "20990101000000000"
    (sc.path / ".hoodie" / f"{dead}.deltacommit.requested").write_bytes(b"")
    mdir = sc.path / ".hoodie" / ".temp" / dead
    mdir.mkdir(parents=True)
    (mdir / "region=a%2F.hoodie_partition_metadata.marker.CREATE").write_bytes(b"")
    (mdir / "MARKERS.type").write_bytes(b"DIRECT")
    keep = sc.path / "region=a" / ".hoodie_partition_metadata"
    assert keep.exists()
    rc, out, _ = run_cli(capsys, "rollback", "--path", sc.path, "--instant", dead)
    assert rc == 0 and out["status"] == "rolled back" and out["files_removed"] == 0
    assert keep.exists() and not mdir.exists()  # the marker folder goes, as Java removes it


# ------------------------------------------------------------------ planted links under .hoodie/
#: folders under ``.hoodie/`` a link may be planted at ({C}: the pending compaction's instant)
META_LINKS = (".hoodie/.temp/{C}", ".hoodie/.temp", ".hoodie/.heartbeat", ".hoodie/.aux", ".hoodie/metadata",
              ".hoodie/archived", ".hoodie/.temp/{C}/region=a")
#: every mutating command ({C}: the pending compaction; {IN}: a batch to write)
MUTATING = (("execute", "--instant", "{C}"), ("write", "--input", "{IN}"), ("rollback", "--instant", "{C}"),
            ("unschedule", "--instant", "{C}"), ("clean", "--retain-commits", "1"),
            ("schedule", "--data-latency", LATENCY, "--compaction-time", COMPACTION_TIME, "--link-mode", "copy"),
            ("drop-metadata-table",))


def _outside_folder(d: Path, instant: str) -> Path:
    """A folder outside the table full of files, some named as markers, data files and heartbeats."""
    d.mkdir()
    for name in ("victim", instant, f"{instant}.marker.CREATE", "region=a%2Fx.parquet.marker.CREATE",
                 ".f1_20260101000000000.log.1_0-1-0", "f1_0-1-0_20260101000000000.parquet"):
        (d / name).write_bytes(b"precious " + name.encode())
    (d / "sub").mkdir()
    (d / "sub" / "deep.marker.CREATE").write_bytes(b"precious deep")
    return d


def _folder_digest(d: Path) -> dict:
    return {str(p.relative_to(d)): (p.read_bytes() if p.is_file() else None) for p in sorted(d.rglob("*"))}


@pytest.mark.parametrize("where", META_LINKS)
@pytest.mark.parametrize("command", MUTATING, ids=[c[0] for c in MUTATING])
def test_a_link_planted_under_hoodie_is_never_followed(planned, tmp_path, capsys, where, command):
    """``.hoodie/.temp/<C>`` (or any folder under ``.hoodie/``) a symlink to a folder outside the
    table: every mutating command refuses with ``unsafe_path``, nothing outside the table is
    touched, and nothing in the table is written."""
    sc0, instant = planned
    sc = clone(sc0, tmp_path)
    outside = _outside_folder(tmp_path / "outside", instant)
    want_outside = _folder_digest(outside)
    link = sc.path / where.format(C=instant)
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_dir():
        import shutil

        shutil.rmtree(link)
    link.symlink_to(outside, target_is_directory=True)
    inp = tmp_path / "in.parquet"
    import pyarrow.parquet as pq

    pq.write_table(_batch(sc.w2_rows()), inp)
    before = tree_digest(sc.path)
    args = [a.format(C=instant, IN=inp) for a in command]
    rc, out, err = run_cli(capsys, args[0], "--path", sc.path, *args[1:])
    assert _folder_digest(outside) == want_outside
    assert rc == 2 and out["error"]["code"] == "unsafe_path", (out, err)
    assert "symbolic link" in out["error"]["message"]
    assert tree_digest(sc.path) == before


@pytest.mark.parametrize("op", ["create_if_absent", "write_atomic", "create_streamed", "delete", "mkdirs", "touch",
                                "remove_empty_dir", "copy", "symlink", "list", "list_names", "list_dirs",
                                "list_entry_names", "list_names_and_dirs", "walk_files"])
def test_storage_changes_nothing_through_a_linked_folder(tmp_path, op):
    """The storage layer itself (whatever command calls it): a create, replace, delete, folder
    made or removed through a linked folder, or a listing under ``.hoodie/`` through one, is an
    ``unsafe_path`` refusal, and the folder the link points to is left as it was."""
    table = tmp_path / "t"
    (table / ".hoodie").mkdir(parents=True)
    (table / "region=a").mkdir()
    (table / "region=a" / "f.log").write_bytes(b"mine")
    outside = _outside_folder(tmp_path / "outside", "20260101000000000")
    (outside / "empty").mkdir()
    want = _folder_digest(outside)
    (table / ".hoodie" / ".aux").symlink_to(outside, target_is_directory=True)
    st = Storage(str(table))
    calls = {
        "create_if_absent": lambda: st.create_if_absent(".hoodie/.aux/new", b"x"),
        "write_atomic": lambda: st.write_atomic(".hoodie/.aux/victim", b"x"),
        "create_streamed": lambda: st.create_streamed(".hoodie/.aux/new").__enter__(),
        "delete": lambda: st.delete(".hoodie/.aux/victim"),
        "mkdirs": lambda: st.mkdirs(".hoodie/.aux/sub/more"),
        "touch": lambda: st.touch(".hoodie/.aux/victim"),
        "remove_empty_dir": lambda: st.remove_empty_dir(".hoodie/.aux/empty"),
        "copy": lambda: st.copy("region=a/f.log", ".hoodie/.aux/copy"),
        "symlink": lambda: st.symlink("region=a/f.log", ".hoodie/.aux/link"),
        "list": lambda: st.list(".hoodie/.aux"),
        "list_names": lambda: st.list_names(".hoodie/.aux"),
        "list_dirs": lambda: st.list_dirs(".hoodie/.aux"),
        "list_entry_names": lambda: st.list_entry_names(".hoodie/.aux/sub"),
        "list_names_and_dirs": lambda: st.list_names_and_dirs(".hoodie/.aux"),
        "walk_files": lambda: list(st.walk_files(".hoodie/.aux")),
    }
    with pytest.raises(UnsafePathError, match="symbolic link"):
        calls[op]()
    assert _folder_digest(outside) == want
    assert st.links_below(".hoodie") == [".hoodie/.aux"]
