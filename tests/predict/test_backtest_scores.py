"""The backtest's scores: the noise floor of run-to-run spread, and summaries by model, set, extent and shape."""

from __future__ import annotations

import math
import statistics
from dataclasses import replace

import numpy as np
import pytest

from predict.backtest import BacktestRow
from predict.backtest_scores import noise_floor, summarize
from tests.predict.doubles import _noisy_row, _row


def test_noise_floor_of_one_run_each_is_the_ratio_of_two_lognormals() -> None:
    """n_p = n_c = 1: error = exp(Y) - 1, Y ~ N(0, 2 sigma^2); its median |error| x solves
    Phi(log(1 + x) / s) - Phi(log(1 - x) / s) = 1/2 with s = sqrt(2) sigma."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    from predict.backtest_scores import noise_floor

    sigma = 0.1
    s = math.sqrt(2) * sigma
    exact = brentq(lambda x: norm.cdf(math.log1p(x) / s) - norm.cdf(math.log1p(-x) / s) - 0.5, 1e-9, 0.99)
    floor = noise_floor([_noisy_row("c", (1.0,), (1.0,))], sigma=sigma, replications=100_000)
    assert floor is not None
    assert floor.median_abs_error == floor.worst_abs_error == pytest.approx(exact, rel=0.02)
    assert noise_floor([_noisy_row("c", (1.0,), (1.0,))]) is None  # one run each: no noise to measure


def test_noise_floor_pools_the_log_spread_of_cases_and_profiles() -> None:
    from predict.backtest_scores import noise_floor

    e = math.exp
    rows = [
        _noisy_row("a", (e(0.1), e(-0.1)), (e(0.2), 1.0, e(-0.2))),
        _noisy_row("b", (1.0, 1.0), (1.0,), job="k"),
    ]
    floor = noise_floor(rows)
    assert floor is not None
    # squared log deviations 0.01 + 0.01 (a) + 0 (b) + 0.04 + 0 + 0.04 (profile), dof 1 + 1 + 2
    assert floor.sigma == pytest.approx(math.sqrt(0.10 / 4))


def test_noise_floor_grows_with_noise_and_shrinks_with_more_runs() -> None:
    from predict.backtest_scores import noise_floor

    def floor(sigma: float, n: int) -> float:
        runs = tuple(math.exp(sigma * z) for z in np.linspace(-1.5, 1.5, n))
        rows = [_noisy_row(f"c{i}", runs, runs, job=f"j{i % 4}") for i in range(20)]
        result = noise_floor(rows, seed=3)
        assert result is not None
        return result.worst_abs_error

    assert floor(0.05, 3) < floor(0.1, 3) < floor(0.2, 3)
    assert floor(0.1, 9) < floor(0.1, 3)
    assert noise_floor([_noisy_row("c", (1.0, 1.0), (1.0, 1.0))]) == noise_floor(
        [_noisy_row("c", (1.0, 1.0), (1.0, 1.0))]
    )


def test_summary_reports_the_noise_floor_beside_each_model() -> None:
    rows = [_noisy_row(f"c{i}", (0.9, 1.0, 1.1), (0.45, 0.5, 0.55)) for i in range(5)]
    (summary,) = summarize(rows)
    assert summary.floor_median_abs_error is not None
    assert summary.floor_worst_abs_error is not None
    assert 0 < summary.floor_median_abs_error < summary.floor_worst_abs_error < 1
    assert {"floor_median_abs_error", "floor_worst_abs_error"} <= set(summary.to_dict())


def test_rows_know_their_extent_and_summaries_split_by_set_extent_and_shape() -> None:
    """Issue 37: held-out apart from tuning, interpolation apart from extrapolation, per shape, each
    with its own noise floor."""
    from predict.backtest_suite import summarize_groups

    def row(job: str, case: str, scale: float, err: float) -> BacktestRow:
        return replace(_noisy_row(case, (0.9, 1.0, 1.1), (0.45, 0.5, 0.55), job=job), error=err, scale=scale)

    rows = [
        row("phaseline app skewkey", "a", 3.0, 0.10),
        row("phaseline app skewkey", "b", 1.0, 0.02),
        row("phaseline app wordcount", "a", 8.0, -0.04),
        row("phaseline app wordcount", "b", 1.0, 0.01),
    ]
    assert [r.extent for r in rows] == ["extrapolation", "interpolation"] * 2
    assert rows[0].to_dict()["extent"] == "extrapolation"
    assert _noisy_row("c", (1.0,), (1.0,)).extent is None
    groups = summarize_groups(rows, ("set", "extent", "shape"))
    by_group = dict(groups)
    assert [g for g, _ in groups][:3] == ["all", "set=held-out", "set=tuning"]
    assert by_group["set=held-out"].median_abs_error == pytest.approx(0.06)
    assert by_group["extent=extrapolation"].worst_abs_error == pytest.approx(0.10)
    assert by_group["shape=skewed key: one reduce gets most data"].cases == 2
    assert all(s.floor_median_abs_error is not None for _, s in groups)


def test_the_noise_floor_counts_cases_not_labels() -> None:
    runs, prof = (0.9, 1.0, 1.1), (0.95, 1.0, 1.05)
    apart = noise_floor(
        [_row("a", runs, prof, case_job_ids=("j1",)), _row("b", runs, prof, case_job_ids=("j2",))]
    )
    alike = noise_floor(
        [_row("a", runs, prof, case_job_ids=("j1",)), _row("a", runs, prof, case_job_ids=("j2",))]
    )
    one = noise_floor([_row("a", runs, prof, case_job_ids=("j1",))])
    assert apart is not None
    assert alike is not None
    assert one is not None
    assert alike.worst_abs_error == apart.worst_abs_error
    assert alike.worst_abs_error > one.worst_abs_error  # two cases' worst is worse than one's


@pytest.mark.parametrize(("n_profile", "n_case"), [(2, 1), (4, 2)])
def test_the_noise_floor_simulates_the_backtests_own_estimators(n_profile: int, n_case: int) -> None:
    # The backtest profiles one run, the lower of the two middle ones of an even count
    # (smallest[(n - 1) // 2]), and measures a case as the median of its runs (statistics.median:
    # the middle two's mean): the floor had drawn the profile's noise as np.median, the two's mean.
    sigma, n = 0.2, 200_000
    row = _row("c", (1.0,) * n_case, (1.0,) * n_profile)
    floor = noise_floor([row], sigma=sigma, replications=n, seed=5)
    assert floor is not None
    rng = np.random.default_rng(99)
    profiled = np.sort(rng.lognormal(0.0, sigma, (n, n_profile)), axis=1)[:, (n_profile - 1) // 2]
    measured = np.median(rng.lognormal(0.0, sigma, (n, n_case)), axis=1)
    expected = float(np.median(np.abs(profiled / measured - 1)))
    assert floor.median_abs_error == pytest.approx(expected, rel=0.02)
    assert statistics.median([1.0, 3.0]) == float(np.median([1.0, 3.0]))  # the measured estimator, as drawn
