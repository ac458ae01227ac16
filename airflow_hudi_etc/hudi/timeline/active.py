"""The active timeline: :class:`Timeline` (timeline layout 1, table version 6) and
:class:`LayoutTwoTimeline` (layout 2, versions 8/9; its names are parsed in :mod:`.timeline_v2`).
:meth:`Timeline.load` builds the class of the table's layout (its profile's ``timeline_layout``).

Vocabulary (as in Hudi and hudi-rs): an *instant* is a 17-digit timestamp plus an *action*
(deltacommit, commit, compaction, clean, rollback, replacecommit, ...) and a *state*
(requested, inflight, completed). Each state is a file in ``.hoodie/``:
``<ts>.<action>.requested``, ``<ts>.<action>.inflight``, ``<ts>.<action>``; a completed
compaction is ``<ts>.commit``. Layout 1 never renames: a transition creates the next state's
file and the loader keeps the highest state per (timestamp, action group).

The :class:`Timeline` is an immutable snapshot built from **one** listing of ``.hoodie/``;
nothing here reads instant contents except the helpers that are asked to. Writing instants goes
through the timeline too (:meth:`Timeline.new_time`, :meth:`Timeline.complete`, ...; the calls of
:mod:`.layout`), so the layout decides how.
"""

from __future__ import annotations

import datetime as _dt
import functools
import re
from functools import cached_property
from typing import Iterable, Iterator, Mapping

from ..errors import InvalidTimelineError, TableUpgradeIncompleteError
from ..format import V6, V8, FormatProfile
from . import timeline_v2 as _v2
from .commit_json import (  # noqa: F401 - commit JSON decoding, also reachable from here
    LogWriteStat, iter_write_stats, load_commit_metadata, load_log_write_stats,
)
from .instant import (  # the instant vocabulary, also reachable from here
    AUX_DIR, INSTANT_TIME, META_DIR, TEMP_DIR, WRITE_ACTIONS, Action, Instant, State, _GROUP, _GROUP_V2,
    _LAYOUT1_ACTIONS, parse_instant_file,
)


def _new_instant(ts: str, action: Action, state: State) -> Instant:
    """An :class:`Instant` without the frozen-dataclass ``__init__`` (hot path of timeline loads)."""
    o = _object_new(Instant)
    d = o.__dict__
    d["timestamp"] = ts
    d["action"] = action
    d["state"] = state
    return o


_object_new = object.__new__

#: what follows "<ts>." in a timeline file name → (group action, action, state); exactly the names
#: :func:`parse_instant_file` accepts (``<ts>.inflight`` is the legacy inflight commit)
_SUFFIXES: dict[str, tuple[Action, Action, State]] = {}
for _a in _LAYOUT1_ACTIONS:
    _g = _GROUP.get(_a, _a)
    _SUFFIXES[_a.value] = (_g, _a, State.COMPLETED)
    _SUFFIXES[_a.value + ".requested"] = (_g, _a, State.REQUESTED)
    _SUFFIXES[_a.value + ".inflight"] = (_g, _a, State.INFLIGHT)
_SUFFIXES["inflight"] = (Action.COMMIT, Action.COMMIT, State.INFLIGHT)
#: group action → the suffixes of every file name that belongs to such a group
_GROUP_SUFFIXES: dict[Action, tuple[tuple[str, Action, State], ...]] = {}
for _s, (_g, _a, _st) in _SUFFIXES.items():
    _GROUP_SUFFIXES.setdefault(_g, ())
    _GROUP_SUFFIXES[_g] += ((_s, _a, _st),)
del _a, _g, _s, _st
_SEP = "\x00"  # never in a file name (POSIX) or an object key


def _sort_key(i: Instant) -> tuple[str, str, int]:
    # the dataclass order (timestamp, action, state) without its per-comparison tuples
    return (i.timestamp, i.action.value, i.state.value)


