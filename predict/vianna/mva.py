"""Mean Value Analysis: exact single- and multi-class MVA, and the approximate MVA of Vianna et al. 2013.

* :func:`exact_mva` -- Reiser & Lavenberg's exact recursion for one class
  (queueing and delay centers, think time), the textbook reference
  (Lazowska et al. 1984, "Quantitative System Performance", ch. 6).
* :func:`exact_mva_multiclass` -- the exact multi-class recursion, eqs. 1-4
  of Vianna et al. 2013 (section 2.1), over the whole population lattice;
  exponential in the number of classes, a reference for tiny populations.
* :func:`schweitzer_mva` -- Bard-Schweitzer approximate MVA (the
  proportional estimate ``Q_ik(N - 1_i) = (N_i - 1)/N_i Q_ik``).
* :func:`eq5_mva` -- the aMVA of Vianna et al. 2013, eq. 5 (Zahorjan's
  estimate extended to several classes by Liang & Tripathi): removing one
  class-i customer shortens class j's residence at k by ``D_jk R_ik / R_i``.
* :func:`overlap_amva` -- eq. 5 with the arrival queue of eq. 6: the queue a
  task finds is the other tasks' queues weighted by the intra-job overlap
  ``alpha_ij`` and the inter-job overlap ``beta_ij`` (Liang & Tripathi 2000);
  the weights come from the precedence model (:mod:`predict.vianna.model`).

All solvers are numpy-vectorized over classes and centers.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from phaseline.errors import PredictionError

__all__ = [
    "MVAResult",
    "OverlapSolution",
    "SparseWeights",
    "eq5_mva",
    "exact_mva",
    "exact_mva_multiclass",
    "overlap_amva",
    "schweitzer_mva",
]

Array = npt.NDArray[np.float64]

#: Fixed-point iterations stop when no residence time moves by more than this, relative.
AMVA_TOL = 1e-10
#: Give up (and say so) after this many fixed-point sweeps.
AMVA_MAX_ITER = 100_000


@dataclass(frozen=True, slots=True)
class MVAResult:
    """A solved closed network.

    ``residence[i, k]`` is class i's residence time at center k per visit
    cycle (seconds), ``response[i]`` its sum over centers (eq. 4, plus no think
    time), ``throughput[i]`` ``N_i / (response[i] + Z_i)``, ``queue[i, k]``
    the mean number of class-i customers at k (Little's law, eq. 3) and
    ``utilization[k]`` ``sum_i X_i D_ik``.  ``iterations`` is 0 for exact
    solutions.
    """

    residence: Array
    response: Array
    throughput: Array
    queue: Array
    utilization: Array
    iterations: int = 0


def _as_demands(demands: npt.ArrayLike) -> Array:
    d = np.atleast_2d(np.asarray(demands, dtype=np.float64))
    if d.ndim != 2 or not np.all(np.isfinite(d)) or np.any(d < 0):
        raise PredictionError("service demands must be a finite, non-negative classes x centers matrix")
    return d


def _result(d: Array, residence: Array, pops: Array, think: Array, iterations: int) -> MVAResult:
    response = residence.sum(axis=1)
    cycle = response + think
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(cycle > 0, pops / cycle, 0.0)
    queue = x[:, None] * residence
    return MVAResult(residence, response, x, queue, (x[:, None] * d).sum(axis=0), iterations)


def exact_mva(
    demands: Sequence[float] | Array,
    population: int,
    *,
    think_time: float = 0.0,
    delay: Sequence[bool] | None = None,
) -> MVAResult:
    """Exact single-class MVA (Reiser & Lavenberg 1980; Lazowska et al. 1984, Algorithm 6.1).

    Parameters
    ----------
    demands
        Service demand ``D_k`` (seconds) at each center.
    population
        Number of customers ``N`` (>= 0).
    think_time
        Think time ``Z`` at the terminals.
    delay
        ``True`` for delay (infinite-server) centers: residence = demand.

    Returns
    -------
    MVAResult
        With one class (row).
    """
    d = _as_demands(demands)[0]
    if population < 0:
        raise PredictionError(f"population must be >= 0, got {population}")
    is_delay = np.zeros(d.size, dtype=bool) if delay is None else np.asarray(delay, dtype=bool)
    q = np.zeros_like(d)
    r = np.zeros_like(d)
    for n in range(1, population + 1):
        r = np.where(is_delay, d, d * (1.0 + q))
        x = n / (think_time + r.sum())
        q = x * r
    return _result(d[None, :], r[None, :], np.array([float(population)]), np.array([think_time]), 0)


def exact_mva_multiclass(demands: npt.ArrayLike, populations: Sequence[int]) -> MVAResult:
    """Exact multi-class MVA, Vianna et al. 2013 eqs. 1-4 (Reiser & Lavenberg 1980).

    ``R_ik(N) = D_ik (1 + sum_j Q_jk(N - 1_i))`` over every population vector
    below ``N``: cost ``K prod_i (N_i + 1)``, a reference for tiny cases only.
    """
    d = _as_demands(demands)
    pops = tuple(int(p) for p in populations)
    if len(pops) != d.shape[0] or min(pops, default=0) < 0:
        raise PredictionError("populations must give one non-negative count per class")
    n_classes, n_centers = d.shape
    queue_total: dict[tuple[int, ...], Array] = {}
    residence = np.zeros_like(d)
    for vec in itertools.product(*(range(p + 1) for p in pops)):
        vec_sum = sum(vec)
        if vec_sum == 0:
            queue_total[vec] = np.zeros(n_centers)
            continue
        residence = np.zeros_like(d)
        for i in range(n_classes):
            if vec[i] > 0:
                prev = list(vec)
                prev[i] -= 1
                residence[i] = d[i] * (1.0 + queue_total[tuple(prev)])
        resp = residence.sum(axis=1)
        x = np.where(resp > 0, np.asarray(vec, dtype=np.float64) / np.where(resp > 0, resp, 1.0), 0.0)
        queue_total[vec] = (x[:, None] * residence).sum(axis=0)
    full = np.asarray(pops, dtype=np.float64)
    return _result(d, residence, full, np.zeros(n_classes), 0)


def _fixed_point(d: Array, pops: Array, arrival_queue: Callable[[Array], Array]) -> MVAResult:
    residence = d.copy()
    for it in range(1, AMVA_MAX_ITER + 1):
        new = d * (1.0 + arrival_queue(residence))
        if np.allclose(new, residence, rtol=AMVA_TOL, atol=0.0):
            return _result(d, new, pops, np.zeros(d.shape[0]), it)
        residence = new
    raise PredictionError(f"approximate MVA did not converge in {AMVA_MAX_ITER} sweeps")


def schweitzer_mva(demands: npt.ArrayLike, populations: Sequence[float]) -> MVAResult:
    """Bard-Schweitzer approximate multi-class MVA.

    ``A_ik = sum_j Q_jk - Q_ik / N_i``: every class keeps its queue when one
    class-i customer leaves, except class i which loses its proportional share.
    Known error: a few percent on throughput for small populations.
    """
    d = _as_demands(demands)
    pops = np.asarray(populations, dtype=np.float64)

    def arrival(residence: Array) -> Array:
        resp = residence.sum(axis=1, keepdims=True)
        q = pops[:, None] * residence / np.where(resp > 0, resp, 1.0)
        return np.asarray(q.sum(axis=0)[None, :] - q / np.where(pops > 0, pops, 1.0)[:, None])

    return _fixed_point(d, pops, arrival)


def eq5_mva(demands: npt.ArrayLike, populations: Sequence[float]) -> MVAResult:
    """Multi-class aMVA with Vianna et al. 2013, eq. 5 (Zahorjan 1980; Liang & Tripathi 2000).

    The residence of class j with one class-i customer removed is estimated as
    ``R_jk(N - 1_i) = R_jk(N) - D_jk R_ik(N) / R_i(N)`` (never below ``D_jk``),
    and the queues as ``Q_jk(N - 1_i) = (N_j - [i = j]) R_jk(N - 1_i) / R_j(N - 1_i)``
    (eq. 3), summed into eq. 2.  Cost ``O(C^2 K)`` per sweep.
    """
    d = _as_demands(demands)
    pops = np.asarray(populations, dtype=np.float64)
    n_classes = d.shape[0]
    eye = np.eye(n_classes)

    def arrival(residence: Array) -> Array:
        resp = residence.sum(axis=1)
        share = residence / np.where(resp > 0, resp, 1.0)[:, None]  # R_ik / R_i, (i, k)
        # removed[i, j, k] = R_jk(N - 1_i)
        removed = np.maximum(d[None, :, :], residence[None, :, :] - d[None, :, :] * share[:, None, :])
        removed_resp = removed.sum(axis=2)
        count = pops[None, :] - eye  # N_j - [i == j]
        q = count[:, :, None] * removed / np.where(removed_resp > 0, removed_resp, 1.0)[:, :, None]
        return np.asarray(q.sum(axis=1))

    return _fixed_point(d, pops, arrival)


@dataclass(frozen=True, slots=True)
class OverlapSolution:
    """Per-server residence times of :func:`overlap_amva` and how many sweeps it took."""

    residence: Array  # (classes, center types), per server
    response: Array  # (classes,), summed over every server the task uses
    iterations: int


def _presence(q: Array, spare: Array, d_k: Array, r_k: Array, resp: Array, width: float) -> None:
    """``q[i, j] = Q'_jk(i)``: a class-j task's presence at a server of type k with task i removed (eq. 5).

    ``R'_jk = max(D_jk, R_jk - D_jk R_ik / R_i)`` and ``R'_j = R_j - width (R_jk - R'_jk)``.
    Where ``D_jk = 0`` (column j) or ``R_ik = 0`` (row i: task i is never there) nothing is
    removed, and ``q[i, j] = R_jk / R_j`` (while residences are not below demands, as eq. 1
    keeps them): only the block of the other rows and columns is computed, with the same float
    operations as the whole matrix, in place (``spare``: a second buffer as large as ``q``).
    """
    safe = np.where(resp > 0, resp, 1.0)
    presence_i = r_k / safe  # R_ik / R_i
    cols = np.flatnonzero(~((d_k == 0) & (r_k >= 0)))
    kept = math.isfinite(width) and bool(np.all(r_k[cols] >= d_k[cols]))
    rows = np.flatnonzero(presence_i != 0) if kept else np.arange(q.shape[0])
    whole = rows.size == q.shape[0] and cols.size == q.shape[1]
    if not whole:  # (the whole matrix is computed below)
        q[:] = r_k / safe
    if rows.size == 0 or cols.size == 0:
        return
    shape = (rows.size, cols.size)
    removed = q if whole else np.empty(shape)
    rest = spare if whole else spare.reshape(-1)[: removed.size].reshape(shape)
    dj, rj = d_k[cols][None, :], r_k[cols][None, :]
    np.multiply(dj, presence_i[rows][:, None], out=removed)
    np.subtract(rj, removed, out=removed)
    np.maximum(dj, removed, out=removed)  # R'_jk, (i, j)
    np.subtract(rj, removed, out=rest)
    np.multiply(width, rest, out=rest)
    np.subtract(resp[cols][None, :], rest, out=rest)  # R'_j
    np.copyto(rest, 1.0, where=~(rest > 0))
    np.divide(removed, rest, out=removed)
    if not whole:
        q[np.ix_(rows, cols)] = removed


@dataclass(frozen=True, slots=True)
class SparseWeights:
    """One center type's co-presence weights ``weights[i, j]`` by their nonzero entries, row by row.

    A job alone on its cluster weighs only the classes that overlap in its timeline: at 50 GiB
    on 64 nodes (605 classes, 200 map waves) 0.4 % of the C x C entries; eq. 6 then needs
    eq. 5's presences only there (:func:`overlap_amva`).
    """

    rows: npt.NDArray[np.intp]
    cols: npt.NDArray[np.intp]
    values: Array
    size: int

    @classmethod
    def of(cls, dense: Array) -> SparseWeights:
        """The nonzero entries of a ``(C, C)`` matrix, in row-major order."""
        rows, cols = np.nonzero(dense)
        return cls(rows, cols, dense[rows, cols], dense.shape[0])

    def scaled_rows(self, by: Array) -> SparseWeights:
        """``weights[i, j] * by[i]``, entry for entry as the dense product ``weights * by[:, None]``."""
        return SparseWeights(self.rows, self.cols, self.values * by[self.rows], self.size)


def _sparse_arrival(weights: SparseWeights, d_k: Array, r_k: Array, resp: Array, width: float) -> Array:
    """``A_ik = sum_j weights[i, j] Q'_jk(i)`` (eq. 6) over the nonzero weights only.

    ``Q'_jk(i)`` is :func:`_presence`'s, by the same rules and the same float operations on
    each entry (nothing removed, ``R_jk / R_j``, where :func:`_presence` keeps a row or
    column); only the sums' order differs from the dense product's (``np.einsum`` groups
    its terms by SIMD lanes, this sums a row's terms in column order).
    """
    i, j = weights.rows, weights.cols
    safe = np.where(resp > 0, resp, 1.0)
    presence_i = r_k / safe  # R_ik / R_i
    removes_col = ~((d_k == 0) & (r_k >= 0))
    kept = math.isfinite(width) and bool(np.all(r_k[removes_col] >= d_k[removes_col]))
    removes = removes_col[j] & (presence_i[i] != 0) if kept else removes_col[j]
    q = r_k[j] / safe[j]
    at = np.flatnonzero(removes)
    ii, jj = i[at], j[at]
    dj, rj = d_k[jj], r_k[jj]
    removed = np.maximum(dj, rj - dj * presence_i[ii])  # R'_jk
    rest = resp[jj] - width * (rj - removed)  # R'_j
    np.copyto(rest, 1.0, where=~(rest > 0))
    q[at] = removed / rest
    return np.asarray(np.bincount(i, weights=weights.values * q, minlength=weights.size), dtype=np.float64)


def overlap_amva(
    demands: Array,
    widths: Array,
    weights: Array | Sequence[Array | SparseWeights],
    *,
    start: Array | None = None,
    tol: float = AMVA_TOL,
) -> OverlapSolution:
    """Approximate MVA with precedence overlap: Vianna et al. 2013, eqs. 1, 5 and 6.

    Each task class i uses ``widths[k]`` identical servers of center type k
    (e.g. the c CPUs of its node) and puts ``demands[i, k]`` on each (its
    demand split evenly).  The queue it finds at one of them is

    ``A_ik = sum_j weights[k, i, j] * Q'_jk(i)``,    (eq. 6)

    where ``weights[k, i, j]`` counts the class-j tasks that can be at that
    server, each weighted by its overlap with i (``alpha_ij`` for the same job,
    ``(N - 1) beta_ij`` for copies in the other jobs, see the caller), and
    ``Q'_jk(i) = R'_jk / R'_j`` is a class-j task's presence at the server with
    task i removed, from eq. 5: ``R'_jk = max(D_jk, R_jk - D_jk R_ik / R_i)``.
    Residence follows eq. 1: ``R_ik = D_ik (1 + A_ik)``.

    Parameters
    ----------
    demands
        ``(C, K)`` per-server demands (seconds).
    widths
        ``(K,)`` number of servers of each type a task spreads over.
    weights
        ``(K, C, C)`` non-negative co-presence weights, or per center type
        its ``(C, C)`` matrix or its nonzero entries (:class:`SparseWeights`).
    start
        Initial per-server residences (default: the demands).
    tol
        Relative convergence tolerance of the fixed point.
    """
    d = np.asarray(demands, dtype=np.float64)
    w = np.asarray(widths, dtype=np.float64)
    residence = d.copy() if start is None else np.maximum(np.asarray(start, dtype=np.float64), d)
    used = [k for k in range(d.shape[1]) if np.any(d[:, k] > 0)]
    buffers: tuple[Array, Array] | None = None  # _presence's two C x C matrices, where a weight is dense
    for it in range(1, AMVA_MAX_ITER + 1):
        resp = residence @ w
        arrival = np.zeros_like(d)
        for k in used:
            wk = weights[k]
            if isinstance(wk, SparseWeights):
                arrival[:, k] = _sparse_arrival(wk, d[:, k], residence[:, k], resp, float(w[k]))
                continue
            if buffers is None:
                buffers = (np.empty((d.shape[0], d.shape[0])), np.empty((d.shape[0], d.shape[0])))
            q, spare = buffers
            _presence(q, spare, d[:, k], residence[:, k], resp, float(w[k]))
            arrival[:, k] = np.einsum("ij,ij->i", wk, q)
        new = d * (1.0 + arrival)
        if np.allclose(new, residence, rtol=tol, atol=1e-15):
            return OverlapSolution(new, new @ w, it)
        residence = new
    raise PredictionError(f"approximate MVA with overlaps did not converge in {AMVA_MAX_ITER} sweeps")
