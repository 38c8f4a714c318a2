"""One-time, per-task and per-byte cost: what a profile may scale, and what it must add once.

A job profile is read as "every map costs about this much, so twice the maps
cost twice as much".  Two things in a measured run break that reading:

* **First-wave costs.**  The first maps of a job pay for what later maps
  inherit: on a cluster, container localisation and a cold JVM; on one JVM,
  class loading and JIT compilation of the job's code.  ARIA (Verma et al.
  2011, section 3) tells a first-wave shuffle from the typical shuffle of
  later waves for the same reason; Zhang et al. 2013 (section 5) build the
  profile from the typical task.  Averaged in, a 600 ms first map among
  40 ms maps charges every map of a larger run 70 ms more (issue 37: a
  map-only filter over-predicted by 110-137 %).
* **Stragglers.**  A single slow task (a GC pause, a busy disk) is no
  per-task cost either.  Slow outliers are one-sided: tasks are never 3x too
  fast.

:func:`split_first_wave` therefore judges every map against the later waves (their median and
spread): a map slower than their median by more than 3 scaled MADs (the Hampel identifier: Hampel
1974; Leys et al. 2013, "Detecting outliers: do not use standard deviation around the mean, use
absolute deviation around the median") is left out of the *typical* map, which averages the rest,
first-wave maps included; and everything the left-out maps spent beyond the typical one becomes a
**one-time term**: their excess work spread over the slots, which a prediction adds once per job
(the first wave runs on every slot at once, so its extra lengthens the map stage by the excess per
slot). Work is kept: ``n x typical + slots x one-time`` is the run's total map time.

**Tasks of one JVM.** LocalJobRunner runs every task of a job in the JVM that started it, so the
JVM's warm-up (class loading, and the JIT compiles that the local engine makes blocking,
``MEASURING_JVM_FLAGS``) lands on whichever of the first maps trigger it. In the backtest suite's
4-map profiles on two slots it stalled both later maps at once (sort: 124, 116, 362 and 349 ms;
73-110 ms in runs eight times larger), and a cut judged against two stalled maps keeps them. So
where the maps shared one JVM and its later waves hold fewer than :data:`MIN_LATER_MAPS` maps, or
ran on one slot and hold fewer than :data:`MIN_LATER_MAPS_ONE_JVM`, the typical map is the fastest
one (with the maps within :data:`MIN_REL_SPREAD` of it): a task is never faster than its warm
cost, as ``timeit`` takes the least of its repeats, and the rest is the JVM's one-time warm-up
(built phase by phase where the phases tile every map: :mod:`profiles.phase_floor`). The threshold
is higher than a cluster's (:data:`MIN_LATER_MAPS`) because one JVM's warm-up is spread over
several maps, and some of those maps are in the later waves; on more slots than one a fast map may
be one that ran beside an idle slot, so there the lower threshold stands. Measured on a quiet
machine (2026-11-29, 21:22-22:08 UTC), the JVM stalled for 0.2-1.1 s on the 3rd map of almost
every run (and the 1st or the 4th-5th of some), and for 0.1-0.2 s on the 13th. In a one-slot,
4-map profile, that puts one or two stalled maps among its three later maps. groupby's later maps
were 65, 421 and 204 ms, where its maps took 30-60 ms in runs eight times larger. A cut at their
median plus 3 MADs keeps all three. With more later maps their cut stands: taken as the fastest, a
512-map run's maps (12 ms the fastest, 21-25 ms the median) put every map's variation into the
one-time term, and the doctor's loop predicted 0.91 s of saving from fewer maps where 7.65 s were
measured. The thresholds were chosen on the backtest's tuning set (best median / worst):
2026-11-29 00:07-01:19 UTC, 10.6 % / 76.6 % before, 10.7 % / 42.2 % with the fastest in every
run of one JVM, 10.1 % / 38.4 % only below 3 later maps; 21:22-22:08 UTC, 10.6 % / 64.9 % with
that rule, 9.6 % / 47.8 % below 8 later maps on one slot (every threshold from 4 to 32 gives the
same rows: the one-slot profiles have 3 later maps; 8 keeps the cut for runs with twice the stalls
seen in 16 maps).  In one JVM a later map's stall is the job's compile, not each slot's: the later
waves' part of the term (:attr:`FirstWaveSplit.later_excess_ms`) is kept apart, and a run in one
JVM on other slots shares it among them as far as the stalled map's own length allows
(:func:`predict.map_one_time.one_time_ms`; tuning set, 2026-11-30: 6.3 % / 33.9 % -> 5.5 % / 21.1 %;
the stalled map's bound, 2026-12-03: 6.4 % / 33.8 % -> 6.2 % / 31.1 %).

**Tasks of a cluster.**  On a cluster every task starts its own JVM and pays
its own warm-up, so the first wave holds no warm-up the later waves inherit:
what sets it apart is that all its maps start at once, on nodes whose cores
they share (and their containers' launch), which the profile's concurrency
prices (:mod:`predict.contention`).  The later waves' cut stands where they
hold :data:`MIN_LATER_MAPS` maps or more; with fewer, every map is typical.
A lone later map runs as the first wave's JVMs exit, nearly alone on its
node: on the mini YARN cluster (3 task containers on 2 cores) such a map took
2.2-4.4 s where the same application's maps took 5-13 s in every wave of a
run three times larger.  Chosen on the YARN backtest's tuning set (2026-11-29,
its 8 cases at 3x, best median / worst): 25.1 % / 42.5 % with the first wave set
apart, 15.3 % / 28.7 % with every map typical (benchmarks/BACKTEST.md).

When a job has runs at two or more input sizes, :func:`fit_map_work` fits the
job's total map work against its input, ``W = F + P x bytes`` (fixed +
proportional: Zhang et al. 2013, section 5, fit the platform's phases the
same way over the benchmark's data sizes), instead of trusting the smallest
run alone: a JIT that keeps improving over a longer job makes the per-byte
cost fall with size, which one small run cannot show.  The reduce side gets the
same line over its function's span against its input records
(:func:`fit_reduce_work`): its fixed part is then counted per reduce task, not
per record.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = [
    "FIXED_Z",
    "HAMPEL_K",
    "MAD_SCALE",
    "MIN_LATER_MAPS",
    "MIN_LATER_MAPS_ONE_JVM",
    "FirstWaveSplit",
    "WorkFit",
    "fit_map_work",
    "fit_reduce_work",
    "fit_work",
    "pooled_rel_sd",
    "split_first_wave",
    "unused_fit_reason",
]

#: Hampel's identifier: a task is a slow outlier beyond the median plus this many scaled MADs
#: (Hampel 1974; the usual 3, Leys et al. 2013).
HAMPEL_K = 3.0
#: The MAD's consistency factor for a normal distribution (1 / Phi^-1(3/4)).
MAD_SCALE = 1.4826
#: A fixed part fitted over sizes is kept where it exceeds this many standard errors (the usual
#: two-sided 95 % of a normal): below, the runs' noise could have made it (:func:`fit_work`).
FIXED_Z = 1.96
#: Fewer later-wave maps than this judge the others on too little: the profile says so.
MIN_LATER_MAPS = 3
#: In one JVM (LocalJobRunner) on one slot, fewer later-wave maps than this are judged by the fastest map:
#: the JVM's warm-up stalls some of them (module docstring, "Tasks of one JVM").
MIN_LATER_MAPS_ONE_JVM = 8

#: The least spread the outlier rule assumes, as a share of the median: tasks timed to the
#: millisecond that all took 40 ms have a MAD of 0, and a 41 ms task is no outlier.
MIN_REL_SPREAD = 0.05


@dataclass(frozen=True, slots=True)
class FirstWaveSplit:
    """A run's map tasks split into the typical task and a one-time term.

    Attributes
    ----------
    typical_avg_ms, typical_max_ms, typical_count
        The typical map: every map within the later waves' outlier cut (all
        maps where the run cannot tell, see ``can_tell``).
    one_time_ms
        What the run's other tasks spent beyond the typical one, per slot: added
        once per job by predictions (>= 0).
    slots
        The peak number of maps the run ran at once.
    left_out
        Tasks not in the typical statistic (first wave and slow outliers).
    typical_index
        Positions (in the durations given) of the tasks in the typical statistic.
    later_count
        Maps of later waves: what the typical map was judged against.
    max_extra_ms
        The most one left-out map spent beyond the typical map: what ARIA's upper bound
        adds, since one slot may carry that whole extra.
    can_tell
        Whether the run had later waves to take the typical map from; a run of
        one wave cannot tell a first-wave cost from a per-task one.
    """

    typical_avg_ms: float
    typical_max_ms: float
    typical_count: int
    one_time_ms: float
    slots: int
    left_out: int
    typical_index: tuple[int, ...]
    later_count: int
    can_tell: bool
    max_extra_ms: float = 0.0
    #: whether the typical map is the fastest (one JVM, few later maps: module docstring)
    fastest: bool = False
    #: whether every map is typical because a cluster's few later maps set nothing apart
    pooled: bool = False
    #: whether the typical map is built phase by phase (:mod:`profiles.phase_floor`)
    floored: bool = False
    #: the later waves' maps' total time (what :attr:`later_excess_ms` is reckoned from)
    later_total_ms: float = 0.0

    @property
    def later_excess_ms(self) -> float:
        """Of the one-time term, what the later waves' maps spent beyond the typical map (the run's
        total, ms): in one JVM a stall the job's run-time compiles put on a later map, not each slot's."""
        later = self.later_total_ms - self.later_count * self.typical_avg_ms
        return min(max(later, 0.0), self.slots * self.one_time_ms)

    @property
    def caveat(self) -> str | None:
        """Why a larger run's prediction rests on thin evidence, and how to fix it; ``None`` if it does not."""
        fix = "profile a run with more maps than slots, or a second input size"
        if not self.can_tell:
            return (
                f"its {self.typical_count} maps ran in one wave on {self.slots} slot(s), so its profile cannot "
                "tell a one-time (first-wave) cost from a per-task one and charges every map of a larger run "
                f"with it; {fix}"
            )
        if self.later_count < MIN_LATER_MAPS:
            return (
                f"only {self.later_count} map(s) of later waves to judge its maps against: what it takes for "
                f"one-time and per-task cost is uncertain; {fix}"
            )
        typical_work = (self.typical_count + self.left_out) * self.typical_avg_ms
        if self.slots * self.one_time_ms > typical_work:
            return (
                f"the maps it set apart as one-time cost ({self.slots * self.one_time_ms:.0f} ms) outweigh all "
                f"its maps at the typical duration ({typical_work:.0f} ms): a larger run's prediction rests on "
                "that split; profile a second input size to fit fixed and proportional cost"
            )
        return None

    @property
    def evidence(self) -> str:
        """One line: which tasks the per-task cost came from."""
        total = self.typical_count + self.left_out
        if not self.can_tell:
            return (
                f"per-task map cost from all {total} maps of one wave ({self.slots} slot(s)): a one-time "
                "cost cannot be told from a per-task one; profile a run with more maps than slots, or a "
                "second input size"
            )
        if self.pooled:
            return (
                f"per-task map cost from all {total} maps: each started its own JVM, and {self.later_count} "
                f"map(s) of later waves are too few to set the first wave apart; profile a run with more maps "
                "than slots, or a second input size"
            )
        if self.floored:
            return (
                f"per-task map cost from each phase's least time over the {total} maps (one JVM: its warm-up "
                f"stalls single phases of single maps); their extra {self.one_time_ms:.0f} ms per slot added once per job"
            )
        if self.fastest:
            return (
                f"per-task map cost from the {self.typical_count} fastest of {total} maps (one JVM: its warm-up "
                f"lands on whichever maps compile); {self.left_out} slower map(s) left out, their extra "
                f"{self.one_time_ms:.0f} ms per slot added once per job"
            )
        return (
            f"per-task map cost from {self.typical_count} typical maps (judged against the later waves); "
            f"{self.left_out} slow first-wave or outlying map(s) left out, their extra "
            f"{self.one_time_ms:.0f} ms per slot added once per job"
        )


