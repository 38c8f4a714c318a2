"""Fixtures shared by the profiles tests: a connection to the main fixture's tiny store."""

from __future__ import annotations

import duckdb
import pytest

from tests.profiles.profiles_doubles import ATTEMPTS, CONF, COUNTERS, JOBS, make_con


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    return make_con({"attempts": ATTEMPTS, "counters": COUNTERS, "jobs": JOBS, "conf": CONF})
