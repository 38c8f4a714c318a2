"""The shared prediction core: inputs, task estimates (Zhang et al. 2013, sec. 5), registry, CLI contract.

Also home of the test doubles the other prediction tests import: a linear
platform model (Zhang et al. 2013, eq. 1: Dur = A + B * Data) and a toy job
profile.
"""

from __future__ import annotations

import importlib
import itertools
import json
import math
import re
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from phaseline.errors import ExtrapolationWarning, NotFoundError, PlatformModelError, PredictionError
from predict import core
from predict.core import Cluster, Dataset, JobSettings, Prediction
from predict.tasks import estimate_tasks, resolve_input
from predict.units import SizeError, format_size, parse_size
from profiles.profile import JobProfile, ProfileSource
from profiles.profile_stats import DurationStats, InputStats

MB = 2**20
GB = 2**30
#: Relative tolerance for comparing hand-worked figures with the code's floating point.
REL = 1e-9


@dataclass(frozen=True)
class LinearPlatform:
    """Test double of a platform model: phase -> (intercept ms, ms per byte)."""

    coef: Mapping[str, tuple[float, float]] = field(
        default_factory=lambda: {
            "read": (100.0, 1e-5),
            "collect": (10.0, 5e-6),
            "spill": (50.0, 1e-5),
            "merge": (20.0, 2e-5),
            "shuffle": (200.0, 3e-5),
            "write": (100.0, 2e-5),
        }
    )

    def duration_ms(self, phase: str, data_bytes: float) -> float:
        if phase not in self.coef:
            raise PlatformModelError(f"no submodel for phase {phase!r}")
        a, b = self.coef[phase]
        return a + b * data_bytes


def toy_profile(**changes: object) -> JobProfile:
    """A word-count-like profile: 20 splits of 64 MB, map output 1.6x, a combiner, 4 reduces."""
    profile = JobProfile(
        source=ProfileSource(job_ids=("job_1_0001",), job_name="wordcount", config={"io.sort.mb": "100"}),
        num_maps=20,
        num_reduces=4,
        input=InputStats(20, 64 * MB, 64 * MB, 640_000, 650_000),
        map_size_sel=1.6,
        map_recs_sel=10.0,
        reduce_size_sel=0.3,
        reduce_recs_sel=0.2,
        combine_size_sel=0.3,
        combine_recs_sel=0.1,
        map_ms_per_record=0.002,
        reduce_ms_per_record=0.001,
        map_task_overhead_ms=800.0,
        reduce_task_overhead_ms=900.0,
        stages={
            "map_task": DurationStats(10_000, 12_000, 20),
            "first_shuffle": DurationStats(3_000, 4_000, 2),
            "typical_shuffle": DurationStats(6_000, 7_000, 2),
            "reduce_phase": DurationStats(5_000, 6_000, 4),
        },
    )
    return replace(profile, **changes)  # type: ignore[arg-type]


CLUSTER = Cluster(nodes=4, map_slots_per_node=2, reduce_slots_per_node=2)


def test_every_registered_model_honours_the_contract() -> None:
    names = core.models()
    assert {"bounds", "herodotou"} <= set(names)
    for settings in (JobSettings(reduces=8), JobSettings(reduces=0)):
        for name in names:
            predictor = core.get(name)
            assert isinstance(predictor, core.Predictor)
            p = predictor.predict(toy_profile(), LinearPlatform(), CLUSTER, Dataset(5 * GB), settings)
            assert isinstance(p, Prediction)
            assert p.model == name
            assert math.isfinite(p.seconds)
            assert p.seconds > 0
            assert (p.low_s is None) == (p.high_s is None)
            if p.low_s is not None and p.high_s is not None:
                assert p.low_s <= p.seconds <= p.high_s
            assert all(math.isfinite(v) for v in p.phases.values())
            # a calibrated overhead may be negative (overlapping phases); phases themselves are not
            assert all(v >= 0 for k, v in p.phases.items() if not k.endswith("overhead"))
            blob = json.loads(json.dumps(p.to_dict()))
            assert {"model", "seconds", "low_s", "high_s", "assumptions"} <= set(blob)


def test_registry_lookups_and_conflicts() -> None:
    with pytest.raises(NotFoundError, match=r"known: .*bounds"):
        core.get("no-such-model")

    @dataclass(frozen=True)
    class Impostor:
        name: str = "bounds"

        def predict(self, *args: object) -> Prediction:
            return Prediction("bounds", 0.0)

    with pytest.raises(PredictionError, match="two models"):
        core.register(Impostor())


def test_prediction_rejects_inconsistent_intervals() -> None:
    with pytest.raises(PredictionError, match="lower bound"):
        Prediction("x", 10.0, low_s=11.0, high_s=12.0)
    with pytest.raises(PredictionError, match="not a finite"):
        Prediction("x", math.nan)


def test_task_estimates_follow_zhang_section_5_by_hand() -> None:
    """Same input as the profile: 20 splits of 64 MB, 32,000 records each on average; no stage durations,
    so the profiled overheads are used as they are."""
    plat = LinearPlatform()
    prof = toy_profile(combine_size_sel=None, combine_recs_sel=None, stages={})
    t = estimate_tasks(prof, plat, Dataset(20 * 64 * MB), JobSettings(reduces=4))
    split, out = 64 * MB, 64 * MB * 1.6
    expected_map = (
        (100 + 1e-5 * split)  # read
        + 640_000 * 0.002  # map function
        + (10 + 5e-6 * out)  # collect
        + (50 + 1e-5 * out)  # spill
        + (20 + 2e-5 * out)  # merge
        + 800  # overhead
    )
    assert t.n_maps == 20
    assert t.map_avg.total_ms == pytest.approx(expected_map, rel=REL)
    # eq. 2: Data_shuffle = M_inp x M_sel x N_map / N_red
    shuffle = 64 * MB * 1.6 * 20 / 4
    assert t.shuffle_bytes_per_reduce == pytest.approx(shuffle, rel=REL)
    assert t.shuffle_avg_ms == pytest.approx(200 + 3e-5 * shuffle, rel=REL)
    assert t.first_shuffle_avg_ms == pytest.approx(t.shuffle_avg_ms)  # none profiled: no overlap
    reduce_recs = 640_000 * 20 * 10 / 4
    assert t.reduce_avg is not None
    expected_reduce = reduce_recs * 0.001 + (100 + 2e-5 * shuffle * 0.3) + 900
    assert t.reduce_avg.total_ms == pytest.approx(expected_reduce, rel=REL)
    # the largest split: 650,000 records instead of 640,000
    assert t.map_max.total_ms - t.map_avg.total_ms == pytest.approx(10_000 * 0.002, rel=REL)