def _outlier_cut(values: Sequence[float]) -> float:
    """The Hampel identifier's upper cut: median + HAMPEL_K scaled MADs (at least MIN_REL_SPREAD)."""
    med = statistics.median(values)
    mad = MAD_SCALE * statistics.median(abs(v - med) for v in values)
    return med + HAMPEL_K * max(mad, MIN_REL_SPREAD * med)


def split_first_wave(
    durations_ms: Sequence[float], waves: Sequence[int], slots: int, *, one_jvm: bool = False
) -> FirstWaveSplit:
    """Split successful map durations into the typical map and a one-time term (module docstring);
    ``one_jvm``: the maps ran in one JVM (LocalJobRunner): with few later maps the typical one is the fastest.

    >>> s = split_first_wave([600, 40, 42, 38, 40], [1, 2, 3, 4, 5], 1)
    >>> round(s.typical_avg_ms), round(s.one_time_ms), s.left_out
    (40, 560, 1)
    >>> round(5 * s.typical_avg_ms + s.slots * s.one_time_ms)  # the run's total map time, kept
    760
    """
    if len(durations_ms) != len(waves) or not durations_ms:
        raise ValueError("split_first_wave needs one wave per duration, and at least one")
    slots = max(1, slots)
    later = [d for d, w in zip(durations_ms, waves, strict=True) if w > 1]
    thin = 0 < len(later) < MIN_LATER_MAPS  # (one wave: no later maps, nothing to set apart)
    fastest = one_jvm and (thin or (slots == 1 and 0 < len(later) < MIN_LATER_MAPS_ONE_JVM))
    kept = tuple(range(len(durations_ms)))  # every map, where nothing is set apart
    excess = 0.0
    if later and (one_jvm or not thin):  # a cluster's few later maps set nothing apart (module docstring)
        cut = min(durations_ms) * (1 + MIN_REL_SPREAD) if fastest else _outlier_cut(later)
        kept = tuple(i for i, d in enumerate(durations_ms) if d <= cut)
        excess = sum(durations_ms) - statistics.fmean(durations_ms[i] for i in kept) * len(durations_ms)
        if excess <= 0:  # the first wave was no slower than the later ones: nothing to set apart
            kept, excess = tuple(range(len(durations_ms))), 0.0
    typical = [durations_ms[i] for i in kept]
    mean = statistics.fmean(typical)
    left = [d - mean for i, d in enumerate(durations_ms) if i not in set(kept)]
    return FirstWaveSplit(
        mean,
        max(typical),
        len(kept),
        excess / slots,
        slots,
        len(durations_ms) - len(kept),
        kept,
        len(later),
        bool(later),
        max([0.0, *left]),
        fastest,
        thin and not one_jvm,
        later_total_ms=sum(later),
    )


