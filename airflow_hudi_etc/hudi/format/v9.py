"""Table version 9 (Hudi 1.1/1.2): version 8's format with the ordering fields under their own key
and the table format named (shared/hudi-format-v8-v9.md §1)."""

from __future__ import annotations

from .keys import ORDERING_FIELDS_KEY
from .v8 import V8Profile


class V9Profile(V8Profile):
    table_version = 9
    release = "Hudi 1.1"

    def _ordering_keys(self, ordering_field: str, mode: str) -> dict[str, str]:
        # no hoodie.table.partial.update.mode: absent means no partial updates, and Hudi 1.1.1's
        # enum has no NONE (its writers fail with "No enum constant ...PartialUpdateMode.NONE")
        return {ORDERING_FIELDS_KEY: ordering_field, "hoodie.table.format": "native"}
