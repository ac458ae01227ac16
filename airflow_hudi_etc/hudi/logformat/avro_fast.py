"""Fast path of AVRO_DATA decoding: a decoder generated per writer schema.

The plain reference is :func:`.avro_data.decode_avro_records_reference` (fastavro per record);
tests compare the two on random schemas and records, and on corrupt bytes.
"""

from __future__ import annotations

import datetime as _dt
import json
import struct
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import fastavro
from fastavro.read import LOGICAL_READERS as _FASTAVRO_LOGICAL_READERS

from ..errors import CorruptLogBlockError
from .cursor import _I32

# --------------------------------------------------------------------------- fast Avro decoder
#
# A schema is compiled once into Python source: one function per named record, everything
# else inlined, reading straight from the content ``bytes`` with an integer cursor instead of
# fastavro's per-byte file reads. It only has to be right on valid data: on any exception the
# caller decodes the block again with fastavro (except for schemas with arrays of zero-byte
# items, see _FastDecoder). Logical types are converted with fastavro's own converters or the
# same formulas, so values are identical to fastavro's; tests compare the two on random schemas.

_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})


class _Unsupported(Exception):
    """The schema uses something the generator does not handle: use fastavro."""


class _DefiniteCorruption(CorruptLogBlockError):
    """Bytes no valid datum can have (e.g. a 2**60-item array); no fastavro retry."""


#: logical types converted inline by the generated decoder, with the formulas of fastavro's
#: own readers (``fastavro/_logical_readers_py.py``); the others call fastavro's converter
_INLINE_LOGICAL = {
    "long-timestamp-micros": "_EPOCH + _td(0, 0, {0})",
    "long-timestamp-millis": "_EPOCH + _td(0, 0, {0} * 1000)",
    "long-local-timestamp-micros": "_EPOCH_NAIVE + _td(0, 0, {0})",
    "long-local-timestamp-millis": "_EPOCH_NAIVE + _td(0, 0, {0} * 1000)",
    "int-date": "_fromordinal({0} + 719163)",
}


_ZERO_SIZE_ITEMS_LIMIT = 10_000_000


