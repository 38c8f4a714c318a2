"""One line or two: the two-segment test of Zhang et al. 2013 (end of section 4).

The paper checks, for each phase, "whether two linear functions may provide a
better fit for approximating different segments of training data (ordered by
the increasing data amount) instead of a single linear function", and finds
that the shuffle phase is two lines with a break at 3.2 GB of intermediate data
per reduce task.  Section 2 explains that break from the Hadoop configuration:
the reduce JVM (700 MB) keeps ~46 % of its heap for shuffled data, merges it to
disk in spill files of ~320 MB, and merge-sorts ``io.sort.factor`` = 10 of them
per pass; above 10 x 320 MB = 3.2 GB the final merge needs an extra pass.

Here:

* :func:`~platform_model.shuffle_thresholds.config_thresholds` computes that break from a job configuration
  (Hadoop 3's ``MergeManagerImpl``: shuffle memory = reduce heap x
  ``mapreduce.reduce.shuffle.input.buffer.percent``; an in-memory merge starts
  at ``mapreduce.reduce.shuffle.merge.percent`` of it and writes one on-disk
  file; a single map output larger than ``mapreduce.reduce.shuffle.memory.limit.percent``
  of it goes straight to disk; the final merge makes one pass per
  ``mapreduce.task.io.sort.factor`` on-disk files).
* :func:`fit_phase` searches the break over the ordered data (a vectorized
  Huber IRLS over every candidate split, on an evenly spaced subsample when the
  data are large), fits two robust lines at the best split, and keeps them when
  the stated criterion prefers them:

  - ``bic`` (default): a robust Schwarz criterion,
    ``RBIC = 2 * sum(rho(r_i / s)) + p * ln(n)``, with Huber's rho, one scale
    ``s`` shared by both models: the pooled MAD scale of the two-line fit, the
    larger model's, as in Machado's robust criterion (1993) (the one-line scale
    is inflated by the very break under test), ``p = 2`` for one line and
    ``p = 5`` for two (two lines and the break);
  - ``f``: the robust F-test ``F = ((D1 - D2) / 3) / (D2 / (n - 5))`` with
    ``D = 2 * sum(rho(r_i / s))``, kept when its p-value is below ``alpha``;

  and, either way, only when two lines change the predictions materially
  (by :data:`MIN_EFFECT` in median on one segment) and nearly meet at the
  split (:data:`MAX_JUMP`), with a significant slope change (:data:`SLOPE_Z`)
  and no segment forced to slope zero: with thousands of
  heteroscedastic measurements any criterion finds *some* curvature, and a
  break that moves predictions by 1 % is not the paper's break.  The search
  runs twice: with the one-line scale, then with the pooled scale of the
  two-line fit it found (the one-line scale is inflated by a real break, which
  makes the first search nearly least squares).
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats
from statsmodels.robust import scale as sm_scale

from platform_model.fit import MIN_DATA_SPREAD, LineFit, Norm, fit_line

# Re-exported for platform_model.model, which imports them from here (its home is shuffle_thresholds).
from platform_model.shuffle_thresholds import ShuffleThresholds as ShuffleThresholds
from platform_model.shuffle_thresholds import config_thresholds as config_thresholds

FloatArray = npt.NDArray[np.float64]

#: Huber's tuning constant (95 % efficiency at the normal), as in statsmodels' HuberT.
HUBER_C = 1.345
#: Points the break search looks at; larger data are subsampled evenly in data order.
SEARCH_POINTS = 1500
#: Candidate splits evaluated per search round (a coarse round, then a refinement).
SEARCH_CANDIDATES = 64
#: IRLS iterations per candidate in the search.
SEARCH_ITERATIONS = 6
#: Each segment holds at least this many points, this share of all, and this many data sizes;
#: a robust line through fewer points is at the mercy of one or two outliers.
MIN_SEGMENT_POINTS = 10
MIN_SEGMENT_SHARE = 0.02
MIN_SEGMENT_SIZES = 3
#: Two lines must change the predictions materially: by this median relative amount on one segment.
MIN_EFFECT = 0.05
#: ... and meet (nearly) where the data split: the extra merge pass of section 2 changes the cost per
#: byte, not the cost of the first byte.  Largest relative jump between the lines at the break.
MAX_JUMP = 0.5
#: ... with a slope change this many standard errors large.
SLOPE_Z = 3.0
#: Significance level of the F criterion.
F_ALPHA = 0.01


class Criterion(enum.StrEnum):
    """How the two-segment test decides."""

    BIC = "bic"
    F = "f"


@dataclass(frozen=True, slots=True)
class PhaseFit:
    """The fitted submodel of one phase: one line, or two with a break.

    Attributes
    ----------
    phase
        The phase name.
    segments
        One :class:`LineFit`, or two (below and above ``break_bytes``).
    break_bytes
        Where the second line takes over (None for one line).
    one_line
        The single-line fit (kept for reporting even when two lines win).
    criterion
        The criterion the test used.
    rbic_one, rbic_two
        Robust BIC of one and of the best two-line model (NaN if no split was possible).
    f_stat, f_pvalue
        Robust F statistic and its p-value for the best split.
    n
        Points fitted.
    effect
        Median relative change of the predictions two lines bring on the segment
        where they change most (two lines are kept only above :data:`MIN_EFFECT`).
    """

    phase: str
    segments: tuple[LineFit, ...]
    break_bytes: float | None
    one_line: LineFit
    criterion: Criterion
    rbic_one: float
    rbic_two: float
    f_stat: float
    f_pvalue: float
    n: int
    effect: float = float("nan")

    def predict(self, data_bytes: FloatArray | float) -> FloatArray:
        """Durations (ms) for ``data_bytes`` (vectorized)."""
        x = np.asarray(data_bytes, dtype=np.float64)
        if self.break_bytes is None:
            return self.segments[0].predict(x)
        return np.where(x <= self.break_bytes, self.segments[0].predict(x), self.segments[1].predict(x))


def _huber_rho(u: FloatArray) -> FloatArray:
    a = np.abs(u)
    return np.where(a <= HUBER_C, 0.5 * u * u, HUBER_C * a - 0.5 * HUBER_C * HUBER_C)


def _split_objectives(x: FloatArray, y: FloatArray, splits: npt.NDArray[np.int64], scale: float) -> FloatArray:
    """Huber objective of the best two-line fit at each split position (vectorized IRLS).

    Row ``k`` fits a line to ``x[:splits[k]]`` and another to ``x[splits[k]:]``.
    """
    m = x.size
    pos = np.arange(m)
    total = np.zeros(splits.size)
    xx, xy = x * x, x * y
    # (candidates, points) work arrays, reused in place: the same float operations as the
    # expressions they replace, without a new array per operation
    resid, slope = np.empty((splits.size, m)), np.empty((splits.size, m))
    for left in (True, False):
        mask = (pos[None, :] < splits[:, None]) if left else (pos[None, :] >= splits[:, None])
        maskf = mask.astype(np.float64)
        w = maskf.copy()
        for it in range(SEARCH_ITERATIONS):
            # einsum, not a BLAS product: see platform_model.fit._dot
            sw, swx, swy = w.sum(1), np.einsum("ij,j->i", w, x), np.einsum("ij,j->i", w, y)
            swxx, swxy = np.einsum("ij,j->i", w, xx), np.einsum("ij,j->i", w, xy)
            det = sw * swxx - swx * swx
            det = np.where(np.abs(det) < 1e-12, 1e-12, det)
            b = (sw * swxy - swx * swy) / det
            a = (swy - b * swx) / np.maximum(sw, 1e-12)
            # resid = (y - a - b x) / scale
            np.subtract(y[None, :], a[:, None], out=resid)
            np.multiply(b[:, None], x[None, :], out=slope)
            np.subtract(resid, slope, out=resid)
            np.divide(resid, scale, out=resid)
            if it == SEARCH_ITERATIONS - 1:
                break  # (the last step's weights would not be used)
            # w = maskf * min(1, c / max(|resid|, 1e-12))
            np.abs(resid, out=w)
            np.maximum(w, 1e-12, out=w)
            np.divide(HUBER_C, w, out=w)
            np.minimum(1.0, w, out=w)
            np.multiply(maskf, w, out=w)
        total += (maskf * _huber_rho(resid)).sum(1)
    return total


def _candidates(xs: FloatArray) -> npt.NDArray[np.int64]:
    """Split positions between distinct values leaving each side :func:`_min_segment` points,
    :data:`MIN_SEGMENT_SIZES` distinct data sizes and a spread of them a line can be fitted to."""
    m = xs.size
    least = _min_segment(m)
    p = np.arange(max(least, 1), m - least + 1)
    p = p[xs[p - 1] < xs[p]]
    distinct = np.unique(xs)
    if distinct.size < 2 * MIN_SEGMENT_SIZES:
        return np.empty(0, dtype=np.int64)
    lo = int(np.searchsorted(xs, distinct[MIN_SEGMENT_SIZES - 1], side="right"))
    hi = int(np.searchsorted(xs, distinct[-MIN_SEGMENT_SIZES], side="left"))
    p = p[(p >= lo) & (p <= hi)]
    # each side's line needs its own spread of data sizes (fit_line's MIN_DATA_SPREAD)
    spread: npt.NDArray[np.bool_] = (xs[p - 1] - xs[0] > MIN_DATA_SPREAD * xs[p - 1]) & (
        xs[-1] - xs[p] > MIN_DATA_SPREAD * xs[-1]
    )
    return np.asarray(p[spread], dtype=np.int64)


def _min_segment(n: int) -> int:
    return max(MIN_SEGMENT_POINTS, math.ceil(MIN_SEGMENT_SHARE * n))


def _best_split(xs: FloatArray, ys: FloatArray, scale: float) -> int | None:
    """The split position (index into sorted ``xs``) with the smallest two-line objective."""
    cands = _candidates(xs)
    if cands.size == 0:
        return None
    xn = (xs - xs.mean()) / (xs.std() or 1.0)
    if cands.size > SEARCH_CANDIDATES:
        coarse = cands[np.linspace(0, cands.size - 1, SEARCH_CANDIDATES).round().astype(int)]
        obj = _split_objectives(xn, ys, coarse, scale)
        k = int(np.argmin(obj))
        lo = coarse[max(k - 1, 0)]
        hi = coarse[min(k + 1, coarse.size - 1)]
        fine = cands[(cands >= lo) & (cands <= hi)]
        if fine.size > SEARCH_CANDIDATES:
            fine = fine[np.linspace(0, fine.size - 1, SEARCH_CANDIDATES).round().astype(int)]
        cands = np.union1d(fine, coarse[k : k + 1])
    obj = _split_objectives(xn, ys, cands, scale)
    return int(cands[int(np.argmin(obj))])


def _break_value(left: LineFit, right: LineFit, xs: FloatArray, split: int) -> float | None:
    """Where the two lines cross, when that is near the split; else the middle of the gap;
    None where no break keeps the price rising with the data.

    "Near" is within the data sizes of the :func:`_min_segment` points on either side of the
    split: the crossing uses every point of both lines, so it locates a slope change more
    precisely than the split between two neighbouring points does.  Where the line above
    the gap starts lower than the one below ends, a break in the gap would make more data
    take less time (a drop of up to :data:`MAX_JUMP`): the break is then the crossing, which
    keeps the price continuous, wherever it falls within the data; or there is none.
    """
    gap_lo, gap_hi = float(xs[split - 1]), float(xs[split])
    least = _min_segment(xs.size)
    near_lo, near_hi = float(xs[max(split - least, 0)]), float(xs[min(split + least, xs.size - 1)])
    db = left.slope_ms_per_byte - right.slope_ms_per_byte
    cross = (right.intercept_ms - left.intercept_ms) / db if db != 0.0 else None
    if cross is not None and near_lo <= cross <= near_hi:
        return float(cross)
    middle = 0.5 * (gap_lo + gap_hi)
    if float(right.predict(middle)) >= float(left.predict(middle)):
        return middle
    if cross is not None and float(xs[0]) <= cross <= float(xs[-1]):
        return float(cross)
    return None


def _slopes_differ(left: LineFit, right: LineFit) -> bool:
    """Wald test of a slope change (|b2 - b1| > z * se), with neither slope forced to zero."""
    if left.nonneg_refit or right.nonneg_refit:
        return False
    se = math.hypot(left.slope_se, right.slope_se)
    return abs(right.slope_ms_per_byte - left.slope_ms_per_byte) > SLOPE_Z * se


def _jump(left: LineFit, right: LineFit, at: float) -> float:
    """Relative discontinuity of the two lines at ``at``."""
    a, b = float(left.predict(at)), float(right.predict(at))
    return abs(a - b) / max(0.5 * (abs(a) + abs(b)), 1e-9)


def fit_phase(
    data_bytes: npt.ArrayLike,
    dur_ms: npt.ArrayLike,
    *,
    phase: str,
    norm: Norm = Norm.HUBER,
    criterion: Criterion = Criterion.BIC,
    allow_split: bool = True,
) -> PhaseFit:
    """Fit one phase's submodel: a robust line, or two when the criterion prefers them.

    Parameters
    ----------
    data_bytes, dur_ms
        The phase's platform-profile rows.
    phase
        Its name (for messages and the result).
    norm
        The robust norm of the final fits.
    criterion
        ``bic`` or ``f`` (see the module docstring).
    allow_split
        False fits one line only.

    Raises
    ------
    InsufficientDataError
        Too few points for even one line.
    """
    x = np.asarray(data_bytes, dtype=np.float64)
    y = np.asarray(dur_ms, dtype=np.float64)
    one = fit_line(x, y, norm=norm, phase=phase)
    n = one.n
    nan = float("nan")
    single = PhaseFit(phase, (one,), None, one, criterion, nan, nan, nan, nan, n)
    scale = one.scale_ms
    if not allow_split or n < 2 * _min_segment(n) or scale <= 0.0:
        return single
    order = np.argsort(x, kind="stable")
    xs, ys = x[order], y[order]
    sub = np.linspace(0, n - 1, SEARCH_POINTS).round().astype(np.int64) if n > SEARCH_POINTS else None
    # Pass 1 searches with the one-line scale (inflated when there is a break);
    # pass 2 again with the pooled scale of the pass-1 two-line fit.
    split = _search(xs, ys, sub, scale)
    if split is None:
        return single
    left, right = _fit_two(xs, ys, split, norm, phase)
    scale_two = float(sm_scale.mad(np.concatenate([ys[:split] - left.predict(xs[:split]),
                                                   ys[split:] - right.predict(xs[split:])]), center=0))
    if scale_two > 0.0:
        split2 = _search(xs, ys, sub, scale_two)
        if split2 is not None and split2 != split:
            split = split2
            left, right = _fit_two(xs, ys, split, norm, phase)
    s = scale_two if scale_two > 0.0 else scale
    d_one = 2.0 * float(_huber_rho((y - one.predict(x)) / s).sum())
    d_two = 2.0 * float(
        _huber_rho((ys[:split] - left.predict(xs[:split])) / s).sum()
        + _huber_rho((ys[split:] - right.predict(xs[split:])) / s).sum()
    )
    rbic_one = d_one + 2 * math.log(n)
    rbic_two = d_two + 5 * math.log(n)
    f_stat = ((d_one - d_two) / 3.0) / (d_two / (n - 5)) if d_two > 0 else math.inf
    f_p = float(stats.f.sf(f_stat, 3, n - 5)) if math.isfinite(f_stat) else 0.0
    prefers = rbic_two < rbic_one if criterion is Criterion.BIC else f_p < F_ALPHA
    effect = _effect(xs, split, one, left, right)
    brk = _break_value(left, right, xs, split)
    material = (
        brk is not None
        and effect >= MIN_EFFECT
        and _jump(left, right, 0.5 * float(xs[split - 1] + xs[split])) <= MAX_JUMP
        and _slopes_differ(left, right)
    )
    if not (prefers and material):
        return PhaseFit(phase, (one,), None, one, criterion, rbic_one, rbic_two, f_stat, f_p, n, effect)
    return PhaseFit(phase, (left, right), brk, one, criterion, rbic_one, rbic_two, f_stat, f_p, n, effect)


def _search(xs: FloatArray, ys: FloatArray, sub: npt.NDArray[np.int64] | None, scale: float) -> int | None:
    """The best split of the sorted data (an index into ``xs``), searched on ``sub`` if given."""
    if sub is None:
        return _best_split(xs, ys, scale)
    p_sub = _best_split(xs[sub], ys[sub], scale)
    if p_sub is None:
        return None
    return int(np.searchsorted(xs, xs[sub][p_sub], side="left"))


def _fit_two(xs: FloatArray, ys: FloatArray, split: int, norm: Norm, phase: str) -> tuple[LineFit, LineFit]:
    return (
        fit_line(xs[:split], ys[:split], norm=norm, phase=f"{phase} (below break)"),
        fit_line(xs[split:], ys[split:], norm=norm, phase=f"{phase} (above break)"),
    )


def _effect(xs: FloatArray, split: int, one: LineFit, left: LineFit, right: LineFit) -> float:
    """How much two lines change the predictions: the larger, over the two segments, of the
    median relative difference between the two-line and the one-line prediction."""
    out = 0.0
    for seg, line in ((xs[:split], left), (xs[split:], right)):
        base = np.abs(one.predict(seg))
        rel = np.abs(line.predict(seg) - one.predict(seg)) / np.maximum(base, 1e-9)
        out = max(out, float(np.median(rel)))
    return out
