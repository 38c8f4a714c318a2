"""Shared pytest fixtures: where the real traces are, and a fresh store per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import settings

# CI runs every property test on the same examples (derandomized), so that a rare counterexample
# found by chance cannot fail one CI run and pass the next; local runs keep exploring new ones
# (and `pytest --hypothesis-seed=N` replays one exploration).  .ci/run selects the "ci" profile.
settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("dev")
settings.load_profile(os.environ.get("PHASELINE_HYPOTHESIS_PROFILE", "dev"))

REPO = Path(__file__).resolve().parents[1]

# The engine runs of the tests record no JIT compiles (JFR's start costs a run ~3-4 s of a JVM whose
# compiles block, over some sixty runs): the tests that read them (tests/profiles/test_jit_clock.py)
# turn it back on.
os.environ.setdefault("PHASELINE_JIT_RECORDING", "0")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The full 10,000-case fuzz run (``fuzz_full``) runs only when an ``-m`` expression names it.

    A marker expression in pyproject's addopts would be replaced by the quick loop's
    ``-m "not slow"`` (a later ``-m`` wins), which then ran the full fuzzing too.
    """
    if "fuzz_full" in (config.getoption("markexpr") or ""):
        return
    full = [item for item in items if item.get_closest_marker("fuzz_full")]
    if full:
        config.hook.pytest_deselected(items=full)
        items[:] = [item for item in items if not item.get_closest_marker("fuzz_full")]


#: The real traces the tests carry (tests/data/fixtures; SOURCES.md there gives each file's origin
#: and licence).  ``PHASELINE_SHARED`` points the tests at ``$PHASELINE_SHARED/fixtures`` instead.
FIXTURES = (
    Path(os.environ["PHASELINE_SHARED"]) / "fixtures"
    if os.environ.get("PHASELINE_SHARED")
    else REPO / "tests" / "data" / "fixtures"
)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    """tests/data/fixtures: real traces written by real Hadoop (read-only)."""
    if not FIXTURES.is_dir():
        pytest.fail(f"real fixtures not found at {FIXTURES}; unset PHASELINE_SHARED to use tests/data/fixtures")
    return FIXTURES


@pytest.fixture
def store_dir(tmp_path: Path) -> Path:
    """A path for a fresh, empty store."""
    return tmp_path / "store"


@pytest.fixture(scope="module")
def fuzz_dir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One directory per test module for the mutated copies its property tests write."""
    return tmp_path_factory.mktemp(f"fuzz_{request.module.__name__.removeprefix('test_')}")
