"""A real ZooKeeper server for the lock tests: Debian's ``zookeeper`` package (installed by
scripts/java_hudi.sh), standalone, on 127.0.0.1 and a free port, its data in a temporary folder,
started once per session (the ``zookeeper`` fixture of tests/conftest.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

JARS = ("/usr/share/java/zookeeper.jar",)
CONF_DIR = "/etc/zookeeper/conf"  # its log4j settings


def unavailable_reason() -> str | None:
    if not any(Path(j).is_file() for j in JARS):
        return "no ZooKeeper server jar (Debian's zookeeper package: scripts/java_hudi.sh installs it)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ZooKeeperServer:
    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="hudi-etc-zk-"))
        self.port = _free_port()
        self.proc: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self, timeout: float = 60.0) -> "ZooKeeperServer":
        (self.dir / "data").mkdir()
        cfg = self.dir / "zoo.cfg"
        cfg.write_text(f"tickTime=2000\ndataDir={self.dir / 'data'}\nclientPort={self.port}\n"
                       "clientPortAddress=127.0.0.1\nadmin.enableServer=false\nmaxSessionTimeout=60000\n")
        jar = next(j for j in JARS if Path(j).is_file())
        log = open(self.dir / "server.log", "wb")
        self.proc = subprocess.Popen(["java", "-cp", f"{CONF_DIR}:{jar}", "org.apache.zookeeper.server.ZooKeeperServerMain",
                                      str(cfg)], stdout=log, stderr=subprocess.STDOUT, cwd=self.dir,
                                     env=dict(os.environ, ZOO_LOG_DIR=str(self.dir)))
        deadline = time.monotonic() + timeout
        while True:  # until it accepts connections (or died)
            if self.proc.poll() is not None:
                raise RuntimeError(f"ZooKeeper exited: {(self.dir / 'server.log').read_text()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return self
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise RuntimeError("ZooKeeper did not listen in time") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        self.proc = None
