"""Real Java Hudi in the loop: one long-lived pyspark + Hudi-bundle process per Hudi line.

``JavaHudi("0.14")`` starts ``java_hudi_server.py`` with the line's venv python (pyspark 3.4.4 and
the 0.14.0 bundle; 0.15/1.0/1.1: pyspark 3.5.3 and their 3.5 bundles) and talks JSON lines over
its stdin/stdout; the JVM's output goes to a log file. Every call has a timeout: a hung server is
killed (its whole process group) and the call raises :class:`JavaHudiTimeout`; a dead one raises
:class:`JavaHudiDied` (the next call starts a new process). Java's exceptions come back as
:class:`JavaHudiError` with the Java class, message and cause chain.

Which line judges which table version: :data:`LINES_FOR_VERSION` (v6: 0.14 and 0.15; v8: 1.0;
v9: 1.1). The cache (bundles + venvs) is ``$HUDI_ETC_JAVA_CACHE`` or ``<repo>/.java-hudi``, made
by ``scripts/java_hudi.sh``.
"""

from __future__ import annotations

import datetime as dt
import glob
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).resolve().with_name("java_hudi_server.py")

#: line -> (venv folder in the cache, bundle jar glob in cache/jars, first choice first)
LINES = {
    "0.14": ("spark3.4", ("hudi-spark3.4-bundle_2.12-0.14.1.jar", "hudi-spark3.4-bundle_2.12-0.14.0.jar")),
    "0.15": ("spark3.5", ("hudi-spark3.5-bundle_2.12-0.15.0.jar",)),
    "1.0": ("spark3.5", ("hudi-spark3.5-bundle_2.12-1.0.2.jar",)),
    "1.1": ("spark3.5", ("hudi-spark3.5-bundle_2.12-1.1.1.jar",)),
    # 1.2.0 (table version 9, as 1.1): a judge of the lock and loop-writer tests; the registry here
    # serves no 1.2.1 bundle (checked 2026-11-28)
    "1.2": ("spark3.5", ("hudi-spark3.5-bundle_2.12-1.2.0.jar",)),
}
#: the Hudi lines that judge a table version (their own ordering semantics: 0.14/0.15 rules on v6)
LINES_FOR_VERSION = {6: ("0.14", "0.15"), 8: ("1.0",), 9: ("1.1",)}
#: (table version, line) pairs, for parametrizing
VERSION_LINES = [(v, line) for v, lines in LINES_FOR_VERSION.items() for line in lines]

DEFAULT_TIMEOUT = float(os.environ.get("HUDI_ETC_JAVA_TIMEOUT", "300"))
START_TIMEOUT = 180.0


class JavaHudiError(Exception):
    """Java threw: ``java_class``/``message`` of the top exception, ``causes`` [(class, message)...]."""

    def __init__(self, op: str, java_class: str | None, message: str | None, causes=(), trace: str = ""):
        self.op, self.java_class, self.message = op, java_class, message or ""
        self.causes = [tuple(c) for c in causes]
        self.trace = trace
        chain = "; caused by ".join(f"{c}: {m}" for c, m in [(java_class, message), *self.causes])
        super().__init__(f"{op}: {chain}")

    def mentions(self, text: str) -> bool:
        """``text`` in any class name or message of the chain."""
        return any(text in (c or "") or text in (m or "") for c, m in [(self.java_class, self.message), *self.causes])


class JavaHudiHarnessError(Exception):
    """The harness itself failed (bad request, server not running): not Java's answer."""


class JavaHudiTimeout(JavaHudiHarnessError):
    """No answer within the call's timeout: the server was killed."""


class JavaHudiDied(JavaHudiHarnessError):
    """The server process ended (the log's tail is in the message)."""


def cache_dir() -> Path:
    return Path(os.environ.get("HUDI_ETC_JAVA_CACHE") or REPO / ".java-hudi")


def line_files(line: str) -> tuple[Path, Path] | None:
    """(venv python, bundle jar) of a line, or None when the cache lacks them."""
    venv, jars = LINES[line]
    py = cache_dir() / venv / "bin" / "python"
    for j in jars:
        jar = cache_dir() / "jars" / j
        if jar.is_file() and py.exists():
            return py, jar
    return None


def unavailable_reason(line: str | None = None) -> str | None:
    """Why the real-Java tests cannot run here (None: they can)."""
    if not shutil.which("java"):
        return "no java on PATH (scripts/java_hudi.sh installs it)"
    for ln in [line] if line else list(LINES):
        if line_files(ln) is None:
            return (f"no cached Java Hudi {ln} in {cache_dir()} (run scripts/java_hudi.sh, "
                    f"or set HUDI_ETC_JAVA_CACHE)")
    return None