def test_a_map_output_that_fits_one_spill_is_not_merged() -> None:
    """io.sort.mb 100 x 0.8 = 80 MiB holds serialized output + 16 accounting bytes per record."""
    from predict.tasks import single_spill

    settings = JobSettings(reduces=4)
    assert single_spill(12.8 * MB, 800_000, settings)  # 12.8 MiB + 12.2 MiB of accounting
    assert not single_spill(79 * MB, 2 * MB, settings)  # 79 MiB + 32 MiB > 80 MiB
    plat = LinearPlatform()
    prof = toy_profile(stages={})  # map output 1.6x the input, 10 records per input record
    small = estimate_tasks(prof, plat, Dataset(20 * 8 * MB, splits=20), settings)  # 8 MiB, 80,000 records
    assert small.map_avg.data_bytes["merge"] == 0.0
    assert small.map_avg.phases_ms["merge"] == pytest.approx(20.0)  # the intercept: a rename
    big = estimate_tasks(prof, plat, Dataset(20 * 64 * MB), settings)
    assert big.map_avg.data_bytes["merge"] == pytest.approx(64 * MB * 1.6)


def test_platform_shuffle_includes_the_sort_which_is_not_counted_twice() -> None:
    """The platform's shuffle is shuffle + sort (Zhang et al. 2013, section 2); the profiled sort sits in
    the reduce phase, so the shuffle estimate is the platform's less that sort."""
    plat = LinearPlatform()
    shuffle = 64 * MB * 1.6 * 0.3 * 20 / 4  # eq. 2, after the combiner
    sort_stats = DurationStats(150.0, 150.0, 4)  # the profiled reduce-side sort of each reduce
    prof = toy_profile(stages={}, phases={"sort": sort_stats})
    t = estimate_tasks(prof, plat, Dataset(20 * 64 * MB), JobSettings(reduces=4))
    assert t.reduce_avg is not None
    assert t.reduce_avg.phases_ms["sort"] == pytest.approx(150.0)  # same data as profiled
    assert t.shuffle_avg_ms == pytest.approx(200 + 3e-5 * shuffle - 150.0, rel=REL)
    assert any("less the reduce-side sort" in a for a in t.assumptions)
    without = estimate_tasks(toy_profile(stages={}), plat, Dataset(20 * 64 * MB), JobSettings(reduces=4))
    assert without.shuffle_avg_ms == pytest.approx(200 + 3e-5 * shuffle, rel=REL)  # no sort profiled
    # a profiled sort longer than the platform's shuffle + sort leaves the platform no share for the shuffle:
    # the profiled shuffle is kept, and grows as the platform's shuffle + sort grows (it had been priced at
    # 0 at every size); with no shuffle profiled either it is 0, and a note says why
    slow_sort = toy_profile(stages={}, phases={"sort": DurationStats(9_000.0, 9_000.0, 4),
                                               "shuffle": DurationStats(1_200.0, 1_500.0, 4)})
    both = 200 + 3e-5 * shuffle
    assert both < 9_000
    for scale in (1, 2):
        t = estimate_tasks(slow_sort, plat, Dataset(scale * 20 * 64 * MB), JobSettings(reduces=4))
        assert t.shuffle_avg_ms == pytest.approx(1_200.0 * (200 + 3e-5 * scale * shuffle) / both, rel=REL)
        assert t.first_shuffle_avg_ms == pytest.approx(t.shuffle_avg_ms)  # none profiled: no overlap
    assert any(a.startswith("shuffle: the profiled reduce-side sort (9000 ms) is longer than the platform model's "
                            f"shuffle + sort ({both:.0f} ms)") and a.endswith(
        "the profiled shuffle (1200 ms per reduce) scaled as the platform model's shuffle + sort scales")
        for a in t.assumptions)
    unprofiled = toy_profile(stages={}, phases={"sort": DurationStats(9_000.0, 9_000.0, 4)})
    t = estimate_tasks(unprofiled, plat, Dataset(20 * 64 * MB), JobSettings(reduces=4))
    assert t.shuffle_avg_ms == 0.0
    assert any(a.endswith("no share for the shuffle: priced at 0 (none profiled)") for a in t.assumptions)
    # elsewhere the sort comes out as its profiled share of the platform's shuffle + sort, so less data
    # per reduce never shuffles longer: subtracted scaled through 0 from the affine line, with a sort
    # steeper than the line (here 1.02x its slope), 8 reduces shuffled longer than 4
    sort_ms = 1.02 * 3e-5 * shuffle
    steep = toy_profile(stages={}, phases={"sort": DurationStats(sort_ms, sort_ms, 4)})
    by_reduces = [
        estimate_tasks(steep, plat, Dataset(20 * 64 * MB), JobSettings(reduces=n)).shuffle_avg_ms for n in (2, 4, 8, 16)
    ]
    assert by_reduces == sorted(by_reduces, reverse=True)
    assert by_reduces[1] == pytest.approx(200 + 3e-5 * shuffle - sort_ms, rel=REL)  # as profiled
    assert by_reduces[-1] > 0


def test_a_span_scaled_far_past_its_data_is_warned_of() -> None:
    """A profiled span the platform model lacks is scaled by its data; past SPAN_SCALE_WARN times, the
    prediction says so.  QuasiMonteCarlo's reduce-side sort, 17 ms on 28 bytes per reduce, came to
    32,000 s per reduce at 53 MB without a word: all fixed cost, scaled 1.9 million times."""
    tiny = toy_profile(
        stages={},
        phases={"sort": DurationStats(17.0, 17.0, 1)},
        num_reduces=1,
        input=InputStats(1, 118.0, 118.0, 1.0, 1.0),
        map_size_sel=0.15,
        combine_size_sel=None,
        combine_recs_sel=None,
    )
    near = estimate_tasks(tiny, LinearPlatform(), Dataset(118.0 * 50), JobSettings(reduces=1))  # no warning
    assert near.reduce_avg is not None
    assert near.reduce_avg.phases_ms["sort"] == pytest.approx(50 * 17.0)
    with pytest.warns(ExtrapolationWarning, match=r"phase 'sort': the profiled 'sort' span \(17 ms on 18 bytes") as got:
        far = estimate_tasks(tiny, LinearPlatform(), Dataset(50 * 1024**3), JobSettings(reduces=240))
    assert sum("'sort' span" in str(w.message) for w in got) == 1  # once, not per task estimate
    assert far.reduce_avg is not None
    assert far.reduce_avg.phases_ms["sort"] > 1e6


