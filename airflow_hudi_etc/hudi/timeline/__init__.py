"""The timeline: the instant vocabulary (:mod:`.instant`), the active timeline of both
layouts (:mod:`.active`: one class per layout; layout 2's names, completion times and LSM history
in :mod:`.timeline_v2`), writing instants in either layout (:mod:`.layout`), the archived
timeline as the table's profile says (:mod:`.archived`: version 6's in :mod:`.archive_v6`),
commit metadata typed and encoded (:mod:`.commits`; the JSON decoding in :mod:`.commit_json`)
and the Avro timeline files: plans and their metadata (:mod:`.avro_models`).
"""
