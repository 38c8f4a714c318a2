"""The job profile data model: JSON round trips, validation that names the field, merging runs."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phaseline.errors import DataQualityWarning, ProfileError
from profiles.merge_runs import merge_profiles
from profiles.profile import PROFILE_SCHEMA_VERSION, JobProfile, ProfileSource, Stage
from profiles.profile_stats import (
    COUNTER_FIELDS,
    CostStatistics,
    Counters,
    DataflowStatistics,
    DurationStats,
    InputStats,
)
from tests.predict.doubles import toy_profile


def _doc() -> dict[str, Any]:
    return toy_profile().to_dict()


def test_json_round_trip(tmp_path: Path) -> None:
    prof = toy_profile(
        counters=Counters(map_input_records=12_800_000, map_output_bytes=2_147_483_648),
        dataflow=DataflowStatistics(map_size_sel=1.6, interm_compress_ratio=0.4),
        costs=CostStatistics(map_cpu=0.002, combine_cpu=0.0005),
        phases={"read": DurationStats(1000, 1500, 20), "reduce+write": DurationStats(4000, 4200, 4)},
    )
    path = tmp_path / "profile.json"
    prof.save(path)
    assert JobProfile.load(path) == prof
    doc = json.loads(path.read_text())
    assert doc["schema_version"] == PROFILE_SCHEMA_VERSION
    assert doc["source"]["job_ids"] == ["job_1_0001"]
    assert doc["source"]["config"] == {"io.sort.mb": "100"}
    assert doc["costs"]["sort_cpu"] is None  # unknown stays null, never invented


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        (("input", "splits"), "many", r"profile\.input\.splits: expected an integer"),
        (("input", "splits"), 0, r"profile\.input\.splits: must be >= 1"),
        (("map_size_sel",), -1.0, r"profile\.map_size_sel: must be a finite number >= 0"),
        (("map_size_sel",), None, r"profile\.map_size_sel: must not be null"),
        (("stages", "map_task", "max_ms"), 1.0, r"profile\.stages\.map_task\.max_ms: maximum 1\.0 is below"),
        (
            ("stages", "map_stage"),
            {"avg_ms": 1, "max_ms": 1, "count": 1},
            r"profile\.stages\.map_stage: unknown stage",
        ),
        (("phases", "spill+Sort Time"), {"avg_ms": 1, "max_ms": 1, "count": 1}, r"not a phase name"),
        (("schema_version",), 99, r"schema_version: is 99"),
        (("source", "job_ids"), [], r"profile\.source\.job_ids: a profile must name"),
        (("costs", "sort_cpu"), "fast", r"profile\.costs\.sort_cpu: expected a number"),
        (("mystery",), 1, r"profile\.mystery: unknown field"),
        (("combine_recs_sel",), None, r"given together"),
        (("num_maps",), float("nan"), r"profile\.num_maps: expected an integer of at most"),
        (("input", "splits"), 1e300, r"profile\.input\.splits: expected an integer of at most"),
        (("counters", "map_input_records"), float("inf"), r"profile\.counters\.map_input_records: expected an int"),
        (("dataflow", "interm_compress_ratio"), 0, r"profile\.dataflow\.interm_compress_ratio: must be > 0"),
    ],
)
def test_loader_names_the_bad_field(path: tuple[str, ...], value: object, message: str) -> None:
    doc = _doc()
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ProfileError, match=message):
        JobProfile.from_dict(doc)


def test_loader_reports_missing_fields_and_bad_json(tmp_path: Path) -> None:
    doc = _doc()
    del doc["input"]["max_split_bytes"]
    with pytest.raises(ProfileError, match=r"profile\.input\.max_split_bytes: required field is missing"):
        JobProfile.from_dict(doc)
    bad = tmp_path / "broken.json"
    bad.write_text('{\n  "source": {"job_name": "cut')
    with pytest.raises(ProfileError, match=r"broken\.json:2:26: not JSON: Unterminated string starting at$"):
        JobProfile.load(bad)
    with pytest.raises(ProfileError, match=r"absent\.json: cannot read the profile \(No such file"):
        JobProfile.load(tmp_path / "absent.json")
    (tmp_path / "utf16.json").write_bytes(json.dumps(_doc()).encode("utf-16"))
    with pytest.raises(ProfileError, match=r"utf16\.json:1: not a profile \(not UTF-8 text at byte 0: "):
        JobProfile.load(tmp_path / "utf16.json")
    (tmp_path / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(ProfileError, match=r"deep\.json: not a profile \(JSON nested too deeply\)"):
        JobProfile.load(tmp_path / "deep.json")
    # the other JSON file a user has at hand, each given where the other belongs: said so
    from platform_model.model import PlatformModel, PlatformModelError

    model = tmp_path / "platform.json"
    model.write_text('{"format": "phaseline-platform-model", "version": 1, "phases": {}}')
    with pytest.raises(ProfileError, match=r"platform\.json is a platform model \(`phaseline fit`\), not a job profile"):
        JobProfile.load(model)
    profile = tmp_path / "profile.json"
    profile.write_text(json.dumps(_doc()))
    with pytest.raises(PlatformModelError, match=r"profile\.json is a job profile \(`phaseline profile`\), not a platform"):
        PlatformModel.load(profile)


def test_counter_names_map_to_fields() -> None:
    fields = set(Counters.__dataclass_fields__)
    assert set(COUNTER_FIELDS.values()) <= fields
    assert COUNTER_FIELDS["MAP_OUTPUT_BYTES"] == "map_output_bytes"


def test_merge_two_runs_weights_by_what_is_averaged() -> None:
    a = toy_profile()
    b = replace(
        toy_profile(),
        source=ProfileSource(job_ids=("job_1_0002",), job_name="wordcount", config={"io.sort.mb": "200"}),
        input=InputStats(60, 32 * 2**20, 40 * 2**20, 320_000, 330_000),
        map_size_sel=2.0,
        map_ms_per_record=0.004,
        map_task_overhead_ms=None,
        stages={"map_task": DurationStats(4_000, 20_000, 60)},
        counters=Counters(map_input_records=19_200_000),
    )
    a = replace(a, counters=Counters(map_input_records=12_800_000))
    with pytest.warns(DataQualityWarning, match=r"differ in 1 setting\(s\).*: io\.sort\.mb \(100, 200\)$"):
        m = merge_profiles([a, b])
    assert m.source.job_ids == ("job_1_0001", "job_1_0002")
    assert m.runs == 2
    assert m.source.config == {}  # the runs disagree on io.sort.mb
    # size selectivity weighted by input bytes: (1280 MB x 1.6 + 1920 MB x 2.0) / 3200 MB
    assert m.map_size_sel == pytest.approx((1280 * 1.6 + 1920 * 2.0) / 3200)
    # per-record time weighted by records: 12.8 M and 19.2 M records
    assert m.map_ms_per_record == pytest.approx((12.8 * 0.002 + 19.2 * 0.004) / 32)
    assert m.map_task_overhead_ms == 800.0  # known in one run only
    stats = m.stages[Stage.MAP_TASK]
    assert (stats.count, stats.max_ms) == (80, 20_000)
    assert stats.avg_ms == pytest.approx((20 * 10_000 + 60 * 4_000) / 80)
    assert Stage.FIRST_SHUFFLE in m.stages  # only in run a, kept
    assert m.input.max_split_bytes == 64 * 2**20
    assert m.input.splits == 40
    assert m.input.total_bytes == pytest.approx(
        (a.input.total_bytes + b.input.total_bytes) / 2
    )  # a typical run
    assert m.counters.map_input_records == 32_000_000


def test_merging_runs_of_different_selectivity_warns() -> None:
    # 1.6 and 2.0 output bytes per input byte (x1.25) are one job's runs; 0.2 and 1.4 are two jobs' work
    a = toy_profile()
    b = replace(a, source=replace(a.source, job_ids=("job_1_0002",)), map_size_sel=0.2)
    with pytest.warns(DataQualityWarning, match=r"map selectivity \(output/input bytes\) ranges from 0\.2 to 1\.6"):
        m = merge_profiles([a, b])
    assert m.map_size_sel == pytest.approx(0.9)  # still merged: the warning says what the average hides
    c = replace(a, source=replace(a.source, job_ids=("job_1_0003",)), map_size_sel=2.0, reduce_size_sel=None)
    merge_profiles([a, c])  # within SELECTIVITY_SPREAD, a reduce selectivity known in one run: no warning


def test_makespans_merge_and_give_the_run_to_run_variation(tmp_path: Path) -> None:
    one = toy_profile(makespans_ms=(10_000.0,))
    assert one.run_cv() is None
    assert one.run_interval() is None
    runs = [  # three runs (each its own job id: one run merged twice is refused)
        replace(one, source=replace(one.source, job_ids=(f"job_1_000{i}",)), makespans_ms=(m,))
        for i, m in enumerate((10_000.0, 12_000.0, 8_000.0), start=1)
    ]
    m = merge_profiles(runs)
    assert m.makespans_ms == (10_000.0, 12_000.0, 8_000.0)
    # 90 % prediction interval of another run on the logs: mean +- t(0.95, 2) s sqrt(1 + 1/3), over the median
    logs = [math.log(x) for x in (10_000.0, 12_000.0, 8_000.0)]
    mean = sum(logs) / 3
    sd = math.sqrt(sum((v - mean) ** 2 for v in logs) / 2)
    half = 2.919986 * sd * math.sqrt(4 / 3)  # t(0.95, df = 2), from a table
    interval, narrower = m.run_interval(), m.run_interval(0.5)
    assert interval is not None
    assert narrower is not None
    low, high = interval
    assert (low, high) == pytest.approx((math.exp(mean - half) / 10_000, math.exp(mean + half) / 10_000), rel=1e-6)
    assert low < 0.8  # wider than the three runs' own range, which is a 50 % interval
    assert high > 1.2
    assert narrower[0] > low
    assert narrower[1] < high
    twin = replace(one, source=replace(one.source, job_ids=("job_1_0002",)), makespans_ms=(5_000.0,))
    same = merge_profiles([replace(one, makespans_ms=(5_000.0,)), twin])
    assert same.run_interval() == pytest.approx((1.0, 1.0))
    with pytest.raises(ProfileError, match="confidence"):
        m.run_interval(1.0)
    # one spread for both models: the simulator's lognormal factor has log variance s^2 (log1p(cv^2))
    assert m.run_log_sd() == pytest.approx(sd)
    assert m.run_cv() == pytest.approx(math.sqrt(math.exp(sd**2) - 1))
    assert m.run_cv() == pytest.approx(2_000 / 10_000, rel=0.05)  # close to the plain CV (sd 2000 / mean 10000)
    path = tmp_path / "p.json"
    m.save(path)
    assert JobProfile.load(path).makespans_ms == m.makespans_ms
    # profiles written before the field existed still load
    doc = json.loads(path.read_text())
    del doc["makespans_ms"]
    assert JobProfile.from_dict(doc).makespans_ms == ()
    with pytest.raises(ProfileError, match="makespans_ms"):
        toy_profile(makespans_ms=(-1.0,))


def test_runs_of_different_sizes_merge_without_a_run_to_run_spread() -> None:
    # Word count profiled at 2 and 8 maps (370 and 1,267 ms): their makespans are a size effect,
    # not noise, and had stretched the bounds to 0.001-705 s and the simulator's to 0-20 s.
    small = toy_profile(makespans_ms=(370.0,))
    big = replace(small, source=replace(small.source, job_ids=("job_1_0002",)), makespans_ms=(1_267.0,),
                  input=replace(small.input, splits=80))  # fmt: skip
    with pytest.warns(DataQualityWarning, match="not repeats of one case, so no run-to-run spread"):
        m = merge_profiles([small, big])
    assert m.makespans_ms == ()
    assert m.run_interval() is None
    assert m.runs == 2
    other_reduces = replace(small, source=replace(small.source, job_ids=("job_1_0003",)), num_reduces=8)
    with pytest.warns(DataQualityWarning, match="not repeats"):
        assert merge_profiles([small, other_reduces]).makespans_ms == ()
    # repeats of one case keep theirs (test_makespans_merge_and_give_the_run_to_run_variation)
    again = replace(small, source=replace(small.source, job_ids=("job_1_0004",)), makespans_ms=(400.0,))
    assert merge_profiles([small, again]).makespans_ms == (370.0, 400.0)


def test_makespans_of_one_case_that_differ_absurdly_are_refused() -> None:
    # [1000, 1e20] ms, edited by hand: the simulator's spread overflowed (math range error, and
    # `predict --model all` died) and the bounds' interval reached 3.7e86 s
    with pytest.raises(ProfileError, match=r"makespans_ms: the profiled runs of one case differ more than 1,000x"):
        toy_profile(makespans_ms=(1_000.0, 1e20))
    assert toy_profile(makespans_ms=(1_000.0, 900_000.0)).run_cv() is not None


def test_merge_refuses_different_jobs() -> None:
    other = replace(toy_profile(), source=ProfileSource(job_ids=("job_2_0001",), job_name="terasort"))
    with pytest.raises(ProfileError, match="different jobs"):
        merge_profiles([toy_profile(), other])
    # a run without a name cannot be told to be the named job (merged, the bounds had spanned
    # 2.7e-9 to 2.7e10 s from two unrelated makespans)
    unnamed = replace(toy_profile(), source=ProfileSource(job_ids=("job_3_0001",), job_name=None))
    with pytest.raises(ProfileError, match="job_3_0001 has no job name"):
        merge_profiles([toy_profile(), unnamed])
    with pytest.warns(DataQualityWarning, match=r"without a job name \(job_3_0001, job_4_0001\): nothing says"):
        both_unnamed = merge_profiles([unnamed, replace(unnamed, source=ProfileSource(job_ids=("job_4_0001",)))])
    assert both_unnamed.source.job_name is None
    with pytest.raises(ProfileError, match="no profiles"):
        merge_profiles([])
    assert merge_profiles([toy_profile()]) == toy_profile()


@settings(max_examples=100, deadline=None)
@given(
    st.integers(1, 10_000),
    st.floats(1.0, 1e10),
    st.floats(0.0, 100.0),
    st.one_of(st.none(), st.floats(0.0, 1.0)),
    st.dictionaries(st.sampled_from(list(Stage)), st.floats(0.0, 1e6), max_size=5),
)
def test_round_trip_property(
    splits: int, split_bytes: float, sel: float, comb: float | None, stages: dict[Stage, float]
) -> None:
    prof = toy_profile(
        input=InputStats(splits, split_bytes, split_bytes * 1.5, split_bytes / 100, split_bytes / 50),
        map_size_sel=sel,
        combine_size_sel=comb,
        combine_recs_sel=comb,
        stages={k.value: DurationStats(v, v * 2, 3) for k, v in stages.items()},
    )
    assert JobProfile.from_json(prof.to_json()) == prof
