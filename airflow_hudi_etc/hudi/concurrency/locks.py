"""Hudi's table lock, taken by our commands as the table's Java writers take it.

A Java writer in a multi-writer mode (``hoodie.write.concurrency.mode`` OCC or NBCC) holds the
lock of its ``hoodie.write.lock.provider`` while it completes an instant (conflict check, metadata
table, the completed file) and while it schedules a table service; our commands hold the same lock
for the same steps (:mod:`.transaction`). Only the *same* provider with the same settings excludes
a Java writer: the provider is the one the writers are configured with, recorded once on the table
(:mod:`.write_config`).

Providers (one module each, picked by class name in :mod:`.providers`): ``FileSystemBasedLockProvider`` (:mod:`.fs_lock`: a lock file created
exclusively), ``ZookeeperBasedLockProvider`` (:mod:`.zookeeper`: a contender of Curator's
``InterProcessMutex`` under the same znode), Hudi 1.1+'s ``StorageBasedLockProvider``
(:mod:`.storage_lock`: a lease file replaced on a condition, on S3). A provider this process cannot take is refused with
:class:`LockProviderError` before anything is written; a lock not acquired in time is
:class:`LockTimeoutError` (code ``conflict``: retry later).

Acquiring follows Java's ``LockManager``: up to ``hoodie.write.lock.client.num_retries`` more tries
after the first, ``hoodie.write.lock.client.wait_time_ms_between_retry`` apart, each try waiting up
to ``hoodie.write.lock.wait_time_ms`` for providers that can wait (ZooKeeper).
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Callable, Iterator

from ..errors import HudiEtcError, InstantExistsError
from . import write_config as wc

#: Java's defaults (HoodieLockConfig)
DEFAULT_WAIT_MS = 60_000
DEFAULT_CLIENT_NUM_RETRIES = 50
DEFAULT_CLIENT_RETRY_WAIT_MS = 5_000


class LockProviderError(HudiEtcError):
    """The table's lock provider cannot be taken by this process (unknown class, missing settings,
    storage without atomic creation, no server): refused before anything is written."""

    code = "lock_provider"


class LockTimeoutError(InstantExistsError):
    """The table's lock was not acquired in time (a Java writer or another command holds it):
    nothing was written by this step; retry."""

    code = "conflict"


class LockLostError(InstantExistsError):
    """The table lock this command took is no longer its own (see :func:`lost_lock`): nothing more
    was written under it; retry."""

    code = "conflict"


class LockProvider:
    """One table lock. ``try_lock(wait_s)`` → whether it is held now; ``unlock()``; ``close()``."""

    name = "lock"

    def try_lock(self, wait_s: float) -> bool:  # pragma: no cover - interface
        raise NotImplementedError

    def unlock(self) -> None:  # pragma: no cover - interface
        raise NotImplementedError

    def close(self) -> None:
        """Release (if held) and let go of any connection."""
        self.unlock()

    def check(self) -> None:
        """Raise :class:`LockProviderError` if the lock cannot be reached (``configure`` asks)."""

    def still_held(self) -> bool:
        """Whether the lock taken is still this process's, as far as the provider can tell (asked
        before the metadata table is updated and before an instant completes)."""
        return True

    def owner(self) -> str:
        """Who holds it, as far as the provider tells (for the timeout's message)."""
        return ""


#: this thread's table locks: table base location -> the provider holding it
_CURRENT = threading.local()


def _current() -> dict:
    return _CURRENT.__dict__.setdefault("providers", {})


def lost_lock(storage) -> LockProvider | None:
    """The provider of this thread's lock on ``storage``'s table if that lock is no longer ours
    (:meth:`LockProvider.still_held`), else None (held, or no lock taken)."""
    provider = _current().get(storage.base_uri)
    return provider if provider is not None and not provider.still_held() else None


def _lost_message(provider: LockProvider) -> str:
    return (f"conflict: the table lock ({provider.name}) was taken from this command while it held it (a "
            "Java writer releasing the file-system lock deletes the lock file twice, the second time "
            "whoever's it is by then): nothing was completed, try again")


def check_still_held(storage, error: type[InstantExistsError] = LockLostError) -> None:
    """``error`` (a conflict) if this thread's lock on ``storage``'s table is no longer ours."""
    provider = lost_lock(storage)
    if provider is not None:
        raise error(_lost_message(provider))


@contextlib.contextmanager
def held(provider: LockProvider, config: wc.WriteConfig, *, what: str,
         sleep: Callable[[float], None] = time.sleep, table=None) -> Iterator[None]:
    """Hold ``provider``'s lock for the block (Java's retry rule, see the module docstring);
    ``table`` (its storage): :func:`lost_lock` answers for it while the block runs."""
    wait_s = config.int(wc.K_WAIT_MS, DEFAULT_WAIT_MS) / 1000
    retries = config.int(wc.K_CLIENT_NUM_RETRIES, DEFAULT_CLIENT_NUM_RETRIES)
    between_s = config.int(wc.K_CLIENT_RETRY_WAIT_MS, DEFAULT_CLIENT_RETRY_WAIT_MS) / 1000
    for attempt in range(retries + 1):
        if provider.try_lock(wait_s):
            break
        if attempt < retries:
            sleep(between_s)
    else:
        owner = provider.owner()
        raise LockTimeoutError(f"conflict: {what}: the table lock ({provider.name}) was not acquired after "
                               f"{retries + 1} tries{f'; held by {owner}' if owner else ''}; nothing was "
                               "written, try again")
    key = None if table is None else table.base_uri
    if key is not None:
        _current()[key] = provider
    try:
        yield
    finally:
        if key is not None:
            _current().pop(key, None)
        provider.unlock()


__all__ = ["LockProvider", "LockProviderError", "LockTimeoutError", "LockLostError", "held", "lost_lock",
           "check_still_held"]
