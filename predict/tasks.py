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
import warnings
from collections.abc import Mapping
from dataclasses import dataclass

from phaseline.errors import DataQualityWarning, ExtrapolationWarning, PlatformModelError, PredictionError
from phaseline.schemas import Phase
from predict.core import Dataset, PhaseDurationModel
from predict.dataflow import ACCOUNTING_BYTES_PER_RECORD, MB
from predict.settings import JobSettings, compression
from profiles.profile import SAME_CASE_RTOL, DurationStats, JobProfile, Stage

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
    "wire_ratio",
]

#: Split size assumed when neither the dataset, the settings nor the profile gives one (HDFS 2.x+ default).
DEFAULT_SPLIT_BYTES = 128 * 1024 * 1024

#: A profiled span scaled by more than this factor of its data (a phase the platform model lacks)
#: gets an ExtrapolationWarning: QuasiMonteCarlo's reduce-side sort, 17 ms on 28 bytes, scaled to
#: 53 MB per reduce came to 32,000 s.
SPAN_SCALE_WARN = 100.0

#: Two input sizes within this relative distance are "the same dataset" (the profile's split shape is
#: reused): the tolerance within which merged runs are repeats of one case.
SAME_INPUT_RTOL = SAME_CASE_RTOL


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
        notes.append(f"input of the profiled size: its {prof.splits} splits are reused")
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
    proportional = prof.splits > 1 and (split is None or unchanged)
    if proportional:
        # No split size given: the profiled run's splits, however its input format cut them (files
        # smaller than a block: 50 splits of 64 MB under a 128 MB dfs.blocksize), keep their size,
        # so the count grows with the input.  Cut by the profiled run's own block size, or its
        # largest split, 1 % more input than the profiled had halved the maps and the time.
        split = prof.avg_split_bytes
        if dataset.splits is None:  # a split count given is the count: the size then only shapes the splits
            notes.append(
                f"splits of the profiled run's average size ({split:.0f} B): their count grows with the input"
            )
    else:
        if split is None:
            split = DEFAULT_SPLIT_BYTES
            notes.append(f"split size {split} B assumed (HDFS default block size)")
        if unchanged and prof.max_split_bytes > split:
            # the one profiled split was larger than that block: its input format did not cut by
            # block (TeraSort's 9.5 GB in one split had become 74 splits at 98 % of its input)
            split = prof.max_split_bytes
            notes.append(f"split size {split:.0f} B: the profiled run's one split, larger than a block")
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


