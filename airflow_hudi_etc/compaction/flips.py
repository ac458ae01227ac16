"""Prefix extension for overwrite-latest and event-time-ordering tables: the shortest prefix of
a slice's logs, at least the strategy's selection, whose compaction changes no read of the
remaining logs under Hudi 0.14/0.15 merge rules (``schedule`` uses it while planning)."""

from __future__ import annotations


from ..hudi import logformat as lf
from ..hudi.config.schema import RECORD_KEY
from ..hudi.table.hudi_table import HudiTable


def flip_safe_selection(table: HudiTable, s, sel, decoder):
    """The shortest prefix, at least ``sel.compact``, after whose compaction no remaining log
    record replaces a record it lost to before (overwrite-latest payload, Hudi 0.14/0.15 rules:
    log records are pre-combined by ordering value, but any log record replaces the base).

    A key flips when a remaining log holds a data record of it (or a delete carrying an ordering
    value other than the natural-order Integer 0) whose ordering value is smaller than the key's
    largest ordering value among the prefix's data records since the prefix's last natural-order
    delete of it: that record lost to the prefix's before, and would replace the new base after.
    The prefix is extended to that log (and every log before it) until no key is left. Costs
    reading (key, ordering value, delete) of the slice's logs at schedule time — only for these
    tables, and only for slices that keep logs. A null or incomparable ordering value counts as a
    flip (the safe side). Event-time ordering tables: :func:`_eto_flip_safe`."""
    from ..hudi.file_group.merge import _is_natural_zero, queue_blocks

    logs = list(s.log_files)
    files = table.read_log_files([lg.path for lg in logs])
    where = {id(b): i for i, f in enumerate(files) for b in f[2]}
    pre = table.config.precombine_field
    events: list[list[tuple]] = [[] for _ in logs]  # per log: (key, ordering, kind) in merge order
    for b in queue_blocks(files, table._filter()):
        i = where[id(b)]
        if b.block_type == lf.BlockType.DELETE:
            for d in lf.decode_delete_records(b.content):
                if d.record_key is not None:
                    natural = _is_natural_zero(d.ordering_value, d.ordering_type)
                    events[i].append((d.record_key, None if natural else d.ordering_value,
                                      "natural" if natural else "delete"))
            continue
        t = decoder.table(b)
        if not t.num_rows:
            continue
        keys = t.column(RECORD_KEY).to_pylist()
        ords = t.column(pre).to_pylist() if pre in t.column_names else [None] * len(keys)
        events[i].extend((k, o, "data") for k, o in zip(keys, ords) if k is not None)
    n = len(sel.compact)
    if table.config.event_time_ordering:
        return _eto_flip_safe(logs, sel, events)
    while n < len(logs):
        best: dict = {}  # key → largest ordering among the prefix's data records since its last natural delete
        for i in range(n):
            for k, o, kind in events[i]:
                if kind == "natural":
                    best.pop(k, None)
                elif kind == "data":
                    cur = best.get(k, _MISSING)
                    best[k] = o if cur is _MISSING else _max_ordering(cur, o)
        flip = None
        for j in range(n, len(logs)):
            for k, o, kind in events[j]:
                if kind == "natural":
                    best.pop(k, None)  # the rest of the remaining logs merge after it either way
                    continue
                cur = best.get(k, _MISSING)
                if cur is not _MISSING and _smaller(o, cur):
                    flip = j
                    break
            if flip is not None:
                break
        if flip is None:
            break
        n = flip + 1
    return _prefix_of(sel, logs, n)


def may_flip(event_time_ordering: bool, compact, remain) -> bool:
    """Could :func:`flip_safe_selection` extend this prefix? Decided from the logs' ordering
    facts (:mod:`~airflow_hudi_etc.hudi.index.ordering_facts`; ``compact``/``remain``: the facts of
    the prefix's logs and of the remaining ones, None where unknown). False only when no key can
    flip whatever the logs hold; True (read the logs) when a fact is unknown.

    Overwrite-latest: a remaining record flips a key only when its ordering value is smaller than
    the largest of a prefix data record, so none can when the remaining logs' smallest ordering
    value is at least the prefix's largest (deletes in the facts only widen the ranges; natural
    order deletes only ever remove a key's prefix value). Event-time ordering: only a remaining
    data record of a key the prefix deleted, so none without a delete in the prefix or a data
    record in the remaining logs."""
    if any(f is None for f in compact) or any(f is None for f in remain):
        return True
    if event_time_ordering:
        return any(f.deletes for f in compact) and any(f.data for f in remain)
    his = [f.hi for f in compact if f.hi is not None]
    los = [f.lo for f in remain if f.lo is not None]
    if not his or not los:
        return False
    try:
        return min(los) < max(his)
    except TypeError:  # values of types that do not compare: as the read, a possible flip
        return True


def _eto_flip_safe(logs, sel, events):
    """Event-time ordering (``DefaultHoodieRecordPayload``) compares base and log records by
    ordering value as the log fold does, so a prefix cannot flip a key — except through a
    delete: Hudi 0.14 merges a re-insert after a delete against the *old* base record (the base
    stays when its ordering value is larger), while after compacting a prefix that ends with the
    delete the base no longer has the key and the re-insert shows. So a key whose last event in
    the prefix is a delete and that a remaining log writes again extends the prefix to that log
    (without reading the base: the safe side)."""
    n = len(sel.compact)
    while n < len(logs):
        deleted: set = set()
        for i in range(n):
            for k, _, kind in events[i]:
                if kind == "data":
                    deleted.discard(k)
                else:
                    deleted.add(k)
        flip = next((j for j in range(n, len(logs))
                     if any(kind == "data" and k in deleted for k, _, kind in events[j])), None)
        if flip is None:
            break
        n = flip + 1
    return _prefix_of(sel, logs, n)


def _prefix_of(sel, logs, n: int):
    """``sel`` if it already compacts the first ``n`` logs, else the selection that does."""
    if n == len(sel.compact):
        return sel
    from .strategy import _selection

    return _selection(tuple(logs[:n]), tuple(logs[n:]))


_MISSING = object()


def _max_ordering(a, b):
    if a is None or b is None:
        return None  # unknown: every later record counts as a possible flip
    try:
        return b if b > a else a
    except TypeError:
        return None


def _smaller(o, best) -> bool:
    """Would a remaining record with ordering ``o`` lose to ``best`` (None: unknown → yes)?"""
    if o is None or best is None:
        return True
    try:
        return o < best
    except TypeError:
        return True
