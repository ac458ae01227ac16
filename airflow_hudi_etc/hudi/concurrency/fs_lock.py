"""Hudi's ``FileSystemBasedLockProvider``: the lock is one file, created exclusively, deleted to
release.

As Java (0.14 to 1.2): the file is ``<dir>/lock`` where ``<dir>`` is
``hoodie.write.lock.filesystem.path`` when set, else the table's ``.hoodie`` folder (a Spark
writer's default; Flink's writers default to ``.hoodie/.aux``, their ``getLockConfig``: record
that path when Flink writes the table). Java 0.14 fills it with a pretty-printed JSON ``LockInfo``
(``lockCreateTime``, ``lockThreadName``, ``lockStacksInfo``), 0.15 and later leave it empty; Java
reads it only to log who holds it, so we write 0.14's form for the message. A lock file older than
``hoodie.write.lock.filesystem.expire`` minutes (0, the default: never) is deleted and taken. Java
refuses the provider on storage without atomic creation (its ``StorageSchemes``; object stores
among them); so do we, whatever ``hoodie.fs.atomic_creation.support`` says, when our storage
cannot create a file exclusively.

Trying never waits: Java's ``tryLock`` of this provider returns at once, its lock manager retries.
A lock file that one of our processes left on this machine when it was killed is taken over at
once (its owner record names a process that is gone); one Java left stays until it expires (or is
deleted by hand, as Hudi's docs say of this provider).
"""

from __future__ import annotations

import datetime as _dt
import json
import threading
import time

from ..errors import InstantExistsError
from ..owners import owner_dead_here, owner_record
from . import write_config as wc
from .locks import LockProvider, LockProviderError

K_PATH = "hoodie.write.lock.filesystem.path"
K_EXPIRE = "hoodie.write.lock.filesystem.expire"
LOCK_FILE = "lock"
#: how our lock files' lockThreadName starts (an owner record follows)
OWNER_PREFIX = "hudi-etc "


def lock_info_bytes(thread_name: str, now: _dt.datetime | None = None) -> bytes:
    """The lock file's content as Java 0.14 writes it (Jackson's default pretty printer over
    ``LockInfo``): the local time the lock was taken, who took it (for ours: ``hudi-etc`` and an
    owner record, :mod:`..owners`), no stack."""
    now = now or _dt.datetime.now()
    created = now.strftime("%Y-%m-%d %H:%M:%S.") + f"{now.microsecond // 1000:03d}"
    return ("{\n"
            f'  "lockCreateTime" : {json.dumps(created)},\n'
            f'  "lockThreadName" : {json.dumps(thread_name)},\n'
            '  "lockStacksInfo" : [ ]\n'
            "}").encode()


class FileSystemLock(LockProvider):
    name = "FileSystemBasedLockProvider"

    def __init__(self, storage, config: wc.WriteConfig):
        from ..storage import Storage

        where = config.get(K_PATH)
        if where is None:
            self.storage, self.rel = storage, f".hoodie/{LOCK_FILE}"
        else:
            try:
                self.storage, self.rel = Storage(where.rstrip("/"), dict(storage.options)), LOCK_FILE
            except Exception as e:  # an unknown scheme, a path fsspec refuses
                raise LockProviderError(f"{K_PATH}={where}: {e}") from None
        self.expire_min = config.int(K_EXPIRE, 0)
        if self.expire_min < 0:
            raise LockProviderError(f"{K_EXPIRE}={self.expire_min}: must be 0 (never) or more minutes")
        if not self.storage.atomic_create:
            raise LockProviderError(
                f"{self.name} needs storage that creates a file exclusively; {self.storage.uri(self.rel)} is not "
                "(Java refuses such schemes too): use the ZooKeeper provider, or Hudi 1.1+'s "
                "StorageBasedLockProvider (S3; other stores through a Spark-hosted run)")
        self._mine: bytes | None = None
        self._owner = ""

    def path(self) -> str:
        return self.storage.uri(self.rel)

    def _expired(self) -> bool:
        if self.expire_min == 0:
            return False
        m = self.storage.mtime(self.rel)
        return m is not None and time.time() - m > self.expire_min * 60

    @staticmethod
    def _dead_owner(text: str) -> bool:
        """Whether lock file content ``text`` is one of our processes on this machine that died
        holding the lock: taken over at once, as a dead heartbeat is. Java's, or a live owner's, never."""
        try:
            name = json.loads(text).get("lockThreadName", "")
        except (ValueError, AttributeError):
            return False
        return isinstance(name, str) and name.startswith(OWNER_PREFIX) and owner_dead_here(name[len(OWNER_PREFIX):])

    def try_lock(self, wait_s: float) -> bool:
        if self.storage.exists(self.rel):
            try:
                self._owner = self.storage.read_text(self.rel)
            except (FileNotFoundError, UnicodeDecodeError):
                self._owner = ""
            if not self._expired() and not self._dead_owner(self._owner):
                return False
            self.storage.delete(self.rel)
        data = lock_info_bytes(OWNER_PREFIX + owner_record(thread=threading.current_thread().name).decode())
        try:
            self.storage.create_if_absent(self.rel, data)
        except InstantExistsError:
            return False
        self._mine = data
        return True

    def unlock(self) -> None:
        """Delete the lock file if it is still the one this process made (an expired lock taken
        over by another writer is theirs now)."""
        if self._mine is None:
            return
        try:
            if self.storage.read_bytes(self.rel) == self._mine:
                self.storage.delete(self.rel)
        except FileNotFoundError:
            pass
        self._mine = None

    def still_held(self) -> bool:
        """Our lock file is still there, ours: a Java writer releasing its own lock deletes the
        file twice (Hudi's ``LockManager.unlock()``: the provider's ``unlock()``, then its
        ``close()``, which deletes whatever lock file is there, every line 0.14 to 1.2), so a lock
        taken between the two is deleted under its holder and the next writer takes it too."""
        if self._mine is None:
            return False
        try:
            return self.storage.read_bytes(self.rel) == self._mine
        except FileNotFoundError:
            return False

    def owner(self) -> str:
        try:
            doc = json.loads(self._owner)
            return f"{doc.get('lockThreadName')} since {doc.get('lockCreateTime')} ({self.path()})"
        except (ValueError, AttributeError):
            return f"{self.path()} (no owner recorded: Java 0.15+ leaves it empty)"

