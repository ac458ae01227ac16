"""README's Python API examples run as doctests: the documentation cannot drift from the API."""

from __future__ import annotations

import doctest

from paths import REPO

README = REPO / "README.md"


def test_readme_examples_run():
    res = doctest.testfile(str(README), module_relative=False,
                           optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.attempted >= 15 and res.failed == 0, res
