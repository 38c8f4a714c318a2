"""The normal-equation IRLS behind :func:`platform_model.fit.fit_line` for large profiles.

The same M-estimator as statsmodels' :class:`RLM` (its norms, MAD scale re-estimated each
step, H1 covariance), solved through the 2 x 2 normal equations without BLAS, plus the
direct minimisation that finishes a held-scale fit.  :mod:`platform_model.fit` says when
each path is used and why the biweight.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import statsmodels.api as sm

__all__ = [
    "HELD_MAXITER",
    "MAXITER",
    "TOL_FITTED",
    "WARM_START_N",
    "IrlsSolution",
    "Norm",
    "irls",
    "minimize_held",
    "sm_norm",
    "wls",
]

FloatArray = npt.NDArray[np.float64]

#: IRLS iteration cap (per stage, see :func:`_rlm`) and tolerance on the change of the coefficients.
MAXITER = 50
#: Iteration cap of the held-scale stage: IRLS at a fixed scale converges, but can take ~200 steps.
HELD_MAXITER = 10 * MAXITER
#: Convergence of the normal-equation IRLS: fitted values move less than this x the scale.
TOL_FITTED = 1e-7
#: Above 4x this many points the normal-equation IRLS starts from a fit of an evenly strided subsample.
WARM_START_N = 20_000


@dataclass(frozen=True, slots=True)
class IrlsSolution:
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


def sm_norm(norm: Norm) -> sm.robust.norms.RobustNorm:
    if norm is Norm.HUBER:
        return sm.robust.norms.HuberT()
    return sm.robust.norms.TukeyBiweight()


def minimize_held(
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

    m = sm_norm(norm)

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
    """HuberT.weights: 1 inside +-t, t/|z| outside; in place, ``z`` becomes the weights."""
    a = np.abs(z, out=z)
    np.maximum(a, 1e-300, out=a)
    np.divide(_HUBER_T, a, out=a)
    return np.minimum(1.0, a, out=a)


def _tukey_weights(z: FloatArray) -> FloatArray:
    """TukeyBiweight.weights: (1 - (z/c)^2)^2 inside +-c, 0 outside; in place, ``z`` becomes the
    weights (the same floats as ``np.where(u > 0, u * u, 0)`` at a third of its time)."""
    u = np.divide(z, _TUKEY_C, out=z)
    np.multiply(u, u, out=u)
    np.subtract(1.0, u, out=u)
    np.fmax(u, 0.0, out=u)
    return np.multiply(u, u, out=u)


def _dot(a: FloatArray, b: FloatArray) -> float:
    """Inner product without BLAS: on a shared, loaded machine OpenBLAS's threads make
    ``np.dot`` of long vectors up to 100x slower than this single-threaded loop."""
    return float(np.einsum("i,i->", a, b))


def wls(exog: FloatArray, y: FloatArray, w: FloatArray) -> FloatArray:
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


def irls(exog: FloatArray, y: FloatArray, norm: Norm, start: FloatArray | None = None) -> IrlsSolution:
    """IRLS with statsmodels' norms, MAD scale and H1 covariance, solved by normal equations.

    The same estimator as :class:`statsmodels.robust.robust_linear_model.RLM`
    (weights ``M.weights(r / s)`` of the same norms, ``s = mad(r, center=0)``
    re-estimated each step, the H1 covariance), without its pseudo-inverse of
    the n x 2 design per step and without BLAS calls (whose threads crawl on a
    loaded machine): a line through a million rows costs ~0.3 s of CPU.  Above
    ``4 x WARM_START_N`` rows it starts from the fit of an evenly strided
    subsample.  It stops when a step moves the fitted values by less than
    :data:`TOL_FITTED` x the scale (statsmodels, on the coefficients' change; both
    reach the same fixed point, see tests/platform_model/test_platform_fit.py).
    """
    m = sm_norm(norm)
    n, p = exog.shape
    weights = _huber_weights if norm is Norm.HUBER else _tukey_weights
    xmax = float(np.max(np.abs(exog[:, 1]))) if p == 2 else 0.0
    if start is None and n > 4 * WARM_START_N:
        # Warm start from every k-th point: most IRLS steps then cost a subsample, not all rows.
        k = n // WARM_START_N
        start = irls(np.asfortranarray(exog[::k]), y[::k], norm).params
    params = wls(exog, y, np.ones(n)) if start is None else start
    resid = y - (params[0] if p == 1 else params[0] + params[1] * exog[:, 1])
    scale = _mad(resid)
    iteration = 1
    note = ""
    converged = False
    z = np.empty(n)
    # Stage 1 re-estimates the scale every step; stage 2 (only if stage 1 runs out, see _rlm) holds it.
    for hold, cap in ((False, MAXITER), (True, MAXITER + HELD_MAXITER)):
        while iteration < cap:
            if scale == 0.0:
                note = "estimated scale is 0.0: the weighted data are fitted exactly"
                converged = True
                break
            new = wls(exog, y, weights(np.divide(resid, scale, out=z)))  # (z: the weights' buffer)
            step = abs(new[0] - params[0]) + (abs(new[1] - params[1]) * xmax if p == 2 else 0.0)
            params = new
            if p == 1:
                np.subtract(y, params[0], out=resid)
            else:  # resid = y - (a + b x), in place
                np.multiply(params[1], exog[:, 1], out=resid)
                np.add(params[0], resid, out=resid)
                np.subtract(y, resid, out=resid)
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
        params, converged = minimize_held(exog, y, norm, params, scale)
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
    return IrlsSolution(params, bse, scale, iteration, note, converged)
