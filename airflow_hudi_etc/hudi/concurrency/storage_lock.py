"""Hudi 1.1+'s ``StorageBasedLockProvider``: a lease in one small file, replaced only on the
condition that it is still the version read before.

As Java 1.1.1 and 1.2.0: the lock is ``<table>/.hoodie/.locks/table_lock.json``, Jackson's compact
form of ``{"expired": bool, "validUntil": epoch ms, "owner": "<uuid>"}`` (one owner id per
provider object). To take it, read it; if it exists, is not ``expired`` and ``validUntil`` (plus
Java's 500 ms allowance for clock drift) has not passed, someone holds it. Otherwise write a new
lease, ``validUntil`` = now + ``hoodie.write.lock.storage.validity.timeout.secs`` (300 s), on the
condition that the file is still what was read (S3: ``If-Match`` on its ETag, or ``If-None-Match:
*`` when there was none): of two takers, one wins. While held, a heartbeat thread renews the lease
every ``hoodie.write.lock.storage.renew.interval.secs`` (30 s), each time on the condition of the
version it wrote last; to release, the lease is written back with ``"expired": true`` on that
condition (the file is never deleted). A holder that dies stops renewing, and its lease expires:
the next taker replaces it.

Java has an implementation of the condition only for object stores (its ``StorageSchemes``: S3 and
GCS on 1.1, Azure too on 1.2; ``file://`` and ``hdfs://`` throw "No implementation of StorageLock
supports this scheme"). This process has it on S3 (:attr:`~..storage.base.Backend.conditional_replace`);
elsewhere the provider is refused, as Java refuses it.
"""

from __future__ import annotations

import json
import threading
import time
import uuid

from . import write_config as wc
from .locks import LockProvider, LockProviderError

LOCK_FILE = ".hoodie/.locks/table_lock.json"
K_VALIDITY = "hoodie.write.lock.storage.validity.timeout.secs"
K_RENEW = "hoodie.write.lock.storage.renew.interval.secs"
K_RENEW_OLD = "hoodie.write.lock.storage.heartbeat.poll.secs"
DEFAULT_VALIDITY_S = 300
DEFAULT_RENEW_S = 30
#: Java's CLOCK_DRIFT_BUFFER_MS: a lease is taken for over only this long after its validUntil
CLOCK_DRIFT_MS = 500
#: Java's pause between two tries within one tryLock(time)
RETRY_S = 1.0


def lease_bytes(expired: bool, valid_until_ms: int, owner: str) -> bytes:
    """The lock file's content as Java writes it (Jackson, compact, fields in this order)."""
    return ('{"expired":%s,"validUntil":%d,"owner":%s}' % (
        "true" if expired else "false", valid_until_ms, json.dumps(owner))).encode()


def parse_lease(data: bytes) -> dict | None:
    """``{"expired", "validUntil", "owner"}`` of a lock file, or None when it is not one (Java fails
    its read then and does not take the lock; neither do we)."""
    try:
        doc = json.loads(data)
        if (isinstance(doc, dict) and isinstance(doc.get("expired"), bool)
                and isinstance(doc.get("validUntil"), int) and isinstance(doc.get("owner"), str)):
            return doc
    except ValueError:
        pass
    return None


def _now_ms() -> int:
    return int(time.time() * 1000)


