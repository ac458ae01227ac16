"""Write stage 1, prepare: a batch read and validated, its record keys and partition paths made as
Java's key generator makes them, de-duplicated (the larger precombine value wins), and the
schema the deltacommit carries (the table's, widened by new input columns)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ..protocol.coexistence import KeyGen, key_generator
from . import partition_paths as pp
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


def _partition_values(table: pa.Table, field: str, hive_style: bool, urlencode: bool) -> pa.Array:
    """The folder name of each row's value of ``field``, as Java's key generator makes it
    (escaped when the table says urlencode); values Java or hudi-rs would not read back as
    written are refused (:func:`.partition_paths.value_problem`)."""
    col = table.column(field)
    if col.null_count:
        raise InvalidInputError(f"partition field {field!r} has null values")
    strs = pc.cast(col, pa.string())
    strs = strs.combine_chunks() if isinstance(strs, pa.ChunkedArray) else strs
    uniques = pc.unique(strs)
    values = uniques.to_pylist()
    bad = sorted((v, why) for v in values
                 if (why := pp.value_problem(v, field=field, hive_style=hive_style, urlencode=urlencode)))
    if bad:
        raise InvalidInputError(pp.refusal(f"partition field {field!r}: values", bad, urlencode=urlencode))
    folders = pa.array([pp.folder_name(field, v, hive_style=hive_style, urlencode=urlencode) for v in values],
                       pa.string())
    return pc.take(folders, pc.index_in(strs, value_set=uniques))


def _timestamp_partition_values(batch: pa.Table, kg: KeyGen, hive_style: bool, urlencode: bool) -> pa.Array:
    """TimestampBasedKeyGenerator's partition paths: the formatted time, escaped as a whole when
    the table says urlencode (a ``/`` of the output format is then ``%2F``: one folder), else one
    folder per ``/``-separated level; each level must be a folder name Java reads as written."""
    f = kg.partition_fields[0]
    vals = kg.timestamp.values(batch.column(f))
    if urlencode:
        vals = [pp.escape_path_name(v) for v in vals]
    if hive_style:
        vals = [f"{f}={v}" for v in vals]

    def problem(path: str) -> str | None:
        for seg in path.split("/"):
            why = pp.folder_problem(seg) or (None if urlencode else pp.java_problem(seg))
            if why:
                return why
        return None

    bad = sorted((v, why) for v in set(vals) if (why := problem(v)))
    if bad:
        raise InvalidInputError(pp.refusal("partition paths", bad, urlencode=urlencode))
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
        parts = _timestamp_partition_values(batch, kg, cfg.hive_style_partitioning, cfg.partition_urlencode)
    elif kg.partition_fields:
        cols = [_partition_values(batch, f, cfg.hive_style_partitioning, cfg.partition_urlencode)
                for f in kg.partition_fields]
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

