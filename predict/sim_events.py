"""The simulator's event loop: one replay of a job, attempt by attempt (see :mod:`predict.simulate`).

The simulator replays a job on a cluster of ``nodes`` with map and reduce
slots per node (Hadoop 1 slots; a YARN node's containers play the same role):

* map tasks wait in a queue, largest split first (Hadoop's ``JobSubmitter``
  order), and run in waves on the free map slots;
* reduce slow start: reduces are launched once ``slowstart`` of the maps have
  finished (``mapreduce.job.reduce.slowstart.completedmaps``; 1.0 for the
  LocalJobRunner, which has none);
* on YARN (``shared_containers``) maps and reduces take the same containers,
  and the ApplicationMaster ramps the reduces up as the maps complete
  (:func:`~predict.container_allocation.reduces_allowed`, Hadoop's
  ``RMContainerAllocator.scheduleReduces``):
  a container a map frees goes to a reduce first where one is allowed, so the
  maps left run on fewer containers;
* the shuffle overlaps the map stage: a first-wave reduce (launched while
  maps run, or as the map stage ends) ends its shuffle a first-shuffle tail
  after the last map (ARIA's first shuffle, Verma et al. 2011: the part that
  does not overlap the map stage); a later reduce shuffles for a whole
  typical shuffle;
* on YARN with the nodes' cores given (``cpus_per_node``), a node's maps share its cores by
  processor sharing, re-rated whenever one starts or ends there (:mod:`predict.sim_sharing`);
* stragglers: with probability ``straggler_rate`` an attempt runs
  ``straggler_factor`` times longer; failed attempts: with probability
  ``failure_rate`` an attempt dies after a uniform fraction of its run and the
  task is queued again.  JobProfile records no failure or straggler counts, so
  both are parameters (0 by default) that the caller sets from the trace.

:class:`~predict.sim_job.SimJob` is what is replayed (task counts, per-stage duration laws, the
cluster's slots, slow start, stragglers and failures); :func:`simulate_once` replays it with a heap of
events and gives the makespan (:class:`SimRun`), and every attempt when asked.  The
prediction's replications of a job whose attempts never fail skip this loop's map stage
(:mod:`predict.simulate`), drawing the same numbers (:func:`first_attempts`, :func:`drawer`).

Engine: a heap-based event loop (``heapq``), not simpy.  Measured with
``benchmarks/bench_simulate.py`` (CPU seconds, this repository's shared
2-core machine): the simulator replays a 100,000-map, 1,000-reduce job at
about 850,000-940,000 events/s (520,000-740,000 before an event that
schedules one other replaced itself on the heap, side by side on the same
seeds, identical replays), while the bare slot-scheduling loop written with
simpy processes on a ``simpy.Resource`` manages 36,000-56,000 events/s -- an
order of magnitude less before any MapReduce logic.  SimMR's > 1 million
events/s replay (compiled code) is the anchor.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable

import numpy as np

from predict.container_allocation import reduces_allowed
from predict.sim_job import Attempt, SimJob, SimResult, SimRun, StageDist
from predict.sim_sharing import CoreSharing

__all__ = [
    "MAP_DONE",
    "MAP_FAIL",
    "REDUCE_DONE",
    "REDUCE_FAIL",
    "SHUFFLE_DONE",
    "Attempt",
    "SimJob",
    "SimResult",
    "SimRun",
    "StageDist",
    "drawer",
    "first_attempts",
    "simulate_once",
]

#: Event kinds, in the order the heap breaks ties of time and sequence by (it never needs to).
MAP_DONE, MAP_FAIL, SHUFFLE_DONE, REDUCE_DONE, REDUCE_FAIL = range(5)


def _dur(mean: float, cv: float, py: random.Random, job: SimJob, *, may_fail: bool = False) -> tuple[float, bool]:
    """One attempt's (duration, failed); a failed attempt runs a uniform fraction of its duration.

    Only an attempt that ``may_fail`` (a task attempt with another attempt left) fails: a task's
    last attempt that failed would fail the job, which a completion-time prediction does not
    model, and a shuffle is not an attempt (both had been cut short by the failure draw, so a
    higher failure rate made jobs faster).

    Scalar draws come from Python's ``random`` (seeded from the replication's
    numpy generator): numpy's per-call overhead would dominate the event loop.
    """
    d = mean
    if cv > 0 and mean > 0:
        s2 = math.log1p(cv * cv)
        d = mean * py.lognormvariate(-s2 / 2, math.sqrt(s2))
    if job.straggler_rate > 0 and py.random() < job.straggler_rate:
        d *= job.straggler_factor
    if may_fail and job.failure_rate > 0 and py.random() < job.failure_rate:
        return d * py.random(), True
    return d, False


def drawer(dist: StageDist, py: random.Random, job: SimJob) -> Callable[[], float]:
    """:func:`_dur` for one stage of attempts that never fail: the same draws, its constants taken once."""
    mean, straggle, factor = dist.mean_ms, job.straggler_rate, job.straggler_factor
    s2 = math.log1p(dist.cv * dist.cv)
    mu, sigma = -s2 / 2, math.sqrt(s2)
    spread = dist.cv > 0 and mean > 0
    lognormal, uniform = py.lognormvariate, py.random

    def draw() -> float:
        d = mean * lognormal(mu, sigma) if spread else mean
        if straggle > 0 and uniform() < straggle:
            d *= factor
        return d

    return draw


def first_attempts(
    job: SimJob, rng: np.random.Generator, means: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Every map's first attempt (durations, failed), drawn vectorized (the same law as :func:`_dur`).

    ``means`` is ``job.map_means_ms`` as an array, when the caller has it (a tuple of 25,000
    floats converted once per replication was a third of a prediction's replays).
    """
    means = np.asarray(job.map_means_ms) if means is None else means
    d = means.copy()
    if job.map_cv > 0:
        s2 = math.log1p(job.map_cv**2)
        d *= rng.lognormal(-s2 / 2, math.sqrt(s2), means.size)
    if job.straggler_rate > 0:
        d = np.where(rng.random(means.size) < job.straggler_rate, d * job.straggler_factor, d)
    failed = np.zeros(means.size, dtype=bool)
    if job.failure_rate > 0 and job.max_attempts > 1:  # (a first attempt that is also the last never fails)
        failed = rng.random(means.size) < job.failure_rate
        d = np.where(failed, d * rng.random(means.size), d)
    return d, failed


