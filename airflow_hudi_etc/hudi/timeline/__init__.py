"""The timeline: the instant vocabulary (:mod:`.instant`), the active timeline of both
layouts (:mod:`.active`; layout 2's names, completion times and LSM history in
:mod:`.timeline_v2`), writing instants in either layout (:mod:`.layout`), the archived
timeline of version 6 (:mod:`.archive_v6`), commit metadata typed and encoded
(:mod:`.commits`) and the Avro timeline files: plans and their metadata
(:mod:`.avro_models`).
"""
