"""Hudi's simple bucket index (``hoodie.index.type=BUCKET``), as its Java writers route keys.

A bucket-index table has a fixed number of buckets per partition
(``hoodie.bucket.index.num.buckets``, Java's default 256), one file group each, named by its
bucket: the file id is a UUID whose first 8 characters are the bucket id, zero-padded
(``00000003-c0c1-4dbe-a57f-333f5c4353a6-0``). A key's bucket is Java's ``BucketIdentifier``:
the hash-field values taken from the record key (``hoodie.bucket.index.hash.field``, by default
the record key fields), ``java.util.List.hashCode`` of them (each value's ``String.hashCode``),
``& Integer.MAX_VALUE``, modulo the bucket count. A Java writer tags every key with its bucket's
file group (updates and new keys alike: on a MERGE_ON_READ table both go to a log of it), and a
bucket without a file group in the partition gets a new one (a base file). It parses the first 8
characters of every file id of the partition as a number: one UUID-named file group (what a
write routed by the bloom index makes) fails every later Java write (``NumberFormatException``).

Nothing of this is in ``hoodie.properties`` (0.14 to 1.1 record no index settings there; real
Java measured): a table says it through its file names only. So this product takes the bucket
settings the Java writers use from the table's recorded write settings (``hudi-etc configure
--hoodie hoodie.index.type=BUCKET hoodie.bucket.index.num.buckets=N``), and refuses to write a
table whose file groups are all named by buckets while no such setting is recorded.

The record key's split into hash values follows each Hudi line: 0.14/0.15 (table version 6)
take a key without ``:`` whole, else split it on ``,`` and ``:``; 1.x (versions 8, 9) take a key
whole unless it holds both ``,`` and ``:``. A 1.x key whose parts are not plain ``field:value``
pairs (a value holding ``,`` or ``:``) is refused: its bucket is not reproduced here.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from ..errors import InvalidInputError, UnsupportedFeatureError
from ..format import profile_for

K_INDEX_TYPE = "hoodie.index.type"
K_NUM_BUCKETS = "hoodie.bucket.index.num.buckets"
K_HASH_FIELD = "hoodie.bucket.index.hash.field"
K_ENGINE = "hoodie.index.bucket.engine"
K_PARTITION_EXPRESSIONS = "hoodie.bucket.index.partition.expressions"
#: Java's default bucket count (HoodieIndexConfig.BUCKET_INDEX_NUM_BUCKETS)
DEFAULT_NUM_BUCKETS = 256
#: Java's folder of the consistent-hashing and partition-level bucket index metadata
BUCKET_INDEX_META = ".hoodie/.bucket_index"

#: a file id named by a bucket: 8 digits, then the rest of a UUID, then ``-<n>``
_BUCKET_FILE_ID = re.compile(r"(\d{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-\d+")
#: bucket ids below this count as evidence of a bucket-index table when two or more file groups
#: say so (a random UUID starts with 8 digits below it about once in 43,000 file groups: two at
#: once, about once in 2 billion)
_EVIDENCE_MAX_BUCKET = 100_000
#: one file group alone is evidence only below Java's default bucket count (a random UUID starts
#: with such 8 digits about once in 17 million; CI hit the 100,000 bound on a one-file-group
#: table of ours, file id 00066748-…)
_EVIDENCE_MAX_BUCKET_ALONE = 256

_NULL, _EMPTY = "__null__", "__empty__"


# ---------------------------------------------------------------------------- Java's hashing
def java_string_hash(s: str) -> int:
    """``java.lang.String.hashCode``: over the UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def java_list_hash(items: Iterable[str | None]) -> int:
    """``java.util.List.hashCode`` of strings (a null element counts 0), signed 32-bit."""
    h = 1
    for s in items:
        h = (31 * h + (0 if s is None else java_string_hash(s))) & 0xFFFFFFFF
    return h - (1 << 32) if h & 0x80000000 else h


def _placeholder(v: str) -> str | None:
    return None if v == _NULL else "" if v == _EMPTY else v


