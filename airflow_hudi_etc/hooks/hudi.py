"""``HudiTableHook``: a Hudi table's timeline, read in this process (no Spark), through the
public :class:`airflow_hudi_etc.api.Table`.

Everything the sensor, its trigger and the operators' retry checks need: readiness of an
event-time compaction, pending plans and their thresholds, the last published threshold, the
freshness metrics. The storage options (fsspec: S3 key/secret/endpoint, ...) come from an
Airflow connection of type ``hudi`` when one is given:

============  =====================================================================
field         fsspec option
============  =====================================================================
login         ``key`` (S3 access key id)
password      ``secret`` (S3 secret access key)
host          ``endpoint_url`` (S3-compatible stores: MinIO, Ceph, ...)
extra         ``{"storage_options": {...}}`` merged last (any fsspec option, e.g.
              ``{"client_kwargs": {"region_name": "eu-west-1"}}``), ``"region_name"``
              (→ ``client_kwargs.region_name``), ``"token"`` (session token)
============  =====================================================================

e.g. ``AIRFLOW_CONN_HUDI_DEFAULT='{"conn_type": "hudi", "login": "AKIA...", "password": "...",
"host": "http://minio:9000"}'``. Without a connection the filesystem's own defaults apply
(local paths; S3 credentials from the environment / instance profile). Credentials are never
logged: the secret values are registered with Airflow's secrets masker and
:func:`describe_storage_options` shows only option names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from airflow.sdk import BaseHook

if TYPE_CHECKING:  # the table API (pyarrow, fastavro) is imported where it is used, never by the
    # triggerer's event loop or the DAG processor when they import this module
    from ..api import Table

#: the connection the hook, the sensor, its triggers and the operators use unless told otherwise;
#: when it does not exist the filesystem's defaults apply (local tables need no connection)
DEFAULT_CONN_ID = "hudi_default"

#: storage-option names whose values are secrets (masked, never logged)
SECRET_OPTIONS = ("secret", "token", "password", "session_token", "aws_secret_access_key", "sas_token",
                  "account_key", "client_secret", "credential")


def _is_secret_name(name: str) -> bool:
    n = name.lower()
    return any(s in n for s in SECRET_OPTIONS) or n in ("key", "access_key", "aws_access_key_id")


def describe_storage_options(options: Mapping[str, Any] | None) -> dict:
    """The options with every secret (and key id) value replaced by ``***`` — what may be logged."""
    out: dict = {}
    for k, v in (options or {}).items():
        if isinstance(v, Mapping):
            out[k] = describe_storage_options(v)
        else:
            out[k] = "***" if _is_secret_name(str(k)) and v not in (None, "") else v
    return out


def storage_options_from_connection(conn: Any) -> dict:
    """fsspec storage options from a ``hudi`` connection (see the module docstring)."""
    opts: dict[str, Any] = {}
    if getattr(conn, "login", None):
        opts["key"] = conn.login
    if getattr(conn, "password", None):
        opts["secret"] = conn.password
    if getattr(conn, "host", None):
        opts["endpoint_url"] = conn.host
    extra = conn.extra_dejson if hasattr(conn, "extra_dejson") else {}
    if extra.get("token"):
        opts["token"] = extra["token"]
    if extra.get("region_name"):
        opts.setdefault("client_kwargs", {})["region_name"] = extra["region_name"]
    so = extra.get("storage_options") or {}
    if not isinstance(so, Mapping):
        from ..hudi.errors import InvalidInputError

        raise InvalidInputError(f"connection {conn.conn_id!r}: extra 'storage_options' must be a JSON object")
    for k, v in so.items():
        if isinstance(v, Mapping) and isinstance(opts.get(k), Mapping):
            opts[k] = {**opts[k], **v}
        else:
            opts[k] = v
    return opts


def _secret_values(options: Mapping[str, Any]) -> list[str]:
    out = []
    for k, v in options.items():
        if isinstance(v, Mapping):
            out += _secret_values(v)
        elif _is_secret_name(str(k)) and isinstance(v, str) and v:
            out.append(v)
    return out


# --------------------------------------------------------------------------- checks
def _table(path: Any, storage_options: Mapping[str, Any] | None) -> Table:
    from ..api import Table

    return path if isinstance(path, Table) else Table(path, storage_options=storage_options)


def event_time_check(path: Any, *, threshold_ms: int, storage_options: Mapping[str, Any] | None = None) -> dict:
    """What the sensor and its trigger decide, as one JSON-able dict (``path``: a path or a
    :class:`~airflow_hudi_etc.api.Table`): :meth:`Compaction.check
    <airflow_hudi_etc.api.Compaction.check>`'s answer.

    ``state``: ``ready`` (a plan for this threshold may be made now), ``covered`` (the last
    completed event-time compaction's threshold is already ≥ this one: a backfill run with
    nothing to do), ``resume`` (a pending plan for exactly this threshold exists — an earlier
    attempt scheduled it; the schedule task reuses it and execute finishes it) or ``waiting``
    (another pending compaction or clustering must finish first). ``done`` is true except for
    ``waiting``.
    """
    return _table(path, storage_options).compaction.check(threshold_ms).as_dict()


def published_threshold(path: Any, storage_options: Mapping[str, Any] | None = None) -> dict:
    """``{threshold_ms, threshold, instant}`` of the latest completed event-time compaction of the
    table at ``path`` (a timeline read; blocking: triggers call it in a thread)."""
    return _table(path, storage_options).compaction.last_threshold().as_dict()


class HudiTableHook(BaseHook):
    """Reads a Hudi MOR table's timeline (readiness, pending plans, thresholds, metrics).

    :param hudi_conn_id: connection of type ``hudi`` holding fsspec storage options (see the
        module docstring); default ``hudi_default``, which may be absent (then, as with None, the
        filesystem's defaults apply). Any other connection that is absent is an error.
    :param storage_options: explicit fsspec options, merged over the connection's.
    """

    conn_name_attr = "hudi_conn_id"
    default_conn_name = DEFAULT_CONN_ID
    conn_type = "hudi"
    hook_name = "Apache Hudi table storage"

    def __init__(self, hudi_conn_id: str | None = DEFAULT_CONN_ID, *,
                 storage_options: Mapping[str, Any] | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.hudi_conn_id = hudi_conn_id
        self._explicit = dict(storage_options or {})
        self._options: dict | None = None

    # ---------------------------------------------------------------- connection
    def _finish(self, opts: dict) -> dict:
        opts = {**opts, **self._explicit}
        for v in _secret_values(opts):
            try:
                from airflow.sdk.log import mask_secret

                mask_secret(v)
            except Exception:  # outside a task process: nothing to register with
                pass
        self._options = opts
        if opts:
            self.log.info("Hudi storage options from %s: %s", self.hudi_conn_id or "arguments",
                          describe_storage_options(opts))
        return opts

    def _absent_default(self, e: Exception) -> bool:
        """True when ``e`` says the default connection does not exist (then: no options)."""
        if self.hudi_conn_id != DEFAULT_CONN_ID or type(e).__name__ not in ("AirflowNotFoundException",
                                                                            "ConnectionNotFound"):
            return False
        self.log.debug("connection %s not defined: the filesystem's defaults apply", DEFAULT_CONN_ID)
        return True

    def get_storage_options(self) -> dict:
        """fsspec storage options (connection fields + extras + explicit options); cached."""
        if self._options is None:
            conn = None
            if self.hudi_conn_id:
                try:
                    conn = self.get_connection(self.hudi_conn_id)
                except Exception as e:
                    if not self._absent_default(e):
                        raise
            self._finish(storage_options_from_connection(conn) if conn is not None else {})
        return dict(self._options or {})

    async def aget_storage_options(self) -> dict:
        """:meth:`get_storage_options` for async code (the triggers)."""
        if self._options is None:
            conn = None
            if self.hudi_conn_id:
                try:
                    conn = await self.aget_connection(self.hudi_conn_id)
                except Exception as e:
                    if not self._absent_default(e):
                        raise
            self._finish(storage_options_from_connection(conn) if conn is not None else {})
        return dict(self._options or {})

    def get_conn(self) -> dict:
        return self.get_storage_options()

    def test_connection(self) -> tuple[bool, str]:
        """The connection form's *Test* button: the storage options resolve and the table named by
        the connection's extra ``table_path`` is readable with them (its properties and timeline:
        path and credentials checked). Never raises; the message names no secret."""
        try:
            conn = self.get_connection(self.hudi_conn_id) if self.hudi_conn_id else None
            path = (conn.extra_dejson.get("table_path") if conn is not None else None) or None
            if not path:
                return False, ("set the extra 'table_path' (a table on this storage) to test the connection: "
                               "its path and the credentials are checked by reading that table's timeline")
            table = self.load_table(str(path))
            info = table.info()
            last = table.compaction.last_threshold()
            return True, (f"read table {info.name!r} at {path}: {info.instants} instants on "
                          f"its timeline, last published threshold {last.threshold}")
        except Exception as e:  # noqa: BLE001 - the form shows the reason
            return False, f"{type(e).__name__}: {e}"

    # ---------------------------------------------------------------- timeline reads
    def load_table(self, path: str) -> Table:
        """The table at ``path`` with this hook's storage options (``TableNotFoundError`` when
        there is none)."""
        from ..api import Table

        return Table.open(path, storage_options=self.get_storage_options())

    def check(self, path: str, *, threshold_ms: int) -> dict:
        """:func:`event_time_check` with this hook's storage options."""
        return event_time_check(path, threshold_ms=threshold_ms, storage_options=self.get_storage_options())

    def readiness(self, path: str, *, threshold_ms: int):
        """The raw :class:`~airflow_hudi_etc.api.Readiness`."""
        return _table(path, self.get_storage_options()).compaction.readiness(threshold_ms)

    def pending_plans(self, path: str) -> list[dict]:
        """Pending compactions, oldest first, with the threshold their plan carries (None: not ours)."""
        return [p.as_dict() for p in _table(path, self.get_storage_options()).compaction.pending_plans()]

    def compaction_state(self, path: str, instant: str) -> str | None:
        """``requested`` / ``inflight`` / ``completed`` of compaction ``instant``; None when absent."""
        return _table(path, self.get_storage_options()).compaction.state(instant)

    def last_threshold(self, path: str) -> dict:
        """The threshold the table's RO view holds: ``{threshold_ms, threshold, instant}`` of the
        latest completed event-time compaction (None values when there is none)."""
        return published_threshold(path, self.get_storage_options())

    def metrics(self, path: str, *, include_slices: bool = False, allow_scan: bool = False) -> dict:
        """Freshness metrics (:meth:`Table.status <airflow_hudi_etc.api.Table.status>`'s details)
        from the timeline alone."""
        return _table(path, self.get_storage_options()).status(include_slices=include_slices,
                                                               allow_scan=allow_scan).as_dict()
