"""The job's execution timeline and its precedence tree (Vianna et al. 2013, section 4.2).

:func:`build_timeline` walks the average execution of one job by the token
rules of section 4.2.2: every finishing map puts a token in the logical queue
of every reduce thread; a reduce thread runs up to ``ps`` shuffle-sorts at a
time, one per token, and its merge after its last shuffle-sort; map threads
take the next map as soon as they finish one.  The next event is the running
(sub-)task whose thread has the smallest cumulative average response time
(rule 1-3).  A map finishing while a reduce thread is blocked (no shuffle-sort
running, no token queued, shuffle-sorts still to do) is a synchronization
point and ends a parallel phase.

:func:`build_tree` turns the timeline into the precedence tree of section
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

import bisect
import heapq
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from phaseline.errors import PredictionError

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

#: Two events closer than this (relative to the clock) happen at the same time.
SAME_TIME_RTOL = 1e-9


@dataclass(frozen=True, slots=True)
class MapGroup:
    """``count`` map threads that run the map classes ``maps`` one after the other."""

    count: int
    maps: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class ReduceGroup:
    """``count`` reduce threads (symmetric reduces) of one reduce wave.

    ``shuffle_of[c]`` is the shuffle-sort class a token from map class ``c``
    becomes; ``merge`` the merge class; ``shuffles`` the shuffle-sorts each
    reduce runs (one per map); ``after`` the index of the reduce group whose
    merges must finish first (the previous wave on the same reduce slots).
    """

    count: int
    shuffle_of: Mapping[int, int]
    merge: int
    shuffles: int
    after: int | None = None


@dataclass(frozen=True, slots=True)
class Instance:
    """``count`` tasks of class ``cls`` running in lock step over ``[start, end]``.

    ``owner`` is ``("map", group)`` or ``("reduce", group)``; ``lanes`` the
    shuffle slots of a reduce thread it occupies (``(-1,)`` for a merge).
    """

    cls: int
    count: int
    start: float
    end: float
    owner: tuple[str, int]
    lanes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Timeline:
    """The average execution of one job: task instances and the synchronization points."""

    instances: tuple[Instance, ...]
    sync_points: tuple[float, ...]  # phase boundaries, from 0.0 to the job's end
    map_groups: tuple[MapGroup, ...]
    reduce_groups: tuple[ReduceGroup, ...]

    @property
    def makespan(self) -> float:
        return self.sync_points[-1]


@dataclass
class _ReduceState:
    group: ReduceGroup
    ps: int
    started: bool = False
    done_shuffles: int = 0
    queue: list[list[int]] = field(default_factory=list)  # [shuffle class, tokens per reduce]
    free_lanes: list[int] = field(default_factory=list)
    running: int = 0
    merging: bool = False
    finished: bool = False

    def blocked(self) -> bool:
        return (
            self.started
            and not self.merging
            and not self.finished
            and self.running == 0
            and not self.queue
            and self.done_shuffles < self.group.shuffles
        )


def build_timeline(
    means: Sequence[float],
    map_groups: Sequence[MapGroup],
    reduce_groups: Sequence[ReduceGroup],
    ps: int,
    *,
    map_stage_sync: bool = False,
    start_after_maps: int = 0,
) -> Timeline:
    """Walk one job's average execution by the token rules (Vianna et al. 2013, section 4.2.2).

    Parameters
    ----------
    means
        Average response time of one task of each class (seconds).
    map_groups, reduce_groups
        The threads; see :class:`MapGroup` and :class:`ReduceGroup`.
    ps
        Shuffle-sorts a reduce thread runs in parallel.  A reduce has one
        shuffle-sort per map, so lanes past that many never run one: a thread
        gets ``min(ps, shuffles)`` lanes (``ps`` = 10^20 had asked for a list
        that long).
    map_stage_sync
        Also end a parallel phase when the last map finishes while reduce
        threads still run (the set of thread types changes there).
    start_after_maps
        Map tasks that must have finished before the first wave of reduce
        threads starts (Hadoop's reduce slow-start,
        ``mapreduce.job.reduce.slowstart.completedmaps`` times the maps; the
        paper's rule, a reduce's first shuffle-sort at the first map's end, is
        0 or 1).  Tokens of maps that finish before then wait in the queues;
        the moment the reduces start ends a parallel phase, as the first
        map's end does in the paper.
    """
    if ps < 1:
        raise PredictionError(f"ps must be >= 1, got {ps}")
    total_maps = sum(g.count * len(g.maps) for g in map_groups)
    if reduce_groups and not 0 <= start_after_maps <= total_maps:
        raise PredictionError(
            f"start_after_maps must be between 0 and the job's {total_maps} maps, got {start_after_maps}"
        )
    instances: list[Instance] = []
    syncs: list[float] = [0.0]
    heap: list[tuple[float, int, str, int, int]] = []  # (end, seq, kind, group, instance index)
    seq = 0
    map_next = [0] * len(map_groups)
    states = [_ReduceState(g, ps, free_lanes=list(range(min(ps, g.shuffles)))) for g in reduce_groups]

    def push(inst: Instance, kind: str, group: int) -> None:
        nonlocal seq
        instances.append(inst)
        heapq.heappush(heap, (inst.end, seq, kind, group, len(instances) - 1))
        seq += 1

    def start_map(g: int, now: float) -> None:
        grp = map_groups[g]
        if map_next[g] < len(grp.maps):
            cls = grp.maps[map_next[g]]
            map_next[g] += 1
            push(Instance(cls, grp.count, now, now + means[cls], ("map", g), (0,)), "map", g)

    def pump(r: int, now: float) -> None:
        st = states[r]
        if not st.started or st.merging or st.finished:
            return
        while st.queue and st.free_lanes:
            cls, tokens = st.queue[0]
            take = min(tokens, len(st.free_lanes))
            lanes = tuple(sorted(st.free_lanes)[:take])
            for lane in lanes:
                st.free_lanes.remove(lane)
            st.queue[0][1] -= take
            if st.queue[0][1] == 0:
                st.queue.pop(0)
            st.running += take
            push(
                Instance(cls, st.group.count * take, now, now + means[cls], ("reduce", r), lanes),
                "shuffle",
                r,
            )
        if st.running == 0 and st.done_shuffles == st.group.shuffles:
            st.merging = True
            merge = st.group.merge
            push(Instance(merge, st.group.count, now, now + means[merge], ("reduce", r), (-1,)), "merge", r)

    for g in range(len(map_groups)):
        start_map(g, 0.0)
    maps_finished = 0
    first_wave = [r for r, st in enumerate(states) if st.group.after is None]
    if start_after_maps <= 0:
        for r in first_wave:
            states[r].started = True
            pump(r, 0.0)

    while heap:
        now = heap[0][0]
        batch = []
        tol = SAME_TIME_RTOL * max(1.0, abs(now))
        while heap and heap[0][0] <= now + tol:
            batch.append(heapq.heappop(heap))
        finished_maps: list[Instance] = []
        for _, _, kind, group, idx in batch:
            inst = instances[idx]
            if kind == "map":
                finished_maps.append(inst)
                start_map(group, now)
            elif kind == "shuffle":
                st = states[group]
                width = len(inst.lanes)
                st.running -= width
                st.done_shuffles += width
                st.free_lanes.extend(inst.lanes)
            else:
                st = states[group]
                st.finished = True
                for other in states:
                    if other.group.after == group and not other.started:
                        other.started = True
        blocked = [st.blocked() for st in states]
        tokens_to: set[int] = set()
        maps_finished += sum(inst.count for inst in finished_maps)
        if first_wave and not states[first_wave[0]].started and maps_finished >= start_after_maps:
            for r in first_wave:  # slow-start reached: the reduces start, with every token queued so far
                states[r].started = True
                blocked[r] = True
        for inst in finished_maps:
            for r, st in enumerate(states):
                if st.finished:
                    continue
                shuffle = st.group.shuffle_of[inst.cls]
                per_reduce = inst.count  # every reduce gets one token per finished map
                if st.queue and st.queue[-1][0] == shuffle:
                    st.queue[-1][1] += per_reduce
                else:
                    st.queue.append([shuffle, per_reduce])
                tokens_to.add(r)
        maps_done = finished_maps and all(map_next[g] == len(grp.maps) for g, grp in enumerate(map_groups))
        maps_done = maps_done and not any(kind == "map" for _, _, kind, _, _ in heap)
        reduces_left = any(not st.finished for st in states)
        if any(blocked[r] for r in tokens_to) or (map_stage_sync and maps_done and reduces_left):
            syncs.append(now)
        for r in range(len(states)):
            pump(r, now)
    end = max((i.end for i in instances), default=0.0)
    if end > syncs[-1]:
        syncs.append(end)
    undone = [r for r, st in enumerate(states) if not st.finished]
    if undone:
        raise PredictionError(
            f"reduce groups {undone} never finished: tokens or shuffle counts are inconsistent"
        )
    return Timeline(tuple(instances), tuple(syncs), tuple(map_groups), tuple(reduce_groups))


# ---------------------------------------------------------------- the tree
@dataclass(frozen=True, slots=True)
class Leaf:
    """A (sub-)task: ``duration`` seconds of class ``cls``; ``part`` of ``parts`` pieces."""

    cls: int
    duration: float
    part: int = 1
    parts: int = 1


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


def build_tree(timeline: Timeline) -> Node:
    """The precedence tree of a timeline (Vianna et al. 2013, section 4.2.1, Fig. 6)."""
    bounds = timeline.sync_points
    if len(bounds) < 2:
        return Leaf(-1, 0.0)
    parts: dict[int, int] = defaultdict(int)  # instance -> number of phases it spans
    n_phases = len(bounds) - 1
    pieces: list[list[tuple[int, float]]] = [[] for _ in range(n_phases)]
    for idx, inst in enumerate(timeline.instances):
        # Only phases p with bounds[p + 1] > start and bounds[p] < end (or the one holding a
        # zero-length instance) can hold a piece; the sync points are sorted, so bisect finds them
        # (testing every phase made this loop O(instances x phases): 20 s of 44 at 240 reduces).
        first = max(bisect.bisect_right(bounds, inst.start) - 1, 0)  # the first with bounds[p + 1] > start
        last = min(max(bisect.bisect_left(bounds, inst.end), first + 1), n_phases)  # past the last bounds[p] < end
        for p in range(first, last):
            lo, hi = max(inst.start, bounds[p]), min(inst.end, bounds[p + 1])
            tol = SAME_TIME_RTOL * max(1.0, abs(hi))
            if hi - lo > tol or (inst.end == inst.start and bounds[p] <= inst.start < bounds[p + 1]):
                pieces[p].append((idx, hi - lo))
                parts[idx] += 1
    seen: dict[int, int] = defaultdict(int)
    phases: list[Node] = []
    for p in range(len(bounds) - 1):
        by_owner: dict[tuple[str, int], list[tuple[Instance, Leaf]]] = defaultdict(list)
        for idx, dur in sorted(pieces[p], key=lambda x: timeline.instances[x[0]].start):
            inst = timeline.instances[idx]
            seen[idx] += 1
            by_owner[inst.owner].append((inst, Leaf(inst.cls, dur, seen[idx], parts[idx])))
        map_node = _thread_chains(
            [([leaf for _, leaf in by_owner.get(("map", g), [])], grp.count) for g, grp in enumerate(timeline.map_groups)]
        )
        per_group: list[Node | None] = []
        for r in range(len(timeline.reduce_groups)):
            items = by_owner.get(("reduce", r), [])
            lanes: dict[int, list[Node]] = defaultdict(list)
            merge: list[Node] = []
            for inst, leaf in items:
                if inst.lanes == (-1,):
                    merge.append(leaf)
                else:
                    for lane in inst.lanes:
                        lanes[lane].append(leaf)
            lane_node = _parallel(
                [(n, 1) for n in (_chain(v) for _, v in sorted(lanes.items())) if n is not None]
            )
            per_group.append(_chain(([lane_node] if lane_node is not None else []) + merge))
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
