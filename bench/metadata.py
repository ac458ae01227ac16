"""M1: the added cost of keeping Hudi's metadata table per commit of ours, against Java's own
commit on the same table.

One long-lived driver of the Hudi line (the test suite's JavaHudi process) writes a new table with
Java's defaults (the metadata table on) and, in turn, hosts our ``write`` Spark-hosted (Hudi's
metadata writer in the same JVM): N rounds of one Java upsert and one write of ours, each a small
batch touching the same keys. The same again on a table whose writers turned the metadata table
off. For every instant the commit phase is read from the files, as L1 does (the completed instant
file's modification time minus the instant's newest data file): ours and Java's, with and without
the metadata table. The figure: our added cost (median commit phase with it minus without) against
Java's commit phase with it (goal: ours within 2x of Java's).
"""

from __future__ import annotations

import os
import statistics
import sys

import pyarrow as pa
import pyarrow.parquet as pq

from .figures import ROOT, Figure
from .lock import DDL, T0, _commit_phase

LINES = (("0.15", 6), ("1.1", 9))
NEW = {"hoodie.table.name": "m", "hoodie.datasource.write.recordkey.field": "key",
       "hoodie.datasource.write.partitionpath.field": "region", "hoodie.datasource.write.precombine.field": "ts",
       "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator"}


def _rows(ts: int, n: int = 20) -> list[dict]:
    return [{"key": f"k{i:04d}", "ts": ts, "event_time": T0 + i, "value": float(ts), "note": "m",
             "region": ("a", "b")[i % 2]} for i in range(n)]


def _table(java, work: str, name: str, metadata: bool, rounds: int) -> dict:
    from airflow_hudi_etc.hudi.storage import Storage
    from airflow_hudi_etc.hudi.table.hudi_table import HudiTable

    path = os.path.join(work, name)
    mdt = {"hoodie.metadata.enable": "true" if metadata else "false"}
    java.upsert(path, _rows(1), schema=DDL, options={**NEW, **mdt})
    res = java.etc("configure", "--path", path, "--timeline-zone", "UTC", "--java-compaction", "off")
    assert res["rc"] == 0, res
    ours, theirs = [], []
    for r in range(rounds):
        inst = java.upsert(path, _rows(10 * r + 2), schema=DDL, options=mdt)
        if inst:
            theirs.append(inst if isinstance(inst, str) else inst[-1])
        batch = os.path.join(work, f"{name}-{r}.parquet")
        pq.write_table(pa.Table.from_pylist(_rows(10 * r + 3)), batch)
        res = java.etc("write", "--path", path, "--input", batch)
        assert res["rc"] == 0, res
        ours.append(res["answer"]["instant"])
    storage = Storage(path)
    phase = lambda insts: [p for p in (_commit_phase(storage, HudiTable, i) for i in insts) if p is not None]  # noqa: E731
    return {"ours": phase(ours), "java": phase(theirs),
            "mdt": os.path.isdir(os.path.join(path, ".hoodie", "metadata"))}


def _med(xs):
    return round(statistics.median(xs), 3) if xs else None


def m1_metadata_table_cost(cfg, work: str) -> Figure:
    sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
    from java_hudi import JavaHudi  # noqa: E402  (the test suite's Java process)

    rounds = getattr(cfg, "m1_rounds", 8)
    details: dict = {}
    ratios = []
    for line, version in LINES:
        java = JavaHudi(line)
        try:
            on = _table(java, work, f"m1-{line}-on", True, rounds)
            off = _table(java, work, f"m1-{line}-off", False, rounds)
        finally:
            java.close()
        assert on["mdt"] and not off["mdt"]
        ours_on, ours_off, java_on, java_off = (_med(on["ours"]), _med(off["ours"]), _med(on["java"]), _med(off["java"]))
        added = None if ours_on is None or ours_off is None else round(ours_on - ours_off, 3)
        key = f"Hudi {line} (v{version})"
        details.update({f"{key}: our commit phase with the metadata table, median s": ours_on,
                        f"{key}: our commit phase without it, median s": ours_off,
                        f"{key}: our added cost per commit, s": added,
                        f"{key}: Java's commit phase with it, median s": java_on,
                        f"{key}: Java's commit phase without it, median s": java_off,
                        f"{key}: commits measured (ours/Java's, with)": f"{len(on['ours'])}/{len(on['java'])}"})
        if ours_on is not None and java_on:
            ratios.append(2 * java_on / max(ours_on, 1e-3))
    worst = round(min(ratios), 2) if ratios else None
    head = details.get(f"Hudi {LINES[0][0]} (v{LINES[0][1]}): our commit phase with the metadata table, median s")
    return Figure("M1", "Our commit with Hudi's metadata table (Spark-hosted) against Java's own", head, "s",
                  "our commit phase with the metadata table within 2x of Java's on the same table",
                  worst, None if worst is None else worst >= 1, details=details,
                  notes=[f"{rounds} rounds of one Java upsert and one write of ours (20 rows, two partitions) per "
                         "table, in one driver JVM per line; commit phase = completed instant file mtime minus "
                         "the instant's newest data file mtime, both sides alike (L1's measure)",
                         "ours includes taking no lock here (single writer), a fresh timeline, Hudi's metadata "
                         "writer opened, updated and closed, and the completion"])
