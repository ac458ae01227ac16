"""The one commit path: every instant a command of ours completes or publishes goes through
:func:`transaction`.

Inside it, in this order, as Java's ``TransactionManager`` does around a commit and around
``scheduleTableService``: the table's lock is taken (when the table's writers have one,
:mod:`.locks`), the timeline is read again, the caller's conflict check runs on that timeline
(:mod:`.conflicts`; a conflict raises :class:`WriteConflictError` and nothing is completed), the
hooks that must see the commit before it is visible run (the metadata table, ...), the instant is
completed (or the plan published), and the lock is released.

A table whose writers run single-writer (no ``hoodie.write.lock.provider`` recorded) takes no
lock: the block runs with a fresh timeline, as before.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import threading
from dataclasses import dataclass
from typing import Callable, Iterator

from ..crash import crashpoint
from ..errors import InstantExistsError
from ..timeline import layout
from ..timeline.active import Action, Timeline
from . import jvm_metadata, write_config as wc
from .locks import check_still_held, held
from .providers import provider_for


class WriteConflictError(InstantExistsError):
    """Another writer completed, or a plan was published on, a file group this commit touches
    since it started (Hudi's ``HoodieWriteConflictException``): this commit is withdrawn."""

    code = "conflict"


#: hooks run inside every transaction, before the instant is completed: f(txn, action, ts, data)
_HOOKS: list[Callable[["Transaction", Action, str, bytes], None]] = []


def add_hook(fn: Callable[["Transaction", Action, str, bytes], None]) -> None:
    if fn not in _HOOKS:
        _HOOKS.append(fn)


def table_write_config(storage) -> wc.WriteConfig:
    """The table's recorded Hudi write settings with this run's over them."""
    from ..config.etc_settings import read_hoodie

    return wc.write_config(read_hoodie(storage))


@dataclass
class Transaction:
    storage: object
    config: wc.WriteConfig
    what: str

    def timeline(self) -> Timeline:
        """The timeline as it is now (read under the lock when there is one)."""
        return Timeline.load(self.storage)

    def complete(self, started_on: Timeline, ts: str, action: Action, data: bytes, *,
                 zone: _dt.tzinfo = _dt.timezone.utc, now: _dt.datetime | None = None,
                 conflict: Callable[[], str | None] | None = None) -> str:
        """Run ``conflict`` (a reason refuses), the hooks, then complete instant ``ts``: its path."""
        reason = conflict() if conflict is not None else None
        if reason:
            raise WriteConflictError(reason if reason.startswith("conflict") else f"conflict: {reason}")
        check_held(self.storage)
        # the metadata table first (a table without one: nothing), then any other hook
        jvm_metadata.apply(self.storage, self.config, action, ts, data)
        for hook in list(_HOOKS):
            hook(self, action, ts, data)
        crashpoint("commit.after-metadata")
        check_held(self.storage)
        return layout.complete(self.storage, started_on, ts, action, data, zone=zone, now=now)


def check_held(storage) -> None:
    """Refuse to go on (:class:`WriteConflictError`, nothing completed: the write is withdrawn and
    written again) when this thread's lock on ``storage``'s table is no longer ours
    (:meth:`~.locks.LockProvider.still_held`). Nothing to check without a lock."""
    check_still_held(storage, WriteConflictError)


#: the tables whose lock this thread holds (a transaction inside one runs under it)
_HELD = threading.local()


@contextlib.contextmanager
def transaction(storage, *, what: str, config: wc.WriteConfig | None = None) -> Iterator[Transaction]:
    """Hold the table's lock (if its writers use one) for the block; see the module docstring. A
    transaction opened while this thread already holds the table's lock (a step of a command
    that runs under it, e.g. unschedule's orphan removal) runs under that lock."""
    config = config or table_write_config(storage)
    held_here = _HELD.__dict__.setdefault("tables", set())
    key = storage.base_uri
    if key in held_here:
        yield Transaction(storage, config, what)
        return
    provider = provider_for(storage, config)
    if provider is None:
        yield Transaction(storage, config, what)
        return
    try:
        with held(provider, config, what=what, table=storage):
            held_here.add(key)
            try:
                yield Transaction(storage, config, what)
            finally:
                held_here.discard(key)
    finally:
        provider.close()


def complete(storage, started_on: Timeline, ts: str, action: Action, data: bytes, *, what: str,
             zone: _dt.tzinfo = _dt.timezone.utc, now: _dt.datetime | None = None) -> str:
    """Complete instant ``ts`` through the commit path (one transaction, no conflict check: the
    table services' commits, as Java's); its path."""
    with transaction(storage, what=what) as txn:
        return txn.complete(started_on, ts, action, data, zone=zone, now=now)


__all__ = ["transaction", "complete", "check_held", "Transaction", "WriteConflictError", "add_hook",
           "table_write_config"]
