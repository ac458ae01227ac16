"""How the real-Java worlds (java_interleave.JavaWorld, java_loop.LoopWorld) run our commands.

:class:`InProcess`: this test process (the API; a crash is a fresh ``python -m
airflow_hudi_etc.cli`` process ended at a crash point). :class:`Hosted`: Spark-hosted, inside a
long-lived pyspark driver of the judged Hudi line (``JavaHudi.etc``), where Hudi's metadata
writer and lock providers of that line's bundle are in the JVM: what a table with a metadata
table needs. A crash there ends the host process (``os._exit`` at the crash point); the next
command starts a new one, as a new Spark job would be.
"""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.parquet as pq

from airflow_hudi_etc.compaction.clean import clean
from airflow_hudi_etc.compaction.execution import execute
from airflow_hudi_etc.compaction.lifecycle import rollback, unschedule
from airflow_hudi_etc.compaction.scheduling import schedule
from airflow_hudi_etc.hudi.errors import HudiEtcError, InvalidInputError
from airflow_hudi_etc.hudi import crash
from airflow_hudi_etc.hudi.write.writer import write_batch
from java_hudi import JavaHudiDied, JavaHudiTimeout
from scenario import cli


class InProcess:
    hosted = False

    def write(self, path: str, table: pa.Table, operation: str = "upsert"):
        return write_batch(path, table, operation=operation)

    def schedule(self, path: str, **kw):
        return schedule(path, **kw)

    def execute(self, path: str, instant: str) -> dict:
        return execute(path, instant=instant)

    def rollback(self, path: str, instant: str) -> dict:
        return rollback(path, instant=instant)

    def unschedule(self, path: str, instant: str) -> dict:
        return unschedule(path, instant=instant)

    def clean(self, path: str, retain_commits: int) -> dict:
        return clean(path, retain_commits=retain_commits)

    def cli(self, *args, crash: str | None = None, check: bool = True):
        return cli(*args, crash=crash, check=check)


class HostedRefusal(HudiEtcError):
    """A typed refusal answered by a command of ours run Spark-hosted (``code`` as it answered)."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code


class Hosted:
    """Our commands in ``host`` (a :class:`java_hudi.JavaHudi`), Spark-hosted."""

    hosted = True

    def __init__(self, host):
        self.host = host
        self.tmp = Path(tempfile.mkdtemp(prefix="hosted-batches-"))
        self.n = 0

    def _run(self, *args, crash_at: str | None = None) -> SimpleNamespace:
        env = {crash.ENV: crash_at} if crash_at else {}
        try:
            res = self.host.etc(*args, env=env)
        except (JavaHudiDied, JavaHudiTimeout) as e:
            if crash_at:  # the host ended at the crash point, as the process of a Spark job would
                self.host.close()
                return SimpleNamespace(returncode=crash.EXIT_CODE, stdout="", stderr=str(e)[-2000:], answer=None)
            raise
        return SimpleNamespace(returncode=res["rc"], stdout=res["stdout"], stderr=res["stderr"], answer=res["answer"])

    def _answer(self, *args):
        r = self._run(*args)
        if r.returncode == 0:
            return r.answer
        err = (r.answer or {}).get("error", {}) if isinstance(r.answer, dict) else {}
        if err.get("type") == "InvalidInputError":
            raise InvalidInputError(err.get("message", ""))
        raise HostedRefusal(err.get("code", "error"), err.get("message", r.stdout[-1000:] + r.stderr[-1000:]))

    def _batch(self, table: pa.Table) -> str:
        self.n += 1
        f = self.tmp / f"b{self.n}.parquet"
        pq.write_table(table, f)
        return str(f)

    def write(self, path: str, table: pa.Table, operation: str = "upsert"):
        return self._answer("write", "--path", path, "--input", self._batch(table), "--operation", operation)

    def schedule(self, path: str, *, data_latency, compaction_time, link_mode="auto", exact_split=False,
                 event_time_field=None):
        args = ["schedule", "--path", path, "--data-latency", data_latency, "--compaction-time", compaction_time,
                "--link-mode", link_mode]
        args += ["--exact-split"] if exact_split else []
        args += ["--event-time-field", event_time_field] if event_time_field else []
        a = self._answer(*args)
        return SimpleNamespace(instant=a.get("instant"), reason=a.get("reason"), answer=a)

    def execute(self, path: str, instant: str) -> dict:
        return self._answer("execute", "--path", path, "--instant", instant)

    def rollback(self, path: str, instant: str) -> dict:
        return self._answer("rollback", "--path", path, "--instant", instant)

    def unschedule(self, path: str, instant: str) -> dict:
        return self._answer("unschedule", "--path", path, "--instant", instant)

    def clean(self, path: str, retain_commits: int) -> dict:
        return self._answer("clean", "--path", path, "--retain-commits", retain_commits)

    def cli(self, *args, crash: str | None = None, check: bool = True):
        r = self._run(*args, crash_at=crash)
        if check and not crash:
            assert r.returncode == 0, (r.stdout, r.stderr)
        return subprocess.CompletedProcess(list(args), r.returncode, r.stdout, r.stderr)


__all__ = ["InProcess", "Hosted", "HostedRefusal"]
