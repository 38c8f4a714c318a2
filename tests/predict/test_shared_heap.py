"""Garbage collection in one shared heap (predict/shared_heap.py): maps in one JVM stop each other.

Known answers by hand from d_t / d_p = 1 + s (c_t**2 / c_p**2 - 1), then the factor through the
models, and the share a profile takes from its maps' GC_TIME_MILLIS (profiles/gc_share.py).
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from pathlib import Path

import pandas as pd
import pytest

from phaseline.hadoop_names import LOCAL_ENGINE, YARN_ENGINE
from predict import core
from predict.contention import map_contention, map_demand_factor
from predict.core import Cluster, Dataset, JobSettings
from predict.shared_heap import gc_stall_factor
from profiles.gc_share import map_gc_share
from profiles.profile import JobProfile, ProfileSource
from tests.predict.doubles import GB, LinearPlatform, toy_profile

REPO = Path(__file__).resolve().parents[2]
LOCAL = ProfileSource(job_ids=("job_local1_0001",), job_name="tables", config={"io.sort.mb": "100"})


def local_profile(share: float | None, concurrency: float | None = 1.0, **changes: object) -> JobProfile:
    return toy_profile(source=LOCAL, map_gc_share=share, map_concurrency=concurrency, **changes)


@pytest.mark.parametrize(
    ("share", "profiled", "cluster", "maps", "factor"),
    [
        (0.2, 1.0, Cluster(1, 2, 2), 8, 1.6),  # one slot -> two in one JVM: 1 + 0.2 x (4 - 1)
        (0.2, 1.0, Cluster(1, 4, 4), 8, 4.0),  # four at once: 1 + 0.2 x 15
        (0.2, 1.0, Cluster(1, 4, 4), 2, 1.6),  # only two maps: two at once
        (0.2, 1.0, Cluster(1, 1, 1), 8, 1.0),  # one slot, as profiled
        (0.4, 2.0, Cluster(1, 2, 2), 8, 1.0),  # two slots, as profiled
        (0.4, 2.0, Cluster(1, 1, 1), 8, 0.7),  # two slots -> one: 1 + 0.4 x (1/4 - 1)
        (0.4, 2.0, Cluster(4, 2, 2, engine=YARN_ENGINE), 8, 0.7),  # a cluster: a JVM (and heap) per map
        (0.2, 1.0, Cluster(1, 2, 2, engine=LOCAL_ENGINE), 8, 1.6),  # the local engine said outright
        (0.2, 1.0, Cluster(4, 2, 2), 8, 1.0),  # four nodes and no engine said: a cluster, own JVMs
        (0.01, 1.0, Cluster(1, 2, 2), 8, 1.03),  # little allocated: barely changes
    ],
)
def test_the_factor_by_hand(share: float, profiled: float, cluster: Cluster, maps: int, factor: float) -> None:
    got, note = gc_stall_factor(local_profile(share, profiled), cluster, maps)
    assert got == pytest.approx(factor)
    assert (note is None) is (factor == pytest.approx(1.0))
    if note is not None:
        assert "garbage collection in one heap" in note
        assert f"{share:.0%}" in note


def test_no_factor_without_the_share_the_concurrency_or_one_jvm() -> None:
    cluster = Cluster(1, 2, 2)
    assert gc_stall_factor(local_profile(None), cluster, 8) == (1.0, None)
    assert gc_stall_factor(local_profile(0.0), cluster, 8) == (1.0, None)
    assert gc_stall_factor(local_profile(0.2, None), cluster, 8) == (1.0, None)
    assert gc_stall_factor(local_profile(0.2), None, 8) == (1.0, None)
    assert gc_stall_factor(local_profile(0.2), cluster, None) == (1.0, None)
    # a cluster's profile: each map had a JVM of its own, and its collections were its own
    assert gc_stall_factor(toy_profile(map_gc_share=0.2, map_concurrency=1.0), cluster, 8) == (1.0, None)


def test_both_contention_factors_carry_it_beside_the_cpu_share() -> None:
    profile = local_profile(0.2)
    crowded = Cluster(1, 4, 4, cpus_per_node=2)  # four maps at once on two cores, profiled alone
    factor, note = map_contention(profile, crowded, 8)
    assert factor == pytest.approx(2.0 * 4.0)  # CPU share 4/2, collections 1 + 0.2 x 15
    assert note is not None
    assert "CPU contention" in note
    assert "garbage collection" in note
    demand, said = map_demand_factor(profile, crowded, 8)
    assert demand == pytest.approx(4.0)  # the CPUs are the queueing network's; the heap's stalls are not
    assert said is not None
    assert "garbage collection" in said
    assert map_demand_factor(profile, crowded) == (1.0, None)  # no run size given: the heap not priced


@pytest.mark.parametrize("model", ["bounds", "critical_path", "simulation", "herodotou", "vianna"])
def test_a_map_only_job_on_two_slots_takes_the_factor_whole(model: str) -> None:
    """A map-only job whose maps spent a quarter of their time collecting, alone, predicted on two slots
    of one JVM: each map takes 1 + 0.25 x 3 = 1.75x its time, so the job (its map stage) 1.75x that of
    the same profile with no collections counted."""
    settings = JobSettings(reduces=0, io_sort_mb=100)
    cluster = Cluster(1, 2, 2)
    predictor = core.get(model)
    base = {"num_reduces": 0, "map_one_time_ms": None}
    none = predictor.predict(local_profile(None, **base), LinearPlatform(), cluster, Dataset(4 * GB), settings)
    gc = predictor.predict(local_profile(0.25, **base), LinearPlatform(), cluster, Dataset(4 * GB), settings)
    assert gc.seconds == pytest.approx(none.seconds * 1.75, rel=0.02)
    assert any("garbage collection in one heap" in note for note in gc.assumptions)


def test_the_share_is_a_maps_collections_over_the_typical_maps_time() -> None:
    """A collection lands in whichever map fills the young generation: a map's collection time is the
    mean over every map that counted one (one-time maps included), over the typical maps' mean time."""
    counters = pd.DataFrame({"attempt_id": ["m0", "m1", "m2", "m3", "r0"], "gc_ms": [300, 20, 30, None, 500]})
    ok = pd.DataFrame({
        "attempt_id": ["m0", "m1", "m2", "m3", "r0"],
        "task_type": ["MAP", "MAP", "MAP", "MAP", "REDUCE"],
        "start_ms": [0, 0, 100, 200, 0],
        "finish_ms": [1000, 100, 300, 300, 900],
    })  # fmt: skip
    # m3 counted none, r0 is a reduce: (300 + 20 + 30) / 3 over the typical m1-m3's (100 + 200 + 100) / 3
    assert map_gc_share(counters, ok, frozenset({"m0"})) == pytest.approx((350 / 3) / (400 / 3))
    assert map_gc_share(counters, ok, frozenset()) == pytest.approx((350 / 3) / (1400 / 4))
    # every map set apart: the typical duration is all maps'
    assert map_gc_share(counters, ok, frozenset({"m0", "m1", "m2", "m3"})) == pytest.approx((350 / 3) / (1400 / 4))
    assert map_gc_share(counters.assign(gc_ms=None), ok, frozenset()) is None
    # more collection than the typical map's time (a clock's rounding, a slow map's pause): at most 1
    assert map_gc_share(counters.assign(gc_ms=[0, 5000, 0, 0, 0]), ok, frozenset({"m0"})) == pytest.approx(1.0)


