"""ARIA bounds (Verma et al. 2011): hand-worked toys, a greedy-scheduler check, and invariants."""

from __future__ import annotations

import heapq
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phaseline.errors import PredictionError
from predict import core
from predict.bounds import BoundsModel, StageBounds, job_bounds, makespan_bounds
from predict.core import Cluster, Dataset, JobSettings
from predict.tasks import TaskEstimate, TaskEstimates
from tests.predict.doubles import GB, LinearPlatform, toy_profile

#: Slack for float comparisons of sums of many terms.
EPS = 1e-9


def test_three_slot_toy_by_hand() -> None:
    """7 tasks, mean 3, max 4, on 3 slots: 7*3/3 = 7 <= T <= 6*3/3 + 4 = 10."""
    assert makespan_bounds(7, 3.0, 4.0, 3) == StageBounds(7.0, 10.0)
    # fewer tasks than slots: one wave, lower = n*mu/k, upper = (n-1)*mu/k + lam
    b = makespan_bounds(2, 3.0, 4.0, 3)
    assert (b.low, b.high) == pytest.approx((2.0, 5.0))
    assert b.mid == pytest.approx(3.5)


def test_three_slot_toy_greedy_schedule_is_inside() -> None:
    """Durations 4,3,3,3,3,3,2 (mean 3, max 4) greedily on 3 slots.

    Slot ends: 4 | 3 | 3 -> the 4th task goes to a slot free at 3 (ends 6), the 5th likewise (6),
    the 6th to the slot free at 4 (ends 7), the last (2) to one free at 6: done at 8, inside [7, 10].
    """
    durations = [4.0, 3.0, 3.0, 3.0, 3.0, 3.0, 2.0]
    assert _greedy(durations, 3) == 8
    b = makespan_bounds(len(durations), sum(durations) / len(durations), max(durations), 3)
    assert b.low <= 8 <= b.high


def _greedy(durations: list[float], slots: int) -> float:
    free = [0.0] * slots
    for d in durations:
        heapq.heappush(free, heapq.heappop(free) + d)
    return max(free)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0.0, 1e4, allow_nan=False), min_size=1, max_size=60),
    st.integers(1, 16),
)
def test_greedy_makespan_always_within_bounds(durations: list[float], slots: int) -> None:
    """The theorem itself, checked against a greedy list scheduler on arbitrary task orders."""
    mean = sum(durations) / len(durations)
    b = makespan_bounds(len(durations), min(mean, max(durations)), max(durations), slots)
    t = _greedy(durations, slots)
    assert b.low - EPS * (1 + t) <= t <= b.high + EPS * (1 + t)


def test_job_composition_by_hand() -> None:
    """Map stage, first shuffle, typical shuffle and reduce stage on a 3+3 slot toy."""

    def task(ms: float) -> TaskEstimate:
        return TaskEstimate({"x": ms}, {}, 0.0)

    tasks = TaskEstimates(
        n_maps=6,
        n_reduces=6,
        map_avg=task(10),
        map_max=task(14),
        reduce_avg=task(5),
        reduce_max=task(7),
        shuffle_avg_ms=6,
        shuffle_max_ms=8,
        first_shuffle_avg_ms=4,
        first_shuffle_max_ms=5,
        shuffle_bytes_per_reduce=1.0,
        assumptions=(),
    )
    stages = job_bounds(tasks, Cluster(1, 3, 3))
    assert stages["map"].low == pytest.approx(20)
    assert stages["map"].high == pytest.approx(5 * 10 / 3 + 14)
    assert (stages["first_shuffle"].low, stages["first_shuffle"].high) == (4, 5)
    # (N_R/S_R - 1) * Sh_avg = 6 and ((N_R-1)/S_R - 1) * Sh_avg + Sh_max = 4 + 8
    assert stages["typical_shuffle"].low == pytest.approx(6)
    assert stages["typical_shuffle"].high == pytest.approx(12)
    assert stages["reduce"].low == pytest.approx(10)
    assert stages["reduce"].high == pytest.approx(25 / 3 + 7)
    # one reduce wave: no typical shuffle at all
    one_wave = job_bounds(replace(tasks, n_reduces=3), Cluster(1, 3, 3))
    assert one_wave["typical_shuffle"] == StageBounds(0.0, 0.0)


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(PredictionError):
        makespan_bounds(3, 5.0, 4.0, 2)
    with pytest.raises(PredictionError):
        makespan_bounds(3, 1.0, 4.0, 0)


