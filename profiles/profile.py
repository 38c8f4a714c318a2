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
:data:`COUNTER_FIELDS` maps Hadoop counter names (``MAP_INPUT_RECORDS``...) to
the :class:`Counters` fields, durations come from per-phase attempt spans.
Costs are in milliseconds per byte or per record; durations in milliseconds.

The JSON form has a schema version and the job(s) and configuration the
profile came from; :meth:`JobProfile.from_json` validates it and names the
offending field in a :class:`~phaseline.errors.ProfileError`.  Profiles of
several runs of the same job merge with :func:`merge_profiles`.
"""

from __future__ import annotations

import dataclasses
import enum
import json
import math
import re
import statistics
import types
import typing
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from phaseline.errors import DataQualityWarning, ProfileError
from phaseline.jsonnum import MAX_JSON_INT, json_int
from phaseline.schemas import Phase
from profiles.task_costs import fit_map_work

__all__ = [
    "COUNTER_FIELDS",
    "PROFILE_SCHEMA_VERSION",
    "CostStatistics",
    "Counters",
    "DataflowStatistics",
    "DurationStats",
    "InputStats",
    "JobProfile",
    "ProfileSource",
    "Stage",
    "evidence_line",
    "local_runner_job",
    "merge_profiles",
    "shared_run",
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
    REDUCE_TASK = "reduce_task"  # a whole reduce task


#: Hadoop counter name -> :class:`Counters` field (Hadoop 0.20 and 2.x+ names are the same).
COUNTER_FIELDS: Mapping[str, str] = types.MappingProxyType(
    {
        "MAP_INPUT_RECORDS": "map_input_records",
        "MAP_OUTPUT_RECORDS": "map_output_records",
        "MAP_OUTPUT_BYTES": "map_output_bytes",
        "MAP_OUTPUT_MATERIALIZED_BYTES": "map_output_materialized_bytes",
        "COMBINE_INPUT_RECORDS": "combine_input_records",
        "COMBINE_OUTPUT_RECORDS": "combine_output_records",
        "SPILLED_RECORDS": "spilled_records",
        "REDUCE_INPUT_GROUPS": "reduce_input_groups",
        "REDUCE_INPUT_RECORDS": "reduce_input_records",
        "REDUCE_SHUFFLE_BYTES": "reduce_shuffle_bytes",
        "REDUCE_OUTPUT_RECORDS": "reduce_output_records",
        "BYTES_READ": "map_input_bytes",  # FileInputFormatCounter (else 0.20's MAP_INPUT_BYTES)
        "BYTES_WRITTEN": "reduce_output_bytes",  # FileOutputFormatCounter
        "HDFS_BYTES_READ": "hdfs_bytes_read",
        "HDFS_BYTES_WRITTEN": "hdfs_bytes_written",
        "FILE_BYTES_READ": "local_bytes_read",
        "FILE_BYTES_WRITTEN": "local_bytes_written",
    }
)


def _fail(where: str, what: str) -> typing.NoReturn:
    raise ProfileError(f"{where}: {what}")


def _check_non_negative(obj: object, *names: str) -> None:
    for name in names:
        value = getattr(obj, name)
        if value is not None and not (math.isfinite(value) and value >= 0):
            _fail(name, f"must be a finite number >= 0, got {value!r}")


@dataclass(frozen=True, slots=True)
class DurationStats:
    """Average and maximum duration of one phase or stage over ``count`` task attempts."""

    avg_ms: float
    max_ms: float
    count: int

    def __post_init__(self) -> None:
        _check_non_negative(self, "avg_ms", "max_ms", "count")
        if self.max_ms < self.avg_ms * (1 - 1e-9):
            _fail("max_ms", f"maximum {self.max_ms} is below the average {self.avg_ms}")


@dataclass(frozen=True, slots=True)
class InputStats:
    """The input dataset as the map tasks saw it (Zhang et al. 2013, section 5)."""

    splits: int
    avg_split_bytes: float
    max_split_bytes: float
    avg_split_records: float
    max_split_records: float

    def __post_init__(self) -> None:
        if self.splits < 1:
            _fail("splits", f"must be >= 1, got {self.splits}")
        _check_non_negative(
            self, "avg_split_bytes", "max_split_bytes", "avg_split_records", "max_split_records"
        )
        if self.max_split_bytes < self.avg_split_bytes * (1 - 1e-9):
            _fail("max_split_bytes", "is below avg_split_bytes")
        if self.max_split_records < self.avg_split_records * (1 - 1e-9):
            _fail("max_split_records", "is below avg_split_records")

    @property
    def total_bytes(self) -> float:
        return self.splits * self.avg_split_bytes

    @property
    def total_records(self) -> float:
        return self.splits * self.avg_split_records

    @property
    def record_width_bytes(self) -> float | None:
        """Average input record width (Herodotou's dsInputPairWidth), if records were counted."""
        return self.avg_split_bytes / self.avg_split_records if self.avg_split_records > 0 else None


@dataclass(frozen=True, slots=True)
class Counters:
    """Job-total counters of the run(s), named after :data:`COUNTER_FIELDS`; ``None`` = not reported."""

    map_input_records: int | None = None
    map_input_bytes: int | None = None
    map_output_records: int | None = None
    map_output_bytes: int | None = None
    map_output_materialized_bytes: int | None = None
    combine_input_records: int | None = None
    combine_output_records: int | None = None
    spilled_records: int | None = None
    reduce_input_groups: int | None = None
    reduce_input_records: int | None = None
    reduce_shuffle_bytes: int | None = None
    reduce_output_records: int | None = None
    reduce_output_bytes: int | None = None
    hdfs_bytes_read: int | None = None
    hdfs_bytes_written: int | None = None
    local_bytes_read: int | None = None
    local_bytes_written: int | None = None

    def __post_init__(self) -> None:
        _check_non_negative(self, *(f.name for f in dataclasses.fields(self)))


@dataclass(frozen=True, slots=True)
class DataflowStatistics:
    """Herodotou 2011, Table 3 (ds* fields); ``None`` where the run cannot tell."""

    input_pair_width: float | None = None
    recs_per_red_group: float | None = None
    map_size_sel: float | None = None
    map_recs_sel: float | None = None
    reduce_size_sel: float | None = None
    reduce_recs_sel: float | None = None
    combine_size_sel: float | None = None
    combine_recs_sel: float | None = None
    input_compress_ratio: float | None = None
    interm_compress_ratio: float | None = None
    out_compress_ratio: float | None = None
    startup_mem: float | None = None
    setup_mem: float | None = None
    cleanup_mem: float | None = None
    mem_per_map_rec: float | None = None
    mem_per_red_rec: float | None = None

    def __post_init__(self) -> None:
        _check_non_negative(self, *(f.name for f in dataclasses.fields(self)))
        for name in ("input_compress_ratio", "interm_compress_ratio", "out_compress_ratio"):
            if getattr(self, name) == 0:
                _fail(name, "must be > 0 (compressed bytes over raw bytes)")


@dataclass(frozen=True, slots=True)
class CostStatistics:
    """Herodotou 2011, Table 4 (cs* fields), in ms per byte or per record; ``None`` where unknown."""

    hdfs_read: float | None = None  # per byte
    hdfs_write: float | None = None  # per byte
    local_io_read: float | None = None  # per byte
    local_io_write: float | None = None  # per byte
    network: float | None = None  # per byte
    map_cpu: float | None = None  # per record
    reduce_cpu: float | None = None  # per record
    combine_cpu: float | None = None  # per record
    partition_cpu: float | None = None  # per record
    serde_cpu: float | None = None  # per record
    sort_cpu: float | None = None  # per record (times log2 of records per partition)
    merge_cpu: float | None = None  # per record
    in_uncompr_cpu: float | None = None  # per byte
    interm_uncompr_cpu: float | None = None  # per byte
    interm_compr_cpu: float | None = None  # per byte
    out_compr_cpu: float | None = None  # per byte
    setup_cpu: float | None = None  # per task
    cleanup_cpu: float | None = None  # per task

    def __post_init__(self) -> None:
        _check_non_negative(self, *(f.name for f in dataclasses.fields(self)))


@dataclass(frozen=True, slots=True)
class ProfileSource:
    """Which run(s) and configuration a profile came from."""

    job_ids: tuple[str, ...]
    job_name: str | None = None
    hadoop_version: str | None = None
    config: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.job_ids:
            _fail("job_ids", "a profile must name at least one job id")

    @property
    def local_runner(self) -> bool:
        """Whether every run was the LocalJobRunner's (:func:`local_runner_job`)."""
        return all(map(local_runner_job, self.job_ids))


def local_runner_job(job_id: str) -> bool:
    """Whether a job id is the LocalJobRunner's (``job_local<n>_<seq>``): one JVM, reduces after the maps.

    >>> local_runner_job("job_local1827494099_0001"), local_runner_job("job_1416424547277_0002")
    (True, False)
    """
    return job_id.startswith("job_local")


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
    #: The peak number of maps the profiled run ran at once (the slots its waves were cut by).
    map_slots: int | None = None
    #: Successful maps left out of the typical map's statistics (first wave, slow outliers):
    #: counted, never silently dropped.
    map_tasks_left_out: int = 0
    #: One line: which evidence the per-task costs came from (one run's later waves, one wave
    #: only, or a fit over runs of several sizes).
    cost_evidence: str | None = None
    schema_version: int = PROFILE_SCHEMA_VERSION

    def __post_init__(self) -> None:
        if self.schema_version != PROFILE_SCHEMA_VERSION:
            _fail(
                "schema_version",
                f"is {self.schema_version}, this phaseline reads version {PROFILE_SCHEMA_VERSION}; "
                "re-extract the profile with `phaseline profile`",
            )
        if self.num_maps < 0 or self.num_reduces < 0 or self.runs < 1:
            _fail("num_maps", "task counts must be >= 0 and runs >= 1")
        _check_non_negative(
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
        )
        if self.map_tasks_left_out < 0 or (self.map_slots is not None and self.map_slots < 1):
            _fail("map_tasks_left_out", "task counts must be >= 0 and map_slots >= 1")
        if any(not (math.isfinite(m) and m >= 0) for m in self.makespans_ms):
            _fail("makespans_ms", f"must be finite numbers >= 0, got {list(self.makespans_ms)}")
        spans = [m for m in self.makespans_ms if m > 0]
        if spans and max(spans) > MAX_RUN_RATIO * min(spans):
            # runs of one case (what the run-to-run spread is taken from) never differ so; a spread
            # of [1000, 1e20] ms overflowed the simulator's and stretched the bounds to 3.7e86 s
            _fail("makespans_ms", f"the profiled runs of one case differ more than {MAX_RUN_RATIO:,}x: "
                                  f"{min(spans):g} to {max(spans):g} ms")  # fmt: skip
        if (self.combine_size_sel is None) != (self.combine_recs_sel is None):
            _fail(
                "combine_size_sel", "combine_size_sel and combine_recs_sel are given together or not at all"
            )
        for key in self.stages:
            if key not in Stage.__members__.values():
                _fail(f"stages.{key}", f"unknown stage; expected one of {', '.join(Stage)}")
        for key in self.phases:
            if not _phase_key_ok(key):
                _fail(
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
        return typing.cast(dict[str, Any], _to_plain(self))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False) + "\n"

    @classmethod
    def from_dict(cls, data: object, *, where: str = "profile") -> JobProfile:
        """Build and validate a profile from parsed JSON; errors name the field (``profile.input.splits``)."""
        return _from_plain(cls, data, where)

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
        try:
            text = p.read_text(encoding="utf-8")
        except OSError as exc:
            raise ProfileError(f"{p}: cannot read profile ({exc.strerror})") from exc
        except UnicodeDecodeError as exc:
            raise ProfileError(f"{p}: not a profile (not UTF-8 text at byte {exc.start})") from None
        return cls.from_json(text, where=str(p))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(self.to_json(), encoding="utf-8")


# ---------------------------------------------------------------- (de)serialization
def _to_plain(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k): _to_plain(v) for k, v in value.items()}
    if isinstance(value, tuple | list):
        return [_to_plain(v) for v in value]
    return value


