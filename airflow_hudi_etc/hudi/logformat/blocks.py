"""Whole blocks as Hudi's writers frame them: data, delete and rollback command (§2.4)."""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from .avro_data import encode_avro_records
from .delete import DeleteRecord, encode_delete_records
from .framing import BlockType, encode_block
from .metadata import HeaderKey

#: value of the COMMAND_BLOCK_TYPE header for ROLLBACK_PREVIOUS_BLOCK (ordinal 0, as a string)
ROLLBACK_COMMAND = "0"


def encode_data_block(instant_time: str, schema_json: str, records: Iterable[Mapping[str, Any]]) -> bytes:
    """An AVRO_DATA block with header INSTANT_TIME, SCHEMA (in that order)."""
    content = encode_avro_records(schema_json, records)
    return encode_block(
        BlockType.AVRO_DATA, [(HeaderKey.INSTANT_TIME, instant_time), (HeaderKey.SCHEMA, schema_json)], content
    )


def encode_delete_block(instant_time: str, schema_json: str, delete_records: Iterable[DeleteRecord]) -> bytes:
    """A DELETE block with header INSTANT_TIME, SCHEMA (in that order), as Spark writes them."""
    content = encode_delete_records(delete_records)
    return encode_block(
        BlockType.DELETE, [(HeaderKey.INSTANT_TIME, instant_time), (HeaderKey.SCHEMA, schema_json)], content
    )


def encode_rollback_block(instant_time: str, target_instant_time: str) -> bytes:
    """A COMMAND block rolling back the blocks of ``target_instant_time`` (§2.4).

    Header order INSTANT_TIME, COMMAND_BLOCK_TYPE, TARGET_INSTANT_TIME, as in the rollback
    block Hudi 0.14/0.15 wrote in the ``v6_nonpartitioned_rollback`` fixture; empty content.
    """
    header = [
        (HeaderKey.INSTANT_TIME, instant_time),
        (HeaderKey.COMMAND_BLOCK_TYPE, ROLLBACK_COMMAND),
        (HeaderKey.TARGET_INSTANT_TIME, target_instant_time),
    ]
    return encode_block(BlockType.COMMAND, header, b"")
