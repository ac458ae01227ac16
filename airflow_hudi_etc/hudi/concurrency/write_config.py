"""The Hudi write settings of a table's writers, as this product reads them.

Java writers are configured per job (``hoodie.write.concurrency.mode``,
``hoodie.write.lock.provider``, ``hoodie.write.lock.*``, ``hoodie.cleaner.policy.failed.writes``,
...); none of it is in ``hoodie.properties``. For our commands to take the same lock and follow
the same rules, the user records the same keys once (``hudi-etc configure --hoodie KEY=VALUE``,
``Table.configure(hoodie={...})``): they are kept in the table's settings file
(:mod:`..config.etc_settings`, its ``hoodie`` object) and read by every command wherever it runs.
A run may add or override keys with the environment variable ``HUDI_ETC_HOODIE_CONF`` (a JSON
object; the operators' ``hoodie_conf`` argument sets it for their job).

Only Hudi's own write-side keys are taken: ``hoodie.write.*``, ``hoodie.cleaner.policy.failed.writes``,
``hoodie.client.heartbeat.*``, ``hoodie.fs.atomic_creation.support``, ``hoodie.metadata.*``,
``hoodie.clean.*`` (whether the Java writers clean) and the index settings ``hoodie.index.*``,
``hoodie.bucket.index.*`` (a bucket-index table's writers: :mod:`..index.bucket`)
(table properties, ``hoodie.table.*``, belong to ``hoodie.properties``; our own settings are
``hoodie.etc.*``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Mapping

from ..errors import InvalidInputError

ENV_CONF = "HUDI_ETC_HOODIE_CONF"

K_CONCURRENCY_MODE = "hoodie.write.concurrency.mode"
K_LOCK_PROVIDER = "hoodie.write.lock.provider"
K_FAILED_WRITES = "hoodie.cleaner.policy.failed.writes"
K_WAIT_MS = "hoodie.write.lock.wait_time_ms"
K_NUM_RETRIES = "hoodie.write.lock.num_retries"
K_RETRY_WAIT_MS = "hoodie.write.lock.wait_time_ms_between_retry"
K_CLIENT_NUM_RETRIES = "hoodie.write.lock.client.num_retries"
K_CLIENT_RETRY_WAIT_MS = "hoodie.write.lock.client.wait_time_ms_between_retry"

#: the prefixes (or whole keys) of the Hudi write settings a table may record
ALLOWED = ("hoodie.write.", "hoodie.cleaner.policy.failed.writes", "hoodie.client.heartbeat.",
           "hoodie.fs.atomic_creation.support", "hoodie.metadata.", "hoodie.clean.", "hoodie.index.",
           "hoodie.bucket.index.")

SINGLE_WRITER = "SINGLE_WRITER"
OCC = "OPTIMISTIC_CONCURRENCY_CONTROL"
NBCC = "NON_BLOCKING_CONCURRENCY_CONTROL"
MODES = (SINGLE_WRITER, OCC, NBCC)

#: Java's lock provider classes by their simple names (what users write is the full class name)
PKG = "org.apache.hudi.client.transaction.lock."
FILE_SYSTEM = PKG + "FileSystemBasedLockProvider"
ZOOKEEPER = PKG + "ZookeeperBasedLockProvider"
STORAGE_BASED = PKG + "StorageBasedLockProvider"
IN_PROCESS = PKG + "InProcessLockProvider"


def check_keys(conf: Mapping[str, str], where: str) -> dict[str, str]:
    """``conf`` as strings, every key one of :data:`ALLOWED` (typed refusal naming the others)."""
    bad = sorted(str(k) for k in conf
                 if not any(str(k) == a or (a.endswith(".") and str(k).startswith(a)) for a in ALLOWED))
    if bad:
        raise InvalidInputError(f"{where}: {bad} are not Hudi write settings this product takes "
                                f"(keys under {', '.join(ALLOWED)})")
    out = {}
    for k, v in conf.items():
        if not isinstance(v, (str, int, float, bool)):
            raise InvalidInputError(f"{where}: {k} must be a string, not {type(v).__name__}")
        out[str(k)] = str(v).lower() if isinstance(v, bool) else str(v)
    return out


def parse_pairs(pairs) -> dict[str, str]:
    """``["KEY=VALUE", ...]`` (the CLI's ``--hoodie``) as a mapping; a pair without ``=`` is refused."""
    out: dict[str, str] = {}
    for p in pairs or ():
        k, sep, v = str(p).partition("=")
        if not sep or not k.strip():
            raise InvalidInputError(f"--hoodie {p!r}: give KEY=VALUE")
        out[k.strip()] = v.strip()
    return check_keys(out, "--hoodie")


def from_env() -> dict[str, str]:
    """The per-run settings of ``$HUDI_ETC_HOODIE_CONF`` ({} when unset)."""
    raw = os.environ.get(ENV_CONF, "").strip()
    if not raw:
        return {}
    try:
        doc = json.loads(raw)
    except ValueError:
        raise InvalidInputError(f"${ENV_CONF} is not a JSON object") from None
    if not isinstance(doc, dict):
        raise InvalidInputError(f"${ENV_CONF} is not a JSON object")
    return check_keys(doc, f"${ENV_CONF}")


@dataclass(frozen=True)
class WriteConfig:
    """The write settings in force for one command: the recorded ones, then the run's over them."""

    conf: Mapping[str, str] = field(default_factory=dict)

    def get(self, key: str, default: str | None = None) -> str | None:
        v = self.conf.get(key)
        return default if v is None or str(v).strip() == "" else str(v).strip()

    def int(self, key: str, default: int) -> int:
        v = self.get(key)
        if v is None:
            return default
        try:
            return int(v)
        except ValueError:
            raise InvalidInputError(f"{key} is not a whole number: {v!r}") from None

    @property
    def concurrency_mode(self) -> str:
        mode = (self.get(K_CONCURRENCY_MODE) or SINGLE_WRITER).upper()
        if mode not in MODES:
            raise InvalidInputError(f"{K_CONCURRENCY_MODE}={mode}: not one of Hudi's modes {list(MODES)}")
        return mode

    @property
    def multi_writer(self) -> bool:
        """Java's ``supportsMultiWriter``: OCC and NBCC take the table lock around commits."""
        return self.concurrency_mode != SINGLE_WRITER

    @property
    def lock_provider(self) -> str | None:
        """The lock provider class, or None (no lock: single-writer tables without one)."""
        return self.get(K_LOCK_PROVIDER)

    @property
    def lazy_failed_writes(self) -> bool:
        """Whether failed writes are rolled back lazily (heartbeat expired) instead of eagerly.
        Java makes the policy LAZY for multi-writer tables whatever the key says (its write config
        builder sets it when the concurrency mode supports several writers)."""
        return self.multi_writer or (self.get(K_FAILED_WRITES) or "EAGER").upper() == "LAZY"


#: a table property → the write setting Java writers name it by
_TABLE_FIELDS = {"hoodie.table.recordkey.fields": "hoodie.datasource.write.recordkey.field",
                 "hoodie.table.partition.fields": "hoodie.datasource.write.partitionpath.field",
                 "hoodie.table.precombine.field": "hoodie.datasource.write.precombine.field"}


def table_settings(props: Mapping[str, str]) -> dict[str, str]:
    """The settings of a Hudi write config that come from the table itself (``hoodie.properties``):
    its name, record key, partition and ordering fields, as a Java writer of the table sets them.

    Hudi's write config needs them wherever the recorded settings ask for something built from the
    table's fields: the bucket index derives its hash field from the record key field, and building
    it without one fails inside Hudi (``NullPointerException`` on Hudi 0.14)."""
    out = {"hoodie.table.name": props.get("hoodie.table.name", "")}
    for k, setting in _TABLE_FIELDS.items():
        if props.get(k):  # "field" or, for the partition fields of a custom key generator, "field:type"
            out[setting] = ",".join(f.split(":", 1)[0] for f in props[k].split(","))
    return out


def write_config(recorded: Mapping[str, str] | None = None, run: Mapping[str, str] | None = None) -> WriteConfig:
    """The recorded settings with the run's (``run``, else ``$HUDI_ETC_HOODIE_CONF``) over them."""
    return WriteConfig({**dict(recorded or {}), **(from_env() if run is None else check_keys(run, "hoodie_conf"))})


__all__ = ["ENV_CONF", "WriteConfig", "write_config", "check_keys", "parse_pairs", "from_env", "FILE_SYSTEM",
           "ZOOKEEPER", "STORAGE_BASED", "IN_PROCESS", "SINGLE_WRITER", "OCC", "NBCC"]