def simulate_once(job: SimJob, rng: np.random.Generator, *, record: bool = False) -> SimRun:
    """Replay ``job`` once with random durations from ``rng``; a heap of (time, seq, kind, task, slot).

    An event that schedules exactly one other (a map's slot taking the next
    map, a shuffle's end starting its reduce) replaces itself at the top of
    the heap (``heapreplace``: one sift instead of a pop's and a push's); an
    attempt's start and node are kept only when attempts are recorded.
    """
    return _Replay(job, rng, record).run()


class _Replay:
    """One replay's state; :meth:`run` is the event loop, the other methods its events."""

    def __init__(self, job: SimJob, rng: np.random.Generator, record: bool) -> None:
        self.job, self.record = job, record
        self.py = random.Random(int(rng.integers(2**62)))
        self.n_maps, n_red = len(job.map_means_ms), job.n_reduces
        # a freed slot is taken again first, so no more slots than tasks are ever used (the lowest
        # numbered): a cluster of a million nodes needs no list of its slots
        self.shared = job.shared_containers
        self.containers = job.nodes * job.map_slots_per_node
        if self.shared:  # one pool: the maps start on it, the reduces take from it as they are allowed
            self.map_slots = list(range(self.containers))[::-1]
            self.red_slots = []
        else:
            self.map_slots = list(range(min(self.containers, self.n_maps)))[::-1]
            self.red_slots = list(range(min(job.nodes * job.reduce_slots_per_node, n_red)))[::-1]
        self.red_running = 0  # reduces holding a container (shared containers only)
        # the maps running per node, where they share its cores (shared containers with cpus_per_node)
        self.sharing = CoreSharing(job.cpus_per_node, job.map_slots_per_node) if job.cpus_per_node else None
        self.heap: list[tuple[float, int, int, int, int]] = []
        self.seq = 0
        self.map_queue = list(range(self.n_maps))[::-1]  # pop() from the end = task 0 first
        self.map_tries = [0] * self.n_maps
        self.red_queue: list[int] = []
        self.red_tries = [0] * n_red
        self.started: dict[int, tuple[float, int]] = {}  # running attempt: (start, node), when recording
        self.waiting: dict[int, int] = {}  # reduces shuffling while maps run: task -> slot
        self.first_wave = True  # until the first reduce attempt ends
        self.red_phase: dict[int, float] = {}  # reduce task -> its shuffle's end
        self.attempts: list[Attempt] = []
        self.maps_done, self.reduces_launched = 0, False
        self.need_for_reduces = max(1, math.ceil(job.slowstart * self.n_maps)) if n_red else self.n_maps + 1
        self.now = 0.0
        first_d, first_f = first_attempts(job, rng)  # drawn at once: most tasks never retry
        self.first_map, self.first_fail = first_d.tolist(), first_f.tolist()

    def run(self) -> SimRun:
        """The events in time order; the common one (a map ends, its slot takes the next) inlined."""
        heap, map_queue, map_tries, red_slots = self.heap, self.map_queue, self.map_tries, self.red_slots
        first_map, first_fail, record, need = self.first_map, self.first_fail, self.record, self.need_for_reduces
        shared, sharing = self.shared, self.sharing
        heapreplace, heappop = heapq.heapreplace, heapq.heappop
        first_wave = []
        while self.map_slots and map_queue:
            first_wave.append((map_queue.pop(), self.map_slots.pop()))
        self.start_maps(first_wave)
        map_done, map_fail, shuffle_done = MAP_DONE, MAP_FAIL, SHUFFLE_DONE
        seq, maps_done, launched = self.seq, self.maps_done, self.reduces_launched
        now, events = 0.0, 0
        while heap:
            event = heap[0]  # taken off the heap below: popped, or replaced
            if sharing is not None and event[2] <= map_fail and not sharing.live(event[3], event[1]):
                heappop(heap)  # an end the cores' sharing has moved since
                continue
            now, _, kind, task, slot = event
            events += 1
            if (
                kind == map_done
                and map_queue
                and not record
                and not shared
                and (launched or maps_done + 1 < need)
                and not (self.red_queue and red_slots)
            ):
                # the common event, inlined (map_event's call was a fifth of the loop): a map ended and
                # nothing else changes but its slot taking the next queued map, whose first attempt
                # was drawn up front (a queued map has not run: a failed one is retried on its slot)
                maps_done += 1
                task = map_queue.pop()
                map_tries[task] = 1
                heapreplace(heap, (now + first_map[task], seq, map_fail if first_fail[task] else map_done, task, slot))
                seq += 1
                continue
            self.now, self.seq, self.maps_done = now, seq, maps_done
            if kind <= map_fail:
                self.map_ended(kind == map_done, task, slot)
            elif kind == shuffle_done:
                self.shuffle_ended(task, slot)
            else:
                self.reduce_ended(kind == REDUCE_DONE, task, slot)
            if sharing is not None and sharing.dirty:  # the maps of a node whose count changed, re-rated
                moved = sharing.reprice(now=now, seq=self.seq)
                for ev in moved:
                    heapq.heappush(heap, ev)
                self.seq += len(moved)
            seq, maps_done, launched = self.seq, self.maps_done, self.reduces_launched
        return SimRun(now, events, tuple(self.attempts))

    def push(self, t: float, kind: int, task: int, slot: int) -> None:
        heapq.heappush(self.heap, (t, self.seq, kind, task, slot))
        self.seq += 1

    def start_maps(self, batch: list[tuple[int, int]]) -> None:
        """Start maps (task, slot) at once: where the nodes' cores are shared, each is priced with all of
        the batch running (the maps of one instant share the cores alike)."""
        if self.sharing is not None:
            for _, slot in batch:
                self.sharing.join(slot)
        for task, slot in batch:
            heapq.heappush(self.heap, self.map_event(task, slot))

    def map_event(self, task: int, slot: int) -> tuple[float, int, int, int, int]:
        """Start map ``task`` on ``slot``: its end event (the caller puts it on the heap; where the nodes'
        cores are shared, :meth:`start_maps` has counted it among its node's running maps)."""
        tries = self.map_tries[task]
        if tries == 0:
            d, failed = self.first_map[task], self.first_fail[task]
        else:
            job = self.job
            d, failed = _dur(job.map_means_ms[task], job.map_cv, self.py, job, may_fail=tries + 1 < job.max_attempts)
        self.map_tries[task] = tries + 1
        if self.sharing is not None:  # the node's cores shared with the maps running there
            kind = MAP_FAIL if failed else MAP_DONE
            d = self.sharing.start(task, slot, now=self.now, demand=d, kind=kind, seq=self.seq)
        if self.record:
            self.started[task] = (self.now, slot // self.job.map_slots_per_node)
        self.seq += 1
        return (self.now + d, self.seq - 1, MAP_FAIL if failed else MAP_DONE, task, slot)

    def start_reduces(self) -> None:
        job, now = self.job, self.now
        while self.red_slots and self.red_queue:
            task, slot = self.red_queue.pop(), self.red_slots.pop()
            self.red_tries[task] += 1
            if self.record:
                per_node = job.map_slots_per_node if self.shared else job.reduce_slots_per_node
                self.started[-1 - task] = (now, slot // per_node)
            if self.maps_done < self.n_maps:
                self.waiting[task] = slot
            else:  # the first wave, launched as the map stage ends, only has the tail left
                dist = job.first_shuffle if self.first_wave else job.shuffle
                d, _ = _dur(dist.mean_ms, dist.cv, self.py, job)
                self.push(now + d, SHUFFLE_DONE, task, slot)

    def map_ended(self, ok: bool, task: int, slot: int) -> None:
        """A map attempt ends: retried if it failed, else its slot takes the next map; reduces may start."""
        heap, now, job = self.heap, self.now, self.job
        if self.sharing is not None:  # (a failed map is retried at once on its container)
            self.sharing.leave(task, slot, ended=ok)
        if self.record:
            t0, node = self.started.pop(task)
            self.attempts.append(Attempt("MAP", task, self.map_tries[task] - 1, node, t0, now, ok))
        if not ok:  # retried at once, on the slot it freed
            heapq.heapreplace(heap, self.map_event(task, slot))
        elif self.map_queue and not self.shared:  # the freed slot takes the next map at once
            self.maps_done += 1
            heapq.heapreplace(heap, self.map_event(self.map_queue.pop(), slot))
        else:  # the slot is free (shared containers: for fill_containers to give out)
            heapq.heappop(heap)
            self.maps_done += 1
            if self.maps_done == self.n_maps:
                self.end_waiting_shuffles()
            self.map_slots.append(slot)
        if ok and not self.reduces_launched and self.maps_done >= self.need_for_reduces:
            self.reduces_launched = True
            self.red_queue = list(range(job.n_reduces))[::-1]
        if self.shared:
            if ok:
                self.fill_containers()
        elif self.red_queue and self.red_slots:
            self.start_reduces()

    def end_waiting_shuffles(self) -> None:
        """The last map ended: every reduce shuffling beside the maps has its first-shuffle tail left."""
        job = self.job
        for r, r_slot in self.waiting.items():
            tail, _ = _dur(job.first_shuffle.mean_ms, job.first_shuffle.cv, self.py, job)
            self.push(self.now + tail, SHUFFLE_DONE, r, r_slot)
        self.waiting.clear()

    def fill_containers(self) -> None:
        """Shared containers: the free ones go to the reduces the ApplicationMaster allows (a reduce's
        request has the higher priority), then to waiting maps."""
        job = self.job
        maps: list[tuple[int, int]] = []
        while self.map_slots:
            allowed = reduces_allowed(
                self.containers, self.n_maps, self.maps_done, len(self.map_queue), job.n_reduces, job.rampup_limit
            )
            if self.red_queue and self.red_running < allowed:
                self.red_slots.append(self.map_slots.pop())
                self.red_running += 1
                self.start_reduces()
            elif self.map_queue:
                maps.append((self.map_queue.pop(), self.map_slots.pop()))
            else:
                break
        self.start_maps(maps)

    def shuffle_ended(self, task: int, slot: int) -> None:
        """A reduce's shuffle ends: its reduce phase starts on the same slot."""
        job = self.job
        may_fail = self.red_tries[task] < job.max_attempts
        d, failed = _dur(job.reduce.mean_ms, job.reduce.cv, self.py, job, may_fail=may_fail)
        self.red_phase[task] = self.now
        heapq.heapreplace(self.heap, (self.now + d, self.seq, REDUCE_FAIL if failed else REDUCE_DONE, task, slot))
        self.seq += 1

    def reduce_ended(self, ok: bool, task: int, slot: int) -> None:
        """A reduce attempt ends: its slot is free (a failed reduce queued again), the next reduces start."""
        heapq.heappop(self.heap)
        self.first_wave = False
        if self.shared:  # the container returns to the pool
            self.red_running -= 1
            self.map_slots.append(slot)
        else:
            self.red_slots.append(slot)
        if self.record:
            t0, node = self.started.pop(-1 - task)
            self.attempts.append(
                Attempt("REDUCE", task, self.red_tries[task] - 1, node, t0, self.now, ok, self.red_phase.get(task))
            )
        self.red_phase.pop(task, None)
        if not ok:
            self.red_queue.append(task)
        if self.shared:
            self.fill_containers()
        else:
            self.start_reduces()
