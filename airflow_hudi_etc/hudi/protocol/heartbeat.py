"""Heartbeats of running writes and compaction executions, in Hudi's layout.

Java Hudi (``HoodieHeartbeatClient``, 0.14) keeps ``.hoodie/.heartbeat/<instant>`` fresh while an
instant is being written: the file is (re)written every ``hoodie.client.heartbeat.interval_in_ms``
(default 60 s, at least 1 s) and deleted when the instant commits. Only its *modification time*
counts: a heartbeat is expired when ``now - mtime > interval * hoodie.client.heartbeat.tolerable.misses``
(default 2, so 120 s), and a missing file is expired. Java's lazy failed-writes policy rolls back
pending instants whose heartbeat expired, and leaves the others alone.

Here (same file, same rule, so Java sees our live work as live):

* :func:`hold` acquires an instant's heartbeat for the duration of a write or an execution: the
  file is *created* (atomically: a second process gets a typed ``conflict``) when absent, taken
  over when expired, refused when alive; within one process a second *thread* asking for a
  heartbeat another thread holds gets the same ``conflict`` (re-entrant in one thread only); a background thread refreshes its mtime every interval;
  it is deleted at the end (commit or failure). ``check()`` before a commit verifies the file is
  still this process's (another process that judged it expired and took it over wins).
* The file holds a small JSON owner record (Java writes it empty and never reads it): host, boot
  id, pid and the pid's start time. A heartbeat whose owner ran on this machine and is gone (the
  pid is dead or reused) counts as expired at once, so a retry right after a crash on the same
  machine need not wait out the tolerance; owners elsewhere are judged by the mtime alone.
* Settings: ``hoodie.client.heartbeat.interval_in_ms`` / ``.tolerable.misses`` from the table's
  ``hoodie.properties`` when present, then from the writers' settings recorded with ``configure
  --hoodie`` (and ``$HUDI_ETC_HOODIE_CONF``), overridden by ``HUDI_ETC_HEARTBEAT_INTERVAL_MS`` /
  ``HUDI_ETC_HEARTBEAT_TOLERABLE_MISSES``.
"""

from __future__ import annotations

import contextlib
import json
import os
import posixpath
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from typing import Iterator, Mapping

from ..errors import InstantExistsError, InvalidInputError
from ..owners import owner_dead_here, owner_record
from ..storage import Storage, temp_owner
from ..timeline.active import META_DIR

HEARTBEAT_DIR = f"{META_DIR}/.heartbeat"
K_INTERVAL = "hoodie.client.heartbeat.interval_in_ms"
K_MISSES = "hoodie.client.heartbeat.tolerable.misses"
ENV_INTERVAL = "HUDI_ETC_HEARTBEAT_INTERVAL_MS"
ENV_MISSES = "HUDI_ETC_HEARTBEAT_TOLERABLE_MISSES"
DEFAULT_INTERVAL_MS = 60_000
DEFAULT_MISSES = 2


@dataclass(frozen=True)
class HeartbeatSettings:
    interval_ms: int = DEFAULT_INTERVAL_MS
    tolerable_misses: int = DEFAULT_MISSES

    @property
    def max_age_ms(self) -> int:
        """Java's ``maxAllowableHeartbeatIntervalInMs``: older than this is expired."""
        return self.interval_ms * self.tolerable_misses


def settings(props: Mapping[str, str] | None = None) -> HeartbeatSettings:
    props = props or {}

    def value(key: str, env: str, default: int) -> int:
        raw = os.environ.get(env) or props.get(key)
        if raw in (None, ""):
            return default
        try:
            return int(str(raw).strip())
        except ValueError:
            raise InvalidInputError(f"{key} ({env}) is not a number: {raw!r}") from None

    interval = value(K_INTERVAL, ENV_INTERVAL, DEFAULT_INTERVAL_MS)
    misses = value(K_MISSES, ENV_MISSES, DEFAULT_MISSES)
    if interval < 1000:  # as Java: "Cannot set heartbeat lower than 1 second"
        raise InvalidInputError(f"{K_INTERVAL} {interval}: the heartbeat interval is at least 1000 ms")
    if misses < 1:
        raise InvalidInputError(f"{K_MISSES} {misses}: tolerate at least one missed heartbeat")
    return HeartbeatSettings(interval, misses)


