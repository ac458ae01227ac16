"""Timeline layout 2 (table versions 8 and 9; shared/hudi-format-v8-v9.md §2, §8).

The active timeline lives in ``.hoodie/<hoodie.timeline.path>/`` (``.hoodie/timeline``):

* ``<r>.<action>.requested`` / ``<r>.<action>.inflight`` (a COW commit's inflight may be the bare
  ``<r>.inflight``) and ``<r>_<c>.<action>`` when completed at completion time ``c``;
* ``clustering`` is pending-only and completes as ``replacecommit``; a compaction completes as
  ``<C>_<c>.commit``; a log compaction as ``<r>_<c>.deltacommit``;
* a completed file without ``_<c>`` is a leftover of an unfinished upgrade (refused).

The archived instants are in the LSM history ``<timeline>/history/`` (``_version_``,
``manifest_<N>``, ``<min>_<max>_<level>.parquet`` with ``instantTime``/``completionTime``/``action``
columns), read only when a completion time of an archived instant is asked for.

The timeline class of layout 2 is :class:`.active.LayoutTwoTimeline`, built on this module's
parse and checks. Writing primitives: :func:`instant_file_name` (the file of an instant in a state),
:func:`complete_instant` (write ``<r>_<c>.<action>`` once); a new requested or completion time
(greater than every time on the data and MDT timelines) is :func:`.active.next_time_layout2`.
"""

from __future__ import annotations

import json
import re
from typing import Iterable

from ..errors import HudiEtcError, InstantExistsError, InvalidTimelineError, TableUpgradeIncompleteError
from .instant import _GROUP_V2 as _GROUP, INSTANT_TIME, META_DIR, Action, Instant, State

#: the instant file names of layout 2 (InstantFileNameParserV2, restricted to known shapes)
_V2_RE = re.compile(rf"^({INSTANT_TIME})(?:_({INSTANT_TIME}))?\.([a-z]+)(?:\.(requested|inflight))?$")
_BARE_INFLIGHT_RE = re.compile(rf"^({INSTANT_TIME})\.inflight$")
#: an instant file of layout 1 (in ``.hoodie/`` of an upgraded table it means an unfinished upgrade)
_V1_NAME_RE = re.compile(r"^\d{14,17}\.[a-z]+(\.(requested|inflight))?$")  # spec §8's detection rule
_LSM_FILE_RE = re.compile(r"^(\d+)_(\d+)_(\d)\.parquet$")
_ACTIONS = {a.value: a for a in Action}


def parse_instant_file_v2(name: str, meta_dir: str = META_DIR + "/timeline") -> Instant | None:
    """The instant (in that file's state) named by a layout-2 timeline file, None for other files.
    A completed file without ``_<completion>`` raises :class:`TableUpgradeIncompleteError`."""
    m = _BARE_INFLIGHT_RE.match(name)
    if m:
        return Instant(m.group(1), Action.COMMIT, State.INFLIGHT, None, meta_dir)
    m = _V2_RE.match(name)
    if not m:
        return None
    r, c, action, state = m.groups()
    act = _ACTIONS.get(action)
    if act is None:
        return None
    if state is None:
        if c is None:
            raise TableUpgradeIncompleteError(
                f"{meta_dir}/{name}: a completed instant without its completion time (a layout-1 name) in "
                f"the layout-2 timeline — an unfinished upgrade to table version 8/9; let Java Hudi finish it")
        return Instant(r, act, State.COMPLETED, c, meta_dir)
    if c is not None:
        return None  # "<r>_<c>.<action>.requested" is no Hudi name
    return Instant(r, act, State[state.upper()], None, meta_dir)


#: what follows "<r>[_<c>]." in a layout-2 name → (action, state) (the names :func:`parse_instant_file_v2` takes)
_REST_V2: dict[str, tuple[Action, State]] = {}
for _a in Action:
    _REST_V2[_a.value] = (_a, State.COMPLETED)
    _REST_V2[_a.value + ".requested"] = (_a, State.REQUESTED)
    _REST_V2[_a.value + ".inflight"] = (_a, State.INFLIGHT)
del _a


def _is_time(t: str) -> bool:
    return (len(t) == 17 or len(t) == 14) and t.isdecimal()


_VALUE = {a: a.value for a in Action}
_new_object = object.__new__


