"""Task durations for a new dataset (Zhang et al. 2013, section 5), shared by the models.

Generic phases come from the platform model applied to the data each phase
processes (map output = input x selectivity; shuffle per reduce from eq. 2),
custom phases from per-record costs, plus a per-task overhead; average and
maximum task durations from average and maximum split sizes.

The per-task overhead is calibrated on the profiled run where it measured
whole tasks (ARIA's stage durations, Verma et al. 2011): the part of the
measured average (and maximum) task that the phase models do not explain at
the profiled data sizes and settings.  The same job at the same size then
gets its measured task durations back; a new size moves only what the phase
models move.  A negative overhead is the phases' overlap, and stays the same
share of the phases at every size (:func:`overlap_scaled`).

A map whose output fits its sort buffer below the spill threshold spills once
and its merge processes nothing (Hadoop renames the one spill file): its merge
is priced at 0 bytes, as ingest records such merges (:mod:`ingest.phases`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from phaseline.errors import PredictionError
from phaseline.schemas import Phase
from predict.contention import map_contention, map_demand_factor
from predict.core import Cluster, Dataset, PhaseDurationModel
from predict.dataflow import ACCOUNTING_BYTES_PER_RECORD, MB
from predict.measured_on import measured_on
from predict.phase_times import PhaseTimes, calibrate, overlap_scaled, warn_if_mismatched
from predict.profiled import InputShape, profiled_settings, profiled_shape
from predict.settings import JobSettings, compression
from predict.shuffle_estimate import ReduceFlow, ShufflePrice, first_shuffle, reduce_flow, wire_ratio
from profiles.profile import SAME_CASE_RTOL, JobProfile, Stage

__all__ = [
    "DEFAULT_SPLIT_BYTES",
    "InputShape",
    "PhaseTimes",
    "TaskEstimate",
    "TaskEstimates",
    "estimate_tasks",
    "overlap_scaled",
    "profiled_settings",
    "profiled_shape",
    "resolve_input",
    "single_spill",
    "warn_if_mismatched",
    "wire_ratio",
]

#: Split size assumed when neither the dataset, the settings nor the profile gives one (HDFS 2.x+ default).
DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024

#: Two input sizes within this relative distance are "the same dataset" (the profile's split shape is
#: reused): the tolerance within which merged runs are repeats of one case.
SAME_INPUT_RTOL = SAME_CASE_RTOL


def _profiled_splits(profile: JobProfile, dataset: Dataset) -> InputShape:
    """An input of the profiled size: the profiled splits, their records as given."""
    prof = profile.input
    notes = [f"input of the profiled size: its {prof.splits} splits are reused"]
    records = 1.0  # the given records over the profiled ones
    if dataset.input_records is not None and prof.total_records > 0:
        records = dataset.input_records / prof.total_records
        notes.append(f"input records as given: {records:.3g}x the profiled run's, split by split")
    return InputShape(
        prof.splits,
        dataset.input_bytes / prof.splits,
        prof.max_split_bytes * dataset.input_bytes / prof.total_bytes,
        prof.avg_split_records * records,
        prof.max_split_records * records,
        tuple(notes),
    )


def _split_size(
    profile: JobProfile, dataset: Dataset, split: float | None, *, unchanged: bool, proportional: bool,
    notes: list[str],
) -> float:
    """The split size a new input is cut by (see :func:`resolve_input`)."""
    prof = profile.input
    if proportional:
        # No split size given: the profiled run's splits, however its input format cut them (files
        # smaller than a block: 50 splits of 64 MB under a 128 MB dfs.blocksize), keep their size,
        # so the count grows with the input.  Cut by the profiled run's own block size, or its
        # largest split, 1 % more input than the profiled had halved the maps and the time.
        if dataset.splits is None:  # a split count given is the count: the size then only shapes the splits
            notes.append(
                f"splits of the profiled run's average size ({prof.avg_split_bytes:.0f} B): their count grows "
                "with the input"
            )
        return prof.avg_split_bytes
    if split is None:
        split = DEFAULT_SPLIT_BYTES
        notes.append(f"split size {split} B assumed (HDFS default block size)")
    if unchanged and prof.max_split_bytes > split:
        # the one profiled split was larger than that block: its input format did not cut by
        # block (TeraSort's 9.5 GB in one split had become 74 splits at 98 % of its input)
        split = prof.max_split_bytes
        notes.append(f"split size {split:.0f} B: the profiled run's one split, larger than a block")
    return split


def resolve_input(profile: JobProfile, dataset: Dataset, settings: JobSettings) -> InputShape:
    """Split the new dataset into map inputs.

    The input of the profiled size keeps the profiled split shape, unless a
    split size is given (by the dataset, or settings that change the profiled
    run's): a given split size
    cuts every input, the profiled one too, so that a larger input never gets
    smaller map tasks than a smaller one (the profiled run may have used
    another split size).  Otherwise
    splits are cut like ``FileInputFormat`` cuts them: full splits of the split
    size and a remainder, so the largest split is ``min(split size, input)``;
    but where the number of splits is given and the split size is not, the
    largest split is the average one times the profiled largest-to-average
    ratio (an assumed split size says nothing of how the input was cut).
    Where no split size is given (the profiled run's own setting is none), an
    input of another size is cut into splits of the profiled average size, as
    unevenly as the profiled ones: the profiled run's splits say how its input
    format cut its input, where its block size may not (files smaller than a
    block); a single profiled split larger than the block size is taken as
    the split size (its format did not cut by block).  Records follow the
    profiled record width unless the dataset gives them.
    """
    notes: list[str] = []
    prof = profile.input
    width = prof.record_width_bytes
    if dataset.input_records is not None:
        width = dataset.input_bytes / dataset.input_records if dataset.input_records > 0 else None
    same = abs(dataset.input_bytes - prof.total_bytes) <= SAME_INPUT_RTOL * prof.total_bytes
    split = given = dataset.split_bytes or settings.split_bytes
    # the profiled run's own split setting (its dfs.blocksize) is no change: its splits were cut by
    # whatever its input format did with it (TeraGen's 96 maps over a few kB of input)
    unchanged = split is None or (dataset.split_bytes is None and split == profiled_settings(profile).split_bytes)
    if same and dataset.splits in (None, prof.splits) and unchanged:
        return _profiled_splits(profile, dataset)
    proportional = prof.splits > 1 and (split is None or unchanged)
    split = _split_size(profile, dataset, split, unchanged=unchanged, proportional=proportional, notes=notes)
    splits = dataset.splits or max(1, math.ceil(dataset.input_bytes / split * (1 - 1e-12)))
    avg = dataset.input_bytes / splits
    if (dataset.splits is not None and given is None) or proportional:
        # The count of splits is given (or follows the profiled run's) and the split size only
        # assumed: the count says how the input was cut, the profiled run how uneven its splits
        # were (1 split: even).
        uneven = prof.max_split_bytes / prof.avg_split_bytes if prof.splits > 1 and prof.avg_split_bytes > 0 else 1.0
        biggest = min(dataset.input_bytes, avg * max(1.0, uneven))
    else:
        biggest = max(avg, min(split, dataset.input_bytes))
    if width is None or width <= 0:
        raise PredictionError(
            "the profile counts no input records and the dataset gives none; pass input_records"
        )
    if dataset.input_records is None:
        notes.append(f"input records from the profiled record width ({width:.1f} B/record)")
    if prof.avg_split_bytes > 0 and avg > prof.max_split_bytes * (1 + SAME_INPUT_RTOL) and profile.map_cost_sizes < 2:
        notes.append(
            f"splits of {avg:,.0f} B, {avg / prof.avg_split_bytes:.3g}x the profiled average, from a profile of one "
            "input size: how a map's cost grows with its split is the platform's per-byte cost; profile a second "
            "input size (`phaseline profile JOB_A JOB_B`) to fit it (benchmarks/BACKTEST.md, 'splits that grow')"
        )
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
        """Phases plus overhead (a negative, calibrated overhead never makes a task shorter than 0)."""
        return max(0.0, sum(self.phases_ms.values()) + self.overhead_ms)

    def scaled(self, factor: float) -> TaskEstimate:
        """The same task running ``factor`` times slower in every phase (the data it processes kept)."""
        return TaskEstimate({k: v * factor for k, v in self.phases_ms.items()}, self.data_bytes, self.overhead_ms * factor)


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


def single_spill(out_bytes: float, out_records: float, settings: JobSettings) -> bool:
    """Whether a map's output (serialized bytes + 16 accounting bytes per record) fits one spill.

    Hadoop 2+ keeps both in the one ``io.sort.mb`` buffer and spills when they pass
    ``io.sort.spill.percent`` of it; below that only the final flush spills.
    """
    used = out_bytes + ACCOUNTING_BYTES_PER_RECORD * out_records
    return used <= settings.io_sort_mb * MB * settings.sort_spill_percent


def estimate_tasks(
    profile: JobProfile,
    platform: PhaseDurationModel,
    dataset: Dataset,
    settings: JobSettings,
    *,
    cluster: Cluster | None = None,
    demand_only: bool = False,
    share_cores: bool = True,
) -> TaskEstimates:
    """Average and maximum map, shuffle and reduce durations for ``dataset`` (Zhang et al. 2013, section 5).

    Map task: read(split) + records x map cost + collect/spill/merge(split x
    map selectivity) + overhead (map-only jobs: read + map + write).  Reduce:
    shuffle of eq. 2's ``M_inp x M_sel x N_map / N_red`` (times the combiner's
    selectivity where one ran, and the compression ratio where map output is
    compressed), then the reduce-side sort (where profiled), reduce records x
    reduce cost + write(reduce output) + overhead; the reduce cost is the
    profile's, else, where the profile lumps the reduce function with the
    write, :meth:`PhaseTimes.lumped_reduce_cost`.  The typical shuffle's
    maximum carries the profiled max/avg ratio over (eq. 2 itself assumes a
    uniform partition); the first shuffle is :func:`~predict.shuffle_estimate.first_shuffle`'s.

    With ``cluster`` (models that price no CPU contention themselves), the maps
    take :func:`~predict.contention.map_contention`'s factor: more maps at once
    on a node than it has cores share them; with ``demand_only`` too (a model
    that shares the cores itself: Vianna's queueing network, the YARN replay),
    :func:`~predict.contention.map_demand_factor`'s; with ``share_cores=False`` neither (the
    critical path prices the CPU share after its own pipeline), the cluster then only saying
    whether the platform model was measured on it (the first shuffle's tail).
    """
    shape = resolve_input(profile, dataset, settings)
    notes = list(shape.assumptions)
    times = PhaseTimes(profile, platform, notes)
    costs = _FunctionCosts.of(profile, times, settings, notes)
    before = profiled_settings(profile)
    map_avg, map_max = _map_tasks(profile, costs, shape, before, settings, notes)
    shared = cluster if share_cores else None
    factor, note = (map_demand_factor(profile, shared, shape.splits) if demand_only
                    else map_contention(profile, shared, shape.splits))  # fmt: skip
    if note is not None:
        map_avg, map_max = map_avg.scaled(factor), map_max.scaled(factor)
        notes.append(note)
    if settings.reduces == 0:
        return TaskEstimates(
            shape.splits, 0, map_avg, map_max, None, None, 0.0, 0.0, 0.0, 0.0, 0.0, tuple(notes)
        )
    comp = compression(profile, settings)
    notes.extend(comp.notes)
    flow = reduce_flow(profile, shape, settings, wire_ratio(profile, settings, before))
    then = reduce_flow(profile, profiled_shape(profile), before, wire_ratio(profile, before, before))
    if profile.reduce_size_sel is None:
        notes.append("reduce selectivity unknown in the profile: output assumed as large as input")
    then_phases = costs.reduce_phases(then) if profile.num_reduces > 0 else {}
    reduce_avg, reduce_max = _reduce_tasks(profile, costs, flow, then_phases, notes)
    price = ShufflePrice.of(profile, times, then, then_phases)
    shuffle_ms = price.ms(flow.shuffle_bytes)
    if (note := price.note(then.shuffle_bytes)) is not None:
        notes.append(note)
    on_measured = cluster is not None and measured_on(platform, cluster)
    first_avg, first_max, shuffle_skew = first_shuffle(profile, settings, before, price, shuffle_ms, then, notes,
                                                       on_measured_cluster=on_measured)  # fmt: skip
    return TaskEstimates(
        n_maps=shape.splits,
        n_reduces=settings.reduces,
        map_avg=map_avg,
        map_max=map_max,
        reduce_avg=reduce_avg,
        reduce_max=reduce_max,
        shuffle_avg_ms=shuffle_ms,
        shuffle_max_ms=shuffle_ms * shuffle_skew,
        first_shuffle_avg_ms=first_avg,
        first_shuffle_max_ms=max(first_avg, first_max),
        shuffle_bytes_per_reduce=flow.shuffle_bytes,
        assumptions=tuple(notes),
    )


@dataclass(frozen=True, slots=True)
class _FunctionCosts:
    """The map and reduce functions' cost per record, and the phases they price with :class:`PhaseTimes`."""

    profile: JobProfile
    times: PhaseTimes
    map_cost: float
    reduce_cost: float

    @classmethod
    def of(cls, profile: JobProfile, times: PhaseTimes, settings: JobSettings, notes: list[str]) -> _FunctionCosts:
        if profile.map_ms_per_record is None and not times.covers(Phase.MAP):
            notes.append("map function cost unknown in the profile: counted as 0")
        reduce_cost = profile.reduce_ms_per_record
        if reduce_cost is None and settings.reduces > 0:
            reduce_cost = times.lumped_reduce_cost()
            if reduce_cost is None and not times.covers(Phase.REDUCE):
                notes.append("reduce function cost unknown in the profile: counted as 0")
        return cls(profile, times, profile.map_ms_per_record or 0.0, reduce_cost or 0.0)

    def map_phases(
        self, split_bytes: float, split_records: float, s: JobSettings
    ) -> tuple[dict[str, float], dict[str, float]]:
        """A map task's phases (ms) and the data each processes, for one split."""
        profile, times = self.profile, self.times
        out = split_bytes * profile.map_size_sel
        phases = {
            Phase.READ.value: times.ms(Phase.READ, split_bytes),
            Phase.MAP.value: split_records * self.map_cost,
        }
        data = {Phase.READ.value: split_bytes, Phase.MAP.value: split_bytes}
        generic = (Phase.COLLECT, Phase.SPILL, Phase.MERGE) if s.reduces > 0 else (Phase.WRITE,)
        for phase in generic:
            size = 0.0 if phase is Phase.MERGE and single_spill(out, split_records * profile.map_recs_sel, s) else out
            phases[phase.value] = times.ms(phase, size)
            data[phase.value] = size
        return phases, data

    def reduce_phases(self, flow: ReduceFlow) -> dict[str, float]:
        """A reduce's phases after its shuffle (ms)."""
        return {
            Phase.SORT.value: self.times.ms(Phase.SORT, flow.reduce_in, optional=True),
            Phase.REDUCE.value: flow.records * self.reduce_cost,
            Phase.WRITE.value: self.times.ms(Phase.WRITE, flow.out_bytes),
        }


def _map_tasks(
    profile: JobProfile, costs: _FunctionCosts, shape: InputShape, before: JobSettings, settings: JobSettings,
    notes: list[str],
) -> tuple[TaskEstimate, TaskEstimate]:
    """The average and the largest map task: phases at the new splits, overhead calibrated on the profiled run."""
    then = profiled_shape(profile)
    prof_avg = sum(costs.map_phases(then.avg_split_bytes, then.avg_split_records, before)[0].values())
    prof_max = sum(costs.map_phases(then.max_split_bytes, then.max_split_records, before)[0].values())
    over_avg, over_max, note = calibrate(
        profile.stage(Stage.MAP_TASK), prof_avg, prof_max, profile.map_task_overhead_ms, "map task"
    )
    notes.append(note)
    avg_phases, avg_data = costs.map_phases(shape.avg_split_bytes, shape.avg_split_records, settings)
    max_phases, max_data = costs.map_phases(shape.max_split_bytes, shape.max_split_records, settings)
    over_avg = overlap_scaled(over_avg, prof_avg, sum(avg_phases.values()), notes=notes, what="map task")
    over_max = overlap_scaled(over_max, prof_max, sum(max_phases.values()))
    return TaskEstimate(avg_phases, avg_data, over_avg), TaskEstimate(max_phases, max_data, over_max)


def _reduce_tasks(
    profile: JobProfile, costs: _FunctionCosts, flow: ReduceFlow, then_phases: dict[str, float], notes: list[str]
) -> tuple[TaskEstimate, TaskEstimate]:
    """The average and the longest reduce phase after the shuffle, overhead calibrated on the profiled run."""
    modelled_then = sum(then_phases.values())
    r_avg, r_max, note = calibrate(
        profile.stage(Stage.REDUCE_PHASE) if profile.num_reduces > 0 else None,
        modelled_then,
        modelled_then,
        profile.reduce_task_overhead_ms,
        "reduce phase",
    )
    notes.append(note)
    phases = costs.reduce_phases(flow)
    modelled_now = sum(phases.values())
    r_avg = overlap_scaled(r_avg, modelled_then, modelled_now, notes=notes, what="reduce phase")
    r_max = overlap_scaled(r_max, modelled_then, modelled_now)
    data = {Phase.SHUFFLE.value: flow.shuffle_bytes, Phase.SORT.value: flow.reduce_in}
    data |= {Phase.REDUCE.value: flow.reduce_in, Phase.WRITE.value: flow.out_bytes}
    return TaskEstimate(phases, data, r_avg), TaskEstimate(phases, data, r_max)
