"""The table settings this product records, kept beside ``hoodie.properties``, not in it.

Spark SQL's ``CREATE TABLE ... USING hudi LOCATION '<path>'`` (how a catalog registers a table;
Java's ``CALL run_clean(table => ...)`` needs one) rewrites ``.hoodie/hoodie.properties`` with the
keys Hudi's table config knows only, on Hudi 0.14, 0.15 and 1.0 (measured with the real Java
processes): our ``hoodie.etc.*`` keys go, and on v6 ``hoodie.table.timeline.timezone`` too.
So the settings are kept in :data:`SETTINGS_PATH` under ``.hoodie/.aux/hudi-etc/`` (no Hudi
process writes there): one small JSON file ``{"version": 1, "settings": {key: value}}``, keys
among ``hoodie.etc.*`` only, created if absent and replaced as a whole (atomically) after that.
The same file holds, under ``"hoodie"``, the Hudi write settings of the table's writers that our
commands must share with them (their lock, their concurrency mode: :mod:`..concurrency.write_config`),
recorded by :func:`record_hoodie`; a file without that object has none.

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
    return _read(storage)[0]


def read_hoodie(storage) -> dict[str, str]:
    """The recorded Hudi write settings (the file's ``"hoodie"`` object; {} when there is none)."""
    return _read(storage)[1]


def _read(storage) -> tuple[dict[str, str], dict[str, str]]:
    try:
        text = storage.read_text(SETTINGS_PATH)
    except FileNotFoundError:
        return {}, {}
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
    hoodie = doc.get("hoodie", {})
    if not isinstance(hoodie, dict) or any(not isinstance(v, str) or str(k).startswith(PREFIX)
                                           for k, v in hoodie.items()):
        raise InvalidPropertiesError(f"{SETTINGS_PATH}: its \"hoodie\" object must map Hudi write settings "
                                     "to string values")
    return dict(settings), dict(hoodie)


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
    return _update(storage, lambda cur, hoodie: ({**legacy(props), **cur, **{k: str(v) for k, v in updates.items()}},
                                                   hoodie))[0]


def record_hoodie(storage, updates: Mapping[str, str], remove=()) -> dict[str, str]:
    """Record Hudi write settings (keys checked by the caller), dropping the keys in ``remove``;
    returns them all after the change. Writes nothing when nothing changes."""
    gone = set(remove)
    return _update(storage, lambda cur, hoodie: (cur, {**{k: v for k, v in hoodie.items() if k not in gone},
                                                       **{k: str(v) for k, v in updates.items()}}))[1]


def _update(storage, change) -> tuple[dict[str, str], dict[str, str]]:
    """Apply ``change(settings, hoodie) -> (settings, hoodie)`` to the file: replaced atomically,
    created if absent (a concurrent first creation is retried once), untouched if nothing changes."""
    for attempt in (1, 2):
        cur, hoodie = _read(storage)
        new, new_hoodie = change(cur, hoodie)
        if (new, new_hoodie) == (cur, hoodie) and storage.exists(SETTINGS_PATH):
            return cur, hoodie
        doc = {"version": VERSION, "settings": dict(sorted(new.items()))}
        if new_hoodie:
            doc["hoodie"] = dict(sorted(new_hoodie.items()))
        data = json.dumps(doc, indent=1).encode()
        if storage.exists(SETTINGS_PATH):
            storage.write_atomic(SETTINGS_PATH, data)
            return new, new_hoodie
        try:
            storage.create_if_absent(SETTINGS_PATH, data)
            return new, new_hoodie
        except InstantExistsError:
            if attempt == 2:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
