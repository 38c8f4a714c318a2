"""What the simulator replays and what a replay gives: a stage's duration law, the job
(:class:`SimJob`: task counts, per-stage laws, the cluster's slots or containers, slow start,
stragglers and failures), an attempt, a replay, the replications' result.  The event loop that
replays a :class:`SimJob` is :mod:`predict.sim_events`; :func:`sim_job` makes one of a prediction's
task estimates."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from phaseline.errors import PredictionError
from phaseline.hadoop_names import YARN_ENGINE
from predict.core import Cluster
from predict.critical_path import spread_durations
from predict.settings import JobSettings
from predict.tasks import TaskEstimates
from profiles.profile import DurationStats, JobProfile, Stage

__all__ = ["Attempt", "SimJob", "SimResult", "SimRun", "StageDist", "shares_cores", "sim_job"]


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
        """Mean ``mean_ms`` with the profiled spread (:attr:`DurationStats.cv`; none without stats)."""
        return cls(mean_ms, 0.0 if stats is None else stats.cv)


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
    #: YARN: maps and reduces share each node's ``map_slots_per_node`` containers, the reduces ramped
    #: up as the maps complete (:func:`~predict.container_allocation.reduces_allowed`); ``reduce_slots_per_node``
    #: unused.
    shared_containers: bool = False
    #: ``yarn.app.mapreduce.am.job.reduce.rampup.limit``: the share of the containers the reduces may
    #: hold while maps wait for one (Hadoop's default 0.5).
    rampup_limit: float = 0.5
    #: Shared containers: each node's cores, which the maps running on it share.  A map's mean is then
    #: its demand alone, slowed as it starts by the share of the cores the node's running maps leave it
    #: (processor sharing, fixed for the attempt); None: the means hold as given.
    cpus_per_node: int | None = None

    def __post_init__(self) -> None:
        if (
            not self.map_means_ms
            or self.nodes < 1
            or self.map_slots_per_node < 1
            or self.reduce_slots_per_node < 1
        ):
            raise PredictionError("a simulated job needs >= 1 map task, node, map slot and reduce slot")
        for name in ("slowstart", "straggler_rate", "failure_rate", "rampup_limit"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise PredictionError(f"{name} must be within [0, 1], got {getattr(self, name)}")
        if not (math.isfinite(self.env_cv) and self.env_cv >= 0):
            raise PredictionError(f"env_cv must be a finite number >= 0, got {self.env_cv}")
        if self.cpus_per_node is not None and (self.cpus_per_node < 1 or not self.shared_containers):
            raise PredictionError("cpus_per_node is for shared containers, and needs >= 1 core")
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


def shares_cores(profile: JobProfile, cluster: Cluster) -> bool:
    """Whether the replay shares each node's cores among the maps running there itself (YARN's shared
    containers, the cores and the profiled map's sharing known): its maps are then their demand alone."""
    return cluster.engine == YARN_ENGINE and cluster.cpus_per_node is not None and profile.map_concurrency is not None


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
        shared_containers=cluster.engine == YARN_ENGINE,
        rampup_limit=settings.reduce_rampup_limit,
        cpus_per_node=cluster.cpus_per_node if shares_cores(profile, cluster) else None,
        **rates,  # type: ignore[arg-type]
    )
