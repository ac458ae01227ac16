"""Java's bloom index finds the keys of a base file our compaction wrote with many keys.

The real 0.15 process upserts keys of a compacted base of 130,000 keys: its dynamic bloom
filter has two rows (60,000 keys each, then the rest round-robin over both) and is filled by the
vectorised hashing with each key's row offset. A key whose bits were missing would make Java's
BLOOM index (the Spark default) take the upsert for an insert into a new file group: the key
would then be read twice. Judged by Java's own read: every key once, the upserted values.
"""

from __future__ import annotations

import pytest

from java_checks import new_table, row

pytestmark = [pytest.mark.java, pytest.mark.slow]

N = 130_000
#: row 0 (first 60,000 written), row 1 (next 60,000), and past the bound (round-robin)
PROBES = ["k000007", "k059999", "k060000", "k099123", "k120000", "k120001", "k129998"]


def test_java_upserts_find_keys_in_our_compacted_base_of_two_bloom_rows(java_hudi, tmp_path):
    t = new_table(tmp_path, 6)
    t.write([row(f"k{i:06d}", 1, 10, i) for i in range(N)])
    t.write([row(f"k{i:06d}", 2, 11, -i) for i in range(0, N, 1000)])  # a log: the compaction rewrites the base
    s = t.compaction.schedule("2h", compaction_time="2026-01-02T00:00:00Z")
    assert s.instant
    assert t.compaction.execute(s.instant).status == "completed"
    java = java_hudi("0.15")
    java.upsert(t.path, [row(k, 3, 12, 0.5) for k in PROBES])
    got = java.sql("select count(*) as n, count(distinct k) as d, "
                   "sum(case when v = 0.5 then 1 else 0 end) as probes from {table}", path=t.path)
    assert got == [{"n": N, "d": N, "probes": len(PROBES)}], got