@dataclass(frozen=True, slots=True)
class WorkFit:
    """Work against the data it processes over runs of several sizes: ``W = fixed + per_unit x units``.

    The units are a map stage's input bytes (:func:`fit_map_work`) or a reduce's input
    records (:func:`fit_reduce_work`).
    """

    fixed_ms: float
    ms_per_unit: float
    sizes: int
    #: The fixed part's standard error where the runs' noise is known (``rel_sd`` of :func:`fit_work`).
    fixed_se_ms: float | None = None

    def work_ms(self, units: float) -> float:
        return self.fixed_ms + self.ms_per_unit * units

    @property
    def fixed_told_apart(self) -> bool:
        """Whether the fixed part stands out of the runs' noise: above :data:`FIXED_Z` standard
        errors (True where the noise is unknown: nothing says it does not)."""
        return self.fixed_se_ms is None or self.fixed_ms > FIXED_Z * self.fixed_se_ms


def fit_work(units: Sequence[float], work_ms: Sequence[float], rel_sd: float | None = None) -> WorkFit | None:
    """Least-squares line through (data, work) of runs at >= 2 sizes; ``None`` otherwise.

    Runs of one size (within 1 %) cannot tell fixed from proportional cost.
    A line with a negative slope (more data, less work) is no cost model and
    gives ``None`` too.

    ``rel_sd``: the runs' multiplicative noise (the log-sd of repeated runs,
    :meth:`~profiles.profile.JobProfile.run_log_sd`), each work figure taken
    to vary by that share of itself.  The fixed part is a linear combination
    of the figures, ``F = sum(c_i y_i)`` with ``c_i = 1/n - mean(x) (x_i -
    mean(x)) / Sxx``, so its standard error is ``sqrt(sum(c_i^2 (rel_sd
    y_i)^2))``.  Two sizes 3x apart put the intercept 1.5 sizes below the
    smaller: 15 % noise on each run makes its error about half the smaller
    run's work, and a fixed part smaller than that is noise that a prediction
    2.7x past the larger size carries 2.7x further.

    >>> f = fit_work([1e6, 2e6, 4e6], [1500.0, 2500.0, 4500.0])
    >>> round(f.fixed_ms), round(f.ms_per_unit * 1e6), f.sizes
    (500, 1000, 3)
    """
    if len(units) != len(work_ms):
        raise ValueError("fit_work needs one work figure per data size")
    if len(units) < 2 or max(units) <= 1.01 * min(units):
        return None
    mx, my = statistics.fmean(units), statistics.fmean(work_ms)
    sxx = sum((x - mx) ** 2 for x in units)
    slope = sum((x - mx) * (y - my) for x, y in zip(units, work_ms, strict=True)) / sxx
    if not (math.isfinite(slope) and slope > 0):
        return None
    sizes = len({round(x / (0.01 * max(units))) for x in units})
    se = None
    if rel_sd is not None:
        weights = [1 / len(units) - mx * (x - mx) / sxx for x in units]
        se = math.sqrt(sum((c * rel_sd * y) ** 2 for c, y in zip(weights, work_ms, strict=True)))
    return WorkFit(my - slope * mx, slope, sizes, se)


