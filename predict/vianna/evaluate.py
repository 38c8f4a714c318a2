"""The response time of a precedence tree (Vianna et al. 2013, section 4.3).

Leaves are exponential tasks (or, given, as spread as their class's measured coefficient of
variation), S nodes sum, P_A nodes take the maximum of their children by one of two estimates
(:class:`Estimate`): fork/join's ``H_k`` once per parallel phase, or Tripathi's maximum of fitted
distributions at every node.  :mod:`predict.vianna.model` says
which readings of the paper these are and why.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence

from predict.vianna.estimates import Moments, forkjoin_max, tripathi_max
from predict.vianna.tree import Leaf, Node, Serial, serial_parts

__all__ = ["SYMMETRY_RTOL", "Estimate", "branch_count", "evaluate_tree"]

#: Branches whose means agree within this (relative) count as one fork/join branch.
SYMMETRY_RTOL = 0.01


class Estimate(enum.StrEnum):
    """How a P_A node's response time is estimated (section 4.3)."""

    FORKJOIN = "forkjoin"
    TRIPATHI = "tripathi"


def _pieces(node: Node) -> tuple[bool, ...]:
    """Whether each leaf under ``node`` (in order) is a piece of a task cut by a synchronization point."""
    flags: list[bool] = []
    stack: list[Node] = [node]
    while stack:  # depth first, left to right, without a generator per level
        n = stack.pop()
        if isinstance(n, Leaf):
            flags.append(n.parts > 1)
        elif isinstance(n, Serial):
            stack.extend(reversed(n.children))
        else:
            stack.extend(c for c, _ in reversed(n.children))
    return tuple(flags)


def branch_count(children: list[tuple[Node, Moments]]) -> list[Moments]:
    """The fork/join branches of a phase: children that did identical work merged into one.

    Identical work: the same cut pieces (whole tasks or pieces of tasks cut by
    a synchronization point, in the same places) and means within
    :data:`SYMMETRY_RTOL`.  A thread whose task ends at the synchronization
    point and one whose task is cut by it are two branches (Fig. 6(a):
    ``P_A(M1, M2^1)`` has k = 2).  Returns one (the longest) per branch.
    """
    # A group keeps its first member's node; pieces are listed only for means that agree (they
    # walk the whole subtree, and a phase's map and reduce branches mostly differ in mean).
    pieces: dict[int, tuple[bool, ...]] = {}

    def pieces_of(node: Node) -> tuple[bool, ...]:
        if id(node) not in pieces:
            pieces[id(node)] = _pieces(node)
        return pieces[id(node)]

    groups: list[tuple[Node, Moments]] = []
    for node, moments in sorted(children, key=lambda nm: nm[1].mean):
        for g, (first, gm) in enumerate(groups):
            if moments.mean - gm.mean <= SYMMETRY_RTOL * max(moments.mean, 1e-300) and pieces_of(first) == pieces_of(node):
                groups[g] = (first, moments)
                break
        else:
            groups.append((node, moments))
    return [m for _, m in groups]


def evaluate_tree(node: Node, estimate: Estimate, cv: Sequence[float] | None = None) -> Moments:
    """Mean and variance of a precedence tree's response time (section 4.3).

    Leaves are exponential with their duration as mean (the paper's assumption), or, with ``cv``
    (one coefficient of variation per task class, by :attr:`Leaf.cls`), of variance
    ``(cv * duration)^2``: Liang & Tripathi fit each branch by its own two moments, so a profile's
    measured spread can stand for the exponential's (only Tripathi's estimate reads variances;
    fork/join's means are the same either way).  S sums.  P_A nodes:
    Tripathi's maximum at every node; fork/join once per parallel phase, at
    the phase's root P_A: ``H_k`` times its branches' largest mean, k the
    number of *different* branches (threads doing identical work are one
    branch), while P_A nodes inside the phase give their largest child mean
    (see the module docstring).
    """

    # Tripathi's integral depends on the children's moments only, and a tree of many waves
    # repeats the same P_A over and over (2,286 nodes, 79 distinct, at 50 GiB on 64 nodes).
    maxima: dict[tuple[tuple[Moments, int], ...], Moments] = {}

    def walk(n: Node, in_phase: bool) -> Moments:
        if isinstance(n, Leaf):
            if cv is None:
                return Moments.exponential(n.duration)
            return Moments(n.duration, (cv[n.cls] * n.duration) ** 2)
        if isinstance(n, Serial):
            # serial() of the parts, leaves (variance (cv mean)^2, exponential: mean^2) read in place: most
            # of a tree is chains of leaves, and a Moments per leaf was half the walk (fsum is exact in any order)
            means: list[float] = []
            variances: list[float] = []
            for c in serial_parts(n):
                if isinstance(c, Leaf):
                    means.append(c.duration)
                    spread = c.duration if cv is None else cv[c.cls] * c.duration
                    variances.append(spread * spread)
                else:
                    m = walk(c, in_phase)
                    means.append(m.mean)
                    variances.append(m.var)
            return Moments(math.fsum(means), math.fsum(variances))
        kids = [(walk(c, in_phase or n.phase), k) for c, k in n.children]
        if estimate is Estimate.TRIPATHI:
            key = tuple(kids)
            found = maxima.get(key)
            if found is None:
                found = maxima[key] = tripathi_max(kids)
            return found
        if n.phase or not in_phase:
            branches = branch_count([(c, m) for (c, _), (m, _) in zip(n.children, kids, strict=True)])
            return forkjoin_max([(m, 1) for m in branches])
        return max(kids, key=lambda mk: mk[0].mean)[0]

    return walk(node, False)
