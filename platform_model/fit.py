"""Robust straight-line fits ``Dur = A + B * Data`` of one generic phase.

Zhang, Cherkasova and Loo (ICPE'13), section 4, eq. 1: for each generic phase
``i`` solve ``A_i + B_i * Data_i^j = Dur_i^j`` over the rows ``j`` of the
platform profile with robust linear regression (iteratively reweighted least
squares, Holland and Welsch 1977).  We use statsmodels' :class:`RLM` with
Tukey's biweight by default (:data:`DEFAULT_NORM`, started from the Huber
solution, since the biweight's objective is not convex), Huber's T on request.  Above
:data:`STATSMODELS_MAX_N` points the same estimator is solved through the 2 x 2
normal equations (:func:`~platform_model.irls.irls`), so that a million-row profile fits in about
two seconds; tests check both paths agree to 1e-6.

A slope that comes out negative (more data, less time) is physically
meaningless.  The paper names non-negative least squares among the popular
fitting methods; phaseline keeps the robust fit and refits such a phase with
the slope held at zero (a robust location fit of the durations), flagging the
result (:attr:`LineFit.nonneg_refit`).  Only the slope is constrained: an
intercept may still come out negative (predictions clip durations at 0).

Why the biweight.  Slow tasks are one-sided outliers: a straggler takes 2-5x its
time, no task takes a third of it.  Huber's psi is bounded but not zero in the
tails, so every straggler still pulls the line up by ``1.345 s``; with all of them
on one side those pulls add up instead of cancelling.  A redescending psi (zero
beyond ``c s``) gives such points no weight at all (Maronna, Martin and Yohai,
*Robust Statistics: Theory and Methods*, 2006, chapter 4 on redescending
M-estimates of regression and their need of a good start; chapter 5 on MM).
Measured on the issue's case (issue 37, item 2): CSVs of six known lines
(``A + B x data``, the shuffle two lines with a break at 24 MiB), 240 points per
phase at 2-64 MiB, 3 % relative noise and 10 % of the points 2-5x too slow, fitted
by ``phaseline fit --from-csv`` and read back by ``platform eval``; largest
|error| over 8 seeds and every phase at 6, 16, 26 (just past the break), 48 and
64 MiB:

====================================================  ========  =========
estimator (statsmodels 0.15, literature defaults)     6-64 MiB  incl. 2 MiB
====================================================  ========  =========
Huber T, c = 1.345 (the former default)               3.14 %    3.73 %
Tukey biweight, c = 4.685, from Huber, MAD scale      1.41 %    2.20 %
Tukey biweight from Huber, scale held at Huber's      1.40 %    2.18 %
Hampel (2, 4, 8) from Huber, MAD scale                1.43 %    2.44 %
MM (RLMDetSMM: S start, bp 0.5; biweight, 95 % eff.)  1.42 %    2.23 %
MM at 85 % efficiency                                 1.65 %    2.37 %
S-estimate alone (bp 0.5)                             2.48 %    2.48 %
Tukey biweight from the S-estimate, MAD scale         1.41 %    2.20 %
Huber T on the same CSVs without outliers             1.26 %    2.36 %
====================================================  ========  =========

The redescending fits agree to 0.05 point: what is left is the noise floor of
an unweighted line under 3 % relative noise (the clean Huber row), largest at
the smallest size, where the intercept's error is a large share of the
duration.  The MM-estimator (Yohai 1987) would guard against outliers in the
data sizes too, but the benchmark plan sets those, and it costs 30-60x the
biweight (0.29 s against 0.009 s for 240 points, 0.9 s against 0.03 s for
5,000) in a fit that the two-segment search and the cross-validated report
repeat dozens of times.  The biweight's ``c = 4.685`` is its 95 %-efficiency
constant at the normal (statsmodels' default); nothing was tuned on the
backtest.

The model object (the data) and the result (:class:`LineFit`) are separate; the
result is a frozen record with the parameters, their standard errors, the
residual scale, and how the iteration ended.
"""

from __future__ import annotations

import enum
import warnings
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import statsmodels.api as sm
from statsmodels.tools.sm_exceptions import ConvergenceWarning as SmConvergenceWarning

