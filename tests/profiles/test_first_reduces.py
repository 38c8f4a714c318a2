"""One JVM's first reduces set apart from the typical reduce, and the term predictions add once (issue 37).

Known answers: a LocalJobRunner run whose first reduce spent 320 ms after its shuffle and whose
second, of as many records, 170 ms has a typical reduce phase of 170 ms and a one-time reduce term
of 150 ms, which every model adds once for a run in one JVM and once per reduce wave on a cluster.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest

from phaseline.hadoop_names import YARN_ENGINE
from predict import core
from predict.core import Cluster, Dataset, JobSettings
from predict.reduce_one_time import reduce_waves
from profiles.first_reduces import split_first_reduces
from profiles.merge_runs import merge_profiles
from profiles.profile import Stage
from tests.predict.doubles import LinearPlatform
from tests.profiles.first_reduces_helpers import REDUCES, SPLIT, local_sort_profile


def _stages(phases: list[float], waves: list[int]) -> pd.DataFrame:
    ids = [f"r{i}" for i in range(len(phases))]
    return pd.DataFrame({"attempt_id": ids, "wave": waves, "reduce_phase_ms": phases})


def _records(records: list[int]) -> pd.DataFrame:
    return pd.DataFrame({"attempt_id": [f"r{i}" for i in range(len(records))], "reduce_input_records": records})


def test_the_first_reduces_extra_per_slot_is_the_term() -> None:
    two_slots = split_first_reduces(_stages([320.0, 300.0, 170.0, 160.0], [1, 1, 2, 2]),
                                    _records([1000] * 4), one_jvm=True)  # fmt: skip
    assert two_slots is not None
    assert two_slots.one_time_ms == pytest.approx(((320 - 165) + (300 - 165)) / 2)
    assert two_slots.left_out == {"r0", "r1"}
    assert two_slots.later_count == 2
    assert "2 reduce(s) of later waves" in two_slots.evidence


def test_a_first_reduce_with_more_records_is_compared_with_the_typical_one_scaled() -> None:
    # a skewed partition: three times the records, three times the time: its work, no warm-up
    assert split_first_reduces(_stages([510.0, 170.0], [1, 2]), _records([3000, 1000]), one_jvm=True) is None
    # with fewer records the typical reduce is not scaled down (a reduce has fixed parts)
    fewer = split_first_reduces(_stages([320.0, 170.0], [1, 2]), _records([500, 1000]), one_jvm=True)
    assert fewer is not None
    assert fewer.one_time_ms == pytest.approx(150.0)


@pytest.mark.parametrize(
    ("phases", "waves", "one_jvm"),
    [
        ([320.0, 170.0], [1, 2], False),  # a cluster: every reduce starts its own JVM
        ([320.0, 300.0], [1, 1], True),  # one wave: nothing to compare the first reduces with
        ([150.0, 170.0], [1, 2], True),  # the first no slower than the later one
    ],
)
def test_nothing_is_set_apart_where_the_run_cannot_tell(phases: list[float], waves: list[int], one_jvm: bool) -> None:
    assert split_first_reduces(_stages(phases, waves), _records([1000] * len(phases)), one_jvm=one_jvm) is None


def test_the_typical_rows_keep_the_first_reduces_shuffle() -> None:
    split = split_first_reduces(_stages([320.0, 170.0], [1, 2]), _records([1000, 1000]), one_jvm=True)
    assert split is not None
    attempts = pd.DataFrame({"attempt_id": ["m0", "r0", "r1"]})
    phases = pd.DataFrame({"attempt_id": ["m0", "r0", "r0", "r0", "r1", "r1"],
                           "phase": ["read", "wait", "shuffle", "reduce+write", "shuffle", "reduce+write"]})  # fmt: skip
    stages = _stages([320.0, 170.0], [1, 2]).assign(first_shuffle_ms=[40.0, None])
    typ_attempts, typ_phases, typ_stages = split.typical(attempts, phases, stages)
    assert list(typ_attempts["attempt_id"]) == ["m0", "r1"]
    assert list(zip(typ_phases["attempt_id"], typ_phases["phase"], strict=True)) == [
        ("m0", "read"), ("r0", "wait"), ("r0", "shuffle"), ("r1", "shuffle"), ("r1", "reduce+write")]  # fmt: skip
    assert typ_stages["reduce_phase_ms"].isna().tolist() == [True, False]
    assert typ_stages["first_shuffle_ms"].tolist()[0] == 40.0  # ARIA's first shuffle stays the first reduce's


def test_a_local_profile_keeps_the_first_reduce_apart(tmp_path: Path) -> None:
    profile = local_sort_profile(tmp_path)
    assert profile.reduce_one_time_ms == pytest.approx(150.0)
    assert profile.reduce_tasks_left_out == 1
    assert profile.stage(Stage.REDUCE_PHASE).avg_ms == pytest.approx(170.0)
    assert profile.stage(Stage.FIRST_SHUFFLE) is not None  # the first reduce's shuffle stays in the profile
    assert "first wave's 1 reduce(s) left out" in (profile.cost_evidence or "")
    source = dataclasses.replace(profile.source, job_ids=("job_local43_0001",))
    merged = merge_profiles([profile, dataclasses.replace(profile, source=source, reduce_one_time_ms=250.0)])
    assert merged.reduce_one_time_ms == pytest.approx(200.0)
    assert merged.reduce_tasks_left_out == 2
    assert "2 first reduce(s) of one JVM left out" in (merged.cost_evidence or "")


def test_a_cluster_profile_is_unchanged(tmp_path: Path) -> None:
    profile = local_sort_profile(tmp_path, tracker=None)  # a cluster's job id
    assert profile.reduce_one_time_ms is None
    assert profile.reduce_tasks_left_out == 0
    assert profile.stage(Stage.REDUCE_PHASE).avg_ms == pytest.approx(sum(p for _, p in REDUCES) / 2)


@pytest.mark.parametrize("model", core.models())
def test_every_model_adds_the_term_once_in_one_jvm_and_per_wave_on_a_cluster(tmp_path: Path, model: str) -> None:
    profile = local_sort_profile(tmp_path)
    platform = LinearPlatform(
        coef={"read": (2.0, 2e-6), "collect": (1.0, 1e-6), "spill": (1.0, 1e-6), "merge": (1.0, 1e-6),
              "shuffle": (5.0, 1e-6), "write": (2.0, 2e-6)}
    )  # fmt: skip
    data = Dataset(32 * SPLIT, splits=32)
    local = core.get(model).predict(profile, platform, Cluster(1, 1, 1), data, JobSettings(reduces=4))
    assert local.stages["reduce.one_time"] == pytest.approx(0.150)
    assert any("one-time reduce cost 150 ms" in a and "share one JVM" in a for a in local.assumptions)
    yarn = Cluster(1, 2, 2, engine=YARN_ENGINE)
    on_yarn = core.get(model).predict(profile, platform, yarn, data, JobSettings(reduces=5))
    assert on_yarn.stages["reduce.one_time"] == pytest.approx(0.150 * reduce_waves(5, 2))
    map_only = core.get(model).predict(profile, platform, Cluster(1, 1, 1), data, JobSettings(reduces=0))
    assert "reduce.one_time" not in map_only.stages
    without = dataclasses.replace(profile, reduce_one_time_ms=None)
    before = core.get(model).predict(without, platform, Cluster(1, 1, 1), data, JobSettings(reduces=4))
    assert "reduce.one_time" not in before.stages
    assert local.seconds - before.seconds == pytest.approx(0.150)
