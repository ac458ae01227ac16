"""What is known of files without reading them: Hudi's bloom filters in base-file footers
(:mod:`.bloom`), the event times of log files from write stats and the table summary
(:mod:`.stats`), per-log ordering facts (:mod:`.ordering_facts`) and the event-time index
that keeps scans' answers (:mod:`.log_index`).
"""
