"""The building blocks of the Avro models: schema pieces (fields, records, unions as Java's
generated schemas write them) and the checks of builder arguments."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import fastavro

NAMESPACE = "org.apache.hudi.avro.model"

_NO_DEFAULT = object()

# --------------------------------------------------------------------------- schema helpers


def _s() -> dict:
    return {"type": "string", "avro.java.string": "String"}


def _opt(t: Any) -> list:
    return ["null", t]


def _arr(items: Any) -> dict:
    return {"type": "array", "items": items}


def _map(values: Any) -> dict:
    # Java's generated schemas carry the string-type prop on the map (its keys are strings)
    return {"type": "map", "values": values, "avro.java.string": "String"}


def _f(name: str, type_: Any, default: Any = _NO_DEFAULT, doc: str | None = None) -> dict:
    f: dict = {"name": name, "type": type_}
    if doc:
        f["doc"] = doc
    if default is not _NO_DEFAULT:
        f["default"] = default
    return f


def _rec(name: str, fields: list, doc: str | None = None) -> dict:
    r: dict = {"type": "record", "name": name, "namespace": NAMESPACE, "fields": fields}
    if doc:
        r["doc"] = doc
    return r


def _version(default: int = 1) -> dict:
    return _f("version", ["int", "null"], default)


def _opt_str_field(name: str, doc: str | None = None) -> dict:
    return _f(name, _opt(_s()), None, doc)


def _opt_str_map_field(name: str) -> dict:
    return _f(name, _opt(_map(_s())), None)


# Named types. Each schema is parsed on its own, so every builder of a named type returns a fresh
# definition; inside one schema a named type is defined once and then referenced by full name.


def _parse(schema: dict) -> dict:
    return fastavro.parse_schema(schema)


# --------------------------------------------------------------------------- builder helpers


def _req_str(name: str, v: Any, *, empty_ok: bool = False) -> str:
    if not isinstance(v, str) or (not empty_ok and not v):
        raise ValueError(f"{name} must be a {'string' if empty_ok else 'non-empty string'}, got {v!r}")
    return v


def _opt_str(name: str, v: Any) -> str | None:
    if v is None:
        return None
    return _req_str(name, v, empty_ok=True)


def _str_list(name: str, v: Any) -> list[str]:
    if v is None:
        return []
    if isinstance(v, (str, bytes)) or not isinstance(v, Iterable):
        raise ValueError(f"{name} must be a list of strings, got {v!r}")
    out = list(v)
    for x in out:
        if not isinstance(x, str):
            raise ValueError(f"{name} must hold strings, got {x!r}")
    return out


def _bare_name(name: str, v: Any) -> str:
    s = _req_str(name, v)
    if "/" in s or "\\" in s or s in (".", ".."):
        raise ValueError(f"{name} must be a bare file name (plan version 2), got {s!r}")
    return s


def _string_map(name: str, m: Any) -> dict[str, str]:
    """map<string> for extraMetadata / strategy params: str keys; str/bool/int/float values."""
    if m is None:
        return {}
    if not isinstance(m, Mapping):
        raise ValueError(f"{name} must be a mapping, got {type(m).__name__}")
    out: dict[str, str] = {}
    for k, v in m.items():
        if not isinstance(k, str):
            raise ValueError(f"{name} keys must be strings, got {k!r}")
        if isinstance(v, bool):
            out[k] = "true" if v else "false"  # Java's Boolean.toString
        elif isinstance(v, (str, int, float)):
            out[k] = str(v)
        else:
            raise ValueError(f"{name}[{k!r}] must be a string, number or bool, got {v!r}")
    return out


def _number_map(name: str, m: Any, kinds: tuple[type, ...], what: str, cast) -> dict:
    """A string-keyed map whose values are numbers of ``kinds`` (never bool), each ``cast``."""
    if m is None:
        return {}
    if not isinstance(m, Mapping):
        raise ValueError(f"{name} must be a mapping, got {type(m).__name__}")
    out = {}
    for k, v in m.items():
        if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, kinds):
            raise ValueError(f"{name} must map strings to {what}, got {k!r}: {v!r}")
        out[k] = cast(v)
    return out


def _double_map(name: str, m: Any) -> dict[str, float]:
    return _number_map(name, m, (int, float), "numbers", float)


def _long_map(name: str, m: Any) -> dict[str, int]:
    return _number_map(name, m, (int,), "integers", int)


def _instant_info_rec(name: str, v: Any) -> dict:
    if isinstance(v, Mapping):
        ts, action = v.get("commitTime"), v.get("action")
    elif isinstance(v, (tuple, list)) and len(v) == 2:
        ts, action = v
    else:
        raise ValueError(f"{name} must be (instant, action), got {v!r}")
    return {"commitTime": _req_str(f"{name} instant", ts), "action": _req_str(f"{name} action", action)}
