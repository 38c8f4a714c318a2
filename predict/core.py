"""The shared prediction core: inputs, the :class:`Prediction`, and the model registry.

Every model answers the same question with the same signature::

    predict(profile, platform, cluster, dataset, settings) -> Prediction

and registers itself with :func:`register`; :func:`models` lists them (the
modules in :data:`MODEL_MODULES` are imported on first use, so a new model is
one module plus one line there).

Task durations for a new dataset (Zhang et al. 2013, section 5), which the
models share, live in :mod:`predict.tasks`.
"""

from __future__ import annotations

import abc
import dataclasses
import importlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from phaseline.errors import NotFoundError, PredictionError
from predict.measured_on import warn_if_other_cluster
from predict.settings import JobSettings
from profiles.profile import JobProfile

__all__ = [
    "MODEL_MODULES",
    "MS_PER_S",
    "Cluster",
    "Dataset",
    "Inputs",
    "JobSettings",
    "Model",
    "PhaseDurationModel",
    "Prediction",
    "Predictor",
    "describe",
    "get",
    "models",
    "register",
    "warn_if_other_cluster",
]

#: Modules that define and register models; add yours here.
MODEL_MODULES: tuple[str, ...] = (
    "predict.bounds",
    "predict.herodotou",
    "predict.critical_path",
    "predict.simulate",
    "predict.vianna.predictor",
)

#: Milliseconds per second (predictions are in seconds, phase models in milliseconds).
MS_PER_S = 1000.0


class PhaseDurationModel(Protocol):
    """A platform model (Zhang et al. 2013, section 4): duration of a generic phase for the data it processes.

    ``phase`` is one of the generic :class:`~phaseline.schemas.Phase` names
    (read, collect, spill, merge, shuffle, write); the result is milliseconds.
    A phase the model has no submodel for raises
    :class:`~phaseline.errors.PlatformModelError` (the models then fall back
    on the profile's measured spans, see :class:`predict.tasks.PhaseTimes`).
    """

    def duration_ms(self, phase: str, data_bytes: float) -> float: ...


@dataclass(frozen=True, slots=True)
class Cluster:
    """The cluster a job runs on; the local engine is one node with its map and reduce parallelism.

    ``engine`` (``local-hadoop``, ``yarn``, ...; ``None``: not said) is compared with the
    engine the platform model was measured on (:func:`warn_if_other_cluster`); on YARN a
    node's map slots are its task containers.
    """

    nodes: int
    map_slots_per_node: int
    reduce_slots_per_node: int
    cpus_per_node: int | None = None
    disks_per_node: int | None = None
    engine: str | None = None
    uber: bool = False  # an uberized run: one task after another in the AM's JVM (predict.uber)

    def __post_init__(self) -> None:
        for name in ("nodes", "map_slots_per_node", "reduce_slots_per_node"):
            if getattr(self, name) < 1:
                raise PredictionError(f"{name.replace('_', ' ')} must be >= 1, got {getattr(self, name)}")

    @property
    def map_slots(self) -> int:
        return self.nodes * self.map_slots_per_node

    @property
    def reduce_slots(self) -> int:
        return self.nodes * self.reduce_slots_per_node

    def maps_at_once(self, n_maps: int) -> int:
        """The maps a node runs at once in a run of ``n_maps``: its slots, or fewer maps per node."""
        return min(self.map_slots_per_node, math.ceil(n_maps / self.nodes))


@dataclass(frozen=True, slots=True)
class Dataset:
    """The new input: its size, and optionally records, split count and split size.

    What is not given is derived in :func:`predict.tasks.resolve_input` (and the derivation
    is recorded in the prediction's assumptions).
    """

    input_bytes: float
    input_records: float | None = None
    splits: int | None = None
    split_bytes: float | None = None

    def __post_init__(self) -> None:
        if not (math.isfinite(self.input_bytes) and self.input_bytes > 0):
            raise PredictionError(f"the input size must be > 0 bytes, got {self.input_bytes}")
        records = self.input_records
        if records is not None and not (math.isfinite(records) and records > 0):
            raise PredictionError(f"the number of input records must be a finite number > 0, got {records}")
        if self.splits is not None and self.splits < 1:
            raise PredictionError(f"the number of splits must be >= 1, got {self.splits}")
        if self.split_bytes is not None and self.split_bytes <= 0:
            raise PredictionError(f"the split size must be > 0 bytes, got {self.split_bytes}")


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

    def lengthened(
        self, stages: Mapping[str, float], notes: tuple[str, ...], *, high_extra_s: float | None = None
    ) -> Prediction:
        """This prediction with the ``stages`` (seconds) added to its estimate and interval (the upper end
        by ``high_extra_s`` where given), kept among its stages, and ``notes`` among its assumptions."""
        extra = sum(stages.values())
        high = extra if high_extra_s is None else high_extra_s
        return dataclasses.replace(
            self,
            seconds=self.seconds + extra,
            low_s=None if self.low_s is None else self.low_s + extra,
            high_s=None if self.high_s is None else self.high_s + high,
            stages={**self.stages, **stages},
            assumptions=(*self.assumptions, *notes),
        )

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


