"""ARIA bounds on a job's completion time (Verma, Cherkasova and Campbell, ICAC 2011).

The makespan theorem: ``n`` tasks of mean duration ``mu`` and maximum
``lam``, greedily assigned to ``k`` slots, finish within::

    n * mu / k  <=  T  <=  (n - 1) * mu / k + lam

ARIA composes it over the stages of a job (Verma et al. 2011, section 4;
Zhang et al. 2013, section 5, applies it to task durations estimated for a
new dataset):

* map stage: ``n = N_M`` tasks on ``k = S_M`` map slots;
* the first shuffle, the part of the first reduce wave's shuffle that does
  not overlap the map stage: its average (lower) or maximum (upper);
* the typical shuffle of the remaining reduce waves:
  ``(N_R / S_R - 1) * Sh_avg`` (lower) and
  ``((N_R - 1) / S_R - 1) * Sh_avg + Sh_max`` (upper), neither below zero;
* the reduce stage (reduce phase after the shuffle): ``N_R`` tasks on ``S_R``.

The estimate is the average of the lower and upper bound (ARIA reports it
within 10 % of measured completion times).

The bounds hold for task durations like the profiled run's.  When the profile
knows several runs of the same case, the machine ran the same work faster and
slower than that: the reported ``low_s``/``high_s`` are then the bounds
stretched by the 90 % prediction interval of another run
(:meth:`JobProfile.run_interval`, relative to the median run), so they
bracket runs under the run-to-run variation the profile measured, with that
stated confidence; the estimate stays ARIA's.  (Stretching by the runs' own
range, as before, covers another run only (n - 1) / (n + 1) of the time: half,
with three runs.  Re-scored on the stored runs of the full local backtest, the
bounds bracket 20 of 20 cases of the 18:00 run (were 12) and 18 of 20 of the
32 MiB warm-up run (were 13), at a median width of 107 % and 59 % of the
measured time (were 30 % and 17 %): what three runs can promise at 90 %.  A
fresh run of the suite, whose runs varied less, gave 17 of 20 at 52 %:
the interval covers run-to-run noise, not the model's own errors.)
"""

from __future__ import annotations

from dataclasses import dataclass

from phaseline.errors import PredictionError
from predict.core import (
    MS_PER_S,
    Cluster,
    Inputs,
    Model,
    Prediction,
    register,
)
from predict.tasks import TaskEstimates, estimate_tasks
from profiles.profile import RUN_INTERVAL_CONFIDENCE

__all__ = ["BoundsModel", "StageBounds", "job_bounds", "makespan_bounds"]


@dataclass(frozen=True, slots=True)
class StageBounds:
    """Lower and upper bound of one stage (any unit; the caller's)."""

    low: float
    high: float

    @property
    def mid(self) -> float:
        return (self.low + self.high) / 2


def makespan_bounds(n: int, mean: float, maximum: float, slots: int) -> StageBounds:
    """Bounds on the makespan of ``n`` tasks greedily assigned to ``slots`` slots (Verma et al. 2011, section 3).

    ``n * mean / slots <= T <= (n - 1) * mean / slots + maximum``.  With fewer tasks than slots
    the lower bound is below one task (4 maps of 1.9 s on 64 slots: 0.12 s) while the makespan is at
    least the longest task; it is kept as published, because it is linear in the work and so keeps
    every prediction monotone in the data (floored at the mean task, one 9.7 s map low-bounded a job
    above two 9.0 s maps of 1.5x the data).

    >>> makespan_bounds(7, 3.0, 4.0, 3)
    StageBounds(low=7.0, high=10.0)
    >>> makespan_bounds(0, 2.0, 3.0, 3)
    StageBounds(low=0.0, high=0.0)
    """
    if slots < 1:
        raise PredictionError(f"makespan bounds need at least one slot, got {slots}")
    if n < 0 or mean < 0 or maximum < mean * (1 - 1e-9):
        raise PredictionError(
            f"makespan bounds need n >= 0 and 0 <= mean <= max (n={n}, mean={mean}, max={maximum})"
        )
    if n == 0:
        return StageBounds(0.0, 0.0)
    return StageBounds(n * mean / slots, (n - 1) * mean / slots + maximum)