class PhaseTimes:
    """Generic phase durations: the platform model, or else the profile's measured span, scaled by data.

    A platform model fitted on the local engine may lack a phase (its logs
    lump read and collect into the map span), and no platform model has the
    reduce-side sort.  Then the profiled span that contains the phase
    (``read+map+collect``, ``sort``) is scaled by the data the phase processes
    relative to the profiled run, and counted once: at its first non-custom
    member the platform model lacks; its other members, including the custom
    map/reduce phases, are inside it.  Every such fallback is noted.
    """

    def __init__(self, profile: JobProfile, platform: PhaseDurationModel, notes: list[str]) -> None:
        self.profile = profile
        self.platform = platform
        self.notes = notes
        self._has: dict[str, bool] = {}
        self._noted: set[str | tuple[str, str]] = set()

    def has(self, phase: str) -> bool:
        """Whether the platform model has a submodel for ``phase``."""
        if phase not in self._has:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ExtrapolationWarning)
                    self.platform.duration_ms(phase, 0.0)
                self._has[phase] = True
            except PlatformModelError:
                self._has[phase] = False
        return self._has[phase]

    def _span(self, phase: str) -> str | None:
        keys = [k for k in self.profile.phases if phase in k.split("+")]
        return min(keys, key=lambda k: len(k.split("+")), default=None)

    def _owner(self, span: str) -> str | None:
        custom = {Phase.MAP.value, Phase.REDUCE.value}
        return next((m for m in span.split("+") if m not in custom and not self.has(m)), None)

    def covers(self, phase: Phase) -> bool:
        """Whether ``phase`` (e.g. the custom map phase) is inside a profiled span used in its place."""
        span = self._span(phase.value)
        return span is not None and self._owner(span) is not None

    def profiled_bytes(self, phase: Phase) -> float:
        """The data one task's ``phase`` processed in the profiled run (uniform partition)."""
        prof = self.profile
        if phase is Phase.READ:
            return prof.input.avg_split_bytes
        map_out = prof.input.avg_split_bytes * prof.map_size_sel
        if phase in (Phase.SHUFFLE, Phase.SORT) or (phase is Phase.WRITE and prof.num_reduces > 0):
            combine = prof.combine_size_sel if prof.combine_size_sel is not None else 1.0
            shuffle = prof.input.total_bytes * prof.map_size_sel * combine / max(1, prof.num_reduces)
            if phase is not Phase.WRITE:
                return shuffle
            return shuffle * (prof.reduce_size_sel if prof.reduce_size_sel is not None else 1.0)
        return map_out

    def ms(self, phase: Phase, data_bytes: float, *, optional: bool = False) -> float:
        """Duration (ms) of ``phase`` over ``data_bytes``; an ``optional`` phase known to neither is 0."""
        if self.has(phase.value):
            return max(0.0, self.platform.duration_ms(phase.value, data_bytes))
        span = self._span(phase.value)
        if span is None:
            if optional:
                return 0.0
            raise PredictionError(
                f"the platform model has no {phase.value!r} submodel and the profile no {phase.value!r} span; "
                "fit the platform model on runs that record the phase"
            )
        if self._owner(span) != phase.value:
            return 0.0  # inside a span counted at another phase
        ref = self.profiled_bytes(phase)
        stats = self.profile.phases[span]
        ratio = data_bytes / ref if ref > 0 else 1.0
        if phase.value not in self._noted:
            self._noted.add(phase.value)
            self.notes.append(
                f"{phase.value}: no platform submodel; the profiled {span!r} span "
                f"({stats.avg_ms:.0f} ms per task) scaled by the data"
            )
        if ratio > SPAN_SCALE_WARN and (phase.value, "far") not in self._noted:
            self._noted.add((phase.value, "far"))
            warnings.warn(
                ExtrapolationWarning(
                    f"phase {phase.value!r}: the profiled {span!r} span ({stats.avg_ms:.0f} ms on {ref:,.0f} bytes "
                    f"per task) is scaled {ratio:,.0f}x by the data; measured on so little, it is mostly fixed "
                    "cost, and so is this prediction: profile a run nearer this size"
                ),
                stacklevel=2,
            )
        return stats.avg_ms * ratio

    def lumped_reduce_cost(self) -> float | None:
        """The reduce function's ms per input record where the profile lumps it with the write.

        The local engine's log marks no end of the reduce function, only the
        ``reduce+write`` span.  With the platform pricing the write, the span
        less that write at the profiled output is the reduce function's, and it
        follows the reduce's records (two reduces of half the data each take
        about half the one reduce's time), not the tasks: counted in the
        per-task overhead instead, every added reduce paid it again (word
        count at 16 MiB with 2 reduces, profiled with 1: +31 % on the local
        backtest of 2026-11-27, +8 % priced per record).  ``None``
        where the profile has no such span, the platform no write submodel, or
        the run no reduce input records.
        """
        span = self.profile.phases.get(f"{Phase.REDUCE.value}+{Phase.WRITE.value}")
        if span is None or self.profile.num_reduces <= 0 or not self.has(Phase.WRITE.value):
            return None
        # one profiled reduce's records and output, as eq. 2 gives them for a prediction
        then = _reduce_flow(self.profile, profiled_shape(self.profile), profiled_settings(self.profile), 1.0)
        if then.records <= 0:
            return None
        write = max(0.0, self.platform.duration_ms(Phase.WRITE.value, then.out_bytes))
        cost = max(0.0, span.avg_ms - write) / then.records
        if "lumped reduce" not in self._noted:
            self._noted.add("lumped reduce")
            self.notes.append(
                f"reduce function: the profiled 'reduce+write' span ({span.avg_ms:.0f} ms per task) less the "
                f"platform's write ({write:.0f} ms), per reduce input record: {cost * 1000:.2f} us"
            )
        return cost


def profiled_shape(profile: JobProfile) -> InputShape:
    """The profiled run's own input shape."""
    p = profile.input
    return InputShape(
        p.splits, p.avg_split_bytes, p.max_split_bytes, p.avg_split_records, p.max_split_records, ()
    )


