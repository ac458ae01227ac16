"""The examples of README.md and of the manual in docs/ run as doctests, one test per file: the
documentation cannot drift from the API. README's DAG quick start builds its DAG with the
installed Airflow (no scheduler, no Spark). What the package cites in docs/ exists."""

from __future__ import annotations

import airflow_env  # noqa: F401  (configures Airflow before README's example imports it)

import doctest
import re

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


def _headings(path) -> list[str]:
    text = path.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return [h.strip("` ").lower() for h in re.findall(r"^#+ (.+)$", text, flags=re.M)]


def test_what_the_package_cites_in_docs_is_there():
    """Messages and docstrings send readers to ``docs/<file>.md, "<section>"``: the file exists and
    has a heading that starts with that section's name."""
    cited = []
    for src in sorted((REPO / "airflow_hudi_etc").rglob("*.py")):
        text = re.sub(r"\s+", " ", src.read_text(encoding="utf-8"))
        for doc, section in re.findall(r"docs/([\w-]+\.md)(?:, \\?[\"']([^\"'\\]+))?", text):
            cited.append((src.name, doc, section))
            assert (REPO / "docs" / doc).is_file(), (src, doc)
            if section:
                assert any(h.startswith(section.lower()) for h in _headings(REPO / "docs" / doc)), (src, doc, section)
    assert len(cited) >= 8, cited
