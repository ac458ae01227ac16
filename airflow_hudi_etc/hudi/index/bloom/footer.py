"""A filter in a base file's parquet footer: the entries Hudi writes and reads, the type codes."""

from __future__ import annotations

from typing import Mapping

from ...errors import InvalidInputError, UnsupportedFeatureError
from .dynamic import DynamicBloomFilter
from .filters import BloomFilter, SimpleBloomFilter
from .params import (BLOOM_FILTER_FOOTER_KEY, BLOOM_FILTER_TYPE_CODE_FOOTER_KEY, DEFAULT_FPP, DEFAULT_MAX_ENTRIES,
                     DEFAULT_NUM_ENTRIES, DEFAULT_TYPE_CODE, DYNAMIC_V0, MAX_RECORD_KEY_FOOTER_KEY,
                     MIN_RECORD_KEY_FOOTER_KEY, OLD_BLOOM_FILTER_FOOTER_KEY, SIMPLE, InvalidBloomFilterError)


def _normalize_type_code(type_code: str | bytes | None) -> str:
    if type_code is None:
        return SIMPLE  # Java assumes SIMPLE when the footer has no type code
    if isinstance(type_code, (bytes, bytearray)):
        type_code = bytes(type_code).decode("utf-8", "replace")
    code = str(type_code).strip().upper()  # Java compares with equalsIgnoreCase
    if code in (SIMPLE, DYNAMIC_V0):
        return code
    raise UnsupportedFeatureError(f"bloom filter type code {type_code!r} is not recognizable")


def create_bloom_filter(
    num_entries: int = DEFAULT_NUM_ENTRIES,
    fpp: float = DEFAULT_FPP,
    type_code: str = DEFAULT_TYPE_CODE,
    max_entries: int = DEFAULT_MAX_ENTRIES,
) -> BloomFilter:
    """A new empty filter sized as ``BloomFilterFactory.createBloomFilter`` does (Murmur hash)."""
    code = _normalize_type_code(type_code)
    if code == SIMPLE:
        return SimpleBloomFilter.create(num_entries, fpp)
    return DynamicBloomFilter.create(num_entries, fpp, max_entries)


def bloom_filter_from_footer(type_code: str | bytes | None, serialized: str | bytes) -> BloomFilter:
    """Decode a footer's filter string (``BloomFilterFactory.fromString``); no type = SIMPLE."""
    code = _normalize_type_code(type_code)
    if code == SIMPLE:
        return SimpleBloomFilter.deserialize(serialized)
    return DynamicBloomFilter.deserialize(serialized)


def _meta_get(meta: Mapping, name: str) -> str | None:
    for k in (name.encode("ascii"), name):
        if k in meta:
            v = meta[k]
            if v is None:
                return None
            if isinstance(v, (bytes, bytearray, memoryview)):
                try:
                    return bytes(v).decode("utf-8")
                except UnicodeDecodeError as e:
                    raise InvalidBloomFilterError(f"footer entry {name} is not UTF-8") from e
            return str(v)
    return None


def read_bloom_filter(parquet_key_value_metadata: Mapping | None) -> BloomFilter | None:
    """The filter of a base file's footer (``pyarrow.parquet.read_metadata(p).metadata``: keys and
    values may be bytes or str), or None when the file carries none."""
    if not parquet_key_value_metadata:
        return None
    serialized = _meta_get(parquet_key_value_metadata, BLOOM_FILTER_FOOTER_KEY)
    if serialized is None:
        serialized = _meta_get(parquet_key_value_metadata, OLD_BLOOM_FILTER_FOOTER_KEY)
    if serialized is None:
        return None
    type_code = _meta_get(parquet_key_value_metadata, BLOOM_FILTER_TYPE_CODE_FOOTER_KEY)
    return bloom_filter_from_footer(type_code, serialized)


def footer_entries(filter: BloomFilter, min_key: str | None, max_key: str | None) -> dict[str, str]:
    """Footer key-value entries for a base file, as ``HoodieBloomFilterWriteSupport`` writes them:
    the filter, the type code (only for dynamic filters, as Java does), and the key range (only
    when both ends are given). ``min_key``/``max_key`` are the smallest/largest record key."""
    if (min_key is None) != (max_key is None):
        raise InvalidInputError("footer_entries needs both min_key and max_key, or neither")
    out = {BLOOM_FILTER_FOOTER_KEY: filter.serialize()}
    if "DYNAMIC" in filter.type_code:
        out[BLOOM_FILTER_TYPE_CODE_FOOTER_KEY] = filter.type_code
    if min_key is not None and max_key is not None:
        if min_key > max_key:
            raise InvalidInputError(f"min record key {min_key!r} is greater than max record key {max_key!r}")
        out[MIN_RECORD_KEY_FOOTER_KEY] = str(min_key)
        out[MAX_RECORD_KEY_FOOTER_KEY] = str(max_key)
    return out