def test_same_job_same_size_gets_its_measured_tasks_back() -> None:
    """Overheads calibrated on the profiled run (ARIA stage durations): at the profiled size the
    estimates are the measured average and maximum map task and reduce phase, and the first shuffle."""
    prof = toy_profile()
    t = estimate_tasks(prof, LinearPlatform(), Dataset(20 * 64 * MB), JobSettings(reduces=4))
    assert t.map_avg.total_ms == pytest.approx(10_000)
    assert t.map_max.total_ms == pytest.approx(12_000)
    assert t.reduce_avg is not None
    assert t.reduce_max is not None
    assert [t.reduce_avg.total_ms, t.reduce_max.total_ms] == pytest.approx([5_000, 6_000])
    # the first shuffle keeps its profiled proportion to the typical one, which the platform prices
    assert [t.first_shuffle_avg_ms, t.first_shuffle_max_ms] == pytest.approx(
        [t.shuffle_avg_ms * 3_000 / 6_000, t.shuffle_avg_ms * 4_000 / 6_000]
    )
    # with no typical shuffle profiled (every reduce in the first wave), the measured one comes back
    only_first = {k: v for k, v in prof.stages.items() if k != "typical_shuffle"}
    t1 = estimate_tasks(
        replace(prof, stages=only_first), LinearPlatform(), Dataset(20 * 64 * MB), JobSettings(reduces=4)
    )
    assert [t1.first_shuffle_avg_ms, t1.first_shuffle_max_ms] == pytest.approx([3_000, 4_000])
    assert any("calibrated on the profiled run" in a for a in t.assumptions)
    # twice the data: the overhead stays, the phases grow
    t2 = estimate_tasks(prof, LinearPlatform(), Dataset(40 * 64 * MB), JobSettings(reduces=4))
    assert t2.map_avg.overhead_ms == pytest.approx(t.map_avg.overhead_ms)
    assert t2.shuffle_avg_ms > t.shuffle_avg_ms
    assert t2.first_shuffle_avg_ms > t.first_shuffle_avg_ms


def test_phases_missing_from_the_platform_fall_back_to_profiled_spans() -> None:
    """A local-engine platform model has no read/collect/write; the profile's combined spans stand in."""
    plat = LinearPlatform(
        {k: v for k, v in LinearPlatform().coef.items() if k not in ("read", "collect", "write")}
    )
    prof = toy_profile(
        stages={},
        map_ms_per_record=None,
        reduce_ms_per_record=None,
        phases={
            "read+map+collect": DurationStats(4_000, 5_000, 20),
            "reduce+write": DurationStats(2_000, 2_500, 4),
            "sort": DurationStats(700, 900, 4),
        },
    )
    t = estimate_tasks(prof, plat, Dataset(40 * 64 * MB), JobSettings(reduces=4))
    # twice the data per reduce, same split size: the map span stays, the reduce spans double
    assert t.map_avg.phases_ms["read"] == pytest.approx(4_000)
    assert t.map_avg.phases_ms["collect"] == 0
    assert t.map_avg.phases_ms["map"] == 0
    assert t.reduce_avg is not None
    assert t.reduce_avg.phases_ms["write"] == pytest.approx(4_000)
    assert t.reduce_avg.phases_ms["sort"] == pytest.approx(1_400)
    assert not any("counted as 0" in a and "function" in a for a in t.assumptions)
    assert any("'read+map+collect' span" in a for a in t.assumptions)
    with pytest.raises(PredictionError, match="no 'read' submodel"):
        estimate_tasks(replace(prof, phases={}), plat, Dataset(1 * GB), JobSettings(reduces=4))


def test_a_reduce_function_lumped_with_the_write_follows_the_records() -> None:
    """The local engine's log has one ``reduce+write`` span.  With the platform pricing the write, the
    rest of it is the reduce function, per record: on 16-64 MiB backtest runs two reduces of half the
    data each took about half the one reduce's time (word count: 886 ms as one, 420 + 373 ms as two),
    while a per-task overhead made each of the two pay the whole 407 ms again (+27 % for the job)."""
    plat = LinearPlatform()  # prices the write: 100 ms + 2e-5 ms per byte
    prof = toy_profile(
        stages={"reduce_phase": DurationStats(5_000, 5_000, 4)},
        reduce_ms_per_record=None,
        phases={"reduce+write": DurationStats(2_000, 2_500, 4)},
    )
    # one profiled reduce: 20 x 640,000 records x 10 x 0.1 (combiner) / 4 = 3.2 M records;
    # 20 x 64 MB x 1.6 x 0.3 / 4 x 0.3 (reduce selectivity) out
    records = 20 * 640_000 * 10 * 0.1 / 4
    out = 20 * 64 * MB * 1.6 * 0.3 / 4 * 0.3
    cost = (2_000 - (100 + 2e-5 * out)) / records
    same = estimate_tasks(prof, plat, Dataset(20 * 64 * MB), JobSettings(reduces=4))
    assert same.reduce_avg is not None
    assert same.reduce_avg.phases_ms["reduce"] == pytest.approx(cost * records, rel=REL)
    assert same.reduce_avg.total_ms == pytest.approx(5_000, rel=REL)  # the measured task back
    assert any(a.startswith("reduce function: the profiled 'reduce+write' span (2000 ms") for a in same.assumptions)
    assert not any("reduce function cost unknown" in a for a in same.assumptions)
    # twice the reduces: each has half the records, and the reduce function takes half as long
    halves = estimate_tasks(prof, plat, Dataset(20 * 64 * MB), JobSettings(reduces=8))
    assert halves.reduce_avg is not None
    assert halves.reduce_avg.phases_ms["reduce"] == pytest.approx(cost * records / 2, rel=REL)
    assert halves.reduce_avg.overhead_ms == pytest.approx(same.reduce_avg.overhead_ms, rel=REL)
    # Herodotou's reduce CPU cost (eq. 88's cReduceCPUCost) is the same figure
    from predict.herodotou import job_cost

    hero = job_cost(prof, plat, CLUSTER, Dataset(20 * 64 * MB), JobSettings(reduces=4))
    assert hero.costs.reduce_cpu == pytest.approx(cost, rel=REL)
    assert not any("reduce CPU cost unknown" in n for n in hero.notes)


