"""Publish a table's event-time threshold in the Hive metastore (``hudi-etc sync-catalog``).

Like Hudi's hive sync, a MOR table is registered twice: ``<table>_ro`` (the read-optimized
view, property ``hoodie.query.as.ro.table=true``) and ``<table>_rt`` (the snapshot view,
``false``), both EXTERNAL tables at the table's base path. On ``<table>_ro`` the sync then sets:

* ``hoodie.eventtime.threshold``: ISO-8601 UTC; the RO view holds every record with event time
  ≤ this (the last completed event-time compaction's threshold);
* ``hoodie.eventtime.threshold.ms``: the same, epoch milliseconds;
* ``hoodie.eventtime.compaction.instant``: the compaction commit that established it;
* ``hoodie.eventtime.synced.at``: when this sync wrote them (ISO-8601 UTC).

The threshold never moves back: the current property is read first, and a catalog that is
already ahead (e.g. a backfill run syncing after a later run did) is left alone
(``status: "unchanged"``, ``reason: "catalog ahead"``). The four properties are written by one
``ALTER TABLE ... SET TBLPROPERTIES`` (one metastore call).

**What these catalog entries are for.** Without the Hudi Spark bundle (not on PyPI, not fetchable
here) Spark has no ``hudi`` data source, so both entries are registered as parquet-backed
external tables over the base path. They exist for discovery and for their properties (query
engines, freshness monitors and people read the threshold from the catalog): **do not query them
with plain Spark** — a parquet scan of a Hudi base path sees every file slice (old versions,
uncompacted logs missing), not the table. Engines with Hudi support (Spark with the bundle,
Trino/Presto/Hive with the Hudi connector) should use their own Hudi registration; the
``hoodie.eventtime.*`` properties can be copied onto it or read from here.

The metastore is a remote one (``metastore_uri``, ``thrift://host:9083``) or an embedded Derby
database in ``metastore_dir`` (default: the working directory; Derby creates
``<dir>/metastore_db``). Embedded Derby admits one JVM at a time.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from typing import Any, Mapping

from ..hudi.crash import crashpoint
from ..hudi.errors import InvalidInputError
from ..hudi.index.stats import iso_ms
from ..hudi.table.hudi_table import HudiTable
from ..compaction.readiness import threshold_info

IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,127}")
METASTORE_URIS = re.compile(r"thrift://[A-Za-z0-9.\-_\[\]:]+(,thrift://[A-Za-z0-9.\-_\[\]:]+)*")

P_THRESHOLD = "hoodie.eventtime.threshold"
P_THRESHOLD_MS = "hoodie.eventtime.threshold.ms"
P_INSTANT = "hoodie.eventtime.compaction.instant"
P_SYNCED_AT = "hoodie.eventtime.synced.at"
P_AS_RO = "hoodie.query.as.ro.table"
P_BASE_PATH = "hoodie.etc.base.path"

NOTE = ("Hudi MOR {view} view registered by airflow-hudi-etc for discovery and its hoodie.eventtime.* "
        "properties; a parquet scan of a Hudi base path is not the table: query it with a Hudi-enabled engine")


def check_identifier(name: str, what: str) -> str:
    """``name`` if it is a plain SQL identifier (letters, digits, underscore; 1–128), else a typed error."""
    if not isinstance(name, str) or not IDENTIFIER.fullmatch(name):
        raise InvalidInputError(
            f"{what} {name!r} is not a valid identifier: use letters, digits and underscores "
            f"(not starting with a digit), at most 128 characters")
    return name


def catalog_names(database: str, table: str) -> tuple[str, str]:
    """(``<table>_ro``, ``<table>_rt``) after checking every identifier involved (typed error otherwise)."""
    check_identifier(database, "database")
    check_identifier(table, "table")
    return check_identifier(f"{table}_ro", "RO table name"), check_identifier(f"{table}_rt", "RT table name")


def quote(*parts: str) -> str:
    """Backtick-quoted, dot-joined identifier (the parts must have passed :func:`check_identifier`)."""
    return ".".join(f"`{p}`" for p in parts)


def _sql_string(value: str) -> str:
    return "'" + str(value).replace("\\", "\\\\").replace("'", "\\'") + "'"


def session_builder(*, metastore_uri: str | None = None, metastore_dir: str | None = None,
                    warehouse_dir: str | None = None):
    """A ``SparkSession.builder`` with Hive support on a remote metastore or an embedded Derby one.

    ``metastore_uri`` (``thrift://host:9083``, comma-separated for several): ``hive.metastore.uris``
    via ``spark.hadoop.*``. Otherwise Derby at ``<metastore_dir>/metastore_db`` (``metastore_dir``
    defaults to the working directory) with the warehouse in ``<metastore_dir>/spark-warehouse``
    unless ``warehouse_dir`` says otherwise. The master is left to the caller / spark-submit.
    """
    from pyspark.sql import SparkSession

    b = SparkSession.builder.enableHiveSupport().config("spark.sql.catalogImplementation", "hive")
    if metastore_uri:
        if not METASTORE_URIS.fullmatch(metastore_uri):
            raise InvalidInputError(f"metastore URI {metastore_uri!r}: use thrift://host:port")
        b = b.config("spark.hadoop.hive.metastore.uris", metastore_uri)
    else:
        d = os.path.abspath(metastore_dir or os.getcwd())
        if ";" in d:
            raise InvalidInputError(f"metastore directory {d!r} may not contain ';' (Derby URL separator)")
        os.makedirs(d, exist_ok=True)
        b = b.config("spark.hadoop.javax.jdo.option.ConnectionURL",
                     f"jdbc:derby:;databaseName={d}/metastore_db;create=true")
        # a JVM started by this builder writes derby.log next to the database, not into the cwd
        b = b.config("spark.driver.extraJavaOptions", f"-Dderby.system.home={d}")
        warehouse_dir = warehouse_dir or os.path.join(d, "spark-warehouse")
    if warehouse_dir:
        wd = warehouse_dir if "://" in warehouse_dir else os.path.abspath(warehouse_dir)
        b = b.config("spark.sql.warehouse.dir", wd)
    return b


def _location_key(loc: str) -> str:
    """Comparable form of a table location: ``file:/a/b/`` == ``/a/b``, ``s3a://x`` == ``s3://x``."""
    loc = (loc or "").rstrip("/")
    if loc.startswith("file:"):
        loc = re.sub(r"^file:/*", "/", loc)
    return re.sub(r"^s3[an]?://", "s3://", loc)


def _table_properties(spark, qname: str) -> dict[str, str]:
    return {r[0]: r[1] for r in spark.sql(f"SHOW TBLPROPERTIES {qname}").collect()}


def _table_location(spark, qname: str) -> str | None:
    for r in spark.sql(f"DESCRIBE TABLE EXTENDED {qname}").collect():
        if (r[0] or "").strip() == "Location":
            return (r[1] or "").strip()
    return None


def _spark_schema(table: HudiTable):
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(table.arrow_schema)


def _register(spark, table: HudiTable, database: str, name: str, location: str, *, read_optimized: bool) -> bool:
    """Create ``database.name`` as an external table at ``location`` unless it exists (then check it
    points there); set ``hoodie.query.as.ro.table``. True when it was created."""
    qname = quote(database, name)
    created = False
    if spark.catalog.tableExists(f"{database}.{name}"):
        have = _table_location(spark, qname)
        if have is not None and _location_key(have) != _location_key(location):
            raise InvalidInputError(
                f"catalog table {database}.{name} already exists at {have}, not at {location}: "
                f"choose another --table or drop it")
    else:
        spark.catalog.createTable(f"{database}.{name}", path=location, source="parquet",
                                  schema=_spark_schema(table),
                                  description=NOTE.format(view="read-optimized" if read_optimized else "snapshot"))
        created = True
    spark.sql(f"ALTER TABLE {qname} SET TBLPROPERTIES ("
              f"{_sql_string(P_AS_RO)}={_sql_string('true' if read_optimized else 'false')}, "
              f"{_sql_string(P_BASE_PATH)}={_sql_string(location)})")
    return created


def _catalog_location(path: str) -> str:
    return os.path.abspath(path) if "://" not in path else path


def sync_catalog(
    path: str,
    *,
    database: str,
    table: str,
    spark: Any = None,
    metastore_uri: str | None = None,
    metastore_dir: str | None = None,
    warehouse_dir: str | None = None,
    storage_options: Mapping[str, Any] | None = None,
    now: _dt.datetime | None = None,
) -> dict:
    """Register ``<table>_ro`` / ``<table>_rt`` and publish the RO threshold (module docstring).

    ``spark``: a Hive-enabled SparkSession (a spark-submit job's); None builds one with
    :func:`session_builder` on ``local[*]`` and stops it afterwards. Returns ``{database,
    ro_table, rt_table, threshold, threshold_ms, instant, status, reason, previous_threshold_ms,
    previous_instant, registered, synced_at}`` with status ``updated``, ``unchanged`` or
    ``no threshold yet``.
    """
    ro, rt = catalog_names(database, table)
    hudi = HudiTable.load(path, storage_options)  # errors (no table, bad version) before the catalog is touched
    threshold_ms, instant, reset_from = threshold_info(hudi)
    location = _catalog_location(path)
    own = spark is None
    if own:
        spark = (session_builder(metastore_uri=metastore_uri, metastore_dir=metastore_dir, warehouse_dir=warehouse_dir)
                 .master("local[*]").appName("hudi-etc-sync-catalog")
                 .config("spark.ui.enabled", "false").getOrCreate())
    try:
        if spark.conf.get("spark.sql.catalogImplementation", "in-memory") != "hive":
            raise InvalidInputError("the SparkSession has no Hive support: build it with catalog.session_builder()")
        spark.sql(f"CREATE DATABASE IF NOT EXISTS {quote(database)}")
        registered = [n for n, is_ro in ((ro, True), (rt, False))
                      if _register(spark, hudi, database, n, location, read_optimized=is_ro)]
        crashpoint("sync.after-register")
        props = _table_properties(spark, quote(database, ro))
        try:
            prev_ms = int(props[P_THRESHOLD_MS]) if P_THRESHOLD_MS in props else None
        except ValueError:
            prev_ms = None  # not ours / garbage: overwritten below
        out = {
            "database": database, "ro_table": ro, "rt_table": rt, "location": location,
            "threshold": iso_ms(threshold_ms), "threshold_ms": threshold_ms, "instant": instant,
            "previous_threshold_ms": prev_ms, "previous_threshold": iso_ms(prev_ms),
            "previous_instant": props.get(P_INSTANT), "registered": registered, "synced_at": None,
        }
        if threshold_ms is None:
            return {**out, "status": "no threshold yet",
                    "reason": "no completed event-time compaction on the timeline"}
        if prev_ms is not None and prev_ms > threshold_ms and not (reset_from is not None
                                                                  and props.get(P_INSTANT) == instant):
            return {**out, "status": "unchanged", "reason": "catalog ahead"}
        # (a threshold of this very compaction lowered by reset-threshold is republished lower)
        if prev_ms == threshold_ms and props.get(P_INSTANT) == instant:
            return {**out, "status": "unchanged", "reason": "already synced"}
        synced_at = (now or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc)
        synced_iso = synced_at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
        new = {P_THRESHOLD: iso_ms(threshold_ms), P_THRESHOLD_MS: str(threshold_ms), P_INSTANT: instant,
               P_SYNCED_AT: synced_iso}
        crashpoint("sync.before-properties")
        spark.sql(f"ALTER TABLE {quote(database, ro)} SET TBLPROPERTIES ("
                  + ", ".join(f"{_sql_string(k)}={_sql_string(v)}" for k, v in new.items()) + ")")
        return {**out, "status": "updated", "reason": "threshold published", "synced_at": synced_iso}
    finally:
        if own:
            spark.stop()
