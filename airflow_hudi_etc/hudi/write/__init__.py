"""The write path: new tables, batches of upserts/inserts/deletes as deltacommits in either
layout (:mod:`.writer`, the driver), stage by stage: prepare the batch (:mod:`.prepare`), tag
keys to file groups (:mod:`.tag`), route them into work units (:mod:`.route`), append logs
(:mod:`.append`), insert base files with Hudi's footer (:mod:`.insert`); the work unit
(:mod:`.units`), the single-writer rule and undo (:mod:`.undo`).
"""