def table_settings(storage: Storage) -> HeartbeatSettings:
    from ..config.properties import read_table_properties
    from ..errors import HudiEtcError

    try:  # as Java reads them: the backup while a Java writer rewrites the file
        props = read_table_properties(storage)
    except HudiEtcError:
        props = {}
    try:  # the writers' own settings, recorded with configure --hoodie (and this run's), win
        from ..concurrency.transaction import table_write_config

        props = {**props, **{k: v for k, v in table_write_config(storage).conf.items() if k in (K_INTERVAL, K_MISSES)}}
    except HudiEtcError:
        pass
    return settings(props)


def heartbeat_path(instant: str) -> str:
    return f"{HEARTBEAT_DIR}/{instant}"


# ------------------------------------------------------------------ owners (hudi/owners.py)
def _owner_record(token: str) -> bytes:
    return owner_record(token=token)


def _token_of(data: bytes) -> str | None:
    try:
        return json.loads(data.decode() or "{}").get("token")
    except (ValueError, UnicodeDecodeError, AttributeError):
        return None


def is_alive(storage: Storage, instant: str, cfg: HeartbeatSettings | None = None) -> bool:
    """Java's rule (mtime within ``interval * misses``), plus: an owner known dead is not alive.
    A heartbeat this process holds is alive."""
    if _held.get((storage.base_uri, instant)) is not None:
        return True
    cfg = cfg or table_settings(storage)
    rel = heartbeat_path(instant)
    mtime = storage.mtime(rel)
    if mtime is None or (time.time() - mtime) * 1000 > cfg.max_age_ms:
        return False
    try:
        data = storage.read_bytes(rel)
    except FileNotFoundError:
        return False
    return not owner_dead_here(data)


def delete(storage: Storage, instant: str) -> None:
    """Remove an instant's heartbeat file (a finished or rolled-back instant's)."""
    storage.delete(heartbeat_path(instant))


# ------------------------------------------------------------------ holding one
_held: dict[tuple[str, str], "Heartbeat"] = {}
_held_lock = threading.Lock()


