"""The ``hudi-etc`` command. Every command prints one JSON document on stdout.

Errors print ``{"error": {"code", "type", "message"}}`` on stdout, the message on stderr, and
exit with status 2 (bad input / refused) or 1 (unexpected failure).

A thin client of :class:`airflow_hudi_etc.api.Table`: the commands and their arguments are those
of :mod:`airflow_hudi_etc.contract` (the Spark job and the operators use the same definitions);
each command is argument → API call (:mod:`airflow_hudi_etc.commands`, the handlers the Spark job
runs too) → printed result.

Storage options (fsspec; e.g. S3 ``key``/``secret``/``endpoint_url``/``client_kwargs``) come from
the environment variable ``HUDI_ETC_STORAGE_OPTIONS``, a JSON object — not from the command line,
where credentials would be visible to every user of the machine. Without it the filesystem's
defaults apply (S3: the ``AWS_*`` variables, profiles, instance roles). ``--engine spark`` jobs
inherit the variable; the driver ships the options to the executors inside the pickled tasks.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from .contract import STORAGE_OPTIONS_ENV, build_parser, storage_options_from_env  # noqa: F401 - re-exported
from .hudi.errors import HudiEtcError
from .spark.commands import HANDLERS  # noqa: F401 - re-exported: the function of every command


def _out(obj: Any) -> None:
    print(json.dumps(obj, indent=2, default=str))


def run_command(args, argv: list[str], spark_session: Any = None) -> Any:
    """Run the parsed command: in a Spark job with its ``spark_session``; from the command line
    with ``--engine spark``, the same ``argv`` inside spark-submit (its result file read back)."""
    if spark_session is None and getattr(args, "engine", "local") == "spark":
        from .spark.spark_submit import run_job

        return run_job(argv)
    from .spark.commands import run

    return run(args, spark_session)


#: exit status when stdout is closed early (``hudi-etc ... | head``): 128 + SIGPIPE, as shells report it
EXIT_BROKEN_PIPE = 141


def _error(e: HudiEtcError) -> int:
    from .hudi.errors import error_envelope

    _out(error_envelope(e))
    sys.stdout.flush()
    print(f"hudi-etc: {type(e).__name__}: {e}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            argv = [str(x) for x in argv]
            args = build_parser().parse_args(argv)  # argument errors: ArgumentError, printed below
            result = run_command(args, argv)
            if isinstance(result, str):
                print(result)
            else:
                _out(result)
            sys.stdout.flush()
            return 0
        except HudiEtcError as e:
            return _error(e)
    except BrokenPipeError:
        # the reader went away (``| head``): nothing more to say, and no traceback; stdout is
        # pointed at /dev/null so the interpreter's final flush does not fail again
        import os

        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return EXIT_BROKEN_PIPE


if __name__ == "__main__":
    sys.exit(main())
