"""Response-time estimates for precedence-tree nodes (Vianna et al. 2013, section 4.3).

Task response times are taken as exponential (section 4.3, after Liang &
Tripathi 2000).  A serial (S) node's mean and variance are the sums of its
children's.  A parallel-and (P_A) node is estimated one of two ways:

* :func:`forkjoin_max` -- the fork/join estimate: the k-th harmonic number
  times the largest mean of the k branches (section 4.3, item 2, after Varki
  1999).
* :func:`tripathi_max` -- Liang & Tripathi's: each branch is approximated by
  an Erlang distribution if its coefficient of variation is at most 1 (here
  the gamma distribution with the same two moments, Erlang's continuous
  extension) or by a two-phase hyperexponential with balanced means
  otherwise (Trivedi 1982), and the mean and variance of the maximum are
  computed from the product of the branch CDFs (section 4.3, item 1).

:func:`mean_min_exponential` is the average of the minimum of independent
exponential response times, used for the start of the first shuffle-sort
(section 4.3, last paragraph).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import special

from phaseline.errors import PredictionError

__all__ = [
    "Moments",
    "forkjoin_max",
    "harmonic",
    "mean_min_exponential",
    "serial",
    "tripathi_max",
]

#: Grid points for the numerical integration of the maximum's moments.
MAX_GRID_POINTS = 4001
#: Tail mass left out at each end of the integration range.
TAIL_MASS = 1e-12
#: Below this coefficient of variation a branch is treated as deterministic.
DETERMINISTIC_CV = 1e-6


@dataclass(frozen=True, slots=True)
class Moments:
    """Mean and variance of a response time (seconds, seconds^2)."""

    mean: float
    var: float

    @property
    def cv(self) -> float:
        """Coefficient of variation (0 for a zero mean)."""
        return math.sqrt(max(self.var, 0.0)) / self.mean if self.mean > 0 else 0.0

    @classmethod
    def exponential(cls, mean: float) -> Moments:
        """An exponential response time with this mean (the model's task assumption)."""
        return cls(mean, mean * mean)


def harmonic(k: int) -> float:
    """The k-th harmonic number ``H_k = sum_{i=1..k} 1/i`` (``H_0 = 0``).

    >>> harmonic(2)
    1.5
    """
    if k < 0:
        raise PredictionError(f"harmonic number of {k} is undefined")
    if k < 64:
        return math.fsum(1.0 / i for i in range(1, k + 1))
    # asymptotic expansion, accurate to ~1e-12 for k >= 64
    return math.log(k) + 0.5772156649015329 + 1 / (2 * k) - 1 / (12 * k * k) + 1 / (120 * k**4)


def serial(children: Sequence[tuple[Moments, int]]) -> Moments:
    """S operator: sum of independent response times (each repeated ``count`` times)."""
    return Moments(
        math.fsum(m.mean * c for m, c in children),
        math.fsum(m.var * c for m, c in children),
    )


def forkjoin_max(children: Sequence[tuple[Moments, int]]) -> Moments:
    """Fork/join estimate of a P_A node: ``H_k * max_i mean_i`` with k = the number of branches.

    ``count`` repeats a branch (symmetric threads).  The variance is that of
    the maximum of k exponentials with the largest mean, ``sum_{i<=k} 1/i^2 max^2``,
    so that enclosing Tripathi-style nodes get a consistent second moment.
    """
    k = sum(c for _, c in children)
    if k == 0:
        return Moments(0.0, 0.0)
    top = max(m.mean for m, _ in children)
    var_factor = math.fsum(1.0 / (i * i) for i in range(1, min(k, 10_000) + 1))
    return Moments(harmonic(k) * top, var_factor * top * top)


def mean_min_exponential(means: Sequence[float], counts: Sequence[int] | None = None) -> float:
    """Average of the minimum of independent exponentials: ``1 / sum_i (count_i / mean_i)``.

    >>> mean_min_exponential([8.0, 8.0])
    4.0
    """
    counts = [1] * len(means) if counts is None else list(counts)
    rate = math.fsum(c / m for m, c in zip(means, counts, strict=True) if m > 0 and c > 0)
    if any(m == 0 and c > 0 for m, c in zip(means, counts, strict=True)):
        return 0.0
    if rate == 0:
        raise PredictionError("the minimum of no response times is undefined")
    return 1.0 / rate


def _cdf(m: Moments, t: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    cv = m.cv
    if m.mean <= 0 or cv < DETERMINISTIC_CV:
        return np.asarray((t >= m.mean).astype(np.float64))
    c2 = cv * cv
    if c2 <= 1.0:  # Erlang family: gamma with shape 1/c2 and the same mean
        shape = 1.0 / c2
        return np.asarray(special.gammainc(shape, t * shape / m.mean))
    p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))  # balanced-means H2
    p2 = 1.0 - p1
    l1, l2 = 2.0 * p1 / m.mean, 2.0 * p2 / m.mean
    return np.asarray(1.0 - p1 * np.exp(-l1 * t) - p2 * np.exp(-l2 * t))


def _quantile_bounds(m: Moments) -> tuple[float, float]:
    cv = m.cv
    if m.mean <= 0 or cv < DETERMINISTIC_CV:
        return m.mean, m.mean
    c2 = cv * cv
    if c2 <= 1.0:
        shape = 1.0 / c2
        scale = m.mean / shape
        return (
            float(special.gammaincinv(shape, TAIL_MASS)) * scale,
            float(special.gammainccinv(shape, TAIL_MASS)) * scale,
        )
    p1 = 0.5 * (1.0 + math.sqrt((c2 - 1.0) / (c2 + 1.0)))
    slow = 2.0 * min(p1, 1.0 - p1) / m.mean
    return 0.0, math.log(1.0 / TAIL_MASS) / slow


def tripathi_max(children: Sequence[tuple[Moments, int]]) -> Moments:
    """Liang & Tripathi's P_A estimate: mean and variance of the maximum of the fitted branches.

    ``E[max] = lo + int_lo^hi (1 - prod_i F_i(t)^count_i) dt`` and
    ``E[max^2] = lo^2 + int_lo^hi 2t (1 - prod F) dt`` over the range where
    the product CDF moves (everything below ``lo`` has maximum >= lo surely).
    """
    live = [(m, c) for m, c in children if c > 0 and m.mean > 0]
    if not live:
        return Moments(0.0, 0.0)
    if len(live) == 1 and live[0][1] == 1:
        return live[0][0]
    bounds = [_quantile_bounds(m) for m, _ in live]
    lo = max(b[0] for b in bounds)  # the max is at least every branch's lower quantile
    hi = max(b[1] for b in bounds)
    if hi <= lo:
        top = max(m.mean for m, _ in live)
        return Moments(top, 0.0)
    t = np.linspace(lo, hi, MAX_GRID_POINTS)
    log_cdf = np.zeros_like(t)
    with np.errstate(divide="ignore"):
        for m, c in live:
            log_cdf += c * np.log(np.clip(_cdf(m, t), 0.0, 1.0))
    survival = 1.0 - np.exp(log_cdf)
    mean = lo + float(np.trapezoid(survival, t))
    second = lo * lo + float(np.trapezoid(2.0 * t * survival, t))
    return Moments(mean, max(second - mean * mean, 0.0))