def parse_layout2(names: Iterable[str], meta_dir: str) -> list[Instant]:
    """Every instant of a layout-2 listing in its highest state, sorted; compaction, log compaction
    and clustering keep their own action while pending and when completed (as in layout 1).

    The fast path of :func:`parse_layout2_reference` (one dictionary lookup per name instead of two
    regular expressions, a key sort instead of the dataclass comparisons); a test holds them equal,
    errors included. Names with a newline (where ``$`` semantics matter) take the reference."""
    names = list(names)
    if any("\n" in n for n in names):
        return parse_layout2_reference(names, meta_dir)
    rests = _REST_V2
    group_of = _GROUP.get
    times: dict[str, bool] = {}  # a requested time's validity, once per instant (3 files each)
    groups: dict[tuple[str, Action], list] = {}  # (r, group action) → [state, special action, completion]
    get = groups.get
    for n in names:
        head, dot, rest = n.partition(".")
        if not dot:
            continue
        r, us, c = head.partition("_")
        ok = times.get(r)
        if ok is None:
            ok = times[r] = (len(r) == 17 or len(r) == 14) and r.isdecimal()
        if not ok:
            continue
        if rest == "inflight":  # the bare "<r>.inflight" of a COW commit
            if us:
                continue
            act, st = Action.COMMIT, State.INFLIGHT
        else:
            hit = rests.get(rest)
            if hit is None:
                continue
            act, st = hit
            if us:
                if st is not State.COMPLETED or not ((len(c) == 17 or len(c) == 14) and c.isdecimal()):
                    continue
            elif st is State.COMPLETED:
                parse_instant_file_v2(n, meta_dir)  # raises: a completed file without its completion time
                continue
        g = group_of(act, act)
        key = (r, g)
        cur = get(key)
        if cur is None:
            cur = groups[key] = [st, None, None]
        elif st > cur[0]:
            cur[0] = st
        if act is not g:
            cur[1] = act
        if us:
            if cur[2] is not None and cur[2] != c:
                raise InvalidTimelineError(f"instant {r} ({g.value}) has two completed files ({cur[2]}, {c})")
            cur[2] = c
    value = _VALUE
    rows = [(r, value[sp or g], st, sp or g, c) for (r, g), (st, sp, c) in groups.items()]
    rows.sort(key=lambda x: (x[0], x[1], x[2]))  # the dataclass order (timestamp, action, state)
    out = []
    for r, _, st, act, c in rows:
        o = _new_object(Instant)  # Instant(r, act, st, c, meta_dir) without the frozen __init__
        o.__dict__.update(timestamp=r, action=act, state=st, completion_time=c, meta_dir=meta_dir)
        out.append(o)
    return out


def parse_layout2_reference(names: Iterable[str], meta_dir: str) -> list[Instant]:
    """The reference parse of a layout-2 listing (name by name through :func:`parse_instant_file_v2`)."""
    groups: dict[tuple[str, Action], list] = {}  # (r, group action) → [state, special action, completion]
    for n in names:
        i = parse_instant_file_v2(n, meta_dir)
        if i is None:
            continue
        g = _GROUP.get(i.action, i.action)
        cur = groups.get((i.timestamp, g))
        if cur is None:
            cur = groups[(i.timestamp, g)] = [i.state, None, None]
        elif i.state > cur[0]:
            cur[0] = i.state
        if i.action is not g:
            cur[1] = i.action
        if i.completion_time is not None:
            if cur[2] is not None and cur[2] != i.completion_time:
                raise InvalidTimelineError(
                    f"instant {i.timestamp} ({g.value}) has two completed files ({cur[2]}, {i.completion_time})")
            cur[2] = i.completion_time
    out = [Instant(r, sp or g, st, c, meta_dir) for (r, g), (st, sp, c) in groups.items()]
    out.sort()
    return out


#: in the NUL-joined listing: a name "<t>.<action>" (a completed file without its completion time)
_LEGACY_COMPLETED_RE = re.compile("\x00(\\d{14}(?:\\d{3})?)\\.([a-z]+)(?=\x00)")
_SEP = "\x00"


def check_no_legacy_completed(joined: str, meta_dir: str) -> None:
    """A NUL-joined layout-2 listing holds no completed file without its completion time
    (``<t>.<action>``: an unfinished upgrade, :class:`TableUpgradeIncompleteError`); one scan."""
    for m in _LEGACY_COMPLETED_RE.finditer(joined):
        if m.group(2) in _ACTIONS:
            parse_instant_file_v2(m.group(1) + "." + m.group(2), meta_dir)  # raises


def _heads(joined: str, token: str) -> list[str]:
    """The prefixes of the names ``<prefix><token>`` of a NUL-joined listing (``token`` ends with
    the NUL that bounds the name)."""
    pieces = joined.split(token)
    return [p[p.rfind(_SEP) + 1:] for p in pieces[:-1]]


