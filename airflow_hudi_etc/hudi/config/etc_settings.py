"""The table settings this product records, kept beside ``hoodie.properties``, not in it.

Spark SQL's ``CREATE TABLE ... USING hudi LOCATION '<path>'`` (how a catalog registers a table;
Java's ``CALL run_clean(table => ...)`` needs one) rewrites ``.hoodie/hoodie.properties`` with the
keys Hudi's table config knows only, on Hudi 0.14, 0.15 and 1.0 (measured with the real Java
processes): our ``hoodie.etc.*`` keys go, and on v6 ``hoodie.table.timeline.timezone`` too.
So the settings are kept in :data:`SETTINGS_PATH` under ``.hoodie/.aux/hudi-etc/`` (no Hudi
process writes there): one small JSON file ``{"version": 1, "settings": {key: value}}``, keys
among ``hoodie.etc.*`` only, created if absent and replaced as a whole (atomically) after that.

:func:`overlay` is what every reader sees (``TableConfig.raw``): ``hoodie.properties``, then the
recorded settings over its ``hoodie.etc.*`` keys. Legacy ``hoodie.etc.*`` keys that earlier
releases wrote into ``hoodie.properties`` are still read when the file has none of its own for
them; ``record`` (``hudi-etc configure``, table creation) copies them into the file first, so
one configure migrates a table (``hoodie.properties`` is not rewritten: its legacy keys stay
until Java drops them, and are then no longer needed).
"""

from __future__ import annotations

import json
from typing import Mapping

from ..errors import InstantExistsError, InvalidPropertiesError
from ..etc_keys import PREFIX

SETTINGS_PATH = ".hoodie/.aux/hudi-etc/settings.json"
VERSION = 1


def read_recorded(storage) -> dict[str, str]:
    """The recorded ``hoodie.etc.*`` settings ({} when the file is absent); a malformed file is a
    typed error naming it (it is never guessed at)."""
    try:
        text = storage.read_text(SETTINGS_PATH)
    except FileNotFoundError:
        return {}
    except UnicodeDecodeError:
        raise InvalidPropertiesError(f"{SETTINGS_PATH} is not text") from None
    try:
        doc = json.loads(text)
        settings = doc["settings"]
        if doc.get("version") != VERSION or not isinstance(settings, dict):
            raise ValueError(doc.get("version"))
    except (ValueError, KeyError, TypeError, AttributeError):
        raise InvalidPropertiesError(f"{SETTINGS_PATH} is not a settings file of version {VERSION} "
                                     "(restore it, or delete it and run hudi-etc configure again)") from None
    bad = sorted(k for k, v in settings.items() if not str(k).startswith(PREFIX) or not isinstance(v, str))
    if bad:
        raise InvalidPropertiesError(f"{SETTINGS_PATH}: {bad} are not {PREFIX}* keys with string values")
    return dict(settings)


def legacy(props: Mapping[str, str]) -> dict[str, str]:
    """The ``hoodie.etc.*`` keys of ``hoodie.properties`` (what earlier releases recorded there)."""
    return {k: v for k, v in props.items() if k.startswith(PREFIX)}


def overlay(props: Mapping[str, str], recorded: Mapping[str, str]) -> dict[str, str]:
    """``props`` with the recorded settings over its ``hoodie.etc.*`` keys (they win)."""
    return {**props, **recorded}


def record(storage, props: Mapping[str, str], updates: Mapping[str, str]) -> dict[str, str]:
    """Record ``updates`` (``hoodie.etc.*`` keys), migrating the legacy keys of ``props`` (the
    table's properties as read: ``hoodie.properties``, or its ``TableConfig.raw``) that the file lacks. Returns the recorded settings. Writes
    nothing when nothing changes; a concurrent first record of the same table is retried once."""
    bad = sorted(k for k in updates if not k.startswith(PREFIX))
    if bad:
        raise InvalidPropertiesError(f"not {PREFIX}* settings: {bad}")
    for attempt in (1, 2):
        current = read_recorded(storage)
        new = {**legacy(props), **current, **{k: str(v) for k, v in updates.items()}}
        if new == current and storage.exists(SETTINGS_PATH):
            return current
        data = json.dumps({"version": VERSION, "settings": dict(sorted(new.items()))}, indent=1).encode()
        if storage.exists(SETTINGS_PATH):
            storage.write_atomic(SETTINGS_PATH, data)
            return new
        try:
            storage.create_if_absent(SETTINGS_PATH, data)
            return new
        except InstantExistsError:
            if attempt == 2:
                raise
    return new  # pragma: no cover
