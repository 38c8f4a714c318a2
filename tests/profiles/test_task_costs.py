"""One-time vs per-task cost on its own (profiles.task_costs): the first wave set apart, and work lines over sizes."""

from __future__ import annotations

import math

import pytest

from profiles.task_costs import (
    MIN_LATER_MAPS_ONE_JVM,
    fit_map_work,
    fit_work,
    split_first_wave,
    unused_fit_reason,
)


# ---------------------------------------------------------------- the split itself
def test_a_slow_first_map_is_a_one_time_cost_and_the_work_is_kept() -> None:
    durs = [600.0, 40.0, 41.0, 39.0, 40.0, 40.0]
    s = split_first_wave(durs, [1, 2, 3, 4, 5, 6], 1)
    assert s.can_tell
    assert s.left_out == 1
    assert s.typical_count == 5
    assert s.typical_avg_ms == pytest.approx(40.0)
    assert s.one_time_ms == pytest.approx(560.0)
    assert len(durs) * s.typical_avg_ms + s.slots * s.one_time_ms == pytest.approx(sum(durs))


def test_two_slots_spread_the_extra_over_both() -> None:
    # one of the two first-wave maps paid for class loading; the stage is late by half of it
    s = split_first_wave([600.0, 40.0, 40.0, 40.0, 40.0, 40.0], [1, 1, 2, 2, 3, 3], 2)
    assert (s.typical_count, s.left_out) == (5, 1)
    assert s.one_time_ms == pytest.approx(280.0)


def test_a_straggler_of_a_later_wave_is_left_out_and_counted() -> None:
    durs = [40.0, 41.0, 39.0, 40.0, 160.0, 40.0, 40.0]
    s = split_first_wave(durs, [1, 2, 3, 4, 5, 6, 7], 1)
    assert s.left_out == 1
    assert s.typical_max_ms == 41.0
    assert s.one_time_ms == pytest.approx(sum(durs) - 7 * s.typical_avg_ms)


def test_no_slow_task_changes_nothing() -> None:
    durs = [40.0, 42.0, 38.0, 41.0]
    s = split_first_wave(durs, [1, 2, 3, 4], 1)
    assert (s.left_out, s.one_time_ms, s.typical_count) == (0, 0.0, 4)
    assert s.typical_avg_ms == pytest.approx(40.25)


def test_a_first_wave_faster_than_the_rest_is_not_a_negative_cost() -> None:
    s = split_first_wave([20.0, 40.0, 40.0, 41.0], [1, 2, 3, 4], 1)
    assert s.one_time_ms == 0.0
    assert s.left_out == 0
    assert s.typical_avg_ms == pytest.approx(35.25)


def test_one_wave_cannot_tell_and_says_how_to_fix_it() -> None:
    s = split_first_wave([600.0, 40.0], [1, 1], 2)
    assert not s.can_tell
    assert s.one_time_ms == 0.0
    assert s.typical_avg_ms == 320.0
    assert "profile a run with more maps than slots, or a second input size" in s.evidence


def test_in_one_jvm_with_few_later_maps_the_fastest_map_is_the_typical_one() -> None:
    """LocalJobRunner's maps share one JVM, whose blocking compiles can stall both later maps of a 4-map
    run on two slots (the backtest suite's sort, profiled at 8 MiB: its maps 73-110 ms in runs eight times
    larger): with fewer later maps than MIN_LATER_MAPS (on one slot, than MIN_LATER_MAPS_ONE_JVM), the fastest
    map (and any within MIN_REL_SPREAD of it) is the typical one, and the rest is the JVM's one-time warm-up."""
    durs, waves = [124.0, 116.0, 362.0, 349.0], [1, 1, 2, 2]
    apart = split_first_wave(durs, waves, 2)  # a cluster's maps, a JVM each: the later waves' cut
    assert apart.left_out == 0
    one = split_first_wave(durs, waves, 2, one_jvm=True)
    assert one.fastest
    assert (one.typical_count, one.left_out, one.typical_index) == (1, 3, (1,))
    assert one.typical_avg_ms == 116.0
    assert one.one_time_ms == pytest.approx((sum(durs) - 4 * 116.0) / 2)
    assert "fastest of 4 maps (one JVM" in one.evidence
    close = split_first_wave([100.0, 41.0, 40.0, 90.0], [1, 2, 2, 3], 2, one_jvm=True)
    assert close.typical_index == (1, 2)  # 41 ms is within 5 % of the fastest: as typical
    assert close.typical_avg_ms == pytest.approx(40.5)
    # a one-slot, 4-map profile whose three later maps hold the JVM's stalls (the quiet suite's groupby at
    # 8 MiB; its maps 30-60 ms in runs eight times larger): fewer than MIN_LATER_MAPS_ONE_JVM, the fastest
    stalled = split_first_wave([75.0, 65.0, 421.0, 204.0], [1, 2, 3, 4], 1, one_jvm=True)
    assert stalled.fastest
    assert (stalled.typical_avg_ms, stalled.typical_index) == (65.0, (1,))
    assert stalled.one_time_ms == pytest.approx(75.0 + 421.0 + 204.0 - 3 * 65.0)
    assert not split_first_wave([75.0, 65.0, 421.0, 204.0], [1, 2, 3, 4], 1).fastest  # a cluster's: the cut
    # enough later maps to judge by, in one JVM too: their cut, and the maps' variation stays per task
    durs = [600.0, 40.0, 41.0, 39.0, 44.0, 40.0, 42.0, 38.0, 43.0]
    assert len(durs) - 1 >= MIN_LATER_MAPS_ONE_JVM
    many = split_first_wave(durs, list(range(1, len(durs) + 1)), 1, one_jvm=True)
    assert not many.fastest
    assert (many.left_out, many.typical_count) == (1, 8)
    assert many.typical_avg_ms == pytest.approx(40.875)


