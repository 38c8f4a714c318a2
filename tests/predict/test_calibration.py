"""Split-conformal calibration of every model's interval (predict.calibration): known answers."""

from __future__ import annotations

import json
import math
import random
import statistics

import pytest

from phaseline.errors import PhaselineError
from predict.calibration import COVERAGE, calibrate, calibration_line, load_calibration, score


def test_score_is_the_log_distance_outside_the_interval() -> None:
    assert score(10.0, 10.0) == 0.0
    assert score(10.0, 12.0, 9.0, 11.0) == pytest.approx(math.log(12 / 11))
    assert score(10.0, 8.0, 9.0, 11.0) == pytest.approx(math.log(9 / 8))
    assert score(10.0, 10.5, 9.0, 11.0) == 0.0  # inside the interval
    assert score(12.0, 10.0) == pytest.approx(math.log(1.2))  # a point model: its estimate's error


def test_q_is_the_finite_sample_rank_of_the_scores() -> None:
    # 19 cases, 90 %: rank ceil(20 * 0.9) = 18; the scores are log(1 + i / 100), i = 1..19
    cases = [{"model": "m", "predicted_s": 1.0 + i / 100, "measured_s": 1.0} for i in range(1, 20)]
    cal = calibrate(cases)
    assert cal.models["m"].cases == 19
    assert cal.models["m"].q == pytest.approx(math.log(1.18))
    low, high = cal.interval("m", 2.0)
    assert (low, high) == pytest.approx((2.0 / 1.18, 2.0 * 1.18))
    assert cal.interval("other", 2.0) is None


def test_too_few_applications_promise_what_their_rank_gives() -> None:
    # 8 applications: rank 9 of 8 at 90 %, so q is the largest score and the promise 8 / 9
    cases = [{"model": "m", "predicted_s": 1.0 + i / 100, "measured_s": 1.0, "job": f"app{i}"} for i in range(1, 9)]
    cal = calibrate(cases)
    assert cal.models["m"].q == pytest.approx(math.log(1.08))
    assert cal.models["m"].promise == pytest.approx(8 / 9)
    assert cal.models["m"].groups == 8
    assert cal.interval("m", 1.0) == pytest.approx((1 / 1.08, 1.08))
    assert "88.9% from 8" in calibration_line(cal)
    # 19 applications: the rank's own, and the coverage asked is promised
    more = [{"model": "m", "predicted_s": 1.0 + i / 100, "measured_s": 1.0, "job": f"a{i}"} for i in range(1, 20)]
    assert calibrate(more).models["m"].promise == COVERAGE
    assert "too few" not in calibration_line(calibrate(more))


def test_an_application_scores_its_worst_case() -> None:
    """Cases of one application are not exchangeable with a new application's: each application is one
    score, the largest of its cases'.  19 applications, each with 9 cases within 1 % and one i % slow."""
    cases = [
        {"model": "m", "predicted_s": 1.0, "measured_s": 1.0 + (i / 100 if k == 0 else 0.01), "job": f"app{i}"}
        for i in range(1, 20)
        for k in range(10)
    ]
    cal = calibrate(cases)
    assert (cal.models["m"].cases, cal.models["m"].groups) == (190, 19)
    assert cal.models["m"].q == pytest.approx(math.log(1.18))  # rank 18 of the 19 applications' worst
    # ranked as 190 cases, rank ceil(191 * 0.9) = 172 would have been 1 %: 18 of 19 applications not covered
    assert sorted(score(c["predicted_s"], c["measured_s"]) for c in cases)[171] == pytest.approx(math.log(1.01))


def test_an_interval_model_is_widened_at_both_ends() -> None:
    cases = [{"model": "b", "predicted_s": 1.0, "low_s": 0.9, "high_s": 1.1, "measured_s": 1.1 * 1.05}] * 10
    cal = calibrate(cases)
    assert cal.interval("b", 2.0, 1.5, 2.5) == pytest.approx((1.5 / 1.05, 2.5 * 1.05))


