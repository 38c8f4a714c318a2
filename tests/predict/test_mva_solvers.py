"""MVA solvers: exact MVA worked by hand, approximate and overlap MVA against exact MVA and the whole matrix."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from predict.vianna.mva import (
    SparseWeights,
    eq5_mva,
    exact_mva,
    exact_mva_multiclass,
    overlap_amva,
    schweitzer_mva,
)

#: Bard-Schweitzer and eq. 5 aMVA: throughput error against exact MVA on small networks
#: (the known error is a few percent; Lazowska et al. 1984, section 7.4.2, quote < 5-10 %).
AMVA_THROUGHPUT_RTOL = 0.10
#: Floating-point tolerance for exact results.
EXACT_RTOL = 1e-12


def test_exact_mva_two_queues_hand_worked() -> None:
    # Two queueing centers, D = (1.0, 0.5) s, N = 3, Z = 0 (Lazowska et al. 1984, Algorithm 6.1):
    # n=1: R = (1, 1/2),        R = 3/2,   X = 2/3,   Q = (2/3, 1/3)
    # n=2: R = (5/3, 2/3),      R = 7/3,   X = 6/7,   Q = (10/7, 4/7)
    # n=3: R = (17/7, 11/14),   R = 45/14, X = 14/15, Q = (34/15, 11/15)
    res = exact_mva([1.0, 0.5], 3)
    x = Fraction(14, 15)
    assert res.throughput[0] == pytest.approx(float(x), rel=EXACT_RTOL)
    assert res.response[0] == pytest.approx(45 / 14, rel=EXACT_RTOL)
    assert res.queue[0] == pytest.approx([34 / 15, 11 / 15], rel=EXACT_RTOL)
    assert res.utilization == pytest.approx([14 / 15, 7 / 15], rel=EXACT_RTOL)
    assert res.queue.sum() == pytest.approx(3.0)


def test_exact_mva_delay_center_and_think_time() -> None:
    # Queue D1 = 1, delay D2 = 2, N = 2, Z = 1:
    # n=1: R = (1, 2), X = 1/(1+3) = 1/4, Q1 = 1/4
    # n=2: R1 = 1 (1 + 1/4) = 5/4, R = 5/4 + 2 = 13/4, X = 2 / (1 + 13/4) = 8/17
    res = exact_mva([1.0, 2.0], 2, think_time=1.0, delay=[False, True])
    assert res.response[0] == pytest.approx(13 / 4, rel=EXACT_RTOL)
    assert res.throughput[0] == pytest.approx(8 / 17, rel=EXACT_RTOL)
    assert res.residence[0, 1] == pytest.approx(2.0)


def test_exact_multiclass_matches_single_class_when_classes_identical() -> None:
    # Two identical classes of 1 and 2 customers = one class of 3 customers.
    single = exact_mva([1.0, 0.5], 3)
    multi = exact_mva_multiclass([[1.0, 0.5], [1.0, 0.5]], [1, 2])
    assert multi.throughput.sum() == pytest.approx(single.throughput[0], rel=EXACT_RTOL)
    assert multi.queue.sum(axis=0) == pytest.approx(single.queue[0], rel=EXACT_RTOL)


@pytest.mark.parametrize("seed", range(12))
def test_approximate_mva_within_known_error_of_exact(seed: int) -> None:
    rng = np.random.default_rng(seed)
    demands = rng.uniform(0.05, 2.0, size=(2, 3))
    for pops in itertools.product(range(1, 4), range(1, 4)):
        exact = exact_mva_multiclass(demands, pops)
        for approx in (schweitzer_mva(demands, pops), eq5_mva(demands, pops)):
            assert approx.throughput == pytest.approx(exact.throughput, rel=AMVA_THROUGHPUT_RTOL)
            assert np.all(approx.utilization < 1.0)


def test_amva_exact_for_single_customer() -> None:
    # One customer meets no queue: every approximation must give R = sum of demands.
    for solver in (schweitzer_mva, eq5_mva):
        res = solver([[0.3, 0.7, 1.0]], [1])
        assert res.response[0] == pytest.approx(2.0)


def test_overlap_amva_with_full_overlap_is_eq5_on_one_center() -> None:
    # Three single-task classes that always overlap, one center: eq. 6 with alpha = 1 is eq. 2.
    d = np.array([[0.4], [1.0], [0.7]])
    weights = (1.0 - np.eye(3))[None, :, :]
    sol = overlap_amva(d, np.array([1.0]), weights)
    ref = eq5_mva(d, [1, 1, 1])
    assert sol.response == pytest.approx(ref.response, rel=1e-8)


def test_overlap_amva_without_overlap_is_contention_free() -> None:
    d = np.array([[0.4, 0.1], [1.0, 0.3]])
    sol = overlap_amva(d, np.array([2.0, 1.0]), np.zeros((2, 2, 2)))
    assert sol.response == pytest.approx(d @ np.array([2.0, 1.0]))


def _overlap_amva_whole(
    demands: np.ndarray, widths: np.ndarray, weights: np.ndarray, start: np.ndarray
) -> np.ndarray:
    """Eqs. 1, 5 and 6 over the whole C x C matrix, as overlap_amva first computed them (the reference)."""
    d, w = demands, widths
    residence = np.maximum(start, d)
    for _ in range(500):
        resp = residence @ w
        safe_resp = np.where(resp > 0, resp, 1.0)
        arrival = np.empty_like(d)
        for k in range(d.shape[1]):
            if not np.any(d[:, k] > 0):
                arrival[:, k] = 0.0
                continue
            presence_i = residence[:, k] / safe_resp
            r_jk = residence[:, k]
            removed = np.maximum(d[None, :, k], r_jk[None, :] - d[None, :, k] * presence_i[:, None])
            removed_resp = resp[None, :] - w[k] * (r_jk[None, :] - removed)
            q = removed / np.where(removed_resp > 0, removed_resp, 1.0)
            arrival[:, k] = np.einsum("ij,ij->i", weights[k], q)
        new = d * (1.0 + arrival)
        if np.allclose(new, residence, rtol=1e-10, atol=1e-15):
            return new
        residence = new
    raise AssertionError("the reference did not converge")


def _task_demands(rng: np.random.Generator, n: int, *, maps: int) -> np.ndarray:
    """Demands of ``n`` task classes on CPU, disk, fiber, network: ``maps`` maps (no network), then
    shuffle-sorts (no CPU); no fiber, and five classes that never use a disk."""
    d = rng.uniform(0.1, 2.0, (n, 4))
    d[:maps, 3] = 0.0  # maps: no network
    d[maps:, 0] = 0.0  # shuffle-sorts: no CPU
    d[:, 2] = 0.0  # no fiber
    d[:5, 1] = 0.0  # tasks that never use a disk
    return d


@pytest.mark.parametrize("negative", [False, True])
def test_overlap_amva_block_is_the_whole_matrix(negative: bool) -> None:
    """Only the rows and columns where a task is removed are computed: the same residences, bit for bit.

    Zero demands on a device (a shuffle-sort's CPU, a map's network) make rows and columns of
    eq. 5 that remove nothing; a negative weight (a residence below its demand) is not a case
    for the shortcut, and still gives the whole matrix's residences.
    """
    rng = np.random.default_rng(7)
    n = 40
    d = _task_demands(rng, n, maps=15)
    weights = rng.uniform(0.0, 0.05, (4, n, n))
    if negative:
        weights[1, 7, :] = -0.3  # class 7's disk residence falls below its demand
    widths = np.array([4.0, 2.0, 1.0, 1.0])
    start = d * rng.uniform(1.0, 1.5, d.shape)
    got = overlap_amva(d, widths, weights, start=start, tol=1e-10)
    expected = _overlap_amva_whole(d, widths, weights, start)
    assert got.residence.tolist() == expected.tolist()


@pytest.mark.parametrize("negative", [False, True])
def test_overlap_amva_by_nonzero_weights_is_the_whole_matrix(negative: bool) -> None:
    """Weights given by their nonzero entries (a job alone: its own overlaps, few) give the whole
    matrix's residences: the same presences entry for entry, only a row's sum in another order."""
    rng = np.random.default_rng(11)
    n = 60
    d = _task_demands(rng, n, maps=20)
    weights = rng.uniform(0.0, 0.5, (4, n, n)) * (rng.random((4, n, n)) < 0.05)
    weights[:, 3, :] = 0.0  # a class beside nothing
    if negative:
        weights[1, 7, :4] = -0.3  # class 7's disk residence falls below its demand
    widths = np.array([4.0, 2.0, 1.0, 1.0])
    start = d * rng.uniform(1.0, 1.5, d.shape)
    sparse = [SparseWeights.of(weights[k]) for k in range(4)]
    assert sum(s.values.size for s in sparse) < 0.1 * weights.size
    got = overlap_amva(d, widths, sparse, start=start, tol=1e-10)
    expected = _overlap_amva_whole(d, widths, weights, start)
    np.testing.assert_allclose(got.residence, expected, rtol=1e-12, atol=0.0)
    mixed = overlap_amva(d, widths, [weights[0], sparse[1], weights[2], sparse[3]], start=start, tol=1e-10)
    np.testing.assert_allclose(mixed.residence, expected, rtol=1e-12, atol=0.0)
