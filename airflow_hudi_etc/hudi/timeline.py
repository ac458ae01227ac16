"""The active timeline of a table-version-6 table (timeline layout 1).

Vocabulary (as in Hudi and hudi-rs): an *instant* is a 17-digit timestamp plus an *action*
(deltacommit, commit, compaction, clean, rollback, replacecommit, ...) and a *state*
(requested, inflight, completed). Each state is a file in ``.hoodie/``:
``<ts>.<action>.requested``, ``<ts>.<action>.inflight``, ``<ts>.<action>``; a completed
compaction is ``<ts>.commit``. Layout 1 never renames: a transition creates the next state's
file and the loader keeps the highest state per (timestamp, action group).

The :class:`Timeline` is an immutable snapshot built from **one** listing of ``.hoodie/``;
nothing here reads instant contents except the helpers that are asked to.
"""

from __future__ import annotations

import datetime as _dt
import enum
import json
import re
from dataclasses import dataclass
from functools import cached_property
from typing import Iterable, Mapping

from .errors import InvalidTimelineError

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

    def __str__(self) -> str:  # pragma: no cover - cosmetic
        return self.value


#: actions whose completed instants carry data visible to readers
WRITE_ACTIONS = frozenset({Action.COMMIT, Action.DELTA_COMMIT, Action.REPLACE_COMMIT})

# compaction completes as "commit", log compaction as "deltacommit": they group together
_GROUP = {Action.COMPACTION: Action.COMMIT, Action.LOG_COMPACTION: Action.DELTA_COMMIT}

_INSTANT_RE = re.compile(r"^(\d{14}|\d{17})\.([a-z]+)(?:\.(requested|inflight))?$")
_LEGACY_INFLIGHT_RE = re.compile(r"^(\d{14}|\d{17})\.inflight$")


@dataclass(frozen=True, order=True)
class Instant:
    """One instant in its highest known state. Orders by (timestamp, action, state)."""

    timestamp: str
    action: Action
    state: State

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
            action = _GROUP.get(self.action, self.action)
            return f"{self.timestamp}.{action.value}"
        if state is State.INFLIGHT and self.action is Action.COMMIT:
            return f"{self.timestamp}.inflight"
        return f"{self.timestamp}.{self.action.value}.{state.name.lower()}"

    def path(self, state: State | None = None) -> str:
        return f"{META_DIR}/{self.file_name(state)}"

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
        st = State.COMPLETED if state is None else State[state.upper()]
        return Instant(ts, act, st)
    return None


def _group_key(i: Instant) -> tuple[str, Action]:
    return (i.timestamp, _GROUP.get(i.action, i.action))


@dataclass(frozen=True)
class Timeline:
    """Immutable view of the active timeline: every instant in its highest state, sorted."""

    instants: tuple[Instant, ...]
    #: file names of ``.hoodie/`` as listed (to find e.g. the compaction plan of a completed commit)
    files: frozenset[str] = frozenset()

    @classmethod
    def from_file_names(cls, names: Iterable[str]) -> "Timeline":
        names = frozenset(names)
        groups: dict[tuple[str, Action], list[Instant]] = {}
        for n in names:
            inst = parse_instant_file(n)
            if inst is not None:
                groups.setdefault(_group_key(inst), []).append(inst)
        best: dict[tuple[str, Action], Instant] = {}
        for key, found in groups.items():
            state = max(i.state for i in found)
            # "<ts>.commit" completes a compaction when a "<ts>.compaction.*" file exists
            special = [i.action for i in found if i.action in _GROUP]
            action = special[0] if special else max(found, key=lambda i: i.state).action
            best[key] = Instant(key[0], action, state)
        return cls(tuple(sorted(best.values())), names)

    @classmethod
    def load(cls, storage) -> "Timeline":
        return cls.from_file_names(f.name for f in storage.list(META_DIR))

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
            i for i in self.instants if i.is_completed and (i.action in WRITE_ACTIONS or i.action in _GROUP)
        )

    @cached_property
    def completed_write_times(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.completed_writes)

    @cached_property
    def pending_compactions(self) -> tuple[Instant, ...]:
        return tuple(i for i in self.instants if i.action is Action.COMPACTION and i.is_pending)

    @cached_property
    def pending_compaction_times(self) -> frozenset[str]:
        return frozenset(i.timestamp for i in self.pending_compactions)

    @cached_property
    def completed_compactions(self) -> tuple[Instant, ...]:
        return tuple(i for i in self.instants if i.action is Action.COMPACTION and i.is_completed)

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
        return tuple(i for i in self.instants if i.is_pending and i.action is Action.REPLACE_COMMIT)

    @property
    def first_instant_time(self) -> str | None:
        return self.instants[0].timestamp if self.instants else None

    @property
    def last_completed_write(self) -> Instant | None:
        return self.completed_writes[-1] if self.completed_writes else None

    @property
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
        times = [i.timestamp for i in self.instants if i.action in WRITE_ACTIONS or i.action in _GROUP]
        return min(times) if times else None

    def as_of(self, ts: str) -> "Timeline":
        """The timeline as a reader at ``ts`` sees it: instants with timestamp ≤ ts."""
        return Timeline(tuple(i for i in self.instants if i.timestamp <= ts), self.files)

    def get(self, ts: str) -> list[Instant]:
        return [i for i in self.instants if i.timestamp == ts]