def profiled_settings(profile: JobProfile) -> JobSettings:
    """The settings the profiled run ran with (its recorded configuration, Hadoop defaults otherwise)."""
    return JobSettings.from_config(profile.source.config, reduces=profile.num_reduces)


@dataclass(frozen=True, slots=True)
class _ReduceFlow:
    reduce_in: float  # uncompressed bytes into one reduce (eq. 2)
    shuffle_bytes: float  # bytes one reduce fetches
    records: float
    out_bytes: float


def _reduce_flow(profile: JobProfile, shape: InputShape, settings: JobSettings, ratio: float) -> _ReduceFlow:
    combine_size = profile.combine_size_sel if profile.combine_size_sel is not None else 1.0
    combine_recs = profile.combine_recs_sel if profile.combine_recs_sel is not None else 1.0
    reduces = max(1, settings.reduces)
    reduce_in = shape.avg_split_bytes * shape.splits * profile.map_size_sel * combine_size / reduces  # eq. 2
    records = shape.avg_split_records * shape.splits * profile.map_recs_sel * combine_recs / reduces
    out = reduce_in * (profile.reduce_size_sel if profile.reduce_size_sel is not None else 1.0)
    return _ReduceFlow(reduce_in, reduce_in * ratio, records, out)


def wire_ratio(profile: JobProfile, settings: JobSettings, before: JobSettings) -> float:
    """Shuffled bytes per map-output byte: as measured (materialized / raw map output: IFile framing,
    and the codec where the run compressed) when compression is as profiled, else :func:`compression`'s."""
    measured = profile.dataflow.interm_compress_ratio
    if measured is not None and settings.compress_map_output == before.compress_map_output:
        return measured
    return compression(profile, settings).ratio


#: Modelled phases this many times the measured task: not overlap (which a negative overhead
#: absorbs: the spill thread's lane beside the map function's makes phases summed one after
#: the other up to about twice the task; the bundled sample's own fit gives 1.6x) but a
#: platform model of another machine or other settings (a review's cases: 5x to 34x).
MISMATCH_FACTOR = 3.0


def warn_if_mismatched(measured_avg_ms: float, modelled_avg_ms: float, what: str) -> None:
    """Warn when the platform model prices the profiled tasks :data:`MISMATCH_FACTOR` times their measure.

    Overlapping phases make a modest negative overhead; this much says the platform model is of
    another machine or other settings, and predictions scaled from it take most of every task off
    as overlap.
    """
    if modelled_avg_ms > MISMATCH_FACTOR * measured_avg_ms > 0:
        what = what.split()[0]  # the callers' stage names: "map task", "reduce task", "reduce phase"
        warnings.warn(
            DataQualityWarning(
                f"the platform model prices the profiled {what} tasks at {modelled_avg_ms / 1000:.3g} s, "
                f"{modelled_avg_ms / measured_avg_ms:.1f}x their measured {measured_avg_ms / 1000:.3g} s: it "
                "describes another machine or other settings than the profiled run, and predictions scaled "
                "from it take most of every task off as overlap"
            ),
            stacklevel=3,
        )


def _calibrate(
    stage: DurationStats | None, modelled_avg: float, modelled_max: float, fallback: float | None, what: str
) -> tuple[float, float, str]:
    """(average, maximum) per-task overhead, and how it was found.

    Calibrated, the overhead is what the measured task adds to its modelled
    phases; it is negative where phases overlap (the spill thread runs beside
    the map function), so the sum of phases overstates the task.
    """
    if stage is not None:
        avg = stage.avg_ms - modelled_avg
        biggest = max(avg, stage.max_ms - modelled_max)
        warn_if_mismatched(stage.avg_ms, modelled_avg, what)
        return (
            avg,
            biggest,
            (
                f"{what} overhead calibrated on the profiled run: {avg:+.0f} ms per task, {biggest:+.0f} ms for the longest"
            ),
        )
    if fallback is not None:
        return fallback, fallback, f"{what} overhead {fallback:.0f} ms per task, as profiled"
    return 0.0, 0.0, f"{what} overhead unknown in the profile: counted as 0"


