"""Java Hudi's own compaction next to ours (java-coexistence-2.md finding 3).

Java's inline compaction (on by default for Spark batch MOR writers), its async compaction
(streaming) and Flink's compaction plan operator run *every* pending compaction, and roll an
inflight one back first with no heartbeat check (``HoodieTable.rollbackInflightCompaction``), then
reconcile against markers: a running ``execute`` of ours can lose its files or leave two base files
for one file group. There is no safe protocol for our ``execute`` while Java compacts. So:

* :func:`java_compaction_evidence` reads from the active timeline what shows that Java compacts
  this table: a completed compaction whose commit carries none of our metadata (Java executed it,
  our plan or its own), a compaction plan without our metadata (Java scheduled it);
* :func:`check_execute` (called by ``execute``) refuses with :class:`JavaCompactionError` unless
  the table records that Java's compaction is off (``hoodie.etc.java.compaction=off``, recorded by
  ``hudi-etc init`` for the tables it creates, or by ``hudi-etc configure --java-compaction off``):
  where it records ``on``, where the timeline shows Java compacting, and where nobody recorded
  either — a table Java created, on which Java may not have compacted *yet* while its writers run
  with Spark's default inline compaction (the only thing that can be detected is that nobody said);
* :func:`java_execution` is the safe mode "Java executes our plans": our schedule publishes the
  plan (its copies exist before it is visible, so Java's execution leaves a correct slice C), Java's
  compaction executes it, and we verify C's commit; the threshold then counts (it is read from the
  plan).
"""

from __future__ import annotations

from typing import Any, Mapping

from ..hudi import etc_keys as keys
from ..hudi.errors import InvalidTimelineError, JavaCompactionError
from ..hudi.storage import Storage
from ..hudi.table.hudi_table import HudiTable
from ..hudi.timeline.active import Action
from .plans import plan_link_files, read_plan

#: table property: "off" — every Java writer of the table runs with its compaction off
#: (Spark ``hoodie.compact.inline=false`` and ``hoodie.datasource.compaction.async.enable=false``,
#: Flink ``compaction.async.enabled=false``); "on" — Java executes the compactions
JAVA_COMPACTION = keys.JAVA_COMPACTION  # recorded with hudi-etc configure --java-compaction on|off

SETTINGS = ("Spark: hoodie.compact.inline=false and hoodie.datasource.compaction.async.enable=false; "
            "Flink: compaction.async.enabled=false")


def _ours(extra: Mapping[str, Any] | None) -> bool:
    return any(str(k).startswith(keys.PREFIX) for k in (extra or {}))


def recorded(table: HudiTable) -> str | None:
    """The table's recorded answer to "does Java compact?" ("on"/"off"), or None."""
    v = str(table.config.raw.get(JAVA_COMPACTION, "")).strip().lower()
    return v if v in ("on", "off") else None


def java_compaction_evidence(table: HudiTable) -> list[str]:
    """What on the active timeline shows that Java compacts this table (oldest first)."""
    out = []
    for i in table.timeline.instants:
        if i.action is not Action.COMPACTION:
            continue
        if i.is_completed:
            if not _ours(table.commit_metadata(i).get("extraMetadata")):
                out.append(f"compaction {i.timestamp} was executed by Java Hudi (its commit has none of our metadata)")
        else:
            try:
                plan = read_plan(table, i.timestamp)
            except (OSError, InvalidTimelineError):
                continue
            if not _ours(plan.extra):
                out.append(f"compaction {i.timestamp} was scheduled by Java Hudi")
    return out


def java_compacts(table: HudiTable) -> bool:
    """Whether Java executes this table's compactions: as recorded, else as the timeline shows."""
    r = recorded(table)
    return r == "on" if r is not None else bool(java_compaction_evidence(table))


def check_execute(table: HudiTable) -> None:
    """Refuse our ``execute`` where Java compacts, or may (see the module docstring)."""
    r = recorded(table)
    if r == "off":
        return
    if r is None:
        evidence = java_compaction_evidence(table)
        why = evidence[-1] if evidence else (
            f"nobody recorded whether Java Hudi compacts this table ({JAVA_COMPACTION} is not set: the table was "
            f"not created by hudi-etc init, or by an earlier release of it that did not record it)")
    else:
        why = f"the table records {JAVA_COMPACTION}=on"
    raise JavaCompactionError(
        f"execute refused: {why}. Java's inline compaction (hoodie.compact.inline, on by default for Spark batch "
        f"MOR writers) or async compaction (hoodie.datasource.compaction.async.enable, Flink "
        f"compaction.async.enabled) executes every pending compaction and first rolls back an inflight one, ours "
        f"included (no heartbeat check), so our execution could lose its files or leave two base files for a "
        f"file group. Either let Java execute our plans (schedule only; record it with hudi-etc configure "
        f"--java-compaction on: the Airflow execute task then waits for Java's commit of the plan and verifies it), "
        f"or turn Java's compaction off on every writer ({SETTINGS}) and record it with hudi-etc configure "
        f"--java-compaction off; nothing was written")


def java_execution(path: str | Storage, *, instant: str, storage_options: Mapping[str, Any] | None = None) -> dict:
    """Where Java executes our plans: the state of plan ``instant``. ``status``: ``pending`` (not
    committed yet: wait), or ``completed`` once C's commit is there and verified — every operation of
    the plan has its new base file in the commit and on storage, and every file the plan made in slice
    C is still there (Java's compactor keeps them: it reads the plan's compacted logs only). ``executed_by``
    says whose commit it is. A commit that fails the checks is a typed error."""
    storage = path if isinstance(path, Storage) else Storage(path, storage_options or {})
    table = HudiTable.load(storage)
    insts = [i for i in table.timeline.get(instant) if i.action is Action.COMPACTION]
    if not insts:
        raise InvalidTimelineError(f"no compaction {instant} on the timeline (unscheduled, or archived)")
    plan = read_plan(table, instant)
    threshold = plan.extra.get(keys.THRESHOLD)
    if insts[0].is_pending:
        return {"instant": instant, "status": "pending", "state": insts[0].state.name.lower(), "threshold": threshold}
    meta = table.commit_metadata(insts[0])
    stats = [s for v in (meta.get("partitionToWriteStats") or {}).values() for s in v]
    written = {(s.get("partitionPath") or "", s.get("fileId")) for s in stats if str(s.get("path", "")).endswith(".parquet")}
    missing = [f"{op.partition}/{op.file_id}" for op in plan.operations if (op.partition, op.file_id) not in written]
    missing += [s["path"] for s in stats if s.get("path") and not storage.exists(s["path"])]
    missing += [rel for rel, _t in plan_link_files(plan) if _t is not None and not storage.exists(rel)]
    if missing:
        raise InvalidTimelineError(f"compaction {instant} is committed but incomplete: {missing[0]} is missing from "
                                   f"its commit or from storage ({len(missing)} in all); run validate")
    return {"instant": instant, "status": "completed", "threshold": threshold,
            "executed_by": "hudi-etc" if _ours(meta.get("extraMetadata")) else "java"}
