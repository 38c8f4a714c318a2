"""The Table-1 report: in-sample and held-out accuracy, the noise ceiling, and the relative error."""

from __future__ import annotations

import numpy as np
import pytest

from platform_model.accuracy import (
    _most_within,
    accuracy_report,
    noise_ceiling,
    relative_errors,
    render_markdown,
    table1,
)
from platform_model.model import fit_platform
from platform_model.profile import (
    profile_from_arrays,
)
from tests.platform_model.platform_doubles import _synthetic_profile


def test_table1_and_cross_validation() -> None:
    prof = _synthetic_profile(seed=3)
    model = fit_platform(prof)
    rows = table1(model, prof)
    assert {r.phase for r in rows} == {"spill", "merge", "shuffle"}
    for r in rows:
        # 4 % noise: ~99 % of points within 10 %
        assert r.within[0] > 0.95
        assert r.within[0] <= r.within[1] <= r.within[2]
    rep = accuracy_report(model, prof, folds=5)
    assert rep.folds == 5
    assert len(rep.held_out) == 3
    for r in rep.held_out:
        assert r.within_15 > 0.95
    text = render_markdown(rep, model)
    assert "| spill |" in text
    assert "held-out" in text
    assert "Not fitted: read" in text


def test_most_within_is_the_deepest_overlap_of_the_tolerance_intervals() -> None:
    # 100 and 120 share c in [102, 115] (15 %); 200 is alone: two of three at best
    assert _most_within(np.array([100.0, 120.0, 200.0]), 0.15) == 2
    assert _most_within(np.array([100.0, 140.0]), 0.15) == 1  # 115 < 119: no common value
    assert _most_within(np.array([100.0, 100.0, 100.0]), 0.10) == 3


def test_noise_ceiling_bounds_every_model_of_the_data() -> None:
    """Same-size rows of one run: no function of the data does better than the ceiling."""
    rng = np.random.default_rng(5)
    runs = np.repeat([f"job_{k}" for k in range(30)], 4)
    data = np.repeat(rng.uniform(1e6, 1e8, 30), 4)  # a run's 4 tasks process the same data
    dur = (50 + 2e-6 * data) * rng.lognormal(0.0, 0.3, data.size)  # 30 % task-to-task noise
    prof = profile_from_arrays(["spill"] * data.size, data, dur, runs)
    (ceiling,) = noise_ceiling(prof)
    assert ceiling.phase == "spill"
    assert ceiling.n == data.size
    assert ceiling.within[0] <= ceiling.within[1] <= ceiling.within[2] < 1.0
    model = fit_platform(prof)
    (fitted,) = table1(model, prof)
    assert fitted.within[1] <= ceiling.within[1]
    report = accuracy_report(model, prof, folds=3)
    assert report.ceiling == (ceiling,)
    assert f"| {100 * ceiling.within[1]:.0f} % |" in render_markdown(report, model)
    doc = report.to_json()
    w10, w15, w20 = ceiling.within
    assert doc["ceiling"] == [
        {"phase": "spill", "n": data.size, "within_10": w10, "within_15": w15, "within_20": w20}
    ]
    in_sample = doc["in_sample"]
    assert isinstance(in_sample, list)
    (row,) = in_sample
    assert list(row) == ["phase", "n", "within_10", "within_15", "within_20", "median_error", "zero_ms"]
    assert (row["within_10"], row["within_15"], row["within_20"]) == fitted.within
    # the same rows without noise: everything can be matched
    quiet = profile_from_arrays(["spill"] * data.size, data, 50 + 2e-6 * data, runs)
    assert noise_ceiling(quiet)[0].within == (1.0, 1.0, 1.0)
    # a row alone at its size in its run is not counted
    lone = profile_from_arrays(["spill"] * 3, [1e6, 1e6, 5e7], [10.0, 11.0, 90.0], ["a", "a", "a"])
    assert noise_ceiling(lone)[0].n == 2


def test_relative_error_definition() -> None:
    """Zhang et al. 2013, section 6: |measured - predicted| / measured; undefined at 0 ms."""
    err = relative_errors([100.0, 200.0, 0.0], [110.0, 150.0, 5.0])
    assert err[:2].tolist() == pytest.approx([0.10, 0.25])
    assert np.isnan(err[2])


def test_a_phase_with_no_measurable_row_leaves_the_overall_shares_alone() -> None:
    # a phase whose rows all measured 0 ms has n = 0 and NaN shares; NaN x 0 had made every
    # overall share NaN (the report's 'all' row blank)
    from platform_model.accuracy import AccuracyReport, AccuracyRow

    nan = float("nan")
    rows = (
        AccuracyRow("read", 20, (0.9, 1.0, 1.0), 0.05, 0),
        AccuracyRow("write", 0, (nan, nan, nan), nan, 10),
    )
    report = AccuracyReport(in_sample=rows, held_out=rows, folds=2)
    assert report.overall_within() == pytest.approx((0.9, 1.0, 1.0))
    assert report.overall_within(held_out=True) == pytest.approx((0.9, 1.0, 1.0))
