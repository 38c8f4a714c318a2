"""What a backtest's rows say: each model's summary (median and worst error, coverage, the runs'
spread), the noise floor a perfect model would still show, and the rows side by side."""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from phaseline.errors import PredictionError
from predict.backtest import BacktestRow
from predict.backtest_runs import profiled_index
from predict.calibration import Calibration, calibrate

__all__ = ["NOTHING_TO_BACKTEST", "Calibrating", "ModelSummary", "NoiseFloor", "error_table", "job_out_calibration", "noise_floor",
           "require_rows", "summarize"]

#: Why an empty backtest is an error, whatever the output format.
NOTHING_TO_BACKTEST = (
    "nothing to backtest: the store needs a job with runs at >= 2 input sizes, map counts or reduce counts "
    "(e.g. `phaseline backtest --suite local`)"
)


@dataclass(frozen=True, slots=True)
class ModelSummary:
    """A model's errors over all cases: median and worst absolute error, interval coverage."""

    model: str
    cases: int
    median_abs_error: float
    worst_abs_error: float
    coverage: float | None  # share of cases whose interval contains the measured time
    #: share of cases (with >= 2 runs) whose prediction lies within the range of the case's runs
    within_runs: float | None = None
    #: median over those cases of the runs' spread ((slowest - fastest) / median): the noise floor
    median_spread: float | None = None
    #: median width of the model's interval, (high - low) / measured: what the coverage cost
    median_width: float | None = None
    #: what a perfect model would score on the same cases (:func:`noise_floor`)
    floor_median_abs_error: float | None = None
    floor_worst_abs_error: float | None = None
    #: with a calibration (:mod:`predict.calibration`, from other cases): the share of cases its widened
    #: interval contains, and that interval's median width relative to the measured time
    calibrated_coverage: float | None = None
    calibrated_width: float | None = None
    #: the same with each row calibrated on every other application of the rows (``loao`` of
    #: :func:`summarize`, leave one application out): what ``predict --calibration`` of the whole backtest,
    #: which calibrates on all its applications, promises an application it has not seen
    loao_calibrated_coverage: float | None = None
    loao_calibrated_width: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


#: What calibrates a summary's rows: one calibration for all, or each row's own (:func:`job_out_calibration`).
Calibrating = Calibration | Callable[[BacktestRow], Calibration | None]


def summarize(
    rows: Sequence[BacktestRow], calibration: Calibrating | None = None, loao: Calibrating | None = None
) -> list[ModelSummary]:
    """Per model: median and worst |error| and interval coverage (Zhang et al. 2013 report the first two).

    Also, where cases have several runs: the share of predictions that fall within the
    range of the case's runs, and the median run-to-run spread (the noise floor); for
    models with intervals, their median width relative to the measured time (a coverage
    is only as good as the width it took).  With ``calibration``, every calibrated model's widened
    interval's coverage and width too (honest only where the calibration's cases are not these); with
    ``loao`` (:func:`job_out_calibration` of the whole backtest), the same for it as well.
    """
    by_model: dict[str, list[BacktestRow]] = defaultdict(list)
    for row in rows:
        by_model[row.model].append(row)
    out = []
    for model, rs in by_model.items():
        errs = [abs(r.error) for r in rs]
        cov = [r.covered for r in rs if r.covered is not None]
        within = [r.within_runs for r in rs if r.within_runs is not None]
        spreads = [r.spread for r in rs if r.spread is not None]
        widths = [
            (r.high_s - r.low_s) / r.measured_s
            for r in rs
            if r.low_s is not None and r.high_s is not None and r.measured_s > 0
        ]
        floor = noise_floor(rs)
        cal_cov, cal_width = _calibrated(rs, calibration)
        loao_cov, loao_width = _calibrated(rs, loao)
        out.append(
            ModelSummary(
                model,
                len(rs),
                statistics.median(errs),
                max(errs),
                sum(cov) / len(cov) if cov else None,
                sum(within) / len(within) if within else None,
                statistics.median(spreads) if spreads else None,
                statistics.median(widths) if widths else None,
                floor.median_abs_error if floor else None,
                floor.worst_abs_error if floor else None,
                cal_cov,
                cal_width,
                loao_cov,
                loao_width,
            )
        )
    return out


def _calibrated(rows: Sequence[BacktestRow], calibration: Calibrating | None) -> tuple[float | None, float | None]:
    """The share of ``rows`` (one model's) whose calibrated interval holds the measured time, and the
    intervals' median width over the measured time; (None, None) where the model is not calibrated."""
    if calibration is None:
        return None, None

    def interval(r: BacktestRow) -> tuple[float, float] | None:
        cal = calibration(r) if callable(calibration) else calibration
        return None if cal is None else cal.interval(r.model, r.predicted_s, r.low_s, r.high_s)

    intervals = [(r, interval(r)) for r in rows if r.measured_s > 0]
    held = [(r, iv) for r, iv in intervals if iv is not None]
    if not held:
        return None, None
    covered = sum(lo <= r.measured_s <= hi for r, (lo, hi) in held) / len(held)
    return covered, statistics.median((hi - lo) / r.measured_s for r, (lo, hi) in held)


def job_out_calibration(rows: Sequence[BacktestRow]) -> Callable[[BacktestRow], Calibration | None]:
    """Each row calibrated on the rows of every other job (leave one job out): what a job the
    calibration never saw would be promised, so the coverage :func:`summarize` reports on the store's
    own jobs is honest, as K-fold cross-validation estimates a model's error with each job a fold (the
    suite's held-out applications do the same for its tuning ones, :func:`~predict.backtest_suite.tuning_calibration`)."""
    by_job: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_job[row.job].append(row.to_dict())
    cache: dict[str, Calibration] = {}

    def of(row: BacktestRow) -> Calibration | None:
        if row.job not in by_job:
            return None
        if row.job not in cache:
            others = [d for job, ds in by_job.items() if job != row.job for d in ds]
            cache[row.job] = calibrate(others, source=f"the rows of every job but {row.job}")
        return cache[row.job]

    return of


