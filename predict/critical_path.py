"""Critical-path model of a MapReduce job (Desai et al. 2012, sections 3.3 and 3.5).

Two levels, as in the paper:

* **Inside a task** (section 3.3, Figure 5): a map task is a read/compute/write pipeline
  (:mod:`predict.map_pipeline`).
* **Across the job** (section 3.5): a graph of tasks and stages with every
  edge weighted by the estimated time of its source
  (:func:`job_graph`): maps on map slots, each to the slot that frees
  first (largest split first, as Hadoop's ``JobSubmitter`` orders splits),
  the data dependence of every reduce on the map stage (the first wave's
  shuffle overlaps the map stage except for its tail, ARIA's first shuffle),
  reduces on reduce slots the same way.  The
  job's time is the longest path from ``S`` to ``E`` (networkx's
  ``dag_longest_path``), and the path itself is part of the answer
  (:class:`CriticalPath`).

What-if edits (:func:`apply_whatif`) change a :class:`JobShape` ("shuffle 2x
faster", "one more reduce wave") and the path is recomputed.
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx

from phaseline.errors import PredictionError
from phaseline.schemas import Phase
from predict.core import (
    MS_PER_S,
    Cluster,
    Dataset,
    Inputs,
    JobSettings,
    Model,
    PhaseDurationModel,
    Prediction,
    collector_paused,
    register,
)
from predict.map_pipeline import END, START, map_task_pipeline
from predict.tasks import TaskEstimate, TaskEstimates, estimate_tasks, profiled_settings
from profiles.profile import JobProfile, Stage

__all__ = [
    "END",
    "START",
    "CriticalPath",
    "CriticalPathModel",
    "JobShape",
    "apply_whatif",
    "critical_path",
    "job_graph",
    "job_shape",
    "slot_predecessors",
    "spread_durations",
]

MAPS_DONE = "maps_done"


# ------------------------------------------------------------------ job level (section 3.5)
@dataclass(frozen=True, slots=True)
class JobShape:
    """Task durations (ms) and slots: what the job-level graph is built from."""

    map_ms: tuple[float, ...]
    first_shuffle_ms: float  # the part of a first-wave shuffle after the map stage
    shuffle_ms: float  # a whole shuffle of a later-wave reduce
    reduce_ms: tuple[float, ...]  # reduce phase after the shuffle, per reduce task
    map_slots: int
    reduce_slots: int

    def __post_init__(self) -> None:
        if self.map_slots < 1 or self.reduce_slots < 1 or not self.map_ms:
            raise PredictionError("a job shape needs >= 1 map task, map slot and reduce slot")


@dataclass(frozen=True, slots=True)
class CriticalPath:
    """The longest ``S -> E`` path: its length (ms) and its nodes with the weight of each edge taken."""

    length_ms: float
    nodes: tuple[str, ...]
    weights_ms: tuple[float, ...]

    def stage_ms(self) -> dict[str, float]:
        """Time on the path by stage (``map``, ``shuffle``, ``reduce``)."""
        out: dict[str, float] = {}
        for node, w in zip(self.nodes, self.weights_ms, strict=False):
            stage = node.split(":")[0]
            if stage in ("map", "shuffle", "reduce"):
                out[stage] = out.get(stage, 0.0) + w
        return out


def spread_durations(n: int, avg: float, biggest: float) -> tuple[float, ...]:
    """``n`` durations with mean ``avg`` and one of ``biggest``, largest first (Hadoop orders splits by size)."""
    if n == 1:
        return (avg,)
    biggest = min(max(avg, biggest), n * avg)
    rest = (n * avg - biggest) / (n - 1)
    return (biggest, *([rest] * (n - 1)))


def slot_predecessors(durations: Sequence[float], slots: int, first: float = 0.0, later: float = 0.0) -> list[int | None]:
    """For each task, the task before it on its slot (``None`` in the first wave), by greedy assignment.

    Tasks start in order, each on the slot that frees first (ties: a slot no
    task used yet, then the lowest slot), as Hadoop's schedulers hand a freed
    slot the next pending task and as ARIA's makespan bounds assume.  (A slot
    a task of 0 ms freed at 0 had been taken before the unused ones: the next
    task queued behind it, paying a later wave's whole shuffle.)  A first-wave task occupies its slot for
    ``first + duration``, a later one ``later + duration`` (a reduce's
    shuffle before it).  Equal durations give round robin: task ``i`` follows
    task ``i - slots``.
    """
    # (time the slot frees, whether a task used it, slot, its last task; -1 before its first); no
    # more slots than tasks ever take one (the lowest-numbered ones), however large the cluster
    free: list[tuple[float, bool, int, int]] = [(0.0, False, slot, -1) for slot in range(min(slots, len(durations)))]
    before: list[int | None] = []
    for i, dur in enumerate(durations):
        t, _, slot, last = heapq.heappop(free)
        before.append(None if last < 0 else last)
        heapq.heappush(free, (t + (first if last < 0 else later) + dur, True, slot, i))
    return before


def job_graph(shape: JobShape) -> nx.DiGraph:
    """The task/stage graph of section 3.5; edge ``u -> v`` weighs ``u``'s duration.

    Picture for 3 maps on 2 slots, 2 reduces on 1 slot::

        S ──> map:0 ──────────> map:2 ──┐
        │                                ├──> maps_done ──> shuffle:0 ──> reduce:0 ──> shuffle:1 ──> reduce:1 ──> E
        └──> map:1 ─────────────────────┘            └─────────────────────────────────────^

    Each task follows the previous task on its slot, slots taken greedily
    (:func:`slot_predecessors`: with equal durations map ``i`` follows map
    ``i - k``); every shuffle waits for the map stage; a first-wave shuffle
    takes the first-shuffle tail, a later one the whole shuffle and also waits
    for its slot's previous reduce.
    """
    edges: list[tuple[str, str, dict[str, float]]] = []  # in the order added: one add_edges_from call
    maps = shape.map_ms
    map_before = slot_predecessors(maps, shape.map_slots)
    last_on_slot = set(range(len(maps))) - {b for b in map_before if b is not None}
    for i, dur in enumerate(maps):
        prev = map_before[i]
        after = START if prev is None else f"map:{prev}"
        edges.append((after, f"map:{i}", {"weight": 0.0 if prev is None else maps[prev]}))
        if i in last_on_slot:
            edges.append((f"map:{i}", MAPS_DONE, {"weight": dur}))
    reds = shape.reduce_ms
    if not reds:
        edges.append((MAPS_DONE, END, {"weight": 0.0}))
    red_before = slot_predecessors(reds, shape.reduce_slots, shape.first_shuffle_ms, shape.shuffle_ms)
    last_on_slot = set(range(len(reds))) - {b for b in red_before if b is not None}
    for j, dur in enumerate(reds):
        prev = red_before[j]
        edges.append((MAPS_DONE, f"shuffle:{j}", {"weight": 0.0}))
        if prev is not None:
            edges.append((f"reduce:{prev}", f"shuffle:{j}", {"weight": reds[prev]}))
        tail = shape.first_shuffle_ms if prev is None else shape.shuffle_ms
        edges.append((f"shuffle:{j}", f"reduce:{j}", {"weight": tail}))
        if j in last_on_slot:
            edges.append((f"reduce:{j}", END, {"weight": dur}))
    return nx.DiGraph(edges)  # (networkx's add_edges_from, in order)


def _dag_longest_path(g: nx.DiGraph) -> list[str]:
    """networkx's ``dag_longest_path(g, weight="weight", default_weight=0.0)`` on a DiGraph, path for path.

    The same walk in the same order: nodes by networkx's topological generations (Kahn's
    algorithm: the nodes of in-degree 0 in insertion order, then the children each frees, in
    order), each node's predecessors in insertion order, the first heaviest kept (ties go as
    networkx's ``max``), a path never below 0, and the end the first node of the greatest
    distance.  A cycle raises ``NetworkXUnfeasible``.  networkx asks whether the graph is a
    multigraph once per edge and builds a view per node; at 25,000 tasks that was two thirds
    of the path's time (tests/test_critical_path_model.py compares the two on random graphs).
    """
    succ, pred = g._succ, g._pred  # the adjacency dicts themselves: their views cost a call per node
    indegree = {v: len(ins) for v, ins in pred.items()}
    generation = [v for v, d in indegree.items() if d == 0]
    dist: dict[str, tuple[float, str]] = {}
    while generation:
        freed = []
        for v in generation:
            best: tuple[float, str] | None = None
            for u, data in pred[v].items():
                length = dist[u][0] + data.get("weight", 0.0)
                if best is None or length > best[0]:
                    best = (length, u)
            dist[v] = best if best is not None and best[0] >= 0 else (0, v)
            for child in succ[v]:
                indegree[child] -= 1
                if indegree[child] == 0:
                    freed.append(child)
        generation = freed
    if len(dist) < len(indegree):
        raise nx.NetworkXUnfeasible("Graph contains a cycle")
    if not dist:
        return []
    v = max(dist, key=lambda x: dist[x][0])
    path: list[str] = []
    u = None
    while u != v:
        path.append(v)
        u = v
        v = dist[v][1]
    path.reverse()
    return path


def critical_path(g: nx.DiGraph) -> CriticalPath:
    """The longest ``S -> E`` path of a task graph (Desai et al. 2012, section 3.5).

    :func:`_dag_longest_path` (networkx's ``dag_longest_path``) sorts the graph topologically
    (a cycle is an error) and keeps, per node, the heaviest way in.
    """
    try:
        nodes = _dag_longest_path(g)
    except nx.NetworkXUnfeasible:
        raise PredictionError("the task graph has a cycle; no critical path") from None
    if not nodes or nodes[0] != START:
        nodes = [START, *nodes]
    weights = tuple(float(g.edges[u, v]["weight"]) for u, v in itertools.pairwise(nodes))
    if nodes[-1] != END:  # all-zero tails: close the path at E
        tail = nx.shortest_path(g, nodes[-1], END)
        weights += tuple(float(g.edges[u, v]["weight"]) for u, v in itertools.pairwise(tail))
        nodes = [*nodes, *tail[1:]]
    return CriticalPath(sum(weights), tuple(nodes), weights)


def _shuffle_and_reduce(tasks: TaskEstimates) -> tuple[float, float, tuple[float, ...]]:
    if tasks.n_reduces == 0 or tasks.reduce_avg is None or tasks.reduce_max is None:
        return 0.0, 0.0, ()
    reds = spread_durations(tasks.n_reduces, tasks.reduce_avg.total_ms, tasks.reduce_max.total_ms)
    return tasks.first_shuffle_avg_ms, tasks.shuffle_avg_ms, reds


def job_shape(
    profile: JobProfile,
    platform: PhaseDurationModel,
    cluster: Cluster,
    dataset: Dataset,
    settings: JobSettings,
) -> tuple[JobShape, TaskEstimates, tuple[str, ...]]:
    """Task durations for ``dataset``: map tasks as Figure 5 pipelines, reduces as Zhang et al. 2013 estimate.

    The per-task overhead is recalibrated for the pipeline: at the profiled
    size and settings, overhead = measured average map task - the pipeline's
    time without overhead (the tasks.py calibration counted the phases as
    serial, the pipeline overlaps spills with the map thread).
    """
    tasks = estimate_tasks(profile, platform, dataset, settings)
    if tasks.n_maps + tasks.n_reduces > MAX_GRAPH_TASKS:
        raise PredictionError(
            f"{tasks.n_maps:,} maps and {tasks.n_reduces:,} reduces: the task graph is limited to "
            f"{MAX_GRAPH_TASKS:,} tasks (about 1 s and 0.6 GB per 100,000); check the split size"
        )
    notes = list(tasks.assumptions)
    out_avg = tasks.map_avg.data_bytes.get(Phase.COLLECT.value, 0.0)
    out_max = tasks.map_max.data_bytes.get(Phase.COLLECT.value, 0.0)
    # map output records per output byte (the sort buffer's accounting is per record)
    p_in = profile.input
    out_width = (
        p_in.avg_split_bytes * profile.map_size_sel / (p_in.avg_split_records * profile.map_recs_sel)
        if p_in.avg_split_records > 0 and profile.map_recs_sel > 0 and profile.map_size_sel > 0
        else math.inf
    )
    before = profiled_settings(profile)
    measured = profile.stage(Stage.MAP_TASK)
    shift = 0.0
    if measured is not None:
        then = estimate_tasks(profile, platform, Dataset(profile.input.total_bytes), before)
        then_out = then.map_avg.data_bytes.get(Phase.COLLECT.value, 0.0)
        bare = map_task_pipeline(
            dataclasses.replace(then.map_avg, overhead_ms=0.0), before, then_out, then_out / out_width
        )
        shift = (measured.avg_ms - bare) - then.map_avg.overhead_ms
        notes.append(f"map overhead recalibrated for the pipeline's overlap ({shift:+.0f} ms)")

    def task_ms(t: TaskEstimate, out: float) -> float:
        return map_task_pipeline(
            dataclasses.replace(t, overhead_ms=t.overhead_ms + shift), settings, out, out / out_width
        )

    avg, biggest = task_ms(tasks.map_avg, out_avg), task_ms(tasks.map_max, out_max)
    first, typical, reds = _shuffle_and_reduce(tasks)
    shape = JobShape(
        map_ms=spread_durations(tasks.n_maps, avg, max(avg, biggest)),
        first_shuffle_ms=first,
        shuffle_ms=typical,
        reduce_ms=reds,
        map_slots=cluster.map_slots,
        reduce_slots=cluster.reduce_slots,
    )
    return shape, tasks, tuple(notes)


#: Jobs of more tasks are refused: the task graph costs about 1 s and 0.6 GB per 100,000 tasks.
MAX_GRAPH_TASKS = 1_000_000

_FASTER = re.compile(r"^\s*(map|shuffle|reduce)s?\s+(\d+(?:\.\d+)?)\s*x\s+(faster|slower)\s*$", re.I)
_WAVES = re.compile(r"^\s*(one|\d+)\s+(more|fewer)\s+(map|reduce)\s+waves?\s*$", re.I)


def apply_whatif(shape: JobShape, edit: str) -> JobShape:
    """Change a job shape by a what-if edit and return the new shape.

    Understood: ``"<map|shuffle|reduce> <f>x faster|slower"`` (scales that
    stage's task durations) and ``"<one|k> more|fewer <map|reduce> wave(s)"``
    (adds or removes that many slots' worth of tasks, each like the typical
    task).
    """
    m = _FASTER.match(edit)
    if m:
        stage, factor = m[1].lower(), float(m[2])
        if factor <= 0:
            raise PredictionError(f"what-if {edit!r}: the factor must be > 0")
        f = 1 / factor if m[3].lower() == "faster" else factor
        if stage == "map":
            return dataclasses.replace(shape, map_ms=tuple(d * f for d in shape.map_ms))
        if stage == "shuffle":
            return dataclasses.replace(
                shape, first_shuffle_ms=shape.first_shuffle_ms * f, shuffle_ms=shape.shuffle_ms * f
            )
        return dataclasses.replace(shape, reduce_ms=tuple(d * f for d in shape.reduce_ms))
    m = _WAVES.match(edit)
    if m:
        count = 1 if m[1].lower() == "one" else int(m[1])
        sign = 1 if m[2].lower() == "more" else -1
        if m[3].lower() == "map":
            tasks, slots = list(shape.map_ms), shape.map_slots
        else:
            tasks, slots = list(shape.reduce_ms), shape.reduce_slots
        if not tasks:
            raise PredictionError(f"what-if {edit!r}: the job has no {m[3].lower()} tasks")
        typical = tasks[-1]
        new_n = len(tasks) + sign * count * slots
        if new_n < 1:
            raise PredictionError(f"what-if {edit!r}: leaves no {m[3].lower()} tasks")
        tasks = tasks[:new_n] + [typical] * max(0, new_n - len(tasks))
        if m[3].lower() == "map":
            return dataclasses.replace(shape, map_ms=tuple(tasks))
        return dataclasses.replace(shape, reduce_ms=tuple(tasks))
    raise PredictionError(f"cannot read what-if {edit!r}; try 'shuffle 2x faster' or 'one more reduce wave'")


@dataclass(frozen=True, slots=True)
class CriticalPathModel(Model):
    """Desai et al. 2012's critical path: Figure 5 pipelines inside map tasks, section 3.5 longest path across."""

    name: str = "critical_path"

    def predict_inputs(self, inputs: Inputs) -> Prediction:
        """The length of the job's critical path; the path's stages in ``stages`` (seconds)."""
        shape, tasks, notes = job_shape(inputs.profile, inputs.platform, inputs.cluster, inputs.dataset, inputs.settings)
        with collector_paused():  # ~10^5 graph objects: see collector_paused
            path = critical_path(job_graph(shape))
        stages = {f"path.{k}": v / MS_PER_S for k, v in path.stage_ms().items()}
        phases = {f"map.{k}": v / MS_PER_S for k, v in tasks.map_avg.phases_ms.items()}
        prediction = Prediction(
            model=self.name,
            seconds=path.length_ms / MS_PER_S,
            stages=stages,
            phases=phases,
            dataflow={
                "maps": float(tasks.n_maps),
                "reduces": float(tasks.n_reduces),
                "path_nodes": float(len(path.nodes)),
                "path_map_tasks": float(sum(n.startswith("map:") for n in path.nodes)),
                "path_reduce_tasks": float(sum(n.startswith("reduce:") for n in path.nodes)),
            },
            assumptions=(
                *notes,
                "map tasks: Desai et al. 2012 Figure 5 pipelines (c_p = r_p = 1, one spill per chunk)",
                "critical path: " + " -> ".join(_abbrev(path.nodes)),
            ),
        )
        return prediction


def _abbrev(nodes: Sequence[str], keep: int = 12) -> list[str]:
    if len(nodes) <= keep:
        return list(nodes)
    half = keep // 2
    return [*nodes[:half], f"... {len(nodes) - keep} more ...", *nodes[-half:]]


register(CriticalPathModel())