def schema_ddl(rows, overrides: dict | None = None) -> str:
    """A Spark DDL schema for rows of str/int/float/bool/datetime values (first non-null decides)."""
    names: list[str] = []
    types: dict[str, str] = {}
    for r in rows:
        for k, v in r.items():
            if k not in names:
                names.append(k)
            if k not in types and v is not None:
                types[k] = ("boolean" if isinstance(v, bool) else "bigint" if isinstance(v, int)
                            else "double" if isinstance(v, float) else "timestamp" if isinstance(v, dt.datetime)
                            else "date" if isinstance(v, dt.date) else "string")
    types.update(overrides or {})
    return ", ".join(f"`{n}` {types.get(n, 'string')}" for n in names)


def _jsonable(v):
    if isinstance(v, dt.datetime):
        if v.tzinfo is None:
            raise ValueError(f"naive datetime {v}: give a time zone")
        return (v - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(microseconds=1)
    if isinstance(v, dt.date):
        return v.isoformat()
    return v


def timeline_dir(path) -> Path:
    h = Path(path) / ".hoodie"
    return h / "timeline" if (h / "timeline").is_dir() else h


def _inflight_writes(path) -> set[str]:
    d = timeline_dir(path)
    if not d.is_dir():
        return set()
    return {n.split(".")[0] for n in os.listdir(d) if n.endswith((".deltacommit.inflight", ".commit.inflight"))}


def _completed(path, instant: str) -> bool:
    d = timeline_dir(path)
    return any(n.split("_")[0].split(".")[0] == instant and not n.endswith((".requested", ".inflight"))
               for n in os.listdir(d) if n[:1].isdigit())


class JavaHudi:
    """Client of one Hudi line's server process (started on first use, or by :meth:`start`)."""

    def __init__(self, line: str, *, timeout: float = DEFAULT_TIMEOUT, log_dir: str | None = None,
                 start_timeout: float = START_TIMEOUT, jvm_zone: str = "UTC"):
        """``jvm_zone``: the JVM's default zone (``user.timezone`` and ``TZ``), the zone a Java
        writer makes the instants of a LOCAL timeline in; other than UTC, use the server for
        writes and table services only (its reads' timestamps come back shifted by the zone)."""
        if line not in LINES:
            raise JavaHudiHarnessError(f"unknown Hudi line {line!r}: one of {sorted(LINES)}")
        self.line = line
        self.jvm_zone = jvm_zone
        self.timeout = timeout
        self.start_timeout = start_timeout
        self.log_dir = Path(log_dir or tempfile.mkdtemp(prefix=f"java-hudi-{line}-"))
        self.log = self.log_dir / "server.log"
        self.proc: subprocess.Popen | None = None
        self.info: dict = {}
        self.costs: dict[str, list[float]] = {}
        self._id = 0
        self._buf = b""

    # ------------------------------------------------------------------ process
    def _spawn(self, workdir: Path) -> subprocess.Popen:
        files = line_files(self.line)
        if files is None:
            raise JavaHudiHarnessError(unavailable_reason(self.line) or f"Java Hudi {self.line} not cached")
        py, jar = files
        # Spark's scratch dirs (spark-<uuid>, with a copy of the bundle: ~100 MB) under the
        # server's own folder: a SIGKILLed server (killed_write) cannot remove them itself, and
        # under /tmp they filled the disk after a few hundred slow runs
        local = workdir / "spark-local"
        local.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ, TZ=self.jvm_zone, PYSPARK_PYTHON=str(py), SPARK_LOCAL_IP="127.0.0.1",
                   SPARK_LOCAL_DIRS=str(local))
        for k in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_DRIVER_PYTHON", "VIRTUAL_ENV"):
            env.pop(k, None)
        return subprocess.Popen(
            [str(py), str(SERVER), "--line", self.line, "--jar", str(jar), "--log", str(self.log),
             "--workdir", str(workdir), "--jvm-zone", self.jvm_zone],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env,
            start_new_session=True)  # its own process group: a kill takes the JVM with it

    def start(self) -> dict:
        if self.proc is not None and self.proc.poll() is None:
            return self.info
        self._buf = b""
        self.proc = self._spawn(self.log_dir / "work")
        msg = self._receive(self.start_timeout, "start")
        if not msg.get("ready"):
            self._kill()
            raise JavaHudiHarnessError(f"Java Hudi {self.line} did not start: {msg.get('error')}")
        self.info = msg
        self.costs.setdefault("startup", []).append(msg["startup_seconds"])
        return msg

    def _kill(self, proc: subprocess.Popen | None = None) -> None:
        p = proc or self.proc
        if p is None:
            return
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        for f in (p.stdin, p.stdout):
            try:
                f and f.close()
            except OSError:
                pass
        if proc is None:
            self.proc = None

    def close(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            try:
                self._send({"id": -1, "op": "exit"})
                self._receive(30, "exit")
            except JavaHudiHarnessError:
                pass
        self._kill()
        shutil.rmtree(self.log_dir / "work" / "spark-local", ignore_errors=True)

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def log_tail(self, n: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return ""

    def _send(self, obj: dict) -> None:
        try:
            self.proc.stdin.write((json.dumps(obj) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError) as e:
            self._kill()
            raise JavaHudiDied(f"Java Hudi {self.line} server is gone ({e}); log tail:\n{self.log_tail()}") from None

    def _receive(self, timeout: float, what: str) -> dict:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                self._kill()
                raise JavaHudiTimeout(f"Java Hudi {self.line}: no answer to {what} within {timeout:.0f} s; "
                                      f"server killed; log tail:\n{self.log_tail()}")
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                self._kill()
                raise JavaHudiDied(f"Java Hudi {self.line} server died during {what}; log tail:\n{self.log_tail()}")
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return json.loads(line)

    def request(self, op: str, *, timeout: float | None = None, **params) -> dict:
        self.start()
        self._id += 1
        rid = self._id
        self._send({"id": rid, "op": op, **params})
        msg = self._receive(timeout or self.timeout, op)
        if msg.get("id") != rid:
            self._kill()
            raise JavaHudiHarnessError(f"out-of-order answer {msg.get('id')} to request {rid}")
        self.costs.setdefault(op, []).append(msg.get("seconds", 0.0))
        if not msg["ok"]:
            e = msg["error"]
            if e.get("kind") == "java":
                raise JavaHudiError(op, e.get("java_class"), e.get("message"), e.get("causes", ()), e.get("trace", ""))
            raise JavaHudiHarnessError(f"{op}: {e.get('message')}\n{e.get('trace', '')}")
        return msg["result"]

    def mount_viewfs(self, local, name: str) -> str:
        """``viewfs://<name>/<name>``, mounted on the local folder ``local`` (storage Java appends
        on: see java_hudi_server.py). A path under it names the same files as under ``local``;
        ``name`` must be new to this process or mounted on the same folder."""
        res = self.request("mount_viewfs", name=name, local=str(local))
        self.viewfs_file_systems = res["file_systems"]
        return res["prefix"]

    # ------------------------------------------------------------------ writes
    def write(self, path, rows, *, operation: str = "upsert", schema: str | None = None,
              inline_compaction: bool = False, options: dict | None = None, timeout: float | None = None,
              spark_partitions: int | None = None) -> str | None:
        """A Spark datasource write of ``rows``; returns its instant (None: nothing completed).

        Options come from the table's hoodie.properties; ``options`` adds Java settings
        (archival/clean: ``hoodie.keep.min.commits``, ``hoodie.cleaner.commits.retained``...).
        ``spark_partitions``: the rows spread round-robin over that many Spark partitions (a
        bulk insert without sorting writes a file per partition of the table per task)."""
        rows = list(rows)
        res = self.request("write", path=str(path), rows=[{k: _jsonable(v) for k, v in r.items()} for r in rows],
                           schema=schema or schema_ddl(rows), operation=operation,
                           inline_compaction=inline_compaction, options=options or {}, timeout=timeout,
                           spark_partitions=spark_partitions)
        writes = [t for t, a in res["instants"] if a in ("deltacommit", "commit")]
        self.last_instants = res["instants"]
        return writes[0] if writes else None

    def upsert(self, path, rows, **kw) -> str | None:
        return self.write(path, rows, operation="upsert", **kw)

    def insert(self, path, rows, **kw) -> str | None:
        return self.write(path, rows, operation="insert", **kw)

    def delete(self, path, rows, **kw) -> str | None:
        return self.write(path, rows, operation="delete", **kw)

    def killed_write(self, path, rows, *, after: str = "inflight", operation: str = "upsert",
                     schema: str | None = None, options: dict | None = None, timeout: float | None = None) -> str:
        """A write in a short-lived child process, SIGKILLed (with its JVM) once its instant is
        inflight (``after="inflight"``) or once it has a marker under ``.hoodie/.temp/<T>``
        (``after="marker"``: a data file is being written). Returns the killed instant; the
        next Java write's eager rollback then runs the real code."""
        rows = list(rows)
        child = JavaHudi(self.line, timeout=timeout or self.timeout, log_dir=str(self.log_dir / "killed"),
                         jvm_zone=self.jvm_zone)
        child.log_dir.mkdir(parents=True, exist_ok=True)
        before = _inflight_writes(path)
        child.start()
        try:
            child._id += 1
            child._send({"id": child._id, "op": "write", "path": str(path),
                         "rows": [{k: _jsonable(v) for k, v in r.items()} for r in rows],
                         "schema": schema or schema_ddl(rows), "operation": operation,
                         "inline_compaction": False, "options": options or {}})
            deadline = time.monotonic() + (timeout or self.timeout)
            instant = None
            fd = child.proc.stdout.fileno()
            while time.monotonic() < deadline:
                new = _inflight_writes(path) - before
                if new:
                    instant = min(new)
                    if after == "inflight":
                        break
                    temp = Path(path) / ".hoodie" / ".temp" / instant
                    if temp.is_dir() and any(f for _, _, fs in os.walk(temp) for f in fs if ".marker." in f):
                        break
                if select.select([fd], [], [], 0.005)[0]:  # the write answered: it was not killed in time
                    msg = child._receive(5, "write")
                    raise JavaHudiHarnessError(f"killed_write: the write finished before the kill ({msg})")
            else:
                raise JavaHudiTimeout(f"killed_write: no inflight write within the timeout; log tail:\n{child.log_tail()}")
            child._kill()
            if _completed(path, instant):
                raise JavaHudiHarnessError(f"killed_write: {instant} completed before the kill")
            self.costs.setdefault("killed_write", []).append(child.costs.get("startup", [0.0])[0])
            return instant
        finally:
            child._kill()
            shutil.rmtree(child.log_dir / "work" / "spark-local", ignore_errors=True)

    # ------------------------------------------------------------------ table services
    def run_compaction(self, path, instant: str | None = None, *, mode: str | None = None,
                       options: dict | None = None, timeout: float | None = None,
                       lock_in_procedure: bool = True, ordering_from_table: bool = True) -> list[str]:
        """``CALL run_compaction``: execute pending plan ``instant``, or (no instant) schedule and
        run (``mode="schedule"``: schedule only). Returns the compaction instants completed.
        ``options`` are the session's; their lock settings also go to the procedure's own
        ``options`` argument unless ``lock_in_procedure=False`` (0.14/0.15 on a table with a
        metadata table otherwise take a lock of their own, see java_hudi_server.op_run_compaction).
        The session has the table's ordering field as ``hoodie.datasource.write.precombine.field``
        unless ``options`` name it or ``ordering_from_table=False`` (see java_hudi_server.call)."""
        opts = {} if instant else {"hoodie.compact.inline.max.delta.commits": "1"}  # Java's trigger: 5 by default
        opts.update(options or {})
        res = self.request("run_compaction", path=str(path), instant=instant, mode=mode, options=opts,
                           timeout=timeout, lock_in_procedure=lock_in_procedure,
                           ordering_from_table=ordering_from_table)
        self.last_rows = res["rows"]
        return [t for t, a in res["instants"] if a == "commit"]

    def run_clean(self, path, *, retain_commits: int | None = None, options: dict | None = None) -> list[str]:
        res = self.request("run_clean", path=str(path), retain_commits=retain_commits, options=options or {})
        self.last_rows = res["rows"]
        return [t for t, a in res["instants"] if a == "clean"]

    def rollback_to_instant(self, path, instant: str, *, options: dict | None = None) -> list:
        res = self.request("rollback_to_instant", path=str(path), instant=instant, options=options or {})
        self.last_rows = res["rows"]
        return res["instants"]

    def savepoint(self, path, instant: str, *, options: dict | None = None) -> list:
        res = self.request("savepoint", path=str(path), instant=instant, options=options or {})
        self.last_rows = res["rows"]
        return res["rows"]

    def restore(self, path, instant: str, *, options: dict | None = None) -> list:
        res = self.request("restore", path=str(path), instant=instant, options=options or {})
        self.last_rows = res["rows"]
        return res["instants"]

    def sql(self, sql: str, *, path=None, options: dict | None = None) -> list[dict]:
        """Any Spark SQL; ``{table}`` stands for ``path`` registered in the catalog."""
        return self.request("sql", sql=sql, path=str(path) if path else None, options=options or {})["rows"]

    def etc(self, *argv, env: dict | None = None, timeout: float | None = None, profile: str | None = None) -> dict:
        """Run ``hudi-etc ARGV...`` of ours inside this line's driver, Spark-hosted (Hudi's lock
        providers and metadata writer in its JVM): {"rc": exit code, "answer": the JSON answer}.
        ``profile``: a file the driver writes the command's cProfile statistics to."""
        res = self.request("etc", argv=[str(a) for a in argv], env=env or {}, timeout=timeout,
                           **({"profile": profile} if profile else {}))
        text = res["stdout"].strip()
        try:
            answer = json.loads(text) if text else None
        except ValueError:
            answer = text
        return {"rc": res["rc"], "answer": answer, "stdout": text, "stderr": res["stderr"]}

    def storage_lock(self, endpoint: str, base_path: str, props: dict | None = None) -> "JavaStorageLock":
        """Hudi's own StorageBasedLockProvider of this line (1.1+) on ``base_path``'s lock file in
        the S3-compatible server at ``endpoint`` (see the server's ``op_storage_lock``)."""
        lid = self.request("storage_lock", action="new", endpoint=endpoint, base_path=base_path,
                           props=props or {})["id"]
        return JavaStorageLock(self, lid)

    def metadata_files(self, path) -> dict:
        """Hudi's own view of the table's metadata table: {"partitions": {partition: [file
        names]}, "differences": validate_metadata_table_files rows (MDT against storage)}."""
        return self.request("metadata_files", path=str(path))

    # ------------------------------------------------------------------ reads
    def read(self, path, *, query: str = "snapshot", begin: str | None = None, end: str | None = None,
             as_of: str | None = None, columns=None, options: dict | None = None) -> list[dict]:
        """Rows as dicts (timestamps as aware UTC datetimes); query: snapshot, read_optimized,
        incremental (``begin``/``end``), time_travel (``as_of``)."""
        res = self.request("read", path=str(path), query=query, begin=begin, end=end, as_of=as_of,
                           columns=list(columns) if columns else None, options=options or {})
        ts = {i for i, t in enumerate(res["types"]) if t.startswith("timestamp")}
        epoch = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
        out = []
        for row in res["rows"]:
            out.append({c: (epoch + dt.timedelta(microseconds=v) if i in ts and v is not None else v)
                        for i, (c, v) in enumerate(zip(res["columns"], row))})
        return out

    def snapshot(self, path, **kw) -> list[dict]:
        return self.read(path, query="snapshot", **kw)

    def read_optimized(self, path, **kw) -> list[dict]:
        return self.read(path, query="read_optimized", **kw)


class JavaHudiPool:
    """One :class:`JavaHudi` per line, started on first use (the session fixture)."""

    def __init__(self):
        self.clients: dict[str, JavaHudi] = {}

    def get(self, line: str) -> JavaHudi:
        c = self.clients.get(line)
        if c is None:
            c = self.clients[line] = JavaHudi(line.split("/")[0])
        c.start()
        return c

    __call__ = get

    def host(self, line: str) -> JavaHudi:
        """A second driver of ``line``, hosting our commands Spark-hosted (``JavaHudi.etc``) while
        the first one writes and judges: both run at once, as a Spark job next to a Java writer."""
        return self.get(f"{line}/host")

    def close(self) -> None:
        for c in self.clients.values():
            c.close()

    def cost_report(self) -> str:
        lines = []
        for line, c in sorted(self.clients.items()):
            parts = [f"{op} n={len(v)} mean={sum(v) / len(v):.2f}s max={max(v):.2f}s"
                     for op, v in sorted(c.costs.items()) if v]
            lines.append(f"Java Hudi {line}: " + "; ".join(parts))
        return "\n".join(lines)


class JavaStorageLock:
    """One StorageBasedLockProvider object in a line's JVM."""

    def __init__(self, java: JavaHudi, lid: str):
        self.java, self.id = java, lid

    def try_lock(self, wait_ms: int = 0) -> bool:
        return self.java.request("storage_lock", action="try", lock=self.id, wait_ms=wait_ms)["acquired"]

    def unlock(self) -> None:
        self.java.request("storage_lock", action="unlock", lock=self.id)

    def close(self) -> None:
        self.java.request("storage_lock", action="close", lock=self.id)


def by_key(rows, key: str = "_hoodie_record_key", columns=None) -> dict:
    """``{key: {col: value}}`` of Java's rows (meta columns dropped unless asked); raises on duplicates."""
    out: dict = {}
    for r in rows:
        k = r[key]
        assert k not in out, f"duplicate key {k!r} in Java's read"
        out[k] = {c: v for c, v in r.items() if (c in columns if columns else not c.startswith("_hoodie_"))}
    return out


if __name__ == "__main__":  # a quick manual check: python tests/support/java_hudi.py 0.14
    with JavaHudi(sys.argv[1] if len(sys.argv) > 1 else "0.14") as j:
        print(j.info)
        print(j.request("ping"))