_REGISTRY: dict[str, _Framed] = {}
_loaded = False


@dataclass(frozen=True, slots=True)
class Inputs:
    """What a model predicts from (the :class:`Predictor` arguments), as one record."""

    profile: JobProfile
    platform: PhaseDurationModel
    cluster: Cluster
    dataset: Dataset
    settings: JobSettings


class Model(abc.ABC):
    """A :class:`Predictor` that takes its inputs as one record: :meth:`predict` hands them to
    :meth:`predict_inputs`, which the model implements."""

    __slots__ = ()

    def predict(
        self,
        profile: JobProfile,
        platform: PhaseDurationModel,
        cluster: Cluster,
        dataset: Dataset,
        settings: JobSettings,
    ) -> Prediction:
        return self.predict_inputs(Inputs(profile, platform, cluster, dataset, settings))

    @abc.abstractmethod
    def predict_inputs(self, inputs: Inputs) -> Prediction: ...


@dataclass(frozen=True, slots=True)
class _Framed(Model):
    """A registered model as every caller gets it (:func:`get`): what holds for every model is done
    here, once, around its own prediction: the warning for a cluster of another engine or shape than
    the platform's (:func:`warn_if_other_cluster`), the run Hadoop would uberize (one slot in the
    ApplicationMaster's JVM, :func:`predict.uber.uber_inputs`), the profile's one-time map cost
    (:func:`predict.map_one_time.with_one_time`), reduce cost (:func:`predict.reduce_one_time.with_reduce_one_time`) and JIT
    compiles (:func:`predict.jit_one_time.with_jit_one_time`), and
    the scheduler's waits between a slot's tasks (:func:`predict.handover.with_handover`)."""

    model: Predictor

    @property
    def name(self) -> str:
        return self.model.name

    def __getattr__(self, attr: str) -> Any:  # the model's own attributes (vianna's estimate, ...)
        return getattr(self.model, attr)

    def predict_inputs(self, inputs: Inputs) -> Prediction:
        # (imported here: the input's splits are predict.tasks', which builds on this module)
        from predict.handover import with_handover
        from predict.jit_one_time import with_jit_one_time
        from predict.map_one_time import with_one_time
        from predict.reduce_one_time import with_reduce_one_time
        from predict.tasks import resolve_input
        from predict.uber import uber_inputs

        warn_if_other_cluster(inputs.platform, inputs.cluster, stacklevel=4)
        shape = resolve_input(inputs.profile, inputs.dataset, inputs.settings)
        maps = shape.splits
        i, said = uber_inputs(inputs, maps)  # an uberized run: one slot in one JVM, whatever the cluster
        own = self.model.predict(i.profile, i.platform, i.cluster, i.dataset, i.settings)
        framed = with_reduce_one_time(with_one_time(own, i.profile, i.cluster, maps, shape.avg_split_bytes), i)
        framed = with_handover(with_jit_one_time(framed, i), i, maps)
        return framed if said is None else dataclasses.replace(framed, assumptions=(*framed.assumptions, said))


def register(predictor: Predictor) -> Predictor:
    """Add a model to the registry (call at import time of the model's module); :func:`get` gives it
    framed by what every model shares (:class:`_Framed`)."""
    existing = _REGISTRY.get(predictor.name)
    if existing is not None and type(existing.model) is not type(predictor):
        raise PredictionError(f"two models are called {predictor.name!r}")
    _REGISTRY[predictor.name] = _Framed(predictor)
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


def describe(name: str) -> str:
    """The model's docstring (its class's): what ``--list-models`` says of it."""
    return (type(get(name).model).__doc__ or "").strip()


def get(name: str) -> _Framed:
    """The model called ``name``; raises :class:`~phaseline.errors.NotFoundError` listing the known ones."""
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise NotFoundError(f"no prediction model {name!r}; known: {', '.join(_REGISTRY)}") from None
