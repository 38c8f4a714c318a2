"""Task estimates (Zhang et al. 2013, sec. 5): phases by hand, calibrated overheads, profiled spans, slow start."""

from __future__ import annotations

from dataclasses import replace

import pytest

from phaseline.errors import ExtrapolationWarning, PredictionError
from predict import core
from predict.core import Dataset, JobSettings
from predict.tasks import estimate_tasks
from profiles.profile import ProfileSource
from profiles.profile_stats import DurationStats, InputStats
from tests.predict.doubles import CLUSTER, GB, MB, REL, LinearPlatform, toy_profile


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
    slow_sort = toy_profile(
        stages={},
        phases={"sort": DurationStats(9_000.0, 9_000.0, 4), "shuffle": DurationStats(1_200.0, 1_500.0, 4)},
    )
    both = 200 + 3e-5 * shuffle
    assert both < 9_000
    for scale in (1, 2):
        t = estimate_tasks(slow_sort, plat, Dataset(scale * 20 * 64 * MB), JobSettings(reduces=4))
        assert t.shuffle_avg_ms == pytest.approx(1_200.0 * (200 + 3e-5 * scale * shuffle) / both, rel=REL)
        assert t.first_shuffle_avg_ms == pytest.approx(t.shuffle_avg_ms)  # none profiled: no overlap
    assert any(
        a.startswith(
            "shuffle: the profiled reduce-side sort (9000 ms) is longer than the platform model's "
            f"shuffle + sort ({both:.0f} ms)"
        )
        and a.endswith(
            "the profiled shuffle (1200 ms per reduce) scaled as the platform model's shuffle + sort scales"
        )
        for a in t.assumptions
    )
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
        estimate_tasks(steep, plat, Dataset(20 * 64 * MB), JobSettings(reduces=n)).shuffle_avg_ms
        for n in (2, 4, 8, 16)
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
    with pytest.warns(
        ExtrapolationWarning, match=r"phase 'sort': the profiled 'sort' span \(17 ms on 18 bytes"
    ) as got:
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
    assert any(
        a.startswith("reduce function: the profiled 'reduce+write' span (2000 ms") for a in same.assumptions
    )
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


def test_map_only_tasks_write_their_output() -> None:
    t = estimate_tasks(toy_profile(), LinearPlatform(), Dataset(1 * GB), JobSettings(reduces=0))
    assert set(t.map_avg.phases_ms) == {"read", "map", "write"}
    assert t.reduce_avg is None
    assert t.n_reduces == 0


def test_slowstart_one_leaves_the_first_wave_the_whole_shuffle() -> None:
    # Reduces that start only after every map overlap nothing of their shuffle with the maps: the
    # first wave takes the whole shuffle, not the profiled tail (slowstart had changed no model).
    prof = toy_profile()  # profiled at Hadoop's default slowstart, 0.05: first shuffle 3 s, typical 6 s
    early = estimate_tasks(prof, LinearPlatform(), Dataset(prof.input.total_bytes), JobSettings(reduces=4))
    late = estimate_tasks(
        prof, LinearPlatform(), Dataset(prof.input.total_bytes), JobSettings(reduces=4, slowstart=1.0)
    )
    assert early.first_shuffle_avg_ms < early.shuffle_avg_ms
    assert late.first_shuffle_avg_ms == pytest.approx(late.shuffle_avg_ms)
    assert any("takes the whole shuffle" in a for a in late.assumptions)
    for model in ("bounds", "critical_path", "simulation"):
        times = [core.get(model).predict(prof, LinearPlatform(), CLUSTER, Dataset(prof.input.total_bytes),
                                         JobSettings(reduces=4, slowstart=v)).seconds for v in (0.05, 1.0)]  # fmt: skip
        assert times[1] > times[0], model
    # a LocalJobRunner profile had no slow start to lose: nothing changes
    local = toy_profile(source=ProfileSource(job_ids=("job_local1_0001",), job_name="wc", config={}))
    same = estimate_tasks(
        local, LinearPlatform(), Dataset(local.input.total_bytes), JobSettings(reduces=4, slowstart=1.0)
    )
    assert same.first_shuffle_avg_ms < same.shuffle_avg_ms
