"""The job profile: what one past run (or several) says about a MapReduce job.

A profile carries what the prediction models need and nothing invented:

* Zhang et al. 2013, section 5: map and reduce selectivity (bytes and
  records), the per-record processing time of the map and reduce functions,
  and the input characteristics (number of splits; average and maximum split
  size in bytes and records).
* Verma et al. 2011 (ARIA): average and maximum durations of the map tasks,
  the first and the typical shuffle, and the reduce phase, for the bounds.
* Herodotou 2011, Tables 3 and 4: the dataflow statistics (``ds*``) and cost
  statistics (``cs*``) the data supports; a field the run cannot tell stays
  ``None``.

Fields mirror what the store holds, so extraction is a matter of aggregating:
:data:`~profiles.profile_stats.COUNTER_FIELDS` maps Hadoop counter names
(``MAP_INPUT_RECORDS``...) to the :class:`~profiles.profile_stats.Counters` fields,
durations come from per-phase attempt spans.  Costs are in milliseconds per byte or
per record; durations in milliseconds.  The statistics records are
:mod:`profiles.profile_stats`'s; ``DurationStats`` is also importable from here for
``predict/tasks.py`` and ``predict/simulate.py``, which import it so.

The JSON form (:mod:`profiles.profile_json`) has a schema version and the job(s) and
configuration the profile came from; :meth:`JobProfile.from_json` validates it and
names the offending field in a :class:`~phaseline.errors.ProfileError`.  Profiles of
several runs of the same job merge with :func:`profiles.merge_runs.merge_profiles`.
"""

from __future__ import annotations

import enum
import json
import math
import re
import statistics
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from phaseline.errors import ProfileError
from phaseline.hadoop_names import local_runner_job
from phaseline.schemas import Phase
from phaseline.text_file import read_text_file
from profiles.profile_json import from_plain, to_plain
from profiles.profile_stats import (
    CostStatistics,
    Counters,
    DataflowStatistics,
    DurationStats,
    InputStats,
    check_non_negative,
    fail,
)

__all__ = [
    "MAX_RUN_RATIO",
    "PROFILE_SCHEMA_VERSION",
    "RUN_INTERVAL_CONFIDENCE",
    "SAME_CASE_RTOL",
    "DurationStats",
    "JobProfile",
    "ProfileSource",
    "Stage",
    "evidence_line",
]

PROFILE_SCHEMA_VERSION = 1
#: Confidence of :meth:`JobProfile.run_interval` (the simulator's intervals are 90 % too).
RUN_INTERVAL_CONFIDENCE = 0.9
#: Runs merged as repeats of one case differ in input by no more than this share (their
#: makespans then measure run-to-run noise; see merge_profiles).
SAME_CASE_RTOL = 0.01
#: Profiled makespans of one case never differ by more than this factor (a profile edited by hand).
MAX_RUN_RATIO = 1000


class Stage(enum.StrEnum):
    """Task-level spans the bounds model needs (Verma et al. 2011, ARIA, section 3)."""

    MAP_TASK = "map_task"  # a whole map task
    FIRST_SHUFFLE = "first_shuffle"  # first-wave shuffle, the part not overlapping the map stage
    TYPICAL_SHUFFLE = "typical_shuffle"  # shuffle of a reduce from a later wave
    REDUCE_PHASE = "reduce_phase"  # reduce task after its shuffle (sort + reduce + write)
    REDUCE_TASK = "reduce_task"  # a whole reduce task that waited for no map (all, where every one did)


@dataclass(frozen=True, slots=True)
class ProfileSource:
    """Which run(s) and configuration a profile came from."""

    job_ids: tuple[str, ...]
    job_name: str | None = None
    hadoop_version: str | None = None
    config: Mapping[str, str] = field(default_factory=dict)
    #: Whether every run was uberized: its tasks ran one after another in the ApplicationMaster's
    #: JVM (the job history's ``JOB_INITED``; :mod:`predict.uber`).
    uberized: bool = False

    def __post_init__(self) -> None:
        if not self.job_ids:
            fail("job_ids", "a profile must name at least one job id")

    @property
    def local_runner(self) -> bool:
        """Whether every run was the LocalJobRunner's (:func:`local_runner_job`)."""
        return all(map(local_runner_job, self.job_ids))

    @property
    def one_jvm(self) -> bool:
        """Whether every run's tasks shared one JVM, one after another or on its slots: the
        LocalJobRunner's runs, or uberized ones; their reduces ran after every map."""
        return self.uberized or self.local_runner


