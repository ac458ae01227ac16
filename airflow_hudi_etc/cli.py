"""The ``hudi-etc`` command. Every command prints one JSON document on stdout.

Errors print ``{"error": {"code", "type", "message"}}`` on stdout, the message on stderr, and
exit with status 2 (bad input / refused) or 1 (unexpected failure).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from .hudi.errors import HudiEtcError


def _out(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


def cmd_init(a) -> dict:
    from .hudi.writer import init_table

    return init_table(
        a.path,
        table_name=a.table_name,
        record_key=a.record_key,
        precombine_field=a.precombine_field,
        event_time_field=a.event_time_field,
        partition_field=a.partition_field,
        payload=a.payload,
    )


def cmd_write(a) -> dict:
    if a.engine == "spark":
        from .spark_submit import run_job

        return run_job("write", ["--path", a.path, "--input", a.input, "--operation", a.operation])
    from .hudi.writer import read_input, write_batch

    res = write_batch(a.path, read_input(a.input), operation=a.operation)
    return {**res.as_dict(), "engine": "local"}


def cmd_read(a) -> dict:
    import pyarrow.parquet as pq

    from .hudi.table import HudiTable

    t = HudiTable.load(a.path)
    data = t.read(read_optimized=a.read_optimized, as_of=a.as_of)
    pq.write_table(data, a.output)
    return {
        "rows": data.num_rows,
        "output": a.output,
        "query": "read_optimized" if a.read_optimized else "snapshot",
        "as_of": a.as_of,
    }


def cmd_status(a) -> dict:
    from .hudi.stats import table_status
    from .hudi.table import HudiTable

    return table_status(HudiTable.load(a.path))


def cmd_schedule(a) -> dict:
    from .compaction.service import schedule

    return schedule(a.path, data_latency=a.data_latency, compaction_time=a.compaction_time,
                    link_mode=a.link_mode).as_dict()


def cmd_execute(a) -> dict:
    from .compaction.service import execute

    return execute(a.path, instant=a.instant)


def cmd_rollback(a) -> dict:
    from .compaction.service import rollback

    return rollback(a.path, instant=a.instant)


def cmd_unschedule(a) -> dict:
    from .compaction.service import unschedule

    return unschedule(a.path, instant=a.instant)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hudi-etc", description="Event-time compaction for Hudi MOR tables")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("init", help="create an empty table-version-6 MOR table")
    s.add_argument("--path", required=True)
    s.add_argument("--table-name", required=True)
    s.add_argument("--record-key", required=True)
    s.add_argument("--precombine-field", required=True)
    s.add_argument("--event-time-field", required=True)
    s.add_argument("--partition-field")
    s.add_argument("--payload", default="overwrite-latest", choices=["overwrite-latest", "event-time-ordering"])
    s.set_defaults(fn=cmd_init)

    s = sub.add_parser("write", help="upsert or delete a batch (one deltacommit)")
    s.add_argument("--path", required=True)
    s.add_argument("--input", required=True, help=".parquet or .jsonl file")
    s.add_argument("--operation", default="upsert", choices=["upsert", "delete"])
    s.add_argument("--engine", default="local", choices=["local", "spark"])
    s.set_defaults(fn=cmd_write)

    s = sub.add_parser("read", help="read the table into a parquet file (meta columns included)")
    s.add_argument("--path", required=True)
    s.add_argument("--read-optimized", action="store_true")
    s.add_argument("--as-of")
    s.add_argument("--output", required=True)
    s.set_defaults(fn=cmd_read)

    s = sub.add_parser("status", help="timeline, pending plans, logs per slice, min event time")
    s.add_argument("--path", required=True)
    s.add_argument("--json", action="store_true", help="JSON output (the default for now)")
    s.set_defaults(fn=cmd_status)

    s = sub.add_parser("schedule", help="plan an event-time partial compaction")
    s.add_argument("--path", required=True)
    s.add_argument("--data-latency", required=True, help="e.g. 30m, 2h, PT2H")
    s.add_argument("--compaction-time", help="ISO-8601 (default: now, UTC)")
    s.add_argument("--link-mode", default="auto", choices=["auto", "copy", "symlink"])
    s.set_defaults(fn=cmd_schedule)

    s = sub.add_parser("execute", help="run a planned compaction (local engine)")
    s.add_argument("--path", required=True)
    s.add_argument("--instant")
    s.set_defaults(fn=cmd_execute)

    for name, fn in (("rollback", cmd_rollback), ("unschedule", cmd_unschedule)):
        s = sub.add_parser(name)
        s.add_argument("--path", required=True)
        s.add_argument("--instant", required=True)
        s.set_defaults(fn=fn)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        _out(args.fn(args))
        return 0
    except HudiEtcError as e:
        _out({"error": {"code": e.code, "type": type(e).__name__, "message": str(e)}})
        print(f"hudi-etc: {type(e).__name__}: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
