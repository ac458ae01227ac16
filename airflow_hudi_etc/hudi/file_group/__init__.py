"""File groups and slices: the file-system view (:mod:`.fsview`), the file-name rules of
both version families (:mod:`.naming`) and the merge of one slice, base file plus log
blocks, with Hudi's payload rules (:mod:`.merge`).
"""
