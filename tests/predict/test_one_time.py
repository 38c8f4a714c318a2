"""The one-time map cost a prediction adds (predict.map_one_time.one_time_ms, issue 37).

The first wave's extra is every slot's; in one JVM a later map's stall is one of the job's
compiles, which a run on more slots shares among them as far as the stalled map's own length lets
them (Graham's bound).  Known answers: a one-slot LocalJobRunner profile whose third map stalled
(groupby's numbers in the five-run suite) predicts a two-slot run of many maps with half the stall
and the whole first-wave extra, and one of few maps with the whole stall.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from ingest.pipeline import ingest_paths
from phaseline.errors import DataQualityWarning
from phaseline.hadoop_names import LOCAL_ENGINE, YARN_ENGINE
from phaseline.store import Store
from predict import core
from predict.core import Cluster, Dataset, JobSettings
from predict.jhist_writer import SimTrace, write_jhist
from predict.map_one_time import one_time_ms, shares_one_jvm
from predict.simulate import Attempt, SimRun
from profiles.extract import extract_profile
from profiles.profile import JobProfile, Stage
from profiles.task_costs import split_first_wave
from tests.predict.doubles import LinearPlatform

#: A one-slot run's maps in order: the first pays the class loading, the third a run-time compile.
DURATIONS = [90.0, 46.0, 615.0, 52.0]
SPLIT = 2**20
RECORDS = 10_000


def test_the_split_keeps_the_later_waves_extra_apart() -> None:
    s = split_first_wave(DURATIONS, [1, 2, 3, 4], 1, one_jvm=True)
    assert s.fastest
    assert s.typical_avg_ms == 46.0
    assert s.one_time_ms == pytest.approx(sum(DURATIONS) - 4 * 46.0)  # 619 ms on the one slot
    assert s.later_excess_ms == pytest.approx((615 - 46) + (52 - 46))  # 575 ms of it in later maps
    first = s.slots * s.one_time_ms - s.later_excess_ms
    assert first == pytest.approx(90 - 46)


def test_a_later_excess_never_exceeds_the_term_nor_falls_below_zero() -> None:
    fast_later = split_first_wave([600.0, 40.0, 41.0, 39.0, 40.0, 40.0], [1, 2, 3, 4, 5, 6], 1)
    assert fast_later.later_excess_ms == pytest.approx(0.0, abs=1.0)
    assert 0.0 <= fast_later.later_excess_ms <= fast_later.slots * fast_later.one_time_ms


def _profile(tmp_path: Path, tracker: str) -> JobProfile:
    attempts, t = [], 0.0
    for i, d in enumerate(DURATIONS):  # one slot: each map after the other
        attempts.append(Attempt("MAP", i, 0, 0, t, t + d, True))
        t += d
    run = SimRun(makespan_ms=t, events=2 * len(DURATIONS), attempts=tuple(attempts))
    trace = SimTrace(sequence=1, job_name="groupby", tracker=tracker,
                     map_counters={"MAP_INPUT_RECORDS": RECORDS, "MAP_OUTPUT_RECORDS": RECORDS},
                     map_input_bytes=SPLIT, map_output_file_bytes=SPLIT)  # fmt: skip
    path = write_jhist(run, tmp_path, n_maps=len(DURATIONS), n_reduces=0, trace=trace)
    store = Store(tmp_path / "store")
    ingest_paths([path], store)
    with pytest.warns(DataQualityWarning):  # one slot, three later maps: thin evidence, said
        return extract_profile(store.connect(), trace.job_id)


def test_which_runs_share_one_jvm(tmp_path: Path) -> None:
    local = _profile(tmp_path, "local42")
    assert local.source.local_runner
    assert shares_one_jvm(local, Cluster(1, 2, 2))  # no engine said, one node: the local engine
    assert shares_one_jvm(local, Cluster(1, 4, 1, engine=LOCAL_ENGINE))
    assert not shares_one_jvm(local, Cluster(2, 2, 2))
    assert not shares_one_jvm(local, Cluster(1, 2, 2, engine=YARN_ENGINE))
    cluster_run = dataclasses.replace(local, source=dataclasses.replace(local.source, job_ids=("job_1_0001",)))
    assert not shares_one_jvm(cluster_run, Cluster(1, 2, 2))


def test_a_one_slot_profile_shares_its_later_stall_on_two_slots(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "local42")
    assert profile.map_slots == 1
    assert profile.map_one_time_ms == pytest.approx(619.0)
    assert profile.map_one_time_later_ms == pytest.approx(575.0)
    assert one_time_ms(profile, Cluster(1, 1, 1), 32) == pytest.approx(619.0)  # its own slots: as profiled
    assert one_time_ms(profile, Cluster(1, 2, 2), 32) == pytest.approx(44.0 + 575.0 / 2)
    assert one_time_ms(profile, Cluster(1, 2, 2), 1) == pytest.approx(619.0)  # one map runs on one slot
    assert one_time_ms(profile, Cluster(1, 2, 2, engine=YARN_ENGINE), 32) == pytest.approx(619.0)
    assert one_time_ms(profile) == pytest.approx(619.0)  # no cluster: per slot, as before


@pytest.mark.parametrize("model", core.models())
def test_every_model_adds_the_shared_term(tmp_path: Path, model: str) -> None:
    profile = _profile(tmp_path, "local42")
    platform = LinearPlatform(
        coef={"read": (2.0, 2e-6), "collect": (1.0, 1e-6), "spill": (1.0, 1e-6), "merge": (1.0, 1e-6),
              "shuffle": (5.0, 1e-6), "write": (2.0, 2e-6)}
    )  # fmt: skip
    args = (platform, Cluster(1, 2, 2), Dataset(32 * SPLIT, splits=32), JobSettings(reduces=0))
    pred = core.get(model).predict(profile, *args)
    assert pred.stages["map.one_time"] == pytest.approx((44.0 + 575.0 / 2) / 1000)
    assert any("later waves' stalls as the slots share them" in a for a in pred.assumptions)
    unshared = dataclasses.replace(profile, map_one_time_later_ms=None)  # a profile from before the split
    before = core.get(model).predict(unshared, *args)
    assert before.stages["map.one_time"] == pytest.approx(0.619)
    assert before.seconds - pred.seconds == pytest.approx((619.0 - 44.0 - 575.0 / 2) / 1000)


def test_few_maps_after_the_first_wave_cannot_hide_the_stalled_map(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "local42")
    typical = profile.stage(Stage.MAP_TASK)
    assert typical is not None
    assert typical.avg_ms == pytest.approx(46.0)
    # 4 maps on two slots: one more wave after the first, so the stalled map (46 + 575 ms) is the stage
    assert one_time_ms(profile, Cluster(1, 2, 2), 4) == pytest.approx(44.0 + 575.0)
    # 8 maps: the other slot runs 6 * 46 / 2 ms of maps meanwhile; the stalled map still ends last
    assert one_time_ms(profile, Cluster(1, 2, 2), 8) == pytest.approx(44.0 + 46.0 + 575.0 - 6 * 46.0 / 2)
    # splits twice the profiled size: maps twice as long hide more of it
    doubled = one_time_ms(profile, Cluster(1, 2, 2), 8, split_bytes=2.0 * profile.input.avg_split_bytes)
    assert doubled == pytest.approx(44.0 + 92.0 + 575.0 - 6 * 92.0 / 2)
    assert one_time_ms(profile, Cluster(1, 2, 2), None) == pytest.approx(44.0 + 575.0 / 2)  # maps unknown


def test_every_model_adds_the_whole_stall_to_a_two_slot_run_of_four_maps(tmp_path: Path) -> None:
    profile = _profile(tmp_path, "local42")
    platform = LinearPlatform(coef=dict.fromkeys(("read", "collect", "spill", "merge", "shuffle", "write"), (1.0, 1e-6)))
    args = (platform, Cluster(1, 2, 2), Dataset(4 * SPLIT, splits=4), JobSettings(reduces=0))
    for model in core.models():
        assert core.get(model).predict(profile, *args).stages["map.one_time"] == pytest.approx(0.619), model


def test_a_later_part_larger_than_the_term_is_taken_as_the_whole_term(tmp_path: Path) -> None:
    profile = dataclasses.replace(_profile(tmp_path, "local42"), map_one_time_ms=100.0, map_one_time_later_ms=1e4)
    assert one_time_ms(profile, Cluster(1, 2, 2), 32) == pytest.approx(50.0)


def test_repeats_merged_keep_the_later_part(tmp_path: Path) -> None:
    from profiles.merge_runs import merge_profiles

    one = _profile(tmp_path, "local42")
    source = dataclasses.replace(one.source, job_ids=("job_local43_0001",))
    other = dataclasses.replace(one, source=source, map_one_time_ms=819.0, map_one_time_later_ms=775.0)  # stalled longer
    merged = merge_profiles([one, other])
    assert merged.map_one_time_ms == pytest.approx((619.0 + 819.0) / 2)
    assert merged.map_one_time_later_ms == pytest.approx((575.0 + 775.0) / 2)
    assert one_time_ms(merged, Cluster(1, 2, 2), 32) == pytest.approx(44.0 + 675.0 / 2)
