"""The precedence tree of a job's timeline (Vianna et al. 2013, section 4.2.1).

:func:`build_tree` turns the timeline (:func:`predict.vianna.timeline.build_timeline`,
re-exported here) into the precedence tree of section
4.2.1: one P_A sub-tree per parallel phase, its left branch the map threads
and its right branch the reduce threads, tasks running across a
synchronization point split into sub-tasks (``M2^1``, ``M2^2``), serial work
of one thread in one phase under an S node, and the phases chained by S nodes
``S(phase1, S(phase2, ... S(phase_k-1, phase_k)))``.

Both work on *groups*: ``count`` identical threads (or reduces) that run in
lock step because their tasks belong to the same classes.  With every count
1 this is the paper's per-task formulation; with symmetric tasks aggregated
into classes the same walk costs O(classes) instead of O(tasks).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from phaseline.errors import PredictionError
from predict.vianna.timeline import (
    SAME_TIME_RTOL,
    Instance,
    MapGroup,
    ReduceGroup,
    Timeline,
    build_timeline,
)

__all__ = [
    "Instance",
    "Leaf",
    "MapGroup",
    "Node",
    "ParallelAnd",
    "ReduceGroup",
    "Serial",
    "Timeline",
    "build_timeline",
    "build_tree",
    "render",
]


# ---------------------------------------------------------------- the tree
@dataclass(frozen=True, slots=True)
class Leaf:
    """A (sub-)task: ``duration`` seconds of class ``cls``; ``part`` of ``parts`` pieces."""

    cls: int
    duration: float
    part: int = 1
    parts: int = 1
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.cls, self.duration, self.part, self.parts)))  # once, as Serial's

    def __hash__(self) -> int:
        return self._hash


@dataclass(frozen=True, slots=True)
class Serial:
    """S operator: children run one after the other."""

    children: tuple[Node, ...]
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Hashed once: merging identical branches (_parallel) hashes the same chains of a
        # many-wave job over and over, each time down to every leaf.
        object.__setattr__(self, "_hash", hash(self.children))

    def __hash__(self) -> int:
        return self._hash


def serial_parts(node: Serial) -> list[Node]:
    """The children of a chain of S nodes, in order: ``S(a, S(b, c))`` gives ``[a, b, c]``.

    :func:`build_tree` chains a job's phases one S node per phase; a job of
    many waves (a thousand maps on two slots) nests them hundreds deep, so
    whoever walks the tree takes a chain at once instead of recursing down it.
    """
    parts: list[Node] = []
    while True:
        *head, last = node.children
        parts.extend(head)
        if not isinstance(last, Serial):
            parts.append(last)
            return parts
        node = last


@dataclass(frozen=True, slots=True)
class ParallelAnd:
    """P_A operator: children (each repeated ``count`` times) run in parallel; all must finish.

    ``phase`` marks the P_A node that is a whole parallel phase (section 4.3: a
    parallel phase is one fork/join block); every phase has one, of a single
    branch if need be.
    """

    children: tuple[tuple[Node, int], ...]
    phase: bool = False
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.children, self.phase)))  # once, as Serial's

    def __hash__(self) -> int:
        return self._hash


Node = Leaf | Serial | ParallelAnd


def _chain(leaves: list[Node]) -> Node | None:
    if not leaves:
        return None
    return leaves[0] if len(leaves) == 1 else Serial(tuple(leaves))


def _parallel(children: list[tuple[Node, int]], phase: bool = False) -> Node | None:
    """P_A over ``children`` (identical children merged into one, repeated); one child alone is itself.

    A ``phase`` always comes back as a P_A marked ``phase``, even of one
    branch (a Serial: the map threads' common maps then the rest, a reduce's
    shuffle-sorts then its merge): :func:`~predict.vianna.model.evaluate_tree`
    applies ``H_k`` at the phase's root only, and gives a P_A inside a phase
    its largest child mean.  With the mark lost, every P_A inside such a
    phase was taken for a root and got its own ``H_k``: 5 maps and 4 reduces
    came to 40.0 s on 3 nodes against 27.9 s on 2.
    """
    merged: dict[Node, int] = {}
    for node, count in children:
        merged[node] = merged.get(node, 0) + count
    items = list(merged.items())
    if not items:
        return None
    if len(items) == 1 and items[0][1] == 1:
        only = items[0][0]
        if not phase:
            return only
        if isinstance(only, ParallelAnd):
            return ParallelAnd(only.children, phase=True)
    return ParallelAnd(tuple(items), phase=phase)


def _thread_chains(chains: list[tuple[list[Node], int]]) -> Node | None:
    """P_A over threads' chains in one phase, ``(nodes, threads)`` per thread group.

    Where every chain starts with the same tasks (thread groups that differ only in
    how many tasks follow: the ``rem`` threads or slots of a partial last wave run
    one map, or one reduce wave, more), that common part is one branch run by all
    of them and the rest follows it: ``S(PA(common), PA(rests))``.  As two chains,
    63 and 64 maps long, they were two fork/join branches, and H_2 = 1.5 times the
    longer made 4 map slots slower than 3 for 255 maps; 100 reduces on 22 slots
    (4 waves and a partial fifth) came to 783 s against 599 s on 20 slots.
    """
    chains = [(leaves, n) for leaves, n in chains if leaves]
    shortest = min((len(leaves) for leaves, _ in chains), default=0)
    common = 0
    while len(chains) > 1 and common < shortest and all(
        leaves[common] == chains[0][0][common] for leaves, _ in chains
    ):
        common += 1
    if common == 0:
        return _parallel([(node, n) for node, n in ((_chain(leaves), n) for leaves, n in chains) if node is not None])
    prefix = _chain(chains[0][0][:common])
    head = _parallel([(prefix, sum(n for _, n in chains))]) if prefix is not None else None
    rest = _thread_chains([(leaves[common:], n) for leaves, n in chains])
    if head is None or rest is None:
        return head or rest
    return Serial((head, rest))


def _slot_chains(groups: Sequence[ReduceGroup], nodes: Sequence[Node | None]) -> list[tuple[list[Node], int]]:
    """Reduce waves on the same slots run one after the other: waves 1, 2, ... per slot, as a chain.

    A wave of ``count`` reduces follows the first ``count`` slots of the wave
    before it, so ``c_k - c_(k+1)`` slots run exactly the first k waves.
    """
    out: list[tuple[list[Node], int]] = []
    for root, grp in enumerate(groups):
        if grp.after is not None:
            continue
        chain = [root]
        while True:
            nxt = [g for g, other in enumerate(groups) if other.after == chain[-1]]
            if not nxt:
                break
            chain.append(nxt[0])
        for k, g in enumerate(chain):
            slots = groups[g].count - (groups[chain[k + 1]].count if k + 1 < len(chain) else 0)
            waves = [n for n in (nodes[h] for h in chain[: k + 1]) if n is not None]
            if waves and slots > 0:
                out.append((waves, slots))
    return out


def _cut(timeline: Timeline) -> tuple[list[list[tuple[int, float]]], list[int]]:
    """Each instance's pieces in the phases it spans: ``(instance, seconds)`` per phase, and its piece count.

    Only phases p with ``bounds[p + 1] > start`` and ``bounds[p] < end`` (or the one holding a
    zero-length instance) can hold a piece; the sync points are sorted, so a search finds them
    (testing every phase had made this O(instances x phases): 20 s of 44 at 240 reduces).  Every
    (instance, phase) pair is then tested at once, in numpy, with the same float operations.
    """
    bounds = np.asarray(timeline.sync_points, dtype=np.float64)
    n_phases = bounds.size - 1
    start = np.array(timeline.instances.start, dtype=np.float64)
    end = np.array(timeline.instances.end, dtype=np.float64)
    first = np.maximum(np.searchsorted(bounds, start, side="right") - 1, 0)  # the first with bounds[p + 1] > start
    last = np.minimum(np.maximum(np.searchsorted(bounds, end, side="left"), first + 1), n_phases)
    spans = np.maximum(last - first, 0)
    idx = np.repeat(np.arange(start.size), spans)
    phase = np.repeat(first - np.cumsum(spans) + spans, spans) + np.arange(idx.size)  # first, first + 1, ...
    lo, hi = np.maximum(start[idx], bounds[phase]), np.minimum(end[idx], bounds[phase + 1])
    dur = hi - lo
    keep = (dur > SAME_TIME_RTOL * np.maximum(1.0, np.abs(hi))) | (
        (end[idx] == start[idx]) & (bounds[phase] <= start[idx]) & (start[idx] < bounds[phase + 1])
    )
    idx, phase, dur = idx[keep], phase[keep], dur[keep]
    order = np.lexsort((idx, start[idx], phase))  # by phase, each phase's pieces by start (then instance)
    idx, dur = idx[order].tolist(), dur[order].tolist()
    ends = np.searchsorted(phase[order], np.arange(n_phases), side="right").tolist()
    pieces, lo_at = [], 0
    for hi_at in ends:
        pieces.append(list(zip(idx[lo_at:hi_at], dur[lo_at:hi_at], strict=True)))
        lo_at = hi_at
    return pieces, np.bincount(np.asarray(idx, dtype=np.intp), minlength=start.size).tolist()


def _reduce_group_node(items: list[tuple[tuple[int, ...], Leaf]]) -> Node | None:
    """One reduce group's work in a phase (each piece's lanes, its leaf): its lanes' chains of shuffle-sorts
    in parallel, then its merge."""
    lanes: dict[int, list[Node]] = defaultdict(list)
    merge: list[Node] = []
    for on, leaf in items:
        if on == (-1,):
            merge.append(leaf)
        else:
            for lane in on:
                lanes[lane].append(leaf)
    lane_node = _parallel([(n, 1) for n in (_chain(v) for _, v in sorted(lanes.items())) if n is not None])
    return _chain(([lane_node] if lane_node is not None else []) + merge)


def build_tree(timeline: Timeline) -> Node:
    """The precedence tree of a timeline (Vianna et al. 2013, section 4.2.1, Fig. 6).

    Equal leaves (the same class, piece and seconds, as lock-step waves give) are one object.
    """
    bounds = timeline.sync_points
    if len(bounds) < 2:
        return Leaf(-1, 0.0)
    cls, owner, lanes = timeline.instances.cls, timeline.instances.owner, timeline.instances.lanes
    pieces, parts = _cut(timeline)
    seen = [0] * len(cls)
    leaves: dict[tuple[int, float, int, int], Leaf] = {}
    phases: list[Node] = []
    for cut in pieces:
        by_owner: dict[tuple[str, int], list[tuple[tuple[int, ...], Leaf]]] = defaultdict(list)
        for idx, dur in cut:
            seen[idx] += 1
            key = (cls[idx], dur, seen[idx], parts[idx])
            leaf = leaves.get(key)
            if leaf is None:
                leaf = leaves[key] = Leaf(*key)
            by_owner[owner[idx]].append((lanes[idx], leaf))
        map_node = _thread_chains(
            [([leaf for _, leaf in by_owner.get(("map", g), [])], grp.count) for g, grp in enumerate(timeline.map_groups)]
        )
        per_group = [_reduce_group_node(by_owner.get(("reduce", r), [])) for r in range(len(timeline.reduce_groups))]
        reduce_children = _slot_chains(timeline.reduce_groups, per_group)
        branches = [b for b in (map_node, _thread_chains(reduce_children)) if b is not None]
        phase = _parallel([(b, 1) for b in branches], phase=True)
        if phase is not None:
            phases.append(phase)
    if not phases:
        raise PredictionError(
            "the estimated timeline has no phase of positive, finite length (every task takes 0 s, or "
            "the demands overflow): no precedence tree to solve"
        )
    tree = phases[-1]
    for node in reversed(phases[:-1]):
        tree = Serial((node, tree))
    return tree


def render(node: Node, labels: Sequence[str]) -> str:
    """Text form of a tree: ``S(PA(M1, M2^1), ...)``; a repeated child is written ``3*X``.

    A P_A of one child (a parallel phase of one branch) is written as that child, as Fig. 6(d) draws it.
    """
    if isinstance(node, Leaf):
        name = labels[node.cls] if node.cls >= 0 else "empty"
        return name if node.parts == 1 else f"{name}^{node.part}"
    if isinstance(node, Serial):
        return "S(" + ", ".join(render(c, labels) for c in node.children) + ")"
    if len(node.children) == 1 and node.children[0][1] == 1:  # a phase of one branch (Fig. 6(d)'s S(R4, RM))
        return render(node.children[0][0], labels)
    inner = ", ".join((f"{n}*" if n > 1 else "") + render(c, labels) for c, n in node.children)
    return f"PA({inner})"