def lazy_instants_of(joined: str, action: Action, meta_dir: str, *, pending_only: bool = False
                     ) -> tuple[Instant, ...]:
    """The instants whose action is ``action`` (full-parse semantics of :func:`parse_layout2`),
    from a NUL-joined listing without parsing every name: the files naming ``action``, the
    completed files of its group (``<r>_<c>.<group action>``, one split), and for the few pending
    ones a search per other state file of the group. ``pending_only``: the pending ones only."""
    v = action.value
    g = _GROUP.get(action, action)
    specials = [a for a, grp in _GROUP.items() if grp is g]
    own: dict[str, State] = {}
    if "." + v in joined:
        for suffix, st in ((".requested", State.REQUESTED), (".inflight", State.INFLIGHT)):
            for head in _heads(joined, f".{v}{suffix}{_SEP}") if f".{v}{suffix}{_SEP}" in joined else ():
                if _is_time(head) and st > own.get(head, State.REQUESTED - 1):
                    own[head] = st
    done: dict[str, str] = {}
    token = f".{g.value}{_SEP}"
    if (own or action is g) and token in joined:
        for head in _heads(joined, token):
            r, us, c = head.partition("_")
            if us and _is_time(r) and _is_time(c):
                if done.get(r, c) != c:
                    raise InvalidTimelineError(f"instant {r} ({g.value}) has two completed files ({done[r]}, {c})")
                done[r] = c
    if action is g:  # the group's own action: instants no special action's file names
        cand = set(own) if pending_only else set(own) | set(done)
        for sp in specials:
            if "." + sp.value in joined:
                cand -= {ts for ts in cand
                         if f"{_SEP}{ts}.{sp.value}.requested{_SEP}" in joined
                         or f"{_SEP}{ts}.{sp.value}.inflight{_SEP}" in joined}
    else:
        cand = set(own)
    members = [f"{g.value}.requested", f"{g.value}.inflight"] + [f"{sp.value}.{x}" for sp in specials
                                                               for x in ("requested", "inflight")]
    if g is Action.COMMIT:
        members.append("inflight")
    out = []
    for ts in sorted(cand):
        c = done.get(ts)
        if c is not None:
            if pending_only:
                continue
            st = State.COMPLETED
        else:
            st = own.get(ts, State.REQUESTED)
            if st is not State.INFLIGHT:
                for m in members:
                    if m.endswith("inflight") and f"{_SEP}{ts}.{m}{_SEP}" in joined:
                        st = State.INFLIGHT
                        break
        out.append(Instant(ts, action, st, c, meta_dir))
    return tuple(out)


# ------------------------------------------------------------------ mixed / half-upgraded states
def _backup_of_other_version(storage, config) -> bool:
    """Is ``hoodie.properties.backup`` a whole properties file of another table or layout version
    than the one read? A backup of the same version is a Java writer's rewrite under way (or its
    leftover, which Java's next rewrite drops): Java reads on, and so do we."""
    from ..config.properties import BACKUP_FILE, loads

    try:
        props = loads(storage.read_bytes(BACKUP_FILE).decode("utf-8"))
    except (FileNotFoundError, UnicodeDecodeError, HudiEtcError):
        return False
    version = (props.get("hoodie.table.version") or "").strip()
    return bool(version) and (version != str(config.version) or config.profile.names_other_layout(props))


def check_upgrade_complete(storage, config) -> None:
    """Spec §8 for a table whose properties say version 8/9: no instant files left in ``.hoodie/``,
    no legacy archive without an LSM history, no interrupted properties update."""
    from ..config.properties import BACKUP_FILE

    names = storage.list_entry_names(META_DIR, include_temp=True)
    stray = [n for n in names if _V1_NAME_RE.match(n)]
    if stray:
        raise TableUpgradeIncompleteError(
            f"table version {config.version} but {META_DIR}/ still holds layout-1 instant files "
            f"({', '.join(sorted(stray)[:3])}...): an upgrade (or downgrade) did not finish")
    if BACKUP_FILE.rsplit("/", 1)[-1] in names and _backup_of_other_version(storage, config):
        raise TableUpgradeIncompleteError(
            f"{BACKUP_FILE} holds another table version than hoodie.properties ({config.version}): an upgrade "
            f"or downgrade was interrupted in its properties update; let Java Hudi finish it first")
    if "archived" in names and storage.list_entry_names(f"{META_DIR}/archived"):
        hist = config.history_dir
        if not (hist and storage.exists(f"{hist}/_version_")):
            raise TableUpgradeIncompleteError(
                f"{META_DIR}/archived/ is not empty but {hist}/ has no _version_: the archive was not converted "
                f"to the LSM history, an upgrade did not finish")


