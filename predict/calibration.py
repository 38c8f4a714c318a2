"""Calibrated intervals: every model's prediction widened by the errors it made in a backtest.

A model's own interval covers what the model knows it does not know: the bounds' and the
simulator's take in the profiled runs' spread, not the model's errors, and a point model
(Herodotou's, Vianna's, the critical path) has none.  Split conformal prediction (Vovk,
Gammerman and Shafer 2005, ch. 2; Lei, G'Sell, Rinaldo, Tibshirani and Wasserman 2018,
"Distribution-free predictive inference for regression", JASA 113, section 2.2) turns the cases
of a backtest into an interval of stated coverage for any model, whatever the shape of its errors:

1. each calibration case is scored by how far, on the log scale, its measured time lies outside
   the model's interval (0 inside it): ``max(log(low / measured), log(measured / high), 0)``, the
   score of Romano, Patterson and Candès 2019 (eq. 6) for an interval.  A point model's interval is
   its estimate, so its score is ``|log(predicted / measured)|``;
2. the exchangeable unit is the **application** (a backtest row's ``job``), not the case.  The
   cases of one application share its profile, its code and its errors; a new application is
   exchangeable with the calibration's applications, not with their cases, so a calibration that
   ranked cases would promise a new application the coverage of the ones it has seen (a case of a
   held-out application is not like a case of a tuning one: issue 37's backtest).  So each
   application's score is the largest of its cases' (conformal prediction over groups, one score a
   group: Dunn, Wasserman and Ramdas 2023, "Distribution-free prediction sets for two-layer
   hierarchical models", JASA 118); rows without a ``job`` are each their own application;
3. of the ``K`` applications' scores, ``q`` is the ``ceil((K + 1)(1 - alpha))``-th smallest (Lei et
   al. 2018, Theorem 2.2): a new application is then covered, every case of it, with probability
   at least ``1 - alpha``.  With fewer applications than that rank needs (``K < 9`` at 90 %), ``q`` is
   the largest score and the promise is what the same rank argument gives, ``K / (K + 1)``, said
   beside the interval (:attr:`ModelCalibration.promise`);
4. the calibrated interval is ``[low * exp(-q), high * exp(q)]``.

The log scale, because run-to-run noise and model errors scale with the job (a 10 % miss is alike
at 2 s and at 2 h), as the bounds' run interval (:meth:`profiles.profile.JobProfile.run_interval`)
also assumes.

The promise holds for applications like the calibration's: the same cluster and like code.
The suite checks it the honest way (:mod:`predict.backtest_suite`) twice.  Calibrated on its tuning
applications, scored on the held-out ones: how intervals from the applications the models were tuned
on (their errors in sample) serve new ones.  And, since ``predict --calibration`` of a backtest
calibrates on every application it holds, each application scored by the calibration of all the
others (leave one application out, :func:`predict.backtest_scores.job_out_calibration`): for the
application left out this is split conformal prediction with the others as the calibration set, and
over all applications the cross-conformal estimate of the coverage a new one is given (Vovk 2015,
"Cross-conformal predictors", Ann. Math. Artif. Intell. 74; Barber, Candès, Ramdas and Tibshirani
2021, "Predictive inference with the jackknife+", Ann. Statist. 49, which bounds it below by
``1 - 2 alpha`` in the worst case).  ``alpha`` is the coverage asked for, not a fitted
constant (issue 37 asks for 90 %).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phaseline.errors import PhaselineError

__all__ = [
    "COVERAGE",
    "Calibration",
    "ModelCalibration",
    "calibrate",
    "calibration_line",
    "load_calibration",
    "score",
]

#: The coverage asked of a calibrated interval (issue 37: every model with an interval covers >= 90 %).
COVERAGE = 0.90


def score(
    predicted_s: float, measured_s: float, low_s: float | None = None, high_s: float | None = None
) -> float:
    """How far (log scale) ``measured_s`` lies outside the interval ``[low_s, high_s]``, 0 inside it;
    a model without an interval is its estimate's (``|log(predicted / measured)|``)."""
    low = predicted_s if low_s is None else low_s
    high = predicted_s if high_s is None else high_s
    if not (low > 0 and high > 0 and measured_s > 0):
        raise PhaselineError(
            f"a calibration case needs positive times, got {low} - {high} s against {measured_s} s"
        )
    return max(math.log(low / measured_s), math.log(measured_s / high), 0.0)


@dataclass(frozen=True, slots=True)
class ModelCalibration:
    """One model's widening: ``q`` (log scale) from the scores of its ``cases`` in ``groups``
    applications, which covers a like application with probability ``promise`` (the coverage asked,
    or less with too few applications: :func:`calibrate`).  Beside it, the model's backtested error
    over the same cases: the median and the worst ``|predicted / measured - 1|`` (Zhang et al. 2013's
    two figures)."""

    model: str
    cases: int
    q: float | None
    median_abs_error: float
    worst_abs_error: float
    groups: int = 0
    promise: float | None = None

    def interval(
        self, seconds: float, low_s: float | None, high_s: float | None
    ) -> tuple[float, float] | None:
        """The calibrated interval around a prediction (its own interval, or its estimate, widened)."""
        if self.q is None:
            return None
        low = seconds if low_s is None else low_s
        high = seconds if high_s is None else high_s
        return low * math.exp(-self.q), high * math.exp(self.q)


