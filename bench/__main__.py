"""``python -m bench [--smoke] [--output FILE] [--data-dir DIR] [--only P1,P3] [--no-spark] [--no-java]``

Runs the figures of bench/figures.py and writes a Markdown report (default bench/RESULTS.md)
plus the same as JSON next to it. Generated tables are cached in ``--data-dir`` (default
bench/.data; ``--smoke`` uses a temporary directory unless one is given).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # the project root, when run from elsewhere

from . import figures as F  # noqa: E402
from .java_peer import LINES as JAVA_LINES  # noqa: E402
from .lock import l1_next_to_a_streaming_writer  # noqa: E402
from .metadata import m1_metadata_table_cost, m2_metadata_listing  # noqa: E402
from .p7 import p7_peer  # noqa: E402
from .report import write_report  # noqa: E402


@dataclasses.dataclass
class Config:
    data_dir: str
    reps: int
    p1_rows: int
    p2_groups: int
    p2_scan_groups: int
    p2_java_groups: int
    p2_java_records: int
    s3_copies: int
    p3_instants: int
    p5_rows: int
    spark_rows: tuple[int, int, int]
    p7_rows: int
    p7_reps: int
    p7_lines: tuple[str, ...]
    l1_attempts: int = 10
    m1_rounds: int = 8
    m2_groups: int = 10_000
    m2_partitions: int = 100
    m2_reps: int = 3
    spark: bool = True


FULL = dict(reps=3, p1_rows=1_000_000, p2_groups=10_000, p2_scan_groups=1_000, p2_java_groups=100, p2_java_records=2_000,
            s3_copies=400, p3_instants=10_000, p5_rows=200_000, spark_rows=(1_000, 200_000, 1_000_000),
            p7_rows=1_000_000, p7_reps=2, p7_lines=("0.15", "0.14", "1.0"))
SMOKE = dict(reps=1, p1_rows=20_000, p2_groups=200, p2_scan_groups=50, p2_java_groups=4, p2_java_records=50, s3_copies=20,
             p3_instants=300, p5_rows=5_000, spark_rows=(500, 2_000, 8_000), p7_rows=4_000, p7_reps=1, p7_lines=("0.15",), l1_attempts=1, m1_rounds=2,
             m2_groups=200, m2_partitions=4, m2_reps=1)

ALL = ("P1", "P2", "P2j", "S3", "P3", "P4", "P5", "P6", "P7", "L1", "M1", "M2", "Spark", "Cluster")
RUN = {"P1": F.p1_merge_kernel, "P2": F.p2_planning, "P2j": F.p2_without_stats, "S3": F.s3_copies, "P3": F.p3_readiness, "P4": F.p4_reads,
       "P5": F.p5_write_amplification, "P6": F.p6_memory, "Spark": F.spark_end_to_end,
       "Cluster": F.cluster_vs_local, "P7": p7_peer, "L1": l1_next_to_a_streaming_writer,
       "M1": m1_metadata_table_cost, "M2": m2_metadata_listing}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--smoke", action="store_true", help="tiny sizes (CI): checks it runs, not how fast")
    ap.add_argument("--output", default=os.path.join(HERE, "RESULTS.md"))
    ap.add_argument("--data-dir", default=None, help="cache of generated tables (default bench/.data)")
    ap.add_argument("--only", default=None, help="comma-separated figures, e.g. P1,P3")
    ap.add_argument("--no-spark", action="store_true", help="skip the Spark figures and P7 (no JVM)")
    ap.add_argument("--no-java", action="store_true", help="skip P7 (Java Hudi; skipped anyway when not fetched)")
    ap.add_argument("--java-lines", default=None, help="P7's Hudi lines, e.g. 0.15,1.0 (default: 0.15,0.14,1.0; "
                    "smoke: 0.15)")
    a = ap.parse_args(argv)
    tmp_data = None
    if a.data_dir is None:
        if a.smoke:
            tmp_data = a.data_dir = tempfile.mkdtemp(prefix="hudi-etc-bench-data-")
        else:
            a.data_dir = os.path.join(HERE, ".data")
    os.makedirs(a.data_dir, exist_ok=True)
    cfg = Config(data_dir=a.data_dir, **(SMOKE if a.smoke else FULL), spark=not a.no_spark)
    if a.java_lines:
        cfg.p7_lines = tuple(x.strip() for x in a.java_lines.split(","))
        unknown = [x for x in cfg.p7_lines if x not in JAVA_LINES]
        if unknown:
            ap.error(f"--java-lines: unknown {unknown}; use some of {', '.join(JAVA_LINES)}")
    wanted = [x.strip() for x in a.only.split(",")] if a.only else list(ALL)
    if a.no_spark:
        wanted = [w for w in wanted if w not in ("Spark", "Cluster", "P7", "L1", "M1", "M2")]
    if a.no_java:
        wanted = [w for w in wanted if w not in ("P7", "L1", "M1", "M2")]
    results = []
    t_all = time.perf_counter()
    work = tempfile.mkdtemp(prefix="hudi-etc-bench-")
    try:
        for key in wanted:
            t = time.perf_counter()
            print(f"[bench] {key} ...", file=sys.stderr, flush=True)
            try:
                fig = RUN[key](cfg, work)
            except Exception as e:  # a failing figure is reported, the others still run
                traceback.print_exc()
                fig = F.Figure(key, f"{key} failed", None, "", "", None, False,
                               notes=[f"error: {type(e).__name__}: {e}"])
            fig.details["bench seconds"] = round(time.perf_counter() - t, 1)
            print(f"[bench] {key}: {fig.value} {fig.unit} (met: {fig.met}) in {fig.details['bench seconds']} s",
                  file=sys.stderr, flush=True)
            results.append(fig)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if tmp_data:
            shutil.rmtree(tmp_data, ignore_errors=True)
    write_report(a.output, results, smoke=a.smoke, config=dataclasses.asdict(cfg),
                 seconds=time.perf_counter() - t_all)
    print(a.output)
    return 0 if all(f.value is not None or f.details.get("skipped") for f in results) else 1


if __name__ == "__main__":
    sys.exit(main())
