"""Herodotou 2011's merge arithmetic (eqs. 21-26): the paper's example, and Hadoop's Merger order simulated."""

from __future__ import annotations

import heapq
import math

import pytest

from predict.merge import (
    MergePlan,
    final_merge_files,
    first_pass_files,
    interm_merge_reads,
    merge_passes,
    simulate_merge,
)


def test_paper_merge_example_28_spills_sort_factor_10() -> None:
    """Section 5: two passes of 10 in the first round, then a final merge of 10 (2 merged + 8 spills)."""
    assert first_pass_files(28, 10) == 10  # eq. 21: (28 - 1) mod 9 == 0
    assert interm_merge_reads(28, 10) == 20  # eq. 22: two passes of 10
    assert final_merge_files(28, 10) == 10  # eq. 23: 1 + 1 merged + 8 original
    assert merge_passes(28, 10) == 3  # eq. 26: 2 + floor(18 / 10)


@pytest.mark.parametrize(
    ("n", "f", "first", "passes"), [(1, 10, 1, 0), (7, 10, 7, 1), (10, 10, 10, 1), (25, 10, 7, 3)]
)
def test_merge_small_cases(n: int, f: int, first: int, passes: int) -> None:
    assert first_pass_files(n, f) == first
    assert merge_passes(n, f) == passes


@pytest.mark.parametrize("f", [2, 3, 5, 10, 16])
def test_closed_forms_agree_with_hadoops_merge_order(f: int) -> None:
    """Eqs. 22, 23 and 26 against a simulation of Hadoop's Merger for every N <= F^2."""
    for n in range(2, f * f + 1):
        plan = simulate_merge(n, f)
        assert plan.interm_reads == interm_merge_reads(n, f), n
        assert plan.final_files == final_merge_files(n, f), n
        assert plan.passes == merge_passes(n, f), n


def _heap_merge(n: int, f: int) -> MergePlan:
    """Hadoop's Merger order one segment at a time (a heap of sizes): the reference for the grouped one."""
    segments = [1.0] * n
    reads, passes, take = 0.0, 0, first_pass_files(n, f)
    while len(segments) > f:
        merged = sum(heapq.heappop(segments) for _ in range(take))
        reads += merged
        heapq.heappush(segments, merged)
        passes, take = passes + 1, f
    return MergePlan(reads, len(segments), passes + 1 if n > 1 else 0)


@pytest.mark.parametrize("f", [2, 3, 7, 10, 100])
def test_grouped_merge_simulation_is_the_heap_one(f: int) -> None:
    for n in [*range(0, 400), 1_000, 4_321, 10_007, 65_536]:
        assert simulate_merge(n, f) == _heap_merge(n, f), (n, f)


def test_merging_millions_of_map_outputs_is_quick() -> None:
    # A reduce of a 1 PB job merges ~8 million map outputs: a few steps per merge level.
    n = 8_388_608
    plan = simulate_merge(n, 10)
    assert plan.final_files == 10
    assert plan.passes == math.ceil((n - 10) / 9) + 1  # each pass leaves 9 segments fewer
    assert 5 * n < plan.interm_reads < 7 * n  # every output read in ~log_10(n) - 1 levels


def test_beyond_sort_factor_squared_uses_simulation() -> None:
    plan = simulate_merge(150, 10)
    assert plan.final_files <= 10
    assert plan.passes == merge_passes(150, 10)
    assert interm_merge_reads(150, 10) > interm_merge_reads(100, 10)