# ------------------------------------------------------------------- instant times
INSTANT_FORMAT = "%Y%m%d%H%M%S"


def format_instant(dt: _dt.datetime) -> str:
    """17-digit ``yyyyMMddHHmmssSSS`` of an aware or naive-UTC datetime."""
    if dt.tzinfo is not None:
        dt = dt.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    return dt.strftime(INSTANT_FORMAT) + f"{dt.microsecond // 1000:03d}"


def parse_instant_time(ts: str) -> _dt.datetime:
    """UTC datetime of a 14- or 17-digit instant time."""
    if not re.fullmatch(r"\d{14}(\d{3})?", ts or ""):
        raise InvalidTimelineError(f"not an instant time: {ts!r}")
    dt = _dt.datetime.strptime(ts[:14], INSTANT_FORMAT)
    ms = int(ts[14:17]) if len(ts) == 17 else 0
    return dt.replace(microsecond=ms * 1000, tzinfo=_dt.timezone.utc)


def instant_to_epoch_ms(ts: str) -> int:
    return int(parse_instant_time(ts).timestamp() * 1000)


def next_instant_time(timeline: Timeline, now: _dt.datetime | None = None) -> str:
    """A new instant time strictly greater than every instant on the timeline, pending included."""
    now = now or _dt.datetime.now(_dt.timezone.utc)
    ts = format_instant(now)
    latest = timeline.latest_instant_time
    if latest is not None:
        if len(latest) == 14:
            latest = latest + "999"
        if ts <= latest:
            ts = format_instant(parse_instant_time(latest) + _dt.timedelta(milliseconds=1))
    return ts


