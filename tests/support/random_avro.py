"""Random Avro schemas (every type, logical type and nesting) and records that fit them."""

from __future__ import annotations

import datetime as dt
import decimal
import random
import struct

import fastavro

UTC = dt.timezone.utc


def _random_schema(rng: random.Random, depth: int, names: list[int]):
    def name():
        names[0] += 1
        return f"n{names[0]}"

    choice = rng.randrange(18 if depth < 3 else 12)
    if choice < 8:
        return ["null", "boolean", "int", "long", "float", "double", "bytes", "string"][choice]
    if choice == 8:
        return {"type": "long", "logicalType": rng.choice(
            ["timestamp-micros", "timestamp-millis", "local-timestamp-micros", "local-timestamp-millis", "time-micros"])}
    if choice == 9:
        return {"type": "int", "logicalType": rng.choice(["date", "time-millis"])}
    if choice == 10:
        p = rng.randrange(1, 20)
        if rng.random() < 0.5:
            return {"type": "bytes", "logicalType": "decimal", "precision": p, "scale": rng.randrange(0, p + 1)}
        return {"type": "fixed", "name": name(), "size": 9, "logicalType": "decimal", "precision": p,
                "scale": rng.randrange(0, p + 1)}
    if choice == 11:
        return {"type": "string", "logicalType": "uuid"} if rng.random() < 0.5 else {
            "type": "enum", "name": name(), "symbols": [f"S{i}" for i in range(rng.randrange(1, 5))]}
    if choice == 12:
        return {"type": "fixed", "name": name(), "size": rng.randrange(0, 6)}
    if choice == 13:
        return {"type": "array", "items": _random_schema(rng, depth + 1, names)}
    if choice == 14:
        return {"type": "map", "values": _random_schema(rng, depth + 1, names)}
    if choice in (15, 16):
        branches, seen = ["null"], {"null"}
        for _ in range(rng.randrange(1, 4)):
            s = _random_schema(rng, depth + 1, names)
            if isinstance(s, list):
                continue  # no union directly inside a union
            key = s if isinstance(s, str) else s["name"] if "name" in s else s["type"]
            if key in seen:
                continue  # one branch per unnamed type
            if len(branches) > 1 and any(isinstance(b, dict) and "logicalType" in b for b in branches + [s]):
                continue  # fastavro's writer picks a branch by the value: keep logical types unambiguous
            seen.add(key)
            branches.append(s)
        return branches
    return {"type": "record", "name": name(), "fields": [
        {"name": f"f{i}", "type": _random_schema(rng, depth + 1, names)} for i in range(rng.randrange(0, 4))]}


def _random_value(rng: random.Random, s, named: dict):
    if isinstance(s, str) and s in named:
        s = named[s]
    if isinstance(s, list):
        return _random_value(rng, rng.choice(s), named)
    if isinstance(s, str):
        return {
            "null": lambda: None,
            "boolean": lambda: rng.random() < 0.5,
            "int": lambda: rng.randrange(-(2**31), 2**31),
            "long": lambda: rng.choice([0, -1, 63, -64, 64, rng.randrange(-(2**63), 2**63)]),
            "float": lambda: struct.unpack("<f", struct.pack("<f", rng.uniform(-1e6, 1e6)))[0],
            "double": lambda: rng.uniform(-1e300, 1e300),
            "bytes": lambda: rng.randbytes(rng.randrange(0, 200)),
            "string": lambda: "".join(rng.choice("aé€😀\x00z") for _ in range(rng.randrange(0, 70))),
        }[s]()
    t, lt = s["type"], s.get("logicalType")
    if isinstance(t, dict) or (isinstance(t, str) and t in named):
        return _random_value(rng, t, named)
    if lt in ("timestamp-micros", "timestamp-millis"):
        return dt.datetime(1900, 1, 1, tzinfo=UTC) + dt.timedelta(milliseconds=rng.randrange(0, 2**42))
    if lt in ("local-timestamp-micros", "local-timestamp-millis"):
        return dt.datetime(1900, 1, 1) + dt.timedelta(milliseconds=rng.randrange(0, 2**42))
    if lt in ("time-micros", "time-millis"):
        return dt.time(rng.randrange(24), rng.randrange(60), rng.randrange(60), rng.randrange(1000) * 1000)
    if lt == "date":
        return dt.date(1900, 1, 1) + dt.timedelta(days=rng.randrange(0, 100_000))
    if lt == "decimal":
        digits = rng.randrange(0, 10 ** min(s["precision"], 18))
        return decimal.Decimal(digits * rng.choice([1, -1])).scaleb(-s["scale"])
    if lt == "uuid":
        import uuid

        return uuid.UUID(int=rng.getrandbits(128))
    if t == "enum":
        return rng.choice(s["symbols"])
    if t == "fixed":
        return rng.randbytes(s["size"])
    if t == "array":
        return [_random_value(rng, s["items"], named) for _ in range(rng.choice([0, 1, 3, 70]))]
    if t == "map":
        return {f"k{i}": _random_value(rng, s["values"], named) for i in range(rng.choice([0, 1, 3, 70]))}
    if t == "record":
        return {f["name"]: _random_value(rng, f["type"], named) for f in s["fields"]}
    return _random_value(rng, t, named)


def random_schema_and_records(rng: random.Random, max_fields: int) -> tuple[dict, list]:
    """A random top-level record schema of 1 to ``max_fields - 1`` fields and 1 to 39 records."""
    names = [0]
    schema = {"type": "record", "name": "top", "namespace": "hoodie.t", "fields": [
        {"name": f"c{i}", "type": _random_schema(rng, 0, names)} for i in range(rng.randrange(1, max_fields))]}
    named: dict = {}
    fastavro.parse_schema(schema, named_schemas=named)
    named = {**named, **{k.split(".")[-1]: v for k, v in named.items()}}
    return schema, [_random_value(rng, schema, named) for _ in range(rng.randrange(1, 40))]