def test_several_runs_average_the_share_by_their_maps() -> None:
    from profiles.merge_runs import merge_profiles

    one = local_profile(0.1, num_maps=10)
    other = replace(local_profile(0.4, num_maps=30), source=replace(LOCAL, job_ids=("job_local2_0001",)))
    merged = merge_profiles([one, other])
    assert merged.map_gc_share == pytest.approx((0.1 * 10 + 0.4 * 30) / 40)


def test_a_real_local_run_gives_its_maps_collection_share(tmp_path: Path) -> None:
    """The bundled LocalJobRunner run (sample_traces): its typical maps' GC_TIME_MILLIS over their time,
    as the store holds both, is the profile's share (a share of its maps' time, so in [0, 1])."""
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store
    from profiles import queries as q
    from profiles.extract import extract_profile

    store = Store(tmp_path / "store")
    ingest_paths([REPO / "sample_traces" / "bench-8mb-sel0.6-jfr"], store)
    con = store.connect()
    (job_id,) = [j for (j,) in con.execute("SELECT job_id FROM jobs").fetchall()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the run's own caveats (its one-time maps): not this test's
        profile = extract_profile(con, job_id)
    counters = q.attempt_counters(con, job_id)
    attempts = q.JobFrames.query(con, job_id).attempts
    maps = attempts[(attempts["task_type"] == "MAP") & (attempts["status"] == "SUCCEEDED")]
    gc = maps["attempt_id"].map(counters.set_index("attempt_id")["gc_ms"])
    assert gc.notna().all()
    assert profile.map_gc_share is not None
    assert 0 <= profile.map_gc_share <= 1
    # the typical maps are some of these: their share lies between the least and the most of any map's
    shares = gc / (maps["finish_ms"] - maps["start_ms"])
    assert shares.min() <= profile.map_gc_share <= shares.max()