def test_a_negative_overhead_is_overlap_and_shrinks_with_the_phases() -> None:
    """Measured tasks shorter than their priced phases give a negative calibrated overhead: the phases
    overlap.  It is taken off as a share of the phases at every size; subtracted whole, it priced
    TeraSort's maps (-1,488 ms against 367 ms of phases) and reduces at 0 ms for a 10 MB input."""
    plat = LinearPlatform()
    prof = toy_profile(
        stages={"map_task": DurationStats(4_000, 4_100, 20), "reduce_phase": DurationStats(3_000, 3_000, 4)}
    )
    same = estimate_tasks(prof, plat, Dataset(20 * 64 * MB), JobSettings(reduces=4))
    assert same.map_avg.total_ms == pytest.approx(4_000)  # the measured task back
    assert same.reduce_avg is not None
    assert same.reduce_avg.total_ms == pytest.approx(3_000)
    priced_map = sum(same.map_avg.phases_ms.values())
    priced_reduce = sum(same.reduce_avg.phases_ms.values())
    assert priced_map > 4_000
    assert priced_reduce > 3_000
    small = estimate_tasks(prof, plat, Dataset(64 * MB / 100, splits=1), JobSettings(reduces=4))
    assert small.reduce_avg is not None
    # the measured share of the priced phases, at a hundredth of a split
    assert small.map_avg.total_ms == pytest.approx(sum(small.map_avg.phases_ms.values()) * 4_000 / priced_map)
    assert small.reduce_avg.total_ms == pytest.approx(
        sum(small.reduce_avg.phases_ms.values()) * 3_000 / priced_reduce
    )
    assert 0 < small.map_avg.total_ms < 4_000
    assert any(a.startswith("map task overhead negative (the phases overlap)") for a in small.assumptions)
    # a positive overhead (start-up, cleanup) stays as calibrated
    slow = toy_profile(stages={"map_task": DurationStats(50_000, 60_000, 20)})
    big = estimate_tasks(slow, plat, Dataset(20 * 64 * MB), JobSettings(reduces=4))
    tiny = estimate_tasks(slow, plat, Dataset(64 * MB / 100, splits=1), JobSettings(reduces=4))
    assert tiny.map_avg.overhead_ms == pytest.approx(big.map_avg.overhead_ms)
    # (Herodotou's tasks: test_herodotou.test_a_negative_overhead_keeps_its_share_at_a_smaller_input)


def test_map_only_tasks_write_their_output() -> None:
    t = estimate_tasks(toy_profile(), LinearPlatform(), Dataset(1 * GB), JobSettings(reduces=0))
    assert set(t.map_avg.phases_ms) == {"read", "map", "write"}
    assert t.reduce_avg is None
    assert t.n_reduces == 0


def test_input_is_cut_like_file_input_format() -> None:
    prof = toy_profile()
    same = resolve_input(prof, Dataset(20 * 64 * MB), JobSettings(reduces=1))
    assert same.splits == 20
    assert same.max_split_records == 650_000
    # the profiled size with other records (narrower ones): the splits stay, their records follow
    narrow = resolve_input(prof, Dataset(20 * 64 * MB, input_records=2 * 20 * 640_000), JobSettings(reduces=1))
    assert (narrow.splits, narrow.avg_split_records, narrow.max_split_records) == (20, 1_280_000, 1_300_000)
    bigger = resolve_input(prof, Dataset(129 * MB), JobSettings(reduces=1, split_bytes=128 * MB))
    assert (bigger.splits, bigger.max_split_bytes, bigger.avg_split_bytes) == (2, 128 * MB, 64.5 * MB)
    assert bigger.avg_split_records == pytest.approx(64.5 * MB / (64 * MB / 640_000))
    given = resolve_input(prof, Dataset(10 * GB, splits=7, input_records=7e6), JobSettings(reduces=1))
    assert given.splits == 7
    assert given.avg_split_records == pytest.approx(1e6)
    # a count of splits and no split size: the count says how the input was cut (the profile how
    # unevenly); the assumed 128 MB block had made the largest of 2 x 2 MB splits 4 MB
    one = replace(prof, input=InputStats(1, 2 * MB, 2 * MB, 20_000, 20_000))
    cut = resolve_input(one, Dataset(4 * MB, splits=2), JobSettings(reduces=1))
    assert (cut.splits, cut.avg_split_bytes, cut.max_split_bytes, cut.max_split_records) == (2, 2 * MB, 2 * MB, 20_000)
    uneven = replace(prof, input=InputStats(2, 3 * MB, 4 * MB, 30_000, 40_000))
    cut = resolve_input(uneven, Dataset(12 * MB, splits=4), JobSettings(reduces=1))
    assert (cut.avg_split_bytes, cut.max_split_bytes) == (3 * MB, 4 * MB)
    default = resolve_input(
        replace(prof, input=replace(prof.input, splits=1)), Dataset(1 * GB), JobSettings(1)
    )
    assert default.splits == 8  # 1 GB of 128 MB blocks
    assert any("HDFS default" in a for a in default.assumptions)


