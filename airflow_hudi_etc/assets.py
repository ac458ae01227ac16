"""Airflow assets for Hudi tables: "the read-optimized view of the table at L".

The URI scheme is ours: ``hudi-etc+<storage scheme>://<location>``, e.g. ``hudi-etc+file:///data/trips``
or ``hudi-etc+s3://bucket/warehouse/trips``; stripping the ``hudi-etc+`` prefix gives back the table's
base path. It is registered in the provider metadata (``asset-uris``) with :func:`sanitize_uri` as its
normalizer (``s3a``/``s3n`` become ``s3``, repeated and trailing slashes go, query strings, fragments
and relative or ``..`` paths are refused), :func:`create_asset` as its factory and
:func:`convert_asset_to_openlineage` as its OpenLineage converter.

An asset event on such an asset means: the table's RO view now holds every record with event time
≤ ``extra["threshold"]`` (see :func:`event_extra`). ``ExecuteCompactionOperator`` emits it; the
:class:`~airflow_hudi_etc.triggers.event_time.EventTimeThresholdTrigger` in an ``AssetWatcher`` emits it
when it sees a table's threshold advance.

Kept light (no Hudi layer, no pyarrow): the scheduler, the DAG processor and the triggerer import it.
"""

from __future__ import annotations

import os
import posixpath
import urllib.parse
from typing import TYPE_CHECKING, Any, Mapping

if TYPE_CHECKING:
    from urllib.parse import SplitResult

PREFIX = "hudi-etc+"
#: storage schemes a table may live on (each registered as ``hudi-etc+<scheme>``)
STORAGE_SCHEMES = ("file", "s3", "s3a", "s3n", "gs", "gcs", "abfs", "abfss", "hdfs", "memory")
ASSET_SCHEMES = tuple(PREFIX + s for s in STORAGE_SCHEMES)
#: object stores whose netloc is a bucket/container (must be present)
_ALIASES = {"s3a": "s3", "s3n": "s3", "gcs": "gs"}


def _clean_path(path: str, uri: str) -> str:
    if not path or path == "/":
        raise ValueError(f"asset URI {uri!r}: the table path is empty")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise ValueError(f"asset URI {uri!r}: '..' in the table path")
    return "/" + "/".join(parts)


def sanitize_uri(uri: SplitResult) -> SplitResult:
    """The normalizer Airflow calls for ``hudi-etc+*`` URIs (raises ``ValueError`` on a bad one)."""
    text = urllib.parse.urlunsplit(uri)
    scheme = uri.scheme.lower()
    storage = scheme[len(PREFIX):] if scheme.startswith(PREFIX) else ""
    if storage not in STORAGE_SCHEMES:
        raise ValueError(f"asset URI {text!r}: storage scheme {storage!r} is not one of {', '.join(STORAGE_SCHEMES)}")
    if uri.query or uri.fragment:
        raise ValueError(f"asset URI {text!r}: a Hudi table asset has no query or fragment")
    storage = _ALIASES.get(storage, storage)
    netloc = uri.netloc
    if storage in ("file", "memory"):
        if netloc not in ("", "localhost"):
            raise ValueError(f"asset URI {text!r}: a local table has no host")
        netloc = ""
    elif not netloc:
        raise ValueError(f"asset URI {text!r}: {storage} needs a bucket or host")
    return uri._replace(scheme=PREFIX + storage, netloc=netloc, path=_clean_path(uri.path, text), query="",
                        fragment="")


def asset_uri(table_path: str | os.PathLike) -> str:
    """The asset URI of the table at ``table_path`` (a local path or an fsspec URI), normalized."""
    path = os.fspath(table_path)
    if "://" in path:
        storage, rest = path.split("://", 1)
        storage = storage.lower()
        if storage == "file":
            uri = f"{PREFIX}file://{rest}"
        else:
            uri = f"{PREFIX}{storage}://{rest}"
    else:
        uri = f"{PREFIX}file://{posixpath.normpath(os.path.abspath(path))}"
    return urllib.parse.urlunsplit(sanitize_uri(urllib.parse.urlsplit(uri)))


def table_path_of(uri: str) -> str:
    """The table's base path named by an asset URI (a local path for ``hudi-etc+file``)."""
    parsed = sanitize_uri(urllib.parse.urlsplit(uri))
    storage = parsed.scheme[len(PREFIX):]
    if storage == "file":
        return parsed.path
    return f"{storage}://{parsed.netloc}{parsed.path}"


