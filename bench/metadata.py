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
import shutil
import statistics
import sys
import time

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


# ---------------------------------------------------------------------------- M2
M2_LINE = "0.15"
S3_JARS = (("org/apache/hadoop/hadoop-aws/3.3.4", "hadoop-aws-3.3.4.jar"),
           ("com/amazonaws/aws-java-sdk-bundle/1.12.262", "aws-java-sdk-bundle-1.12.262.jar"))


def _s3a_jars() -> list[str]:
    """hadoop-aws of the Spark line's Hadoop (3.3.4) and its AWS SDK, fetched by Maven once."""
    import subprocess

    repo = os.path.expanduser("~/.m2/repository")
    paths = [os.path.join(repo, d, j) for d, j in S3_JARS]
    if not all(os.path.isfile(p) for p in paths):
        subprocess.run(["mvn", "-q", "dependency:get", "-Dartifact=org.apache.hadoop:hadoop-aws:3.3.4"], check=True)
    return paths


def _s3fs_in_line_venv(line: str) -> None:
    """Our S3 storage in the line's driver needs s3fs in that venv (the harness installs Spark
    and pyarrow there, not our extras): installed once, at our venv's s3fs version."""
    import subprocess

    import s3fs

    from java_hudi import line_files  # noqa: E402 (tests/support, on sys.path by then)

    py = str(line_files(line)[0])
    if subprocess.run([py, "-c", "import s3fs"], capture_output=True).returncode != 0:
        subprocess.run([py, "-m", "pip", "install", "-q", f"s3fs=={s3fs.__version__}"], check=True)


def _upload(local: str, endpoint: str, key: str, secret: str, bucket: str, prefix: str) -> int:
    """Copy a table folder (no Hadoop checksum files) into the bucket, 16 PUTs at a time."""
    from concurrent.futures import ThreadPoolExecutor

    import boto3

    s3 = boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=key, aws_secret_access_key=secret,
                      region_name="us-east-1")
    files = []
    for d, _, names in os.walk(local):
        files += [os.path.join(d, n) for n in names if not n.endswith(".crc") and n != ".complete"]

    def put(p):
        with open(p, "rb") as f:
            s3.put_object(Bucket=bucket, Key=f"{prefix}/{os.path.relpath(p, local)}", Body=f.read())

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(put, files))
    return len(files)