def _parse_groups(names: Iterable[str]) -> list[Instant]:
    """Every instant of a listing in its highest state, sorted (see :meth:`Timeline.from_file_names`)."""
    suffixes = _SUFFIXES
    # key (ts, group action) → [highest state, compaction/log-compaction action or None]
    groups: dict[tuple[str, Action], list] = {}
    get = groups.get
    for n in names:
        ts, _, rest = n.partition(".")
        r = suffixes.get(rest)
        if r is None:
            if rest[-1:] != "\n":  # the regexes' "$" also matches before one trailing newline
                continue
            r = suffixes.get(rest[:-1])
            if r is None:
                continue
        if (len(ts) != 17 and len(ts) != 14) or not ts.isdecimal():  # \d{14}|\d{17}
            continue
        g, a, st = r
        key = (ts, g)
        cur = get(key)
        if cur is None:
            groups[key] = [st, None if a is g else a]
        else:
            if st > cur[0]:
                cur[0] = st
            if a is not g:
                cur[1] = a
    out = [_new_instant(ts, g if sp is None else sp, st) for (ts, g), (st, sp) in groups.items()]
    out.sort(key=_sort_key)
    return out

#: group action → (file suffix, state) of each file of such a group, highest state first
_GROUP_MEMBERS_BY_STATE: dict[Action, tuple[tuple[str, State], ...]] = {
    g: tuple((s, st) for s, _a, st in sorted(m, key=lambda x: -x[2])) for g, m in _GROUP_SUFFIXES.items()
}


#: what may follow "<ts>.<action>" in a timeline file name → the state it stands for
_OWN_RESTS = {"": State.COMPLETED, ".requested": State.REQUESTED, ".inflight": State.INFLIGHT}


@functools.lru_cache(maxsize=None)
def _own_pattern(action: str) -> "re.Pattern[str]":
    """Over the reversed listing: the names ``<ts>.<action>``, ``<ts>.<action>.requested`` and
    ``<ts>.<action>.inflight`` (one group per state, then the reversed stamp)."""
    a = re.escape(("." + action)[::-1])
    return re.compile(rf"{a}(?:(?<=(\x00){a})|(?<=\x00(detseuqer)\.{a})|(?<=\x00(thgilfni)\.{a}))"
                      r"(\d{17}|\d{14})(?=\x00)")


@functools.lru_cache(maxsize=None)
def _stamp_pattern(suffix: str) -> "re.Pattern[str]":
    """Over the reversed listing: the reversed stamps of the names ``<ts>.<suffix>``."""
    return re.compile(r"\x00" + re.escape(("." + suffix)[::-1]) + r"(\d{17}|\d{14})(?=\x00)")