@dataclass(frozen=True, slots=True)
class NoiseFloor:
    """The errors of a perfect model on a backtest's cases, from the runs' own noise.

    ``sigma`` is the run-to-run standard deviation of log completion times,
    pooled over every case with two runs or more; ``median_abs_error`` and
    ``worst_abs_error`` are the medians, over the simulated backtests, of the
    median and of the largest |error|; ``p_worst_within`` maps a bound to the
    share of simulated backtests whose largest |error| stays within it.
    """

    sigma: float
    median_abs_error: float
    worst_abs_error: float
    p_worst_within: dict[float, float]


def noise_floor(
    rows: Sequence[BacktestRow],
    *,
    replications: int = 4_000,
    seed: int = 0,
    bounds: Sequence[float] = (0.17,),
    sigma: float | None = None,
) -> NoiseFloor | None:
    """How far a perfect model would be off, given how noisy the measured runs are.

    A perfect model knows every case's true completion time ``T`` but learns
    it through the profile, which is the profiled case's median run as
    :func:`backtest` picks it: of its ``n_p`` runs sorted by time, the one at
    ``(n_p - 1) // 2`` (the lower of the two middle runs when ``n_p`` is
    even); each case is measured as the median of its ``n_c`` runs (the mean
    of the two middle ones when ``n_c`` is even, as ``measured_s`` is).  With
    multiplicative lognormal run-to-run noise of log-sd ``sigma``, its error
    on a case is ``lower_med(n_p draws) / med(n_c draws) - 1``; one noise draw
    of the profile is shared by all cases predicted from it, as in the
    backtest.  Each replication draws every case of ``rows`` once (same jobs,
    same run counts; rows of one case, :attr:`BacktestRow.case_key`, count
    once); the medians over ``replications`` are returned.  It is a floor:
    the platform model's own noise and every modelling error come on top.
    ``sigma`` given: that noise instead of the runs' (what would a quieter
    machine allow?).  ``None`` when no case (or profile) has two runs to
    estimate sigma from.

    >>> row = BacktestRow("j", "c", "m", 1.0, 1.0, 0.0, None, None, 3, "p",
    ...                   measured_runs_s=(1.0, 1.0, 1.0), profile_runs_s=(0.5, 0.5, 0.5))
    >>> noise_floor([row]).worst_abs_error
    0.0
    """
    cases = {r.case_key: r for r in rows if r.measured_runs_s and r.profile_runs_s}
    if not cases:
        return None
    profiles = {(r.job, r.profile_job): r.profile_runs_s for r in cases.values()}  # a profiled case's draws
    if sigma is None:
        samples = [r.measured_runs_s for r in cases.values()] + list(profiles.values())
        devs = [np.log(s) - np.log(s).mean() for s in map(np.asarray, samples) if len(s) >= 2 and min(s) > 0]
        dof = sum(len(d) - 1 for d in devs)
        if dof == 0:
            return None
        sigma = float(np.sqrt(sum(float((d**2).sum()) for d in devs) / dof))
    rng = np.random.default_rng(seed)

    def medians(n_runs: int, *, lower: bool = False) -> np.ndarray[Any, Any]:
        """One median of ``n_runs`` noise draws per replication; ``lower``: the draw sorted at
        :func:`_profiled_index` (the profiled run), else their median (the measured time)."""
        draws = rng.lognormal(0.0, sigma, size=(replications, n_runs))
        if lower:
            return np.sort(draws, axis=1)[:, profiled_index(n_runs)]
        return np.median(draws, axis=1)

    profile_noise = {key: medians(len(runs), lower=True) for key, runs in sorted(profiles.items())}
    errors = np.empty((replications, len(cases)))
    for i, r in enumerate(cases.values()):
        errors[:, i] = np.abs(profile_noise[r.job, r.profile_job] / medians(len(r.measured_runs_s)) - 1)
    worst = errors.max(axis=1)
    return NoiseFloor(
        sigma,
        float(np.median(np.median(errors, axis=1))),
        float(np.median(worst)),
        {b: float(np.mean(worst <= b)) for b in bounds},
    )


def require_rows(rows: Sequence[BacktestRow]) -> None:
    """Raise the :class:`PredictionError` of an empty backtest (:data:`NOTHING_TO_BACKTEST`) if ``rows``
    is empty."""
    if not rows:
        raise PredictionError(NOTHING_TO_BACKTEST)


def error_table(rows: Sequence[BacktestRow]) -> list[dict[str, object]]:
    """Rows for display: one per case (:attr:`BacktestRow.case_key`) with each model's prediction
    (``<model>_s``, seconds) and error (``<model>_err``, a share: ``0.035`` is +3.5 %; ``None``
    where it is not finite) side by side; no rows is :func:`require_rows`' error."""
    require_rows(rows)
    models = list(dict.fromkeys(r.model for r in rows))
    blank = {f"{m}_{k}": None for m in models for k in ("s", "err")}
    table: dict[tuple[str, str, tuple[str, ...], str], dict[str, object]] = {}
    for r in rows:
        line = table.setdefault(
            r.case_key, {"job": r.job, "case": r.case, "measured_s": round(r.measured_s, 2), **blank}
        )
        line[f"{r.model}_s"] = round(r.predicted_s, 2)
        line[f"{r.model}_err"] = round(r.error, 4) if math.isfinite(r.error) else None
    return list(table.values())