def test_exchangeable_cases_are_covered_as_promised() -> None:
    """Lei et al. 2018, Theorem 2.2: calibrated on 50 cases, a new case is covered >= 90 % of the time
    (over 1,000 calibrations; here lognormal errors with a bias no interval knows of)."""
    rng = random.Random(0)

    def draw(n: int) -> list[dict[str, float | str]]:
        return [
            {"model": "m", "predicted_s": 10.0, "measured_s": 10.0 * math.exp(rng.gauss(0.1, 0.2))}
            for _ in range(n)
        ]

    hits = total = 0
    for _ in range(1_000):
        cal = calibrate(draw(50))
        for case in draw(5):
            low, high = cal.interval("m", 10.0)
            hits += low <= case["measured_s"] <= high
            total += 1
    # 5,000 cases: expected 46 / 51 = 0.902; the mean's standard error is ~0.5 points
    assert hits / total >= COVERAGE - 0.02
    assert hits / total <= COVERAGE + 0.06  # and not much wider than asked


def test_a_new_application_is_covered_as_promised() -> None:
    """Applications each with their own bias (a random effect) and cases scattered around it: calibrated
    on 30 applications of 7 cases, a new application's cases are covered >= 90 % of the time; ranked as
    cases, the same calibration covers far less (the cases of one application share its bias)."""
    rng = random.Random(1)

    def draw(apps: int) -> list[dict[str, float | str]]:
        out = []
        for a in range(apps):
            bias = rng.gauss(0.0, 0.2)
            out += [{"model": "m", "predicted_s": 10.0, "measured_s": 10.0 * math.exp(bias + rng.gauss(0, 0.03)),
                     "job": f"app{a}"} for _ in range(7)]  # fmt: skip
        return out

    hits = pooled_hits = total = 0
    for _ in range(300):
        calibrating = draw(30)
        cal = calibrate(calibrating)
        as_cases = calibrate([{k: v for k, v in c.items() if k != "job"} for c in calibrating])
        for case in draw(1):
            low, high = cal.interval("m", 10.0)
            hits += low <= case["measured_s"] <= high
            low, high = as_cases.interval("m", 10.0)
            pooled_hits += low <= case["measured_s"] <= high
            total += 1
    # 2,100 cases of 300 new applications; rank 28 of 30 applications promises 90 %
    assert hits / total >= COVERAGE - 0.03
    assert hits / total <= COVERAGE + 0.08
    assert pooled_hits / total < hits / total


def test_load_calibration_reads_both_backtest_outputs(tmp_path) -> None:
    rows = [{"model": "m", "predicted_s": 1.0 + i / 100, "measured_s": 1.0, "low_s": None, "high_s": None}
            for i in range(1, 20)]  # fmt: skip
    listed = tmp_path / "rows.json"
    listed.write_text(json.dumps(rows))
    suite = tmp_path / "backtest.json"
    suite.write_text(json.dumps({"summary": [], "rows": rows}))
    assert (
        load_calibration(listed).models["m"].q
        == load_calibration(suite).models["m"].q
        == pytest.approx(math.log(1.18))
    )
    assert "backtest.json" in load_calibration(suite).source


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{", "cannot read a backtest"),
        ("[]", "no backtest rows"),
        ('[{"model": "m"}]', "row 1 is not a backtest row"),
        ('[{"model": "m", "predicted_s": 1, "measured_s": 0}]', "row 1 (m): its times are not positive"),
    ],
)
def test_a_bad_backtest_file_is_named(tmp_path, text: str, says: str) -> None:
    bad = tmp_path / "bt.json"
    bad.write_text(text)
    with pytest.raises(PhaselineError, match=r"bt\.json") as info:
        load_calibration(bad)
    assert says in str(info.value)


def test_coverage_must_be_a_share() -> None:
    with pytest.raises(PhaselineError, match="strictly between"):
        calibrate([], 1.0)