def is_table_asset(obj: Any) -> bool:
    return str(getattr(obj, "uri", "") or "").lower().startswith(PREFIX)


def create_asset(*, path: str | os.PathLike, name: str | None = None, group: str = "hudi-etc",
                 extra: Mapping[str, Any] | None = None, watchers: list | None = None):
    """The factory registered for our schemes: ``Asset(uri=asset_uri(path), name=<the same URI>)``.

    One identity per table: Airflow tells assets apart by name *and* URI, so a second name for
    the same table would be a second asset (its own events, its own consumers, no producer). The
    name is therefore always the normalized URI, from every place that names the table (the
    operators' events, an ``AssetAlias`` resolution, an ``AssetWatcher``); ``name`` may only
    repeat it (a different one is a ``ValueError``)."""
    from airflow.sdk import Asset

    uri = asset_uri(path)
    if name is not None and name != uri:
        raise ValueError(f"asset of table {path}: its name is its URI {uri!r} (one identity per table), "
                         f"not {name!r}")
    kw: dict[str, Any] = {"uri": uri, "name": uri, "group": group, "extra": dict(extra or {})}
    if watchers:
        kw["watchers"] = watchers
    return Asset(**kw)


#: the usual spelling in DAG files
table_asset = create_asset


def event_extra(result: Mapping[str, Any], table_path: str) -> dict:
    """The ``extra`` of an asset event for a published threshold (JSON values only)."""
    keys = ("threshold", "threshold_ms", "instant", "status", "logs_compacted", "logs_remaining",
            "remaining_log_files", "remaining_log_bytes", "execution_seconds", "threshold_lag_seconds",
            "compaction_time", "previous_threshold_ms")
    out: dict = {"table_path": str(table_path), "asset_uri": asset_uri(table_path)}
    for k in keys:
        v = result.get(k)
        if v is None and isinstance(result.get("freshness"), Mapping):
            v = result["freshness"].get(k)
        if isinstance(v, (str, int, float, bool)) or v is None:
            out[k] = v
    return out


def openlineage_dataset(table_path: str):
    """OpenLineage ``Dataset`` of a table (namespace: ``file`` or ``<scheme>://<bucket>``; name: the
    path), or None when OpenLineage is not installed."""
    try:
        from airflow.providers.common.compat.openlineage.facet import Dataset
    except Exception:  # the common-compat provider's OpenLineage part is absent
        return None
    parsed = urllib.parse.urlsplit(asset_uri(table_path))
    storage = parsed.scheme[len(PREFIX):]
    namespace = "file" if storage == "file" else f"{storage}://{parsed.netloc}"
    try:
        return Dataset(namespace=namespace, name=parsed.path)
    except Exception:  # a stub without the openlineage client
        return None


def convert_asset_to_openlineage(asset, lineage_context=None):
    """The OpenLineage converter registered for our schemes."""
    return openlineage_dataset(table_path_of(asset.uri))


def catalog_datasets(database: str, table: str, metastore_uri: str | None = None) -> list:
    """OpenLineage datasets of the catalog tables a sync writes, ``<database>.<table>_ro`` and
    ``_rt`` (namespace ``hive://<host>:<port>`` of a ``thrift://`` metastore; ``hive://localhost``
    for the embedded one); [] when OpenLineage is not installed."""
    try:
        from airflow.providers.common.compat.openlineage.facet import Dataset
    except Exception:
        return []
    netloc = urllib.parse.urlsplit(str(metastore_uri)).netloc if metastore_uri else ""
    namespace = f"hive://{netloc or 'localhost'}"
    try:
        return [Dataset(namespace=namespace, name=f"{database}.{table}{suffix}") for suffix in ("_ro", "_rt")]
    except Exception:  # a stub without the openlineage client
        return []


def operator_lineage(inputs: list | None = None, outputs: list | None = None):
    """``OperatorLineage(inputs, outputs)`` without the None entries; None when OpenLineage is absent."""
    try:
        from airflow.providers.openlineage.extractors import OperatorLineage
    except ImportError:
        return None
    return OperatorLineage(inputs=[d for d in inputs or [] if d is not None],
                           outputs=[d for d in outputs or [] if d is not None])
