"""Write stage 1, prepare: a batch read and validated, its record keys and partition paths made as
Java's key generator makes them, de-duplicated (the larger precombine value wins), and the
schema the deltacommit carries (the table's, widened by new input columns)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..services.coexistence import KeyGen, key_generator
from ..errors import InvalidInputError
from ..config.schema import (
    META_FIELDS,
    arrow_schema_from_avro,
    avro_schema_from_arrow,
    check_avro_names,
    event_time_millis,
    normalize_input,
    with_meta_fields,
)
from ..table.hudi_table import HudiTable


def read_input(path: str) -> pa.Table:
    """Read a batch from ``.parquet`` or ``.jsonl``/``.json`` (newline-delimited)."""
    import pyarrow.json as pj

    low = path.lower()
    try:
        if low.endswith(".parquet"):
            return pq.read_table(path)
        if low.endswith(".jsonl") or low.endswith(".json") or low.endswith(".ndjson"):
            return pj.read_json(path)
    except FileNotFoundError:
        raise InvalidInputError(f"input file not found: {path}") from None
    except (pa.ArrowInvalid, OSError) as e:
        raise InvalidInputError(f"cannot read {path}: {e}") from None
    raise InvalidInputError(f"input {path}: use a .parquet or .jsonl file")


def _partition_values(table: pa.Table, field: str, hive_style: bool) -> pa.Array:
    col = table.column(field)
    if col.null_count:
        raise InvalidInputError(f"partition field {field!r} has null values")
    strs = pc.cast(col, pa.string())
    if hive_style:
        strs = pc.binary_join_element_wise(pa.scalar(f"{field}="), strs, "")
    # a value is one folder name: no separator, not "." / ".." (names merely holding dots, e.g.
    # "v1..2", are fine), not hidden (Hudi's partition listing skips names starting with "."),
    # nothing stock readers cannot read (:func:`_unreadable_folder`)
    prefix = len(f"{field}=") if hive_style else 0

    def unusable(folder: str) -> bool:
        value = folder[prefix:]
        return (any(c in value for c in "/\\") or folder.startswith(".") or value in (".", "..")
                or _unreadable_folder(folder))

    bad = sorted(v for v in set(strs.to_pylist()) if unusable(v))
    if bad:
        raise InvalidInputError(f"partition values {bad[:3]} are not usable folder names (no '/', '\\', "
                                f"leading '.', control characters; at most {MAX_FOLDER_BYTES} bytes)")
    return strs.combine_chunks() if isinstance(strs, pa.ChunkedArray) else strs


#: the longest folder name (UTF-8 bytes) most filesystems take (ext4, XFS, APFS, NTFS: 255)
MAX_FOLDER_BYTES = 255


def _unreadable_folder(folder: str) -> bool:
    """A partition folder name stock readers cannot read: a control character (U+0000..U+001F,
    DEL U+007F; hudi-rs's object-store paths refuse them and then fail on the whole table), or
    longer than :data:`MAX_FOLDER_BYTES` (the filesystem refuses it)."""
    return any(c < " " or c == "\x7f" for c in folder) or len(folder.encode("utf-8", "surrogatepass")) > MAX_FOLDER_BYTES


def _timestamp_partition_values(batch: pa.Table, kg: KeyGen, hive_style: bool) -> pa.Array:
    """TimestampBasedKeyGenerator's partition paths (the output format may hold ``/``: one
    folder per level); each level must be a usable folder name."""
    f = kg.partition_fields[0]
    vals = kg.timestamp.values(batch.column(f))
    if hive_style:
        vals = [f"{f}={v}" for v in vals]
    bad = sorted({v for v in vals if any(not seg or seg.startswith(".") or _unreadable_folder(seg) for seg in v.split("/"))})
    if bad:
        raise InvalidInputError(f"partition paths {bad[:3]} are not usable folder names")
    return pa.array(vals, pa.string())


def _record_keys(batch: pa.Table, kg: KeyGen) -> pa.Array:
    """``_hoodie_record_key`` as Java's key generator makes it: the value for one key field,
    ``f1:v1,f2:v2`` for a complex key (an empty value is ``__empty__``, as KeyGenUtils writes it)."""
    if not kg.composite_key:
        return pc.cast(batch.column(kg.key_fields[0]), pa.string())
    parts = []
    for f in kg.key_fields:
        v = pc.cast(batch.column(f), pa.string())
        v = pc.if_else(pc.equal(v, ""), pa.scalar("__empty__"), v)
        parts.append(pc.binary_join_element_wise(pa.scalar(f + ":"), v, ""))
    out = pc.binary_join_element_wise(*parts, ",")
    return out.combine_chunks() if isinstance(out, pa.ChunkedArray) else out


def prepare_batch(table: HudiTable, batch: pa.Table, operation: str) -> pa.Table:
    """Validate a batch and return it de-duplicated with ``_hoodie_record_key`` / partition columns."""
    cfg = table.config
    kg = key_generator(cfg)  # refuses key generators whose keys we would make differently
    for key in kg.key_fields:
        if key not in batch.column_names:
            raise InvalidInputError(f"input lacks the record key field {key!r}")
        if batch.column(key).null_count:
            raise InvalidInputError(f"record key field {key!r} has null values")
    if operation == "upsert":
        for what, f in (("precombine", cfg.precombine_field), ("event-time", cfg.event_time_field)):
            if f and f not in batch.column_names:
                raise InvalidInputError(f"input lacks the {what} field {f!r}")
        if cfg.precombine_field and batch.column(cfg.precombine_field).null_count:
            raise InvalidInputError(f"precombine field {cfg.precombine_field!r} has null values")
    for pf in cfg.partition_fields:
        if pf not in batch.column_names:
            raise InvalidInputError(f"input lacks the partition field {pf!r}")
    bad = [c for c in batch.column_names if c in META_FIELDS]
    if bad:
        batch = batch.drop_columns(bad)
    check_avro_names(batch.schema)
    batch = normalize_input(batch)
    if cfg.event_time_field and cfg.event_time_field in batch.column_names:
        event_time_millis(batch.column(cfg.event_time_field), cfg.event_time_field)  # validates
    keys = _record_keys(batch, kg)
    if kg.timestamp is not None:
        parts = _timestamp_partition_values(batch, kg, cfg.hive_style_partitioning)
    elif kg.partition_fields:
        cols = [_partition_values(batch, f, cfg.hive_style_partitioning) for f in kg.partition_fields]
        parts = cols[0] if len(cols) == 1 else pc.binary_join_element_wise(*cols, "/")
    else:
        parts = pa.array([""] * batch.num_rows, pa.string())
    batch = batch.append_column("__key", keys).append_column("__part", parts)
    batch = batch.append_column("__row", pa.array(range(batch.num_rows), pa.int64()))
    # de-duplicate per key: larger precombine wins, the later row on ties
    sort_keys = [("__key", "ascending")]
    if cfg.precombine_field and cfg.precombine_field in batch.column_names:
        sort_keys.append((cfg.precombine_field, "descending"))
    sort_keys.append(("__row", "descending"))
    batch = batch.sort_by(sort_keys)
    k = batch.column("__key").to_numpy(zero_copy_only=False)
    import numpy as np

    first = np.ones(len(k), dtype=bool)
    if len(k) > 1:
        first[1:] = k[1:] != k[:-1]
    return batch.filter(pa.array(first)).drop_columns(["__row"])



def batch_schemas(table: HudiTable, prepared: pa.Table, operation: str) -> tuple[dict, str, str]:
    """The data schema of the deltacommit (the table's, widened by the batch's new columns on an
    upsert; the batch's own on a table without data yet), and the JSON of it with and without the
    meta fields. Input columns whose type the table cannot take are refused."""
    cfg = table.config
    data_cols = [c for c in prepared.column_names if c not in ("__key", "__part")]
    if table.timeline.completed_writes or cfg.create_schema:
        existing = table.avro_schema
        have = {f["name"] for f in existing["fields"]}
        new_fields = [c for c in data_cols if c not in have]
        if new_fields and operation == "upsert":
            extra = avro_schema_from_arrow(prepared.select(new_fields).schema, cfg.name)["fields"]
            existing = {**existing, "fields": existing["fields"] + extra}
        data_schema = existing
        _check_types(prepared, arrow_schema_from_avro(existing))
    else:
        if operation == "delete":
            raise InvalidInputError("cannot delete from a table that has no data yet")
        data_schema = avro_schema_from_arrow(prepared.select(data_cols).schema, cfg.name)
    schema_json = json.dumps(with_meta_fields(data_schema), separators=(",", ":"))
    data_schema_json = json.dumps(data_schema, separators=(",", ":"))
    return data_schema, schema_json, data_schema_json


_WIDENINGS = {(pa.int32(), pa.int64()), (pa.float32(), pa.float64()), (pa.int32(), pa.float64()),
              (pa.int64(), pa.float64()), (pa.int32(), pa.float32())}


def _check_types(batch: pa.Table, schema: pa.Schema) -> None:
    """Refuse input columns whose type differs from the table's (widening ints/floats is fine)."""
    for f in schema:
        if f.name not in batch.column_names:
            continue
        got = batch.schema.field(f.name).type
        if got == f.type or pa.types.is_null(got) or (got, f.type) in _WIDENINGS:
            continue
        col = batch.column(f.name)
        if col.null_count == len(col):  # all null (JSON's null column arrives as string): fits any type
            continue
        if pa.types.is_timestamp(got) and pa.types.is_timestamp(f.type):
            continue
        if pa.types.is_integer(got) and pa.types.is_integer(f.type):
            try:  # a safe cast, e.g. JSON's int64 into an int32 column, when every value fits
                batch.column(f.name).cast(f.type)
                continue
            except pa.ArrowInvalid:
                pass
        raise InvalidInputError(f"column {f.name!r} is {got} in the input but {f.type} in the table")

