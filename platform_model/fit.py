"""Robust straight-line fits ``Dur = A + B * Data`` of one generic phase.

Zhang, Cherkasova and Loo (ICPE'13), section 4, eq. 1: for each generic phase
``i`` solve ``A_i + B_i * Data_i^j = Dur_i^j`` over the rows ``j`` of the
platform profile with robust linear regression (iteratively reweighted least
squares, Holland and Welsch 1977).  We use statsmodels' :class:`RLM` with
Huber's T norm by default, Tukey's biweight on request (started from the Huber
solution, since the biweight's objective is not convex).

A slope that comes out negative (more data, less time) is physically
meaningless; the paper mentions non-negative least squares as the usual remedy.
We refit such a phase with the slope held at zero (a robust location fit of the
durations) and flag the result (:attr:`LineFit.nonneg_refit`).

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
#: IRLS iteration cap and tolerance on the relative change of the deviance.
MAXITER = 50
TOL = 1e-8
#: Data are fitted in MiB and durations in ms, so the normal equations stay well conditioned.
_X_UNIT = float(1 << 20)


class Norm(enum.StrEnum):
    """The robust norm (rho function) of the IRLS fit."""

    HUBER = "huber"
    TUKEY = "tukey"


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
        Whether IRLS stopped on the tolerance before the iteration cap.
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


def _rlm(x_mib: FloatArray, y: FloatArray, exog: FloatArray, norm: Norm) -> tuple[object, str]:
    """Run statsmodels RLM; return its result and any warning text it raised."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", SmConvergenceWarning)
        warnings.simplefilter("always", RuntimeWarning)
        start = None
        if norm is Norm.TUKEY:
            # The biweight is redescending: start it from the (convex) Huber solution.
            start = sm.RLM(y, exog, M=sm.robust.norms.HuberT()).fit(maxiter=MAXITER, tol=TOL).params
        res = sm.RLM(y, exog, M=_norm(norm)).fit(maxiter=MAXITER, tol=TOL, start_params=start)
    note = "; ".join(sorted({str(w.message) for w in caught}))
    return res, note


def fit_line(
    data_bytes: npt.ArrayLike,
    dur_ms: npt.ArrayLike,
    *,
    norm: Norm = Norm.HUBER,
    phase: str = "?",
    min_points: int = MIN_POINTS,
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

    Returns
    -------
    LineFit
        The frozen result.  A negative slope is refitted at zero and flagged.

    Raises
    ------
    InsufficientDataError
        Fewer than ``min_points`` points, or all at one data size (the slope is
        then not identifiable).
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
    if float(np.ptp(x_mib)) == 0.0:
        raise InsufficientDataError(
            f"phase {phase!r}: all {n} points process the same data size ({x[0]:.0f} bytes); "
            "run benchmarks with at least two different data sizes"
        )
    exog = np.column_stack([np.ones(n), x_mib])
    res, note = _rlm(x_mib, y, exog, norm)
    params = np.asarray(res.params, dtype=np.float64)  # type: ignore[attr-defined]
    bse = np.asarray(res.bse, dtype=np.float64)  # type: ignore[attr-defined]
    scale = float(res.scale)  # type: ignore[attr-defined]
    iterations = int(res.fit_history["iteration"])  # type: ignore[attr-defined]
    nonneg = bool(params[1] < 0.0)
    if nonneg:
        res, note2 = _rlm(x_mib, y, np.ones((n, 1)), norm)
        note = "; ".join(t for t in (note, note2) if t)
        params = np.array([float(res.params[0]), 0.0])  # type: ignore[attr-defined]
        bse = np.array([float(res.bse[0]), 0.0])  # type: ignore[attr-defined]
        scale = float(res.scale)  # type: ignore[attr-defined]
        iterations = int(res.fit_history["iteration"])  # type: ignore[attr-defined]
    converged = iterations < MAXITER and scale > 0.0
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