class StorageLock(LockProvider):
    name = "StorageBasedLockProvider"

    def __init__(self, storage, config: wc.WriteConfig):
        if not storage.conditional_replace:
            raise LockProviderError(
                f"{self.name} needs storage that replaces a file on a condition (S3's If-Match); "
                f"{storage.uri('')} has none here, and Java has no implementation for its scheme either "
                "('No implementation of StorageLock supports this scheme'): use the ZooKeeper or file-system provider")
        self.storage = storage
        self.validity_s = config.int(K_VALIDITY, DEFAULT_VALIDITY_S)
        renew = config.get(K_RENEW) or config.get(K_RENEW_OLD)
        try:
            self.renew_s = int(renew) if renew is not None else DEFAULT_RENEW_S
        except ValueError:
            raise LockProviderError(f"{K_RENEW}={renew}: not a whole number of seconds") from None
        # Java's StorageBasedLockConfig checks, in its words
        if self.validity_s < self.renew_s * 10:
            raise LockProviderError(f"{K_VALIDITY} should be greater than or equal to 10x {K_RENEW}")
        if self.validity_s < 10:
            raise LockProviderError(f"{K_VALIDITY} should be greater than or equal to 10 seconds.")
        if self.renew_s < 1:
            raise LockProviderError(f"{K_RENEW} should be greater than or equal to 1 second.")
        self.owner_id = str(uuid.uuid4())
        self._state = threading.Lock()  # the lease below, shared with the heartbeat thread
        self._version: str | None = None  # the version of the lease we wrote last (None: not held)
        self._valid_until = 0
        self._stop = threading.Event()
        self._heartbeat: threading.Thread | None = None
        self._seen = ""
        self.lost = False  # the lease was taken from us while held (we failed to renew it in time)

    def path(self) -> str:
        return self.storage.uri(LOCK_FILE)

    # ------------------------------------------------------------------ taking and releasing
    def try_lock(self, wait_s: float) -> bool:
        deadline = time.monotonic() + max(wait_s, 0)
        while True:
            if self._try_once():
                return True
            if time.monotonic() + RETRY_S > deadline:
                return False
            time.sleep(RETRY_S)

    def _try_once(self) -> bool:
        with self._state:
            if self._version is not None:
                return True  # re-entrant, as Java's
            current = self.storage.read_versioned(LOCK_FILE)
            prior = None
            if current is not None:
                data, prior = current
                lease = parse_lease(data)
                if lease is None:
                    self._seen = f"an unreadable lock file ({data[:80]!r})"
                    return False
                if not lease["expired"] and _now_ms() <= lease["validUntil"] + CLOCK_DRIFT_MS:
                    self._seen = f"owner {lease['owner']} until {lease['validUntil']}"
                    return False
            valid_until = _now_ms() + self.validity_s * 1000
            version = self.storage.put_if_version(LOCK_FILE, lease_bytes(False, valid_until, self.owner_id), prior)
            if version is None:
                self._seen = "another writer took it at the same moment"
                return False
            self._version, self._valid_until, self.lost = version, valid_until, False
            self._stop.clear()
            self._heartbeat = threading.Thread(target=self._renew_loop, name="hudi-etc storage lock heartbeat",
                                               daemon=True)
            self._heartbeat.start()
            return True

    def renew(self) -> bool:
        """Extend the held lease by the validity from now (what the heartbeat does every
        ``renew_s``); False when it is no longer ours (taken over: the heartbeat stops)."""
        with self._state:
            if self._version is None:
                return False
            valid_until = _now_ms() + self.validity_s * 1000
            version = self.storage.put_if_version(LOCK_FILE, lease_bytes(False, valid_until, self.owner_id),
                                                  self._version)
            if version is None:
                self.lost = True
                return False
            self._version, self._valid_until = version, valid_until
            return True

    def _renew_loop(self) -> None:
        while not self._stop.wait(self.renew_s):
            try:
                if not self.renew():
                    return
            except OSError:
                continue  # storage unreachable for now: try at the next beat, as Java does

    def unlock(self) -> None:
        """Stop renewing, then write the lease back expired (on the condition it is still ours:
        a lease taken over after we lost it is left alone)."""
        self._stop.set()
        if self._heartbeat is not None and self._heartbeat is not threading.current_thread():
            self._heartbeat.join()
        self._heartbeat = None
        with self._state:
            if self._version is None:
                return
            try:
                self.storage.put_if_version(LOCK_FILE, lease_bytes(True, self._valid_until, self.owner_id),
                                            self._version)
            finally:
                self._version = None

    def owner(self) -> str:
        return f"{self._seen} ({self.path()})" if self._seen else self.path()


__all__ = ["StorageLock", "LOCK_FILE", "lease_bytes", "parse_lease"]