class _AvroDecoderGenerator:
    def __init__(self, named: dict[str, Any]):
        self.named = named
        self.ns: dict[str, Any] = {
            "_EPOCH": _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc),
            "_EPOCH_NAIVE": _dt.datetime(1970, 1, 1),
            "_td": _dt.timedelta,
            "_fromordinal": _dt.date.fromordinal,
            "_uf": struct.Struct("<f").unpack_from,
            "_ud": struct.Struct("<d").unpack_from,
            "_ui32": _I32.unpack_from,
            "_Definite": _DefiniteCorruption,
            "_ZLIMIT": _ZERO_SIZE_ITEMS_LIMIT,
        }
        self.record_funcs: dict[str, str] = {}
        self.functions: list[str] = []
        self.counter = 0
        self.zero_size_arrays = False

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def const(self, obj: Any, prefix: str = "_k") -> str:
        name = self.fresh(prefix)
        self.ns[name] = obj
        return name

    # -- schema helpers
    def resolve(self, s: Any) -> Any:
        if isinstance(s, str) and s not in _PRIMITIVES:
            if s not in self.named:
                raise _Unsupported(f"unknown named type {s}")
            return self.named[s]
        return s

    def min_size(self, s: Any, seen: frozenset = frozenset()) -> int:
        """Fewest bytes a datum of ``s`` can take (0 or at least 1)."""
        s = self.resolve(s)
        if isinstance(s, str):
            return 0 if s == "null" else 1
        if isinstance(s, list):
            return 1
        t = s["type"]
        if t in ("record", "error"):
            name = s.get("name")
            if name in seen:
                return 1  # a recursive record needs a union to end, which takes a byte
            return min(1, sum(self.min_size(f["type"], seen | {name}) for f in s["fields"]))
        if t == "fixed":
            return min(1, int(s["size"]))
        if t == "null":
            return 0
        return 1

    # -- emitters: append source lines that decode one datum of ``s`` into variable ``t``
    def emit_long(self, t: str, out: list[str], p: str) -> None:
        """Zig-zag varint; values needing more than 64 bits raise (fastavro would wrap them)."""
        out += [
            f"{p}_b = buf[pos]",
            f"{p}pos += 1",
            f"{p}if _b < 128:",
            f"{p}    {t} = (_b >> 1) ^ -(_b & 1)",
            f"{p}else:",
            f"{p}    _x = _b & 127",
            f"{p}    _s = 7",
            f"{p}    while True:",
            f"{p}        _b = buf[pos]",
            f"{p}        pos += 1",
            f"{p}        _x |= (_b & 127) << _s",
            f"{p}        if _b < 128:",
            f"{p}            break",
            f"{p}        _s += 7",
            f"{p}    if _x >> 64:",
            f"{p}        raise ValueError('varint overflows 64 bits')",
            f"{p}    {t} = (_x >> 1) ^ -(_x & 1)",
        ]

    def emit_primitive(self, name: str, t: str, out: list[str], p: str) -> None:
        if name == "null":
            out.append(f"{p}{t} = None")
        elif name == "boolean":
            out += [f"{p}{t} = buf[pos] != 0", f"{p}pos += 1"]
        elif name in ("int", "long"):
            self.emit_long(t, out, p)
        elif name == "float":
            out += [f"{p}{t} = _uf(buf, pos)[0]", f"{p}pos += 4"]
        elif name == "double":
            out += [f"{p}{t} = _ud(buf, pos)[0]", f"{p}pos += 8"]
        elif name in ("bytes", "string"):
            self.emit_long("_n", out, p)
            out += [f"{p}if _n < 0:", f"{p}    raise ValueError('negative length')"]
            if name == "bytes":
                out.append(f"{p}{t} = buf[pos:pos + _n]")
            else:
                out.append(f"{p}{t} = buf[pos:pos + _n].decode()")
            out.append(f"{p}pos += _n")
        else:  # pragma: no cover - guarded by _PRIMITIVES
            raise _Unsupported(name)

    def emit(self, s: Any, t: str, out: list[str], p: str) -> None:
        if isinstance(s, str):
            if s in _PRIMITIVES:
                return self.emit_primitive(s, t, out, p)
            return self.emit(self.resolve(s), t, out, p)
        if isinstance(s, list):
            return self.emit_union(s, t, out, p)
        if not isinstance(s, dict):
            raise _Unsupported(repr(s))
        typ = s.get("type")
        if typ in ("record", "error"):
            fn = self.record_function(s)
            out.append(f"{p}{t}, pos = {fn}(buf, pos)")
        elif typ == "enum":
            syms = self.const(tuple(s["symbols"]), "_syms")
            self.emit_long("_e", out, p)
            out += [
                f"{p}if _e < 0 or _e >= {len(s['symbols'])}:",
                f"{p}    raise ValueError('enum index')",
                f"{p}{t} = {syms}[_e]",
            ]
        elif typ == "fixed":
            size = int(s["size"])
            out += [f"{p}{t} = buf[pos:pos + {size}]", f"{p}pos += {size}"]
        elif typ == "array":
            self.emit_block_loop(s, t, out, p, is_map=False)
        elif typ == "map":
            self.emit_block_loop(s, t, out, p, is_map=True)
        elif isinstance(typ, str) and typ in _PRIMITIVES:
            self.emit_primitive(typ, t, out, p)
        else:
            raise _Unsupported(f"type {typ!r}")
        logical = s.get("logicalType")
        if logical and isinstance(typ, str):
            key = f"{typ}-{logical}"
            inline = _INLINE_LOGICAL.get(key)
            if inline is not None:  # the same formula as fastavro's converter, without the call
                out.append(f"{p}{t} = {inline.format(t)}")
            else:
                fn = _FASTAVRO_LOGICAL_READERS.get(key)
                if fn is not None:
                    f_name = self.const(fn, "_lr")
                    s_name = self.const(s, "_ls")
                    out.append(f"{p}{t} = {f_name}({t}, {s_name}, None)")

    def emit_union(self, branches: list, t: str, out: list[str], p: str) -> None:
        if not branches or len(branches) > 64:  # index 64+ takes two varint bytes
            raise _Unsupported("union size")
        out += [f"{p}_b = buf[pos]", f"{p}pos += 1"]
        for i, br in enumerate(branches):
            out.append(f"{p}{'if' if i == 0 else 'elif'} _b == {2 * i}:")
            self.emit(br, t, out, p + "    ")
        out += [f"{p}else:", f"{p}    raise ValueError('union index')"]

    def emit_block_loop(self, s: dict, t: str, out: list[str], p: str, *, is_map: bool) -> None:
        item_schema = s["values"] if is_map else s["items"]
        c = self.fresh("_c")
        item = self.fresh("_i")
        zero = not is_map and self.min_size(item_schema) == 0
        self.zero_size_arrays |= zero
        out.append(f"{p}{t} = {{}}" if is_map else f"{p}{t} = []")
        out.append(f"{p}while True:")
        q = p + "    "
        self.emit_long(c, out, q)
        out += [f"{q}if {c} == 0:", f"{q}    break", f"{q}if {c} < 0:", f"{q}    {c} = -{c}"]
        self.emit_long("_skip", out, q + "    ")
        if zero:  # items of no bytes: only a fixed limit bounds the loop
            out += [
                f"{q}if {c} > _ZLIMIT:",
                f"{q}    raise _Definite('Avro data block: an array of %d zero-byte items' % {c})",
            ]
        else:  # every item takes a byte or more
            out += [
                f"{q}if {c} > len(buf) - pos:",
                f"{q}    raise _Definite('Avro data block: %d items cannot fit in the bytes left' % {c})",
            ]
        out.append(f"{q}for _ in range({c}):")
        r = q + "    "
        if is_map:
            key = self.fresh("_mk")
            self.emit_primitive("string", key, out, r)
            self.emit(item_schema, item, out, r)
            out.append(f"{r}{t}[{key}] = {item}")
        else:
            self.emit(item_schema, item, out, r)
            out.append(f"{r}{t}.append({item})")

    def record_body(self, s: dict, out: list[str], p: str) -> str:
        """Decode the fields of record ``s`` into locals; returns the dict expression."""
        names = []
        for f in s["fields"]:
            v = self.fresh("_f")
            self.emit(f["type"], v, out, p)
            names.append(f"{f['name']!r}: {v}")
        return "{" + ", ".join(names) + "}"

    def record_function(self, s: dict) -> str:
        name = s["name"]
        fn = self.record_funcs.get(name)
        if fn is not None:
            return fn
        fn = self.record_funcs[name] = self.fresh("_rec")
        out = [f"def {fn}(buf, pos):"]
        expr = self.record_body(s, out, "    ")
        out.append(f"    return {expr}, pos")
        self.functions.append("\n".join(out))
        return fn

    def driver(self, top: Any) -> str:
        out = [
            "def _decode_all(buf, count, n):",
            "    out = []",
            "    append = out.append",
            "    pos = 8",
            "    for _ in range(count):",
            "        if n - pos < 4:",
            "            raise ValueError('record length')",
            "        _ln = _ui32(buf, pos)[0]",
            "        pos += 4",
            "        _end = pos + _ln",
            "        if _ln < 0 or _end > n:",
            "            raise ValueError('record length')",
        ]
        top_r = self.resolve(top)
        if isinstance(top_r, dict) and top_r.get("type") in ("record", "error") and "logicalType" not in top_r:
            self.record_function(top_r)  # recursive references need the function too
            expr = self.record_body(top_r, out, "        ")
            out.append(f"        _v = {expr}")
        else:
            self.emit(top, "_v", out, "        ")
        out += [
            "        if pos > _end:",
            "            raise ValueError('record overruns its length')",
            "        append(_v)",
            "        pos = _end",
            "    return out",
        ]
        return "\n".join(out)


