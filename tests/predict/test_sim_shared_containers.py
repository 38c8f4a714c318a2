"""The simulation on YARN's shared containers: the reduces' ramp-up, a map's container, the nodes' cores."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from phaseline.errors import PredictionError
from predict import core
from predict.core import Cluster, Dataset, JobSettings
from predict.simulate import SimJob, StageDist, simulate_once
from tests.predict.doubles import LinearPlatform, toy_profile


# ---------------------------------------------------------------- YARN: shared containers, reduce ramp-up
@pytest.mark.parametrize(
    ("containers", "maps", "done", "waiting", "reduces", "allowed"),
    [
        (3, 12, 3, 6, 1, 0),  # a quarter done: 0.75 of a container
        (3, 12, 4, 5, 1, 1),  # a third done: one container
        (3, 12, 9, 0, 4, 4),  # no map waits for a container: every reduce
        (10, 12, 5, 2, 8, 4),  # 10 x 5/12 = 4.2
        (10, 12, 9, 1, 8, 7),  # 10 x 0.5 = 5, and the 3 maps not done fit in the rest: 10 - 3
        (100, 1000, 900, 50, 200, 50),  # the ramp-up limit: half the containers at most
    ],
)
def test_reduces_are_ramped_up_as_hadoops_application_master_does(
    containers: int, maps: int, done: int, waiting: int, reduces: int, allowed: int
) -> None:
    from predict.container_allocation import reduces_allowed

    assert reduces_allowed(containers, maps, done, waiting, reduces, 0.5) == allowed


def _twelve_maps(shared: bool) -> SimJob:
    return SimJob(
        map_means_ms=(10_000.0,) * 12, map_cv=0.0, n_reduces=1, first_shuffle=StageDist(1000.0),
        shuffle=StageDist(5000.0), reduce=StageDist(2000.0), nodes=1, map_slots_per_node=3, reduce_slots_per_node=3,
        shared_containers=shared,
    )  # fmt: skip


def test_on_shared_containers_a_reduce_takes_a_maps_container_once_a_third_of_the_maps_are_done() -> None:
    """12 maps of 10 s on 3 containers, one reduce (1 s of shuffle tail, 2 s of reduce), no spread.

    Own slots: 4 waves of 3 maps, the reduce beside them: 40 + 1 + 2 = 43 s.  Shared: at 20 s the fourth
    map done frees the first container of the wave, which goes to the reduce (3 x 4/12 = 1 allowed);
    the six maps left run two at a time, 20-30, 30-40, 40-50: 50 + 1 + 2 = 53 s (the cluster's timeline,
    benchmarks/BACKTEST.md: the reduce starts as the fourth of 12 maps ends, the maps then run two at a time).
    """
    own = simulate_once(_twelve_maps(False), np.random.default_rng(0), record=True)
    shared = simulate_once(_twelve_maps(True), np.random.default_rng(0), record=True)
    assert own.makespan_ms == pytest.approx(43_000)
    assert shared.makespan_ms == pytest.approx(53_000)
    (red,) = [a for a in shared.attempts if a.task_type == "REDUCE"]
    assert red.start_ms == pytest.approx(20_000)
    running_maps_after = [a for a in shared.attempts if a.task_type == "MAP" and a.start_ms >= 20_000]
    assert (
        max(sum(1 for b in running_maps_after if b.start_ms == a.start_ms) for a in running_maps_after) == 2
    )


def test_the_simulation_on_a_yarn_cluster_shares_containers_and_replicates_the_same() -> None:
    profile = toy_profile()
    settings = JobSettings(reduces=4, io_sort_mb=100)
    yarn = Cluster(4, 3, 3, engine="yarn")
    slots = Cluster(4, 3, 3)
    sim = core.get("simulation")
    shared = sim.predict(profile, LinearPlatform(), yarn, Dataset(4 * 2**30), settings)
    own = sim.predict(profile, LinearPlatform(), slots, Dataset(4 * 2**30), settings)
    assert shared.seconds > own.seconds  # four reduces hold containers the maps then lack
    again = sim.predict(profile, LinearPlatform(), yarn, Dataset(4 * 2**30), settings)
    assert again.seconds == shared.seconds
    map_only = JobSettings(reduces=0, io_sort_mb=100)
    p0 = toy_profile(num_reduces=0)
    assert sim.predict(p0, LinearPlatform(), yarn, Dataset(4 * 2**30), map_only).seconds == pytest.approx(
        sim.predict(p0, LinearPlatform(), slots, Dataset(4 * 2**30), map_only).seconds
    )


def test_on_shared_containers_the_maps_share_the_nodes_cores() -> None:
    """The twelve maps of 10 s (their demand alone) on 3 containers of a 2-core node, cores given.

    The first two waves run three maps at once, each at 2/3 of a core: 15 s each, 0-15 and 15-30 s (at
    15 s three maps done allow no reduce yet).  At 30 s, six done, the reduce takes a container: the six
    maps left run two at a time on the two cores, 10 s each, 30-40, 40-50, 50-60; then 1 s of shuffle
    tail and 2 s of reduce: 63 s.
    Without the cores (each map as given, however many share the node) it is 53 s, as above.
    """
    job = dataclasses.replace(_twelve_maps(True), cpus_per_node=2)
    run = simulate_once(job, np.random.default_rng(0), record=True)
    assert run.makespan_ms == pytest.approx(63_000)
    first_wave = [a for a in run.attempts if a.task_type == "MAP" and a.start_ms == 0]
    assert [a.end_ms for a in first_wave] == pytest.approx([15_000] * 3)  # all three priced as sharing
    with pytest.raises(PredictionError, match="shared containers"):
        dataclasses.replace(_twelve_maps(False), cpus_per_node=2)


def test_the_yarn_simulation_shares_the_cores_where_the_profile_says_how_its_map_shared_them() -> None:
    """With the cores and the profiled map's sharing known, the replay takes the map's demand alone and
    shares the cores itself (no factor fixed for the whole run); without either, the means as given."""
    from predict.sim_job import shares_cores

    yarn = Cluster(1, 3, 3, cpus_per_node=2, engine="yarn")
    assert shares_cores(toy_profile(map_concurrency=3.0), yarn)
    assert not shares_cores(toy_profile(), yarn)
    assert not shares_cores(toy_profile(map_concurrency=3.0), Cluster(1, 3, 3, cpus_per_node=2))
    settings = JobSettings(reduces=1, io_sort_mb=100)
    got = core.get("simulation").predict(toy_profile(map_concurrency=3.0), LinearPlatform(), yarn,
                                         Dataset(4 * 2**30), settings)  # fmt: skip
    assert any("their demand alone" in note for note in got.assumptions)
    assert not any("for CPU contention" in note for note in got.assumptions)
