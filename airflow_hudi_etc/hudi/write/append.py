"""Write stage: updates and deletes, as a new log file of the key's file group (one data or
delete block), and what its write stat says beyond Hudi's fields."""

from __future__ import annotations

import json

import pyarrow as pa

from .. import logformat as lf
from ..index import ordering_facts
from ..config.schema import META_FIELDS, RECORD_KEY, arrow_schema_from_avro, conform
from ..timeline.commits import WriteStat
from .units import WriteUnit, _meta_columns


def encode_log_file(unit: WriteUnit, rows: pa.Table) -> bytes:
    if unit.kind == "delete":
        # as Spark's delete operation: natural order (Integer 0), the delete wins over earlier logs
        recs = [lf.natural_order_delete(k, unit.partition) for k in rows.column("__key").to_pylist()]
        return lf.encode_delete_block(unit.instant, unit.avro_schema_json, recs)
    avro_schema = json.loads(unit.avro_schema_json)
    schema = arrow_schema_from_avro(avro_schema)
    meta = _meta_columns(unit, rows.num_rows, unit.file_id)
    keys = rows.column("__key")
    meta[RECORD_KEY] = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    data = conform(rows, pa.schema([f for f in schema if f.name not in META_FIELDS]))
    out = pa.Table.from_arrays([meta[m] for m in META_FIELDS] + list(data.columns), schema=schema)
    return lf.encode_data_block(unit.instant, unit.avro_schema_json, out.to_pylist(maps_as_pydicts="strict"))



def complete_log_stat(unit: WriteUnit, rows: pa.Table, stat: WriteStat) -> WriteStat:
    """A log's write stat as its table version has it: where logs are named with their writing
    instant (8/9, spec §2.3) prevCommit is that instant and there is no base file; else (6), our
    ordering facts, which schedule's prefix check reads so that it scans this log only if it can
    matter."""
    if unit.profile.logs_named_by_writing_instant:
        return stat.updated(prevCommit=unit.instant, baseFile=None, logOffset=None)
    facts = _ordering_facts(unit, rows)
    return stat if facts is None else stat.updated(**{ordering_facts.STAT_KEY: facts.to_json()})


def _ordering_facts(unit: WriteUnit, rows: pa.Table) -> "ordering_facts.OrderingFacts | None":
    """A log's ordering facts (:mod:`.ordering_facts`): our deletes carry the natural order (no
    ordering value); updates the precombine field's range (None: not recordable)."""
    n = rows.num_rows
    if unit.kind == "delete":
        return ordering_facts.OrderingFacts(0, n, None, None)
    pre = unit.precombine_field
    if not pre or pre not in rows.column_names:
        return None
    ok, lo, hi = ordering_facts.column_range(rows.column(pre))
    return ordering_facts.OrderingFacts(n, 0, lo, hi) if ok else None

