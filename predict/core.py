"""The shared prediction core: inputs, the :class:`Prediction`, the model registry, task estimates.

Every model answers the same question with the same signature::

    predict(profile, platform, cluster, dataset, settings) -> Prediction

and registers itself with :func:`register`; :func:`models` lists them (the
modules in :data:`MODEL_MODULES` are imported on first use, so a new model is
one module plus one line there).

:func:`estimate_tasks` turns a job profile and a platform model into task
durations for a new dataset, as in Zhang et al. 2013, section 5: the generic
phases come from the platform model applied to the data each phase processes
(map output = input x selectivity; shuffle per reduce from eq. 2), the custom
map and reduce phases from per-record costs, plus a per-task overhead; the
average and maximum task durations from the average and maximum split sizes.
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from phaseline.errors import NotFoundError, PredictionError
from phaseline.schemas import Phase
from predict.settings import JobSettings
from profiles.profile import DurationStats, JobProfile, Stage

__all__ = [
    "MODEL_MODULES",
    "Cluster",
    "Dataset",
    "InputShape",
    "JobSettings",
    "PhaseDurationModel",
    "Prediction",
    "Predictor",
    "TaskEstimate",
    "TaskEstimates",
    "estimate_tasks",
    "get",
    "models",
    "register",
    "resolve_input",
]

#: Modules that define and register models; add yours here.
MODEL_MODULES: tuple[str, ...] = ("predict.bounds", "predict.herodotou")

#: Split size assumed when neither the dataset, the settings nor the profile gives one (HDFS 2.x+ default).
DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024

#: Two input sizes within this relative distance are "the same dataset" (the profile's split shape is reused).
SAME_INPUT_RTOL = 0.01


class PhaseDurationModel(Protocol):
    """A platform model (Zhang et al. 2013, section 4): duration of a generic phase for the data it processes.

    ``phase`` is one of the generic :class:`~phaseline.schemas.Phase` names
    (read, collect, spill, merge, shuffle, write); the result is milliseconds.
    """

    def duration_ms(self, phase: str, data_bytes: float) -> float: ...


@dataclass(frozen=True, slots=True)
class Cluster:
    """The cluster a job runs on; the local engine is one node with its map and reduce parallelism."""

    nodes: int
    map_slots_per_node: int
    reduce_slots_per_node: int
    cpus_per_node: int | None = None
    disks_per_node: int | None = None

    def __post_init__(self) -> None:
        for name in ("nodes", "map_slots_per_node", "reduce_slots_per_node"):
            if getattr(self, name) < 1:
                raise PredictionError(f"cluster.{name} must be >= 1, got {getattr(self, name)}")

    @property
    def map_slots(self) -> int:
        return self.nodes * self.map_slots_per_node

    @property
    def reduce_slots(self) -> int:
        return self.nodes * self.reduce_slots_per_node


@dataclass(frozen=True, slots=True)
class Dataset:
    """The new input: its size, and optionally records, split count and split size.

    What is not given is derived in :func:`resolve_input` (and the derivation
    is recorded in the prediction's assumptions).
    """

    input_bytes: float
    input_records: float | None = None
    splits: int | None = None
    split_bytes: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.input_bytes) and self.input_bytes > 0):
            raise PredictionError(f"dataset.input_bytes must be > 0, got {self.input_bytes}")
        if self.splits is not None and self.splits < 1:
            raise PredictionError(f"dataset.splits must be >= 1, got {self.splits}")
        if self.split_bytes is not None and self.split_bytes <= 0:
            raise PredictionError(f"dataset.split_bytes must be > 0, got {self.split_bytes}")


@dataclass(frozen=True, slots=True)
class Prediction:
    """One model's answer.

    ``seconds`` is the completion-time estimate; ``low_s``/``high_s`` the
    model's interval (``None`` where it has none).  ``stages`` and ``phases``
    hold seconds (stages: job-level spans; phases: an average task's phases,
    keyed ``map.read``, ``reduce.shuffle``...).  ``dataflow`` holds counts and
    sizes the model derived (spills, merge passes, shuffle files...).
    """

    model: str
    seconds: float
    low_s: float | None = None
    high_s: float | None = None
    stages: Mapping[str, float] = field(default_factory=dict)
    phases: Mapping[str, float] = field(default_factory=dict)
    dataflow: Mapping[str, float] = field(default_factory=dict)
    assumptions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not (math.isfinite(self.seconds) and self.seconds >= 0):
            raise PredictionError(f"{self.model}: predicted {self.seconds} s, not a finite time")
        tol = 1e-9 * max(1.0, self.seconds)
        if self.low_s is not None and self.low_s > self.seconds + tol:
            raise PredictionError(f"{self.model}: lower bound {self.low_s} s above the estimate {self.seconds} s")
        if self.high_s is not None and self.high_s < self.seconds - tol:
            raise PredictionError(f"{self.model}: upper bound {self.high_s} s below the estimate {self.seconds} s")

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "seconds": self.seconds,
            "low_s": self.low_s,
            "high_s": self.high_s,
            "stages": dict(self.stages),
            "phases": dict(self.phases),
            "dataflow": dict(self.dataflow),
            "assumptions": list(self.assumptions),
        }


@runtime_checkable
class Predictor(Protocol):
    """What every model implements (a contract test loops over all registered ones)."""

    @property
    def name(self) -> str: ...

    def predict(
        self,
        profile: JobProfile,
        platform: PhaseDurationModel,
        cluster: Cluster,
        dataset: Dataset,
        settings: JobSettings,
    ) -> Prediction: ...


_REGISTRY: dict[str, Predictor] = {}
_loaded = False


def register(predictor: Predictor) -> Predictor:
    """Add a model to the registry (call at import time of the model's module)."""
    existing = _REGISTRY.get(predictor.name)
    if existing is not None and type(existing) is not type(predictor):
        raise PredictionError(f"two models are called {predictor.name!r}")
    _REGISTRY[predictor.name] = predictor
    return predictor


def _load() -> None:
    global _loaded
    if not _loaded:
        for module in MODEL_MODULES:
            importlib.import_module(module)
        _loaded = True


def models() -> tuple[str, ...]:
    """Names of every registered model, in :data:`MODEL_MODULES` order."""
    _load()
    return tuple(_REGISTRY)


def get(name: str) -> Predictor:
    """The model called ``name``; raises :class:`~phaseline.errors.NotFoundError` listing the known ones."""
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise NotFoundError(f"no prediction model {name!r}; known: {', '.join(_REGISTRY)}") from None


# ---------------------------------------------------------------- input shape
@dataclass(frozen=True, slots=True)
class InputShape:
    """How the new input splits into map tasks (Zhang et al. 2013, section 5: number and size of blocks)."""

    splits: int
    avg_split_bytes: float
    max_split_bytes: float
    avg_split_records: float
    max_split_records: float
    assumptions: tuple[str, ...]


def resolve_input(profile: JobProfile, dataset: Dataset, settings: JobSettings) -> InputShape:
    """Split the new dataset into map inputs.

    The input of the profiled size keeps the profiled split shape.  Otherwise
    splits are cut like ``FileInputFormat`` cuts them: full splits of the split
    size and a remainder, so the largest split is ``min(split size, input)``.
    Records follow the profiled record width unless the dataset gives them.
    """
    notes: list[str] = []
    prof = profile.input
    width = prof.record_width_bytes
    if dataset.input_records is not None:
        width = dataset.input_bytes / dataset.input_records if dataset.input_records > 0 else None
    same = abs(dataset.input_bytes - prof.total_bytes) <= SAME_INPUT_RTOL * prof.total_bytes
    if same and dataset.splits in (None, prof.splits) and dataset.split_bytes is None:
        notes.append(f"input of the profiled size: its {prof.splits} splits are reused")
        return InputShape(
            prof.splits,
            dataset.input_bytes / prof.splits,
            prof.max_split_bytes * dataset.input_bytes / prof.total_bytes,
            prof.avg_split_records,
            prof.max_split_records,
            tuple(notes),
        )
    split = dataset.split_bytes or settings.split_bytes
    if split is None:
        if prof.splits > 1:
            split = prof.max_split_bytes
            notes.append(f"split size {split:.0f} B taken from the profiled run's largest split")
        else:
            split = DEFAULT_SPLIT_BYTES
            notes.append(f"split size {split} B assumed (HDFS default block size)")
    splits = dataset.splits or max(1, math.ceil(dataset.input_bytes / split))
    avg = dataset.input_bytes / splits
    biggest = max(avg, min(split, dataset.input_bytes))
    if width is None or width <= 0:
        raise PredictionError("the profile counts no input records and the dataset gives none; pass input_records")
    if dataset.input_records is None:
        notes.append(f"input records from the profiled record width ({width:.1f} B/record)")
    return InputShape(splits, avg, biggest, avg / width, biggest / width, tuple(notes))


# ---------------------------------------------------------------- task estimates
@dataclass(frozen=True, slots=True)
class TaskEstimate:
    """One task's phase durations (ms) and the data each phase processed (bytes)."""

    phases_ms: Mapping[str, float]
    data_bytes: Mapping[str, float]
    overhead_ms: float

    @property
    def total_ms(self) -> float:
        return sum(self.phases_ms.values()) + self.overhead_ms


@dataclass(frozen=True, slots=True)
class TaskEstimates:
    """Average and maximum task durations for a new dataset (Zhang et al. 2013, section 5).

    ``reduce_*`` is ARIA's reduce phase (everything after the shuffle, plus
    the task overhead); ``shuffle_*`` the typical shuffle, ``first_shuffle_*``
    the part of a first-wave shuffle that does not overlap the map stage.
    """

    n_maps: int
    n_reduces: int
    map_avg: TaskEstimate
    map_max: TaskEstimate
    reduce_avg: TaskEstimate | None
    reduce_max: TaskEstimate | None
    shuffle_avg_ms: float
    shuffle_max_ms: float
    first_shuffle_avg_ms: float
    first_shuffle_max_ms: float
    shuffle_bytes_per_reduce: float
    assumptions: tuple[str, ...]


def _skew(stats: DurationStats | None) -> float:
    return stats.max_ms / stats.avg_ms if stats is not None and stats.avg_ms > 0 else 1.0


def _platform(platform: PhaseDurationModel, phase: Phase, data: float) -> float:
    return max(0.0, platform.duration_ms(phase.value, data))


def estimate_tasks(
    profile: JobProfile, platform: PhaseDurationModel, dataset: Dataset, settings: JobSettings
) -> TaskEstimates:
    """Average and maximum map, shuffle and reduce durations for ``dataset`` (Zhang et al. 2013, section 5).

    Map task: read(split) + records x map cost + collect/spill/merge(split x
    map selectivity) + overhead (map-only jobs: read + map + write).  Reduce:
    shuffle of eq. 2's ``M_inp x M_sel x N_map / N_red`` (times the combiner's
    selectivity where one ran, and the compression ratio where map output is
    compressed), then reduce records x reduce cost + write(reduce output) +
    overhead.  Reduce-side maxima carry the profiled max/avg ratio over (eq. 2
    itself assumes a uniform partition).
    """
    shape = resolve_input(profile, dataset, settings)
    notes = list(shape.assumptions)
    if profile.map_ms_per_record is None:
        notes.append("map function cost unknown in the profile: counted as 0")
    if settings.reduces > 0 and profile.reduce_ms_per_record is None:
        notes.append("reduce function cost unknown in the profile: counted as 0")
    map_cost = profile.map_ms_per_record or 0.0
    map_overhead = profile.map_task_overhead_ms or 0.0
    if profile.map_task_overhead_ms is None:
        notes.append("map task overhead unknown in the profile: counted as 0")

    def map_task(split_bytes: float, split_records: float) -> TaskEstimate:
        out = split_bytes * profile.map_size_sel
        phases = {Phase.READ.value: _platform(platform, Phase.READ, split_bytes), Phase.MAP.value: split_records * map_cost}
        data = {Phase.READ.value: split_bytes, Phase.MAP.value: split_bytes}
        generic = (Phase.COLLECT, Phase.SPILL, Phase.MERGE) if settings.reduces > 0 else (Phase.WRITE,)
        for phase in generic:
            phases[phase.value] = _platform(platform, phase, out)
            data[phase.value] = out
        return TaskEstimate(phases, data, map_overhead)

    map_avg = map_task(shape.avg_split_bytes, shape.avg_split_records)
    map_max = map_task(shape.max_split_bytes, shape.max_split_records)
    if settings.reduces == 0:
        return TaskEstimates(shape.splits, 0, map_avg, map_max, None, None, 0.0, 0.0, 0.0, 0.0, 0.0, tuple(notes))

    total_in = shape.avg_split_bytes * shape.splits
    total_recs = shape.avg_split_records * shape.splits
    combine_size = profile.combine_size_sel if profile.combine_size_sel is not None else 1.0
    combine_recs = profile.combine_recs_sel if profile.combine_recs_sel is not None else 1.0
    ratio = settings.interm_compress_ratio_for(profile) if settings.compress_map_output else 1.0
    reduce_in = total_in * profile.map_size_sel * combine_size / settings.reduces  # eq. 2 (uncompressed)
    shuffle_bytes = reduce_in * ratio
    reduce_recs = total_recs * profile.map_recs_sel * combine_recs / settings.reduces
    out_bytes = reduce_in * (profile.reduce_size_sel if profile.reduce_size_sel is not None else 1.0)
    if profile.reduce_size_sel is None:
        notes.append("reduce selectivity unknown in the profile: output assumed as large as input")
    shuffle_ms = _platform(platform, Phase.SHUFFLE, shuffle_bytes)
    reduce_overhead = profile.reduce_task_overhead_ms or 0.0
    reduce_avg = TaskEstimate(
        {
            Phase.REDUCE.value: reduce_recs * (profile.reduce_ms_per_record or 0.0),
            Phase.WRITE.value: _platform(platform, Phase.WRITE, out_bytes),
        },
        {Phase.SHUFFLE.value: shuffle_bytes, Phase.REDUCE.value: reduce_in, Phase.WRITE.value: out_bytes},
        reduce_overhead,
    )
    skew = _skew(profile.stage(Stage.REDUCE_PHASE))
    reduce_max = TaskEstimate(
        {k: v * skew for k, v in reduce_avg.phases_ms.items()}, reduce_avg.data_bytes, reduce_overhead * skew
    )
    shuffle_skew = _skew(profile.stage(Stage.TYPICAL_SHUFFLE) or profile.stage(Stage.FIRST_SHUFFLE))
    first, typical = profile.stage(Stage.FIRST_SHUFFLE), profile.stage(Stage.TYPICAL_SHUFFLE)
    if settings.slowstart >= 1.0:
        first_ratio = 1.0
    elif first is not None and typical is not None and typical.avg_ms > 0:
        first_ratio = first.avg_ms / typical.avg_ms
        notes.append(f"first shuffle = {first_ratio:.2f} x typical shuffle, as measured in the profiled run")
    else:
        first_ratio = 1.0
        notes.append("first shuffle assumed not to overlap the map stage (profile has no first/typical split)")
    first_skew = _skew(first) if first is not None else shuffle_skew
    return TaskEstimates(
        n_maps=shape.splits,
        n_reduces=settings.reduces,
        map_avg=map_avg,
        map_max=map_max,
        reduce_avg=reduce_avg,
        reduce_max=reduce_max,
        shuffle_avg_ms=shuffle_ms,
        shuffle_max_ms=shuffle_ms * shuffle_skew,
        first_shuffle_avg_ms=shuffle_ms * first_ratio,
        first_shuffle_max_ms=shuffle_ms * first_ratio * first_skew,
        shuffle_bytes_per_reduce=shuffle_bytes,
        assumptions=tuple(notes),
    )