class Heartbeat:
    """A heartbeat this process holds (see :func:`hold`)."""

    def __init__(self, storage: Storage, instant: str, cfg: HeartbeatSettings, token: str):
        self.storage, self.instant, self.cfg, self.token = storage, instant, cfg, token
        self.rel = heartbeat_path(instant)
        self.lost: str | None = None
        self.owner_thread = threading.get_ident()  # hold() is re-entrant in this thread only
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"hudi-etc-heartbeat-{instant}", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.cfg.interval_ms / 1000):
            try:
                if not self._still_mine():
                    self.lost = "the heartbeat file was taken over or removed by another process"
                    return
                self.storage.touch(self.rel)
            except Exception as e:  # noqa: BLE001 - reported by check()
                self.lost = f"the heartbeat could not be refreshed: {e}"
                return

    def _still_mine(self) -> bool:
        try:
            return _token_of(self.storage.read_bytes(self.rel)) == self.token
        except FileNotFoundError:
            return False

    def check(self) -> None:
        """Raise a typed ``conflict`` unless the heartbeat is still this process's (before a commit)."""
        if self.lost is None and not self._still_mine():
            self.lost = "the heartbeat file was taken over or removed by another process"
        if self.lost is not None:
            raise InstantExistsError(f"conflict: {self.instant}: {self.lost}; nothing was committed")

    def _release(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(5)
        if self._still_mine():
            self.storage.delete(self.rel)


def _acquire(storage: Storage, instant: str, cfg: HeartbeatSettings, what: str) -> Heartbeat:
    token = uuid.uuid4().hex
    rel = heartbeat_path(instant)
    storage.mkdirs(HEARTBEAT_DIR)
    for _ in range(2):
        try:
            storage.create_if_absent(rel, _owner_record(token))
            return Heartbeat(storage, instant, cfg, token)
        except InstantExistsError:
            pass
        if is_alive(storage, instant, cfg):
            raise InstantExistsError(f"conflict: {what} {instant} is running (its heartbeat {rel} is alive); "
                                     f"try again after it ends")
        _remove_expired(storage, rel, cfg)
    raise InstantExistsError(f"conflict: another process took over the heartbeat of {what} {instant}")


def _remove_expired(storage: Storage, rel: str, cfg: HeartbeatSettings) -> None:
    """Remove an expired heartbeat file. Where the storage renames atomically and has hard links
    (local files) it is first renamed aside (of two processes taking it over, one gets it) and
    checked again: a live one renamed by mistake (a third process had just taken it over) is put
    back; elsewhere it is deleted."""
    if not (storage.atomic_rename and storage.hard_links):
        storage.delete(rel)
        return
    aside = posixpath.join(posixpath.dirname(rel), f".{posixpath.basename(rel)}.{uuid.uuid4().hex}.expired")
    try:
        storage.rename(rel, aside)
    except FileNotFoundError:
        return
    mtime = storage.mtime(aside)
    fresh = mtime is not None and (time.time() - mtime) * 1000 <= cfg.max_age_ms
    if fresh and not owner_dead_here(storage.read_bytes(aside)):
        try:
            storage.hard_link(aside, rel)
        except InstantExistsError:
            pass
    storage.delete(aside)


#: keys being acquired (between the check and the heartbeat file), by the acquiring thread
_acquiring: dict[tuple[str, str], int] = {}


@contextlib.contextmanager
def hold(storage: Storage, instant: str, *, what: str = "the operation",
         cfg: HeartbeatSettings | None = None) -> Iterator[Heartbeat]:
    """Hold ``instant``'s heartbeat for the block (re-entrant within one *thread*: an execution
    that rolls its own inflight back): refused with a typed ``conflict`` while another process's
    heartbeat for it is alive, or another thread of this process holds it (or is acquiring it).
    Temp files made in the block carry the instant
    (:func:`~airflow_hudi_etc.hudi.storage.temp_owner`)."""
    key = (storage.base_uri, instant)
    me = threading.get_ident()
    with _held_lock:
        mine = _held.get(key)
        busy = mine is None and key in _acquiring
        if mine is None and not busy:
            _acquiring[key] = me
    if mine is not None and mine.owner_thread == me:
        with temp_owner(instant):
            yield mine
        return
    if mine is not None or busy:
        raise InstantExistsError(f"conflict: {what} {instant} is running in another thread of this process (its "
                                 f"heartbeat {heartbeat_path(instant)} is held); try again after it ends")
    try:
        hb = _acquire(storage, instant, cfg or table_settings(storage), what)
        hb.owner_thread = me
        with _held_lock:
            _held[key] = hb
    finally:
        with _held_lock:
            _acquiring.pop(key, None)
    hb._thread.start()
    try:
        with temp_owner(instant):
            yield hb
    finally:
        with _held_lock:
            _held.pop(key, None)
        hb._release()


def held_here(storage: Storage, instant: str) -> bool:
    return (storage.base_uri, instant) in _held


# ------------------------------------------------------------------ stale temp files
def remove_stale_temp_files(storage: Storage, folders, *, own: str | None = None,
                            cfg: HeartbeatSettings | None = None) -> list[str]:
    """Remove the temp files that crashed operations left in ``folders`` (table-relative): those
    whose owner instant's heartbeat is not alive; those without an owner (or of the older naming)
    once older than the heartbeat tolerance. ``own``: the instant whose heartbeat the caller has
    just acquired, before starting its work: temp files of that instant are a dead earlier
    run's. Returns what was removed."""
    if not storage.writes_temp_files:
        return []
    cfg = cfg or table_settings(storage)
    now = time.time()
    alive: dict[str, bool] = {own: False} if own else {}
    removed = []
    for d in dict.fromkeys(folders):
        for rel, owner, mtime in storage.temp_files(d):
            if owner:
                if owner not in alive:
                    alive[owner] = is_alive(storage, owner, cfg)
                stale = not alive[owner]
            else:
                stale = (now - mtime) * 1000 > cfg.max_age_ms
            if stale and storage.delete(rel):
                removed.append(rel)
    return removed
