"""Discrete-event simulation of a MapReduce job, with prediction intervals.

The simulator replays a job on a cluster of ``nodes`` with map and reduce
slots per node (Hadoop 1 slots; a YARN node's containers play the same role):

* map tasks wait in a queue, largest split first (Hadoop's ``JobSubmitter``
  order), and run in waves on the free map slots;
* reduce slow start: reduces are launched once ``slowstart`` of the maps have
  finished (``mapreduce.job.reduce.slowstart.completedmaps``; 1.0 for the
  LocalJobRunner, which has none);
* the shuffle overlaps the map stage: a first-wave reduce (launched while
  maps run, or as the map stage ends) ends its shuffle a first-shuffle tail
  after the last map (ARIA's first shuffle, Verma et al. 2011: the part that
  does not overlap the map stage); a later reduce shuffles for a whole
  typical shuffle;
* stragglers: with probability ``straggler_rate`` an attempt runs
  ``straggler_factor`` times longer; failed attempts: with probability
  ``failure_rate`` an attempt dies after a uniform fraction of its run and the
  task is queued again.  JobProfile records no failure or straggler counts, so
  both are parameters (0 by default) that the caller sets from the trace.

Task durations are drawn per attempt from each stage's distribution: the mean
is the Zhang et al. 2013 (section 5) estimate for the new dataset
(:func:`predict.tasks.estimate_tasks`), the spread the profile's: a lognormal
whose standard deviation makes the expected maximum of the profiled ``count``
attempts equal the profiled maximum (``sd = (max - avg) / sqrt(2 ln count)``,
the normal approximation of the expected maximum).  Many seeded replications
give the completion-time distribution; its quantiles are ``low_s``/``high_s``
at the stated confidence.

Engine: a heap-based event loop (``heapq``), not simpy.  Measured with
``benchmarks/bench_simulate.py`` (CPU seconds, this repository's shared
2-core machine): the simulator replays a 100,000-map, 1,000-reduce job at
about 850,000-940,000 events/s (520,000-740,000 before an event that
schedules one other replaced itself on the heap, side by side on the same
seeds, identical replays), while the bare slot-scheduling loop written with
simpy processes on a ``simpy.Resource`` manages 36,000-56,000 events/s -- an
order of magnitude less before any MapReduce logic.  SimMR's > 1 million
events/s replay (compiled code) is the anchor.

A prediction's replications of a job whose attempts never fail (the default:
``failure_rate`` 0) skip the event loop's map stage: every map's first
attempt is its only one, so the stage is the slots' running sums, scheduled
for all replications at once (:func:`_map_stage_ends`), and only the reduces
go through a heap per replication.  Same draws, same floats: the makespans
and event counts are the event loop's bit for bit
(tests/test_simulate_batched.py).  The 50 GiB, 240-reduce, 64-node case of
``benchmarks/bench_predict.py`` (200 replications of 25,660 events) went from
4.7 to 0.7 CPU seconds.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from phaseline.errors import PredictionError
from predict.core import (
    MS_PER_S,
    Cluster,
    Dataset,
    JobSettings,
    PhaseDurationModel,
    Prediction,
    register,
)
from predict.critical_path import spread_durations
from predict.tasks import TaskEstimates, estimate_tasks
from profiles.profile import DurationStats, JobProfile, Stage

__all__ = [
    "Attempt",
    "SimJob",
    "SimResult",
    "SimRun",
    "SimulationModel",
    "StageDist",
    "replicate",
    "sim_job",
    "simulate_once",
]

#: Replications per prediction and the confidence of the interval the model reports.
DEFAULT_REPLICATIONS = 200
DEFAULT_CONFIDENCE = 0.90
DEFAULT_SEED = 20120823
#: A prediction's replications stop at about this many events in all (about 12 s at 850,000
#: events/s), but never below MIN_REPLICATIONS: a 100,000-map job is replayed 61 times, not 200.
EVENT_BUDGET = 10_000_000
MIN_REPLICATIONS = 50
#: Jobs of more events a replication are refused (MIN_REPLICATIONS of them: about a minute).
MAX_REPLICATION_EVENTS = 1_000_000

_MAP_DONE, _MAP_FAIL, _SHUFFLE_DONE, _REDUCE_DONE, _REDUCE_FAIL = range(5)


@dataclass(frozen=True, slots=True)
class StageDist:
    """Per-attempt duration of one stage: lognormal with mean ``mean_ms`` and coefficient of variation ``cv``."""

    mean_ms: float
    cv: float = 0.0

    def __post_init__(self) -> None:
        if not (
            math.isfinite(self.mean_ms) and self.mean_ms >= 0 and math.isfinite(self.cv) and self.cv >= 0
        ):
            raise PredictionError(f"a stage distribution needs mean >= 0 and cv >= 0, got {self}")

    @classmethod
    def from_stats(cls, mean_ms: float, stats: DurationStats | None) -> StageDist:
        """Mean ``mean_ms`` with the profiled spread: ``sd = (max - avg) / sqrt(2 ln count)``."""
        if stats is None or stats.count < 2 or stats.avg_ms <= 0:
            return cls(mean_ms, 0.0)
        sd = (stats.max_ms - stats.avg_ms) / math.sqrt(2 * math.log(stats.count))
        return cls(mean_ms, sd / stats.avg_ms)


@dataclass(frozen=True, slots=True)
class SimJob:
    """What the simulator replays: task counts, per-stage distributions, cluster and scheduling."""

    map_means_ms: tuple[float, ...]  # per map task, in launch order
    map_cv: float
    n_reduces: int
    first_shuffle: StageDist  # tail of a shuffle that overlaps the map stage
    shuffle: StageDist  # a whole shuffle (reduce launched after the maps)
    reduce: StageDist  # reduce phase after the shuffle
    nodes: int
    map_slots_per_node: int
    reduce_slots_per_node: int
    slowstart: float = 0.05
    straggler_rate: float = 0.0
    straggler_factor: float = 1.5
    failure_rate: float = 0.0
    max_attempts: int = 4
    #: Run-to-run variation of the environment: each replication's durations are all scaled
    #: by one factor of this coefficient of variation (0: none), see :func:`replicate`.
    env_cv: float = 0.0
    #: How many runs ``env_cv`` was measured on (0 or 1: taken as known exactly).
    env_runs: int = 0

    def __post_init__(self) -> None:
        if (
            not self.map_means_ms
            or self.nodes < 1
            or self.map_slots_per_node < 1
            or self.reduce_slots_per_node < 1
        ):
            raise PredictionError("a simulated job needs >= 1 map task, node, map slot and reduce slot")
        for name in ("slowstart", "straggler_rate", "failure_rate"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise PredictionError(f"{name} must be within [0, 1], got {getattr(self, name)}")
        if not (math.isfinite(self.env_cv) and self.env_cv >= 0):
            raise PredictionError(f"env_cv must be a finite number >= 0, got {self.env_cv}")
        if self.env_runs < 0:
            raise PredictionError(f"env_runs must be >= 0, got {self.env_runs}")
        if self.failure_rate >= 1.0 or self.straggler_factor < 1.0 or self.max_attempts < 1:
            raise PredictionError("need failure_rate < 1, straggler_factor >= 1 and max_attempts >= 1")


@dataclass(frozen=True, slots=True)
class Attempt:
    """One simulated task attempt (ms from job start); ``shuffle_end_ms`` only for reduces."""

    task_type: str  # "MAP" or "REDUCE"
    task: int
    attempt: int
    node: int
    start_ms: float
    end_ms: float
    succeeded: bool
    shuffle_end_ms: float | None = None


@dataclass(frozen=True, slots=True)
class SimRun:
    """One replication: the makespan (ms), how many events it took, the attempts if recorded."""

    makespan_ms: float
    events: int
    attempts: tuple[Attempt, ...] = ()


@dataclass(frozen=True, slots=True)
class SimResult:
    """Replications' makespans (s) and the interval at ``confidence``.

    ``mean_s`` is the replays' mean before any run-to-run factor (the estimate:
    the factor widens the interval, it does not move the centre; a Student t
    factor's exponential has no finite mean to estimate).
    """

    makespans_s: np.ndarray = field(repr=False)
    confidence: float
    events: int
    mean_s: float

    @property
    def interval_s(self) -> tuple[float, float]:
        tail = (1 - self.confidence) / 2
        lo, hi = np.quantile(self.makespans_s, [tail, 1 - tail])
        return float(lo), float(hi)


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


def _drawer(dist: StageDist, py: random.Random, job: SimJob) -> Callable[[], float]:
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


def _first_attempts(
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
    py = random.Random(int(rng.integers(2**62)))
    n_maps, n_red = len(job.map_means_ms), job.n_reduces
    # a freed slot is taken again first, so no more slots than tasks are ever used (the lowest
    # numbered): a cluster of a million nodes needs no list of its slots
    map_slots = list(range(min(job.nodes * job.map_slots_per_node, n_maps)))[::-1]
    red_slots = list(range(min(job.nodes * job.reduce_slots_per_node, n_red)))[::-1]
    heap: list[tuple[float, int, int, int, int]] = []
    seq = 0
    map_queue = list(range(n_maps))[::-1]  # pop() from the end = task 0 first
    map_tries = [0] * n_maps
    red_queue: list[int] = []
    red_tries = [0] * n_red
    started: dict[int, tuple[float, int]] = {}  # running attempt: (start, node), when recording
    waiting: dict[int, int] = {}  # reduces shuffling while maps run: task -> slot
    first_wave = True  # until the first reduce attempt ends
    red_phase: dict[int, float] = {}  # reduce task -> its shuffle's end
    attempts: list[Attempt] = []
    maps_done, reduces_launched, reduces_done = 0, False, 0
    need_for_reduces = max(1, math.ceil(job.slowstart * n_maps)) if n_red else n_maps + 1
    now, events = 0.0, 0
    rs_map, rs_red = job.map_slots_per_node, job.reduce_slots_per_node
    first_d, first_f = _first_attempts(job, rng)  # drawn at once: most tasks never retry
    first_map, first_fail = first_d.tolist(), first_f.tolist()
    max_tries, map_cv, means = job.max_attempts, job.map_cv, job.map_means_ms
    heappush, heappop, heapreplace = heapq.heappush, heapq.heappop, heapq.heapreplace

    def push(t: float, kind: int, task: int, slot: int) -> None:
        nonlocal seq
        heappush(heap, (t, seq, kind, task, slot))
        seq += 1

    def map_event(task: int, slot: int) -> tuple[float, int, int, int, int]:
        """Start map ``task`` on ``slot``: its end event (the caller puts it on the heap)."""
        nonlocal seq
        tries = map_tries[task]
        if tries == 0:
            d, failed = first_map[task], first_fail[task]
        else:
            d, failed = _dur(means[task], map_cv, py, job, may_fail=tries + 1 < max_tries)
        map_tries[task] = tries + 1
        if record:
            started[task] = (now, slot // rs_map)
        seq += 1
        return (now + d, seq - 1, _MAP_FAIL if failed else _MAP_DONE, task, slot)

    def start_reduces() -> None:
        while red_slots and red_queue:
            task, slot = red_queue.pop(), red_slots.pop()
            red_tries[task] += 1
            if record:
                started[-1 - task] = (now, slot // rs_red)
            if maps_done < n_maps:
                waiting[task] = slot
            else:  # the first wave, launched as the map stage ends, only has the tail left
                dist = job.first_shuffle if first_wave else job.shuffle
                d, _ = _dur(dist.mean_ms, dist.cv, py, job)
                push(now + d, _SHUFFLE_DONE, task, slot)

    while map_slots and map_queue:
        heappush(heap, map_event(map_queue.pop(), map_slots.pop()))
    map_done, map_fail, shuffle_done = _MAP_DONE, _MAP_FAIL, _SHUFFLE_DONE
    while heap:
        now, _, kind, task, slot = heap[0]  # taken off the heap below: popped, or replaced
        events += 1
        if (
            kind == map_done
            and map_queue
            and not record
            and (reduces_launched or maps_done + 1 < need_for_reduces)
            and not (red_queue and red_slots)
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
        if kind <= map_fail:
            ok = kind == map_done
            if record:
                t0, node = started.pop(task)
                attempts.append(Attempt("MAP", task, map_tries[task] - 1, node, t0, now, ok))
            if not ok:  # retried at once, on the slot it freed
                heapreplace(heap, map_event(task, slot))
            elif map_queue:  # the freed slot takes the next map at once
                maps_done += 1
                heapreplace(heap, map_event(map_queue.pop(), slot))
            else:
                heappop(heap)
                maps_done += 1
                if maps_done == n_maps:
                    for r, r_slot in waiting.items():
                        tail, _ = _dur(job.first_shuffle.mean_ms, job.first_shuffle.cv, py, job)
                        push(now + tail, _SHUFFLE_DONE, r, r_slot)
                    waiting.clear()
                map_slots.append(slot)
            if ok and not reduces_launched and maps_done >= need_for_reduces:
                reduces_launched = True
                red_queue = list(range(n_red))[::-1]
            if red_queue and red_slots:
                start_reduces()
        elif kind == shuffle_done:
            d, failed = _dur(job.reduce.mean_ms, job.reduce.cv, py, job, may_fail=red_tries[task] < max_tries)
            red_phase[task] = now
            heapreplace(heap, (now + d, seq, _REDUCE_FAIL if failed else _REDUCE_DONE, task, slot))
            seq += 1
        else:
            heappop(heap)
            first_wave = False
            red_slots.append(slot)
            ok = kind == _REDUCE_DONE
            if record:
                t0, node = started.pop(-1 - task)
                attempts.append(
                    Attempt("REDUCE", task, red_tries[task] - 1, node, t0, now, ok, red_phase.get(task))
                )
            red_phase.pop(task, None)
            if ok:
                reduces_done += 1
            else:
                red_queue.append(task)
            start_reduces()
    return SimRun(now, events, tuple(attempts))


#: Cost model of the three ways :func:`_map_stage_ends` schedules the maps (microseconds, measured on
#: this repository's 2-core machine): a numpy step over every replication's slots at once costs
#: about ``_NP_STEP_US + _NP_CELL_US`` per slot and replication; a heapq step about ``_HEAP_STEP_US``
#: per replication; a round (every replication's next maps given to its slots in order of their
#: free times, :func:`_map_stage_rounds`) ``_ROUND_US + _ROUND_CELL_US`` per slot and replication.
#: Replications are scheduled together in blocks of at most ``_BLOCK_CELLS`` draws.
_NP_STEP_US, _NP_CELL_US, _HEAP_STEP_US = 4.0, 4e-4, 0.25
_ROUND_US, _ROUND_CELL_US = 45.0, 0.017
_BLOCK_CELLS = 8_000_000


def _map_stage_ends(durations: np.ndarray, slots: int) -> np.ndarray:
    """When each replication's last map ends: maps in order, each on the slot that frees first.

    ``durations`` holds one replication's first attempts per row (no attempt
    fails).  The event loop's answer exactly: a map starts when a slot frees,
    at that slot's time, so each slot's end is the same running sum of the same
    floats; which of two slots freed at the same instant takes a map changes
    no time.  Three ways, the cheapest by :data:`_NP_STEP_US` and its peers: a
    numpy step per map over every replication (the earliest slot of each row),
    a ``heapq`` loop per replication, or rounds (:func:`_map_stage_rounds`),
    whose count the first replication's rounds foretell.
    """
    reps, n = durations.shape
    if n <= slots:
        return np.asarray(durations.max(axis=1), dtype=np.float64)
    steps = n - slots
    by_step = steps * (_NP_STEP_US + _NP_CELL_US * reps * slots)
    by_heap = steps * _HEAP_STEP_US * reps
    if min(by_step, by_heap) > _ROUND_US + _ROUND_CELL_US * reps * slots:  # rounds may be cheaper: count them
        pilot, rounds = _map_stage_rounds(durations[:1], slots)
        if rounds * (_ROUND_US + _ROUND_CELL_US * reps * slots) < min(by_step, by_heap):
            return pilot if reps == 1 else _map_stage_rounds(durations, slots)[0]
    if by_step < by_heap:
        free = durations[:, :slots].copy()
        flat = free.reshape(-1)
        base = np.arange(reps) * slots
        for col in np.ascontiguousarray(durations[:, slots:].T):
            idx = free.argmin(axis=1)
            idx += base
            flat[idx] += col
        return np.asarray(free.max(axis=1), dtype=np.float64)
    out = np.empty(reps)
    heapify, heapreplace = heapq.heapify, heapq.heapreplace
    for r in range(reps):
        row = durations[r].tolist()
        heap = row[:slots]
        heapify(heap)
        for d in row[slots:]:
            heapreplace(heap, heap[0] + d)
        out[r] = max(heap)
    return out


def _map_stage_rounds(durations: np.ndarray, slots: int) -> tuple[np.ndarray, int]:
    """:func:`_map_stage_ends` by rounds: (each replication's last map end, the rounds it took).

    Each replication keeps its slots' free times sorted.  A round gives its
    next maps to the slots in that order, the i-th map to the i-th earliest
    slot, for as long as the event loop would: while that slot frees no later
    than every slot given a map this round (``free[i] <= min(free[j] + d[j]
    for j < i)``); the first map past that starts the next round.  A map's
    end is the same sum of the same floats as in the event loop.  Slots are
    interchangeable, so only their sorted free times are kept.  A round costs
    a sort of every replication's slots, against a numpy step per map: worth
    it while rounds place many maps (the slots free in a spread narrower than
    a map's duration: waves of alike maps).
    """
    reps, n = durations.shape
    flat = durations.reshape(-1)
    free = np.sort(durations[:, :slots], axis=1)
    placed = np.full(reps, slots)  # maps placed per replication
    lane = np.arange(slots)
    active = np.arange(reps)
    rounds = 0
    while active.size:
        rounds += 1
        f, at = free[active], placed[active]
        new = f + flat[(active * n)[:, None] + np.minimum(at[:, None] + lane, n - 1)]
        ok = np.empty(f.shape, dtype=bool)
        ok[:, 0] = True
        np.less_equal(f[:, 1:], np.minimum.accumulate(new, axis=1)[:, :-1], out=ok[:, 1:])
        ok &= lane < (n - at)[:, None]
        take = np.where(ok.all(axis=1), slots, ok.argmin(axis=1))
        f = np.where(lane < take[:, None], new, f)
        f.sort(axis=1)
        free[active] = f
        placed[active] = at + take
        active = active[placed[active] < n]
    return np.asarray(free.max(axis=1), dtype=np.float64), rounds


def _reduce_stage(job: SimJob, py: random.Random, now: float) -> tuple[float, int]:
    """The rest of a replay without failures from the last map's end ``now``: (makespan, events).

    :func:`simulate_once`'s reduce events, in its order and with its draws:
    the first wave (launched during the map stage, or at its end) has the
    first-shuffle tail left; each reduce's end frees its slot for the next
    reduce, which shuffles for a whole typical shuffle.
    """
    n_red = job.n_reduces
    if n_red == 0:
        return now, 0
    first, shuffle, reduce = (_drawer(d, py, job) for d in (job.first_shuffle, job.shuffle, job.reduce))
    heap: list[tuple[float, int, int, int]] = []
    seq = 0
    for task in range(min(job.nodes * job.reduce_slots_per_node, n_red)):
        d = first()
        heap.append((now + d, seq, _SHUFFLE_DONE, task))
        seq += 1
    heapq.heapify(heap)
    following = len(heap)
    events = 0
    while heap:
        now, _, kind, task = heap[0]
        events += 1
        if kind == _SHUFFLE_DONE:
            heapq.heapreplace(heap, (now + reduce(), seq, _REDUCE_DONE, task))
        else:
            heapq.heappop(heap)
            if following == n_red:
                continue
            heapq.heappush(heap, (now + shuffle(), seq, _SHUFFLE_DONE, following))
            following += 1
        seq += 1
    return now, events


def _replay_without_failures(job: SimJob, rng: np.random.Generator, replications: int) -> list[SimRun]:
    """``replications`` replays of a job whose attempts never fail, as :func:`simulate_once` gives them.

    The same draws in the same order (each replication's seed for its scalar
    draws, then its maps' first attempts), the map stage of all of them
    scheduled at once (:func:`_map_stage_ends`), then each one's reduces.
    """
    means = np.asarray(job.map_means_ms)
    n_maps = means.size
    seeds: list[int] = []
    durations = np.empty((replications, n_maps))
    for r in range(replications):
        seeds.append(int(rng.integers(2**62)))
        durations[r] = _first_attempts(job, rng, means)[0]
    ends = _map_stage_ends(durations, min(job.nodes * job.map_slots_per_node, n_maps))
    runs = []
    for seed, end in zip(seeds, ends.tolist(), strict=True):
        makespan, events = _reduce_stage(job, random.Random(seed), end)
        runs.append(SimRun(makespan, n_maps + events))
    return runs


def replicate(
    job: SimJob,
    *,
    replications: int = DEFAULT_REPLICATIONS,
    seed: int = DEFAULT_SEED,
    confidence: float = DEFAULT_CONFIDENCE,
) -> SimResult:
    """Run ``replications`` seeded replays; the same seed gives the same result.

    With ``job.env_cv`` each replication's makespan is multiplied by its own
    environment factor: scaling every duration of a replay by one factor scales
    every event time, hence the makespan, by it (the schedule keeps its order).
    The factor is lognormal with that CV; when the CV was measured on
    ``job.env_runs`` = n >= 2 runs, its log is Student t with n - 1 degrees of
    freedom times ``sqrt(1 + 1/n)`` instead (the predictive distribution of
    another run, as :meth:`profiles.profile.JobProfile.run_interval` gives the
    bounds): three runs say little about the spread itself.  On the stored full
    backtests the 90 % interval then covers 100, 90 and 85 % of the cases (was
    90, 75 and 65 %), at a median width of 97, 57 and 50 % of the measured time.
    The estimate (:attr:`SimResult.mean_s`) is the replays' mean before the factor.
    """
    if replications < 2 or not 0 < confidence < 1:
        raise PredictionError("need >= 2 replications and a confidence within (0, 1)")
    rng = np.random.default_rng(seed)
    spans = np.empty(replications)
    events = 0
    if job.failure_rate == 0.0:  # no retries: the maps of all replications are scheduled together
        block = max(1, _BLOCK_CELLS // len(job.map_means_ms))
        runs = []
        for lo in range(0, replications, block):
            runs += _replay_without_failures(job, rng, min(block, replications - lo))
    else:
        runs = [simulate_once(job, rng) for _ in range(replications)]
    for i, run in enumerate(runs):
        spans[i] = run.makespan_ms / MS_PER_S
        events += run.events
    replayed = float(spans.mean())
    if job.env_cv > 0:
        sigma2 = math.log1p(job.env_cv**2)
        env_rng = np.random.default_rng([seed, 1])
        if job.env_runs >= 2:
            # the CV is a sample's (n runs): another run's log factor is Student t (n - 1), widened by sqrt(1 + 1/n)
            n = job.env_runs
            shock = env_rng.standard_t(n - 1, replications) * math.sqrt(sigma2 * (1.0 + 1.0 / n))
            env = np.exp(shock - sigma2 / 2)
        else:
            env = env_rng.lognormal(-sigma2 / 2, math.sqrt(sigma2), replications)
        spans *= env
    return SimResult(spans, confidence, events, replayed)


def sim_job(
    profile: JobProfile, tasks: TaskEstimates, cluster: Cluster, settings: JobSettings, **rates: float
) -> SimJob:
    """The simulated job for Zhang et al. 2013 task estimates, with the profile's spread per stage."""
    map_stats = profile.stage(Stage.MAP_TASK)
    map_cv = StageDist.from_stats(tasks.map_avg.total_ms, map_stats).cv
    reduce_ms = tasks.reduce_avg.total_ms if tasks.reduce_avg is not None else 0.0
    return SimJob(
        map_means_ms=spread_durations(tasks.n_maps, tasks.map_avg.total_ms, tasks.map_max.total_ms),
        map_cv=map_cv,
        n_reduces=tasks.n_reduces,
        first_shuffle=StageDist.from_stats(tasks.first_shuffle_avg_ms, profile.stage(Stage.FIRST_SHUFFLE)),
        shuffle=StageDist.from_stats(tasks.shuffle_avg_ms, profile.stage(Stage.TYPICAL_SHUFFLE)),
        reduce=StageDist.from_stats(reduce_ms, profile.stage(Stage.REDUCE_PHASE)),
        nodes=cluster.nodes,
        map_slots_per_node=cluster.map_slots_per_node,
        reduce_slots_per_node=cluster.reduce_slots_per_node,
        slowstart=settings.slowstart,
        **rates,  # type: ignore[arg-type]
    )


@dataclass(frozen=True, slots=True)
class SimulationModel:
    """Seeded discrete-event replications: mean completion time and a ``confidence`` interval."""

    name: str = "simulation"
    replications: int = DEFAULT_REPLICATIONS
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = DEFAULT_SEED
    failure_rate: float = 0.0
    straggler_rate: float = 0.0

    def predict(
        self,
        profile: JobProfile,
        platform: PhaseDurationModel,
        cluster: Cluster,
        dataset: Dataset,
        settings: JobSettings,
    ) -> Prediction:
        """Mean of the replications' makespans; ``low_s``/``high_s`` their central ``confidence`` interval."""
        tasks = estimate_tasks(profile, platform, dataset, settings)
        events = tasks.n_maps + 2 * tasks.n_reduces  # of one replication without failures
        if events > MAX_REPLICATION_EVENTS:
            raise PredictionError(
                f"{tasks.n_maps:,} maps and {tasks.n_reduces:,} reduces: {events:,} events a replication, over "
                f"the {MAX_REPLICATION_EVENTS:,} that {MIN_REPLICATIONS} replications replay in about a minute; "
                "check the split size"
            )
        env_cv = profile.run_cv() or 0.0
        job = sim_job(
            profile,
            tasks,
            cluster,
            settings,
            failure_rate=self.failure_rate,
            straggler_rate=self.straggler_rate,
            env_cv=env_cv,
            env_runs=len(profile.makespans_ms) if env_cv > 0 else 0,
        )
        reps = max(min(self.replications, EVENT_BUDGET // max(events, 1)), min(MIN_REPLICATIONS, self.replications))
        res = replicate(job, replications=reps, seed=self.seed, confidence=self.confidence)
        lo, hi = res.interval_s
        mean = res.mean_s
        prediction = Prediction(
            model=self.name,
            seconds=mean,
            low_s=min(lo, mean),
            high_s=max(hi, mean),
            stages={
                "p05": float(np.quantile(res.makespans_s, 0.05)),
                "median": float(np.median(res.makespans_s)),
                "p95": float(np.quantile(res.makespans_s, 0.95)),
            },
            dataflow={
                "maps": float(tasks.n_maps),
                "reduces": float(tasks.n_reduces),
                "replications": float(reps),
                "events": float(res.events),
                "map_cv": job.map_cv,
                "env_cv": env_cv,
            },
            assumptions=(
                *tasks.assumptions,
                f"{reps} seeded replications (seed {self.seed})"
                + (f", not {self.replications}: {events:,} events each" if reps < self.replications else "")
                + f"; interval = central {self.confidence:.0%} of the simulated completion times",
                "per-attempt durations lognormal: Zhang et al. 2013 mean, profiled spread",
                *(
                    [
                        f"run-to-run variation: each replication scaled by a factor of CV {env_cv:.2f}, "
                        f"Student t on the log for another of the {len(profile.makespans_ms)} profiled runs' makespans"
                    ]
                    if env_cv > 0
                    else []
                ),
            ),
        )
        return prediction


register(SimulationModel())
