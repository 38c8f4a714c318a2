"""Task classes, placement and threads of one job (Vianna et al. 2013, section 4.1, Table 1).

Two formulations of the same job:

* :attr:`Formulation.PER_TASK` -- the paper's: every map, every shuffle-sort
  (one per map per reduce) and every merge is its own class, C = m + r(m + 1).
* :attr:`Formulation.CLASS` -- symmetric tasks aggregated: the maps of one
  wave, the shuffle-sorts of one reduce wave for one map wave, the merges of
  one reduce wave.  Tasks of a class have the same demands, start together
  and see the same neighbours on average, so they share one mean response
  time; the class count is O(map waves x reduce waves).

Placement is the same in both: map thread ``t`` (of ``n * pm``) runs maps
``t, t + n pm, ...`` on node ``t mod n`` (round robin, so a partial last wave
spreads over the nodes); reduce ``rho`` runs on reduce slot ``rho mod n pr``,
node ``rho mod n``, after the reduce ``rho - n pr`` on the same slot.  A
shuffle-sort puts its network demand only when its map ran on another node
(section 4.1); a class carries the fraction of its members that do.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from phaseline.errors import PredictionError
from predict.vianna.tree import MapGroup, ReduceGroup

__all__ = ["Formulation", "JobLayout", "TaskKind", "Workload", "build_layout"]


class TaskKind(enum.StrEnum):
    """The three (sub-)task types of the model (section 4.1)."""

    MAP = "map"
    SHUFFLE_SORT = "shuffle_sort"
    MERGE = "merge"


class Formulation(enum.StrEnum):
    """One class per task (the paper) or per group of symmetric tasks."""

    PER_TASK = "per_task"
    CLASS = "class"


@dataclass(frozen=True, slots=True)
class Workload:
    """Table 1's architecture and workload parameters (besides the demands).

    ``jobs`` is the multiprogramming level N (section 4.1).  ``network_per_node``
    gives every node its own network link (the reduce's node receives a remote
    shuffle-sort), as behind a non-blocking switch, instead of the paper's one
    network shared by the whole cluster (section 4.1), which serializes every
    shuffle of a large cluster.  ``slowstart`` is Hadoop's reduce slow-start
    (``mapreduce.job.reduce.slowstart.completedmaps``): the reduces start once
    that share of the maps has finished (:attr:`start_after_maps`); ``None`` is
    the paper's rule, a reduce's first shuffle-sort at the first map's end
    (section 4.2.2).  LocalJobRunner starts its reduces after the last map: 1.0.
    """

    nodes: int
    cpus: int
    disks: int
    maps: int
    reduces: int
    pm: int
    pr: int
    ps: int
    jobs: int = 1
    network_per_node: bool = False
    slowstart: float | None = None

    def __post_init__(self) -> None:
        for name in ("nodes", "cpus", "disks", "maps", "pm", "pr", "ps", "jobs"):
            if getattr(self, name) < 1:
                raise PredictionError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.reduces < 0:
            raise PredictionError(f"reduces must be >= 0, got {self.reduces}")
        if self.slowstart is not None and not 0.0 <= self.slowstart <= 1.0:
            raise PredictionError(f"slowstart must be a share of the maps in [0, 1], got {self.slowstart}")

    @property
    def start_after_maps(self) -> int:
        """Maps that finish before the reduces start: ceil(slowstart x m), 0 for the paper's rule.

        >>> Workload(1, 2, 1, 8, 1, 1, 1, 1, slowstart=0.05).start_after_maps
        1
        >>> Workload(1, 2, 1, 8, 1, 1, 1, 1, slowstart=1.0).start_after_maps
        8
        """
        if self.slowstart is None:
            return 0
        return min(self.maps, math.ceil(self.slowstart * self.maps - 1e-9))

    @property
    def tasks(self) -> int:
        """C = m + r (m + 1), the per-task class count (section 4.2.2)."""
        return self.maps + self.reduces * (self.maps + 1)


@dataclass(frozen=True, slots=True)
class JobLayout:
    """Classes of one job: kind, size, node spread, remote share, labels, and the threads."""

    kinds: tuple[TaskKind, ...]
    counts: npt.NDArray[np.float64]  # tasks per job in each class
    per_node: npt.NDArray[np.float64]  # (classes, nodes): tasks of each class on each node
    remote: npt.NDArray[np.float64]  # fraction of the class's tasks with network demand
    labels: tuple[str, ...]
    map_groups: tuple[MapGroup, ...]
    reduce_groups: tuple[ReduceGroup, ...]
    owner_nodes: dict[tuple[str, int], npt.NDArray[np.float64]]  # thread group -> share of it on each node

    @property
    def size(self) -> int:
        return len(self.kinds)


def busy_nodes(nodes: int, maps: int, reduces: int) -> int:
    """The nodes that hold a task: the model is solved on these, the others idle.

    The layout puts map i on node i and reduce rho on node rho, so with ``nodes >= max(maps,
    reduces)`` the job on a billion nodes is the job on ``max(maps, reduces)`` of them beside idle
    ones (no demand; a node's network link changes nothing while it is idle).  Solving on the busy
    nodes keeps per-node arrays to the tasks' size (10^11 nodes had asked for arrays that long).
    At least one node, for a job with no tasks.

    >>> busy_nodes(10**11, 40, 8), busy_nodes(4, 40, 8), busy_nodes(16, 0, 0)
    (40, 4, 1)
    """
    return min(nodes, max(maps, reduces, 1))


def _map_node(thread: int, nodes: int) -> int:
    return thread % nodes


def build_layout(work: Workload, formulation: Formulation) -> JobLayout:
    """The classes, their placement and the thread groups for ``work`` (map-only jobs: maps alone)."""
    if formulation is Formulation.PER_TASK:
        return _per_task(work)
    return _per_class(work)


def _per_task(w: Workload) -> JobLayout:
    threads, slots, n = w.nodes * w.pm, w.nodes * w.pr, w.nodes
    kinds: list[TaskKind] = []
    labels: list[str] = []
    nodes: list[int] = []
    remote: list[float] = []
    for i in range(w.maps):
        kinds.append(TaskKind.MAP)
        labels.append(f"M{i + 1}")
        nodes.append(_map_node(i % threads, n))
        remote.append(0.0)
    shuffle_of: list[dict[int, int]] = []
    for rho in range(w.reduces):
        mapping = {}
        for i in range(w.maps):
            mapping[i] = len(kinds)
            kinds.append(TaskKind.SHUFFLE_SORT)
            labels.append(f"R{i + 1}" if w.reduces == 1 else f"R{rho + 1}.{i + 1}")
            nodes.append(rho % n)
            remote.append(float(_map_node(i % threads, n) != rho % n))
        shuffle_of.append(mapping)
    merges = []
    for rho in range(w.reduces):
        merges.append(len(kinds))
        kinds.append(TaskKind.MERGE)
        labels.append("RM" if w.reduces == 1 else f"RM{rho + 1}")
        nodes.append(rho % n)
        remote.append(0.0)
    per_node = np.zeros((len(kinds), n))
    per_node[np.arange(len(kinds)), nodes] = 1.0
    map_groups = tuple(MapGroup(1, tuple(range(t, w.maps, threads))) for t in range(min(threads, w.maps)))
    reduce_groups = tuple(
        ReduceGroup(1, shuffle_of[rho], merges[rho], w.maps, rho - slots if rho >= slots else None)
        for rho in range(w.reduces)
    )
    owners = {("map", t): np.eye(n)[_map_node(t, n)] for t in range(len(map_groups))}
    owners.update({("reduce", rho): np.eye(n)[rho % n] for rho in range(w.reduces)})
    return JobLayout(
        tuple(kinds),
        np.ones(len(kinds)),
        per_node,
        np.asarray(remote),
        tuple(labels),
        map_groups,
        reduce_groups,
        owners,
    )


def _per_class(w: Workload) -> JobLayout:
    threads, slots, n = w.nodes * w.pm, w.nodes * w.pr, w.nodes
    # whole numbers: as floats, 4 maps / 10^400 threads came to 0.0 waves (and 2 reduces, to none at all)
    waves = -(-w.maps // threads)
    kinds: list[TaskKind] = []
    labels: list[str] = []
    counts: list[float] = []
    per_node: list[npt.NDArray[np.float64]] = []
    remote: list[float] = []
    map_nodes: list[npt.NDArray[np.float64]] = []
    for v in range(waves):
        first, last = v * threads, min(w.maps, (v + 1) * threads)
        spread = np.bincount([_map_node(i % threads, n) for i in range(first, last)], minlength=n).astype(
            float
        )
        map_nodes.append(spread)
        kinds.append(TaskKind.MAP)
        labels.append(f"map[wave {v + 1}]")
        counts.append(float(last - first))
        per_node.append(spread)
        remote.append(0.0)
    reduce_waves = -(-w.reduces // slots)
    groups: list[ReduceGroup] = []
    owners: dict[tuple[str, int], npt.NDArray[np.float64]] = {}
    for u in range(reduce_waves):
        first, last = u * slots, min(w.reduces, (u + 1) * slots)
        r_spread = np.bincount([rho % n for rho in range(first, last)], minlength=n).astype(float)
        size = last - first
        mapping = {}
        for v in range(waves):
            mapping[v] = len(kinds)
            kinds.append(TaskKind.SHUFFLE_SORT)
            labels.append(f"shuffle_sort[reduce wave {u + 1}, map wave {v + 1}]")
            b = counts[v]
            counts.append(size * b)
            per_node.append(r_spread * b)
            local = float(r_spread @ map_nodes[v])  # (reduce, map) pairs on the same node
            remote.append(1.0 - local / (size * b))
        merge = len(kinds)
        kinds.append(TaskKind.MERGE)
        labels.append(f"merge[reduce wave {u + 1}]")
        counts.append(float(size))
        per_node.append(r_spread)
        remote.append(0.0)
        owners[("reduce", len(groups))] = r_spread / size
        groups.append(ReduceGroup(size, mapping, merge, w.maps, u - 1 if u > 0 else None))
    q, rem = divmod(w.maps, threads)
    map_groups = []
    thread_sets = []
    if rem:
        map_groups.append(MapGroup(rem, tuple(range(q + 1))))
        thread_sets.append(range(rem))
    if q:
        map_groups.append(MapGroup(threads - rem if rem else threads, tuple(range(q))))
        thread_sets.append(range(rem, threads))
    for g, ts in enumerate(thread_sets):
        owners[("map", g)] = np.bincount([_map_node(t, n) for t in ts], minlength=n) / len(ts)
    return JobLayout(
        tuple(kinds),
        np.asarray(counts),
        np.vstack(per_node),
        np.asarray(remote),
        tuple(labels),
        tuple(map_groups),
        tuple(groups),
        owners,
    )
