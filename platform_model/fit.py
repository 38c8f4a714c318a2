"""Robust straight-line fits ``Dur = A + B * Data`` of one generic phase.

Zhang, Cherkasova and Loo (ICPE'13), section 4, eq. 1: for each generic phase
``i`` solve ``A_i + B_i * Data_i^j = Dur_i^j`` over the rows ``j`` of the
platform profile with robust linear regression (iteratively reweighted least
squares, Holland and Welsch 1977).  We use statsmodels' :class:`RLM` with
Tukey's biweight by default (:data:`DEFAULT_NORM`, started from the Huber
solution, since the biweight's objective is not convex), Huber's T on request.  Above
:data:`STATSMODELS_MAX_N` points the same estimator is solved through the 2 x 2
normal equations (:func:`_irls`), so that a million-row profile fits in about
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

FloatArray = npt.NDArray[np.float64]

#: Fewest points a line is fitted to (two parameters plus a robust scale).
MIN_POINTS = 5
#: A line needs data sizes further apart than this share of the largest: over a narrower range
#: the slope is noise (15 runs of one benchmark, collect at 3,422,100-3,422,610 bytes, gave
#: 6.3 s/MiB and a prediction 20x the measured time).
MIN_DATA_SPREAD = 0.1
#: IRLS iteration cap (per stage, see :func:`_rlm`) and tolerance on the change of the coefficients.
MAXITER = 50
#: Iteration cap of the held-scale stage: IRLS at a fixed scale converges, but can take ~200 steps.
HELD_MAXITER = 10 * MAXITER
TOL = 1e-8
#: statsmodels' stopping rule: the coefficients (ms, ms per MiB) move less than TOL.  Its default,
#: the deviance's relative change, stops where one far point dominates the deviance: 30 rows of
#: ~5 ms + 1 ms/kB and one of 1e7 ms stopped after 2 steps at 26,200 ms - 157 ms/kB (refitted
#: flat at 23,676 ms), where the fixed point is 5.43 ms + 1,055 ms/MiB.
CONV = "coefs"
#: Convergence of the normal-equation IRLS: fitted values move less than this x the scale.
TOL_FITTED = 1e-7
#: Above 4x this many points the normal-equation IRLS starts from a fit of an evenly strided subsample.
_WARM_START_N = 20_000
#: Data are fitted in MiB and durations in ms, so the normal equations stay well conditioned.
_X_UNIT = float(1 << 20)
#: Largest fit done with statsmodels' RLM itself (its pseudo-inverse per step costs O(n) SVDs).
STATSMODELS_MAX_N = 5_000


class Solver(enum.StrEnum):
    """Which implementation solves the IRLS (same estimator, see :func:`_irls`)."""

    AUTO = "auto"
    STATSMODELS = "statsmodels"
    NORMAL_EQUATIONS = "normal-equations"


@dataclass(frozen=True, slots=True)
class _Solution:
    params: FloatArray
    bse: FloatArray
    scale: float
    iterations: int
    note: str
    converged: bool = True


class Norm(enum.StrEnum):
    """The robust norm (rho function) of the IRLS fit."""

    HUBER = "huber"
    TUKEY = "tukey"


#: The platform model's norm (``phaseline fit``, :func:`platform_model.model.fit_platform`): see the
#: module docstring.  :func:`fit_line` itself defaults to Huber's T, the convex estimate it starts from.
DEFAULT_NORM = Norm.TUKEY


def _norm(norm: Norm) -> sm.robust.norms.RobustNorm:
    if norm is Norm.HUBER:
        return sm.robust.norms.HuberT()
    return sm.robust.norms.TukeyBiweight()


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


def _rlm(exog: FloatArray, y: FloatArray, norm: Norm) -> _Solution:
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
        res = sm.RLM(y, exog, M=_norm(norm)).fit(maxiter=MAXITER, tol=TOL, conv=CONV, start_params=start)
        iterations = int(res.fit_history["iteration"])
        held = iterations >= MAXITER
        if held:
            res = sm.RLM(y, exog, M=_norm(norm)).fit(
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
            params, converged = _minimize_held(exog, y, norm, params, float(res.scale))
            notes.add("finished by direct minimisation")
    return _Solution(
        params,
        np.asarray(res.bse, dtype=np.float64),
        float(res.scale),
        iterations,
        "; ".join(sorted(notes)),
        converged=converged,
    )


def _minimize_held(
    exog: FloatArray, y: FloatArray, norm: Norm, start: FloatArray, scale: float
) -> tuple[FloatArray, bool]:
    """The M-estimate at a held scale by direct minimisation of ``sum rho(r / s)`` (scipy BFGS).

    IRLS at a held scale converges, but only linearly: where most points share
    one data size and a few lie far from it (a design near collinear with the
    intercept) and the durations are heavy-tailed, it still moved after
    :data:`HELD_MAXITER` steps (~4 % of such random samples, and a platform fit
    on this machine's engine runs).  The objective is the same (convex for
    Huber's T), its gradient ``-X' psi(r / s) / s`` is exact, and BFGS reaches
    the minimum in a few dozen steps.  Returns the parameters and whether they
    are the minimum (the minimiser's success, or a gradient at rounding level).
    """
    from scipy.optimize import minimize

    m = _norm(norm)

    def objective(b: FloatArray) -> tuple[float, FloatArray]:
        z = (y - exog @ b) / scale
        return float(np.sum(m.rho(z))), -(exog.T @ m.psi(z)) / scale

    found = minimize(objective, np.asarray(start, dtype=np.float64), jac=True, method="BFGS",
                     options={"gtol": 1e-9 * len(y), "maxiter": HELD_MAXITER})  # fmt: skip
    # BFGS reports "precision loss" when the objective cannot fall further in floating point;
    # a gradient that small (each point's psi is at most ~1.3) is the minimum all the same
    at_minimum = bool(found.success) or float(np.max(np.abs(found.jac))) <= 1e-6 * len(y)
    return np.asarray(found.x, dtype=np.float64), at_minimum


_MAD_NORMAL = 0.6744897501960817  # Phi^-1(3/4): MAD / this estimates the normal sigma
_HUBER_T = 1.345  # statsmodels HuberT default
_TUKEY_C = 4.685  # statsmodels TukeyBiweight default


def _mad(resid: FloatArray, near: float | None = None) -> float:
    """``statsmodels.robust.scale.mad(resid, center=0)``: median |r| / Phi^-1(3/4).

    ``near``: a scale the answer is likely close to (the previous IRLS step's), see
    :func:`_median_near`.
    """
    a = np.abs(resid)
    median = _median_near(a, near * _MAD_NORMAL) if near is not None and near > 0 else None
    return (float(np.median(a)) if median is None else median) / _MAD_NORMAL


#: Half-width of the bracket :func:`_median_near` tries first, relative to its guess.
_MEDIAN_BRACKET = 0.05


def _median_near(a: FloatArray, guess: float) -> float | None:
    """``np.median(a)`` when its middle order statistics lie within ``guess`` +- 5 %, else ``None``.

    The order statistics are values of ``a``: counting the values below the bracket and
    selecting among the few inside it gives the same ones as partitioning all of ``a``
    (np.median's way, a third of a million-row platform fit), and the median is formed from
    them as np.median forms it (the mean of the two middle values for an even count).  IRLS
    moves the residuals a little per step, so the previous step's median brackets the next.
    """
    n = a.size
    lo, hi = guess * (1.0 - _MEDIAN_BRACKET), guess * (1.0 + _MEDIAN_BRACKET)
    below = int(np.count_nonzero(a < lo))
    inside = a[(a >= lo) & (a <= hi)]
    if below + inside.size + int(np.count_nonzero(a > hi)) != n:  # NaN: np.median's answer
        return None
    ranks = [n // 2] if n % 2 else [n // 2 - 1, n // 2]
    if not (below <= ranks[0] and ranks[-1] < below + inside.size):
        return None
    picked = np.partition(inside, [r - below for r in ranks])[[r - below for r in ranks]]
    return float(np.mean(picked))


def _huber_weights(z: FloatArray) -> FloatArray:
    """HuberT.weights: 1 inside +-t, t/|z| outside."""
    a = np.abs(z)
    return np.minimum(1.0, _HUBER_T / np.maximum(a, 1e-300))


def _tukey_weights(z: FloatArray) -> FloatArray:
    """TukeyBiweight.weights: (1 - (z/c)^2)^2 inside +-c, 0 outside (in place on one temporary:
    the same floats as ``np.where(u > 0, u * u, 0)`` at a third of its time)."""
    u = z / _TUKEY_C
    np.multiply(u, u, out=u)
    np.subtract(1.0, u, out=u)
    np.fmax(u, 0.0, out=u)
    return u * u


def _dot(a: FloatArray, b: FloatArray) -> float:
    """Inner product without BLAS: on a shared, loaded machine OpenBLAS's threads make
    ``np.dot`` of long vectors up to 100x slower than this single-threaded loop."""
    return float(np.einsum("i,i->", a, b))


def _wls(exog: FloatArray, y: FloatArray, w: FloatArray) -> FloatArray:
    """Weighted least squares for one or two columns through the normal equations."""
    if exog.shape[1] == 1:
        return np.array([_dot(w, y) / max(float(w.sum()), 1e-300)])
    x = exog[:, 1]
    wx = w * x
    sw, swx, swy = float(w.sum()), float(wx.sum()), _dot(w, y)
    swxx, swxy = _dot(wx, x), _dot(wx, y)
    det = sw * swxx - swx * swx
    if det <= 0.0:
        return np.array([swy / max(sw, 1e-300), 0.0])
    b = (sw * swxy - swx * swy) / det
    return np.array([(swy - b * swx) / sw, b])


def _irls(exog: FloatArray, y: FloatArray, norm: Norm, start: FloatArray | None = None) -> _Solution:
    """IRLS with statsmodels' norms, MAD scale and H1 covariance, solved by normal equations.

    The same estimator as :class:`statsmodels.robust.robust_linear_model.RLM`
    (weights ``M.weights(r / s)`` of the same norms, ``s = mad(r, center=0)``
    re-estimated each step, the H1 covariance), without its pseudo-inverse of
    the n x 2 design per step and without BLAS calls (whose threads crawl on a
    loaded machine): a line through a million rows costs ~0.3 s of CPU.  Above
    ``4 x _WARM_START_N`` rows it starts from the fit of an evenly strided
    subsample.  It stops when a step moves the fitted values by less than
    :data:`TOL_FITTED` x the scale (statsmodels, on the coefficients' change; both
    reach the same fixed point, see tests/test_platform_fit.py).
    """
    m = _norm(norm)
    n, p = exog.shape
    weights = _huber_weights if norm is Norm.HUBER else _tukey_weights
    xmax = float(np.max(np.abs(exog[:, 1]))) if p == 2 else 0.0
    if start is None and n > 4 * _WARM_START_N:
        # Warm start from every k-th point: most IRLS steps then cost a subsample, not all rows.
        k = n // _WARM_START_N
        start = _irls(np.asfortranarray(exog[::k]), y[::k], norm).params
    params = _wls(exog, y, np.ones(n)) if start is None else start
    resid = y - (params[0] if p == 1 else params[0] + params[1] * exog[:, 1])
    scale = _mad(resid)
    iteration = 1
    note = ""
    converged = False
    # Stage 1 re-estimates the scale every step; stage 2 (only if stage 1 runs out, see _rlm) holds it.
    for hold, cap in ((False, MAXITER), (True, MAXITER + HELD_MAXITER)):
        while iteration < cap:
            if scale == 0.0:
                note = "estimated scale is 0.0: the weighted data are fitted exactly"
                converged = True
                break
            new = _wls(exog, y, weights(resid / scale))
            step = abs(new[0] - params[0]) + (abs(new[1] - params[1]) * xmax if p == 2 else 0.0)
            params = new
            resid = y - (params[0] if p == 1 else params[0] + params[1] * exog[:, 1])
            if not hold:
                scale = _mad(resid, near=scale)
            iteration += 1
            if step <= TOL_FITTED * scale:
                converged = True
                break
        if converged:
            break
        note = f"scale held at {scale:.4g} ms after {MAXITER} iterations"
    if not converged and scale > 0.0:
        params, converged = _minimize_held(exog, y, norm, params, scale)
        resid = y - exog @ params
        note += "; finished by direct minimisation"
    # H1 covariance (Huber 1981, eq. 7.6.8), as statsmodels' RLMResults.bcov_scaled.
    if scale > 0.0:
        sres = resid / scale
        dpsi = m.psi_deriv(sres)
        mean_d = float(np.mean(dpsi))
        k = 1.0 + p / n * float(np.var(dpsi)) / mean_d**2
        factor = k**2 * (float(np.sum(m.psi(sres) ** 2)) / (n - p) * scale**2) / mean_d**2
        if p == 1:
            xtx = np.array([[float(n)]])
        else:
            x = exog[:, 1]
            sx = float(x.sum())
            xtx = np.array([[float(n), sx], [sx, _dot(x, x)]])
        xtx_inv = np.linalg.pinv(xtx)
        bse = np.sqrt(np.clip(np.diag(factor * xtx_inv), 0.0, None))
    else:
        bse = np.zeros(p)
    return _Solution(params, bse, scale, iteration, note, converged)


#: Residuals below this share of the largest duration mean the points lie on the line.
EXACT_FIT_RTOL = 1e-9


def _solve(x_mib: FloatArray, y: FloatArray, norm: Norm, *, const_only: bool, solver: Solver) -> _Solution:
    n = y.size
    exog = np.ones((n, 1)) if const_only else np.asfortranarray(np.column_stack([np.ones(n), x_mib]))
    ols = _wls(exog, y, np.ones(n))
    resid = y - (ols[0] if exog.shape[1] == 1 else ols[0] + ols[1] * exog[:, 1])
    if float(np.max(np.abs(resid))) <= EXACT_FIT_RTOL * max(1.0, float(np.max(np.abs(y)))):
        # The points lie on a line: every M-estimator's answer; IRLS would chase a zero scale.
        return _Solution(ols, np.zeros(exog.shape[1]), 0.0, 1, "the points lie exactly on the line")
    use_sm = solver is Solver.STATSMODELS or (solver is Solver.AUTO and n <= STATSMODELS_MAX_N)
    if use_sm:
        return _rlm(exog, y, norm)
    start = None
    if norm is Norm.TUKEY:
        if n > 4 * _WARM_START_N:
            # The biweight from the Huber fit of every k-th point, then the biweight of those points:
            # from the whole Huber fit it took 46 full-size steps (a million-row platform fit 4.2 s
            # of CPU, against 1.9 s with Huber alone), from there a few.
            k = n // _WARM_START_N
            sub_x, sub_y = np.asfortranarray(exog[::k]), y[::k]
            start = _irls(sub_x, sub_y, Norm.TUKEY, _irls(sub_x, sub_y, Norm.HUBER).params).params
        else:
            start = _irls(exog, y, Norm.HUBER).params
    return _irls(exog, y, norm, start)


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
    if n < min_points:
        raise InsufficientDataError(
            f"phase {phase!r}: {n} point(s), a line needs at least {min_points}; "
            f"run {min_points - n} more task attempt(s) that record this phase"
        )
    x_mib = x / _X_UNIT
    lo, hi = float(x.min()), float(x.max())
    if hi - lo <= MIN_DATA_SPREAD * abs(hi):
        size = f"{lo:.0f} bytes" if lo == hi else f"within {MIN_DATA_SPREAD:.0%}: {lo:,.0f} to {hi:,.0f} bytes"
        raise InsufficientDataError(
            f"phase {phase!r}: all {n} points process the same data size ({size}), so the slope is not "
            f"identifiable; run benchmarks whose data sizes differ by more than {MIN_DATA_SPREAD:.0%}"
        )
    sol = _solve(x_mib, y, norm, const_only=False, solver=solver)
    params, bse, scale, iterations, note = sol.params, sol.bse, sol.scale, sol.iterations, sol.note
    converged = sol.converged
    nonneg = bool(params[1] < 0.0)
    if nonneg:
        sol = _solve(x_mib, y, norm, const_only=True, solver=solver)
        note = "; ".join(t for t in (note, sol.note) if t)
        params = np.array([float(sol.params[0]), 0.0])
        bse = np.array([float(sol.bse[0]), 0.0])
        scale, iterations = sol.scale, sol.iterations
        converged = sol.converged
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