def test_the_suite_calibrates_on_its_tuning_apps_and_scores_the_held_out_ones() -> None:
    from predict.backtest import BacktestRow
    from predict.backtest_suite import summarize_groups, tuning_calibration
    from predict.suite import APPS, HELD_OUT

    tuning = [a.job_name for a in APPS if a.name not in HELD_OUT]
    held_out = next(a.job_name for a in APPS if a.name in HELD_OUT)

    def row(job: str, i: int, measured: float) -> BacktestRow:
        return BacktestRow(
            job, f"case {i}", "herodotou", 1.0, measured, 1.0 / measured - 1, None, None, 1, "job_1"
        )

    # tuning: application k's two cases 1 % and k % slow (q = log 1.0K, the largest of K: too few
    # applications for rank ceil((K + 1) 0.9)); held out: measured 1.02 (inside) and 1.5 (outside)
    k = len(tuning)
    assert k < 9
    rows = [row(job, i, 1.0 + (j if i else 1) / 100) for j, job in enumerate(tuning, 1) for i in range(2)] + [
        row(held_out, 0, 1.02),
        row(held_out, 1, 1.5),
    ]
    cal = tuning_calibration(rows)
    assert cal is not None
    worst = 1.0 + k / 100
    assert cal.models["herodotou"].q == pytest.approx(math.log(worst))
    assert cal.models["herodotou"].promise == pytest.approx(k / (k + 1))
    assert f"{2 * k} rows of the suite's tuning applications" in cal.source
    by_group = dict(summarize_groups(rows, ("set",), cal))
    assert by_group["set=held-out"].calibrated_coverage == 0.5
    assert by_group["set=held-out"].calibrated_width == pytest.approx(
        statistics.median([(worst - 1 / worst) / m for m in (1.02, 1.5)])
    )
    assert by_group["set=tuning"].calibrated_coverage == 1.0  # in sample: every application's worst is within q
    assert tuning_calibration([row(held_out, 0, 1.1)]) is None

    # beside it, every application calibrated on all the others (what `predict --calibration` of the whole
    # backtest gives a new one): K + 1 applications, each left out in turn, K scores for the rest
    from predict.backtest_scores import job_out_calibration

    by_group = dict(summarize_groups(rows, ("set",), cal, job_out_calibration(rows)))
    assert by_group["set=held-out"].calibrated_coverage == 0.5  # the tuning calibration's, unchanged
    # the held-out application left out: the tuning applications' K scores again, q = log 1.0K: 1.5 outside
    assert by_group["set=held-out"].loao_calibrated_coverage == 0.5
    # a tuning application left out: the held-out one's score log 1.5 is among the K and the largest, so
    # q = log 1.5 and both its cases are inside
    assert by_group["set=tuning"].loao_calibrated_coverage == 1.0
    assert by_group["set=tuning"].loao_calibrated_width == pytest.approx(
        statistics.median([(1.5 - 1 / 1.5) / (1.0 + (j if i else 1) / 100) for j in range(1, k + 1) for i in range(2)])
    )
    # without it, no such figure
    assert by_group["set=tuning"].calibrated_coverage == 1.0
    assert dict(summarize_groups(rows, ("set",), cal))["all"].loao_calibrated_coverage is None


def test_a_stores_own_jobs_are_calibrated_on_every_other_job() -> None:
    from predict.backtest import BacktestRow
    from predict.backtest_scores import job_out_calibration, summarize

    def row(job: str, i: int, measured: float) -> BacktestRow:
        return BacktestRow(job, f"case {i}", "herodotou", 1.0, measured, 1.0 / measured - 1, None, None, 1, "job_1")

    # job a: 10 cases 5 % slow; job b: 10 cases 30 % slow.  Calibrated on b alone, a's 5 % are inside
    # (q = log 1.3); calibrated on a alone, b's 30 % are outside (q = log 1.05): 50 % covered, honestly
    rows = [row("a", i, 1.05) for i in range(10)] + [row("b", i, 1.3) for i in range(10)]
    of = job_out_calibration(rows)
    assert of(rows[0]).models["herodotou"].q == pytest.approx(math.log(1.3))
    assert of(rows[-1]).models["herodotou"].q == pytest.approx(math.log(1.05))
    assert "every job but a" in of(rows[0]).source
    (summary,) = summarize(rows, of)
    assert summary.calibrated_coverage == 0.5
    # one job alone: no other rows to calibrate on, no promise
    (alone,) = summarize(rows[:10], job_out_calibration(rows[:10]))
    assert alone.calibrated_coverage is None