_PHASE_KEY = re.compile(r"^[a-z][a-z_]*(\+[a-z][a-z_]*)*$")


def _phase_key_ok(key: str) -> bool:
    """Phase names are lower-case identifiers joined by '+' (``read``, ``reduce+write``, ``commit``).

    The :class:`~phaseline.schemas.Phase` names are the ones models read; a
    source may add spans of its own (e.g. the task commit), kept for people.
    """
    return _PHASE_KEY.match(key) is not None


@dataclass(frozen=True, slots=True)
class JobProfile:
    """A compact job profile (Zhang et al. 2013, section 5; Herodotou 2011, Tables 3-4; ARIA).

    Selectivities are output/input ratios of the map (and reduce) functions
    *before* any combiner; ``combine_*_sel`` is the combiner's output/input
    ratio where a combiner ran.  ``map_ms_per_record`` is the map function's
    time per input record, ``reduce_ms_per_record`` the reduce function's per
    input record.  ``map_task_overhead_ms`` is the part of a map task's span
    that none of its phases explains (JVM start, setup, commit); likewise for
    reduces.  ``stages`` holds :class:`Stage` spans, ``phases`` per-phase spans
    keyed by :class:`~phaseline.schemas.Phase` names (or combined names such
    as ``"reduce+write"`` where a source cannot split them).  ``makespans_ms``
    holds each profiled run's completion time (ARIA's: first successful task
    attempt start to last finish); with several runs of the same input their
    spread is the environment's run-to-run variation, which the simulator's
    intervals (:func:`run_cv`) and the bounds (:func:`run_interval`) include, both
    from one estimate (:func:`run_log_sd`).
    """

    source: ProfileSource
    num_maps: int
    num_reduces: int
    input: InputStats
    map_size_sel: float
    map_recs_sel: float
    reduce_size_sel: float | None = None
    reduce_recs_sel: float | None = None
    combine_size_sel: float | None = None
    combine_recs_sel: float | None = None
    map_ms_per_record: float | None = None
    reduce_ms_per_record: float | None = None
    map_task_overhead_ms: float | None = None
    reduce_task_overhead_ms: float | None = None
    stages: Mapping[str, DurationStats] = field(default_factory=dict)
    phases: Mapping[str, DurationStats] = field(default_factory=dict)
    counters: Counters = field(default_factory=Counters)
    dataflow: DataflowStatistics = field(default_factory=DataflowStatistics)
    costs: CostStatistics = field(default_factory=CostStatistics)
    runs: int = 1
    makespans_ms: tuple[float, ...] = ()
    #: What the run's first-wave and outlying maps spent beyond the typical map, per slot: a
    #: prediction adds it once per job, never per task (:mod:`profiles.task_costs`).  ``None``:
    #: a profile from before the split, whose map stage averages every map.
    map_one_time_ms: float | None = None
    #: The most one left-out map spent beyond the typical map (ms): ARIA's upper bound adds it, since
    #: one slot may carry a first map's whole extra.  ``None``: as ``map_one_time_ms``.
    map_one_time_max_ms: float | None = None
    #: Of the one-time term, what the later waves' maps spent beyond the typical map (the run's total,
    #: ms): in one JVM the job's compiles, which a run on other slots shares among its slots as far
    #: as the stalled map's own length allows (:func:`predict.map_one_time.one_time_ms`).  ``None``: the whole term is per slot.
    map_one_time_later_ms: float | None = None
    #: The peak number of maps the profiled run ran at once (the slots its waves were cut by).
    map_slots: int | None = None
    #: Successful maps left out of the typical map's statistics (first wave, slow outliers):
    #: counted, never silently dropped.
    map_tasks_left_out: int = 0
    #: One line: which evidence the per-task costs came from (one run's later waves, one wave
    #: only, or a fit over runs of several sizes).
    cost_evidence: str | None = None
    #: The input sizes the per-task map cost was fitted over (:func:`profiles.merge_runs.merge_profiles`):
    #: 1 where it comes from runs of one size, whose splits say nothing of a larger split's cost.
    map_cost_sizes: int = 1
    #: The part of a reduce's function span (``reduce``, or ``reduce+write`` where lumped) that
    #: does not grow with its input, ms per reduce task: fitted over runs of several sizes
    #: (:func:`profiles.task_costs.fit_reduce_work`), left out of the per-record reduce cost and
    #: so counted once per reduce.  ``None``: runs of one size, whose per-record cost holds it.
    reduce_fixed_ms: float | None = None
    #: What the first wave of one JVM's reduces spent after their shuffle beyond the typical (later)
    #: reduce, per reduce slot: added once per job (:mod:`profiles.first_reduces`).  ``None``: none set apart.
    reduce_one_time_ms: float | None = None
    #: Successful reduces left out of the typical reduce's statistics (one JVM's first wave): counted.
    reduce_tasks_left_out: int = 0
    #: The JIT's compiles inside the profiled run's tasks, ms, where they ran one at a time in one JVM
    #: that compiles in the tasks' threads: the profile's costs are the tasks' time without them, and
    #: predictions add this once per job (:mod:`profiles.jit_clock`).  ``None``: not set apart.
    jit_one_time_ms: float | None = None
    #: The mean number of the job's attempts that ran on a typical map's host while it ran (itself
    #: included; time-weighted, ``attempt_concurrency.sql``): how many task JVMs shared the node's
    #: CPUs with the typical map.  A prediction for nodes with fewer cores than that scales its maps
    #: by the change of CPU share (:mod:`predict.contention`).  ``None``: not known (no hosts or times).
    map_concurrency: float | None = None
    #: A map's garbage-collection time (``GC_TIME_MILLIS``, the mean over the run's maps) over the
    #: typical map's duration (:func:`profiles.gc_share.map_gc_share`), at :attr:`map_concurrency`: in one JVM (the
    #: LocalJobRunner) a map's collections stop the maps beside it, which :mod:`predict.contention`
    #: prices for another number of slots.  ``None``: not counted.
    map_gc_share: float | None = None
    schema_version: int = PROFILE_SCHEMA_VERSION

    def __post_init__(self) -> None:
        if self.schema_version != PROFILE_SCHEMA_VERSION:
            fail(
                "schema_version",
                f"is {self.schema_version}, this phaseline reads version {PROFILE_SCHEMA_VERSION}; "
                "re-extract the profile with `phaseline profile`",
            )
        if self.num_maps < 0 or self.num_reduces < 0 or self.runs < 1:
            fail("num_maps", "task counts must be >= 0 and runs >= 1")
        check_non_negative(
            self,
            "map_size_sel",
            "map_recs_sel",
            "reduce_size_sel",
            "reduce_recs_sel",
            "combine_size_sel",
            "combine_recs_sel",
            "map_ms_per_record",
            "reduce_ms_per_record",
            "map_task_overhead_ms",
            "reduce_task_overhead_ms",
            "map_one_time_ms",
            "map_one_time_max_ms",
            "map_one_time_later_ms",
            "reduce_fixed_ms",
            "reduce_one_time_ms",
            "jit_one_time_ms",
            "map_concurrency",
            "map_gc_share",
        )
        if min(self.map_tasks_left_out, self.reduce_tasks_left_out) < 0 or (self.map_slots is not None and self.map_slots < 1):
            fail("map_tasks_left_out", "task counts must be >= 0 and map_slots >= 1")
        if any(not (math.isfinite(m) and m >= 0) for m in self.makespans_ms):
            fail("makespans_ms", f"must be finite numbers >= 0, got {list(self.makespans_ms)}")
        spans = [m for m in self.makespans_ms if m > 0]
        if spans and max(spans) > MAX_RUN_RATIO * min(spans):
            # runs of one case (what the run-to-run spread is taken from) never differ so; a spread
            # of [1000, 1e20] ms overflowed the simulator's and stretched the bounds to 3.7e86 s
            fail("makespans_ms", f"the profiled runs of one case differ more than {MAX_RUN_RATIO:,}x: "
                                  f"{min(spans):g} to {max(spans):g} ms")  # fmt: skip
        if (self.combine_size_sel is None) != (self.combine_recs_sel is None):
            fail(
                "combine_size_sel", "combine_size_sel and combine_recs_sel are given together or not at all"
            )
        for key in self.stages:
            if key not in Stage.__members__.values():
                fail(f"stages.{key}", f"unknown stage; expected one of {', '.join(Stage)}")
        for key in self.phases:
            if not _phase_key_ok(key):
                fail(
                    f"phases.{key}",
                    f"not a phase name; expected lower-case names such as {', '.join(Phase)}, joined by '+'",
                )

    @property
    def has_combiner(self) -> bool:
        return self.combine_size_sel is not None

    def stage(self, name: Stage) -> DurationStats | None:
        return self.stages.get(name.value)

    def _repeat_spans(self) -> list[float] | None:
        """The profiled runs' positive makespans, or None with fewer than two."""
        spans = [m for m in self.makespans_ms if m > 0]
        return spans if len(spans) >= 2 else None

    def run_log_sd(self) -> float | None:
        """Sample standard deviation of the profiled runs' log makespans (None: fewer than 2 runs).

        The one estimate of run-to-run spread that both the bounds
        (:meth:`run_interval`) and the simulator (:meth:`run_cv`) use: the noise
        is multiplicative, so it is measured on the logs.  Meaningful when the
        runs had the same input and settings (repeats of one case), as the
        backtest's profiles do; runs of different sizes make it a size effect.
        """
        spans = self._repeat_spans()
        return None if spans is None else statistics.stdev(math.log(m) for m in spans)

    def run_interval(self, confidence: float = RUN_INTERVAL_CONFIDENCE) -> tuple[float, float] | None:
        """Where another run of the profiled case falls, with probability ``confidence``, as
        (low, high) factors over the median profiled makespan (None: fewer than 2 runs).

        The prediction interval for one new observation of a normal sample, taken on the
        log makespans (run-to-run noise is multiplicative, as the simulator also assumes):
        ``exp(mean +- t_{(1+c)/2, n-1} s sqrt(1 + 1/n))``, with the sample mean and
        standard deviation ``s`` (:meth:`run_log_sd`) of the n logs.  Three runs leave the spread itself
        uncertain (t = 2.92 at 90 %), so the interval is wide: their range would cover
        another run only half of the time ((n - 1) / (n + 1)).
        """
        if not 0.0 < confidence < 1.0:
            raise ProfileError(f"confidence must lie strictly between 0 and 1, got {confidence}")
        spans = self._repeat_spans()
        sd = self.run_log_sd()
        if spans is None or sd is None:
            return None
        from scipy import stats  # only here: a second of imports the rest of the module does not need

        n = len(spans)
        half = float(stats.t.ppf((1.0 + confidence) / 2.0, n - 1)) * sd * math.sqrt(1.0 + 1.0 / n)
        centre = math.exp(statistics.fmean(math.log(m) for m in spans)) / statistics.median(spans)
        return centre * math.exp(-half), centre * math.exp(half)

    def run_cv(self) -> float | None:
        """Coefficient of variation of the lognormal run-to-run factor (None: fewer than 2 runs).

        ``sqrt(exp(s^2) - 1)`` with ``s`` = :meth:`run_log_sd`, so that the simulator's
        factor (``log1p(cv^2)`` = ``s^2`` on the log) and the bounds' interval rest on
        the same estimate of the spread.
        """
        sd = self.run_log_sd()
        return None if sd is None else math.sqrt(math.expm1(sd * sd))

    # ----------------------------------------------------------------- JSON
    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready dict (mappings become objects, tuples lists)."""
        return typing.cast(dict[str, Any], to_plain(self))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, data: object, *, where: str = "profile") -> JobProfile:
        """Build and validate a profile from parsed JSON; errors name the field (``profile.input.splits``)."""
        return from_plain(cls, data, where)

    @classmethod
    def from_json(cls, text: str, *, where: str = "profile") -> JobProfile:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ProfileError(f"{where}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from exc
        except RecursionError:
            raise ProfileError(f"{where}: not a profile (JSON nested too deeply)") from None
        if isinstance(data, dict) and data.get("format") == "phaseline-platform-model":
            raise ProfileError(
                f"{where} is a platform model (`phaseline fit`), not a job profile (`phaseline profile`)"
            )
        return cls.from_dict(data, where=where)

    @classmethod
    def load(cls, path: str | Path) -> JobProfile:
        """Read and validate a profile file (``phaseline profile JOB --out profile.json`` writes them)."""
        p = Path(path)
        return cls.from_json(read_text_file(p, "profile", ProfileError), where=str(p))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")


def evidence_line(profile: JobProfile) -> str:
    """One line: which evidence the profile's per-task costs came from (issue 37's "says so in one line")."""
    if profile.cost_evidence is not None:
        return profile.cost_evidence
    return "per-task map cost averaged over every map (a profile from before first-wave costs were set apart)"
