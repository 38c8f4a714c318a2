"""The Vianna models as predictors: phases charged to devices, slow start, task spread, containers, idle nodes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from predict import core
from predict.core import Cluster, Dataset, JobSettings
from profiles.profile_stats import DurationStats
from tests.predict.doubles import CLUSTER, GB, LinearPlatform, toy_profile


def test_predictor_charges_phase_times_to_devices() -> None:
    # read/spill -> disk, map function + overhead -> cpu, shuffle -> network (predict.vianna.predictor).
    from predict.vianna.predictor import _charge

    notes: list[str] = []
    charged = _charge("map", {"read": 1000.0, "map": 2000.0, "spill": 500.0, "shuffle": 250.0}, 100.0, notes)
    assert charged == pytest.approx({"cpu": 2.1, "disk": 1.5, "network": 0.25})
    assert notes == []


def test_predictor_scales_demands_down_for_a_negative_calibrated_overhead() -> None:
    # The platform model prices the phases above the measured task: the calibrated overhead is
    # negative; the demands are scaled together to the calibrated task time (never below 0).
    from predict.vianna.predictor import _charge

    notes: list[str] = []
    charged = _charge("map", {"read": 1000.0, "map": 500.0, "spill": 500.0}, -1000.0, notes)
    assert charged == pytest.approx({"cpu": 0.25, "disk": 0.75})  # 2 s priced, 1 s measured: x 0.5
    assert sum(charged.values()) == pytest.approx(1.0)
    assert len(notes) == 1
    assert "map overhead calibrated negative (-1000 ms" in notes[0]
    assert "scaled by 0.50" in notes[0]
    notes.clear()
    assert _charge("merge", {"merge": 100.0}, -500.0, notes) == {"cpu": 0.0, "disk": 0.0}
    assert "scaled by 0.00" in notes[0]


def test_vianna_prices_a_one_node_clusters_shuffle() -> None:
    # every fetch on one node is local; the paper's local shuffle-sort has no network demand, and with the
    # shuffle charged to the network alone the local engine's shuffles cost nothing (0.000 s)
    one = replace(CLUSTER, nodes=1)
    p = core.get("vianna").predict(
        toy_profile(), LinearPlatform(), one, Dataset(5 * GB), JobSettings(reduces=8)
    )
    assert p.phases["shuffle_sort.response"] > 0
    assert p.dataflow["utilization_network"] == 0.0
    assert any("a fetch from the reduce's own node -> disk" in a for a in p.assumptions)


def test_the_vianna_models_take_the_jobs_slow_start() -> None:
    profile, platform = toy_profile(), LinearPlatform()
    one = Cluster(nodes=1, map_slots_per_node=1, reduce_slots_per_node=1)
    at_end = JobSettings(reduces=1, slowstart=1.0)
    p = core.get("vianna").predict(profile, platform, one, Dataset(GB), at_end)
    t = core.get("vianna_tripathi").predict(profile, platform, one, Dataset(GB), at_end)
    assert p.seconds == pytest.approx(t.seconds, rel=0.02)  # one branch a phase: the estimates agree
    early = core.get("vianna").predict(
        profile, platform, one, Dataset(GB), JobSettings(reduces=1, slowstart=0.05)
    )
    assert early.seconds > p.seconds
    assert any("once 1 of the" in a for a in early.assumptions)
    assert any(f"once {int(p.dataflow['maps'])} of the" in a for a in p.assumptions)


def test_tripathis_tasks_spread_as_the_profile_measured_them() -> None:
    # wider measured spread -> a longer maximum of each wave; fork/join (means only) does not move
    platform, settings = LinearPlatform(), JobSettings(reduces=4)
    narrow = toy_profile()  # maps 10 s on average, 12 s at most of 20: cv 0.082
    wide = toy_profile(stages={**narrow.stages, "map_task": DurationStats(10_000, 30_000, 20)})  # cv 0.82
    t_narrow = core.get("vianna_tripathi").predict(narrow, platform, CLUSTER, Dataset(4 * GB), settings)
    t_wide = core.get("vianna_tripathi").predict(wide, platform, CLUSTER, Dataset(4 * GB), settings)
    assert t_wide.seconds > t_narrow.seconds
    assert "coefficient of variation map 0.08, shuffle_sort 0.14, merge 0.12" in " ".join(
        t_narrow.assumptions
    )
    assert "map 0.82" in " ".join(t_wide.assumptions)
    fj = [core.get("vianna").predict(p, platform, CLUSTER, Dataset(4 * GB), settings) for p in (narrow, wide)]
    assert fj[0].seconds == fj[1].seconds
    assert not any("coefficient of variation" in a for a in fj[0].assumptions)


def test_tripathis_tree_holds_the_maps_yarns_application_master_leaves_them() -> None:
    # 3 containers a node on YARN: from the seventh of 20 map completions (3 x 7/20 >= 1) the AM gives
    # the reduce one of them, so the maps hold (7 x 3 + 13 x 2) / 20 = 2.35 on average, 2 in the tree;
    # slots (no engine) keep 3.
    from predict.container_allocation import map_containers

    profile, platform, settings = toy_profile(), LinearPlatform(), JobSettings(reduces=1)
    yarn = Cluster(nodes=1, map_slots_per_node=3, reduce_slots_per_node=3, engine="yarn")
    slots = replace(yarn, engine=None)
    assert map_containers(3, 20, 1, settings.slowstart, settings.reduce_rampup_limit) == pytest.approx(2.35)
    tripathi, fork_join = core.get("vianna_tripathi"), core.get("vianna")
    data = Dataset(profile.input.total_bytes)  # the profiled 20 maps
    on_yarn = tripathi.predict(profile, platform, yarn, data, settings)
    on_slots = tripathi.predict(profile, platform, slots, data, settings)
    assert on_yarn.seconds > on_slots.seconds  # fewer maps at a time: more waves
    assert "maps take 2 of a node's 3 containers at a time (2.35 on average" in " ".join(on_yarn.assumptions)
    assert not any("containers at a time" in a for a in on_slots.assumptions)
    # fork/join keeps the paper's layout; a map-only job keeps every container for its maps
    assert fork_join.predict(profile, platform, yarn, data, settings).seconds == pytest.approx(
        fork_join.predict(profile, platform, slots, data, settings).seconds, rel=1e-12
    )
    map_only = [tripathi.predict(profile, platform, c, data, JobSettings(reduces=0)) for c in (yarn, slots)]
    assert map_only[0].seconds == pytest.approx(map_only[1].seconds, rel=1e-12)


def test_vianna_on_more_nodes_than_tasks_solves_the_busy_ones() -> None:
    # The layout puts task i on node i; nodes past the tasks hold none and, with a link per node,
    # change nothing.  A billion nodes had built per-node arrays of that length (7.5 GiB, or an
    # OverflowError for 1e21); a million, an identity matrix of 8 TB.
    model, settings = core.get("vianna"), JobSettings(reduces=4)
    profile = toy_profile()  # 20 maps, 4 reduces
    dataset = Dataset(profile.input.total_bytes)
    just = model.predict(profile, LinearPlatform(), Cluster(20, 2, 2), dataset, settings)
    for nodes in (21, 10**6, 10**21):
        many = model.predict(profile, LinearPlatform(), Cluster(nodes, 2, 2), dataset, settings)
        assert many.seconds == pytest.approx(just.seconds, rel=1e-9)
        assert any("the other" in a and "idle" in a for a in many.assumptions)
