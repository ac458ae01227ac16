"""The one contract between the command line, the Spark jobs and the Airflow operators.

Every ``hudi-etc`` command is defined once here (:data:`COMMANDS`: name, arguments with their
types, defaults and help, and the type of its result). From these definitions come

* the argument parser of the ``hudi-etc`` CLI *and* of the Spark job
  (:func:`build_parser`; ``airflow_hudi_etc/spark/jobs.py`` parses its argv with it),
* the argv the operators and ``--engine spark`` submit (:func:`to_argv`, keyed by argument name:
  a renamed or removed option is an error where the argv is built, not a failed job later),
* the job's argv prefix ``--result-file F`` (:func:`job_argv` / :func:`split_job_argv`).

The wire format back is the result file alone (:func:`write_result` / :func:`read_result`): one
JSON document, the command's result or the error envelope of
:func:`airflow_hudi_etc.hudi.errors.error_envelope`, which :func:`unwrap` turns back into the
typed error (:func:`~airflow_hudi_etc.hudi.errors.error_from_envelope`).

Storage options (fsspec; S3 ``key``/``secret``/``endpoint_url``/...) travel in the environment
variable ``HUDI_ETC_STORAGE_OPTIONS`` (a JSON object), never on the command line where
credentials would be visible to every user of the machine.

Imports neither Spark nor Airflow nor the Hudi layer (the CLI's ``--help`` stays fast).
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

#: the environment variable holding the fsspec storage options (a JSON object)
STORAGE_OPTIONS_ENV = "HUDI_ETC_STORAGE_OPTIONS"
#: the job's first option: where it writes its result (a local path or any fsspec URI)
RESULT_FILE_FLAG = "--result-file"
#: how the job's one human line on stderr starts (the job prints it, spark-submit's caller passes it on)
SUMMARY_PREFIX = "hudi-etc summary:"


@dataclass(frozen=True)
class Arg:
    """One option ``--<name with dashes>``. ``type``: ``str``, ``int``, ``bool`` (a flag: present =
    true) or ``list`` (repeatable, each value a string)."""

    name: str
    type: type = str
    default: Any = None
    help: str | None = None
    required: bool = False
    choices: tuple[str, ...] | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")


@dataclass(frozen=True)
class Command:
    """``name``: the CLI command; ``result``: the type of its result (the API's class, or
    ``dict``); ``spark``: it can run inside spark-submit (``--engine local|spark`` is added; the
    Spark job accepts it)."""

    name: str
    help: str
    args: tuple[Arg, ...]
    result: str = "dict"
    spark: bool = False

    @property
    def all_args(self) -> tuple[Arg, ...]:
        return self.args + ((ENGINE,) if self.spark else ())

    def arg(self, name: str) -> Arg:
        for a in self.all_args:
            if a.name == name:
                return a
        raise KeyError(name)


ENGINE = Arg("engine", default="local", choices=("local", "spark"),
             help="local: this process; spark: the same command inside spark-submit")
PATH = Arg("path", required=True, help="the table's base path (local or an fsspec URI)")

COMMANDS: dict[str, Command] = {c.name: c for c in (
    Command("init", "create an empty MOR table (table version 6, 8 or 9)", (
        PATH,
        Arg("table_name", required=True),
        Arg("record_key", required=True),
        Arg("precombine_field", required=True),
        Arg("event_time_field", required=True),
        Arg("partition_field"),
        Arg("payload", default="overwrite-latest", choices=("overwrite-latest", "event-time-ordering")),
        Arg("exclusive_cleaner", bool, False,
            "only hudi-etc cleans this table (no Java cleaner): link mode auto may then use symlinks"),
        Arg("table_version", int, 6, "6 (Hudi 0.14/0.15), 8 (Hudi 1.0) or 9 (Hudi 1.1)"),
        Arg("java_compaction", default="off", choices=("on", "off"),
            help="recorded for the new table: off (default): every Java writer runs with its compaction off, "
                 "our execute may run; on: Java's inline/async compaction executes our plans"),
        Arg("partition_urlencode", bool, False,
            "store partition values escaped as Hudi does (hoodie.datasource.write.partitionpath.urlencode=true): "
            "values holding ':', '/', '%XX'... are then readable by Java"),
    ), result="Table"),
    Command("configure", "record a decision about the table once, in .hoodie/.aux/hudi-etc/settings.json (hoodie.etc.*)", (
        PATH,
        Arg("timeline_zone", help="the Java writers' JVM time zone (e.g. Europe/Paris), for a table whose "
                                  "hoodie.table.timeline.timezone is LOCAL or unset; "
                                  "$HUDI_ETC_TIMELINE_TIMEZONE, when set, wins over it"),
        Arg("java_compaction", choices=("on", "off"),
            help="on: Java's inline/async compaction executes our plans; off: it is off on every Java writer "
                 "(our execute may run)"),
        Arg("hoodie", list, (), "KEY=VALUE, repeatable: a Hudi write setting of the table's Java writers that our "
                                "commands share (hoodie.write.concurrency.mode, hoodie.write.lock.provider, "
                                "hoodie.write.lock.*, hoodie.cleaner.policy.failed.writes, the bucket index: "
                                "hoodie.index.type=BUCKET, hoodie.bucket.index.*, ...); KEY= removes it"),
    )),
    Command("drop-metadata-table", "drop the Hudi metadata table as a Java writer with hoodie.metadata.enable=false does",
            (PATH,)),
    Command("write", "upsert or delete a batch (one deltacommit)", (
        PATH,
        Arg("input", required=True, help=".parquet or .jsonl file"),
        Arg("operation", default="upsert", choices=("upsert", "delete")),
    ), result="WriteResult", spark=True),
    Command("read", "read the table into a parquet file (meta columns included)", (
        PATH,
        Arg("read_optimized", bool, False),
        Arg("as_of"),
        Arg("incremental_start", help="an incremental read: records committed after this instant "
                                      "(the --as-of formats, or 000 for the beginning)"),
        Arg("incremental_end", help="with --incremental-start: up to this instant (default: the latest)"),
        Arg("output", required=True),
    ), result="pyarrow.Table"),
    Command("status", "timeline, pending plans, logs per slice, min event time", (
        PATH,
        Arg("json", bool, False, "JSON instead of the readable table"),
        Arg("sla", help="warn when the threshold lag exceeds this (e.g. 6h)"),
    ), result="TableStatus"),
    Command("report", "freshness chart (PNG) and HTML page, built from the timeline", (
        PATH,
        Arg("output", required=True, help="directory for freshness.png and index.html"),
        Arg("sla", help="draw this lag limit (e.g. 6h)"),
    )),
    Command("schedule", "plan an event-time partial compaction", (
        PATH,
        Arg("data_latency", required=True, help="e.g. 30m, 2h, PT2H"),
        Arg("compaction_time", help="ISO-8601 (default: now, UTC)"),
        Arg("link_mode", default="auto", choices=("auto", "copy", "symlink")),
        Arg("exact_split", bool, False,
            "records after the threshold stay out of the base file (RO holds exactly <= threshold)"),
        Arg("event_time_field", help="event-time column, for tables whose properties name none"),
    ), result="ScheduleResult", spark=True),
    Command("execute", "run a planned compaction; prints its metrics", (
        PATH,
        Arg("instant", help="default: the pending compaction (or the last completed: a no-op)"),
    ), result="CompactionResult", spark=True),
    Command("rollback", "undo a failed or inflight execution (plan stays requested)", (
        PATH, Arg("instant", required=True),
    ), result="CompactionResult", spark=True),
    Command("unschedule", "remove a requested plan", (
        PATH, Arg("instant", required=True),
    ), result="CompactionResult", spark=True),
    Command("clean", "delete file slices older than the last N commits (link targets kept)", (
        PATH, Arg("retain_commits", int, 10),
    ), spark=True),
    Command("show-plan", "a compaction plan as JSON", (PATH, Arg("instant", required=True))),
    Command("reset-threshold", "lower a threshold published by mistake (then sync-catalog)", (
        PATH,
        Arg("to", help="ISO-8601 (default: the compaction's instant time minus its data latency)"),
        Arg("instant", help="the compaction whose threshold is lowered (default: the latest)"),
    )),
    Command("validate", "plan vs storage: dangling links, orphan files, broken plans", (PATH,),
            result="ValidationReport"),
    Command("repair-instant", "rewrite a 0-byte completed commit file as the empty commit readers take it for", (
        PATH, Arg("instant", required=True),
    )),
    Command("pack-env", "a packed virtualenv of the executors' dependencies, for spark.archives", (
        Arg("output", required=True, help="the .tar.gz to write"),
        Arg("extra", list, (), "add an extra's dependencies", choices=("s3",)),
        Arg("python", help="base interpreter of the venv (default: this one's); must exist on every worker"),
    )),
    Command("py-files", "path of the cached zip of this package (what --engine spark ships)", ()),
    Command("sync-catalog", "publish the RO threshold as table properties in the Hive metastore", (
        PATH,
        Arg("database", default="default"),
        Arg("table", required=True, help="base name: registers <table>_ro and <table>_rt"),
        Arg("metastore_uri", help="thrift://host:9083 (default: embedded Derby metastore)"),
        Arg("metastore_dir", help="directory of the embedded Derby metastore"),
        Arg("warehouse_dir", help="spark.sql.warehouse.dir"),
    ), spark=True),
)}


# ----------------------------------------------------------------------------- parsing
class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse prints usage text and exits 2: a typed error instead
        from .hudi.errors import ArgumentError

        raise ArgumentError(f"{self.prog}: {message}")


def _add(p: argparse.ArgumentParser, a: Arg) -> None:
    kw: dict[str, Any] = {"help": a.help, "dest": a.name}
    if a.type is bool:
        p.add_argument(a.flag, action="store_true", **kw)
        return
    if a.type is list:
        kw.update(action="append", default=list(a.default or ()))
    else:
        kw.update(default=a.default, required=a.required)
        if a.type is not str:
            kw["type"] = a.type
    if a.choices:
        kw["choices"] = list(a.choices)
    p.add_argument(a.flag, **kw)


def build_parser(prog: str = "hudi-etc") -> argparse.ArgumentParser:
    """The parser of every command (``args.command`` names it); errors raise ``ArgumentError``."""
    p = _Parser(prog=prog, description="Event-time compaction for Hudi MOR tables")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for c in COMMANDS.values():
        s = sub.add_parser(c.name, help=c.help)
        for a in c.all_args:
            _add(s, a)
    return p


def parse(argv: Sequence[Any]) -> argparse.Namespace:
    return build_parser().parse_args([str(x) for x in argv])


# ----------------------------------------------------------------------------- building argv
def to_argv(command: str, **values: Any) -> list[str]:
    """The argv of ``command`` with these argument values (by argument name, as in
    :data:`COMMANDS`). ``None`` and ``False`` leave an option out; ``True`` sets a flag; a list
    repeats the option. An unknown command or argument name is a ``ValueError`` (a caller out
    of step with the contract), as is a missing required argument."""
    c = COMMANDS.get(command)
    if c is None:
        raise ValueError(f"unknown hudi-etc command {command!r}")
    known = {a.name: a for a in c.all_args}
    unknown = sorted(set(values) - set(known))
    if unknown:
        raise ValueError(f"hudi-etc {command} has no argument(s) {unknown}: it takes {sorted(known)}")
    argv = [command]
    for name, a in known.items():
        v = values.get(name)
        if v is None or v is False:
            if a.required:
                raise ValueError(f"hudi-etc {command}: argument {name!r} is required")
            continue
        if a.type is bool:
            argv.append(a.flag)
        elif a.type is list:
            for x in v:
                argv += [a.flag, str(x)]
        else:
            argv += [a.flag, str(v)]
    return argv


def job_argv(result_file: str, cli_argv: Sequence[Any]) -> list[str]:
    """The Spark job's argv: ``--result-file F <command> <args>``."""
    return [RESULT_FILE_FLAG, str(result_file), *[str(x) for x in cli_argv]]