def _java_split(s: str, sep: str) -> list[str]:
    """``String.split(sep)`` of a one-character literal separator (trailing empty strings dropped)."""
    parts = s.split(sep)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def hash_values(record_key: str, fields: Sequence[str], table_version: int) -> list[str | None]:
    """The values Java hashes for ``record_key`` (``BucketIdentifier.getHashKeys``) on a table of
    ``table_version``, as the Java line that writes it parses keys: 6 as Hudi 0.14/0.15, 8 and 9
    as Hudi 1.x (the profile's ``java_1x``)."""
    if not profile_for(table_version).java_1x:
        if ":" not in record_key:
            return [record_key]
        out: list[str | None] = []
        for part in _java_split(record_key, ","):
            kv = part.split(":", 1)
            if len(kv) == 1:
                out.append(kv[0])
            elif kv[0] in fields:
                out.append(_placeholder(kv[1]))
        return out
    if "," not in record_key or ":" not in record_key:
        return [record_key]
    pairs = [p.split(":") for p in record_key.split(",")]
    if any(len(p) != 2 for p in pairs):
        raise UnsupportedFeatureError(
            f"record key {record_key!r} on a bucket-index table: a key value holding ',' or ':' is hashed by "
            "Hudi 1.x's own parser, which this release does not reproduce; nothing was written")
    vals = [_placeholder(v) for f, v in pairs if f in fields]
    return vals or [record_key]


