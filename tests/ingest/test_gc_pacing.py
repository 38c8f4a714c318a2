"""ingest.gc_pacing: collections are rarer while files are read, and the process's pacing comes back."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from ingest.gc_pacing import READING_THRESHOLD, paced, rarer_collections


@pytest.fixture
def default_pacing() -> Iterator[tuple[int, int, int]]:
    before = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    try:
        yield (700, 10, 10)
    finally:
        gc.set_threshold(*before)


def test_young_collections_are_rarer_inside_and_restored_after(default_pacing: tuple[int, int, int]) -> None:
    with rarer_collections():
        assert gc.get_threshold() == (READING_THRESHOLD, 10, 10)
    assert gc.get_threshold() == default_pacing


def test_restored_when_the_block_raises(default_pacing: tuple[int, int, int]) -> None:
    with pytest.raises(KeyError), rarer_collections():
        raise KeyError("a reader's bug")
    assert gc.get_threshold() == default_pacing


def test_a_process_that_collects_even_more_rarely_keeps_its_pacing() -> None:
    before = gc.get_threshold()
    gc.set_threshold(5 * READING_THRESHOLD, 20, 30)
    try:
        with rarer_collections():
            assert gc.get_threshold() == (5 * READING_THRESHOLD, 20, 30)
        assert gc.get_threshold() == (5 * READING_THRESHOLD, 20, 30)
    finally:
        gc.set_threshold(*before)


def test_readers_that_end_out_of_order_restore_once_the_last_ends(default_pacing: tuple[int, int, int]) -> None:
    first, second = paced(iter([1, 2])), paced(iter([3, 4]))
    assert next(first) == 1
    assert next(second) == 3  # both started
    assert list(first) == [2]  # the first ends while the second still reads
    assert gc.get_threshold()[0] == READING_THRESHOLD
    assert list(second) == [4]
    assert gc.get_threshold() == default_pacing


def test_a_reader_given_up_halfway_restores_when_closed(default_pacing: tuple[int, int, int]) -> None:
    rows = paced(iter(range(10)))
    assert next(rows) == 0
    assert gc.get_threshold()[0] == READING_THRESHOLD
    rows.close()
    assert gc.get_threshold() == default_pacing
