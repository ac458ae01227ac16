"""Commit metadata as layout 1 stores it (JSON): decoded and checked as Hudi's Jackson mapping of
``HoodieCommitMetadata`` would insist (:func:`load_commit_metadata`), and the fast path of the log
write stats planning reads (:func:`load_log_write_stats`: msgspec, the same verdicts).
"""

from __future__ import annotations

import json
from typing import Iterable, Mapping

from ..errors import InvalidTimelineError


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
        _check_stats(stats, what)
    # the types Hudi's Jackson mapping of HoodieCommitMetadata would insist on, for the fields read
    extra = meta.get("extraMetadata") or {}
    if not isinstance(extra, dict) or not all(isinstance(v, str) or v is None for v in extra.values()):
        raise InvalidTimelineError(f"{what}: extraMetadata is not a map of strings")
    _check_schema(extra, what)
    replaced = meta.get("partitionToReplaceFileIds") or {}
    if not isinstance(replaced, dict) or not all(
            isinstance(v, list) and all(isinstance(x, str) for x in v) for v in replaced.values()):
        raise InvalidTimelineError(f"{what}: partitionToReplaceFileIds is malformed")
    return meta


def _check_schema(extra: Mapping, what: str) -> None:
    if extra.get("schema"):  # readers take the table schema from here
        try:
            schema = json.loads(extra["schema"])
        except (ValueError, RecursionError):
            raise InvalidTimelineError(f"{what}: the schema in extraMetadata is not JSON") from None
        if not isinstance(schema, dict):
            raise InvalidTimelineError(f"{what}: the schema in extraMetadata is not a record schema")


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


def _check_stats(stats: list, what: str) -> None:
    """:func:`_check_stat` over a list of write stats, each an object; the common case (exact
    ``str``/``int`` values, or absent/null fields) is checked in one tight loop, anything else
    goes through :func:`_check_stat` for the same verdict and message."""
    str_keys, int_keys = _STAT_STR, _STAT_INT
    lo, hi = _I64_MIN, _I64_MAX
    for s in stats:
        if s.__class__ is not dict:
            if not isinstance(s, dict):
                raise InvalidTimelineError(f"{what}: a write stat is not an object")
            _check_stat(s, what)
            continue
        get = s.get
        ok = True
        for k in str_keys:
            v = get(k)
            if v is not None and v.__class__ is not str:
                ok = False
                break
        if ok:
            for k in int_keys:
                v = get(k)
                if v is not None and (v.__class__ is not int or v < lo or v > hi):
                    ok = False
                    break
        if ok:
            v = get("logFiles")
            if v is not None:
                if v.__class__ is not list:
                    ok = False
                else:
                    for x in v:
                        if x.__class__ is not str:
                            ok = False
                            break
        if not ok:
            _check_stat(s, what)  # slow path: subclasses, or raise with the exact message


_I64_MIN, _I64_MAX = -(2**63), 2**63 - 1


def iter_write_stats(meta: Mapping) -> Iterable[dict]:
    for stats in (meta.get("partitionToWriteStats") or {}).values():
        yield from stats


# ------------------------------------------------------------------- log write stats, fast
#: what :func:`load_log_write_stats` gives per write stat of a log file
LogWriteStat = tuple  # (path, minEventTime, maxEventTime, numWrites, numDeletes, hoodieEtcOrdering)

try:  # a dependency of Airflow's core and task SDK, not of this package: without it, json
    import msgspec as _msgspec
except ImportError:  # pragma: no cover - e.g. a Spark executor without Airflow
    _msgspec = None


def _stats_decoder():
    """A msgspec decoder of commit JSON typed like :func:`load_commit_metadata`'s checks: every
    write-stat field it checks (:data:`_STAT_STR`, :data:`_STAT_INT`, ``logFiles``), extra
    metadata and replaced file ids, each a nullable field; other fields are skipped, unbuilt."""
    if _msgspec is None:
        return None
    from typing import Annotated, Any, Optional

    i64 = Annotated[int, _msgspec.Meta(ge=_I64_MIN, le=_I64_MAX)]
    stat = _msgspec.defstruct(
        "_WriteStat",
        [(k, Optional[str], None) for k in _STAT_STR] + [(k, Optional[i64], None) for k in _STAT_INT]
        + [("logFiles", Optional[list[str]], None), ("hoodieEtcOrdering", Any, None)],
        gc=False,
    )
    meta = _msgspec.defstruct(
        "_CommitMetadata",
        [("partitionToWriteStats", Optional[dict[str, list[stat]]], None),
         ("extraMetadata", Optional[dict[str, Optional[str]]], None),
         ("partitionToReplaceFileIds", Optional[dict[str, list[str]]], None)],
        gc=False,
    )
    return _msgspec.json.Decoder(meta)


_STATS_DECODER = _stats_decoder()
#: Python frames between :func:`_decode_fast` and msgspec: json.loads, called from
#: load_commit_metadata, nests its C scanner 3 frames deeper than a direct call, and both count
#: JSON nesting against the same recursion limit; from this deep, msgspec gives up on a nesting
#: no shallower than json would (a commit json refuses as too deep never passes here)
_DECODE_DEPTH = 6


def _call_deeper(n: int, fn, arg):
    return fn(arg) if n <= 0 else _call_deeper(n - 1, fn, arg)


def _decode_fast(data: bytes):
    """The commit decoded by msgspec, or None when json must judge it (the slow path decides
    the verdict and the message: anything msgspec refuses — NaN, a lone surrogate escape, a
    type, nesting — or bytes that are not UTF-8, which msgspec would let pass in skipped fields)."""
    if _STATS_DECODER is None:
        return None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    try:
        return _call_deeper(_DECODE_DEPTH, _STATS_DECODER.decode, data)
    except Exception:  # noqa: BLE001 - any doubt: the json path decides
        return None


def load_log_write_stats(data: bytes, what: str = "commit metadata",
                         extra: dict | None = None) -> list[LogWriteStat]:
    """``(path, minEventTime, maxEventTime, numWrites, numDeletes, hoodieEtcOrdering)`` of each
    write stat whose path names a log file (``.log.`` in it), in file order (the last as JSON
    gives it, unchecked: :func:`.ordering_facts.from_json` judges it). The verdict on the commit is exactly
    :func:`load_commit_metadata`'s (valid, or the same :class:`InvalidTimelineError`): msgspec
    decodes and type-checks the same fields in C, only the fields asked for become Python
    values, and anything it does not accept goes through :func:`load_commit_metadata`.
    ``extra``: a dict that receives the commit's ``extraMetadata`` (from the same decoding)."""
    m = _decode_fast(data) if data.strip() else None
    if m is not None:
        _check_schema(m.extraMetadata or {}, what)
        if extra is not None:
            extra.update(m.extraMetadata or {})
        out = []
        append = out.append
        for stats in (m.partitionToWriteStats or {}).values():
            for s in stats:
                p = s.path
                if p and ".log." in p:
                    append((p, s.minEventTime, s.maxEventTime, s.numWrites, s.numDeletes, s.hoodieEtcOrdering))
        return out
    meta = load_commit_metadata(data, what)
    if extra is not None:
        extra.update(meta.get("extraMetadata") or {})
    return [(p, st.get("minEventTime"), st.get("maxEventTime"), st.get("numWrites"), st.get("numDeletes"),
             st.get("hoodieEtcOrdering")) for st in iter_write_stats(meta) if (p := st.get("path")) and ".log." in p]
