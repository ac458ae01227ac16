"""The archived timeline, read as the table's profile says (its ``archive_format``): version 6's
``.hoodie/archived`` log files (:mod:`.archive_v6`) or the LSM history of versions 8/9
(:mod:`.timeline_v2`)."""

from __future__ import annotations

from ..format import ARCHIVED_LOG, LSM_HISTORY
from .archive_v6 import archived_completed_times
from .timeline_v2 import read_lsm_history


def _lsm_archived_times(storage, config) -> frozenset[str]:
    if not config.history_dir:
        return frozenset()
    return frozenset(read_lsm_history(storage, config.history_dir))


#: archive format → the reader of the archived instants' times
_ARCHIVED_TIMES = {ARCHIVED_LOG: archived_completed_times, LSM_HISTORY: _lsm_archived_times}


def archived_times(storage, config) -> frozenset[str]:
    """The instants the archive of the table ``config`` describes holds."""
    return _ARCHIVED_TIMES[config.profile.archive_format](storage, config)