def test_an_input_past_the_profiled_size_keeps_the_profiled_splits_size() -> None:
    # 20 splits of 64 MB profiled under a 128 MB dfs.blocksize (files smaller than a block): 1 %
    # more input had been cut by that block size, 10 splits instead of 21, and every model's time
    # fell by ~40 % (or, with no block size, by the largest split: uneven splits, fewer maps).
    prof = toy_profile(source=ProfileSource(job_ids=("job_1_0001",), job_name="wordcount",
                                            config={"dfs.blocksize": str(128 * MB)}))  # fmt: skip
    for profile in (prof, toy_profile()):
        settings = JobSettings.from_config(profile.source.config, reduces=4)
        at = resolve_input(profile, Dataset(20 * 64 * MB), settings)
        past = resolve_input(profile, Dataset(20 * 64 * MB * 1.0101), settings)
        assert (at.splits, past.splits) == (20, 21)
        assert past.avg_split_bytes == pytest.approx(20 * 64 * MB * 1.0101 / 21)
        assert past.max_split_bytes == pytest.approx(past.avg_split_bytes)  # as even as the profiled
        assert resolve_input(profile, Dataset(40 * 64 * MB), settings).splits == 40
        for m in ("bounds", "herodotou", "critical_path"):
            times = [
                core.get(m).predict(profile, LinearPlatform(), CLUSTER, Dataset(20 * 64 * MB * f), settings).seconds
                for f in (0.98, 1.0, 1.0101, 1.02, 1.5)
            ]
            # one more split than the profiled run's may end its waves a little sooner (smaller
            # maps in as many waves: critical path 38.2 -> 37.7 s), but never ~40 % sooner
            assert all(b >= 0.97 * a for a, b in itertools.pairwise(times)), (m, times)
            assert times[-1] > times[1] * 1.3, (m, times)
    # one profiled split larger than the block assumed (no block size in its config): its input
    # format did not cut by block, so 98 % of its input is one split too, not 4 of 128 MB (which
    # had made the time fall ~50 % on entering the profiled size's 1 % window)
    one = toy_profile(input=InputStats(1, 442 * MB, 442 * MB, 4_420_000, 4_420_000), num_maps=1)
    one_settings = JobSettings.from_config(one.source.config, reduces=4)
    assert [resolve_input(one, Dataset(442 * MB * f), one_settings).splits for f in (0.5, 0.98, 1.0, 1.02, 2.5)] == [
        1, 1, 1, 2, 3]  # fmt: skip
    # a block size the user sets still cuts every input
    settings = JobSettings.from_config(prof.source.config, reduces=4, split_bytes=256 * MB)
    assert resolve_input(prof, Dataset(20 * 64 * MB * 1.0101), settings).splits == 6


def test_settings_read_hadoop_config_names() -> None:
    s = JobSettings.from_config(
        {
            "mapreduce.task.io.sort.mb": "256",
            "io.sort.factor": "25",
            "mapreduce.map.output.compress": "true",
            "mapreduce.reduce.java.opts": "-Djava.net.preferIPv4Stack=true -Xmx1536m",
            "dfs.blocksize": "134217728",
            "mapreduce.job.reduces": "12",
            "unrelated.key": "x",
        }
    )
    assert (s.io_sort_mb, s.sort_factor, s.compress_map_output, s.reduces) == (256.0, 25, True, 12)
    assert s.reduce_task_heap_mb == 1536.0
    assert s.split_bytes == 128 * MB
    assert s.with_setting("io.sort.mb", "512").io_sort_mb == 512.0
    with pytest.raises(PredictionError, match="unknown setting"):
        s.with_setting("io.sort.megabytes", "1")
    with pytest.raises(PredictionError, match="cannot read value"):
        s.with_setting("io.sort.factor", "many")
    with pytest.raises(PredictionError, match="sort factor"):
        JobSettings(reduces=1, sort_factor=1)
    # JVM options without -Xmx leave the heap at its default; a bare number is megabytes
    assert JobSettings.from_config({"mapred.child.java.opts": "-verbose:gc"}).reduce_task_heap_mb == 200.0
    assert s.with_setting("reduce_task_heap_mb", "512").reduce_task_heap_mb == 512.0
    # The merge manager divides mapreduce.reduce.memory.totalbytes where it is set (LocalJobRunner
    # and the local engine set it), whatever -Xmx says and in whichever order the keys come
    total = {"mapreduce.reduce.memory.totalbytes": str(44 * MB)}
    xmx = {"mapreduce.reduce.java.opts": "-Xmx1536m"}
    for config in ({**total, **xmx}, {**xmx, **total}):
        assert JobSettings.from_config(config).reduce_task_heap_mb == 44.0
    assert s.with_setting("mapreduce.reduce.memory.totalbytes", str(64 * MB)).reduce_task_heap_mb == 64.0
    assert JobSettings.from_config({"mapreduce.reduce.memory.totalbytes": " "}).reduce_task_heap_mb == 200.0


