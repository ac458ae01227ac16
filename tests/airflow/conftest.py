"""Fixtures of the Airflow tests."""

from __future__ import annotations

import pytest

import airflow_table as at


@pytest.fixture
def table(tmp_path):
    """The small partitioned MOR table of ``tests/support/airflow_table.py``, written afresh."""
    path = tmp_path / "trips"
    at.build(path)
    return path