def test_on_a_cluster_few_later_maps_set_nothing_apart() -> None:
    """Each map of a cluster starts its own JVM: the first wave holds no warm-up the later maps inherit, and a
    lone later map, run as the first wave's JVMs exit, is no measure of a typical one (the mini YARN cluster's
    maponly: 5.5, 4.7, 6.1 s in the first wave, 2.2 s alone after it, 5-7 s in every wave of a larger run)."""
    durs, waves = [5500.0, 4700.0, 6100.0, 2200.0], [1, 1, 1, 2]
    s = split_first_wave(durs, waves, 3)
    assert s.pooled
    assert not s.fastest
    assert (s.typical_count, s.left_out, s.one_time_ms) == (4, 0, 0.0)
    assert s.typical_avg_ms == pytest.approx(sum(durs) / 4)
    assert "too few to set the first wave apart" in s.evidence
    assert s.caveat is not None
    assert s.caveat.startswith("only 1 map(s) of later waves")
    # with enough later maps the cut stands on a cluster too
    many = split_first_wave([9000.0, 4000.0, 4100.0, 3900.0, 4000.0], [1, 2, 3, 4, 5], 1)
    assert not many.pooled
    assert (many.left_out, many.typical_count) == (1, 4)


def test_split_rejects_mismatched_input() -> None:
    with pytest.raises(ValueError, match="one wave per duration"):
        split_first_wave([1.0, 2.0], [1], 1)


def test_map_work_fit_needs_two_sizes_and_a_positive_slope() -> None:
    assert fit_map_work([1e6, 1.005e6], [10.0, 11.0]) is None
    assert fit_map_work([1e6, 2e6], [20.0, 10.0]) is None
    fit = fit_map_work([1e6, 3e6, 6e6], [1400.0, 3400.0, 6400.0])
    assert fit is not None
    assert fit.sizes == 3
    assert fit.fixed_ms == pytest.approx(400.0)
    assert fit.work_ms(9e6) == pytest.approx(9400.0)


def test_thin_evidence_is_named_with_its_fix() -> None:
    assert split_first_wave([40.0, 41.0, 39.0, 40.0, 40.0], [1, 2, 3, 4, 5], 1).caveat is None
    few = split_first_wave([600.0, 40.0, 41.0], [1, 2, 3], 1)
    assert few.caveat is not None
    assert few.caveat.startswith("only 2 map(s) of later waves")
    assert "second input size" in few.caveat
    heavy = split_first_wave([5000.0, 40.0, 41.0, 39.0, 40.0], [1, 2, 3, 4, 5], 1)
    assert heavy.caveat is not None
    assert "outweigh all its maps at the typical duration" in heavy.caveat
    one = split_first_wave([600.0, 40.0], [1, 1], 2)
    assert one.caveat is not None
    assert "one wave on 2 slot(s)" in one.caveat


def test_a_fixed_part_within_the_runs_noise_is_not_told_apart() -> None:
    # 8 and 24 MiB runs of 1.2 and 3.2 s: the line says 200 ms fixed, but 15 % noise on each run
    # gives that intercept a standard error of about 240 ms
    noisy = fit_work([8.0, 24.0], [1200.0, 3200.0], rel_sd=0.15)
    assert noisy is not None
    assert noisy.fixed_ms == pytest.approx(200.0)
    c = (0.5 + 16 * 8 / 128, 0.5 - 16 * 8 / 128)  # F = sum(c_i y_i): mean x 16, Sxx 128
    assert noisy.fixed_se_ms == pytest.approx(math.hypot(c[0] * 0.15 * 1200, c[1] * 0.15 * 3200))
    assert not noisy.fixed_told_apart
    assert "within 1.96 standard errors" in unused_fit_reason(noisy)
    quiet = fit_work([8.0, 24.0], [1200.0, 3200.0], rel_sd=0.01)
    assert quiet is not None
    assert quiet.fixed_told_apart
    unknown = fit_work([8.0, 24.0], [1200.0, 3200.0])
    assert unknown is not None
    assert unknown.fixed_told_apart  # noise unknown: kept
