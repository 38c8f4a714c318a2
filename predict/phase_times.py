"""What one phase and one task cost at a data size: the platform model or the profiled span,
and the per-task overhead calibrated on the profiled run (Zhang et al. 2013, section 5).

:class:`PhaseTimes` prices a generic phase with the platform model, or, where the model
lacks it, with the profiled span that holds it scaled by the data; :func:`calibrate` finds
the per-task overhead the phases do not explain at the profiled size, and
:func:`overlap_scaled` carries a negative one (the phases' overlap) to a new size.
:func:`predict.tasks.estimate_tasks` puts them together.
"""

from __future__ import annotations

import warnings

from phaseline.errors import DataQualityWarning, ExtrapolationWarning, PlatformModelError, PredictionError
from phaseline.schemas import Phase
from predict.core import PhaseDurationModel
from predict.profiled import profiled_settings, profiled_shape
from predict.shuffle_estimate import reduce_flow
from profiles.profile import DurationStats, JobProfile

__all__ = [
    "MISMATCH_FACTOR",
    "SPAN_SCALE_WARN",
    "PhaseTimes",
    "calibrate",
    "overlap_scaled",
    "warn_if_mismatched",
]

#: A profiled span scaled by more than this factor of its data (a phase the platform model lacks)
#: gets an ExtrapolationWarning: QuasiMonteCarlo's reduce-side sort, 17 ms on 28 bytes, scaled to
#: 53 MB per reduce came to 32,000 s.
SPAN_SCALE_WARN = 100.0


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
        the run no reduce input records.  A profile merged from runs of
        several sizes may know the span's fixed part (:attr:`JobProfile.reduce_fixed_ms`):
        it is left out of the per-record cost, and the calibrated per-reduce overhead
        counts it once per task instead.
        """
        span = self.profile.phases.get(f"{Phase.REDUCE.value}+{Phase.WRITE.value}")
        if span is None or self.profile.num_reduces <= 0 or not self.has(Phase.WRITE.value):
            return None
        # one profiled reduce's records and output, as eq. 2 gives them for a prediction
        then = reduce_flow(self.profile, profiled_shape(self.profile), profiled_settings(self.profile), 1.0)
        if then.records <= 0:
            return None
        write = max(0.0, self.platform.duration_ms(Phase.WRITE.value, then.out_bytes))
        fixed = self.profile.reduce_fixed_ms or 0.0
        cost = max(0.0, span.avg_ms - fixed - write) / then.records
        if "lumped reduce" not in self._noted:
            self._noted.add("lumped reduce")
            apart = f", less its fixed {fixed:.0f} ms per reduce (fitted over sizes)" if fixed > 0 else ""
            self.notes.append(
                f"reduce function: the profiled 'reduce+write' span ({span.avg_ms:.0f} ms per task) less the "
                f"platform's write ({write:.0f} ms){apart}, per reduce input record: {cost * 1000:.2f} us"
            )
        return cost


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


def calibrate(
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
