"""Which errors a retry cannot fix: the one list the operators and the sensor use.

An error whose ``code`` is in :data:`NON_RETRYABLE_CODES` (raised in the task, or reported back by
a Spark job as ``{"error": {"code", ...}}``) fails the task at once with
``AirflowFailException`` (no retries, the typed error as its ``__cause__``). Everything else —
``conflict`` (a concurrent writer or executor), ``invalid_timeline``, a lost executor, a dead
spark-submit — is raised as it is, so the task's ``retries`` apply.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

#: error codes (``HudiEtcError.code``) that no retry can fix
NON_RETRYABLE_CODES = frozenset({
    "table_not_found",
    "invalid_input",
    "unsafe_path",
    "unsupported_feature",
    "unsupported_table_version",
    "table_upgrade_incomplete",
    "unsupported_table_type",
    "invalid_properties",
    "metadata_table_present",
    "executor_environment",
    # our execute refused where Java compacts or may (a person records java-compaction or changes Java's
    # settings first); Java's not having executed a plan yet is java_execution_pending: retryable
    "java_compaction",
})

F = TypeVar("F", bound=Callable[..., Any])


def is_retryable(exc: BaseException) -> bool:
    """False for our errors whose code is in :data:`NON_RETRYABLE_CODES`; True otherwise."""
    from .hudi.errors import HudiEtcError

    return not (isinstance(exc, HudiEtcError) and getattr(exc, "code", None) in NON_RETRYABLE_CODES)


def fail_fast_error(exc: BaseException):
    """The ``AirflowFailException`` a non-retryable error becomes (None for a retryable one)."""
    if is_retryable(exc):
        return None
    from airflow.sdk.exceptions import AirflowFailException

    return AirflowFailException(f"{exc.code}: {exc} ({type(exc).__name__}; not retried: a retry cannot fix it)")


def fail_fast(func: F) -> F:
    """Decorator for ``execute``/``poke``/``execute_complete``: non-retryable errors fail the task."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except Exception as e:
            fail = fail_fast_error(e)
            if fail is None:
                raise
            raise fail from e

    return wrapper  # type: ignore[return-value]