def check_no_layout2_instants(storage, folder: str = f"{META_DIR}/timeline") -> None:
    """Spec §8 for a version-6 table: a layout-2 timeline folder with instant files means an upgrade
    to 8/9 is running or crashed."""
    names = [n for n in storage.list_entry_names(folder, include_temp=True) if _V2_RE.match(n)
             or _BARE_INFLIGHT_RE.match(n)]
    if names:
        raise TableUpgradeIncompleteError(
            f"table version 6 but {folder}/ holds instant files ({', '.join(sorted(names)[:3])}...): an upgrade to "
            f"table version 8/9 is running or crashed")


# ------------------------------------------------------------------ LSM history
def lsm_history_files(storage, history_dir: str) -> list[str]:
    """The table-relative paths of the LSM history's current files (spec §2.6): ``_version_``
    (else the highest ``manifest_N``), that manifest's list; [] when there is no history."""
    try:
        names = storage.list_entry_names(history_dir)
    except FileNotFoundError:
        return []
    version = None
    if "_version_" in names:
        raw = storage.read_bytes(f"{history_dir}/_version_").decode("utf-8").strip()
        if not raw.isdigit():
            raise InvalidTimelineError(f"{history_dir}/_version_ is not a number: {raw[:40]!r}")
        version = int(raw)
    else:
        found = [int(n[9:]) for n in names if n.startswith("manifest_") and n[9:].isdigit()]
        version = max(found) if found else None
    if version is None:
        return []
    try:
        manifest = json.loads(storage.read_bytes(f"{history_dir}/manifest_{version}"))
        files = [f["fileName"] for f in manifest.get("files", [])]
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise InvalidTimelineError(f"{history_dir}/manifest_{version} is not a timeline manifest: {e}") from None
    for f in files:
        if not isinstance(f, str) or not _LSM_FILE_RE.match(f):
            raise InvalidTimelineError(f"{history_dir}/manifest_{version} names {f!r}, not an LSM timeline file")
    return [f"{history_dir}/{f}" for f in files]


def read_lsm_history(storage, history_dir: str) -> dict[str, str]:
    """Requested time → completion time of the archived instants in the LSM history (spec §2.6):
    ``_version_`` (else the highest ``manifest_N``), that manifest's files, their rows."""
    out: dict[str, str] = {}
    for r in read_lsm_instants(storage, history_dir, columns=("instantTime", "completionTime")):
        if r["instantTime"]:
            out[r["instantTime"]] = r["completionTime"] or r["instantTime"]
    return out


def read_lsm_instants(storage, history_dir: str,
                      columns=("instantTime", "completionTime", "action", "metadata", "plan")) -> list[dict]:
    """The archived instants' rows (``HoodieLSMTimelineInstant``: ``metadata`` = the raw bytes of
    the completed instant file, ``plan`` = those of its requested plan), in file order."""
    from ..logformat.parquet_data import read_parquet_bytes

    out: list[dict] = []
    for rel in lsm_history_files(storage, history_dir):
        data = storage.read_bytes(rel)  # small files; read_parquet_bytes says why not a file object
        try:
            t = read_parquet_bytes(data, columns)
        except (KeyError, ValueError, OSError) as e:
            raise InvalidTimelineError(f"{rel} is not an LSM timeline file: {str(e)[:200]}") from None
        out += t.to_pylist()
    return out


# ------------------------------------------------------------------ writing primitives
def instant_file_name(requested: str, action: Action, state: State, completion: str | None = None) -> str:
    """The layout-2 timeline file of an instant in ``state`` (completed: ``<r>_<c>.<group action>``)."""
    return Instant(requested, action, state, completion, META_DIR + "/timeline").file_name()


def complete_instant(storage, meta_dir: str, requested: str, action: Action, completion: str,
                     metadata: bytes) -> str:
    """Write the completed file ``<requested>_<completion>.<action>`` once (put-if-absent) with
    ``metadata`` (Avro bytes, see :mod:`.commit_metadata`); the commit point of the instant.
    Safe to retry: when the instant is already completed with these very bytes, its file name is
    returned; completed otherwise (other bytes or another completion time) → :class:`InstantExistsError`."""
    group = _GROUP.get(action, action)
    prefix, suffix = f"{requested}_", f".{group.value}"
    for n in storage.list_entry_names(meta_dir):
        if n.startswith(prefix) and n.endswith(suffix) and _V2_RE.match(n):
            if storage.read_bytes(f"{meta_dir}/{n}") == metadata:
                return n
            raise InstantExistsError(f"{meta_dir}/{n}: instant {requested} is already completed (other content)")
    name = instant_file_name(requested, action, State.COMPLETED, completion)
    try:
        storage.create_if_absent(f"{meta_dir}/{name}", metadata)
    except FileExistsError:
        raise InstantExistsError(f"{meta_dir}/{name} already exists") from None
    return name

