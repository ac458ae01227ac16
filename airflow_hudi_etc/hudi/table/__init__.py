"""A loaded table: storage, validated config and timeline, and the merged reads over it
(:class:`.hudi_table.HudiTable`: snapshot, read-optimized, as-of, incremental).
"""
