"""Where the tests find things: the repository, and the Java-written fixture tables of ``../shared``."""

from __future__ import annotations

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# HUDI_ETC_FIXTURES: the fixtures folder when the checkout is not next to ../shared (a worktree)
FIXTURES = Path(os.environ.get("HUDI_ETC_FIXTURES") or REPO.parent / "shared" / "fixtures" / "hudi-rs-tables")

V6_MOR_FIXTURES = {
    "v6_trips_8i1u": "quickstart_trips_table/mor/avro/v6_trips_8i1u.zip",
    "v6_trips_8i3d": "quickstart_trips_table/mor/avro/v6_trips_8i3d.zip",
    "v6_nonpartitioned": "sample_table/mor/parquet/v6_nonpartitioned.zip",
    "v6_nonpartitioned_rollback": "sample_table/mor/parquet/v6_nonpartitioned_rollback.zip",
    "v6_simplekeygen_nonhivestyle": "sample_table/mor/parquet/v6_simplekeygen_nonhivestyle.zip",
    "v6_complexkeygen_hivestyle": "sample_table/mor/parquet/v6_complexkeygen_hivestyle.zip",
    "v6_empty": "sample_table/mor/parquet/v6_empty.zip",
}
OTHER_FIXTURES = {
    "v6_cow_nonpartitioned": "sample_table/cow/v6_nonpartitioned.zip",
    "v8_trips_8i3u1d": "quickstart_trips_table/mor/avro/v8_trips_8i3u1d.zip",
}
