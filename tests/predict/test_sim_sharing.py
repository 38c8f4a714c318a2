"""Processor sharing in the simulation's replay (predict.sim_sharing): a node's running maps are re-rated
whenever one starts or ends there.

Known answers, no spread: four maps of 1 s demand on one node of three containers and one core.  The
first three share the core, 3 s each; the fourth starts as they end and runs alone, 1 s: 4 s.  Priced
once at its start (beside the two of the wave whose ends were not yet processed) it took 3 s: 6 s.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from predict.sim_events import simulate_once
from predict.sim_job import SimJob, StageDist
from predict.sim_sharing import CoreSharing


def _job(maps: tuple[float, ...], *, reduces: int = 0, cpus: int = 1) -> SimJob:
    return SimJob(
        map_means_ms=maps, map_cv=0.0, n_reduces=reduces, first_shuffle=StageDist(100.0), shuffle=StageDist(500.0),
        reduce=StageDist(200.0), nodes=1, map_slots_per_node=3, reduce_slots_per_node=3, shared_containers=True,
        cpus_per_node=cpus,
    )  # fmt: skip


def test_a_map_that_runs_alone_after_a_shared_wave_runs_at_its_own_speed() -> None:
    run = simulate_once(_job((1000.0,) * 4), np.random.default_rng(0), record=True)
    assert run.makespan_ms == pytest.approx(4000.0)
    ends = sorted(a.end_ms for a in run.attempts)
    assert ends == pytest.approx([3000.0, 3000.0, 3000.0, 4000.0])


def test_the_maps_left_speed_up_when_one_ends() -> None:
    # demands 1, 2 and 2 s on one core: all at 1/3 until 3 s (the first done), then the two at 1/2: 5 s
    run = simulate_once(_job((2000.0, 2000.0, 1000.0)), np.random.default_rng(0), record=True)
    assert sorted(a.end_ms for a in run.attempts) == pytest.approx([3000.0, 5000.0, 5000.0])


def test_two_cores_three_maps_and_a_reduce_as_before() -> None:
    # the counts never change within a wave: processor sharing prices as the start did
    job = dataclasses.replace(_job((10_000.0,) * 12, reduces=1, cpus=2), first_shuffle=StageDist(1000.0),
                              shuffle=StageDist(5000.0), reduce=StageDist(2000.0))  # fmt: skip
    assert simulate_once(job, np.random.default_rng(0)).makespan_ms == pytest.approx(63_000)


def test_a_retried_map_keeps_its_place_in_the_count() -> None:
    s = CoreSharing(cpus=1, slots_per_node=2)
    s.join(0)
    s.join(1)
    assert s.start(0, 0, now=0.0, demand=100.0, kind=0, seq=0) == pytest.approx(200.0)
    s.leave(0, 0, ended=False)  # failed: retried at once on its container
    assert s.count == {0: 2}
    assert not s.live(0, 0)
    assert s.start(0, 0, now=50.0, demand=100.0, kind=0, seq=5) == pytest.approx(200.0)
    assert s.live(0, 5)
