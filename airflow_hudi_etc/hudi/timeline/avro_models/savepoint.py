"""The savepoint metadata (``HoodieSavepointMetadata``) schema."""

from __future__ import annotations

from ._build import _s, _arr, _map, _f, _rec, _version, _parse


SAVEPOINT_METADATA = _parse(
    _rec(  # HoodieSavepointMetadata.avsc (0.14/0.15): file names per partition path
        "HoodieSavepointMetadata",
        [
            _f("savepointedBy", _s()),
            _f("savepointedAt", "long"),
            _f("comments", _s()),
            _f("partitionMetadata", _map(_rec("HoodieSavepointPartitionMetadata", [
                _f("partitionPath", _s()),
                _f("savepointDataFile", _arr(_s())),
            ]))),
            _version(1),
        ],
    )
)