def fit_map_work(
    input_bytes: Sequence[float], work_ms: Sequence[float], rel_sd: float | None = None
) -> WorkFit | None:
    """A job's total map work (typical maps plus the one-time term) against its input bytes (:func:`fit_work`)."""
    return fit_work(input_bytes, work_ms, rel_sd)


def fit_reduce_work(
    records_per_reduce: Sequence[float], span_ms: Sequence[float], rel_sd: float | None = None
) -> WorkFit | None:
    """A reduce's function span (``reduce``, or ``reduce+write`` where a source lumps them) against
    its input records, over runs of several sizes (:func:`fit_work`).

    A reduce's function span holds a part that does not grow with its input
    (opening its output, the first records' class loading and JIT, the
    output committer's set-up): over the local suite's tuning runs at 8, 24
    and 64 MiB about 30-45 % of the smallest run's reduce phase.  One run
    prices that part per record, so a run eight times larger pays it eight
    times; a line over two sizes or more keeps it fixed, as the map side's
    :func:`fit_map_work` does (Zhang et al. 2013, section 5, fit each phase
    over the benchmark's data sizes the same way).

    >>> f = fit_reduce_work([40_000, 80_000], [1100.0, 1900.0])
    >>> round(f.fixed_ms), f.ms_per_unit
    (300, 0.02)
    """
    return fit_work(records_per_reduce, span_ms, rel_sd)


def pooled_rel_sd(log_sds: Sequence[float | None]) -> float | None:
    """Runs' multiplicative noise pooled over the cases that have repeats (the root mean square of
    their log-sds); ``None`` where none has.

    >>> round(pooled_rel_sd([0.1, None, 0.2]), 4)
    0.1581
    """
    known = [sd for sd in log_sds if sd is not None]
    return math.sqrt(statistics.fmean(sd * sd for sd in known)) if known else None


def unused_fit_reason(fit: WorkFit | None) -> str:
    """Why a fit over sizes is not used (for a profile's evidence line)."""
    if fit is None:
        return "one input size"
    if fit.fixed_ms < 0:
        return "a negative fixed cost (per-unit cost grows with size)"
    return (
        f"a fixed part of {fit.fixed_ms:.0f} ms within {FIXED_Z} standard errors ({fit.fixed_se_ms or 0:.0f} ms) "
        "of the runs' noise"
    )