from phaseline.errors import ConvergenceWarning, InsufficientDataError
from platform_model.irls import (
    HELD_MAXITER,
    MAXITER,
    WARM_START_N,
    IrlsSolution,
    Norm,
    irls,
    minimize_held,
    sm_norm,
    wls,
)

__all__ = [
    "DEFAULT_NORM",
    "HELD_MAXITER",
    "MAXITER",
    "MIN_DATA_SPREAD",
    "MIN_POINTS",
    "STATSMODELS_MAX_N",
    "LineFit",
    "Norm",
    "Solver",
    "fit_line",
]

FloatArray = npt.NDArray[np.float64]

#: Fewest points a line is fitted to (two parameters plus a robust scale).
MIN_POINTS = 5
#: A line needs data sizes further apart than this share of the largest: over a narrower range
#: the slope is noise (15 runs of one benchmark, collect at 3,422,100-3,422,610 bytes, gave
#: 6.3 s/MiB and a prediction 20x the measured time).
MIN_DATA_SPREAD = 0.1
TOL = 1e-8
#: statsmodels' stopping rule: the coefficients (ms, ms per MiB) move less than TOL.  Its default,
#: the deviance's relative change, stops where one far point dominates the deviance: 30 rows of
#: ~5 ms + 1 ms/kB and one of 1e7 ms stopped after 2 steps at 26,200 ms - 157 ms/kB (refitted
#: flat at 23,676 ms), where the fixed point is 5.43 ms + 1,055 ms/MiB.
CONV = "coefs"
#: Data are fitted in MiB and durations in ms, so the normal equations stay well conditioned.
_X_UNIT = float(1 << 20)
#: Largest fit done with statsmodels' RLM itself (its pseudo-inverse per step costs O(n) SVDs).
STATSMODELS_MAX_N = 5_000


class Solver(enum.StrEnum):
    """Which implementation solves the IRLS (same estimator, see :func:`~platform_model.irls.irls`)."""

    AUTO = "auto"
    STATSMODELS = "statsmodels"
    NORMAL_EQUATIONS = "normal-equations"


#: The platform model's norm (``phaseline fit``, :func:`platform_model.model.fit_platform`): see the
#: module docstring.  :func:`fit_line` itself defaults to Huber's T, the convex estimate it starts from.
DEFAULT_NORM = Norm.TUKEY


@dataclass(frozen=True, slots=True)
class LineFit:
    """A robust fit ``dur_ms = intercept_ms + slope_ms_per_byte * data_bytes``.

    Attributes
    ----------
    intercept_ms, slope_ms_per_byte
        The parameters ``A`` and ``B`` of Zhang et al. 2013, eq. 1.
    intercept_se, slope_se
        Their standard errors (statsmodels' H1 sandwich covariance).
    scale_ms
        The robust residual scale (normalized MAD of the last iteration).
    converged
        Whether IRLS met its tolerance: with the scale re-estimated within
        :data:`MAXITER` steps, or else with the scale then held (see :func:`_rlm`).
    iterations
        IRLS iterations used.
    n
        Points fitted.
    norm
        The robust norm used.
    nonneg_refit
        The unconstrained slope was negative; the line was refitted with slope 0.
    data_min_bytes, data_max_bytes
        The data range the line was fitted on.
    note
        Numerical trouble met during the fit (empty when none).
    """

    intercept_ms: float
    slope_ms_per_byte: float
    intercept_se: float
    slope_se: float
    scale_ms: float
    converged: bool
    iterations: int
    n: int
    norm: Norm
    nonneg_refit: bool
    data_min_bytes: float
    data_max_bytes: float
    note: str = ""

    def predict(self, data_bytes: FloatArray | float) -> FloatArray:
        """Durations (ms) the line gives for ``data_bytes``."""
        return self.intercept_ms + self.slope_ms_per_byte * np.asarray(data_bytes, dtype=np.float64)


