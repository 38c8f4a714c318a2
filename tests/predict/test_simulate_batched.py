"""The failure-free replays scheduled together are :func:`simulate_once`'s replays, bit for bit.

:func:`predict.simulate.replicate` schedules the maps of all replications of a
job whose attempts never fail at once (a numpy step per map over every
replication, or a heapq loop per replication), then replays each one's
reduces.  Both ways must give the event loop's makespans and event counts
exactly, also where tasks tie (equal durations) and with stragglers, slow
start at 0 and 1, no reduces, and fewer maps than slots.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from predict import simulate
from predict.simulate import SimJob, StageDist, replicate, simulate_once

CASES = list(
    itertools.product(
        (1, 9, 120),  # maps
        (0, 1, 13),  # reduces
        ((1, 1, 1), (3, 2, 2)),  # nodes, map and reduce slots a node
        (0.0, 0.4),  # cv
        (0.0, 1.0),  # slow start
        (0.0, 0.2),  # straggler rate
        (False, True),  # every map of the same mean (ties)
    )
)


def _job(maps: int, reduces: int, slots: tuple[int, int, int], cv: float, slow: float, strag: float,
         same: bool) -> SimJob:  # fmt: skip
    means = np.full(maps, 100.0) if same else np.random.default_rng(maps).uniform(50.0, 150.0, maps)
    return SimJob(tuple(means.tolist()), cv, reduces, StageDist(10.0, cv), StageDist(30.0, cv),
                  StageDist(20.0, cv), *slots, slowstart=slow, straggler_rate=strag)  # fmt: skip


def _assert_replays_are_the_event_loops() -> None:
    """Every case's four failure-free replays give :func:`simulate_once`'s makespans and event counts."""
    for case in CASES:
        job = _job(*case)
        rng = np.random.default_rng(11)
        expected = [simulate_once(job, rng) for _ in range(4)]
        got = simulate._replay_without_failures(job, np.random.default_rng(11), 4)
        assert [(r.makespan_ms, r.events) for r in got] == [(r.makespan_ms, r.events) for r in expected], case


@pytest.mark.parametrize("way", ["numpy", "heapq"])
def test_batched_replays_are_the_event_loops(monkeypatch: pytest.MonkeyPatch, way: str) -> None:
    monkeypatch.setattr(simulate, "_NP_STEP_US", 0.0 if way == "numpy" else float("inf"))
    _assert_replays_are_the_event_loops()


def test_replicate_in_blocks_is_one_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of replications draw from one generator in order: the result does not depend on the block."""
    job = _job(120, 13, (3, 2, 2), 0.4, 0.0, 0.2, False)
    whole = replicate(job, replications=9, seed=5)
    monkeypatch.setattr(simulate, "_BLOCK_CELLS", 2 * 120)
    blocks = replicate(job, replications=9, seed=5)
    assert blocks.makespans_s.tolist() == whole.makespans_s.tolist()
    assert blocks.events == whole.events
    rng = np.random.default_rng(5)
    assert whole.makespans_s.tolist() == [simulate_once(job, rng).makespan_ms / 1000.0 for _ in range(9)]


def test_rounds_are_the_event_loops(monkeypatch: pytest.MonkeyPatch) -> None:
    """The map stage by rounds (forced here: rounds priced at nothing) gives the event loop's replays."""
    monkeypatch.setattr(simulate, "_ROUND_US", 0.0)
    monkeypatch.setattr(simulate, "_ROUND_CELL_US", 0.0)
    _assert_replays_are_the_event_loops()


@pytest.mark.parametrize("cv", [0.0, 0.1, 1.0])
def test_rounds_place_maps_as_the_slot_heap(cv: float) -> None:
    """Many waves on many slots, ties (cv 0) and a wide spread (cv 1): each row as a heap of slots places it."""
    durations = np.random.default_rng(3).lognormal(0.0, cv, (7, 3_000)) * 100.0
    if cv == 0.0:
        durations = np.round(durations / 7.0) * 7.0
    ends, rounds = simulate._map_stage_rounds(durations, 64)
    expected = []
    for row in durations.tolist():
        slots = sorted(row[:64])
        for d in row[64:]:
            slots[0] += d
            slots.sort()
        expected.append(max(slots))
    assert ends.tolist() == expected
    assert 3_000 // 64 <= rounds <= 3_000 - 64
