"""The first shuffle's tail past the map stage (ARIA's Sh1): kept as profiled on the cluster the
platform model was measured on, no longer than a whole priced shuffle elsewhere."""

from __future__ import annotations

import dataclasses

import pytest

from platform_model.engine.yarn import ClusterShape
from predict import core
from predict.backtest_suite import loopback_cluster
from predict.core import Cluster, Dataset, JobSettings
from predict.measured_on import measured_on
from predict.tasks import estimate_tasks
from profiles.profile import DurationStats, ProfileSource
from tests.predict.doubles import YARN_2X2, LinearPlatform, MeasuredPlatform, toy_profile

MEASURED = loopback_cluster(ClusterShape())  # 1 node, 3 task containers: the platform's own
OTHER = Cluster(8, 2, 2, engine="yarn")
TAIL = DurationStats(40_000.0, 45_000.0, 2)


def _profile(*, local: bool = False, typical: bool = False) -> object:
    """The toy profile with its reduces launched under the maps (slow-start 0.05): a 40 s tail."""
    stages = {"map_task": DurationStats(10_000, 12_000, 20), "first_shuffle": TAIL,
              "reduce_phase": DurationStats(5_000, 6_000, 4)}  # fmt: skip
    if typical:
        stages["typical_shuffle"] = DurationStats(6_000, 7_000, 2)
    jobs = ("job_local1_0001",) if local else ("job_1_0001",)
    source = ProfileSource(job_ids=jobs, job_name="wordcount", config={"io.sort.mb": "100"})
    return toy_profile(stages=stages, source=source, num_reduces=4)


def _tasks(platform: LinearPlatform, cluster: Cluster | None, scale: float = 1.0, **kw: bool) -> object:
    profile = _profile(**kw)
    dataset = Dataset(profile.input.total_bytes * scale)  # type: ignore[attr-defined]
    return estimate_tasks(profile, platform, dataset, JobSettings(reduces=4), cluster=cluster)  # type: ignore[arg-type]


def test_measured_on_needs_the_platforms_record_and_its_shape() -> None:
    assert measured_on(MeasuredPlatform(YARN_2X2), MEASURED)
    assert measured_on(MeasuredPlatform(YARN_2X2), Cluster(2, 2, 2))
    assert not measured_on(MeasuredPlatform(YARN_2X2), OTHER)
    assert not measured_on(LinearPlatform(), MEASURED)  # no record: not judged, so not the same


@pytest.mark.parametrize("scale", [1.0, 3.0, 8.0])
def test_the_tail_is_kept_as_profiled_on_the_measured_cluster(scale: float) -> None:
    t = _tasks(MeasuredPlatform(YARN_2X2), MEASURED, scale)
    assert t.first_shuffle_avg_ms == TAIL.avg_ms  # type: ignore[attr-defined]
    assert t.first_shuffle_max_ms == TAIL.max_ms  # type: ignore[attr-defined]
    assert any("kept as measured" in a for a in t.assumptions)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("platform", "cluster"),
    [(MeasuredPlatform(YARN_2X2), OTHER), (LinearPlatform(), MEASURED), (MeasuredPlatform(YARN_2X2), None)],
)
def test_elsewhere_the_tail_is_no_longer_than_a_whole_priced_shuffle(platform: LinearPlatform,
                                                                    cluster: Cluster | None) -> None:
    t = _tasks(platform, cluster, 3.0)
    # at 3x the toy's 4 reduces each fetch ~0.46 GB: the platform prices a whole shuffle at ~14 s
    assert t.shuffle_avg_ms < TAIL.avg_ms  # type: ignore[attr-defined]
    assert t.first_shuffle_avg_ms == pytest.approx(t.shuffle_avg_ms)  # type: ignore[attr-defined]


def test_a_profile_with_a_typical_shuffle_or_no_overlap_is_as_before() -> None:
    platform = MeasuredPlatform(YARN_2X2)
    for kw in ({"typical": True}, {"local": True}):  # a later wave's shuffle; LocalJobRunner: no slow start
        on, off = _tasks(platform, MEASURED, 3.0, **kw), _tasks(platform, OTHER, 3.0, **kw)
        assert on.first_shuffle_avg_ms == pytest.approx(off.first_shuffle_avg_ms)  # type: ignore[attr-defined]
        assert not any("kept as measured" in a for a in on.assumptions)  # type: ignore[attr-defined]


def test_every_model_that_reads_the_first_shuffle_adds_the_kept_tail() -> None:
    profile = _profile()
    dataset, settings = Dataset(profile.input.total_bytes * 3), JobSettings(reduces=4)  # type: ignore[attr-defined]
    record, bare = MeasuredPlatform(YARN_2X2), LinearPlatform()
    for name in ("bounds", "critical_path", "simulation"):
        kept = core.get(name).predict(profile, record, MEASURED, dataset, settings)  # type: ignore[arg-type]
        bounded = core.get(name).predict(profile, bare, MEASURED, dataset, settings)  # type: ignore[arg-type]
        assert kept.seconds > bounded.seconds, name


def test_the_cluster_given_for_the_tail_alone_shares_no_cores() -> None:
    # the critical path prices the cores' share after its own pipeline: the cluster it passes says only
    # whether the platform was measured there, and the maps are as without one
    profile = dataclasses.replace(_profile(), map_concurrency=1.0)  # type: ignore[type-var]
    busy = Cluster(1, 6, 6, cpus_per_node=2)  # 6 maps at once on 2 cores, where the profile's ran alone
    dataset, settings, platform = Dataset(profile.input.total_bytes), JobSettings(reduces=4), LinearPlatform()
    shared = estimate_tasks(profile, platform, dataset, settings, cluster=busy)
    alone = estimate_tasks(profile, platform, dataset, settings, cluster=busy, share_cores=False)
    bare = estimate_tasks(profile, platform, dataset, settings)
    assert shared.map_avg.total_ms > bare.map_avg.total_ms
    assert alone.map_avg.total_ms == bare.map_avg.total_ms
