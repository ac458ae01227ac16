"""Table services and the contract with Java next to them: the compaction plan file
(:mod:`.plan`), the rules for sharing a table with Java Hudi (:mod:`.coexistence`),
rollback instants (:mod:`.rollback`), DIRECT markers (:mod:`.markers`), heartbeats
(:mod:`.heartbeat`), the named crash points (:mod:`.crash`) and the typed views of the
product's own metadata keys: plan, commit and table settings (:mod:`.etc_metadata`).
"""
