"""Vianna et al. 2013's Fig. 5 timeline and Fig. 6 precedence tree, worked by hand."""

from __future__ import annotations

import pytest

from predict.vianna.estimates import harmonic
from predict.vianna.model import Estimate, evaluate_tree
from predict.vianna.tree import (
    Leaf,
    MapGroup,
    ParallelAnd,
    ReduceGroup,
    Serial,
    Timeline,
    build_timeline,
    build_tree,
    render,
)

# ---------------------------------------------------------------- Fig. 5 / Fig. 6
# Fig. 5's timeline (m = 4, r = 1, n = 1, pm = 2, pr = 1, ps = 1), durations chosen to
# give the order the text describes:
#
#   map thread 1 |--M1--|----M3-----|
#   map thread 2 |---M2----|----M4------|
#   reduce          .   |R1|  |--R2--|R3|   |R4|----RM----|
#   time         0      4   6        9.5 11 12 13.5       20
#   sync points         ^   ^               ^
#
# M1 finishes first (R1 starts, M3 takes thread 1); R1 ends before M2, so the
# reduce blocks and M2's end is a synchronization point; R3 follows R2 at once
# (M3 ended at 9); the reduce blocks again until M4 ends (R4, then the merge).
FIG5_MEANS = [4.0, 6.0, 5.0, 6.0, 1.5, 3.5, 1.5, 1.5, 6.5]
FIG5_LABELS = ["M1", "M2", "M3", "M4", "R1", "R2", "R3", "R4", "RM"]


def fig5_timeline() -> Timeline:
    return build_timeline(
        FIG5_MEANS,
        [MapGroup(1, (0, 2)), MapGroup(1, (1, 3))],
        [ReduceGroup(1, {0: 4, 1: 5, 2: 6, 3: 7}, 8, 4)],
        ps=1,
    )


def test_fig5_timeline_synchronization_points() -> None:
    assert fig5_timeline().sync_points == (0.0, 4.0, 6.0, 12.0, 20.0)


def test_fig6d_precedence_tree() -> None:
    # Fig. 6(d): phase 1 = PA(M1, M2^1); phase 2 = PA(PA(M3^1, M2^2), R1) (maps left, reduce right);
    # phase 3 = PA(PA(M3^2, M4), S(R2, R3)); the last phase = S(R4, RM); phases chained by S nodes.
    tree = build_tree(fig5_timeline())
    assert render(tree, FIG5_LABELS) == (
        "S(PA(M1, M2^1), S(PA(PA(M3^1, M2^2), R1), S(PA(PA(M3^2, M4), S(R2, R3)), S(R4, RM))))"
    )


def test_fig6a_forkjoin_estimate() -> None:
    # Section 4.3: the P_A of Fig. 6(a) is H_2 x max(M1, M2^1).
    tree = build_tree(fig5_timeline())
    assert isinstance(tree, Serial)
    phase1 = tree.children[0]
    assert isinstance(phase1, ParallelAnd)
    assert phase1.phase
    assert evaluate_tree(phase1, Estimate.FORKJOIN).mean == pytest.approx(harmonic(2) * 4.0)
    assert evaluate_tree(Leaf(0, 4.0), Estimate.TRIPATHI).mean == 4.0