class Timeline:
    """Immutable view of the active timeline of layout 1: every instant in its highest state, sorted.

    ``Timeline(instants, files)``; :meth:`load` / :meth:`from_file_names` build it from the file
    names of one listing of ``.hoodie/`` and parse them only when asked: the sensor's questions
    (pending/completed compactions, pending replacecommits) are answered from the few names that
    mention those actions, with the same grouping rules as the full parse.
    """

    instants: tuple[Instant, ...]
    #: names in ``.hoodie/`` as listed (sub-folder names included when listed by :meth:`load`)
    files: frozenset[str]
    #: timeline layout (``hoodie.timeline.layout.version``) and the folder of its files
    layout = 1
    meta_dir = META_DIR
    #: the format profile of the table (a layout-1 timeline is version 6's)
    profile: FormatProfile = V6
    #: layout 2: a callable giving {requested time: completion time} of archived instants (LSM history)
    _history = None
    #: a lazy timeline answers the compaction questions from the names of compaction files
    #: (layout 1's grouping rules; layout 2 answers them through :func:`.timeline_v2.lazy_instants_of`)
    _compactions_from_own_names = True

    def __init__(self, instants: Iterable[Instant] = (), files: Iterable[str] = frozenset()):
        d = self.__dict__
        d["instants"] = tuple(instants)
        d["files"] = files if isinstance(files, frozenset) else frozenset(files)
        d["_names"] = None

    def __setattr__(self, name, value):
        raise AttributeError(f"cannot assign to field {name!r}: a Timeline is immutable")

    def __delattr__(self, name):
        raise AttributeError(f"cannot delete field {name!r}: a Timeline is immutable")

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self.instants == other.instants and self.files == other.files

    def __hash__(self):
        return hash((self.instants, self.files))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(instants={self.instants!r}, files={self.files!r})"

    @classmethod
    def from_file_names(cls, names: Iterable[str]) -> "Timeline":
        t = cls.__new__(cls)
        names = list(names)
        joined = _SEP.join(["", *names, ""])
        # the lazy answers need names that cannot hide a second line ("$" semantics); else parse all
        t.__dict__["_names"] = names
        t.__dict__["_joined"] = None if "\n" in joined else joined
        return t

    @classmethod
    def load(cls, storage, config=None) -> "Timeline":
        """The active timeline. ``config`` (the table's :class:`~.properties.TableConfig`) selects
        the class of its profile's timeline layout (:data:`TIMELINE_CLASSES`) and turns on the
        checks for half-upgraded tables; without it the table is read as layout 1 (version 6)."""
        if config is not None:
            return TIMELINE_CLASSES[config.profile.timeline_layout].load_for(storage, config)
        # one listing of the folder's entries without a type check per entry: its sub-folders
        # (.aux, .temp, archived, metadata, ...) are never named like a timeline file, and the
        # parse takes only timeline file names (Hudi's own listing of the timeline keeps every
        # entry whose name matches, too); nor are temp files ("." first), left in for that reason
        names = storage.list_entry_names(META_DIR, include_temp=True)
        if "timeline" in names:  # a layout-2 table (or a half-upgraded one): its config decides
            from ..config.properties import load_table_config

            return cls.load(storage, load_table_config(storage))
        return cls.from_file_names(names)

    @classmethod
    def load_for(cls, storage, config) -> "Timeline":
        """The layout-1 timeline of a table whose ``config`` says so; a layout-2 timeline folder
        holding instant files means an upgrade is running or crashed (spec §8): refused."""
        names = storage.list_entry_names(META_DIR, include_temp=True)
        if "timeline" in names:
            _v2.check_no_layout2_instants(storage)
        return cls.from_file_names(names)

    @cached_property
    def instants(self) -> tuple[Instant, ...]:  # only reached by a Timeline from file names
        return tuple(_parse_groups(self._names))

    @cached_property
    def files(self) -> frozenset[str]:  # only reached by a Timeline from file names
        return frozenset(self._names)

    def _lazy(self) -> bool:
        d = self.__dict__
        return "instants" not in d and d.get("_joined") is not None

    @cached_property
    def _compactions(self) -> tuple[Instant, ...]:
        """Instants whose action is compaction, sorted (full-parse semantics, from the names that
        mention ``.compaction``)."""
        if not self._lazy():
            return tuple(i for i in self.instants if i.action is Action.COMPACTION)
        return self._instants_of(Action.COMPACTION)

    def _states_of(self, action: Action) -> dict[str, State]:
        """Lazy path: timestamp → state of the instants whose action is ``action``. A group takes
        that action iff one of its files names it (compaction/log compaction win over their group's
        action); its state is the highest state of its files, as in the full parse."""
        cache = self.__dict__.setdefault("_states_cache", {})
        out = cache.get(action)
        if out is None:
            out = cache[action] = self._parse_states_of(action)
        return out

    def _parse_states_of(self, action: Action) -> dict[str, State]:
        v = action.value
        if "." + v not in self._joined:  # (a fast search; most actions are absent or few)
            return {}
        # the names "<ts>.<action>[.requested|.inflight]" (ts: 14 or 17 digits, as
        # parse_instant_file takes it) found by one regex scan of the *reversed* listing: there
        # the literal action comes first (a fast scan for it), the state before it, the stamp after
        d = self.__dict__
        rev = d.get("_reversed")
        if rev is None:
            rev = d["_reversed"] = self._joined[::-1]
        found = _own_pattern(v).findall(rev)  # (completed, requested, inflight, reversed ts)
        if not found:
            return {}
        own = dict.fromkeys([f[3] for f in found if f[1]], State.REQUESTED)  # the highest state wins
        own.update(dict.fromkeys([f[3] for f in found if f[2]], State.INFLIGHT))
        own.update(dict.fromkeys([f[3] for f in found if f[0]], State.COMPLETED))
        members = _GROUP_MEMBERS_BY_STATE[_GROUP.get(action, action)]
        done = {ts for ts, st in own.items() if st is State.COMPLETED}
        for suffix, st in members:
            if st is State.COMPLETED and suffix != v:  # completed under the group's action
                done |= own.keys() & set(_stamp_pattern(suffix).findall(rev))
        states = {ts[::-1]: State.COMPLETED for ts in done}
        sep, joined = _SEP, self._joined
        inflight = [suffix for suffix, st in members if st is State.INFLIGHT and suffix != v + ".inflight"]
        for rts, st in own.items():
            if rts in done:
                continue
            ts = rts[::-1]
            if st is not State.INFLIGHT:  # pending: few; one search per other inflight name
                for suffix in inflight:
                    if f"{sep}{ts}.{suffix}{sep}" in joined:
                        st = State.INFLIGHT
                        break
            states[ts] = st
        return states

    def _instants_of(self, action: Action, *, pending: bool | None = None) -> tuple[Instant, ...]:
        """Lazy path: the instants whose action is ``action`` (only the pending or only the
        completed ones when ``pending`` says so), sorted."""
        states = self._states_of(action)
        if pending is not None:
            done = State.COMPLETED
            states = {ts: st for ts, st in states.items() if (st is not done) is pending}
        # one instant per timestamp, all of one action: the dataclass order is the timestamp order
        return tuple(_new_instant(ts, action, states[ts]) for ts in sorted(states))

    def completed_compactions_newest_first(self) -> Iterator[Instant]:
        """:attr:`completed_compactions` newest first, built one at a time (a reader that stops at
        the newest one, as the sensor's poke does, builds and sorts none of the others)."""
        if not self._lazy() or not self._compactions_from_own_names or "completed_compactions" in self.__dict__:
            yield from reversed(self.completed_compactions)
            return
        done = [ts for ts, st in self._states_of(Action.COMPACTION).items() if st is State.COMPLETED]
        if not done:
            return
        newest = max(done)
        yield _new_instant(newest, Action.COMPACTION, State.COMPLETED)
        for ts in sorted(done, reverse=True)[1:]:
            yield _new_instant(ts, Action.COMPACTION, State.COMPLETED)

    # ---------------------------------------------------------------- filters
    def __iter__(self):
        return iter(self.instants)

    def __len__(self) -> int:
        return len(self.instants)

    def filter(self, *, actions=None, states=None) -> list[Instant]:
        return [
            i
            for i in self.instants
            if (actions is None or i.action in actions) and (states is None or i.state in states)
        ]

    @cached_property
    def completed_writes(self) -> tuple[Instant, ...]:
        """Completed commit/deltacommit/replacecommit instants (incl. completed compactions)."""
        return tuple(
            i for i in self.instants if i.is_completed and (i.action in WRITE_ACTIONS or i.action in _GROUP_V2)
        )

    @cached_property
    def completed_write_times(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.completed_writes)

    @cached_property
    def pending_compactions(self) -> tuple[Instant, ...]:
        if self._lazy() and self._compactions_from_own_names and "_compactions" not in self.__dict__:
            return self._instants_of(Action.COMPACTION, pending=True)
        return tuple(i for i in self._compactions if i.state is not State.COMPLETED)

    @cached_property
    def pending_compaction_times(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.pending_compactions)

    @cached_property
    def completed_compactions(self) -> tuple[Instant, ...]:
        if self._lazy() and self._compactions_from_own_names and "_compactions" not in self.__dict__:
            return self._instants_of(Action.COMPACTION, pending=False)
        return tuple(i for i in self._compactions if i.state is State.COMPLETED)

    @cached_property
    def completed_compaction_times(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.completed_compactions)

    @cached_property
    def pending_writes(self) -> tuple[Instant, ...]:
        """Pending deltacommits/commits (failed or running writers; not table services)."""
        return tuple(
            i
            for i in self.instants
            if i.is_pending and i.action in (Action.DELTA_COMMIT, Action.COMMIT)
        )

    @cached_property
    def pending_replaces(self) -> tuple[Instant, ...]:
        if self._lazy():
            return self._instants_of(Action.REPLACE_COMMIT, pending=True)
        return tuple(i for i in self.instants
                     if i.is_pending and (i.action is Action.REPLACE_COMMIT or i.action is Action.CLUSTERING))

    @property
    def first_instant_time(self) -> str | None:
        return self.instants[0].timestamp if self.instants else None

    @property
    def last_completed_write(self) -> Instant | None:
        return self.completed_writes[-1] if self.completed_writes else None

    @cached_property
    def latest_instant_time(self) -> str | None:
        """Greatest timestamp on the timeline, pending instants included."""
        return max((i.timestamp for i in self.instants), default=None)

    def is_committed(self, ts: str) -> bool:
        """Hudi's ``containsOrBeforeTimelineStarts`` over the completed write timeline.

        An instant older than the first instant of the active timeline counts as committed,
        because it has been archived.
        """
        if ts in self.completed_write_times:
            return True
        first = self.first_write_time
        return first is not None and ts < first

    @cached_property
    def first_write_time(self) -> str | None:
        times = [i.timestamp for i in self.instants if i.action in WRITE_ACTIONS or i.action in _GROUP_V2]
        return min(times) if times else None

    def as_of(self, ts: str) -> "Timeline":
        """The timeline as a reader at ``ts`` sees it: instants with timestamp ≤ ts."""
        return Timeline(tuple(i for i in self.instants if i.timestamp <= ts), self.files)

    # ---------------------------------------------------------------- layout 2: completion times
    @cached_property
    def completion_times(self) -> Mapping[str, str]:
        """Requested time → completion time of every completed instant on the active timeline
        (layout 2; empty in layout 1, where completion times are not recorded)."""
        return {i.timestamp: i.completion_time for i in self.instants if i.completion_time is not None}

    def is_archived(self, ts: str) -> bool:
        """Older than the first write instant of the active timeline: archived, so completed."""
        first = self.first_write_time
        return first is not None and ts < first and ts not in self.completion_times

    def completion_time(self, ts: str) -> str | None:
        """When the instant requested at ``ts`` completed: from the active timeline, else (archived)
        from the LSM history, else ``ts`` itself (Java's rule for archived instants without a
        recorded completion time); None while it is pending or unknown. Layout 1: ``ts`` for a
        committed instant."""
        c = self.completion_times.get(ts)
        if c is not None:
            return c
        return ts if self.is_committed(ts) else None

    def is_completed_before(self, ts: str, before: str) -> bool:
        """Java's ``CompletionTimeQueryView#isCompletedBefore``: completed, with completion < ``before``."""
        c = self.completion_time(ts)
        return c is not None and c < before

    @cached_property
    def latest_time(self) -> str | None:
        """Greatest requested **or completion** time on the timeline (the layout-2 monotonic bound)."""
        times = [i.timestamp for i in self.instants] + list(self.completion_times.values())
        return max(times, default=None)

    def get(self, ts: str) -> list[Instant]:
        return [i for i in self.instants if i.timestamp == ts]

    # ---------------------------------------------------------------- writing instants
    def new_time(self, *, zone: _dt.tzinfo = _dt.timezone.utc, now: _dt.datetime | None = None) -> str:
        """A new requested time: after every instant on the timeline, pending included."""
        return next_instant_time(self, now, zone=zone)

    def completed_path(self, storage, ts: str, action: Action) -> str | None:
        """The table-relative path of the completed file of instant ``ts`` (None: not completed).
        Reads storage, not this timeline (which may be older than the instant's completion)."""
        p = Instant(ts, action, State.COMPLETED).path()
        return p if storage.exists(p) else None

    def complete(self, storage, ts: str, action: Action, data: bytes, *, zone: _dt.tzinfo = _dt.timezone.utc,
                 now: _dt.datetime | None = None) -> str:
        """Write the completed file of instant ``ts`` (the commit point) with ``data``, put-if-absent; its path."""
        p = Instant(ts, action, State.COMPLETED).path()
        storage.create_if_absent(p, data)
        return p