@dataclass(frozen=True)
class _FastDecoder:
    #: ``decode(content, count, len(content)) -> records``
    decode: Any
    #: The schema has arrays whose items can take zero bytes (null, empty records, fixed(0)).
    #: On such an array with a hostile item count fastavro loops and allocates without bound,
    #: so for these schemas the generated decoder's refusals are final and fastavro never sees
    #: bytes it refused. (Spark/Hudi schemas never have such arrays.)
    zero_size_arrays: bool

    def run_final(self, content: bytes, count: int) -> list[dict]:
        try:
            return self.decode(content, count, len(content))
        except _DefiniteCorruption as e:
            raise CorruptLogBlockError(str(e)) from None
        except Exception as e:  # noqa: BLE001 - generated code raises IndexError, ValueError, ...
            raise CorruptLogBlockError(f"Avro data block does not decode: {type(e).__name__}: {e}") from None


@lru_cache(maxsize=128)
def fast_decoder(schema_json: str) -> _FastDecoder | None:
    """Generated decoder for ``schema_json``, or None when only fastavro can do it."""
    named: dict[str, Any] = {}
    try:
        parsed = fastavro.parse_schema(json.loads(schema_json), named_schemas=named)
    except Exception:  # already reported by _parsed_schema
        return None
    gen = _AvroDecoderGenerator(named)
    try:
        driver = gen.driver(parsed)
        source = "\n\n".join(gen.functions + [driver]) + "\n"
        # deeply nested arrays can exceed CPython's limits on nested blocks and indentation
        code = compile(source, f"<hudi avro decoder {hash(schema_json) & 0xFFFFFFFF:08x}>", "exec")
    except (_Unsupported, KeyError, TypeError, ValueError, SyntaxError, RecursionError, MemoryError):
        return None
    exec(code, gen.ns)  # noqa: S102 - source generated above from the schema's structure only
    return _FastDecoder(gen.ns["_decode_all"], gen.zero_size_arrays)
