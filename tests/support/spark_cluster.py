"""A real Spark standalone cluster on 127.0.0.1 (one master, one worker) whose executors run a
Python that has the dependencies but not ``airflow_hudi_etc``, from a working directory that is
not the repository. Used by ``tests/spark/test_spark_cluster.py`` and ``bench`` (figure Cluster).

The executors' Python is what ``hudi-etc pack-env`` builds (cached per dependency versions in
``<cache>/test-executor-env/``): the packed ``.tar.gz`` for ``spark.archives`` and the same
venv unpacked, for ``spark.pyspark.python`` given as a path.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from paths import REPO


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> str:
    from airflow_hudi_etc.spark.shipping import spark_home as sh

    home = sh()
    assert home and os.path.isfile(os.path.join(home, "bin", "spark-class")), home
    return home


def executor_env(cache: Path | None = None) -> tuple[Path, Path]:
    """(packed env .tar.gz, its unpacked folder), built once per dependency set with
    ``hudi-etc pack-env`` (a real run of the command, in a subprocess)."""
    from airflow_hudi_etc.spark.shipping import cache_dir, dependency_pins

    key = hashlib.sha256(json.dumps([dependency_pins(), sys.version]).encode()).hexdigest()[:12]
    root = (cache or cache_dir() / "test-executor-env") / key
    tar, unpacked = root / "env.tar.gz", root / "env"
    if (unpacked / "bin" / "python").exists() and tar.is_file():
        return tar, unpacked
    root.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(dir=root.parent, prefix=f".{key}-"))
    try:
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        proc = subprocess.run([sys.executable, "-m", "airflow_hudi_etc.cli", "pack-env", "--output",
                               str(stage / "env.tar.gz")], env=env, capture_output=True, text=True, cwd=stage)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        with tarfile.open(stage / "env.tar.gz") as tf:
            tf.extractall(stage / "env")
        try:
            os.rename(stage, root)  # atomic; a concurrent session that won keeps its copy
        except OSError:
            shutil.rmtree(stage, ignore_errors=True)
    except BaseException:
        shutil.rmtree(stage, ignore_errors=True)
        raise
    return tar, unpacked


def bare_env(home: str) -> dict[str, str]:
    """The cluster daemons' environment: none of our venv, PYTHONPATH or interpreter settings."""
    keep = ("HOME", "LANG", "LC_ALL", "JAVA_HOME", "TMPDIR", "USER")
    env = {k: os.environ[k] for k in keep if k in os.environ}
    env.update({"PATH": "/usr/local/bin:/usr/bin:/bin", "SPARK_HOME": home, "SPARK_LOCAL_IP": "127.0.0.1",
                "SPARK_NO_DAEMONIZE": "1"})
    return env


@dataclass
class Cluster:
    master_url: str
    webui: str
    root: Path  # daemons' cwd, logs, the worker's work dir
    env_tar: Path
    env_dir: Path
    procs: list = field(default_factory=list)

    @property
    def work_dir(self) -> Path:
        return self.root / "worker-work"

    @property
    def executor_python(self) -> str:
        return str(self.env_dir / "bin" / "python")

    @property
    def logged_python(self) -> str:
        """A wrapper of :attr:`executor_python` that appends ``<pid> <cwd>`` to
        :attr:`python_log` each time it starts: proof of which interpreter executors ran, where."""
        return str(self.root / "executor-python")

    @property
    def python_log(self) -> Path:
        return self.root / "executor-python.log"

    def python_starts(self) -> list[tuple[str, str]]:
        if not self.python_log.exists():
            return []
        return [tuple(x.split(" ", 1)) for x in self.python_log.read_text().splitlines() if x]

    def state(self) -> dict:
        with urllib.request.urlopen(f"{self.webui}/json/", timeout=5) as r:
            return json.load(r)

    def completed_apps(self) -> list[dict]:
        return list(self.state().get("completedapps") or [])

    def stop(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)  # its own session: the daemon and its children
                except ProcessLookupError:
                    pass
        for p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=10)
        self.procs.clear()


def start_cluster(root: Path, *, cores: int = 2, memory: str = "2g", timeout: float = 90) -> Cluster:
    """Master + one worker as subprocesses (``spark-class ...Master`` / ``...Worker``) on random
    free ports of 127.0.0.1; returns once the worker has registered."""
    home = spark_home()
    env_tar, env_dir = executor_env()
    root.mkdir(parents=True, exist_ok=True)
    (root / "worker-work").mkdir(exist_ok=True)
    env = bare_env(home)
    port, ui, wport, wui = free_port(), free_port(), free_port(), free_port()
    cls = os.path.join(home, "bin", "spark-class")
    cluster = Cluster(f"spark://127.0.0.1:{port}", f"http://127.0.0.1:{ui}", root, env_tar, env_dir)
    wrapper = Path(cluster.logged_python)
    wrapper.write_text(f'#!/bin/sh\necho "$$ $PWD" >> "{cluster.python_log}"\nexec "{cluster.executor_python}" "$@"\n')
    wrapper.chmod(0o755)
    try:
        for name, cmd in (
            ("master", [cls, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", str(port),
                        "--webui-port", str(ui)]),
            ("worker", [cls, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1", "--port", str(wport),
                        "--webui-port", str(wui), "--cores", str(cores), "--memory", memory,
                        "--work-dir", str(root / "worker-work"), cluster.master_url]),
        ):
            log = open(root / f"{name}.log", "wb")
            cluster.procs.append(subprocess.Popen(cmd, cwd=root, env=env, stdout=log, stderr=subprocess.STDOUT,
                                                  stdin=subprocess.DEVNULL, start_new_session=True))
            log.close()
        deadline = time.monotonic() + timeout
        while True:
            for p in cluster.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"a Spark daemon exited with {p.returncode}: "
                                       + (root / "master.log").read_text()[-2000:]
                                       + (root / "worker.log").read_text()[-2000:])
            try:
                if any(w.get("state") == "ALIVE" for w in cluster.state().get("workers") or []):
                    return cluster
            except (OSError, ValueError):  # not listening yet, or an empty answer while it starts
                pass
            if time.monotonic() > deadline:
                raise TimeoutError("the Spark worker did not register in time: "
                                   + (root / "worker.log").read_text()[-2000:])
            time.sleep(0.5)
    except BaseException:
        cluster.stop()
        raise
