"""The instant vocabulary shared by both timeline layouts (as Hudi's ``HoodieInstant`` and
hudi-rs' ``timeline/instant.rs``): the ``.hoodie`` folders, an instant's :class:`State` and
:class:`Action`, the :class:`Instant` itself and the one rule for an instant time's shape.

Layout 1 (:mod:`.timeline`) and layout 2 (:mod:`.timeline_v2`) both build on this module; it
imports neither of them.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field

from ..errors import InvalidTimelineError, TimelineChangedError

META_DIR = ".hoodie"
AUX_DIR = ".hoodie/.aux"
TEMP_DIR = ".hoodie/.temp"


class State(enum.IntEnum):
    REQUESTED = 0
    INFLIGHT = 1
    COMPLETED = 2


class Action(str, enum.Enum):
    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    REPLACE_COMMIT = "replacecommit"
    RESTORE = "restore"
    SAVEPOINT = "savepoint"
    INDEXING = "indexing"
    SCHEMA_COMMIT = "schemacommit"
    #: layout 2 (table versions 8/9): pending clustering; completes as replacecommit
    CLUSTERING = "clustering"

    def __str__(self) -> str:  # pragma: no cover - cosmetic
        return self.value


#: actions whose completed instants carry data visible to readers
WRITE_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})

# compaction completes as "commit", log compaction as "deltacommit": they group together
_GROUP = {Action.COMPACTION: Action.COMMIT, Action.LOG_COMPACTION: Action.DELTA_COMMIT}
#: layout 2 adds the pending-only clustering action, which completes as replacecommit; layout 1
#: does not know the name (its parse skips such files, as before)
_GROUP_V2 = {**_GROUP, Action.CLUSTERING: Action.REPLACE_COMMIT}
_LAYOUT1_ACTIONS = tuple(a for a in Action if a is not Action.CLUSTERING)

#: the one rule for an instant time's shape: ``yyyyMMddHHmmssSSS`` (17 digits) or the legacy
#: ``yyyyMMddHHmmss`` (14); every parser of instant times in file names builds on it
INSTANT_TIME = r"\d{14}|\d{17}"
_INSTANT_RE = re.compile(rf"^({INSTANT_TIME})\.([a-z]+)(?:\.(requested|inflight))?$")
_LEGACY_INFLIGHT_RE = re.compile(rf"^({INSTANT_TIME})\.inflight$")


@dataclass(frozen=True, order=True)
class Instant:
    """One instant in its highest known state. Orders by (timestamp, action, state)."""

    timestamp: str
    action: Action
    state: State
    #: layout 2: the completion time of a completed instant (``<requested>_<completion>.<action>``);
    #: None in layout 1 and for pending instants. Not part of equality or order.
    completion_time: str | None = field(default=None, compare=False)
    #: folder of the timeline file (``.hoodie`` in layout 1, ``.hoodie/timeline`` in layout 2)
    meta_dir: str = field(default=META_DIR, compare=False, repr=False)

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def is_pending(self) -> bool:
        return self.state is not State.COMPLETED

    def file_name(self, state: State | None = None) -> str:
        """The timeline file of this instant in ``state`` (default: its own)."""
        state = self.state if state is None else state
        if state is State.COMPLETED:
            action = _GROUP_V2.get(self.action, self.action)
            if self.meta_dir != META_DIR:  # layout 2
                if self.completion_time is None:
                    raise InvalidTimelineError(f"{self}: a layout-2 completed file needs the completion time")
                return f"{self.timestamp}_{self.completion_time}.{action.value}"
            return f"{self.timestamp}.{action.value}"
        if state is State.INFLIGHT and self.action is Action.COMMIT:
            return f"{self.timestamp}.inflight"
        return f"{self.timestamp}.{self.action.value}.{state.name.lower()}"

    def path(self, state: State | None = None) -> str:
        return f"{self.meta_dir}/{self.file_name(state)}"

    def __str__(self) -> str:
        return f"[{self.timestamp}__{self.action.value}__{self.state.name}]"


def parse_instant_file(name: str) -> Instant | None:
    """Instant named by a ``.hoodie/`` file name, or None for other files."""
    m = _LEGACY_INFLIGHT_RE.match(name)
    if m:
        return Instant(m.group(1), Action.COMMIT, State.INFLIGHT)
    m = _INSTANT_RE.match(name)
    if m:
        ts, action, state = m.groups()
        try:
            act = Action(action)
        except ValueError:
            return None
        if act is Action.CLUSTERING:  # a layout-2 name
            return None
        st = State.COMPLETED if state is None else State[state.upper()]
        return Instant(ts, act, st)
    return None


def read_listed(storage, rel: str, timeline) -> bytes:
    """The bytes of timeline file ``rel``. One that ``timeline``'s listing held and that is gone now
    (Java's archiver moved it into the archive, a cleaner or rollback removed it, after the
    listing) is a :class:`TimelineChangedError` (``conflict``; a ``FileNotFoundError`` too): the
    command read a timeline that is no longer the table's. One the listing did not hold raises
    ``FileNotFoundError`` as before (a missing plan file is the table's state, not a race)."""
    try:
        return storage.read_bytes(rel)
    except FileNotFoundError:
        name = rel.rsplit("/", 1)[-1]
        if name in getattr(timeline, "files", ()):
            raise TimelineChangedError(
                f"conflict: {rel} was on the timeline this command listed and is gone before it was read "
                f"(Java's archiver moved it into the archive, or a cleaner or rollback removed it): the table "
                f"changed under the command; run it again") from None
        raise
