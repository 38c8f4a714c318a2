"""Fixtures shared by the ingest tests: the real .jhist fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="module")
def jhists(fixtures_dir: Path) -> list[Path]:
    found = sorted(fixtures_dir.rglob("*.jhist"))
    assert len(found) >= 10
    return found