@pytest.mark.parametrize(
    ("text", "expected"),
    [("50G", 50 * GB), ("512M", 512 * MB), ("1.5T", int(1.5 * 2**40)), ("4096", 4096), ("128MiB", 128 * MB)],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("text", ["50Q", "-3G", "", "G", "9" * 310, "9000P", 1e300, float("nan")])
def test_parse_size_rejects(text: str | float) -> None:
    with pytest.raises(SizeError):
        parse_size(text)


def test_format_size() -> None:
    assert format_size(50 * GB) == "50.0G"
    assert format_size(300 * MB) == "300M"


def toy_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A toy profile file, and a platform file the CLI loads as :class:`LinearPlatform`."""
    cli_predict = importlib.import_module("phaseline.cli.predict")
    monkeypatch.setattr(cli_predict, "_load_platform", lambda path: LinearPlatform())
    profile = tmp_path / "profile.json"
    toy_profile().save(profile)
    platform = tmp_path / "platform.json"
    platform.write_text("{}")
    return profile, platform


def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> str:
    from phaseline.cli import main

    profile, platform = toy_files(tmp_path, monkeypatch)
    result = CliRunner().invoke(main, [*args, "--profile", str(profile), "--platform", str(platform)])
    assert result.exit_code == 0, result.output
    return result.output


def _cli_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    """:func:`_cli` with ``--format json``, its output parsed."""
    return json.loads(_cli(tmp_path, monkeypatch, *args, "--format", "json"))


def test_cli_predict_json_contract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _cli_json(
        tmp_path,
        monkeypatch,
        "predict",
        "--input-bytes",
        "50G",
        "--reduces",
        "240",
        "--nodes",
        "64",
        "--map-slots-per-node",
        "2",
        "--reduce-slots-per-node",
        "2",
    )
    assert isinstance(rows, list)
    assert {r["model"] for r in rows} == set(core.models())
    for row in rows:
        assert {"model", "seconds", "low_s", "high_s"} <= set(row)
    bounds = next(r for r in rows if r["model"] == "bounds")
    assert bounds["low_s"] <= bounds["seconds"] <= bounds["high_s"]
    assert bounds["dataflow"]["maps"] == 800  # 50 GB in the profile's 64 MB splits
    herodotou = next(r for r in rows if r["model"] == "herodotou")
    assert herodotou["low_s"] is None
    assert herodotou["high_s"] is None


def test_cli_predict_table_and_one_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _cli(tmp_path, monkeypatch, "predict", "--model", "bounds", "--set", "io.sort.mb=200")
    assert "bounds" in out
    assert "herodotou" not in out
    assert "every model:" not in out  # one model: its notes under its name


def test_cli_predict_models_comma_separated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `--model bounds,herodotou` was refused ('bounds,herodotou' is no model); it means both
    rows = _cli_json(tmp_path, monkeypatch, "predict", "--model", "bounds,herodotou")
    assert [r["model"] for r in rows] == ["bounds", "herodotou"]


def test_cli_predict_table_states_each_assumption_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _cli(tmp_path, monkeypatch, "predict", "--input-bytes", "50G", "--reduces", "240")
    below = out.split("└", 1)[1].splitlines()[1:]  # the lines under the table
    # first what the times span: the profile's makespans, not `phaseline jobs`' submit-to-finish
    assert below[0] == "  seconds: first task start to last task finish (ARIA's completion time; " \
        "`phaseline jobs` counts from submission)"
    # then, in one line, which evidence the profile's per-task costs came from (issue 37)
    assert below[1].startswith("  profile: per-task map cost ")
    # then what the bounds' and the simulation's intervals hold, without --calibration
    assert below[2].startswith("  intervals: low_s-high_s hold the profiled runs' spread")
    below = below[3:]
    notes = [line.strip().split(": ", 1) for line in below if line.startswith("  ") and ": " in line]
    assert len(notes) == len({note for _, note in notes})
    assert any(models == "every model" for models, _ in notes)  # the shared task estimates' notes
    named = {m for models, _ in notes if models != "every model" for m in models.split(", ")}
    assert named <= set(core.models())


def test_cli_whatif(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    figures = _cli_json(tmp_path, monkeypatch, "whatif", "--set", "io.sort.mb=256", "--set", "4 more nodes")
    rows = {r["figure"]: r for r in figures}
    assert rows["spills"]["io.sort.mb=256"] < rows["spills"]["baseline"]
    assert rows["seconds"]["nodes=+4"] < rows["seconds"]["baseline"]
    assert "all edits" in rows["seconds"]


def first_reduce_extra_s(con: Any, job_id: str) -> float:
    """Seconds the job's first reduce took beyond the median of its later ones (0 with one reduce)."""
    durations = [d for (d,) in con.execute(
        "SELECT finish_ms - start_ms FROM attempts WHERE job_id = ? AND task_type = 'REDUCE' "
        "AND status = 'SUCCEEDED' ORDER BY start_ms", [job_id]).fetchall()]  # fmt: skip
    if len(durations) < 2:
        return 0.0
    return max(0.0, durations[0] - statistics.median(durations[1:])) / 1000


#: How far Herodotou's estimate may land from a measured local-engine run of the same job and size.
HERODOTOU_SAME_JOB_REL_ERROR = 0.25
#: What the ARIA bounds of the profiled run itself may miss by: the engine's idle gaps between tasks,
#: which no model prices (the bounds were loose enough to hide them while a slow first map was
#: averaged into every map; profiles.task_costs now sets it apart).
TASK_GAP_REL = 0.02


@pytest.mark.slow
# per-task estimates (largest split x average selectivity, eq. 2's uniform partition) land a few bytes
# outside the data range the platform model saw in the very same runs: the warning is right, not an error
@pytest.mark.filterwarnings("ignore::phaseline.errors.ExtrapolationWarning")
# the sample's first run (4 maps on one slot) says its one-time cost rests on thin evidence: shown, not raised
@pytest.mark.filterwarnings("default::phaseline.errors.DataQualityWarning")
def test_end_to_end_local_engine_runs(tmp_path: Path) -> None:
    """Real local-engine runs (sample_traces/): ingest, extract each job's profile, fit a platform model
    on the runs, predict each job at its own size on the local engine (one node, its map and reduce
    parallelism as slots): the measured time lies within the ARIA bounds; Herodotou lands near it."""
    from click.testing import CliRunner

    from ingest.pipeline import ingest_paths
    from phaseline.cli import main
    from phaseline.schemas import GENERIC_PHASES
    from phaseline.store import Store
    from platform_model.fit import MIN_POINTS
    from platform_model.model import fit_platform
    from platform_model.profile import profile_from_store
    from predict.edits import Scenario
    from profiles.extract import extract_profile

    runs = {}
    for d in sorted((Path(__file__).resolve().parents[2] / "sample_traces").iterdir()):
        if (d / "run.json").is_file():
            doc = json.loads((d / "run.json").read_text())
            runs[doc["job_id"]] = (d, doc["params"])
    assert len(runs) >= 3
    store = Store(tmp_path / "store")
    ingest_paths([d for d, _ in runs.values()], store)
    con = store.connect()
    # ARIA's completion time, what every model predicts (first task start to last task finish): the
    # job's launch-to-finish adds its set-up before the first task, which no model prices
    measured = {
        j: (f - s) / 1000
        for j, s, f in con.execute(
            "SELECT job_id, min(start_ms), max(finish_ms) FROM attempts "
            "WHERE status = 'SUCCEEDED' AND task_type IN ('MAP', 'REDUCE') GROUP BY job_id"
        ).fetchall()
    }
    assert set(measured) == set(runs)
    training = profile_from_store(tmp_path / "store")
    # a small model: the generic phases these few runs measured often enough to fit a line to
    fitted = [ph.value for ph in GENERIC_PHASES if training.arrays(ph.value)[0].size >= MIN_POINTS]
    assert {"spill", "merge", "shuffle"} <= set(fitted)
    for job_id, (_, params) in runs.items():
        profile = extract_profile(con, job_id)
        platform = fit_platform(training, phases=fitted, split=False, settings=dict(profile.source.config))
        cluster = Cluster(1, params["map_parallelism"], params["reduce_parallelism"])
        s = Scenario.for_profile(profile, cluster)
        bounds = core.get("bounds").predict(profile, platform, s.cluster, s.dataset, s.settings)
        assert bounds.low_s is not None
        assert bounds.high_s is not None
        # the bounds price tasks, not LocalJobRunner's gaps between one task's end and the next's start
        # on a slot (87 ms over 9 tasks in bench-8mb-sel1.0): a known gap, named, not hidden
        gaps = TASK_GAP_REL * measured[job_id]
        # nor the first reduce's warm-up in a JVM that ran its maps (a known gap, named, not hidden: the
        # typical shuffle the profile keeps is a later reduce's, and no one-time reduce term adds it back;
        # bench-8mb-sel1.0: 3.0 s and 1.4 s reduces on one slot, the upper bound 0.25 s short)
        warmup = first_reduce_extra_s(con, job_id)
        assert bounds.low_s - gaps <= measured[job_id] <= bounds.high_s + gaps + warmup, (
            job_id, measured[job_id], bounds, warmup,
        )  # fmt: skip
        herodotou = core.get("herodotou").predict(profile, platform, s.cluster, s.dataset, s.settings)
        assert abs(herodotou.seconds - measured[job_id]) <= HERODOTOU_SAME_JOB_REL_ERROR * measured[job_id]

    # the same through the CLI, with files as a user has them
    profile.save(tmp_path / "profile.json")
    platform.save(tmp_path / "platform.json")
    args = [
        "predict", "--profile", str(tmp_path / "profile.json"), "--platform", str(tmp_path / "platform.json"),
        "--map-slots-per-node", str(params["map_parallelism"]),
        "--reduce-slots-per-node", str(params["reduce_parallelism"]), "--format", "json",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    rows = {r["model"]: r for r in json.loads(result.stdout)}
    assert rows["bounds"]["low_s"] <= measured[job_id] <= rows["bounds"]["high_s"]


def test_vianna_prices_a_one_node_clusters_shuffle() -> None:
    # every fetch on one node is local; the paper's local shuffle-sort has no network demand, and with the
    # shuffle charged to the network alone the local engine's shuffles cost nothing (0.000 s)
    one = replace(CLUSTER, nodes=1)
    p = core.get("vianna").predict(toy_profile(), LinearPlatform(), one, Dataset(5 * GB), JobSettings(reduces=8))
    assert p.phases["shuffle_sort.response"] > 0
    assert p.dataflow["utilization_network"] == 0.0
    assert any("a fetch from the reduce's own node -> disk" in a for a in p.assumptions)


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "bogus"], "no model 'bogus'; the models: all, "),
        (["--model", "bounds,bogus"], "no model 'bogus'"),
        (["--input-bytes", "0"], "must be more than 0 bytes"),
        (["--split-bytes", "0"], "must be more than 0 bytes"),
    ],
)
def test_cli_predict_bad_option_values_are_usage_errors(tmp_path: Path, args: list[str], says: str) -> None:
    # exit status 2 with the command's usage, as the README says of a wrong option (it was 1, no usage)
    from phaseline.cli import main

    profile = tmp_path / "profile.json"
    toy_profile().save(profile)
    platform = tmp_path / "platform.json"
    platform.write_text("{}")
    result = CliRunner().invoke(main, ["predict", "--profile", str(profile), "--platform", str(platform), *args])
    assert result.exit_code == 2, result.output
    assert says in result.output
    assert "Usage: " in result.output