T = TypeVar("T")


def _from_plain(cls: type[T], data: object, where: str) -> T:
    if not isinstance(data, dict):
        _fail(where, f"expected an object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(data) - names)
    if unknown:
        _fail(f"{where}.{unknown[0]}", "unknown field (typo, or a profile from a newer phaseline?)")
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                _fail(f"{where}.{f.name}", "required field is missing")
            continue
        kwargs[f.name] = _convert(hints[f.name], data[f.name], f"{where}.{f.name}")
    try:
        return cls(**kwargs)
    except ProfileError as exc:
        raise ProfileError(f"{where}.{exc}") from exc


def _convert(hint: Any, value: object, where: str) -> object:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (inner,) = (a for a in args if a is not type(None))
        return _convert(inner, value, where)
    if value is None:
        _fail(where, "must not be null")
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            _fail(where, f"expected a number, got {value!r}")
        return float(value)
    if hint is int:
        if (n := json_int(value)) is None:
            _fail(where, f"expected an integer of at most {MAX_JSON_INT:.0e} in size, got {value!r}")
        return n
    if hint is str:
        if not isinstance(value, str):
            _fail(where, f"expected a string, got {value!r}")
        return value
    if origin is tuple:
        if not isinstance(value, list):
            _fail(where, f"expected a list, got {type(value).__name__}")
        return tuple(_convert(args[0], v, f"{where}[{i}]") for i, v in enumerate(value))
    if origin in (Mapping, dict) or hint is Mapping:
        if not isinstance(value, dict):
            _fail(where, f"expected an object, got {type(value).__name__}")
        return {str(k): _convert(args[1], v, f"{where}.{k}") for k, v in value.items()}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _from_plain(hint, value, where)
    raise TypeError(f"profile field type {hint!r} has no JSON conversion")  # a bug in this module


# ---------------------------------------------------------------- merging
def _wmean(pairs: Sequence[tuple[float | None, float]]) -> float | None:
    """Weighted mean over the pairs whose value is known; ``None`` if none is."""
    known = [(v, w) for v, w in pairs if v is not None]
    if not known:
        return None
    total = sum(w for _, w in known)
    if total <= 0:
        return sum(v for v, _ in known) / len(known)
    return sum(v * w for v, w in known) / total


def _merge_durations(items: Sequence[Mapping[str, DurationStats]]) -> dict[str, DurationStats]:
    keys = sorted({k for m in items for k in m})
    merged = {}
    for key in keys:
        stats = [m[key] for m in items if key in m]
        count = sum(s.count for s in stats)
        avg = _wmean([(s.avg_ms, s.count) for s in stats])
        merged[key] = DurationStats(avg_ms=avg or 0.0, max_ms=max(s.max_ms for s in stats), count=count)
    return merged


def _merge_fields(
    items: Sequence[T], weights: Mapping[str, Sequence[float]], default: Sequence[float], factory: Callable[..., T]
) -> T:
    """Each field the runs' mean weighted by ``weights[field]`` (the amount it is per), else by ``default``."""
    values: dict[str, float | None] = {}
    for f in dataclasses.fields(items[0]):  # type: ignore[arg-type]
        ws = weights.get(f.name, default)
        values[f.name] = _wmean([(getattr(it, f.name), w) for it, w in zip(items, ws, strict=True)])
    return factory(**values)


def _field_weights(
    in_bytes: Sequence[float], in_recs: Sequence[float], out_bytes: Sequence[float], out_recs: Sequence[float]
) -> tuple[dict[str, Sequence[float]], dict[str, Sequence[float]]]:
    """Per field of :class:`DataflowStatistics` and :class:`CostStatistics`, the runs' amounts it is
    a ratio or a cost of: a ratio weighted by its denominator (as the profile's own selectivities
    are, so that ``dataflow.map_size_sel`` is ``map_size_sel``), a cost per byte or record by the
    bytes or records it is paid on.  Fields not named here (memory, per-task costs) go by maps."""
    dataflow = {
        "input_pair_width": in_recs, "map_size_sel": in_bytes, "map_recs_sel": in_recs,
        "reduce_size_sel": out_bytes, "reduce_recs_sel": out_recs, "recs_per_red_group": out_recs,
        "combine_size_sel": out_bytes, "combine_recs_sel": out_recs, "input_compress_ratio": in_bytes,
        "interm_compress_ratio": out_bytes, "out_compress_ratio": out_bytes,
    }  # fmt: skip
    costs = {
        "hdfs_read": in_bytes, "in_uncompr_cpu": in_bytes, "map_cpu": in_recs,
        "local_io_read": out_bytes, "local_io_write": out_bytes, "network": out_bytes,
        "interm_uncompr_cpu": out_bytes, "interm_compr_cpu": out_bytes, "partition_cpu": out_recs,
        "serde_cpu": out_recs, "sort_cpu": out_recs, "merge_cpu": out_recs, "combine_cpu": out_recs,
        "reduce_cpu": out_recs,
    }  # fmt: skip
    return dataflow, costs


def _sum_counters(items: Sequence[Counters]) -> Counters:
    values: dict[str, int | None] = {}
    for f in dataclasses.fields(Counters):
        parts = [getattr(c, f.name) for c in items]
        values[f.name] = None if any(p is None for p in parts) else sum(parts)
    return Counters(**values)


#: Settings that differ between runs of one job at other sizes as a matter of course.
_TASK_COUNT_KEYS = frozenset(("mapred.map.tasks", "mapreduce.job.maps", "mapred.reduce.tasks", "mapreduce.job.reduces"))


#: Runs of one job whose selectivities differ by more than this factor are different work
#: (other data, other code): merging them averages two jobs into a third.
SELECTIVITY_SPREAD = 1.25


def selectivity_spread(values: Sequence[float | None]) -> tuple[float, float] | None:
    """``(low, high)`` of the runs' known ``values`` where they span more than :data:`SELECTIVITY_SPREAD`
    (one run's 0 beside another's positive value does too), else None.

    >>> selectivity_spread([0.6, None, 1.8]), selectivity_spread([1.0, 1.2])
    ((0.6, 1.8), None)
    """
    known = [v for v in values if v is not None]
    if len(known) < 2:
        return None
    low, high = min(known), max(known)
    return (low, high) if high > 0 and (low <= 0 or high / low > SELECTIVITY_SPREAD) else None


def _warn_on_spread(what: str, values: Sequence[float | None]) -> None:
    """A DataQualityWarning when the runs' ``values`` span more than :data:`SELECTIVITY_SPREAD`."""
    spread = selectivity_spread(values)
    if spread is not None:
        low, high = spread
        warnings.warn(
            DataQualityWarning(
                f"the merged runs' {what} ranges from {low:.3g} to {high:.3g}: different data or different "
                "code under one job name; the merged profile averages them (profile the runs apart to compare)"
            ),
            stacklevel=3,
        )


def shared_run(profiles: Sequence[JobProfile]) -> tuple[str, int, int] | None:
    """The first run (job id) two of ``profiles`` both hold, with the indexes of the first two that
    do (the same profile given twice, or a copy of it); None when every run is in one profile."""
    seen: dict[str, int] = {}
    for i, p in enumerate(profiles):
        for job in dict.fromkeys(p.source.job_ids):
            if job in seen:
                return job, seen[job], i
            seen[job] = i
    return None


def merge_profiles(profiles: Sequence[JobProfile]) -> JobProfile:
    """Merge the profiles of several runs of the same job into one.

    Averages are weighted by what they average over (task counts for
    durations, input bytes for size selectivities, input records for record
    selectivities and per-record times), maxima take the maximum, counters
    add up, and a statistic known in only some runs is averaged over those.
    The configuration keeps the settings all runs agree on; a
    :class:`~phaseline.errors.DataQualityWarning` names the others (task
    counts aside), and another says when the runs' map or reduce selectivities
    span more than :data:`SELECTIVITY_SPREAD` (other data or other code).

    Raises
    ------
    ProfileError
        No profiles, profiles of differently named jobs (or of named and unnamed ones), or
        profiles that share a run (one job id in two of them: the same profile given twice,
        or a copy of it), whose run would be counted twice.
    """
    if not profiles:
        raise ProfileError("merge_profiles: no profiles to merge")
    if len(profiles) == 1:
        return profiles[0]
    if (shared := shared_run(profiles)) is not None:
        job, first, second = shared
        raise ProfileError(
            f"merge_profiles: run {job} is in profiles {first + 1} and {second + 1}; merged, it would count "
            "twice (give each run's profile once)"
        )
    names = {p.source.job_name for p in profiles if p.source.job_name is not None}
    if len(names) > 1:
        raise ProfileError(
            f"merge_profiles: profiles of different jobs ({', '.join(sorted(names))}) do not merge"
        )
    unnamed = [job for p in profiles if p.source.job_name is None for job in p.source.job_ids]
    if names and unnamed:  # nothing says the unnamed run is the named job: two jobs' times would mix
        raise ProfileError(
            f"merge_profiles: {', '.join(unnamed)} has no job name, so it cannot be told to be a run of "
            f"{next(iter(names))!r}; profile it alone"
        )
    if not names:  # nothing names them one job; merged all the same, as the user asked
        warnings.warn(
            DataQualityWarning(
                f"merging runs without a job name ({', '.join(unnamed)}): nothing says they are runs of "
                "one job; two jobs' profiles merged give neither's times"
            ),
            stacklevel=2,
        )
    in_bytes = [p.input.total_bytes for p in profiles]
    in_recs = [p.input.total_records for p in profiles]
    out_bytes = [b * p.map_size_sel for b, p in zip(in_bytes, profiles, strict=True)]
    out_recs = [r * p.map_recs_sel for r, p in zip(in_recs, profiles, strict=True)]
    maps = [float(p.num_maps) for p in profiles]
    reduces = [float(p.num_reduces) for p in profiles]
    splits = sum(p.input.splits for p in profiles)
    configs = [p.source.config for p in profiles]
    config = {k: v for k, v in configs[0].items() if all(c.get(k) == v for c in configs[1:])}
    differ = sorted({k for c in configs for k in c} - config.keys() - _TASK_COUNT_KEYS)
    if differ:
        shown = "; ".join(f"{k} ({', '.join(sorted({str(c.get(k)) for c in configs}))})" for k in differ[:5])
        warnings.warn(
            DataQualityWarning(
                f"the merged runs differ in {len(differ)} setting(s), which the merged profile leaves out "
                f"(predictions take them from the new settings or Hadoop's defaults): {shown}"
                + (" ..." if len(differ) > 5 else "")
            ),
            stacklevel=2,
        )
    _warn_on_spread("map selectivity (output/input bytes)", [p.map_size_sel for p in profiles])
    _warn_on_spread("map selectivity (output/input records)", [p.map_recs_sel for p in profiles])
    _warn_on_spread("reduce selectivity (output/input bytes)", [p.reduce_size_sel for p in profiles])
    versions = {p.source.hadoop_version for p in profiles}
    source = ProfileSource(
        job_ids=tuple(j for p in profiles for j in p.source.job_ids),
        job_name=next(iter(names)) if names else None,
        hadoop_version=versions.pop() if len(versions) == 1 else None,
        config=config,
    )
    combine = [(p.combine_size_sel, p.combine_recs_sel) for p in profiles]
    dataflow_w, cost_w = _field_weights(in_bytes, in_recs, out_bytes, out_recs)
    merged = JobProfile(
        source=source,
        num_maps=round(sum(maps) / len(profiles)),
        num_reduces=round(sum(reduces) / len(profiles)),
        input=InputStats(
            splits=max(1, round(splits / len(profiles))),
            avg_split_bytes=sum(in_bytes) / splits,
            max_split_bytes=max(p.input.max_split_bytes for p in profiles),
            avg_split_records=sum(in_recs) / splits,
            max_split_records=max(p.input.max_split_records for p in profiles),
        ),
        map_size_sel=_wmean([(p.map_size_sel, w) for p, w in zip(profiles, in_bytes, strict=True)]) or 0.0,
        map_recs_sel=_wmean([(p.map_recs_sel, w) for p, w in zip(profiles, in_recs, strict=True)]) or 0.0,
        reduce_size_sel=_wmean([(p.reduce_size_sel, w) for p, w in zip(profiles, out_bytes, strict=True)]),
        reduce_recs_sel=_wmean([(p.reduce_recs_sel, w) for p, w in zip(profiles, out_recs, strict=True)]),
        combine_size_sel=_wmean([(c[0], w) for c, w in zip(combine, out_bytes, strict=True)]),
        combine_recs_sel=_wmean([(c[1], w) for c, w in zip(combine, out_recs, strict=True)]),
        map_ms_per_record=_wmean([(p.map_ms_per_record, w) for p, w in zip(profiles, in_recs, strict=True)]),
        reduce_ms_per_record=_wmean(
            [(p.reduce_ms_per_record, w) for p, w in zip(profiles, out_recs, strict=True)]
        ),
        map_task_overhead_ms=_wmean(
            [(p.map_task_overhead_ms, w) for p, w in zip(profiles, maps, strict=True)]
        ),
        reduce_task_overhead_ms=_wmean(
            [(p.reduce_task_overhead_ms, w) for p, w in zip(profiles, reduces, strict=True)]
        ),
        stages=_merge_durations([p.stages for p in profiles]),
        phases=_merge_durations([p.phases for p in profiles]),
        counters=_sum_counters([p.counters for p in profiles]),
        dataflow=_merge_fields([p.dataflow for p in profiles], dataflow_w, maps, DataflowStatistics),
        costs=_merge_fields([p.costs for p in profiles], cost_w, maps, CostStatistics),
        runs=sum(p.runs for p in profiles),
        makespans_ms=_repeat_makespans(profiles),
    )
    return _with_map_costs(merged, profiles)


def evidence_line(profile: JobProfile) -> str:
    """One line: which evidence the profile's per-task costs came from (issue 37's "says so in one line")."""
    if profile.cost_evidence is not None:
        return profile.cost_evidence
    return "per-task map cost averaged over every map (a profile from before first-wave costs were set apart)"


def _map_work_ms(p: JobProfile) -> float | None:
    """A run's total map time: its maps at the typical duration plus the one-time term on each slot."""
    typical = p.stage(Stage.MAP_TASK)
    if typical is None or p.map_one_time_ms is None or p.map_slots is None:
        return None
    return p.num_maps * typical.avg_ms + p.map_slots * p.map_one_time_ms


def _with_map_costs(merged: JobProfile, profiles: Sequence[JobProfile]) -> JobProfile:
    """The merged profile's one-time and per-task map cost: fitted over the runs' sizes where they differ.

    Runs of one size average their one-time terms (weighted by maps).  Runs at
    two or more sizes fit their total map work against their input
    (:func:`profiles.task_costs.fit_map_work`, ``W = fixed + per_byte x bytes``):
    the typical map is the proportional part at the merged split size, and the
    fixed part, spread over the slots, is the one-time term.  A one-time term
    learnt from the smallest run alone over-prices a large run whose per-byte
    cost keeps falling (a JIT that keeps improving: issue 37's group-by).
    """
    known = [p for p in profiles if _map_work_ms(p) is not None]
    left_out = sum(p.map_tasks_left_out for p in profiles)
    extras = [p.map_one_time_max_ms for p in profiles if p.map_one_time_max_ms is not None]
    merged = dataclasses.replace(merged, map_one_time_max_ms=max(extras) if extras else None)
    if len(known) < len(profiles) or not known:
        return dataclasses.replace(merged, map_tasks_left_out=left_out)
    slots = round(statistics.median(p.map_slots or 1 for p in known))
    one_time = _wmean([(p.map_one_time_ms, float(p.num_maps)) for p in known]) or 0.0
    fit = fit_map_work([p.input.total_bytes for p in known], [_map_work_ms(p) or 0.0 for p in known])
    if fit is None or fit.fixed_ms < 0:
        why = "one input size" if fit is None else "a negative fixed cost (per-byte cost grows with size)"
        return dataclasses.replace(
            merged,
            map_one_time_ms=one_time,
            map_slots=slots,
            map_tasks_left_out=left_out,
            cost_evidence=f"per-task map cost averaged over {len(known)} runs ({why}: no fit across sizes); "
            f"one-time {one_time:.0f} ms per slot added once per job",
        )
    stage = merged.stage(Stage.MAP_TASK)
    per_task = fit.ms_per_byte * merged.input.avg_split_bytes
    stages = dict(merged.stages)
    if stage is not None and stage.avg_ms > 0:
        scale = per_task / stage.avg_ms
        stages[Stage.MAP_TASK.value] = DurationStats(per_task, stage.max_ms * scale, stage.count)
    return dataclasses.replace(
        merged,
        stages=stages,
        map_one_time_ms=fit.fixed_ms / slots,
        map_slots=slots,
        map_tasks_left_out=left_out,
        cost_evidence=(
            f"per-task map cost fitted over runs at {fit.sizes} input sizes "
            f"({min(p.input.total_bytes for p in known):,.0f}-{max(p.input.total_bytes for p in known):,.0f} B): "
            f"total map work = {fit.fixed_ms:.0f} ms + {fit.ms_per_byte * 2**20:.1f} ms per MiB; the fixed part "
            f"over {slots} slot(s) added once per job"
        ),
    )


def _repeat_makespans(profiles: Sequence[JobProfile]) -> tuple[float, ...]:
    """The runs' makespans, where the runs are repeats of one case (the same input, within
    :data:`SAME_CASE_RTOL`, and reduce count); else none, with a warning.  The bounds' interval
    and the simulator's spread read them as run-to-run noise: word count at 2 and 8 maps (370 and
    1,267 ms) had stretched the bounds to 0.001-705 s."""
    sizes = [p.input.total_bytes for p in profiles]
    if max(sizes) - min(sizes) <= SAME_CASE_RTOL * max(sizes) and len({p.num_reduces for p in profiles}) == 1:
        return tuple(m for p in profiles for m in p.makespans_ms)
    if sum(len(p.makespans_ms) for p in profiles) >= 2:
        warnings.warn(
            DataQualityWarning(
                "the merged runs are of different inputs or reduce counts "
                f"({min(sizes):.4g}-{max(sizes):.4g} B, {len({p.num_reduces for p in profiles})} reduce count(s)): "
                "their makespans are not repeats of one case, so no run-to-run spread is taken from them"
            ),
            stacklevel=3,
        )
    return ()