class LayoutTwoTimeline(Timeline):
    """The active timeline of layout 2 (table versions 8/9; shared/hudi-format-v8-v9.md §2, §8):
    files in ``meta_dir`` (``.hoodie/<hoodie.timeline.path>``), a completed instant named
    ``<requested>_<completion>.<action>``, archived instants in the LSM history.

    Built by :meth:`load_for` after the mixed-state checks of spec §8 and parsed when asked, as
    layout 1: the sensor's questions (pending/completed compactions, pending replacecommits and
    clusterings) are answered from the names that mention those actions
    (:func:`.timeline_v2.lazy_instants_of`); a completed file without its completion time is
    refused at once."""

    layout = 2
    meta_dir = META_DIR + "/timeline"
    #: the profile of a layout-2 timeline built without a table config (:meth:`load_for` sets the table's)
    profile: FormatProfile = V8
    _compactions_from_own_names = False

    def __init__(self, instants: Iterable[Instant] = (), files: Iterable[str] = frozenset(), *,
                 meta_dir: str | None = None, profile: FormatProfile | None = None, history=None,
                 first_write_time: str | None = None):
        super().__init__(instants, files)
        self._set(meta_dir, profile, history)
        if first_write_time is not None:
            # a timeline cut at an instant keeps the full one's first write: instants older than
            # it stay "archived ⇒ completed"
            self.__dict__["first_write_time"] = first_write_time

    def _set(self, meta_dir: str | None, profile: FormatProfile | None, history) -> None:
        d = self.__dict__
        for k, v in (("meta_dir", meta_dir), ("profile", profile), ("_history", history)):
            if v is not None:
                d[k] = v

    @classmethod
    def from_file_names(cls, names: Iterable[str], *, meta_dir: str | None = None,
                        profile: FormatProfile | None = None, history=None) -> "LayoutTwoTimeline":
        t = super().from_file_names(names)
        t._set(meta_dir, profile, history)
        return t

    @classmethod
    def load_for(cls, storage, config) -> "LayoutTwoTimeline":
        """The layout-2 active timeline of the table ``config`` describes, after the mixed-state
        checks of spec §8 (:func:`.timeline_v2.check_upgrade_complete`)."""
        meta_dir = config.timeline_dir
        _v2.check_upgrade_complete(storage, config)
        history_dir = config.history_dir
        hist_name = history_dir.rsplit("/", 1)[-1] if history_dir and history_dir.startswith(meta_dir + "/") else None
        names = storage.list_entry_names(meta_dir, include_temp=True)
        if hist_name in names:
            names = [n for n in names if n != hist_name]
        history = _once(lambda: _v2.read_lsm_history(storage, history_dir)) if history_dir else None
        t = cls.from_file_names(names, meta_dir=meta_dir, profile=config.profile, history=history)
        if ".crc\x00" in (t.__dict__.get("_joined") or "".join(n + "\x00" for n in names)):  # checksum files: not instants
            t = cls.from_file_names([n for n in names if not n.endswith(".crc")], meta_dir=meta_dir,
                                    profile=config.profile, history=history)
        joined = t.__dict__.get("_joined")
        if joined is None:
            t.__dict__["instants"] = tuple(_v2.parse_layout2(names, meta_dir))  # (raises what the parse raises)
        else:
            _v2.check_no_legacy_completed(joined, meta_dir)
        return t

    @cached_property
    def instants(self) -> tuple[Instant, ...]:  # only reached by a timeline from file names
        return tuple(_v2.parse_layout2(self._names, self.meta_dir))

    @cached_property
    def _compactions(self) -> tuple[Instant, ...]:
        if not self._lazy():
            return tuple(i for i in self.instants if i.action is Action.COMPACTION)
        return _v2.lazy_instants_of(self._joined, Action.COMPACTION, self.meta_dir)

    @cached_property
    def pending_replaces(self) -> tuple[Instant, ...]:
        if self._lazy():
            both = [*_v2.lazy_instants_of(self._joined, Action.REPLACE_COMMIT, self.meta_dir, pending_only=True),
                    *_v2.lazy_instants_of(self._joined, Action.CLUSTERING, self.meta_dir, pending_only=True)]
            return tuple(sorted(both, key=_sort_key))
        return super().pending_replaces

    def as_of(self, ts: str) -> "LayoutTwoTimeline":
        return LayoutTwoTimeline(tuple(i for i in self.instants if i.timestamp <= ts), self.files,
                                 meta_dir=self.meta_dir, profile=self.profile, history=self._history,
                                 first_write_time=self.first_write_time)

    def completion_time(self, ts: str) -> str | None:
        c = self.completion_times.get(ts)
        if c is not None:
            return c
        if self.is_archived(ts):
            hist = self._history() if self._history is not None else {}
            return hist.get(ts, ts)
        return None

    # ---------------------------------------------------------------- writing instants
    def new_time(self, *, zone: _dt.tzinfo = _dt.timezone.utc, now: _dt.datetime | None = None) -> str:
        """A new requested time: after every requested and completion time on the timeline."""
        return next_time_layout2(self, now=now, zone=zone)

    def completed_path(self, storage, ts: str, action: Action) -> str | None:
        group = _GROUP_V2.get(action, action)
        prefix, suffix = f"{ts}_", f".{group.value}"
        for n in storage.list_entry_names(self.meta_dir):
            if n.startswith(prefix) and n.endswith(suffix) and n[len(prefix):-len(suffix)].isdigit():
                return f"{self.meta_dir}/{n}"
        return None

    def complete(self, storage, ts: str, action: Action, data: bytes, *, zone: _dt.tzinfo = _dt.timezone.utc,
                 now: _dt.datetime | None = None) -> str:
        """Write ``<ts>_<c>.<action>``: the completion time ``c`` is taken now, after every time on a
        fresh listing of the timeline; a retry that finds the instant completed with the same bytes
        is answered with that file, other bytes are an :class:`InstantExistsError`."""
        d = self.meta_dir
        c = next_time_layout2(Timeline.load(storage), now=now, zone=zone)
        return f"{d}/{_v2.complete_instant(storage, d, ts, action, c, data)}"


