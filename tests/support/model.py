"""A hand-written model of a Hudi v6 MOR table under our writer, for seeded random histories.

It knows nothing of the product's code: it applies Hudi 0.14/0.15's merge rules per key
(shared/hudi-format.md §6.4) to a dict. Without compaction every update since the key's
insert sits in the logs of its file slice, so per key it tracks the base record (the insert)
and the folded log state.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field


@dataclass
class KeyState:
    base: dict | None = None  # record in the base file (None: never inserted)
    log: tuple | None = None  # None | ("data", record) | ("delete",)


@dataclass
class TableModel:
    precombine: str
    event_time_ordering: bool = False  # DefaultHoodieRecordPayload
    keys: dict = field(default_factory=dict)

    def upsert(self, rows: list[dict], key: str) -> None:
        for r in _dedup(rows, key, self.precombine):
            st = self.keys.get(r[key])
            if st is None or st.base is None:
                self.keys[r[key]] = KeyState(base=r)  # insert: a new base file
                continue
            if st.log is not None and st.log[0] == "data" and st.log[1][self.precombine] > r[self.precombine]:
                continue  # log vs log: the larger ordering value stays
            st.log = ("data", r)  # a data record after a delete always wins

    def delete(self, keys: list[str]) -> None:
        for k in set(keys):
            st = self.keys.get(k)
            if st is not None and st.base is not None:
                st.log = ("delete",)  # natural order: the delete wins

    def snapshot(self) -> dict:
        out = {}
        for k, st in self.keys.items():
            if st.base is None:
                continue
            if st.log is None:
                out[k] = st.base
            elif st.log[0] == "delete":
                continue
            else:
                rec = st.log[1]
                if self.event_time_ordering and st.base[self.precombine] > rec[self.precombine]:
                    rec = st.base
                out[k] = rec
        return out

    def read_optimized(self) -> dict:
        return {k: st.base for k, st in self.keys.items() if st.base is not None}


def _dedup(rows, key, pre):
    best = {}
    for r in rows:  # larger precombine wins, the later row on ties
        cur = best.get(r[key])
        if cur is None or r[pre] >= cur[pre]:
            best[r[key]] = r
    return list(best.values())


def random_history(seed: int, batches: int = 6, partitions=("a", "b", "c"), monotone_ordering: bool = False):
    """Batches of (op, rows) with late-arriving event times; deterministic per seed.

    ``monotone_ordering``: ordering values grow from batch to batch (an ``updated_at`` column),
    the case where Hudi's OverwriteWithLatestAvroPayload gives the same answer before and after
    compaction, and where hudi-rs agrees with Java (see test_merge_rules).
    """
    rng = random.Random(seed)
    t0 = 1_700_000_000_000
    next_key = 0
    known: list[str] = []
    out = []
    for b in range(batches):
        wall = t0 + b * 3_600_000
        if known and rng.random() < 0.25:
            keys = rng.sample(known, k=min(len(known), rng.randint(1, 4)))
            keys.append(f"k{90000 + b:05d}")  # deleting an absent key is a no-op
            out.append(("delete", [{"key": k, "region": partitions[int(k[1:]) % len(partitions)]} for k in keys]))
            continue
        rows = []
        for _ in range(rng.randint(1, 25)):
            if known and rng.random() < 0.55:
                k = rng.choice(known)
            else:
                k = f"k{next_key:05d}"
                next_key += 1
                known.append(k)
            late = int(rng.expovariate(1 / 1_800_000))  # mean 30 min late
            rows.append(
                {
                    "key": k,
                    # precombine: a small range, so ties and lower values happen
                    "ts": rng.randint(0, 50) + (b * 100 if monotone_ordering else 0),
                    "event_time": wall - late,
                    "value": round(rng.uniform(0, 1000), 3),
                    "note": rng.choice(["x", "y", None, "late"]),
                    "region": partitions[int(k[1:]) % len(partitions)],  # fixed per key
                }
            )
        out.append(("upsert", rows))
    return out
