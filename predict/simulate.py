"""Discrete-event simulation of a MapReduce job, with prediction intervals.

The simulator replays a job on a cluster of map and reduce slots, attempt by attempt, by the
rules :mod:`predict.sim_events` lists.

Task durations are drawn per attempt from each stage's distribution: the mean
is the Zhang et al. 2013 (section 5) estimate for the new dataset
(:func:`predict.tasks.estimate_tasks`), the spread the profile's: a lognormal
whose standard deviation makes the expected maximum of the profiled ``count``
attempts equal the profiled maximum (``sd = (max - avg) / sqrt(2 ln count)``,
the normal approximation of the expected maximum).  Many seeded replications
give the completion-time distribution; its quantiles are ``low_s``/``high_s``
at the stated confidence.

The event loop is :func:`predict.sim_events.simulate_once` (why ``heapq``, not simpy: there).

A prediction's replications of a job whose attempts never fail (the default:
``failure_rate`` 0) skip the event loop's map stage: every map's first
attempt is its only one, so the stage is the slots' running sums, scheduled
for all replications at once (:func:`_map_stage_ends`), and only the reduces
go through a heap per replication.  Same draws, same floats: the makespans
and event counts are the event loop's bit for bit
(tests/predict/test_simulate_batched.py).  The 50 GiB, 240-reduce, 64-node case of
``benchmarks/bench_predict.py`` (200 replications of 25,660 events) went from
4.7 to 0.7 CPU seconds, and to 0.3 with the map stage scheduled by rounds (:func:`_map_stage_rounds`).
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass

import numpy as np

from phaseline.errors import PredictionError
from predict.core import (
    MS_PER_S,
    Inputs,
    Model,
    Prediction,
    register,
)
from predict.measured_on import task_cores
from predict.sim_draws import normals, stream_drawer
from predict.sim_events import (
    REDUCE_DONE,
    SHUFFLE_DONE,
    Attempt,
    SimJob,
    SimResult,
    SimRun,
    StageDist,
    drawer,
    first_attempts,
    simulate_once,
)
from predict.sim_job import shares_cores, sim_job
from predict.tasks import estimate_tasks

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
        every = active.size == reps  # (most rounds: no replication done yet, no gather nor scatter)
        f, at = (free, placed) if every else (free[active], placed[active])
        idx = (active * n + at)[:, None] + lane  # the next maps; past a replication's last, its last
        if int(at.max()) + slots > n:
            np.minimum(idx, (active * n + n - 1)[:, None], out=idx)
        new = f + flat[idx]
        ok = np.empty(f.shape, dtype=bool)
        ok[:, 0] = True
        np.less_equal(f[:, 1:], np.minimum.accumulate(new, axis=1)[:, :-1], out=ok[:, 1:])
        ok &= lane < (n - at)[:, None]
        take = np.where(ok.all(axis=1), slots, ok.argmin(axis=1))
        f = np.where(lane < take[:, None], new, f)
        f.sort(axis=1)
        if every:
            free, placed = f, at + take
        else:
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
    stages = (job.first_shuffle, job.shuffle, job.reduce)
    if job.straggler_rate == 0:  # every draw the next normal of one stream: at most a shuffle and a reduce each
        stream = iter(normals(py, 2 * n_red))
        first, shuffle, reduce = (stream_drawer(d, stream) for d in stages)
    else:
        first, shuffle, reduce = (drawer(d, py, job) for d in stages)
    heap: list[tuple[float, int, int, int]] = []
    seq = 0
    for task in range(min(job.nodes * job.reduce_slots_per_node, n_red)):
        d = first()
        heap.append((now + d, seq, SHUFFLE_DONE, task))
        seq += 1
    heapq.heapify(heap)
    following = len(heap)
    events = 0
    while heap:
        now, _, kind, task = heap[0]
        events += 1
        if kind == SHUFFLE_DONE:
            heapq.heapreplace(heap, (now + reduce(), seq, REDUCE_DONE, task))
        else:
            heapq.heappop(heap)
            if following == n_red:
                continue
            heapq.heappush(heap, (now + shuffle(), seq, SHUFFLE_DONE, following))
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
        durations[r] = first_attempts(job, rng, means)[0]
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
    if job.failure_rate == 0.0 and not job.shared_containers:  # the maps of all replications at once
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


@dataclass(frozen=True, slots=True)
class SimulationModel(Model):
    """Seeded discrete-event replications: mean completion time and a ``confidence`` interval."""

    name: str = "simulation"
    replications: int = DEFAULT_REPLICATIONS
    confidence: float = DEFAULT_CONFIDENCE
    seed: int = DEFAULT_SEED
    failure_rate: float = 0.0
    straggler_rate: float = 0.0

    def predict_inputs(self, inputs: Inputs) -> Prediction:
        """Mean of the replications' makespans; ``low_s``/``high_s`` their central ``confidence`` interval."""
        profile, platform, dataset, settings = inputs.profile, inputs.platform, inputs.dataset, inputs.settings
        cluster, cores_said = task_cores(platform, inputs.cluster)  # the cores the replay's maps share
        tasks = estimate_tasks(
            profile, platform, dataset, settings, cluster=cluster, demand_only=shares_cores(profile, cluster)
        )
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
                *([cores_said] if cores_said is not None else []),
            ),
        )
        return prediction


register(SimulationModel())
