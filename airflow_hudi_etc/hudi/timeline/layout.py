"""Writing instants in the table's timeline layout, one set of calls for both layouts.

Layout 1 (table version 6): ``.hoodie/<t>.<action>[.<state>]``, JSON commit metadata, one instant
time per instant. Layout 2 (versions 8/9, shared/hudi-format-v8-v9.md §2): ``.hoodie/timeline/``,
``<r>_<c>.<action>`` once completed, Avro commit metadata, and requested **and** completion times
from one monotonic clock (each greater than every time on the timeline, :func:`next_time_layout2`).

The writers and table services call these instead of ``Instant(...).path()`` /
``next_instant_time`` / ``commits.commit_bytes``; the timeline's class (:class:`.active.Timeline`,
:class:`.active.LayoutTwoTimeline`) and its profile decide how:

* :func:`instant` — an :class:`Instant` whose paths are in the timeline's folder;
* :func:`new_time` — a new requested time;
* :func:`completed_path` — the completed file of an instant, if there is one;
* :func:`complete` — write the completed file (the commit point), once;
* :func:`commit_data` — the bytes of commit metadata in the table's encoding.
"""

from __future__ import annotations

import datetime as _dt

from ..errors import InstantExistsError
from .active import Action, Instant, State, Timeline, next_time_layout2  # noqa: F401 - named in the docs
from .commits import CommitMetadata, commit_bytes


def meta_dir(timeline: Timeline) -> str:
    return timeline.meta_dir


def instant(timeline: Timeline, ts: str, action: Action, state: State = State.REQUESTED) -> Instant:
    """Instant ``ts`` in ``state`` with its files in ``timeline``'s folder (a completed one needs
    :func:`completed_path` in layout 2: its name holds the completion time)."""
    return Instant(ts, action, state, None, timeline.meta_dir)


def new_time(timeline: Timeline, *, zone: _dt.tzinfo = _dt.timezone.utc, now: _dt.datetime | None = None) -> str:
    """A new requested time: after every instant (layout 1), after every requested and completion
    time (layout 2)."""
    return timeline.new_time(zone=zone, now=now)


def completed_path(storage, timeline: Timeline, ts: str, action: Action) -> str | None:
    """The table-relative path of the completed file of instant ``ts`` (None: not completed). Reads
    storage, not ``timeline`` (which may be older than the instant's completion)."""
    return timeline.completed_path(storage, ts, action)


def commit_data(timeline: Timeline, meta: CommitMetadata) -> bytes:
    """Commit metadata as ``timeline``'s table stores it (:func:`~.commits.commit_bytes` with its
    profile): JSON (version 6) or an Avro ``HoodieCommitMetadata`` container (versions 8/9; keys the
    schema does not have, e.g. our ``hoodieEtc*`` write-stat keys, are left out)."""
    return commit_bytes(meta, timeline.profile)


def complete(storage, timeline: Timeline, ts: str, action: Action, data: bytes, *,
             zone: _dt.tzinfo = _dt.timezone.utc, now: _dt.datetime | None = None) -> str:
    """Write the completed file of instant ``ts`` (the commit point) with ``data``; its path.
    Layout 2: the completion time is taken now, after every time on a fresh listing of the
    timeline; a retry that finds the instant completed with the same bytes is answered with that
    file, other bytes are an :class:`InstantExistsError`. Layout 1: put-if-absent."""
    return timeline.complete(storage, ts, action, data, zone=zone, now=now)


def delete_pending(storage, timeline: Timeline, ts: str, action: Action, states=(State.INFLIGHT, State.REQUESTED)) -> None:
    """Delete the requested/inflight files of instant ``ts`` (in this order by default)."""
    for st in states:
        storage.delete(instant(timeline, ts, action, st).path())


__all__ = ["meta_dir", "instant", "new_time", "completed_path", "commit_data", "complete", "delete_pending",
           "InstantExistsError"]
