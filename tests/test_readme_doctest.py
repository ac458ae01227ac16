"""The examples of README.md and of the manual in docs/ run as doctests, one test per file: the
documentation cannot drift from the API. README's DAG quick start builds its DAG with the
installed Airflow (no scheduler, no Spark)."""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before README's example imports it)

import doctest

import pytest

from paths import REPO

#: the least number of examples each file holds today: a file that loses its examples fails
#: instead of passing with nothing run. A docs/*.md that gains examples is tested at once (at
#: least one); add it here with its count.
MIN_EXAMPLES = {
    "README.md": 12,
    "docs/python-api.md": 15,
}


def _files() -> list[str]:
    found = {str(p.relative_to(REPO)) for p in [REPO / "README.md", *(REPO / "docs").glob("*.md")]
             if ">>> " in p.read_text(encoding="utf-8")}
    return sorted(found | set(MIN_EXAMPLES))


@pytest.mark.parametrize("name", _files())
def test_documented_examples_run(name):
    res = doctest.testfile(str(REPO / name), module_relative=False, encoding="utf-8",
                           optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert res.failed == 0, res
    assert res.attempted >= MIN_EXAMPLES.get(name, 1), res