def test_cli_timeline_to_an_unknown_file_type_is_a_usage_error(tmp_path: Path) -> None:
    from phaseline.cli import main

    result = CliRunner().invoke(main, ["timeline", "job_1_0001", "--out", str(tmp_path / "t.pdf"), "--store", str(tmp_path)])
    assert result.exit_code == 2, result.output
    assert "write FILE.png, FILE.svg or FILE.json (Chrome trace), not 't.pdf'" in result.output


def test_the_profiled_runs_own_block_size_does_not_recut_its_input(fixtures_dir: Path, tmp_path: Path) -> None:
    # SLS's TeraGen ran 96 maps over 8 kB of (synthetic) input with dfs.blocksize 128 MB in its conf:
    # read as a split size someone gave, it had re-cut the profiled input into 1 map, so every model
    # predicted one map's job whatever the cluster (and critical_path, recalibrated on it, 0 s).
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store
    from predict.tasks import profiled_settings
    from profiles.extract import extract_profile

    store = Store(tmp_path / "store")
    ingest_paths([fixtures_dir / "apache-hadoop" / "hadoop-sls" / "2jobs2min-rumen-jh.json"], store)
    profile = extract_profile(store.connect(), "job_1369942127770_1205")
    settings = profiled_settings(profile)
    assert profile.input.splits == 96
    assert settings.split_bytes == 128 * MB
    shape = resolve_input(profile, Dataset(profile.input.total_bytes), settings)
    assert shape.splits == 96
    assert any("its 96 splits are reused" in a for a in shape.assumptions)
    # a split size that is a change still cuts the input (the profiled one too)
    recut = resolve_input(profile, Dataset(profile.input.total_bytes, split_bytes=1024), settings)
    assert recut.splits == math.ceil(profile.input.total_bytes / 1024)
    # every model predicts the profiled run from its 96 maps (a platform of straight lines here)
    def seconds(nodes: int) -> dict[str, float]:
        cluster = Cluster(nodes=nodes, map_slots_per_node=2, reduce_slots_per_node=2)
        dataset = Dataset(profile.input.total_bytes)
        return {m: core.get(m).predict(profile, LinearPlatform(), cluster, dataset, settings).seconds for m in core.models()}

    few, many = seconds(4), seconds(48)
    assert all(many[m] < few[m] for m in few), (few, many)


@pytest.mark.parametrize(
    ("key", "value"),
    [("dfs.block.size", "0"), ("split_bytes", "0"), ("interm_compress_ratio", "-1"), ("interm_compress_ratio", "0")],
)
def test_a_split_size_or_compression_ratio_that_cannot_be_is_refused(key: str, value: str) -> None:
    # a 0 split size had raised ZeroDivisionError in resolve_input; a negative compression ratio gave
    # herodotou negative shuffle times, and 0 was silently replaced by the measured ratio
    with pytest.raises(PredictionError, match="must be a finite number > 0"):
        JobSettings(reduces=1).with_setting(key, value)


