"""The crash points' old home: :mod:`airflow_hudi_etc.hudi.crash` (at the top of ``hudi/``, so
the commit path in ``concurrency/`` can name a point too)."""

from ..crash import (ALL, ENV, EXIT_CODE, HOOK_POINTS, PAUSE_ENV, PAUSED, POINTS, crashpoint, hook,  # noqa: F401
                     hooked)