def overlap_scaled(
    overhead_ms: float, then_ms: float, now_ms: float, *, notes: list[str] | None = None, what: str = "task"
) -> float:
    """A calibrated overhead at a new size: a positive one as calibrated, a negative one with the phases.

    A positive overhead is what a task spends outside its phases (start-up,
    setup, cleanup): fixed per task.  A negative one is the phases' overlap
    (the spill thread beside the map function, a reduce's merge beside its
    fetches), a share of the phases, so it is taken off as that share at
    every size.  Taken off whole, a task of a much smaller input came out at
    0 ms (TeraSort profiled at 10 GB, -1,488 ms per map against 367 ms of
    phases at 10 MB).  ``notes``, if given, gets the share taken off.
    """
    if overhead_ms >= 0 or then_ms <= 0 or now_ms == then_ms:
        return overhead_ms
    if notes is not None:
        notes.append(
            f"{what} overhead negative (the phases overlap): {-overhead_ms / then_ms:.0%} of the phases "
            "taken off at every size"
        )
    return overhead_ms * now_ms / then_ms


def single_spill(out_bytes: float, out_records: float, settings: JobSettings) -> bool:
    """Whether a map's output (serialized bytes + 16 accounting bytes per record) fits one spill.

    Hadoop 2+ keeps both in the one ``io.sort.mb`` buffer and spills when they pass
    ``io.sort.spill.percent`` of it; below that only the final flush spills.
    """
    used = out_bytes + ACCOUNTING_BYTES_PER_RECORD * out_records
    return used <= settings.io_sort_mb * MB * settings.sort_spill_percent


