"""Bloom filter constants, Hudi's sizing rules and the parameter checks shared by every module."""

from __future__ import annotations

import math

from ...errors import InvalidInputError, UnsupportedFeatureError

# --------------------------------------------------------------------------- constants
BLOOM_FILTER_FOOTER_KEY = "org.apache.hudi.bloomfilter"
OLD_BLOOM_FILTER_FOOTER_KEY = "com.uber.hoodie.bloomfilter"
BLOOM_FILTER_TYPE_CODE_FOOTER_KEY = "hoodie_bloom_filter_type_code"
MIN_RECORD_KEY_FOOTER_KEY = "hoodie_min_record_key"
MAX_RECORD_KEY_FOOTER_KEY = "hoodie_max_record_key"

SIMPLE = "SIMPLE"
DYNAMIC_V0 = "DYNAMIC_V0"

JENKINS_HASH = 0
MURMUR_HASH = 1

#: Hudi defaults: hoodie.index.bloom.num_entries / .fpp, hoodie.bloom.index.filter.type /
#: hoodie.bloom.index.filter.dynamic.max.entries
DEFAULT_NUM_ENTRIES = 60000
DEFAULT_FPP = 0.000000001
DEFAULT_TYPE_CODE = DYNAMIC_V0
DEFAULT_MAX_ENTRIES = 100000

_VERSION = -1
_INT_MAX = 0x7FFFFFFF


class InvalidBloomFilterError(InvalidInputError, ValueError):
    """A serialized bloom filter (or its footer entries) is malformed: bad base64, truncated,
    trailing bytes, impossible sizes. Also a ``ValueError`` for callers that expect one."""

    code = "invalid_bloom_filter"


# --------------------------------------------------------------------------- sizing
def optimal_num_of_bits(num_entries: int, fpp: float) -> int:
    """Bit-vector size Hudi picks for ``num_entries`` keys at false-positive rate ``fpp``."""
    _check_sizing(num_entries, fpp)
    bits = math.ceil(num_entries * (-math.log(fpp) / (math.log(2) * math.log(2))))
    if bits > _INT_MAX:
        raise InvalidInputError(
            f"bloom filter of {num_entries} entries at fpp {fpp} needs {bits} bits, "
            f"more than a Java int can hold"
        )
    return int(bits)


def optimal_num_of_hash_functions(num_bits: int, num_entries: int) -> int:
    """Number of hash positions per key Hudi picks for a vector of ``num_bits`` bits."""
    if num_entries <= 0:
        raise InvalidInputError(f"bloom filter num_entries must be > 0, got {num_entries}")
    return int(math.ceil(math.log(2) * num_bits / num_entries))


def _check_sizing(num_entries: int, fpp: float) -> None:
    if not isinstance(num_entries, int) or isinstance(num_entries, bool) or num_entries <= 0:
        raise InvalidInputError(f"bloom filter num_entries must be a positive int, got {num_entries!r}")
    if num_entries > _INT_MAX:
        raise InvalidInputError(f"bloom filter num_entries {num_entries} exceeds a Java int")
    if not (isinstance(fpp, (int, float)) and 0.0 < float(fpp) < 1.0):
        raise InvalidInputError(f"bloom filter fpp must be in (0, 1), got {fpp!r}")


def _check_params(vector_size: int, nb_hash: int, hash_type: int, error: type[Exception]) -> None:
    if not 0 < vector_size <= _INT_MAX:
        raise error(f"bloom filter vector size must be in 1..2^31-1, got {vector_size}")
    if not 0 < nb_hash <= _INT_MAX:
        raise error(f"bloom filter number of hash functions must be > 0, got {nb_hash}")
    if hash_type not in (JENKINS_HASH, MURMUR_HASH):
        raise UnsupportedFeatureError(f"bloom filter hash type {hash_type} is not known (0=Jenkins, 1=Murmur)")