def split_job_argv(argv: Sequence[str]) -> tuple[str | None, list[str]]:
    """``[--result-file F] <command> ...`` → (F, the command's argv)."""
    argv = list(argv)
    if argv and argv[0] == RESULT_FILE_FLAG:
        return (argv[1] if len(argv) > 1 else None), argv[2:]
    if argv and argv[0].startswith(RESULT_FILE_FLAG + "="):
        return argv[0].split("=", 1)[1], argv[1:]
    return None, argv


# ----------------------------------------------------------------------------- the result file
def _remote(location: str) -> bool:
    return "://" in location and not location.startswith("file://")


def _local(location: str) -> str:
    return location[len("file://"):] if location.startswith("file://") else location


def write_result(location: str, doc: Mapping[str, Any], storage_options: Mapping[str, Any] | None = None) -> str:
    """Write the result (or error envelope) document; a local file is replaced atomically.
    Returns the JSON text."""
    text = json.dumps(doc, default=str)
    if _remote(location):
        import fsspec

        with fsspec.open(location, "w", **dict(storage_options or {})) as f:  # cluster deploy mode
            f.write(text)
        return text
    path = _local(location)
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".result-")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    os.replace(tmp, path)
    return text


def read_result(location: str, storage_options: Mapping[str, Any] | None = None, *,
                remove: bool = False) -> dict | None:
    """The document the job wrote, or None when there is none; ``remove``: delete a remote one
    after reading (local files live in a temporary folder the caller removes)."""
    if _remote(location):
        import fsspec

        fs, p = fsspec.core.url_to_fs(location, **dict(storage_options or {}))
        if not fs.exists(p):
            return None
        with fs.open(p, "r") as f:
            text = f.read()
        if remove:
            try:
                fs.rm(p)
            except Exception:  # noqa: BLE001 - a leftover result file is harmless
                pass
    else:
        path = _local(location)
        if not os.path.exists(path):
            return None
        with open(path) as f:
            text = f.read()
    return json.loads(text)


