"""Typed errors of the Hudi layer.

Every refusal the product makes is one of these, so callers (the CLI, the Airflow
operators) can tell "bad input" from "bug" and print a clear message. None of them is
raised after a table has been changed: checks run before anything is written.
"""

from __future__ import annotations


class HudiEtcError(Exception):
    """Base class of every error this package raises on purpose."""

    #: short machine-readable code, used by the CLI's JSON error output
    code = "error"


class TableNotFoundError(HudiEtcError):
    """No Hudi table at the path (``.hoodie/hoodie.properties`` is missing)."""

    code = "table_not_found"


class TableExistsError(HudiEtcError):
    """``init`` was asked to create a table where one already exists with other settings."""

    code = "table_exists"


class InvalidPropertiesError(HudiEtcError):
    """``hoodie.properties`` is unreadable, incomplete or fails its checksum."""

    code = "invalid_properties"


class UnsupportedTableVersionError(HudiEtcError):
    """The table's version is not one this release supports (6, 8, 9), or its layout does not match."""

    code = "unsupported_table_version"


class TableUpgradeIncompleteError(HudiEtcError):
    """The table is half upgraded or half downgraded between versions 6 and 8/9 (instant files in
    both timeline folders, legacy completed files in layout 2, an interrupted properties update):
    nothing is read or written until Java Hudi finishes (or redoes) the upgrade."""

    code = "table_upgrade_incomplete"


class UnsupportedTableTypeError(HudiEtcError):
    """The table is not Merge-On-Read (e.g. a Copy-On-Write table)."""

    code = "unsupported_table_type"


class CorruptLogBlockError(HudiEtcError):
    """A log block fails Hudi's integrity checks (bad magic, length mismatch, junk after it)."""

    code = "corrupt_log_block"


class TruncatedLogFileError(CorruptLogBlockError):
    """A log file ends in the middle of a block."""

    code = "truncated_log_file"


class UnknownBlockTypeError(HudiEtcError):
    """A log block carries a block-type ordinal this format version does not define."""

    code = "unknown_block_type"


class UnsupportedFeatureError(HudiEtcError):
    """Valid Hudi, but a feature this release does not implement (e.g. HFile data blocks)."""

    code = "unsupported_feature"


class InvalidTimelineError(HudiEtcError):
    """A timeline file cannot be parsed, or the timeline is in a state Hudi would reject."""

    code = "invalid_timeline"


class InstantExistsError(HudiEtcError):
    """A timeline file that must be created fresh already exists (another writer won)."""

    code = "conflict"


class TimelineChangedError(HudiEtcError, FileNotFoundError):
    """A timeline file the command listed is gone before it was read (Java's archiver moved it into
    the archive, a cleaner or rollback removed it): the table changed under the command. The API
    runs its reads, ``schedule``, ``execute`` and ``clean`` again from a fresh listing (``execute``
    reads every commit it needs before it writes); after the last attempt this ``conflict`` is
    raised, and a retry is the answer. (Also a ``FileNotFoundError``, so code that takes a
    vanished file in its stride still does.)"""

    code = "conflict"


class InvalidInputError(HudiEtcError):
    """The records given to a write are unusable (missing key, event-time field, bad types)."""

    code = "invalid_input"


class UnsafePathError(HudiEtcError):
    """A plan or commit names a path outside the table (``..``, absolute, other scheme)."""

    code = "unsafe_path"


class MetadataTablePresentError(HudiEtcError):
    """The table has a Hudi metadata table, which Java writers list files through: refused until
    it is dropped (``hudi-etc drop-metadata-table``)."""

    code = "metadata_table_present"


class MissingDataFileError(HudiEtcError):
    """A data file the timeline needs is gone (deleted, or a symlink whose target is gone)."""

    code = "missing_data_file"


class CorruptDataFileError(HudiEtcError):
    """A base file is not readable Parquet (truncated or damaged)."""

    code = "corrupt_data_file"


class JavaCompactionError(HudiEtcError):
    """Java Hudi compacts this table (inline or async compaction): our ``execute`` is not safe next
    to it (Java rolls back an inflight compaction, ours included, before executing it)."""

    code = "java_compaction"


class JavaExecutionPendingError(JavaCompactionError):
    """Java has not executed our plan within the time the Airflow task waits for it (a retry may
    see Java's commit: unlike the refusal, retryable)."""

    code = "java_execution_pending"


class ArgumentError(HudiEtcError):
    """The command line is wrong (unknown command or option, missing or malformed value)."""

    code = "invalid_arguments"


class ExecutorEnvironmentError(HudiEtcError):
    """Spark executors cannot import this package's dependencies (their Python lacks them):
    no retry fixes it; ship an environment (``hudi-etc pack-env``, ``spark.pyspark.python``)."""

    code = "executor_environment"


# ---------------------------------------------------------------- the JSON error envelope
def error_envelope(e: HudiEtcError) -> dict:
    """``{"error": {"code", "type", "message"}}``: how the CLI prints, and a Spark job's result
    file reports, a typed error (read back by :func:`error_from_envelope`)."""
    return {"error": {"code": e.code, "type": type(e).__name__, "message": str(e)}}


def error_from_envelope(err: dict) -> HudiEtcError:
    """The typed error an envelope's ``error`` object reports (its class when this package has
    one of that name, else :class:`HudiEtcError`), with the reported code."""
    cls = globals().get(str(err.get("type", "")))
    if not (isinstance(cls, type) and issubclass(cls, HudiEtcError)):
        cls = HudiEtcError
    e = cls(str(err.get("message", "")))
    if err.get("code"):
        e.code = err["code"]
    return e