def m2_metadata_listing(cfg, work: str) -> Figure:
    """M2: planning on an S3-compatible server, the file listing read from Hudi's metadata table
    against listing storage.

    Java (0.15, its defaults: the metadata table on) builds a table of ``m2_groups`` file groups
    over ``m2_partitions`` partitions locally (one insert, one file group per record), then
    upserts a fifth of the keys (a log in each of those groups); the table is copied into moto's
    S3 server. In one driver JVM of that line, configured with s3a for the server, our
    ``schedule`` runs Spark-hosted on ``s3://`` (a warm-up first: Java's logs carry no event-time
    stats, so the first planning scans them and remembers their event times; it is unscheduled
    again), then, in turn, with ``HUDI_ETC_FILE_LISTING=storage`` and with the metadata table's
    listing, each unscheduled after. The figure: the plan's own planning time
    (``hoodie.etc.planning.seconds``: the table loaded, the files listed, the plan made),
    median of the storage runs over median of the metadata-table runs (goal ≥ 5)."""
    import json

    from airflow_hudi_etc.hudi.protocol.plan import read_plan
    from airflow_hudi_etc.hudi.storage import Storage

    from .figures import _moto_server

    sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
    from java_hudi import JavaHudi  # noqa: E402

    groups, parts, reps = getattr(cfg, "m2_groups", 10_000), getattr(cfg, "m2_partitions", 100), getattr(cfg, "m2_reps", 3)
    _s3fs_in_line_venv(M2_LINE)
    proc, endpoint = _moto_server()
    key, secret, bucket = "AKIDBENCH", "bench-secret", "bench"
    conf = {"spark.jars": ",".join(_s3a_jars()),
            "spark.hadoop.fs.s3.impl": "org.apache.hadoop.fs.s3a.S3AFileSystem",
            "spark.hadoop.fs.s3a.endpoint": endpoint, "spark.hadoop.fs.s3a.path.style.access": "true",
            "spark.hadoop.fs.s3a.connection.ssl.enabled": "false",
            "spark.hadoop.fs.s3a.aws.credentials.provider": "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
            "spark.hadoop.fs.s3a.access.key": key, "spark.hadoop.fs.s3a.secret.key": secret,
            "spark.hadoop.fs.s3a.endpoint.region": "us-east-1"}
    old = os.environ.get("HUDI_ETC_JAVA_SPARK_CONF")
    os.environ["HUDI_ETC_JAVA_SPARK_CONF"] = json.dumps(conf)
    java = JavaHudi(M2_LINE, timeout=3600)  # one insert writes every file group: minutes
    details: dict = {}
    try:
        import boto3

        boto3.client("s3", endpoint_url=endpoint, aws_access_key_id=key, aws_secret_access_key=secret,
                     region_name="us-east-1").create_bucket(Bucket=bucket)
        # the table Java builds takes minutes: kept in the data folder (bench/.data) for the next run
        local = os.path.join(cfg.data_dir, f"m2-{M2_LINE}-{groups}x{parts}")
        if os.path.isdir(local) and not os.path.isfile(os.path.join(local, ".complete")):
            shutil.rmtree(local)
        t0 = time.perf_counter()
        # a bulk insert without sorting: each of ``tasks`` Spark tasks writes one base file per table
        # partition among its rows; Spark's round-robin repartition spreads the rows about at
        # random, so with 5 rows per (task, partition) on average 99% of the pairs get a file
        tasks = max(1, groups // parts)
        rows = [{"key": f"k{i:06d}", "ts": 1, "event_time": T0 + i, "value": 1.0, "note": "m",
                 "region": f"p{i % parts:03d}"} for i in range(5 * tasks * parts)]
        # updates: every file group of a fifth of the partitions gets a log (the index then reads
        # those partitions' files only)
        hot = {f"p{j:03d}" for j in range(0, parts, 5)}
        upd = [{**r, "ts": 2, "value": 2.0} for r in rows if r["region"] in hot]
        if not os.path.isdir(local):
            bulk = {"hoodie.bulkinsert.sort.mode": "NONE", "hoodie.parquet.small.file.limit": "0",
                    "hoodie.index.bloom.num_entries": "10"}
            java.write(local, rows, operation="bulk_insert", schema=DDL, spark_partitions=tasks,
                       options={**NEW, "hoodie.metadata.enable": "true", **bulk})
            java.upsert(local, upd, schema=DDL, options={"hoodie.metadata.enable": "true",
                                                         "hoodie.parquet.small.file.limit": "0"})
            open(os.path.join(local, ".complete"), "w").close()
            details["Java builds the table, s"] = round(time.perf_counter() - t0, 1)
        built = {(d, n.split("_", 1)[0]) for d, _, names in os.walk(local) if "/.hoodie" not in d + "/"
                 for n in names if n.endswith(".parquet")}
        details["file groups built (base files on storage)"] = len(built)
        details["file groups with a log"] = len({(d, n[1:].split("_", 1)[0]) for d, _, names in os.walk(local)
                                                 if "/.hoodie" not in d + "/" for n in names
                                                 if ".log." in n and not n.endswith(".crc")})
        t0 = time.perf_counter()
        details["objects copied to the S3 server"] = _upload(local, endpoint, key, secret, bucket, "t")
        details["copy to the S3 server, s"] = round(time.perf_counter() - t0, 1)
        path = f"s3://{bucket}/t"
        opts = {"key": key, "secret": secret, "endpoint_url": endpoint, "client_kwargs": {"region_name": "us-east-1"}}
        env = {"HUDI_ETC_STORAGE_OPTIONS": json.dumps(opts)}
        storage = Storage(path, opts)
        # (the copy gave every object the upload's time: configure's check of the zone against the
        # timeline files' times is told the copy's age)
        res = java.etc("configure", "--path", path, "--timeline-zone", "UTC", "--java-compaction", "off",
                       env={**env, "HUDI_ETC_MAX_CLOCK_SKEW": "1d"})
        assert res["rc"] == 0, res
        meta_dir = ".hoodie"  # version 6

        def planned(listing: str, run: str) -> tuple[float, float, int]:
            e = {**env, **({"HUDI_ETC_FILE_LISTING": "storage"} if listing == "storage" else {})}
            t = time.perf_counter()
            prof = os.environ.get("BENCH_PROFILE_DIR")  # a cProfile of each schedule, to read where it goes
            prof = os.path.join(prof, f"m2-{listing}-{run}.prof") if prof else None
            res = java.etc("schedule", "--path", path, "--data-latency", "0s", "--compaction-time",
                           "2026-01-02T00:00:00Z", "--event-time-field", "event_time", env=e, timeout=3600,
                           profile=prof)
            wall = time.perf_counter() - t
            assert res["rc"] == 0 and res["answer"]["reason"] == "scheduled", res
            plan = read_plan(storage, res["answer"]["instant"], meta_dir)
            assert plan.extra["hoodie.etc.planning.listing"] == listing, plan.extra
            res2 = java.etc("unschedule", "--path", path, "--instant", res["answer"]["instant"], env=env)
            assert res2["rc"] == 0, res2
            return float(plan.extra["hoodie.etc.planning.seconds"]), wall, len(plan.operations)

        warm = planned("metadata-table", "warm")
        details["warm-up schedule (scans Java's logs once), planning s"] = round(warm[0], 2)
        runs: dict[str, list] = {"storage": [], "metadata-table": []}
        for i in range(reps):
            for listing in ("storage", "metadata-table"):
                runs[listing].append(planned(listing, str(i)))
    finally:
        java.close()
        proc.kill()
        proc.wait()
        if old is None:
            os.environ.pop("HUDI_ETC_JAVA_SPARK_CONF", None)
        else:
            os.environ["HUDI_ETC_JAVA_SPARK_CONF"] = old
    med = {k: statistics.median(r[0] for r in v) for k, v in runs.items()}
    ratio = med["storage"] / max(med["metadata-table"], 1e-3)
    details.update({"file groups asked for": groups, "partitions": parts, "rows updated": len(upd),
                    "operations per plan": runs["storage"][0][2],
                    "planning listing storage, median s": round(med["storage"], 2),
                    "planning listing the metadata table, median s": round(med["metadata-table"], 2),
                    "planning s, each run (storage)": [round(r[0], 2) for r in runs["storage"]],
                    "planning s, each run (metadata table)": [round(r[0], 2) for r in runs["metadata-table"]],
                    "schedule wall s, each run (storage)": [round(r[1], 1) for r in runs["storage"]],
                    "schedule wall s, each run (metadata table)": [round(r[1], 1) for r in runs["metadata-table"]]})
    return Figure("M2", f"Planning on an S3-compatible server, {groups:,} file groups: the listing from the metadata "
                  "table against listing storage", round(ratio, 1), "× faster",
                  "planning with the metadata table's listing ≥ 5× faster than listing storage",
                  round(ratio / 5, 2), ratio >= 5, details=details,
                  notes=[f"Java {M2_LINE} writes the table with its defaults (metadata table on) and hosts our "
                         "schedule Spark-hosted (s3a: hadoop-aws 3.3.4) on moto's S3 server in its own process on "
                         "127.0.0.1: a request costs moto's Python handling on this 2-core machine, not a network "
                         "round trip",
                         "planning time = the plan's hoodie.etc.planning.seconds (request checked, table loaded, "
                         "files listed, plan made; publishing not included); runs alternate storage / metadata "
                         "table after one warm-up that scans Java's logs for event times"])
