"""A hand-written model of a Hudi 1.x (table version 8/9) MOR table under Java's writer, for the
simulator's seeded histories (spec shared/hudi-format-v8-v9.md §1.2). It knows nothing of the
product's code.

Merging, EVENT_TIME_ORDERING: between two versions of a key the larger ordering value wins, the
later-processed one on a tie, **log against base too**; a natural-order delete (ordering value
Integer 0, what Spark's delete writes) wins over everything processed before it. COMMIT_TIME:
the later-processed version wins.

File groups: an upsert of a key the index finds (live in a file group) updates that group; any
other key is inserted into a new file group of its partition (one per batch and partition), so a
deleted key that comes back lives in a new group while its old group's base file still holds the
old row until that group is compacted — read-optimized reads see both, as Java and hudi-rs do.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Group:
    base: dict = field(default_factory=dict)  # key → row in the base file
    state: dict = field(default_factory=dict)  # key → ("rec", row) | ("del",): base merged with the logs


@dataclass
class Model1x:
    ordering: str = "ts"
    commit_time_ordering: bool = False
    key: str = "key"
    partition: str = "region"
    groups: dict = field(default_factory=dict)  # group id → Group
    where: dict = field(default_factory=dict)  # live key → group id
    batches: int = 0

    def _dedup(self, rows):
        best = {}
        for r in rows:  # in-batch precombine: larger ordering value, the later row on ties, in both
            cur = best.get(r[self.key])  # modes (preCombine of the payloads; the simulator does the same)
            if cur is None or r[self.ordering] >= cur[self.ordering]:
                best[r[self.key]] = r
        return list(best.values())

    def upsert(self, rows) -> None:
        self.batches += 1
        for r in self._dedup(rows):
            k = r[self.key]
            gid = self.where.get(k)
            if gid is None:  # an insert: a new base file of the partition
                gid = (self.batches, r[self.partition])
                g = self.groups.setdefault(gid, Group())
                g.base[k] = r
                g.state[k] = ("rec", r)
                self.where[k] = gid
                continue
            cur = self.groups[gid].state[k][1]
            if self.commit_time_ordering or r[self.ordering] >= cur[self.ordering]:
                self.groups[gid].state[k] = ("rec", r)

    def delete(self, keys) -> None:
        self.batches += 1
        for k in set(keys):
            gid = self.where.pop(k, None)
            if gid is not None:
                self.groups[gid].state[k] = ("del",)  # natural order: wins over all before it

    def compact_all(self) -> None:
        """Every file group's base becomes its merged state (a compaction of every slice)."""
        for g in self.groups.values():
            g.base = {k: s[1] for k, s in g.state.items() if s[0] == "rec"}
            g.state = {k: ("rec", r) for k, r in g.base.items()}

    def snapshot(self) -> dict:
        out = {}
        for g in self.groups.values():
            for k, s in g.state.items():
                if s[0] == "rec":
                    assert k not in out
                    out[k] = s[1]
        return out

    def read_optimized(self) -> list:
        """The base-file rows (a key may appear in two groups)."""
        return [r for g in self.groups.values() for r in g.base.values()]

    # ------------------------------------------------------------------ a plan pending between schedule and execute
    def schedule(self) -> None:
        """A compaction planned now: each group's base-to-be is its merged state now (the logs
        completed before C); writes completing later stay in the logs of slice C."""
        self.planned = {gid: {k: s[1] for k, s in g.state.items() if s[0] == "rec"} for gid, g in self.groups.items()}

    def execute(self) -> None:
        for gid, base in getattr(self, "planned", {}).items():
            self.groups[gid].base = base
        self.planned = {}
