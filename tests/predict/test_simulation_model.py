"""The simulation as a model: against the bounds and Vianna's queuing model, its event budget, its interval."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from phaseline.errors import PredictionError
from predict import core, critical_path, simulate
from predict.core import Cluster, Dataset, JobSettings
from predict.simulate import replicate
from predict.tasks import estimate_tasks
from profiles.profile import DurationStats
from tests.predict.doubles import LinearPlatform, _job, fig7a_slot_job, toy_profile


@pytest.mark.parametrize("typical", [True, False])
def test_a_profile_from_a_slower_cluster_is_not_slower_on_more_nodes(typical: bool) -> None:
    # The shape of job_201002080801_40864 (2 maps, 5 reduces, a 2010 cluster): first shuffles of
    # 57 s (113 s the longest) and a typical one of 113 s, predicted with a platform whose shuffle
    # costs ~0.2 s.  The first shuffle had kept its profiled 57 s while the typical one was priced
    # at 0.2 s, so each reduce more slots moved into the first wave drew the long first shuffle:
    # 74.8 s on 1 node, 106.3 s on 4, with this machine's platform model.
    # Without a typical shuffle (job_201002080801_50510: all 5 reduces in the first wave, 160 s
    # tails) the tail, which overlapped the maps, is no longer than a whole shuffle priced here.
    stages = {
        "map_task": DurationStats(2_700, 2_800, 2),
        "first_shuffle": DurationStats(57_000, 113_000, 4),
        "typical_shuffle": DurationStats(113_000, 113_000, 1),
        "reduce_phase": DurationStats(1_800, 2_600, 5),
    }
    if not typical:
        del stages["typical_shuffle"]
    profile = toy_profile(num_maps=2, num_reduces=5, stages=stages)
    platform, settings = LinearPlatform(), JobSettings(reduces=5)
    dataset = Dataset(profile.input.total_bytes)
    model = core.get("simulation")
    means = [model.predict(profile, platform, Cluster(n, 2, 2), dataset, settings).seconds for n in (1, 2, 4)]
    assert means[1] <= means[0] * 1.001
    assert means[2] <= means[1] * 1.001
    # the first shuffle stays in its profiled proportion to the typical one as the platform prices it,
    # or, with none profiled, is at most a whole one
    t = estimate_tasks(profile, platform, dataset, settings)
    assert t.first_shuffle_avg_ms == pytest.approx(t.shuffle_avg_ms * (57 / 113 if typical else 1.0))
    assert t.shuffle_avg_ms < 10_000


@pytest.mark.parametrize(("factor", "nodes"), [(1.0, 4), (4.0, 4), (2.0, 1)])
def test_model_mean_within_the_bounds_models_bounds(factor: float, nodes: int) -> None:
    profile, platform = toy_profile(), LinearPlatform()
    cluster, settings = Cluster(nodes, 2, 2), JobSettings(reduces=4)
    dataset = Dataset(profile.input.total_bytes * factor)
    sim = core.get("simulation").predict(profile, platform, cluster, dataset, settings)
    b = core.get("bounds").predict(profile, platform, cluster, dataset, settings)
    assert b.low_s is not None
    assert b.high_s is not None
    assert sim.low_s is not None
    assert sim.high_s is not None
    assert b.low_s <= sim.seconds <= b.high_s
    assert sim.low_s < sim.seconds < sim.high_s


def test_a_large_job_is_replayed_within_the_event_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    profile, platform = toy_profile(), LinearPlatform()
    args = (
        profile,
        platform,
        Cluster(4, 2, 2),
        Dataset(profile.input.total_bytes * 4),
        JobSettings(reduces=4),
    )
    full = core.get("simulation").predict(*args)
    assert full.dataflow["replications"] == 200
    events = full.dataflow["maps"] + 2 * 4  # a replication's events without failures
    monkeypatch.setattr(simulate, "EVENT_BUDGET", int(events * 80))
    budget = core.get("simulation").predict(*args)
    assert budget.dataflow["replications"] == 80
    assert any(
        f"80 seeded replications (seed {simulate.DEFAULT_SEED}), not 200" in n for n in budget.assumptions
    )
    assert budget.seconds == pytest.approx(full.seconds, rel=0.02)
    monkeypatch.setattr(simulate, "EVENT_BUDGET", 1)  # never fewer than MIN_REPLICATIONS
    assert core.get("simulation").predict(*args).dataflow["replications"] == simulate.MIN_REPLICATIONS


def test_a_job_too_large_to_replay_or_graph_is_refused_with_the_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An absurd split size (1 byte: 8 million maps) once kept both models busy for minutes and GBs.
    profile, platform = toy_profile(), LinearPlatform()
    args = (profile, platform, Cluster(4, 2, 2), Dataset(profile.input.total_bytes), JobSettings(reduces=4))
    maps = int(core.get("simulation").predict(*args).dataflow["maps"])
    monkeypatch.setattr(simulate, "MAX_REPLICATION_EVENTS", maps)
    with pytest.raises(PredictionError, match=f"{maps + 8:,} events a replication.*check the split size"):
        core.get("simulation").predict(*args)
    monkeypatch.setattr(critical_path, "MAX_GRAPH_TASKS", maps)
    with pytest.raises(PredictionError, match=r"task graph is limited to.*check the split size"):
        core.get("critical_path").predict(*args)


def test_environment_variation_widens_the_interval_not_the_mean() -> None:
    base = replicate(_job(), replications=400, seed=3)
    noisy = replicate(_job(env_cv=0.2), replications=400, seed=3)
    # the same replays, each scaled by its own lognormal factor of mean 1
    assert noisy.mean_s == pytest.approx(base.mean_s, rel=0.05)
    lo, hi = base.interval_s
    nlo, nhi = noisy.interval_s
    assert nhi - nlo > 3 * (hi - lo)
    factors = noisy.makespans_s / base.makespans_s
    assert float(np.std(factors) / np.mean(factors)) == pytest.approx(0.2, rel=0.15)
    with pytest.raises(PredictionError, match="env_cv"):
        _job(env_cv=-0.1)


def test_a_cv_measured_on_three_runs_widens_the_interval_by_its_own_uncertainty() -> None:
    known = replicate(_job(env_cv=0.1), replications=2000, seed=5)
    three = replicate(_job(env_cv=0.1, env_runs=3), replications=2000, seed=5)
    assert three.mean_s == known.mean_s  # the estimate is the replays' mean, before the factor
    factors = three.makespans_s / replicate(_job(), replications=2000, seed=5).makespans_s
    logs = np.log(factors) + math.log1p(0.01) / 2  # the log factor, centred
    sigma = math.sqrt(math.log1p(0.01) * (1 + 1 / 3))
    # Student t with 2 degrees of freedom, scaled: its 95th percentile is 2.92 sigma (a normal's: 1.64)
    assert float(np.quantile(logs, 0.95)) == pytest.approx(2.92 * sigma, rel=0.15)
    lo, hi = known.interval_s
    tlo, thi = three.interval_s
    assert thi - tlo > 1.5 * (hi - lo)


def test_model_takes_the_profiled_runs_variation() -> None:
    profile, platform = toy_profile(), LinearPlatform()
    cluster, settings, dataset = (
        Cluster(4, 2, 2),
        JobSettings(reduces=4),
        Dataset(profile.input.total_bytes * 2),
    )
    plain = core.get("simulation").predict(profile, platform, cluster, dataset, settings)
    varied = dataclasses.replace(profile, makespans_ms=(50_000.0, 60_000.0, 70_000.0))
    pred = core.get("simulation").predict(varied, platform, cluster, dataset, settings)
    assert pred.dataflow["env_cv"] == pytest.approx(varied.run_cv())
    assert plain.dataflow["env_cv"] == 0.0
    assert pred.low_s is not None
    assert plain.low_s is not None
    assert pred.high_s is not None
    assert plain.high_s is not None
    assert pred.high_s - pred.low_s > plain.high_s - plain.low_s
    assert any("run-to-run variation" in a for a in pred.assumptions)
    bounds = core.get("bounds").predict(varied, platform, cluster, dataset, settings)
    unstretched = core.get("bounds").predict(profile, platform, cluster, dataset, settings)
    assert bounds.seconds == pytest.approx(unstretched.seconds)  # ARIA's estimate is unchanged
    low_f, high_f = varied.run_interval()  # type: ignore[misc]  # the 90 % interval of another run
    assert bounds.low_s == pytest.approx(unstretched.low_s * low_f)  # type: ignore[operator]
    assert bounds.high_s == pytest.approx(unstretched.high_s * high_f)  # type: ignore[operator]
    assert low_f < 50 / 60  # wider than the runs' own range
    assert high_f > 70 / 60


# ---------------------------------------------------------------- cross-check: Vianna et al. 2013, Fig. 7
#: Vianna et al. 2013, section 5.2.1: their fork/join model vs their simulator, Fig. 7a (pm = ps = 1),
#: differs by at most 13 %; the issue asks our simulator and queuing model to agree as well.
VIANNA_FIG7A_RTOL = 0.13


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason=(
        "measured 2026-11-21, fork/join tree vs the slot simulator fed its task response times: m = 4 110.6 vs "
        "183.4 s (+66 %), 16: 148.3 vs 209.2 s (+41 %), 64: 298.6 vs 314.0 s (+5 %), 256: 898.5 vs 708.2 s "
        "(-21 %). Small m: the last phase counts the 4 symmetric merges as one fork/join branch (one 98 s "
        "merge), as Table 4 suggests (its pm = 4 fork/join column falls 9.3 s from ps = 1 to 5, the merge-demand "
        "drop 8.9 s times 1, not times H_3), while the simulator pays the maximum of 4 merges; exponential "
        "tasks (cv 1) instead of cv 0.72 make it +87 %. Large m: rule 1 of section 4.2.2 ends a phase at "
        "every map wave (the reduce blocks) and each costs H_2 x 8.34 = 12.5 s, as Table 4's pm = ps = 1 "
        "value (50 x 12.5 + ~100 s = 732.56 s) shows the paper's model does, while simulated map slots never "
        "join. The Tripathi tree is off by -19 % to -47 %. The queuing network itself, simulated task by task "
        "(predict.vianna.qnsim, the paper's section 5.1 reference), gives 188.6, 221.6, 319.3 and 720.5 s, "
        "within 6 % of the slot simulator: what differs is the tree's composition, not the simulator."
    ),
)
def test_simulator_agrees_with_the_queuing_model_on_vianna_fig7a() -> None:
    from predict.vianna.layout import Workload
    from predict.vianna.model import solve
    from tests.predict.doubles import table2

    demands = table2(1, 1)
    worst = 0.0
    for m in (4, 16, 64, 256):  # Table 3, simulation column: n = 4, c = 4, d = 1, r = 4, pr = 1
        sol = solve(demands, Workload(nodes=4, cpus=4, disks=1, maps=m, reduces=4, pm=1, pr=1, ps=1))
        sim = replicate(fig7a_slot_job(demands, sol.task_response_s, m), replications=500, seed=m).mean_s
        worst = max(worst, abs(sim / sol.response_time_s - 1))
    assert worst <= VIANNA_FIG7A_RTOL