# ------------------------------------------------------------------- commit metadata
def write_stat(
    *,
    file_id: str,
    path: str,
    partition_path: str,
    prev_commit: str | None,
    num_writes: int = 0,
    num_deletes: int = 0,
    num_update_writes: int = 0,
    num_inserts: int = 0,
    file_size: int = 0,
    min_event_time: int | None = None,
    max_event_time: int | None = None,
    base_file: str | None = None,
    log_files: list[str] | None = None,
    log_version: int | None = None,
    extra: Mapping | None = None,
) -> dict:
    """A HoodieWriteStat (or HoodieDeltaWriteStat when ``log_files`` is given) as Hudi's JSON has it."""
    stat = {
        "fileId": file_id,
        "path": path,
        "cdcStats": None,
        "prevCommit": prev_commit if prev_commit else "null",
        "numWrites": num_writes,
        "numDeletes": num_deletes,
        "numUpdateWrites": num_update_writes,
        "numInserts": num_inserts,
        "totalWriteBytes": file_size,
        "totalWriteErrors": 0,
        "tempPath": None,
        "partitionPath": partition_path,
        "totalLogRecords": 0,
        "totalLogFilesCompacted": 0,
        "totalLogSizeCompacted": 0,
        "totalUpdatedRecordsCompacted": 0,
        "totalLogBlocks": 0,
        "totalCorruptLogBlock": 0,
        "totalRollbackBlocks": 0,
        "fileSizeInBytes": file_size,
        "minEventTime": min_event_time,
        "maxEventTime": max_event_time,
        "runtimeStats": {"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 0},
    }
    if log_files is not None:
        stat.update(
            {
                "logVersion": log_version or 1,
                "logOffset": 0,
                "baseFile": base_file or "",
                "logFiles": list(log_files),
                "recordsStats": {"val": None},
            }
        )
    if extra:
        stat.update(extra)
    return stat


def commit_metadata(
    partition_to_stats: Mapping[str, list[dict]],
    *,
    operation: str,
    schema: str | None,
    compacted: bool = False,
    extra_metadata: Mapping[str, str] | None = None,
) -> dict:
    extra = dict(extra_metadata or {})
    if schema is not None:
        extra["schema"] = schema
    return {
        "partitionToWriteStats": {p: list(s) for p, s in partition_to_stats.items()},
        "compacted": compacted,
        "extraMetadata": extra,
        "operationType": operation,
    }


def dump_commit_metadata(meta: Mapping) -> bytes:
    return json.dumps(meta, indent=2).encode("utf-8")


def load_commit_metadata(data: bytes, what: str = "commit metadata") -> dict:
    """Parse commit JSON; an empty file is an empty object, as in Hudi."""
    if not data.strip():
        return {}
    try:
        meta = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise InvalidTimelineError(f"{what} is not valid JSON: {str(e)[:200]}") from None
    if not isinstance(meta, dict):
        raise InvalidTimelineError(f"{what} is not a JSON object")
    p2s = meta.get("partitionToWriteStats") or {}
    if not isinstance(p2s, dict) or not all(isinstance(v, list) for v in p2s.values()):
        raise InvalidTimelineError(f"{what}: partitionToWriteStats is malformed")
    for stats in p2s.values():
        for s in stats:
            if not isinstance(s, dict):
                raise InvalidTimelineError(f"{what}: a write stat is not an object")
            _check_stat(s, what)
    # the types Hudi's Jackson mapping of HoodieCommitMetadata would insist on, for the fields read
    extra = meta.get("extraMetadata") or {}
    if not isinstance(extra, dict) or not all(isinstance(v, str) or v is None for v in extra.values()):
        raise InvalidTimelineError(f"{what}: extraMetadata is not a map of strings")
    if extra.get("schema"):  # readers take the table schema from here
        try:
            schema = json.loads(extra["schema"])
        except (ValueError, RecursionError):
            raise InvalidTimelineError(f"{what}: the schema in extraMetadata is not JSON") from None
        if not isinstance(schema, dict):
            raise InvalidTimelineError(f"{what}: the schema in extraMetadata is not a record schema")
    replaced = meta.get("partitionToReplaceFileIds") or {}
    if not isinstance(replaced, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in replaced.values()):
        raise InvalidTimelineError(f"{what}: partitionToReplaceFileIds is malformed")
    return meta


_STAT_STR = ("fileId", "path", "partitionPath", "prevCommit", "baseFile", "hoodieEtcLinkTarget", "hoodieEtcLinkMode")
_STAT_INT = ("numWrites", "numDeletes", "numUpdateWrites", "numInserts", "totalWriteBytes", "fileSizeInBytes",
             "minEventTime", "maxEventTime", "logVersion", "totalLogFilesCompacted", "totalLogSizeCompacted")


def _check_stat(s: Mapping, what: str) -> None:
    for k in _STAT_STR:
        if s.get(k) is not None and not isinstance(s[k], str):
            raise InvalidTimelineError(f"{what}: write stat field {k} is not a string")
    for k in _STAT_INT:
        v = s.get(k)
        if v is not None and (not isinstance(v, int) or isinstance(v, bool) or not -(2**63) <= v < 2**63):
            raise InvalidTimelineError(f"{what}: write stat field {k} is not a 64-bit integer")
    lf_ = s.get("logFiles")
    if lf_ is not None and not (isinstance(lf_, list) and all(isinstance(x, str) for x in lf_)):
        raise InvalidTimelineError(f"{what}: write stat field logFiles is not a list of strings")


def iter_write_stats(meta: Mapping) -> Iterable[dict]:
    for stats in (meta.get("partitionToWriteStats") or {}).values():
        yield from stats
