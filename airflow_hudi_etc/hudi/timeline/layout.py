"""Writing instants in the table's timeline layout, one set of calls for both layouts.

Layout 1 (table version 6): ``.hoodie/<t>.<action>[.<state>]``, JSON commit metadata, one instant
time per instant. Layout 2 (versions 8/9, shared/hudi-format-v8-v9.md §2): ``.hoodie/timeline/``,
``<r>_<c>.<action>`` once completed, Avro commit metadata, and requested **and** completion times
from one monotonic clock (each greater than every time on the timeline, :func:`next_time_layout2`).

The writers and table services call these instead of ``Instant(...).path()`` /
``next_instant_time`` / ``commits.commit_bytes`` so the layout is decided in one place:

* :func:`instant` — an :class:`Instant` whose paths are in the timeline's folder;
* :func:`new_time` — a new requested time;
* :func:`completed_path` — the completed file of an instant, if there is one;
* :func:`complete` — write the completed file (the commit point), once;
* :func:`commit_data` — the bytes of commit metadata in the layout.
"""

from __future__ import annotations

import datetime as _dt

from ..errors import InstantExistsError
from .active import _GROUP_V2, META_DIR, Action, Instant, State, Timeline, next_instant_time, next_time_layout2
from .commits import CommitMetadata, commit_bytes


def layout_of(timeline: Timeline) -> int:
    return getattr(timeline, "layout", 1)


def meta_dir(timeline: Timeline) -> str:
    return getattr(timeline, "meta_dir", META_DIR) if layout_of(timeline) == 2 else META_DIR


def instant(timeline: Timeline, ts: str, action: Action, state: State = State.REQUESTED) -> Instant:
    """Instant ``ts`` in ``state`` with its files in ``timeline``'s folder (a completed one needs
    :func:`completed_path` in layout 2: its name holds the completion time)."""
    return Instant(ts, action, state, None, meta_dir(timeline))


def new_time(timeline: Timeline, *, zone: _dt.tzinfo = _dt.timezone.utc, now: _dt.datetime | None = None) -> str:
    """A new requested time: after every instant (layout 1), after every requested and completion
    time (layout 2)."""
    if layout_of(timeline) == 2:
        return next_time_layout2(timeline, now=now, zone=zone)
    return next_instant_time(timeline, now, zone=zone)


def completed_path(storage, timeline: Timeline, ts: str, action: Action) -> str | None:
    """The table-relative path of the completed file of instant ``ts`` (None: not completed). Reads
    storage, not ``timeline`` (which may be older than the instant's completion)."""
    group = _GROUP_V2.get(action, action)
    if layout_of(timeline) != 2:
        p = Instant(ts, action, State.COMPLETED).path()
        return p if storage.exists(p) else None
    d = meta_dir(timeline)
    prefix, suffix = f"{ts}_", f".{group.value}"
    for n in storage.list_entry_names(d):
        if n.startswith(prefix) and n.endswith(suffix) and n[len(prefix):-len(suffix)].isdigit():
            return f"{d}/{n}"
    return None


def commit_data(timeline: Timeline, meta: CommitMetadata) -> bytes:
    """Commit metadata as ``timeline``'s layout stores it (:func:`~.commits.commit_bytes`): JSON
    (layout 1) or an Avro ``HoodieCommitMetadata`` container (layout 2; keys the schema does not
    have, e.g. our ``hoodieEtc*`` write-stat keys, are left out)."""
    return commit_bytes(meta, layout=layout_of(timeline))


def complete(storage, timeline: Timeline, ts: str, action: Action, data: bytes, *,
             zone: _dt.tzinfo = _dt.timezone.utc, now: _dt.datetime | None = None) -> str:
    """Write the completed file of instant ``ts`` (the commit point) with ``data``; its path.
    Layout 2: the completion time is taken now, after every time on a fresh listing of the
    timeline; a retry that finds the instant completed with the same bytes is answered with that
    file, other bytes are an :class:`InstantExistsError`. Layout 1: put-if-absent."""
    if layout_of(timeline) != 2:
        p = Instant(ts, action, State.COMPLETED).path()
        storage.create_if_absent(p, data)
        return p
    from .timeline_v2 import complete_instant

    d = meta_dir(timeline)
    fresh = Timeline.load(storage)
    c = next_time_layout2(fresh, now=now, zone=zone)
    return f"{d}/{complete_instant(storage, d, ts, action, c, data)}"


def delete_pending(storage, timeline: Timeline, ts: str, action: Action, states=(State.INFLIGHT, State.REQUESTED)) -> None:
    """Delete the requested/inflight files of instant ``ts`` (in this order by default)."""
    for st in states:
        storage.delete(instant(timeline, ts, action, st).path())


__all__ = ["layout_of", "meta_dir", "instant", "new_time", "completed_path", "commit_data", "complete",
           "delete_pending", "InstantExistsError"]
