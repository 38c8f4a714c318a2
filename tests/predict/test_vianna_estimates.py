"""The job's estimate over the precedence tree: fork/join's H_k against Tripathi's maximum and task spread."""

from __future__ import annotations

import numpy as np
import pytest

from predict.vianna.estimates import Moments, forkjoin_max, harmonic, mean_min_exponential, tripathi_max
from predict.vianna.layout import Workload
from predict.vianna.model import Demands, Estimate, evaluate_tree, solve
from predict.vianna.tree import Leaf, ParallelAnd, Serial


def test_estimates() -> None:
    assert harmonic(4) == pytest.approx(25 / 12)
    assert harmonic(1000) == pytest.approx(sum(1 / i for i in range(1, 1001)), rel=1e-12)
    fj = forkjoin_max([(Moments.exponential(2.0), 1), (Moments.exponential(3.0), 1)])
    assert fj.mean == pytest.approx(1.5 * 3.0)
    # max of k iid exponentials has mean H_k * mean: Tripathi's numerical maximum must find it
    trip = tripathi_max([(Moments.exponential(3.0), 4)])
    assert trip.mean == pytest.approx(harmonic(4) * 3.0, rel=1e-4)
    assert trip.var == pytest.approx(9.0 * (1 + 1 / 4 + 1 / 9 + 1 / 16), rel=1e-3)
    # max of a deterministic 5 and an exponential(1): 5 + e^-5
    det = tripathi_max([(Moments(5.0, 0.0), 1), (Moments.exponential(1.0), 1)])
    assert det.mean == pytest.approx(5.0 + np.exp(-5.0), rel=1e-4)
    assert mean_min_exponential([8.0, 8.0, 4.0]) == pytest.approx(2.0)


def test_leaves_spread_as_measured_replace_the_exponential_in_tripathis_maximum() -> None:
    # four parallel maps of 3 s then a 1 s merge: exponential leaves give H_4 x 3 + 1; leaves of cv 0
    # the plain 3 + 1; cv 0.2 lies between, and fork/join (means only) is the same either way
    wave = ParallelAnd(((Leaf(0, 3.0), 4),), phase=True)
    tree = Serial((wave, Leaf(1, 1.0)))
    exponential = evaluate_tree(tree, Estimate.TRIPATHI)
    assert exponential.mean == pytest.approx(harmonic(4) * 3.0 + 1.0, rel=1e-4)
    assert evaluate_tree(tree, Estimate.TRIPATHI, [1.0, 1.0]) == exponential
    assert evaluate_tree(tree, Estimate.TRIPATHI, [0.0, 0.0]).mean == pytest.approx(4.0, rel=1e-9)
    spread = evaluate_tree(tree, Estimate.TRIPATHI, [0.2, 0.5])
    # the max of 4 gamma (shape 25) draws of mean 3: 3.6365 by 400,000 draws of numpy's gamma
    assert spread.mean - 1.0 == pytest.approx(3.6365, abs=2e-3)
    assert spread.var == pytest.approx(evaluate_tree(wave, Estimate.TRIPATHI, [0.2]).var + 0.25, rel=1e-9)
    for cv in (None, [0.0, 0.0], [0.2, 0.5]):
        assert evaluate_tree(tree, Estimate.FORKJOIN, cv).mean == pytest.approx(harmonic(1) * 3.0 + 1.0)


def test_solve_reads_each_task_kinds_spread_and_only_tripathi_uses_it() -> None:
    from predict.vianna.layout import TaskKind

    demands = Demands({"cpu": 1.0, "disk": 0.5}, {"cpu": 0.1, "disk": 0.1}, {"cpu": 2.0})
    work = Workload(2, 2, 1, 16, 2, 2, 1, 5)
    narrow = {TaskKind.MAP: 0.1, TaskKind.SHUFFLE_SORT: 0.1, TaskKind.MERGE: 0.1}
    exponential = dict.fromkeys(TaskKind, 1.0)
    plain = solve(demands, work, estimate=Estimate.TRIPATHI)
    assert (
        solve(demands, work, estimate=Estimate.TRIPATHI, task_cv=exponential).response_time_s
        == plain.response_time_s
    )
    assert (
        solve(demands, work, estimate=Estimate.TRIPATHI, task_cv=narrow).response_time_s
        < plain.response_time_s
    )
    fj = solve(demands, work, estimate=Estimate.FORKJOIN).response_time_s
    assert solve(demands, work, estimate=Estimate.FORKJOIN, task_cv=narrow).response_time_s == fj


def test_tripathi_prices_a_map_beside_a_tiny_fetch_as_the_map() -> None:
    # The local engine's shape (one node, one map slot, one reduce): each map wave is a parallel phase
    # of the map (0.26 s) and the reduce's fetch of the previous map's output (0.007 s).  Fork/join
    # prices it at H_2 x the larger mean (0.39 s a wave); Tripathi's maximum of the two branches is
    # about the map.  8 maps: the grep backtest case measured 1.79 s, fork/join gave 3.05 s.
    work = Workload(nodes=1, cpus=2, disks=1, maps=8, reduces=1, pm=1, pr=1, ps=5, network_per_node=True)
    demands = Demands(map={"cpu": 0.09, "disk": 0.17}, shuffle_sort={"network": 0.007},
                      merge={"cpu": 0.01, "disk": 0.07}, local_network_to="disk")  # fmt: skip
    forkjoin = solve(demands, work, estimate=Estimate.FORKJOIN).response_time_s
    tripathi = solve(demands, work, estimate=Estimate.TRIPATHI).response_time_s
    sequential = 8 * 0.26 + 0.007 + 0.08
    assert tripathi == pytest.approx(sequential, rel=0.1)
    assert forkjoin > 1.3 * sequential
    # both are models of the prediction core, each with its estimate (the same profile, the same demands)
    from predict import core

    assert {"vianna", "vianna_tripathi"} <= set(core.models())
    assert core.get("vianna").estimate is Estimate.FORKJOIN  # type: ignore[attr-defined]
    assert core.get("vianna_tripathi").estimate is Estimate.TRIPATHI  # type: ignore[attr-defined]
