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

What-if edits (:func:`predict.shape_whatif.apply_whatif`) change a :class:`JobShape` ("shuffle 2x
faster", "one more reduce wave") and the path is recomputed.
"""

from __future__ import annotations

import dataclasses
import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

import networkx as nx

from phaseline.errors import PredictionError
from phaseline.schemas import Phase
from predict.contention import map_contention
from predict.core import (
    MS_PER_S,
    Cluster,
    Dataset,
    Inputs,
    JobSettings,
    Model,
    PhaseDurationModel,
    Prediction,
    register,
)
from predict.gc_pause import collector_paused
from predict.longest_path import CriticalPath, critical_path
from predict.map_pipeline import END, START, map_task_pipeline
from predict.tasks import TaskEstimate, TaskEstimates, estimate_tasks, profiled_settings
from profiles.profile import JobProfile, Stage

__all__ = [
    "END",
    "START",
    "CriticalPath",
    "CriticalPathModel",
    "JobShape",
    "critical_path",
    "job_graph",
    "job_shape",
    "slot_chain_path",
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


def slot_chain_path(shape: JobShape) -> CriticalPath | None:
    """``critical_path(job_graph(shape))`` read off the slot chains, without the graph; ``None`` where it cannot be.

    :func:`job_graph` is slot chains: a map's heaviest way in is its slot predecessor's plus that
    map (0 in the first wave), ``maps_done`` takes the first heaviest of the slots' last maps, a
    shuffle the first heaviest of ``maps_done`` (0) and its slot's previous reduce, a reduce its
    shuffle's plus the tail, E the first heaviest of the slots' last reduces (``maps_done`` without
    reduces).  These are :func:`_dag_longest_path`'s distances and choices, by the same float
    operations over each node's ways in in the same order.  Where a duration is negative or not a
    number (a distance could be cut to 0), or E is not alone at the greatest distance (the walk then
    ends at the first such node in its topological order), it gives ``None``: build the graph.  At
    25,601 maps the graph and its walk took 0.12 s, the chains 0.02 s.
    """
    maps, reds = shape.map_ms, shape.reduce_ms
    if not all(d >= 0 for d in (*maps, *reds, shape.first_shuffle_ms, shape.shuffle_ms)):
        return None
    map_before = slot_predecessors(maps, shape.map_slots)
    into = [0.0] * len(maps)  # each map's heaviest way in
    for i, prev in enumerate(map_before):
        if prev is not None:
            into[i] = into[prev] + maps[prev]
    last = sorted(set(range(len(maps))) - {b for b in map_before if b is not None})
    done, done_from = into[last[0]] + maps[last[0]], last[0]
    for i in last[1:]:
        if into[i] + maps[i] > done:
            done, done_from = into[i] + maps[i], i
    red_before = slot_predecessors(reds, shape.reduce_slots, shape.first_shuffle_ms, shape.shuffle_ms)
    shuffles: list[float] = []
    after: list[int | None] = []  # a shuffle's heaviest way in: the previous reduce on its slot, or maps_done
    red_into: list[float] = []
    for prev in red_before:
        length, source = done + 0.0, None
        if prev is not None and red_into[prev] + reds[prev] > length:
            length, source = red_into[prev] + reds[prev], prev
        shuffles.append(length)
        after.append(source)
        red_into.append(length + (shape.first_shuffle_ms if prev is None else shape.shuffle_ms))
    last = sorted(set(range(len(reds))) - {b for b in red_before if b is not None})
    end, end_from = (done + 0.0, None) if not reds else (red_into[last[0]] + reds[last[0]], last[0])
    for j in last[1:]:
        if red_into[j] + reds[j] > end:
            end, end_from = red_into[j] + reds[j], j
    # E alone at the greatest distance; without reduces maps_done, whose one edge to E weighs 0 (the walk
    # ends at maps_done and critical_path steps on to E)
    if not (end > max(0.0, *into, done, *shuffles, *red_into) if reds else done > max(0.0, *into)):
        return None
    return CriticalPath(*_back_from_end(shape, map_before, done_from, red_before, after, end_from))


def _back_from_end(
    shape: JobShape, map_before: list[int | None], done_from: int, red_before: list[int | None],
    after: list[int | None], end_from: int | None,
) -> tuple[float, tuple[str, ...], tuple[float, ...]]:
    """:func:`slot_chain_path`'s path, from E back to S: (length, nodes, each edge's weight), as
    :func:`critical_path` gives them (the length the sum of the weights in path order)."""
    nodes, weights = [END], []  # weights[k]: the edge into nodes[k], walking back
    j = end_from
    weights.append(0.0 if j is None else float(shape.reduce_ms[j]))  # maps_done or reduce:j -> E
    while j is not None:
        nodes += [f"reduce:{j}", f"shuffle:{j}"]
        weights.append(float(shape.first_shuffle_ms if red_before[j] is None else shape.shuffle_ms))
        prev = after[j]
        weights.append(0.0 if prev is None else float(shape.reduce_ms[prev]))  # maps_done or reduce:prev -> shuffle:j
        j = prev
    nodes.append(MAPS_DONE)
    i: int | None = done_from
    weights.append(float(shape.map_ms[done_from]))  # map:i -> maps_done
    while i is not None:
        nodes.append(f"map:{i}")
        before = map_before[i]
        weights.append(0.0 if before is None else float(shape.map_ms[before]))  # S or map:before -> map:i
        i = before
    nodes.append(START)
    forward = tuple(weights[::-1])
    return sum(forward), tuple(nodes[::-1]), forward


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
    serial, the pipeline overlaps spills with the map thread).  The maps then
    take :func:`~predict.contention.map_contention`'s factor.
    """
    tasks = estimate_tasks(profile, platform, dataset, settings, cluster=cluster, share_cores=False)
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
    factor, contended = map_contention(profile, cluster, tasks.n_maps)  # after the pipeline's recalibration
    if contended is not None:
        avg, biggest = avg * factor, biggest * factor
        notes.append(contended)
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

@dataclass(frozen=True, slots=True)
class CriticalPathModel(Model):
    """Desai et al. 2012's critical path: Figure 5 pipelines inside map tasks, section 3.5 longest path across."""

    name: str = "critical_path"

    def predict_inputs(self, inputs: Inputs) -> Prediction:
        """The length of the job's critical path; the path's stages in ``stages`` (seconds)."""
        shape, tasks, notes = job_shape(inputs.profile, inputs.platform, inputs.cluster, inputs.dataset, inputs.settings)
        path = slot_chain_path(shape)
        if path is None:
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