def _once(fn):
    """``fn`` as a callable that calls it once, on its first call, and then gives that result."""
    box: list = []

    def get():
        if not box:
            box.append(fn())
        return box[0]

    return get


#: the timeline class of each timeline layout (a profile's ``timeline_layout``)
TIMELINE_CLASSES: Mapping[int, type[Timeline]] = {1: Timeline, 2: LayoutTwoTimeline}


# ------------------------------------------------------------------- instant times
INSTANT_FORMAT = "%Y%m%d%H%M%S"


def format_instant(dt: _dt.datetime, zone: _dt.tzinfo = _dt.timezone.utc) -> str:
    """17-digit ``yyyyMMddHHmmssSSS`` of an aware (shown in ``zone``) or naive datetime."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(zone).replace(tzinfo=None)
    return dt.strftime(INSTANT_FORMAT) + f"{dt.microsecond // 1000:03d}"


def parse_instant_time(ts: str, zone: _dt.tzinfo = _dt.timezone.utc) -> _dt.datetime:
    """The moment a 14- or 17-digit instant time names, read as a wall-clock time of ``zone``
    (the table's timeline zone: :func:`~airflow_hudi_etc.hudi.protocol.coexistence.timeline_zone`; a
    Java writer on LOCAL writes its JVM's wall clock). Aware, in ``zone``."""
    if not re.fullmatch(INSTANT_TIME, ts or ""):
        raise InvalidTimelineError(f"not an instant time: {ts!r}")
    dt = _dt.datetime.strptime(ts[:14], INSTANT_FORMAT)
    ms = int(ts[14:17]) if len(ts) == 17 else 0
    return dt.replace(microsecond=ms * 1000, tzinfo=zone)


def instant_to_epoch_ms(ts: str, zone: _dt.tzinfo = _dt.timezone.utc) -> int:
    """Epoch milliseconds of an instant time made in ``zone`` (see :func:`parse_instant_time`)."""
    return (parse_instant_time(ts, zone) - _EPOCH) // _dt.timedelta(milliseconds=1)


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def next_instant_time(timeline: Timeline, now: _dt.datetime | None = None,
                      zone: _dt.tzinfo = _dt.timezone.utc) -> str:
    """A new instant time strictly greater than every instant on the timeline, pending included,
    in the table's timeline zone (:func:`~airflow_hudi_etc.hudi.protocol.coexistence.timeline_zone`)."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    ts = format_instant(now, zone)
    latest = timeline.latest_instant_time
    if latest is not None:
        if len(latest) == 14:
            latest = latest + "999"
        if ts <= latest:
            ts = format_instant(parse_instant_time(latest) + _dt.timedelta(milliseconds=1))
    return ts


def next_time_layout2(timeline: Timeline, *others: Timeline, now: _dt.datetime | None = None,
                      zone: _dt.tzinfo = _dt.timezone.utc) -> str:
    """A new requested **or completion** time for layout 2: strictly greater than every requested
    and completion time on ``timeline`` and on ``others`` (e.g. the metadata table's timeline),
    in ``yyyyMMddHHmmssSSS`` of ``zone`` (spec §2.4). Take it under the writer lock."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    ts = format_instant(now, zone)
    latest = max((t.latest_time for t in (timeline, *others) if t.latest_time is not None), default=None)
    if latest is not None:
        if len(latest) == 14:
            latest += "999"
        if ts <= latest:
            ts = format_instant(parse_instant_time(latest) + _dt.timedelta(milliseconds=1))
    return ts