def estimate_tasks(
    profile: JobProfile, platform: PhaseDurationModel, dataset: Dataset, settings: JobSettings
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
    uniform partition); the first shuffle (ARIA) is the profiled one in its
    profiled proportion to the typical shuffle as priced here, or, with no
    typical shuffle profiled, the profiled one scaled like the shuffle, or,
    unprofiled, the whole shuffle (no overlap).
    """
    shape = resolve_input(profile, dataset, settings)
    notes = list(shape.assumptions)
    times = PhaseTimes(profile, platform, notes)
    if profile.map_ms_per_record is None and not times.covers(Phase.MAP):
        notes.append("map function cost unknown in the profile: counted as 0")
    reduce_cost = profile.reduce_ms_per_record
    if reduce_cost is None and settings.reduces > 0:
        reduce_cost = times.lumped_reduce_cost()
        if reduce_cost is None and not times.covers(Phase.REDUCE):
            notes.append("reduce function cost unknown in the profile: counted as 0")
    map_cost = profile.map_ms_per_record or 0.0
    reduce_cost = reduce_cost or 0.0
    before = profiled_settings(profile)
    before_shape = profiled_shape(profile)

    def map_phases(
        split_bytes: float, split_records: float, s: JobSettings
    ) -> tuple[dict[str, float], dict[str, float]]:
        out = split_bytes * profile.map_size_sel
        phases = {
            Phase.READ.value: times.ms(Phase.READ, split_bytes),
            Phase.MAP.value: split_records * map_cost,
        }
        data = {Phase.READ.value: split_bytes, Phase.MAP.value: split_bytes}
        generic = (Phase.COLLECT, Phase.SPILL, Phase.MERGE) if s.reduces > 0 else (Phase.WRITE,)
        for phase in generic:
            size = 0.0 if phase is Phase.MERGE and single_spill(out, split_records * profile.map_recs_sel, s) else out
            phases[phase.value] = times.ms(phase, size)
            data[phase.value] = size
        return phases, data

    def reduce_phases(flow: _ReduceFlow) -> dict[str, float]:
        return {
            Phase.SORT.value: times.ms(Phase.SORT, flow.reduce_in, optional=True),
            Phase.REDUCE.value: flow.records * reduce_cost,
            Phase.WRITE.value: times.ms(Phase.WRITE, flow.out_bytes),
        }

    prof_avg = sum(
        map_phases(before_shape.avg_split_bytes, before_shape.avg_split_records, before)[0].values()
    )
    prof_max = sum(
        map_phases(before_shape.max_split_bytes, before_shape.max_split_records, before)[0].values()
    )
    over_avg, over_max, note = _calibrate(
        profile.stage(Stage.MAP_TASK), prof_avg, prof_max, profile.map_task_overhead_ms, "map task"
    )
    notes.append(note)
    avg_phases, avg_data = map_phases(shape.avg_split_bytes, shape.avg_split_records, settings)
    max_phases, max_data = map_phases(shape.max_split_bytes, shape.max_split_records, settings)
    over_avg = overlap_scaled(over_avg, prof_avg, sum(avg_phases.values()), notes=notes, what="map task")
    over_max = overlap_scaled(over_max, prof_max, sum(max_phases.values()))
    map_avg = TaskEstimate(avg_phases, avg_data, over_avg)
    map_max = TaskEstimate(max_phases, max_data, over_max)
    if settings.reduces == 0:
        return TaskEstimates(
            shape.splits, 0, map_avg, map_max, None, None, 0.0, 0.0, 0.0, 0.0, 0.0, tuple(notes)
        )

    comp = compression(profile, settings)
    notes.extend(comp.notes)
    flow = _reduce_flow(profile, shape, settings, wire_ratio(profile, settings, before))
    then = _reduce_flow(profile, before_shape, before, wire_ratio(profile, before, before))
    if profile.reduce_size_sel is None:
        notes.append("reduce selectivity unknown in the profile: output assumed as large as input")
    then_phases = reduce_phases(then) if profile.num_reduces > 0 else {}
    modelled_then = sum(then_phases.values())
    r_avg, r_max, note = _calibrate(
        profile.stage(Stage.REDUCE_PHASE) if profile.num_reduces > 0 else None,
        modelled_then,
        modelled_then,
        profile.reduce_task_overhead_ms,
        "reduce phase",
    )
    notes.append(note)
    phases = reduce_phases(flow)
    modelled_now = sum(phases.values())
    r_avg = overlap_scaled(r_avg, modelled_then, modelled_now, notes=notes, what="reduce phase")
    r_max = overlap_scaled(r_max, modelled_then, modelled_now)
    data = {Phase.SHUFFLE.value: flow.shuffle_bytes, Phase.SORT.value: flow.reduce_in}
    data |= {Phase.REDUCE.value: flow.reduce_in, Phase.WRITE.value: flow.out_bytes}

    # Zhang et al.'s shuffle submodel prices shuffle and sort together (section 2); the
    # reduce phase (ARIA's stage) already holds the profiled sort: take it out once, as its
    # share of the platform's shuffle + sort in the profiled run.  Subtracting the sort scaled
    # through 0 from the platform's affine line made the shuffle grow as each reduce's data
    # shrank (4.4 -> 1.1 MB per reduce: 18 -> 23 ms), wherever the sort's slope passed the line's.
    platform_shuffle = times.has(Phase.SHUFFLE.value)
    sort_then = then_phases.get(Phase.SORT.value, 0.0)
    both_then = times.ms(Phase.SHUFFLE, then.shuffle_bytes) if platform_shuffle and sort_then > 0 else 0.0
    sort_share = min(1.0, sort_then / both_then) if both_then > 0 else 0.0
    # A sort at least as long as the platform's shuffle + sort (small records, costly keys: the
    # benchmark's 100-byte records sort faster) leaves no share for the shuffle, which the
    # platform then cannot tell from the sort: the profiled shuffle is kept, and scaled as the
    # platform's shuffle + sort scales.  Priced at 0 instead, word count and the inverted index
    # of the backtest suite had shuffled as long at 64 MiB as at 16.
    no_share = sort_share == 1.0
    measured = profile.phases.get(Phase.SHUFFLE.value)
    kept_ms = measured.avg_ms if no_share and measured is not None else 0.0

    def shuffle_only(shuffle_bytes: float) -> float:
        if kept_ms > 0:
            return kept_ms * times.ms(Phase.SHUFFLE, shuffle_bytes) / both_then
        return times.ms(Phase.SHUFFLE, shuffle_bytes) * (1.0 - sort_share)

    shuffle_ms = shuffle_only(flow.shuffle_bytes)
    if no_share:
        what = (f"the profiled shuffle ({kept_ms:.0f} ms per reduce) scaled as the platform model's shuffle + sort "
                "scales" if kept_ms > 0 else "priced at 0 (none profiled)")
        notes.append(
            f"shuffle: the profiled reduce-side sort ({sort_then:.0f} ms) is longer than the platform model's "
            f"shuffle + sort ({both_then:.0f} ms) at the profiled {then.shuffle_bytes:.3g} B per reduce, which "
            f"leaves the platform no share for the shuffle: {what}"
        )
    elif sort_share > 0:
        notes.append(
            f"shuffle: the platform model's shuffle + sort less the reduce-side sort, which the reduce "
            f"phase holds (Zhang et al. 2013, section 2 measure the two together): {sort_share:.0%} of it, "
            "the profiled sort's share"
        )
    first, typical = profile.stage(Stage.FIRST_SHUFFLE), profile.stage(Stage.TYPICAL_SHUFFLE)
    shuffle_skew = _skew(typical or first)
    # the LocalJobRunner has no slow start (reduces run after the maps), whatever its config says
    profiled_slowstart = 1.0 if profile.source.local_runner else before.slowstart
    if first is not None and typical is not None and typical.avg_ms > 0 and profile.num_reduces > 0:
        # Both profiled: the first shuffle keeps its profiled proportion to the typical one, which
        # the platform prices.  Scaled apart (the first by the platform's ratio, the typical priced
        # outright), a profile from another cluster put a long first shuffle beside a short typical
        # one, so that more reduce slots -- more reduces in the first wave -- made the job slower.
        scale = shuffle_ms / typical.avg_ms
        first_avg, first_max = first.avg_ms * scale, first.max_ms * scale
        notes.append(
            f"first shuffle: the profiled one ({first.avg_ms:.0f} ms) in its profiled proportion to the "
            f"typical shuffle ({typical.avg_ms:.0f} ms), x{scale:.3g}"
        )
    elif first is not None and profile.num_reduces > 0:
        then_ms = shuffle_only(then.shuffle_bytes)
        scale = shuffle_ms / then_ms if then_ms > 0 else 1.0
        first_avg, first_max = first.avg_ms * scale, first.max_ms * scale
        notes.append(
            f"first shuffle: the profiled one ({first.avg_ms:.0f} ms) scaled by {scale:.3g} like the shuffle"
        )
        if typical is None and profiled_slowstart < 1.0 and first_avg > shuffle_ms:
            # Profiled reduces that overlapped the maps: the first shuffle is the part of a shuffle
            # past the map stage, no longer than a whole one as priced here.  A 160 s tail from a
            # 2010 cluster beside this machine's 0.2 s shuffle made more reduce slots -- more reduces
            # in the first wave -- slower (job_201002080801_50510: 188.7 s on 1 node, 209.7 s on 4).
            first_avg, first_max = shuffle_ms, shuffle_ms * shuffle_skew
            notes.append(
                "first shuffle: the profiled tail is longer than a whole shuffle as priced here; taken as the whole"
            )
    else:
        first_avg, first_max = shuffle_ms, shuffle_ms * shuffle_skew
        notes.append("first shuffle assumed not to overlap the map stage (none profiled)")
    if first is not None and settings.slowstart >= 1.0 > profiled_slowstart and first_avg < shuffle_ms:
        # Reduces now start only once every map is done: nothing of the shuffle overlaps the maps
        # any more, so the first wave shuffles whole (the slowstart setting had changed nothing).
        first_avg, first_max = shuffle_ms, max(first_max, shuffle_ms * shuffle_skew)
        notes.append(
            f"slowstart {settings.slowstart:g} (profiled {profiled_slowstart:g}): reduces start after the maps, "
            "so the first wave's shuffle overlaps nothing and takes the whole shuffle"
        )
    return TaskEstimates(
        n_maps=shape.splits,
        n_reduces=settings.reduces,
        map_avg=map_avg,
        map_max=map_max,
        reduce_avg=TaskEstimate(phases, data, r_avg),
        reduce_max=TaskEstimate(phases, data, r_max),
        shuffle_avg_ms=shuffle_ms,
        shuffle_max_ms=shuffle_ms * shuffle_skew,
        first_shuffle_avg_ms=first_avg,
        first_shuffle_max_ms=max(first_avg, first_max),
        shuffle_bytes_per_reduce=flow.shuffle_bytes,
        assumptions=tuple(notes),
    )
