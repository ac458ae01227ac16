"""A real Java Hudi process for the peer benchmark (P7), self-contained: bench/ does not import tests/.

One long-lived child per Hudi line: the line's own Python venv (pyspark matching the bundle's Spark)
runs ``_DRIVER`` below, which starts a ``local[1]`` SparkSession with the Hudi Spark bundle and then
answers one JSON command per stdin line (``execute``, ``read``, ``dump``, ``write``, ``quit``) with
one JSON reply on stdout, prefixed ``@@PEER`` (the JVM may print to the same stdout). Every timing
is taken inside the child around the one Spark call, so the pipe costs nothing.

The cache of bundles and venvs (``scripts/java_hudi.sh`` fills it) is ``$HUDI_ETC_JAVA_CACHE``,
default ``<project>/.java-hudi``: ``jars/<bundle>.jar`` and ``spark3.4/``, ``spark3.5/`` venvs.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Hudi line -> (venv folder in the cache, bundle jar)
LINES = {
    "0.15": ("spark3.5", "hudi-spark3.5-bundle_2.12-0.15.0.jar"),
    "0.14": ("spark3.4", "hudi-spark3.4-bundle_2.12-0.14.0.jar"),
    "1.0": ("spark3.5", "hudi-spark3.5-bundle_2.12-1.0.2.jar"),
    "1.1": ("spark3.5", "hudi-spark3.5-bundle_2.12-1.1.1.jar"),
}


class JavaUnavailable(RuntimeError):
    """No Java, no cached bundle or no venv for the line: the figure is skipped, with this reason."""


class PeerError(RuntimeError):
    """The Java side answered a command with an error (Java's own text)."""


def cache_dir() -> str:
    return os.environ.get("HUDI_ETC_JAVA_CACHE") or os.path.join(ROOT, ".java-hudi")


def locate(line: str) -> tuple[str, str]:
    """(python of the line's venv, bundle jar), or :class:`JavaUnavailable` saying what is missing."""
    venv, jar = LINES[line]
    cache = cache_dir()
    py, jar_path = os.path.join(cache, venv, "bin", "python"), os.path.join(cache, "jars", jar)
    if shutil.which("java") is None:
        raise JavaUnavailable("no `java` on PATH")
    for what, p in (("bundle", jar_path), ("venv", py)):
        if not os.path.exists(p):
            raise JavaUnavailable(f"no {what} for Hudi {line} at {p}: run scripts/java_hudi.sh "
                                  "(or set HUDI_ETC_JAVA_CACHE)")
    return py, jar_path


_DRIVER = r'''
import json, os, sys, time
T0 = time.perf_counter()
jar, driver_mem = sys.argv[1], sys.argv[2]
out = sys.stdout
def reply(**kw):
    out.write("@@PEER " + json.dumps(kw) + "\n"); out.flush()
from pyspark.sql import SparkSession
t = time.perf_counter()
spark = (SparkSession.builder.master("local[1]").appName("hudi-etc-peer")
    .config("spark.jars", jar)
    .config("spark.driver.memory", driver_mem)
    .config("spark.serializer", "org.apache.spark.serializer.KryoSerializer")
    .config("spark.kryo.registrator", "org.apache.spark.HoodieSparkKryoRegistrar")
    .config("spark.sql.extensions", "org.apache.spark.sql.hudi.HoodieSparkSessionExtension")
    .config("spark.sql.catalog.spark_catalog", "org.apache.spark.sql.hudi.catalog.HoodieCatalog")
    .config("spark.driver.extraJavaOptions", "-Djol.magicFieldOffset=true -Duser.timezone=UTC")
    .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
    .config("spark.sql.shuffle.partitions", "1").config("spark.sql.session.timeZone", "UTC")
    .getOrCreate())
spark.sparkContext.setLogLevel("ERROR")
# no metadata table (the project requires it off) and no embedded timeline server: for every
# write client the procedures and the writes make
spark.conf.set("hoodie.metadata.enable", "false")
spark.conf.set("hoodie.embed.timeline.server", "false")
JVM_PID = int(spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getName().split("@")[0])
TICK = os.sysconf("SC_CLK_TCK")
def cpu():  # CPU seconds of the JVM (every thread: the task's, GC, JIT) and of this driver
    with open(f"/proc/{JVM_PID}/stat") as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / TICK + time.process_time()
_reply = reply
def reply(**kw):
    _reply(cpu_s=cpu() - C0, **kw)
C0 = 0.0  # the first reply: everything the JVM spent starting
reply(ok=True, import_s=t - T0, session_s=time.perf_counter() - t, spark=spark.version)

def reader(path, ro):
    r = spark.read.format("hudi").option("hoodie.metadata.enable", "false")
    if ro:
        r = r.option("hoodie.datasource.query.type", "read_optimized")
    return r.load(path)

for line in sys.stdin:
    cmd = json.loads(line)
    op = cmd["op"]
    if op == "quit":
        break
    C0 = cpu()
    try:
        if op == "execute":
            opts = "hoodie.metadata.enable=false,hoodie.embed.timeline.server=false"
            t = time.perf_counter()
            rows = spark.sql(f"CALL run_compaction(op => 'execute', path => '{cmd['path']}', "
                             f"timestamp => {int(cmd['instant'])}, options => '{opts}')").collect()
            reply(ok=True, seconds=time.perf_counter() - t, result=[str(r) for r in rows][:5])
        elif op == "read":  # how: noop (every column of every row through Spark, nothing kept) or count
            t = time.perf_counter()
            df = reader(cmd["path"], cmd["ro"])
            n = None
            if cmd["how"] == "count":
                n = df.count()
            else:
                df.write.format("noop").mode("overwrite").save()
            reply(ok=True, seconds=time.perf_counter() - t, rows=n)
        elif op == "dump":  # the read as parquet files, for the parent to compare
            df = reader(cmd["path"], cmd["ro"]).select(*cmd["columns"])
            df.coalesce(1).write.mode("overwrite").parquet(cmd["out"])
            reply(ok=True)
        elif op == "write":  # a small upsert into a fresh MOR table (start-up: the first write's cost)
            rows = [(f"k{i:09d}", 1, i * 1000, f"v{i}") for i in range(cmd["rows"])]
            df = spark.createDataFrame(rows, "id string, updated_at long, event_time long, note string")
            opts = {"hoodie.table.name": "peer_scratch", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
                    "hoodie.datasource.write.operation": "upsert",
                    "hoodie.datasource.write.recordkey.field": "id",
                    "hoodie.datasource.write.precombine.field": "updated_at",
                    "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.NonpartitionedKeyGenerator",
                    "hoodie.datasource.write.partitionpath.field": "",
                    "hoodie.metadata.enable": "false", "hoodie.compact.inline": "false",
                    "hoodie.embed.timeline.server": "false"}
            t = time.perf_counter()
            df.write.format("hudi").options(**opts).mode("append").save(cmd["path"])
            reply(ok=True, seconds=time.perf_counter() - t)
        else:
            reply(ok=False, error=f"unknown op {op!r}")
    except Exception as e:  # Java's own text goes back to the parent
        reply(ok=False, error=f"{type(e).__name__}: {e}"[-4000:])
spark.stop()
'''


class JavaPeer:
    """One Java Hudi line in a child process; a context manager (the child is ended on exit)."""

    def __init__(self, line: str, *, log_path: str, driver_memory: str = "2g", start_timeout: float = 300):
        py, self.jar = locate(line)
        self.line = line
        self._log = open(log_path, "ab")
        env = dict(os.environ, PYSPARK_PYTHON=py, SPARK_LOCAL_IP=os.environ.get("SPARK_LOCAL_IP", "127.0.0.1"))
        for k in ("PYTHONPATH", "SPARK_HOME", "PYSPARK_DRIVER_PYTHON"):  # the line's own pyspark, nothing of ours
            env.pop(k, None)
        t = time.perf_counter()
        self.proc = subprocess.Popen([py, "-u", "-c", _DRIVER, self.jar, driver_memory], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self._log, env=env, cwd=os.path.dirname(log_path))
        self._replies: queue.Queue = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()
        first = self._reply(start_timeout)
        #: spawn to a ready SparkSession, as the parent sees it (interpreter, pyspark import, JVM, session)
        self.start_seconds = time.perf_counter() - t
        self.session_seconds = first["session_s"]
        self.start_cpu_seconds = first["cpu_s"]
        self.spark_version = first["spark"]

    def _pump(self) -> None:
        for raw in self.proc.stdout:
            s = raw.decode("utf-8", "replace")
            if s.startswith("@@PEER "):
                self._replies.put(json.loads(s[7:]))
        self._replies.put(None)

    def _reply(self, timeout: float) -> dict:
        try:
            r = self._replies.get(timeout=timeout)
        except queue.Empty:
            self.close()
            raise PeerError(f"Java Hudi {self.line}: no answer in {timeout:.0f} s (log: {self._log.name})") from None
        if r is None:
            raise PeerError(f"Java Hudi {self.line} exited (code {self.proc.poll()}; log: {self._log.name})")
        if not r.get("ok"):
            raise PeerError(f"Java Hudi {self.line}: {r.get('error')}")
        return r

    def call(self, op: str, timeout: float = 900, **kw) -> dict:
        self.proc.stdin.write((json.dumps({"op": op, **kw}) + "\n").encode())
        self.proc.stdin.flush()
        return self._reply(timeout)

    def execute(self, path: str, instant: str) -> dict:
        """``CALL run_compaction(op => 'execute', path, timestamp => instant)``: its ``seconds`` and
        ``cpu_s`` (CPU seconds of the whole JVM meanwhile)."""
        return self.call("execute", path=os.path.abspath(path), instant=instant)

    def read(self, path: str, *, ro: bool, how: str = "noop") -> dict:
        """A snapshot (``ro=False``) or read-optimized read: ``seconds``, ``cpu_s``, ``rows`` (count only)."""
        return self.call("read", path=os.path.abspath(path), ro=ro, how=how)

    def dump(self, path: str, *, ro: bool, columns: list[str], out: str) -> str:
        """The read written as parquet under ``out`` (for the parent to compare)."""
        self.call("dump", path=os.path.abspath(path), ro=ro, columns=columns, out=os.path.abspath(out))
        return out

    def write(self, path: str, rows: int) -> dict:
        """An upsert of ``rows`` small rows into a MOR table at ``path`` (created by the first)."""
        return self.call("write", path=os.path.abspath(path), rows=rows)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write(b'{"op": "quit"}\n')
                self.proc.stdin.flush()
                self.proc.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self._log.close()

    def __enter__(self) -> "JavaPeer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
