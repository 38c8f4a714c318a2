"""CPU contention (predict/contention.py): more maps at once on a node than it has cores share them.

Known answers by hand, then the factor seen through each model that applies it,
and the attempt concurrency a profile takes it from (attempt_concurrency.sql).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from predict import core
from predict.contention import cpu_share_factor, map_contention
from predict.core import Cluster, Dataset, JobSettings
from tests.predict.doubles import GB, LinearPlatform, toy_profile
from tests.profiles.profiles_doubles import make_con


def test_tasks_share_cores_only_beyond_one_each() -> None:
    assert cpu_share_factor(1, 2) == 1.0
    assert cpu_share_factor(2, 2) == 1.0
    assert cpu_share_factor(3, 2) == 1.5
    assert cpu_share_factor(8, 4) == 2.0


@pytest.mark.parametrize(
    ("profiled", "slots", "cpus", "maps", "factor"),
    [
        (2.0, 3, 2, 12, 1.5),  # the mini YARN cluster: three task containers on two cores, profile at two
        (3.0, 3, 2, 12, 1.0),  # profiled as crowded as the run will be
        (2.25, 3, 2, 12, 1.5 / 1.125),
        (1.0, 2, 2, 64, 1.0),  # LocalJobRunner: two slots on two cores never share
        (2.0, 3, 2, 1, 1.0),  # one map alone on a node
        (1.0, 8, 4, 16, 2.0),  # 8 at once on 4 cores, profiled alone
        (1.0, 8, 4, 6, 1.5),  # fewer maps per node than slots: 6 at once
    ],
)
def test_the_factor_is_the_change_of_cpu_share(profiled: float, slots: int, cpus: int, maps: int, factor: float) -> None:
    profile = toy_profile(map_concurrency=profiled)
    got, note = map_contention(profile, Cluster(1, slots, slots, cpus_per_node=cpus), maps)
    assert got == pytest.approx(factor)
    assert (note is None) is (factor == pytest.approx(1.0))


def test_no_factor_where_the_cores_or_the_profiles_concurrency_are_not_known() -> None:
    assert map_contention(toy_profile(map_concurrency=2.0), Cluster(1, 3, 3), 12) == (1.0, None)
    assert map_contention(toy_profile(), Cluster(1, 3, 3, cpus_per_node=2), 12) == (1.0, None)
    assert map_contention(toy_profile(map_concurrency=2.0), None, 12) == (1.0, None)


@pytest.mark.parametrize("model", ["bounds", "critical_path", "simulation", "herodotou"])
def test_models_that_price_no_contention_scale_their_maps(model: str) -> None:
    """A map-only job: its whole prediction is the map stage, so it takes the factor whole (the profile's
    one-time term, a constant, aside)."""
    profile = toy_profile(num_reduces=0, map_concurrency=2.0, map_one_time_ms=None)
    settings = JobSettings(reduces=0, io_sort_mb=100)
    dataset = Dataset(4 * GB)
    predictor = core.get(model)
    alone = predictor.predict(profile, LinearPlatform(), Cluster(4, 6, 6), dataset, settings)
    shared = predictor.predict(profile, LinearPlatform(), Cluster(4, 6, 6, cpus_per_node=2), dataset, settings)
    assert shared.seconds == pytest.approx(alone.seconds * 3, rel=0.02)  # 6 at once on 2 cores, profiled at 2 (1 each)
    assert any("CPU contention" in note for note in shared.assumptions)


def test_vianna_prices_the_cpus_itself_and_takes_the_maps_demand_alone() -> None:
    """Its queueing network shares the cores: it takes the profiled map's demand alone, the profile's
    share undone (3 tasks on 2 cores: the map alone takes 2/3 of its profiled time), never the factor."""
    from predict.contention import map_demand_factor

    cluster = Cluster(4, 6, 6, cpus_per_node=2)
    assert map_demand_factor(toy_profile(map_concurrency=3.0), cluster)[0] == pytest.approx(2 / 3)
    assert map_demand_factor(toy_profile(map_concurrency=2.0), cluster) == (1.0, None)
    assert map_demand_factor(toy_profile(map_concurrency=3.0), Cluster(4, 6, 6)) == (1.0, None)
    settings = JobSettings(reduces=4, io_sort_mb=100)
    vianna = core.get("vianna")
    crowded = vianna.predict(toy_profile(map_concurrency=3.0), LinearPlatform(), cluster, Dataset(4 * GB), settings)
    alone = vianna.predict(toy_profile(map_concurrency=2.0), LinearPlatform(), cluster, Dataset(4 * GB), settings)
    assert not any("CPU contention" in note for note in crowded.assumptions)
    assert any("their demand alone" in note for note in crowded.assumptions)
    assert crowded.seconds < alone.seconds


def test_attempt_concurrency_is_the_time_weighted_count_on_the_host() -> None:
    """host h1: a [0, 12) with b [0, 6) beside it, then c [12, 20) alone; host h2: d [0, 10) alone.

    a: 2 for 6 ms, 1 for 6 ms -> 1.5;  b: 2 -> 2.0;  c: 1.0;  d: 1.0 (another host);
    e, a 0 ms attempt on h1 at 12: no concurrency (and no weight).
    """
    rows = [
        ("a", "h1", 0, 12), ("b", "h1", 0, 6), ("c", "h1", 12, 20), ("d", "h2", 0, 10), ("e", "h1", 12, 12),
    ]  # fmt: skip
    attempts = [
        {"job_id": "job_1_0001", "task_id": f"task_1_0001_m_{i}", "attempt_id": f"attempt_1_0001_m_{name}_0",
         "task_type": "MAP", "status": "SUCCEEDED", "start_ms": s, "finish_ms": f, "host": host}
        for i, (name, host, s, f) in enumerate(rows)
    ]  # fmt: skip
    from profiles import queries as q

    df = q.attempt_concurrency(make_con({"attempts": attempts}), "job_1_0001")
    got = {a.split("_")[-2]: c for a, c in zip(df["attempt_id"], df["concurrency"], strict=True)}
    assert got["a"] == pytest.approx(1.5)
    assert got["b"] == pytest.approx(2.0)
    assert got["c"] == pytest.approx(1.0)
    assert got["d"] == pytest.approx(1.0)
    assert got["e"] is None or got["e"] != got["e"]  # NULL: no duration


def test_a_profile_keeps_its_typical_maps_concurrency_through_json() -> None:
    from profiles.profile import JobProfile

    profile = toy_profile(map_concurrency=2.25)
    assert JobProfile.from_json(profile.to_json()).map_concurrency == 2.25
    assert replace(profile, map_concurrency=None).map_concurrency is None