def _typical_shuffle(n_reduces: int, slots: int, avg: float, maximum: float) -> StageBounds:
    """Shuffles of the reduce waves after the first (ARIA, Verma et al. 2011, section 4); none in one wave."""
    if n_reduces <= slots:
        return StageBounds(0.0, 0.0)
    low = (n_reduces / slots - 1) * avg
    high = ((n_reduces - 1) / slots - 1) * avg + maximum
    return StageBounds(max(0.0, low), max(0.0, high))


def job_bounds(tasks: TaskEstimates, cluster: Cluster) -> dict[str, StageBounds]:
    """Per-stage bounds (milliseconds) of a job whose task durations are ``tasks`` (ARIA composition)."""
    stages = {
        "map": makespan_bounds(
            tasks.n_maps, tasks.map_avg.total_ms, tasks.map_max.total_ms, cluster.map_slots
        )
    }
    if tasks.n_reduces > 0 and tasks.reduce_avg is not None and tasks.reduce_max is not None:
        stages["first_shuffle"] = StageBounds(tasks.first_shuffle_avg_ms, tasks.first_shuffle_max_ms)
        stages["typical_shuffle"] = _typical_shuffle(
            tasks.n_reduces, cluster.reduce_slots, tasks.shuffle_avg_ms, tasks.shuffle_max_ms
        )
        stages["reduce"] = makespan_bounds(
            tasks.n_reduces, tasks.reduce_avg.total_ms, tasks.reduce_max.total_ms, cluster.reduce_slots
        )
    return stages


@dataclass(frozen=True, slots=True)
class BoundsModel(Model):
    """ARIA's lower/upper bounds and their average, on Zhang et al. 2013 task estimates."""

    name: str = "bounds"

    def predict_inputs(self, inputs: Inputs) -> Prediction:
        """Predict the completion time of ``profile``'s job on ``dataset`` (Verma et al. 2011; Zhang et al. 2013, sec. 5)."""
        tasks = estimate_tasks(
            inputs.profile, inputs.platform, inputs.dataset, inputs.settings, cluster=inputs.cluster
        )
        stages = job_bounds(tasks, inputs.cluster)
        low = sum(s.low for s in stages.values()) / MS_PER_S
        high = sum(s.high for s in stages.values()) / MS_PER_S
        estimate = (low + high) / 2
        notes = ["estimate = average of ARIA's lower and upper bounds (Verma et al. 2011)"]
        spread = inputs.profile.run_interval(RUN_INTERVAL_CONFIDENCE)
        if spread is not None:
            low, high = low * min(spread[0], 1.0), high * max(spread[1], 1.0)
            notes.append(
                f"bounds stretched by the {RUN_INTERVAL_CONFIDENCE:.0%} prediction interval of another run "
                f"({spread[0]:.2f}x-{spread[1]:.2f}x the median of {len(inputs.profile.makespans_ms)} profiled runs): "
                "run-to-run variation of the machine"
            )
        phases = {f"map.{k}": v / MS_PER_S for k, v in tasks.map_avg.phases_ms.items()}
        phases["map.overhead"] = tasks.map_avg.overhead_ms / MS_PER_S
        if tasks.reduce_avg is not None:
            phases["reduce.shuffle"] = tasks.shuffle_avg_ms / MS_PER_S
            phases.update({f"reduce.{k}": v / MS_PER_S for k, v in tasks.reduce_avg.phases_ms.items()})
            phases["reduce.overhead"] = tasks.reduce_avg.overhead_ms / MS_PER_S
        stage_s = {f"{k}.low": v.low / MS_PER_S for k, v in stages.items()}
        stage_s.update({f"{k}.high": v.high / MS_PER_S for k, v in stages.items()})
        return Prediction(
            model=self.name,
            seconds=estimate,
            low_s=low,
            high_s=high,
            stages=stage_s,
            phases=phases,
            dataflow={
                "maps": float(tasks.n_maps),
                "reduces": float(tasks.n_reduces),
                "map_waves": float(-(-tasks.n_maps // inputs.cluster.map_slots)),
                "reduce_waves": float(-(-tasks.n_reduces // inputs.cluster.reduce_slots)),
                "shuffle_bytes_per_reduce": tasks.shuffle_bytes_per_reduce,
            },
            assumptions=(*tasks.assumptions, *notes),
        )


register(BoundsModel())
