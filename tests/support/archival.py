"""Java's archiver, as far as the tests need it: move instants out of the active timeline into the
archive in the layout Java writes (no Java process here).

* :func:`archive_v6` — table version 6 (Hudi 0.14/0.15 ``HoodieTimelineArchiver``): every instant
  file of the instants requested before ``before`` goes into a new archive log file
  ``.hoodie/archived/.commits_.archive.<n>_1-0-1`` as one AVRO_DATA block of
  ``HoodieArchivedMetaEntry`` records (one per instant file: ``commitTime``, ``actionType``,
  ``actionState``, ``hoodieCommitMetadata`` for a completed commit/deltacommit,
  ``hoodieCompactionPlan`` for a compaction's requested/inflight file), then deleted from
  ``.hoodie/`` (and ``.hoodie/.aux``'s plan copy stays, as Java leaves it). The block's writer
  schema carries the members these records use (Java's reader resolves by field name; the other
  nullable members default to null).
* :func:`archive_v8` — versions 8/9: the LSM history (spec §2.6), one level-0 parquet file.

Like Java's archiver both stop at the oldest pending compaction or clustering: archiving past it
is refused here (an assertion), so a test cannot archive what Java never would. :func:`archive_v6`
also stops, silently as Java does, before the first completed savepoint
(``getCommitInstantsToArchive`` with ``hoodie.archive.beyond.savepoint`` false, its default):
nothing at or after it is archived, and savepoints themselves stay.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa

from airflow_hudi_etc.hudi import logformat as lf
from airflow_hudi_etc.hudi.format import V6
from airflow_hudi_etc.hudi.timeline.commits import COMMIT_METADATA_SCHEMA, CommitMetadata, load_commit
from airflow_hudi_etc.hudi.protocol.plan import CompactionPlan
from airflow_hudi_etc.hudi.storage import Storage
from airflow_hudi_etc.hudi.timeline.active import Action, Timeline

_NS = "org.apache.hudi.avro.model"
_PLAN_SUBSET = {  # HoodieCompactionPlan, the member the product reads (extraMetadata)
    "type": "record", "name": f"{_NS}.HoodieCompactionPlan",
    "fields": [{"name": "extraMetadata", "default": None,
                "type": ["null", {"type": "map", "values": {"type": "string", "avro.java.string": "String"}}]},
               {"name": "version", "type": ["int", "null"], "default": 1}],
}
ARCHIVED_META_ENTRY = {
    "type": "record", "name": f"{_NS}.HoodieArchivedMetaEntry",
    "fields": [
        {"name": "hoodieCommitMetadata", "type": ["null", COMMIT_METADATA_SCHEMA], "default": None},
        {"name": "commitTime", "type": ["null", "string"], "default": None},
        {"name": "actionType", "type": ["null", "string"], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "hoodieCompactionPlan", "type": ["null", _PLAN_SUBSET], "default": None},
        {"name": "actionState", "type": ["null", "string"], "default": None},
    ],
}


def _blocking_pending(tl: Timeline) -> str | None:
    times = [i.timestamp for i in tl.instants if i.is_pending
             and i.action in (Action.COMPACTION, Action.REPLACE_COMMIT, Action.CLUSTERING)]
    return min(times, default=None)


def archive_v6(path, before: str) -> list[str]:
    """Archive (as 0.14's archiver) every instant requested before ``before``; returns their times."""
    path = Path(path)
    storage = Storage(str(path))
    tl = Timeline.load(storage)
    stop = _blocking_pending(tl)
    assert stop is None or before <= stop, f"Java never archives past pending {stop}"
    savepoints = [i.timestamp for i in tl.instants if i.action is Action.SAVEPOINT and i.is_completed]
    if savepoints:
        before = min(before, min(savepoints))
    records, gone = [], []
    for name in sorted(storage.list_names(".hoodie")):
        ts, _, rest = name.partition(".")
        if not ts.isdigit() or ts >= before or not rest:
            continue
        action, _, state = rest.partition(".")
        state = {"": "COMPLETED", "requested": "REQUESTED", "inflight": "INFLIGHT"}.get(state)
        if state is None or action == "savepoint":
            continue
        data = (path / ".hoodie" / name).read_bytes()
        rec = {"commitTime": ts, "actionType": action, "actionState": state, "version": 1}
        if state == "COMPLETED" and action in ("commit", "deltacommit") and data:
            rec["hoodieCommitMetadata"] = CommitMetadata.from_dict(load_commit(data, V6)).to_avro()
        if action == "compaction" and data:
            rec["hoodieCompactionPlan"] = {"extraMetadata": dict(CompactionPlan.from_bytes(ts, data).extra),
                                           "version": 2}
        records.append(rec)
        gone.append(path / ".hoodie" / name)
    if not records:
        return []
    folder = path / ".hoodie" / "archived"
    folder.mkdir(exist_ok=True)
    n = 1 + sum(1 for f in folder.iterdir() if f.name.startswith(".commits_.archive."))
    block = lf.encode_data_block(records[0]["commitTime"], json.dumps(ARCHIVED_META_ENTRY), records)
    (folder / f".commits_.archive.{n}_1-0-1").write_bytes(block)
    for f in gone:
        f.unlink()
    return sorted({r["commitTime"] for r in records})


def archive_v8(path, upto: str) -> list[str]:
    """Versions 8/9: move every completed instant requested at or before ``upto`` into the LSM
    history as Java's archiver writes it (spec §2.6): one level-0 parquet file of
    HoodieLSMTimelineInstant rows (metadata = the completed file's bytes, plan = the requested
    plan's), ``manifest_<n>`` listing every file, ``_version_`` = n; then the active files go."""
    import pyarrow.parquet as pq

    path = Path(path)
    tl_dir = path / ".hoodie" / "timeline"
    hist = tl_dir / "history"
    hist.mkdir(exist_ok=True)
    stop = _blocking_pending(Timeline.load(Storage(str(path)), _config(path)))
    assert stop is None or upto < stop, f"Java never archives past pending {stop}"
    rows, gone = [], []
    for f in sorted(tl_dir.iterdir()):
        head, _, action = f.name.partition(".")
        if "_" not in head or not f.is_file():
            continue
        r, _, c = head.partition("_")
        if not (r.isdigit() and c.isdigit()) or r > upto:
            continue
        req = next((g for g in tl_dir.iterdir() if g.name.startswith(f"{r}.") and g.name.endswith(".requested")), None)
        plan = req.read_bytes() if req is not None and ".compaction." in req.name else None
        rows.append({"instantTime": r, "completionTime": c, "action": action, "metadata": f.read_bytes(),
                     "plan": plan, "version": 1})
        gone += [g for g in tl_dir.iterdir() if g.is_file() and (g.name.startswith(f"{r}.") or g.name.startswith(f"{r}_"))]
    if not rows:
        return []
    schema = pa.schema([("instantTime", pa.string()), ("completionTime", pa.string()), ("action", pa.string()),
                        ("metadata", pa.binary()), ("plan", pa.binary()), ("version", pa.int32())])
    name = f"{rows[0]['instantTime']}_{max(r['completionTime'] for r in rows)}_0.parquet"
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), hist / name)
    version = 1 + max([int(f.name.split("_")[1]) for f in hist.iterdir() if f.name.startswith("manifest_")] or [0])
    files = [{"fileName": g.name, "fileLen": g.stat().st_size} for g in sorted(hist.iterdir()) if g.suffix == ".parquet"]
    (hist / f"manifest_{version}").write_text(json.dumps({"files": files}, indent=2))
    (hist / "_version_").write_text(str(version))
    for g in set(gone):
        g.unlink()
    return [r["instantTime"] for r in rows]


def _config(path: Path):
    from airflow_hudi_etc.hudi.config.properties import load_table_config

    return load_table_config(Storage(str(path)))