def test_model_is_registered_and_reports_stages() -> None:
    model = core.get("bounds")
    p = model.predict(toy_profile(), LinearPlatform(), Cluster(4, 2, 2), Dataset(10 * GB), JobSettings(8))
    assert p.low_s is not None
    assert p.high_s is not None
    assert p.seconds == pytest.approx((p.low_s + p.high_s) / 2)
    assert sum(v for k, v in p.stages.items() if k.endswith(".low")) == pytest.approx(p.low_s)
    assert {"map.low", "first_shuffle.high", "typical_shuffle.low", "reduce.high"} <= set(p.stages)


def test_several_profiled_runs_stretch_the_bounds_by_the_prediction_interval() -> None:
    # The same prediction from a profile that knows three runs of its case: ARIA's estimate is kept,
    # the bounds widen by the 90 % interval of another run (JobProfile.run_interval), not by the range.
    args = (LinearPlatform(), Cluster(4, 2, 2), Dataset(10 * GB), JobSettings(8))
    one = BoundsModel().predict(toy_profile(), *args)
    varied = toy_profile(makespans_ms=(10_000.0, 12_000.0, 8_000.0))
    low_f, high_f = varied.run_interval()  # type: ignore[misc]
    three = BoundsModel().predict(varied, *args)
    assert three.seconds == pytest.approx(one.seconds)
    assert three.low_s == pytest.approx(one.low_s * low_f)  # type: ignore[operator]
    assert three.high_s == pytest.approx(one.high_s * high_f)  # type: ignore[operator]
    assert low_f < 0.8  # the runs' own range, 0.8x-1.2x the median, would be a 50 % interval
    assert high_f > 1.2
    assert any("90% prediction interval of another run" in n for n in three.assumptions)


profiles = st.builds(
    lambda sel, recs_ms, over: toy_profile(
        map_size_sel=sel, map_ms_per_record=recs_ms, map_task_overhead_ms=over
    ),
    st.floats(0.01, 5.0),
    st.floats(0.0, 0.01),
    st.floats(0.0, 5000.0),
)
sizes = st.integers(1 * 2**20, 200 * GB)
clusters = st.builds(Cluster, st.integers(1, 100), st.integers(1, 8), st.integers(1, 8))


@pytest.mark.filterwarnings("ignore::phaseline.errors.DataQualityWarning")  # random platform vs profile
@settings(max_examples=150, deadline=None)
@given(profiles, sizes, clusters, st.integers(0, 500))
def test_lower_le_estimate_le_upper(profile: object, size: int, cluster: Cluster, reduces: int) -> None:
    p = BoundsModel().predict(profile, LinearPlatform(), cluster, Dataset(size), JobSettings(reduces))  # type: ignore[arg-type]
    assert p.low_s is not None
    assert p.high_s is not None
    assert p.low_s <= p.seconds <= p.high_s


@pytest.mark.filterwarnings("ignore::phaseline.errors.DataQualityWarning")  # random platform vs profile
@settings(max_examples=150, deadline=None)
@given(
    profiles, sizes, clusters, st.integers(0, 500), st.integers(0, 8), st.integers(0, 8), st.integers(0, 50)
)
def test_more_slots_never_more_time(
    profile: object, size: int, cluster: Cluster, reduces: int, more_map: int, more_red: int, more_nodes: int
) -> None:
    bigger = Cluster(
        cluster.nodes + more_nodes,
        cluster.map_slots_per_node + more_map,
        cluster.reduce_slots_per_node + more_red,
    )
    args = (LinearPlatform(), Dataset(size), JobSettings(reduces))
    small = BoundsModel().predict(profile, args[0], cluster, args[1], args[2])  # type: ignore[arg-type]
    large = BoundsModel().predict(profile, args[0], bigger, args[1], args[2])  # type: ignore[arg-type]
    assert small.low_s is not None
    assert large.low_s is not None
    assert small.high_s is not None
    assert large.high_s is not None
    assert large.low_s <= small.low_s * (1 + EPS)
    assert large.high_s <= small.high_s * (1 + EPS)
    assert large.seconds <= small.seconds * (1 + EPS)