def bucket_id(record_key: str, fields: Sequence[str], num_buckets: int, table_version: int) -> int:
    """Java's bucket of a record key (``BucketIdentifier.getBucketId``)."""
    return (java_list_hash(hash_values(record_key, fields, table_version)) & 0x7FFFFFFF) % num_buckets


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket a file id is named by, or None (not a bucket file group's id)."""
    m = _BUCKET_FILE_ID.fullmatch(file_id)
    return int(m.group(1)) if m else None


def new_bucket_file_id(bucket: int) -> str:
    """A new file group's id for ``bucket``, as Java names it: a random UUID whose first 8
    characters are the zero-padded bucket id, then ``-0``."""
    return f"{bucket:08d}{str(uuid.uuid4())[8:]}-0"


def new_file_id() -> str:
    """A new file group's id for a write routed by another index: a random UUID, then ``-0``, as
    Java names it, but never one that starts with 8 digits (a bucket's name; about 2 in 100
    UUIDs do), so that no bucket rule, ours or a reader's, takes our file group for a bucket's."""
    while True:
        fid = f"{uuid.uuid4()}-0"
        if bucket_of_file_id(fid) is None:
            return fid


def looks_bucketed(file_ids: Iterable[str]) -> bool:
    """Every file id is named by a (small) bucket id, and there is at least one: the table's
    writers use the bucket index. One file id alone must name a bucket below Java's default
    count (a random UUID is rarely that)."""
    ids = set(file_ids)
    bound = _EVIDENCE_MAX_BUCKET if len(ids) > 1 else _EVIDENCE_MAX_BUCKET_ALONE
    return bool(ids) and all((b := bucket_of_file_id(f)) is not None and b < bound for f in ids)


# ---------------------------------------------------------------------------- the table's settings
@dataclass(frozen=True)
class BucketIndex:
    num_buckets: int
    hash_fields: tuple[str, ...]
    table_version: int

    def bucket(self, record_key: str) -> int:
        return bucket_id(record_key, self.hash_fields, self.num_buckets, self.table_version)

    def buckets(self, keys: Iterable[str]) -> list[int]:
        return [self.bucket(k) for k in keys]

    def locate(self, slices, parts: Sequence[str], keys: Sequence[str]) -> tuple[dict, dict]:
        """``(located, new)``: ``(partition, key) → file id`` of the keys whose bucket has a file
        group (``slices``: the latest file slices), and of the others the new file id of their
        bucket (one per partition and bucket). A file group not named by a bucket below the
        count, or two of one bucket, is refused (Java's bucket-index writer fails on them too)."""
        by_bucket = self.file_groups(slices, set(parts))
        located: dict[tuple[str, str], str] = {}
        new: dict[tuple[str, str], str] = {}
        made: dict[tuple[str, int], str] = {}
        for p, k, b in zip(parts, keys, self.buckets(keys)):
            fid = by_bucket.get((p, b))
            if fid is not None:
                located[(p, k)] = fid
            else:
                new[(p, k)] = made.setdefault((p, b), new_bucket_file_id(b))
        return located, new

    def file_groups(self, slices, partitions: set[str]) -> dict[tuple[str, int], str]:
        out: dict[tuple[str, int], str] = {}
        for s in slices:
            if s.partition not in partitions:
                continue
            b = bucket_of_file_id(s.file_id)
            where = f"{s.partition}/{s.file_id}" if s.partition else s.file_id
            if b is None or b >= self.num_buckets:
                raise InvalidInputError(
                    f"bucket-index table ({K_NUM_BUCKETS}={self.num_buckets}): file group {where} is not named by "
                    f"one of its buckets (ids 00000000..{self.num_buckets - 1:08d}); Java's bucket-index writer "
                    "fails on it too. Check the recorded bucket settings; nothing was written")
            other = out.setdefault((s.partition, b), s.file_id)
            if other != s.file_id:
                raise InvalidInputError(
                    f"bucket-index table: bucket {b} of partition {s.partition!r} has two file groups ({other}, "
                    f"{s.file_id}); Java refuses it too (roll back the write that made one); nothing was written")
        return out


def settings_of(conf: Mapping[str, str]) -> dict[str, str]:
    """The index settings among ``conf`` (``hoodie.index.*``, ``hoodie.bucket.index.*``)."""
    return {k: str(v).strip() for k, v in conf.items()
            if (k.startswith(("hoodie.index.", "hoodie.bucket.index.")) and str(v).strip())}


def bucket_index(conf: Mapping[str, str], *, record_key_fields: Sequence[str], table_version: int,
                 bucket_meta: Callable[[], bool] | bool = False,
                 concurrency_mode: str = "SINGLE_WRITER") -> BucketIndex | None:
    """The table's simple bucket index from its writers' settings ``conf``, or None (another
    index). Typed refusals: a bucket index this release does not write (consistent hashing,
    partition-level bucket counts — ``bucket_meta``: Java's ``.hoodie/.bucket_index`` folder —, the
    non-blocking concurrency mode's fixed file ids), a bad count, hash fields outside the key."""
    s = settings_of(conf)
    if s.get(K_INDEX_TYPE, "").upper() != "BUCKET":
        return None
    engine = s.get(K_ENGINE, "SIMPLE").upper()
    if engine == "SIMPLE" and not s.get(K_PARTITION_EXPRESSIONS) and callable(bucket_meta):
        bucket_meta = bucket_meta()
    if engine != "SIMPLE" or bucket_meta or s.get(K_PARTITION_EXPRESSIONS):
        what = (f"{K_ENGINE}={engine}" if engine != "SIMPLE" else f"{K_PARTITION_EXPRESSIONS}"
                if s.get(K_PARTITION_EXPRESSIONS) else f"{BUCKET_INDEX_META} (consistent hashing or "
                "partition-level bucket counts)")
        raise UnsupportedFeatureError(f"bucket index with {what}: this release writes only the simple bucket "
                                      "index (a fixed count); nothing was written")
    if concurrency_mode.upper() == "NON_BLOCKING_CONCURRENCY_CONTROL":
        raise UnsupportedFeatureError("bucket index under NON_BLOCKING_CONCURRENCY_CONTROL (fixed file ids, "
                                      "inserts into logs): not written by this release; nothing was written")
    raw = s.get(K_NUM_BUCKETS, str(DEFAULT_NUM_BUCKETS))
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n <= 0:
        raise InvalidInputError(f"{K_NUM_BUCKETS}={raw!r}: give a whole number > 0")
    fields = tuple(f.strip() for f in s.get(K_HASH_FIELD, ",".join(record_key_fields)).split(",") if f.strip())
    if not fields or not set(fields) <= set(record_key_fields):
        raise InvalidInputError(f"{K_HASH_FIELD}={s.get(K_HASH_FIELD)!r}: the bucket index hashes fields of the "
                                f"record key {list(record_key_fields)} (Java refuses others too)")
    return BucketIndex(n, fields, table_version)


def refuse_unconfigured(file_ids: Iterable[str]) -> None:
    """A table whose file groups are all named by buckets, with no bucket index recorded: refused
    (a write routed by the bloom index would make a UUID-named file group, and every later Java
    bucket-index write would fail on it)."""
    ids = sorted(set(file_ids))
    if looks_bucketed(ids):
        raise InvalidInputError(
            f"the table's file groups are named by buckets ({ids[0]}{' ...' if len(ids) > 1 else ''}): its Java "
            "writers use the bucket index, and no bucket settings are recorded. Record the ones they use, e.g. "
            f"hudi-etc configure --path P --hoodie {K_INDEX_TYPE}=BUCKET --hoodie {K_NUM_BUCKETS}=N "
            f"[--hoodie {K_HASH_FIELD}=FIELD]; nothing was written")


__all__ = ["BucketIndex", "bucket_index", "bucket_id", "bucket_of_file_id", "hash_values", "java_list_hash",
           "java_string_hash", "looks_bucketed", "new_bucket_file_id", "new_file_id", "refuse_unconfigured", "settings_of",
           "BUCKET_INDEX_META", "DEFAULT_NUM_BUCKETS", "K_HASH_FIELD", "K_INDEX_TYPE", "K_NUM_BUCKETS"]
