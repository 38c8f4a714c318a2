"""What the models make of one-time and per-task costs (issue 37): known answers at larger sizes.

The known-answer case: a run whose first map pays a one-time cost (600 ms
among 40 ms maps, as the map-only filter's first map did on the local engine)
is profiled, and a run six times larger is predicted by every model.  The
truth is 600 + 47 x 40 ms on one slot; a profile that averaged the first map
in charged every map of the larger run with it (+113 %).
"""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from ingest.pipeline import ingest_paths
from phaseline.cli import main
from phaseline.errors import DataQualityWarning
from phaseline.store import Store
from predict import core
from predict.core import Cluster, Dataset, JobSettings
from predict.jhist_writer import SimTrace, write_jhist
from predict.simulate import Attempt, SimRun
from profiles import queries as q
from profiles.extract import extract_profile
from profiles.merge_runs import merge_profiles
from profiles.profile import JobProfile
from profiles.task_costs import (
    fit_reduce_work,
)
from tests.predict.doubles import LinearPlatform

#: How close every model must predict the larger run (issue 37: "within 5 %").
KNOWN_ANSWER_REL = 0.05
MB = 2**20
SPLIT = 1 * MB
RECORDS = 10_000


# ---------------------------------------------------------------- the known answer, every model
def _map_only_run(durations: list[float]) -> SimRun:
    """Maps back to back on one slot (a map-only job), each of ``durations`` ms."""
    attempts, t = [], 0.0
    for i, d in enumerate(durations):
        attempts.append(Attempt("MAP", i, 0, 0, t, t + d, True))
        t += d
    return SimRun(makespan_ms=t, events=2 * len(durations), attempts=tuple(attempts))