def unwrap(doc: Mapping[str, Any]) -> dict:
    """The result, or the job's typed error raised as if here (the error envelope)."""
    if "error" in doc:
        from .hudi.errors import error_from_envelope

        raise error_from_envelope(doc["error"])
    return dict(doc)


# ----------------------------------------------------------------------------- storage options
def storage_options_from_env(environ: Mapping[str, str] | None = None) -> dict:
    """The fsspec storage options in ``$HUDI_ETC_STORAGE_OPTIONS`` (a JSON object), or {}."""
    from .hudi.errors import InvalidInputError

    text = (os.environ if environ is None else environ).get(STORAGE_OPTIONS_ENV, "").strip()
    if not text:
        return {}
    try:
        opts = json.loads(text)
    except ValueError as e:  # never echo the text: it holds credentials
        raise InvalidInputError(f"{STORAGE_OPTIONS_ENV} is not valid JSON (line {getattr(e, 'lineno', '?')}, "
                                f"column {getattr(e, 'colno', '?')})") from None
    if not isinstance(opts, dict):
        raise InvalidInputError(f"{STORAGE_OPTIONS_ENV} must be a JSON object of fsspec storage options, "
                                f"not {type(opts).__name__}")
    return opts


# ----------------------------------------------------------------------------- Hudi write settings
def hoodie_conf_env(conf: Mapping[str, Any], where: str) -> dict[str, str]:
    """The environment entry that passes a run's Hudi write settings to its job
    (``$HUDI_ETC_HOODIE_CONF``, a JSON object), every key checked to be a Hudi write setting this
    product takes (typed refusal naming ``where`` and the others) before anything is submitted."""
    from .hudi.concurrency.write_config import ENV_CONF, check_keys

    return {ENV_CONF: json.dumps(check_keys(conf, where))}