def test_cli_predict_refuses_records_that_are_no_number(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from phaseline.cli import main

    profile = tmp_path / "profile.json"
    toy_profile().save(profile)
    (tmp_path / "platform.json").write_text("{}")
    for records in ("inf", "nan"):  # inf had raised OverflowError; nan had predicted 0 s
        res = CliRunner().invoke(
            main, ["predict", "--profile", str(profile), "--platform", str(tmp_path / "platform.json"),
                   "--input-records", records],
        )  # fmt: skip
        assert res.exit_code == 2
        assert "is not a finite number" in res.output


def test_a_count_with_a_fraction_is_refused_not_rounded() -> None:
    # `--set reduces=1.5` had become 1 reduce and `--set nodes=1.5` 2 nodes, without a word
    from predict.edits import Scenario, apply_edits, parse_edit

    with pytest.raises(PredictionError, match=r"cannot read value '1\.5' as a finite int"):
        JobSettings(reduces=1).with_setting("reduces", "1.5")
    assert JobSettings(reduces=1).with_setting("reduces", "3.0").reduces == 3
    base = Scenario(Cluster(2, 2, 2), Dataset(GB), JobSettings(reduces=1))
    for text in ("nodes=1.5", "splits=2.5"):
        with pytest.raises(PredictionError, match="not a whole number"):
            apply_edits(base, [parse_edit(text)])
    assert apply_edits(base, [parse_edit("nodes=+2")]).cluster.nodes == 4


def test_a_profiled_configuration_without_a_usable_split_size_is_read_without_it() -> None:
    # a conf with dfs.blocksize 0 had made every prediction of its profile fail (a 0 split size)
    from phaseline.errors import DataQualityWarning

    with pytest.warns(DataQualityWarning, match="dfs.blocksize = '0' is no split size; it is ignored"):
        settings = JobSettings.from_config({"dfs.blocksize": "0", "io.sort.mb": "50"})
    assert settings.split_bytes is None
    assert settings.io_sort_mb == 50


@pytest.mark.parametrize(
    ("key", "value"),
    [("reduce_task_heap_mb", "inf"), ("reduce_task_heap_mb", "nan"), ("mapred.child.java.opts", "inf"),
     ("mapreduce.reduce.memory.totalbytes", "inf"), ("dfs.blocksize", "nan")],
)  # fmt: skip
def test_a_heap_or_size_that_is_not_finite_is_refused_by_name(key: str, value: str) -> None:
    # inf MB of reduce heap reached the shuffle arithmetic (OverflowError: cannot convert float
    # infinity to integer, in Herodotou's dataflow: `predict --model all` died); nan was taken.
    with pytest.raises(PredictionError, match=rf"setting '{re.escape(key)}': cannot read value '{value}' as a finite"):
        JobSettings(reduces=1).with_setting(key, value)  # --set KEY=VALUE
    with pytest.raises(PredictionError, match="must be finite and > 0"):
        JobSettings(reduces=1, reduce_task_heap_mb=math.nan)


def test_a_vanishing_map_output_segment_prices_without_overflow() -> None:
    # 1e-300 bytes of input: each map's segment for a reduce is ~0 bytes, so the in-memory merge's
    # segments per file (buffer / segment) came out infinite and math.ceil raised.
    for model in ("herodotou", "bounds"):
        p = core.get(model).predict(toy_profile(), LinearPlatform(), CLUSTER, Dataset(1e-300), JobSettings(reduces=4))
        assert math.isfinite(p.seconds)
        assert p.seconds > 0


def test_the_vianna_models_take_the_jobs_slow_start() -> None:
    profile, platform = toy_profile(), LinearPlatform()
    one = Cluster(nodes=1, map_slots_per_node=1, reduce_slots_per_node=1)
    at_end = JobSettings(reduces=1, slowstart=1.0)
    p = core.get("vianna").predict(profile, platform, one, Dataset(GB), at_end)
    t = core.get("vianna_tripathi").predict(profile, platform, one, Dataset(GB), at_end)
    assert p.seconds == pytest.approx(t.seconds, rel=0.02)  # one branch a phase: the estimates agree
    early = core.get("vianna").predict(profile, platform, one, Dataset(GB), JobSettings(reduces=1, slowstart=0.05))
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
    assert "coefficient of variation map 0.08, shuffle_sort 0.14, merge 0.12" in " ".join(t_narrow.assumptions)
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


def test_slowstart_one_leaves_the_first_wave_the_whole_shuffle() -> None:
    # Reduces that start only after every map overlap nothing of their shuffle with the maps: the
    # first wave takes the whole shuffle, not the profiled tail (slowstart had changed no model).
    prof = toy_profile()  # profiled at Hadoop's default slowstart, 0.05: first shuffle 3 s, typical 6 s
    early = estimate_tasks(prof, LinearPlatform(), Dataset(prof.input.total_bytes), JobSettings(reduces=4))
    late = estimate_tasks(prof, LinearPlatform(), Dataset(prof.input.total_bytes), JobSettings(reduces=4, slowstart=1.0))
    assert early.first_shuffle_avg_ms < early.shuffle_avg_ms
    assert late.first_shuffle_avg_ms == pytest.approx(late.shuffle_avg_ms)
    assert any("takes the whole shuffle" in a for a in late.assumptions)
    for model in ("bounds", "critical_path", "simulation"):
        times = [core.get(model).predict(prof, LinearPlatform(), CLUSTER, Dataset(prof.input.total_bytes),
                                         JobSettings(reduces=4, slowstart=v)).seconds for v in (0.05, 1.0)]  # fmt: skip
        assert times[1] > times[0], model
    # a LocalJobRunner profile had no slow start to lose: nothing changes
    local = toy_profile(source=ProfileSource(job_ids=("job_local1_0001",), job_name="wc", config={}))
    same = estimate_tasks(local, LinearPlatform(), Dataset(local.input.total_bytes), JobSettings(reduces=4, slowstart=1.0))
    assert same.first_shuffle_avg_ms < same.shuffle_avg_ms