@dataclass(frozen=True, slots=True)
class Calibration:
    """Every model's widening from one backtest, for one ``coverage`` (the share of like cases promised)."""

    coverage: float
    models: Mapping[str, ModelCalibration] = field(default_factory=dict)
    source: str = ""  # what the cases were (a file, a set of applications)

    def interval(
        self, model: str, seconds: float, low_s: float | None = None, high_s: float | None = None
    ) -> tuple[float, float] | None:
        """The calibrated interval of ``model``'s prediction; None where the model was not calibrated."""
        cal = self.models.get(model)
        return None if cal is None else cal.interval(seconds, low_s, high_s)

    def to_dict(self) -> dict[str, Any]:
        return {
            "coverage": self.coverage,
            "source": self.source,
            "models": [
                {
                    "model": c.model,
                    "cases": c.cases,
                    "q": c.q,
                    "median_abs_error": c.median_abs_error,
                    "worst_abs_error": c.worst_abs_error,
                    "applications": c.groups,
                    "promised_coverage": c.promise,
                }
                for c in self.models.values()
            ],
        }


def calibration_line(calibration: Calibration) -> str:
    """One line: what the calibrated intervals promise, from what, and which models promise less."""
    line = (
        f"{calibration.coverage:.0%} intervals widened by each model's errors on {calibration.source}, "
        "an application its worst case (split conformal over applications, Lei et al. 2018); they hold for "
        "applications like those"
    )
    short = sorted(
        {(c.groups, c.promise) for c in calibration.models.values() if c.promise is not None
         and c.promise < calibration.coverage}
    )  # fmt: skip
    if short:
        line += "; from too few applications for that, " + ", ".join(
            f"{p:.1%} from {k}" for k, p in short
        )
    return line


def _rank(n: int, coverage: float) -> int:
    """The 1-based rank of ``q`` among ``n`` sorted scores: ``ceil((n + 1) * coverage)`` (Lei et al.
    2018, section 2.2), with a hair of slack so that a product like 10 * 0.9 does not round up."""
    return math.ceil((n + 1) * coverage - 1e-9)


def calibrate(
    cases: Iterable[Mapping[str, Any]], coverage: float = COVERAGE, *, source: str = ""
) -> Calibration:
    """The calibration of every model that has cases (backtest rows: ``model``, ``predicted_s``,
    ``measured_s``, ``job`` (the application) and, where the model has an interval, ``low_s`` and
    ``high_s``).

    A model's cases are scored by application (the largest score of each ``job``'s cases; a row
    without ``job`` is its own); with fewer applications than the rank needs (9 at 90 %), ``q`` is the
    largest and ``promise`` is ``K / (K + 1)``.  Cases with no measured or predicted time are left out.
    """
    if not 0.0 < coverage < 1.0:
        raise PhaselineError(f"coverage must lie strictly between 0 and 1, got {coverage}")
    scores: dict[str, dict[object, float]] = {}
    errors: dict[str, list[float]] = {}
    for i, case in enumerate(cases):
        predicted, measured = case.get("predicted_s"), case.get("measured_s")
        if predicted is None or measured is None:
            continue
        model = str(case["model"])
        group = case.get("job")
        key = (None, i) if group is None else group  # a row without its application is one
        by_group = scores.setdefault(model, {})
        s = score(float(predicted), float(measured), case.get("low_s"), case.get("high_s"))
        by_group[key] = max(s, by_group.get(key, 0.0))
        errors.setdefault(model, []).append(abs(float(predicted) / float(measured) - 1.0))
    models = {}
    for model, by_group in scores.items():
        ss = sorted(by_group.values())
        k = _rank(len(ss), coverage)
        q, promise = (ss[k - 1], coverage) if k <= len(ss) else (ss[-1], len(ss) / (len(ss) + 1))
        errs = errors[model]
        models[model] = ModelCalibration(
            model, len(errs), q, statistics.median(errs), max(errs), len(ss), promise
        )
    return Calibration(coverage, models, source)


def load_calibration(path: str | Path, coverage: float = COVERAGE) -> Calibration:
    """The calibration from a backtest file: a suite's ``backtest.json`` (its ``rows``) or the rows
    ``phaseline backtest --format json`` prints.

    Raises
    ------
    PhaselineError
        The file cannot be read, or holds no backtest rows (names the file and what is wrong).
    """
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PhaselineError(f"{path}: cannot read a backtest ({type(exc).__name__}: {exc})") from None
    rows = doc.get("rows") if isinstance(doc, dict) else doc
    if not isinstance(rows, list) or not rows:
        raise PhaselineError(
            f"{path}: no backtest rows (a suite's backtest.json, or `phaseline backtest --format json`)"
        )
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not {"model", "predicted_s", "measured_s"} <= row.keys():
            raise PhaselineError(
                f"{path}: row {i + 1} is not a backtest row (needs model, predicted_s, measured_s)"
            )
        times = [row.get(k) for k in ("predicted_s", "measured_s", "low_s", "high_s")]
        if not all(t is None or (isinstance(t, (int, float)) and t > 0) for t in times):
            raise PhaselineError(
                f"{path}: row {i + 1} ({row['model']}): its times are not positive numbers: {times}"
            )
    return calibrate(rows, coverage, source=f"{len(rows)} backtest rows of {path.name}")