def _rlm(exog: FloatArray, y: FloatArray, norm: Norm) -> IrlsSolution:
    """statsmodels RLM (the reference path, used up to :data:`STATSMODELS_MAX_N` points).

    RLM re-estimates the MAD scale at every step.  On durations rounded to the
    millisecond the scale can creep for many steps (the deviance changing by
    ~1e-5 per step, the fitted line by ~1e-4 ms) and use up :data:`MAXITER`
    without meeting :data:`TOL`: ~1 fit in 70 on heavy-tailed samples of 8-25
    points, which made the cross-validated ``phaseline fit --report`` warn at
    random.  Such a fit continues from where it stopped with the scale held
    (``update_scale=False``): the M-estimate at a fixed scale, whose Huber
    objective is convex, so IRLS then converges (Huber 1981, section 7.8), within
    :data:`HELD_MAXITER` steps in every case we have seen.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SmConvergenceWarning)
        warnings.simplefilter("always", RuntimeWarning)
        start = None
        if norm is Norm.TUKEY:
            # The biweight is redescending: start it from the (convex) Huber solution.
            start = sm.RLM(y, exog, M=sm.robust.norms.HuberT()).fit(maxiter=MAXITER, tol=TOL, conv=CONV).params
        res = sm.RLM(y, exog, M=sm_norm(norm)).fit(maxiter=MAXITER, tol=TOL, conv=CONV, start_params=start)
        iterations = int(res.fit_history["iteration"])
        held = iterations >= MAXITER
        if held:
            res = sm.RLM(y, exog, M=sm_norm(norm)).fit(
                maxiter=HELD_MAXITER, tol=TOL, conv=CONV, start_params=res.params, update_scale=False
            )
            extra = int(res.fit_history["iteration"])
            iterations += extra
    notes = {str(w.message) for w in caught}
    params = np.asarray(res.params, dtype=np.float64)
    converged = not held or extra < HELD_MAXITER
    if held:
        # statsmodels' own warning is about the first stage; what counts is whether the second ended.
        notes = {t for t in notes if "Maximum number of iterations" not in t}
        notes.add(f"scale held at {float(res.scale):.4g} ms after {MAXITER} iterations")
        if not converged:
            params, converged = minimize_held(exog, y, norm, params, float(res.scale))
            notes.add("finished by direct minimisation")
    return IrlsSolution(
        params,
        np.asarray(res.bse, dtype=np.float64),
        float(res.scale),
        iterations,
        "; ".join(sorted(notes)),
        converged=converged,
    )


#: Residuals below this share of the largest duration mean the points lie on the line.
EXACT_FIT_RTOL = 1e-9


def _solve(x_mib: FloatArray, y: FloatArray, norm: Norm, *, const_only: bool, solver: Solver) -> IrlsSolution:
    n = y.size
    exog = np.ones((n, 1)) if const_only else np.asfortranarray(np.column_stack([np.ones(n), x_mib]))
    ols = wls(exog, y, np.ones(n))
    resid = y - (ols[0] if exog.shape[1] == 1 else ols[0] + ols[1] * exog[:, 1])
    if float(np.max(np.abs(resid))) <= EXACT_FIT_RTOL * max(1.0, float(np.max(np.abs(y)))):
        # The points lie on a line: every M-estimator's answer; IRLS would chase a zero scale.
        return IrlsSolution(ols, np.zeros(exog.shape[1]), 0.0, 1, "the points lie exactly on the line")
    use_sm = solver is Solver.STATSMODELS or (solver is Solver.AUTO and n <= STATSMODELS_MAX_N)
    if use_sm:
        return _rlm(exog, y, norm)
    start = None
    if norm is Norm.TUKEY:
        if n > 4 * WARM_START_N:
            # The biweight from the Huber fit of every k-th point, then the biweight of those points:
            # from the whole Huber fit it took 46 full-size steps (a million-row platform fit 4.2 s
            # of CPU, against 1.9 s with Huber alone), from there a few.
            k = n // WARM_START_N
            sub_x, sub_y = np.asfortranarray(exog[::k]), y[::k]
            start = irls(sub_x, sub_y, Norm.TUKEY, irls(sub_x, sub_y, Norm.HUBER).params).params
        else:
            start = irls(exog, y, Norm.HUBER).params
    return irls(exog, y, norm, start)


def _check_points(x: FloatArray, phase: str, min_points: int) -> None:
    """Refuse too few points, or data sizes too close together for a slope (:data:`MIN_DATA_SPREAD`)."""
    n = int(x.size)
    if n < min_points:
        raise InsufficientDataError(
            f"phase {phase!r}: {n} point(s), a line needs at least {min_points}; "
            f"run {min_points - n} more task attempt(s) that record this phase"
        )
    lo, hi = float(x.min()), float(x.max())
    if hi - lo <= MIN_DATA_SPREAD * abs(hi):
        size = f"{lo:.0f} bytes" if lo == hi else f"within {MIN_DATA_SPREAD:.0%}: {lo:,.0f} to {hi:,.0f} bytes"
        raise InsufficientDataError(
            f"phase {phase!r}: all {n} points process the same data size ({size}), so the slope is not "
            f"identifiable; run benchmarks whose data sizes differ by more than {MIN_DATA_SPREAD:.0%}"
        )


def _solve_nonneg(x_mib: FloatArray, y: FloatArray, norm: Norm, solver: Solver) -> tuple[IrlsSolution, bool]:
    """The line, or, where its slope comes out negative, the level (slope held at 0); whether it was refitted."""
    sol = _solve(x_mib, y, norm, const_only=False, solver=solver)
    if not sol.params[1] < 0.0:
        return sol, False
    flat = _solve(x_mib, y, norm, const_only=True, solver=solver)
    return (
        IrlsSolution(
            np.array([float(flat.params[0]), 0.0]),
            np.array([float(flat.bse[0]), 0.0]),
            flat.scale,
            flat.iterations,
            "; ".join(t for t in (sol.note, flat.note) if t),
            flat.converged,
        ),
        True,
    )


def fit_line(
    data_bytes: npt.ArrayLike,
    dur_ms: npt.ArrayLike,
    *,
    norm: Norm = Norm.HUBER,
    phase: str = "?",
    min_points: int = MIN_POINTS,
    solver: Solver = Solver.AUTO,
) -> LineFit:
    """Fit ``dur_ms = A + B * data_bytes`` robustly (Zhang et al. 2013, section 4, eq. 1).

    Parameters
    ----------
    data_bytes, dur_ms
        The platform-profile rows of one phase.
    norm
        Huber's T (default) or Tukey's biweight.
    phase
        The phase name, for error messages.
    min_points
        Fewest points accepted.
    solver
        ``auto`` (statsmodels RLM up to :data:`STATSMODELS_MAX_N` points, the
        equivalent normal-equation IRLS above), or either one forced.

    Returns
    -------
    LineFit
        The frozen result.  A negative slope is refitted at zero and flagged.

    Raises
    ------
    InsufficientDataError
        Fewer than ``min_points`` points, or all at one data size, or within
        :data:`MIN_DATA_SPREAD` of one (the slope is then not identifiable).
    """
    x = np.asarray(data_bytes, dtype=np.float64)
    y = np.asarray(dur_ms, dtype=np.float64)
    n = int(x.size)
    _check_points(x, phase, min_points)
    sol, nonneg = _solve_nonneg(x / _X_UNIT, y, norm, solver)
    params, bse, scale, iterations, note, converged = (
        sol.params, sol.bse, sol.scale, sol.iterations, sol.note, sol.converged
    )  # fmt: skip
    # A residual scale of 0 means the line passes through every (weighted) point: an exact
    # fit, which is converged, not a failure (statsmodels says so in its note).
    if not converged:
        warnings.warn(
            ConvergenceWarning(
                f"phase {phase!r}: robust fit stopped after {iterations} iterations without converging"
                + (f" ({note})" if note else "")
            ),
            stacklevel=2,
        )
    return LineFit(
        intercept_ms=float(params[0]),
        slope_ms_per_byte=float(params[1]) / _X_UNIT,
        intercept_se=float(bse[0]),
        slope_se=float(bse[1]) / _X_UNIT,
        scale_ms=scale,
        converged=converged,
        iterations=iterations,
        n=n,
        norm=norm,
        nonneg_refit=nonneg,
        data_min_bytes=float(x.min()),
        data_max_bytes=float(x.max()),
        note=note,
    )
