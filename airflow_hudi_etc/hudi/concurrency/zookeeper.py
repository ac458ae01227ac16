"""Hudi's ``ZookeeperBasedLockProvider``: a contender of Curator's ``InterProcessMutex``.

Java's provider takes Curator's mutex on the znode ``<base_path>/<lock_key>``
(``hoodie.write.lock.zookeeper.base_path``; ``hoodie.write.lock.zookeeper.lock_key``, by default
the table's name) on the server(s) ``hoodie.write.lock.zookeeper.url`` (``host:port[,host:port]``;
Java never reads ``hoodie.write.lock.zookeeper.port``, so neither do we). Kazoo's own ``Lock``
recipe is no such contender (its ``<hex>__lock__<seq>`` names hold no ``lock-``: Curator would sort
them by their whole name and could take the mutex while we hold it). Curator's contenders are ephemeral sequential children named
``_c_<uuid>-lock-<10-digit sequence>``; the one with the smallest sequence (the digits after the
last ``lock-``) holds the mutex, each other watches the one before it. This module is such a
contender, with the same names, so Java's writers and our commands exclude each other; the node
goes when we release or our session ends (a killed process releases the lock once ZooKeeper
expires its session, ``hoodie.write.lock.zookeeper.session_timeout_ms``).

Needs the ``kazoo`` client (``pip install airflow-hudi-etc[zookeeper]``).
"""

from __future__ import annotations

import threading
import time
import uuid

from . import write_config as wc
from .locks import LockProvider, LockProviderError

K_URL = "hoodie.write.lock.zookeeper.url"
K_BASE = "hoodie.write.lock.zookeeper.base_path"
K_KEY = "hoodie.write.lock.zookeeper.lock_key"
K_SESSION_MS = "hoodie.write.lock.zookeeper.session_timeout_ms"
K_CONNECTION_MS = "hoodie.write.lock.zookeeper.connection_timeout_ms"
LOCK_NAME = "lock-"


def sequence_of(child: str) -> str:
    """Curator's sort key of a contender: what follows the last ``lock-`` of its name."""
    i = child.rfind(LOCK_NAME)
    return child[i + len(LOCK_NAME):] if i >= 0 else child


def connect_string(config: wc.WriteConfig) -> str:
    """The server(s) as Java connects: ``hoodie.write.lock.zookeeper.url`` as given (Java's provider
    never reads ``...zookeeper.port``: a url without a port is ZooKeeper's default, 2181)."""
    url = config.get(K_URL)
    if url is None:
        raise LockProviderError(f"ZookeeperBasedLockProvider needs {K_URL}")
    return url


def lock_path(storage, config: wc.WriteConfig) -> str:
    base = config.get(K_BASE)
    if base is None:
        raise LockProviderError(f"ZookeeperBasedLockProvider needs {K_BASE}")
    key = config.get(K_KEY)
    if key is None:  # Java infers it from the table's name
        from ..config.properties import load_table_config

        key = load_table_config(storage, require_mor=False).raw.get("hoodie.table.name")
        if not key:
            raise LockProviderError(f"ZookeeperBasedLockProvider: no {K_KEY} and no table name to infer it from")
    return f"/{base.strip('/')}/{key.strip('/')}"


class ZookeeperLock(LockProvider):
    name = "ZookeeperBasedLockProvider"

    def __init__(self, storage, config: wc.WriteConfig):
        try:
            from kazoo.client import KazooClient
        except ImportError:
            raise LockProviderError("ZookeeperBasedLockProvider needs the kazoo client: "
                                    "pip install 'airflow-hudi-etc[zookeeper]'") from None
        self.hosts = connect_string(config)
        self.path = lock_path(storage, config)
        session_s = config.int(K_SESSION_MS, 60_000) / 1000
        self.connect_s = config.int(K_CONNECTION_MS, 15_000) / 1000
        self.client = KazooClient(hosts=self.hosts, timeout=max(session_s, 1.0))
        self._node: str | None = None
        self._started = False

    def _start(self) -> None:
        if self._started:
            return
        from kazoo.handlers.threading import KazooTimeoutError

        try:
            self.client.start(timeout=self.connect_s)
        except KazooTimeoutError:
            self.client.close()
            raise LockProviderError(f"ZookeeperBasedLockProvider: no ZooKeeper server answered at {self.hosts} "
                                    f"within {self.connect_s:g} s") from None
        self._started = True

    def check(self) -> None:
        self._start()

    def _contenders(self) -> list[str]:
        return sorted((c for c in self.client.get_children(self.path) if LOCK_NAME in c), key=sequence_of)

    def try_lock(self, wait_s: float) -> bool:
        self._start()
        node = self.client.create(f"{self.path}/_c_{uuid.uuid4()}-{LOCK_NAME}", b"",
                                  ephemeral=True, sequence=True, makepath=True)
        name = node.rsplit("/", 1)[1]
        deadline = time.monotonic() + max(wait_s, 0.0)
        while True:
            kids = self._contenders()
            if name not in kids:  # our session was lost and the node with it
                return False
            i = kids.index(name)
            if i == 0:
                self._node = node
                return True
            gone = threading.Event()
            if self.client.exists(f"{self.path}/{kids[i - 1]}", watch=lambda _event: gone.set()) is None:
                continue  # the one before us went meanwhile
            left = deadline - time.monotonic()
            if left <= 0 or not gone.wait(left):
                self.client.delete(node)
                return False

    def unlock(self) -> None:
        if self._node is not None:
            from kazoo.exceptions import NoNodeError

            try:
                self.client.delete(self._node)
            except NoNodeError:
                pass
            self._node = None

    def close(self) -> None:
        self.unlock()
        if self._started:
            self.client.stop()
            self.client.close()
            self._started = False

    def owner(self) -> str:
        try:
            kids = self._contenders() if self._started else []
        except Exception:  # noqa: BLE001 - only for a message
            kids = []
        return f"{kids[0]} under {self.path} on {self.hosts}" if kids else f"{self.path} on {self.hosts}"

