"""The format profiles: one :class:`FormatProfile` per supported Hudi table version
(:class:`V6Profile`, :class:`V8Profile`, :class:`V9Profile`), the one place that knows how the
versions differ. The lowest room of ``hudi/``: ``config.profile``, ``table.profile`` and
``timeline.profile`` hand out the profile of a table, :func:`profile_for` that of a version
number, :func:`profile_of_properties` that of a ``hoodie.properties``.

A new table version is one more profile class (a module here, and an entry in :data:`PROFILES`)
plus the codecs its profile names (see :mod:`.profile`).
"""

from __future__ import annotations

from typing import Mapping

from ..errors import InvalidPropertiesError, UnsupportedTableVersionError
from .keys import TABLE_VERSION_KEY
from .profile import ARCHIVED_LOG, AVRO_COMMITS, JSON_COMMITS, LSM_HISTORY, FormatProfile
from .v6 import V6Profile
from .v8 import V8Profile
from .v9 import V9Profile

#: table version → its profile, every supported version
PROFILES: Mapping[int, FormatProfile] = {p.table_version: p for p in (V6Profile(), V8Profile(), V9Profile())}
#: each profile by name (a profile class makes one instance: ``V6Profile() is V6``)
V6, V8, V9 = PROFILES[6], PROFILES[8], PROFILES[9]
#: what unsupported versions are, for the refusal
_UNSUPPORTED_HINTS = {7: " (the Hudi 0.16 bridge version)", 10: " (Hudi after 1.1, native log format)"}


def _spelled(items: list[str], last: str) -> str:
    """``a, b <last> c``."""
    return f"{', '.join(items[:-1])} {last} {items[-1]}" if len(items) > 1 else "".join(items)


def supported_versions_text(last: str = "or") -> str:
    """The supported versions as a sentence fragment: ``6, 8 or 9``."""
    return _spelled([str(v) for v in PROFILES], last)


def profile_for(version: int) -> FormatProfile:
    """The profile of table version ``version``; :class:`UnsupportedTableVersionError` for others."""
    profile = PROFILES.get(version) if isinstance(version, int) and not isinstance(version, bool) else None
    if profile is None:
        releases = _spelled([f"{p.table_version} ({p.release})" for p in PROFILES.values()], "and")
        raise UnsupportedTableVersionError(
            f"table version {version}{_UNSUPPORTED_HINTS.get(version, '')} is not supported: this release reads "
            f"Hudi table versions {releases}")
    return profile


def profile_of_properties(props: Mapping[str, str]) -> FormatProfile:
    """The profile ``hoodie.properties`` names (``hoodie.table.version``, a typed refusal when it is
    not a supported number), after the check of its timeline layout (:meth:`FormatProfile.check_layout`)."""
    raw = props.get(TABLE_VERSION_KEY)
    try:
        version = int(raw) if raw is not None else 0
    except ValueError:
        raise InvalidPropertiesError(f"{TABLE_VERSION_KEY} is not a number: {raw!r}") from None
    profile = profile_for(version)
    profile.check_layout(props)
    return profile


__all__ = ["FormatProfile", "V6Profile", "V8Profile", "V9Profile", "PROFILES", "V6", "V8", "V9", "profile_for",
           "profile_of_properties", "supported_versions_text", "JSON_COMMITS", "AVRO_COMMITS", "ARCHIVED_LOG",
           "LSM_HISTORY"]