def _filter_run(tmp_path: Path, durations: list[float], sequence: int) -> tuple[Path, str]:
    """A run of the map-only filter (one map a duration) written as a ``.jhist``; its path and job id."""
    trace = SimTrace(
        sequence=sequence,
        job_name="filter",
        map_counters={"MAP_INPUT_RECORDS": RECORDS, "MAP_OUTPUT_RECORDS": RECORDS // 2},
        map_input_bytes=SPLIT,
        map_output_file_bytes=SPLIT // 2,
    )
    out = tmp_path / f"run{sequence}"
    out.mkdir()
    path = write_jhist(_map_only_run(durations), out, n_maps=len(durations), n_reduces=0, trace=trace)
    return path, trace.job_id


def _profiled(tmp_path: Path, durations: list[float], sequence: int = 1) -> JobProfile:
    path, job_id = _filter_run(tmp_path, durations, sequence)
    store = Store(tmp_path / f"store{sequence}")
    ingest_paths([path], store)
    return extract_profile(store.connect(), job_id)


#: Read and write priced well under the typical map: the rest is per-task overhead.
PLATFORM = LinearPlatform(
    coef={"read": (2.0, 2e-6), "collect": (1.0, 1e-6), "spill": (1.0, 1e-6), "merge": (1.0, 1e-6),
          "shuffle": (5.0, 1e-6), "write": (2.0, 2e-6)}
)  # fmt: skip


@pytest.mark.parametrize("model", core.models())
def test_one_slow_first_map_predicts_a_six_times_larger_run(tmp_path: Path, model: str) -> None:
    profiled = [600.0, 40.0, 41.0, 39.0, 40.0, 40.0, 41.0, 39.0]
    # one map holds most of the run's time: the profile predicts, and says what its split rests on
    with pytest.warns(DataQualityWarning, match="outweigh all its maps at the typical duration"):
        profile = _profiled(tmp_path, profiled)
    assert profile.map_tasks_left_out == 1
    assert profile.map_one_time_ms == pytest.approx(560.0, abs=2.0)
    assert "left out" in (profile.cost_evidence or "")
    truth_s = (600.0 + 47 * 40.0) / 1000
    pred = core.get(model).predict(
        profile, PLATFORM, Cluster(1, 1, 1), Dataset(48 * SPLIT, splits=48), JobSettings(reduces=0)
    )
    assert pred.seconds == pytest.approx(truth_s, rel=KNOWN_ANSWER_REL)
    assert pred.stages["map.one_time"] == pytest.approx(0.56, abs=0.002)
    assert any("added once, not per task" in a for a in pred.assumptions)
    # the profiled size itself comes back as measured
    same = core.get(model).predict(
        profile, PLATFORM, Cluster(1, 1, 1), Dataset(8 * SPLIT, splits=8), JobSettings(reduces=0)
    )
    assert same.seconds == pytest.approx(sum(profiled) / 1000, rel=KNOWN_ANSWER_REL)


# (vianna_tripathi prices each wave of two parallel maps as the longer of two exponential branches, 1.5x
# their spread above the mean by design: 14 % over here)
@pytest.mark.parametrize("model", [m for m in core.models() if m != "vianna_tripathi"])
def test_a_local_run_whose_later_maps_stall_predicts_an_eight_times_larger_run(
    tmp_path: Path, model: str
) -> None:
    """The known answer in one JVM (LocalJobRunner's ids), two slots: both later maps carry the JVM's
    compiles; a run of 32 maps pays them once, its other maps at the warm cost."""
    durs = [124.0, 116.0, 362.0, 349.0]
    first = [Attempt("MAP", 0, 0, 0, 0.0, durs[0], True), Attempt("MAP", 1, 0, 1, 0.0, durs[1], True)]
    later = [Attempt("MAP", 2, 0, 1, durs[1], durs[1] + durs[2], True),
             Attempt("MAP", 3, 0, 0, durs[0], durs[0] + durs[3], True)]  # fmt: skip
    run = SimRun(makespan_ms=durs[1] + durs[2], events=8, attempts=(*first, *later))
    trace = SimTrace(sequence=1, job_name="sort", tracker="local42",
                     map_counters={"MAP_INPUT_RECORDS": RECORDS, "MAP_OUTPUT_RECORDS": RECORDS // 2},
                     map_input_bytes=SPLIT, map_output_file_bytes=SPLIT // 2)  # fmt: skip
    path = write_jhist(run, tmp_path, n_maps=4, n_reduces=0, trace=trace)
    store = Store(tmp_path / "store")
    ingest_paths([path], store)
    with pytest.warns(DataQualityWarning, match="only 2 map"):  # thin evidence, said with its fix
        profile = extract_profile(store.connect(), trace.job_id)
    assert trace.job_id == "job_local42_0001"
    assert profile.map_tasks_left_out == 3
    assert "fastest of 4 maps" in (profile.cost_evidence or "")
    truth_s = ((sum(durs) - 4 * 116.0) / 2 + 32 * 116.0 / 2) / 1000  # the warm-up once per slot, 32 warm maps
    pred = core.get(model).predict(
        profile, PLATFORM, Cluster(1, 2, 1), Dataset(32 * SPLIT, splits=32), JobSettings(reduces=0)
    )
    assert pred.seconds == pytest.approx(truth_s, rel=KNOWN_ANSWER_REL)


def test_a_profile_of_one_wave_warns_and_names_the_fix(tmp_path: Path) -> None:
    with pytest.warns(DataQualityWarning, match="cannot tell a one-time .* profile a run with more maps"):
        profile = _profiled_slots(tmp_path)
    assert profile.map_one_time_ms == 0.0
    assert profile.map_tasks_left_out == 0


def _profiled_slots(tmp_path: Path) -> JobProfile:
    """Two maps at once on two slots: one wave."""
    run = SimRun(
        makespan_ms=600.0,
        events=4,
        attempts=(Attempt("MAP", 0, 0, 0, 0.0, 600.0, True), Attempt("MAP", 1, 0, 1, 0.0, 40.0, True)),
    )
    trace = SimTrace(
        job_name="wave",
        map_counters={"MAP_INPUT_RECORDS": RECORDS, "MAP_OUTPUT_RECORDS": RECORDS},
        map_input_bytes=SPLIT,
        map_output_file_bytes=SPLIT,
    )
    path = write_jhist(run, tmp_path, n_maps=2, n_reduces=0, trace=trace)
    store = Store(tmp_path / "store")
    ingest_paths([path], store)
    return extract_profile(store.connect(), trace.job_id)


def test_the_new_fields_round_trip_and_old_profiles_still_load(tmp_path: Path) -> None:
    with pytest.warns(DataQualityWarning, match="outweigh"):
        profile = _profiled(tmp_path, [300.0, 40.0, 40.0, 40.0])
    again = JobProfile.from_json(profile.to_json())
    assert again == profile
    assert again.map_one_time_ms is not None
    assert math.isfinite(again.map_one_time_ms)
    blob = profile.to_dict()
    for key in ("map_one_time_ms", "map_slots", "map_tasks_left_out", "cost_evidence"):
        blob.pop(key)
    old = JobProfile.from_dict(blob)
    assert old.map_one_time_ms is None
    assert old.map_tasks_left_out == 0


@pytest.mark.parametrize("model", ["bounds", "herodotou", "simulation"])
def test_runs_at_two_sizes_fit_fixed_and_proportional_map_work(tmp_path: Path, model: str) -> None:
    """Per-map cost that falls as runs grow (a JIT that keeps improving): the true total map work
    is 1000 ms + 130 ms per map.  The smallest run alone says 180 ms a map (+28 % at 48 maps);
    the fit over both runs recovers the line."""
    small = _profiled(tmp_path, [780.0] + [180.0] * 7, sequence=1)  # 8 x 180 + 600 = 1000 + 8 x 130
    large = _profiled(tmp_path, [600.0 + 440 / 3] + [440 / 3] * 23, sequence=2)  # 1000 + 24 x 130
    with pytest.warns(DataQualityWarning, match="not repeats of one case"):
        merged = merge_profiles([small, large])
    assert merged.map_one_time_ms == pytest.approx(1000.0, rel=1e-3)
    assert merged.cost_evidence is not None
    assert "fitted over runs at 2 input sizes" in merged.cost_evidence
    assert (merged.map_cost_sizes, small.map_cost_sizes) == (2, 1)
    assert merged.map_tasks_left_out == 2
    truth_s = (1000 + 48 * 130) / 1000
    pred = core.get(model).predict(
        merged, PLATFORM, Cluster(1, 1, 1), Dataset(48 * SPLIT, splits=48), JobSettings(reduces=0)
    )
    assert pred.seconds == pytest.approx(truth_s, rel=KNOWN_ANSWER_REL)
    alone = core.get(model).predict(
        small, PLATFORM, Cluster(1, 1, 1), Dataset(48 * SPLIT, splits=48), JobSettings(reduces=0)
    )
    assert alone.seconds > truth_s * 1.2  # what trusting the smallest run alone gives


# ---------------------------------------------------------------- the reduce side over sizes
#: The reduce function's true cost: a fixed part per reduce and a part per input record.
REDUCE_FIXED_MS, REDUCE_MS_PER_RECORD = 300.0, 0.02


def _map_reduce_run(n_maps: int) -> SimRun:
    """``n_maps`` maps of 40 ms back to back, then one reduce: a 20 ms shuffle and a reduce
    function of ``REDUCE_FIXED_MS + REDUCE_MS_PER_RECORD x records`` (with its write)."""
    attempts, t = [], 0.0
    for i in range(n_maps):
        attempts.append(Attempt("MAP", i, 0, 0, t, t + 40.0, True))
        t += 40.0
    reduce_ms = REDUCE_FIXED_MS + REDUCE_MS_PER_RECORD * n_maps * RECORDS
    attempts.append(Attempt("REDUCE", 0, 0, 0, t, t + 20.0 + reduce_ms, True, shuffle_end_ms=t + 20.0))
    return SimRun(makespan_ms=t + 20.0 + reduce_ms, events=2 * len(attempts), attempts=tuple(attempts))


def _profiled_reduce(tmp_path: Path, n_maps: int, sequence: int) -> JobProfile:
    trace = SimTrace(
        sequence=sequence,
        job_name="aggregate",
        map_counters={"MAP_INPUT_RECORDS": RECORDS, "MAP_OUTPUT_RECORDS": RECORDS, "MAP_OUTPUT_BYTES": SPLIT},
        reduce_counters={"REDUCE_INPUT_RECORDS": n_maps * RECORDS, "REDUCE_OUTPUT_RECORDS": n_maps * RECORDS},
        map_input_bytes=SPLIT,
    )
    out = tmp_path / f"run{sequence}"
    out.mkdir()
    path = write_jhist(_map_reduce_run(n_maps), out, n_maps=n_maps, n_reduces=1, trace=trace)
    store = Store(tmp_path / f"store{sequence}")
    ingest_paths([path], store)
    return extract_profile(store.connect(), trace.job_id)


def test_reduce_work_fit_needs_two_sizes_and_a_positive_slope() -> None:
    assert fit_reduce_work([40_000.0, 40_100.0], [1100.0, 1102.0]) is None
    fit = fit_reduce_work([40_000.0, 80_000.0, 160_000.0], [1100.0, 1900.0, 3500.0])
    assert fit is not None
    assert fit.fixed_ms == pytest.approx(REDUCE_FIXED_MS)
    assert fit.ms_per_unit == pytest.approx(REDUCE_MS_PER_RECORD)


@pytest.mark.parametrize("model", core.models())
def test_runs_at_two_sizes_fit_the_reduce_function_fixed_and_per_record(tmp_path: Path, model: str) -> None:
    """A reduce whose function costs 300 ms + 0.02 ms a record: one run of 4 maps prices it at
    0.0275 ms a record (its fixed part spread over 40,000 records), +31 % on the reduce of a run
    eight times larger; the runs of 4 and 8 maps merged recover the line."""
    small, large = _profiled_reduce(tmp_path, 4, 1), _profiled_reduce(tmp_path, 8, 2)
    with pytest.warns(DataQualityWarning, match="not repeats of one case"):
        merged = merge_profiles([small, large])
    assert merged.reduce_fixed_ms == pytest.approx(REDUCE_FIXED_MS, rel=0.02)
    assert small.reduce_fixed_ms is None
    assert "fixed part counted once per reduce" in (merged.cost_evidence or "")
    assert JobProfile.from_json(merged.to_json()) == merged

    def predicted(profile: JobProfile) -> float:
        return (
            core.get(model)
            .predict(
                profile, PLATFORM, Cluster(1, 1, 1), Dataset(32 * SPLIT, splits=32), JobSettings(reduces=1)
            )
            .seconds
        )

    truth_s = (32 * 40.0 + 20.0 + REDUCE_FIXED_MS + REDUCE_MS_PER_RECORD * 32 * RECORDS) / 1000
    # Vianna's queueing network prices the one node's CPU contention on top (+7 % here, at every size)
    rel = 0.1 if model == "vianna" else KNOWN_ANSWER_REL
    assert predicted(merged) == pytest.approx(truth_s, rel=rel)
    assert predicted(small) > truth_s * 1.2  # the smallest run alone charges the fixed part per record


def test_merged_runs_keep_the_average_where_their_noise_hides_the_fixed_part(tmp_path: Path) -> None:
    """The two-size map-work case above, its runs given a spread of 30 % (three repeats each):
    the 1,000 ms fixed part is within the noise, so the merge averages the runs instead."""
    small = _profiled(tmp_path, [780.0] + [180.0] * 7, sequence=1)
    large = _profiled(tmp_path, [600.0 + 440 / 3] + [440 / 3] * 23, sequence=2)
    spread = (0.75, 1.0, 1.3)
    small, large = (
        dataclasses.replace(p, makespans_ms=tuple(p.makespans_ms[0] * f for f in spread))
        for p in (small, large)
    )
    with pytest.warns(DataQualityWarning, match="not repeats of one case"):
        merged = merge_profiles([small, large])
    assert "within 1.96 standard errors" in (merged.cost_evidence or "")
    assert merged.map_one_time_ms == pytest.approx(
        (8 * small.map_one_time_ms + 24 * large.map_one_time_ms) / 32  # weighted by maps
    )


def test_a_profile_of_one_size_names_the_stores_runs_at_other_sizes(tmp_path: Path) -> None:
    """`phaseline profile` of one run says which runs of the same job at other sizes it could be
    merged with (the two-size profile is what predicts a larger run best: benchmarks/BACKTEST.md)."""
    store = Store(tmp_path / "store")
    runs = [_filter_run(tmp_path, [40.0] * n, s) for s, n in ((1, 8), (2, 24), (3, 8))]  # 3 repeats 1's size
    ingest_paths([path for path, _ in runs], store)
    small, large, repeat = (job_id for _, job_id in runs)
    assert q.other_sizes(store.connect(), small) == [large]
    assert q.other_sizes(store.connect(), large) == [small, repeat]
    result = CliRunner().invoke(
        main, ["profile", small, "--out", str(tmp_path / "p.json"), "--store", str(tmp_path / "store")]
    )
    assert result.exit_code == 0, result.output
    assert f"1 run(s) of this job at other input sizes (e.g. {large})" in result.output
    assert f"phaseline profile {small} {large}" in result.output
