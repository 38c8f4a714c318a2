"""Recommendations with a predicted gain: the settings a doctor finding points at, searched with a what-if model.

Each heuristic with a knob (:data:`KNOBS`) names the Hadoop settings that answer it and the
values worth trying around the job's own; the search prices every combination of the flagged
findings' knobs with a registered model (Herodotou's phase cost model by default, Herodotou 2011
eqs. 2-94, through :func:`predict.edits.apply_edits`) and keeps the best few.

Search method: Starfish's cost-based optimizer searched a job's configuration space with
Recursive Random Search over the what-if engine (Herodotou and Babu 2011, "Profiling, What-if
Analysis, and Cost-based Optimization of MapReduce Programs", PVLDB 4(11), section 5; RRS is Ye and
Kalyanaraman 2003).  RRS samples because the full space of 14 or more parameters is too large to
enumerate; here the space is only the knobs of the flagged findings, each with a handful of
values (:data:`MAX_COMBINATIONS` at most), so it is enumerated whole: the same what-if pricing,
an exhaustive search of the smaller space.  Each recommendation carries the model's backtested
error (the median and worst absolute error over its cases: of a backtest of the user's cluster,
``doctor --calibration``, or else of the local suite, ``benchmarks/BACKTEST.json``) so the
saving can be read against it.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import duckdb

from phaseline.errors import PhaselineError, recording_warnings
from predict import core
from predict.calibration import Calibration, load_calibration
from predict.core import Cluster, PhaseDurationModel
from predict.edits import Edit, Scenario, apply_edits
from predict.tasks import resolve_input
from profiles.doctor import Diagnosis, Heuristic, Severity
from profiles.extract import extract_profile
from profiles.profile import JobProfile

__all__ = ["COMPANIONS", "KNOBS", "MAP_OUTPUT_CODEC", "MAX_COMBINATIONS", "ModelError", "Recommendation", "Search", "backtest_error", "finding_rows", "search", "search_job"]

#: The most combinations one search prices (the product of the flagged knobs' values).
MAX_COMBINATIONS = 4096
#: Predictions closer than this (seconds) are the same: of two, the one with fewer and smaller edits is kept.
SAME_S = 1e-3
#: Where the backtest's summary lives (written by ``phaseline backtest --suite``).
BACKTEST_JSON = Path(__file__).resolve().parents[1] / "benchmarks" / "BACKTEST.json"

Candidates = Callable[[JobProfile, Scenario], list[str]]


def _sort_mb(profile: JobProfile, s: Scenario) -> list[str]:
    """Sort buffers from the job's up to 16 times it (Hadoop caps io.sort.mb at 2047)."""
    base = s.settings.io_sort_mb
    return sorted({f"{min(base * k, 2047):g}" for k in (2, 4, 8, 16)} | {"100"} - {f"{base:g}"}, key=float)


def _sort_factor(profile: JobProfile, s: Scenario) -> list[str]:
    base = s.settings.sort_factor
    return [str(f) for f in (10, 25, 50, 100) if f > base]


def _spill_percent(profile: JobProfile, s: Scenario) -> list[str]:
    return [f"{p:g}" for p in (0.8, 0.9) if p > s.settings.sort_spill_percent]


def _reduces(profile: JobProfile, s: Scenario) -> list[str]:
    """Multiples of the cluster's reduce slots (a whole number of waves), and half and double the job's."""
    slots, base = s.cluster.reduce_slots, s.settings.reduces
    values = {slots * k for k in (1, 2, 3, 4)} | {max(1, base // 2), base * 2}
    return [str(v) for v in sorted(values) if v != base and v >= 1]


def _split_bytes(profile: JobProfile, s: Scenario) -> list[str]:
    """Split sizes from a quarter to 16 times the job's: smaller ones down to 1 MiB, larger ones from any
    size (maps of a few kB, too many and too short, are what the larger ones answer)."""
    base = resolve_input(profile, s.dataset, s.settings).avg_split_bytes
    return [str(int(base * k)) for k in (0.25, 0.5, 2, 4, 8, 16) if k > 1 or base * k >= 2**20]


def _slowstart(profile: JobProfile, s: Scenario) -> list[str]:
    return [f"{v:g}" for v in (0.5, 0.8, 1.0) if v > s.settings.slowstart]


def _compress(profile: JobProfile, s: Scenario) -> list[str]:
    return [] if s.settings.compress_map_output else ["true"]


def _reduce_heap(profile: JobProfile, s: Scenario) -> list[str]:
    base = s.settings.reduce_task_heap_mb
    return [f"{base * k:g}" for k in (2, 4)]


#: The codec a recommendation to compress map output names: the model prices compression at a fast
#: codec's cost (Snappy-like, :data:`predict.settings.DEFAULT_INTERM_COMPRESS_MS_PER_BYTE` where the
#: profile measured none), and Hadoop's default codec is zlib's (DefaultCodec), several times slower.
#: LZ4 rather than Snappy: Hadoop 3.3+ runs both without native libraries (lz4-java, snappy-java), and
#: the local engine has both; LZ4 is the faster of the two to decompress.
MAP_OUTPUT_CODEC = "org.apache.hadoop.io.compress.Lz4Codec"
#: Settings a searched edit is run with but that the what-if does not price: what the edit needs to
#: mean what the model priced.  (key, value) of the edit -> the companion edits.
COMPANIONS: dict[tuple[str, str], tuple[Edit, ...]] = {
    ("mapreduce.map.output.compress", "true"): (Edit("mapreduce.map.output.compress.codec", MAP_OUTPUT_CODEC),),
}

#: heuristic -> the settings (whatif keys, Hadoop's 2.x names) that answer it, with their candidates.
KNOBS: dict[Heuristic, tuple[tuple[str, Candidates], ...]] = {
    Heuristic.MAP_SPILLS: (("mapreduce.task.io.sort.mb", _sort_mb),),
    Heuristic.MAPPER_SPILL: (("mapreduce.task.io.sort.mb", _sort_mb), ("mapreduce.map.sort.spill.percent", _spill_percent)),
    Heuristic.MERGE_PASSES: (("mapreduce.task.io.sort.factor", _sort_factor), ("mapreduce.task.io.sort.mb", _sort_mb)),
    Heuristic.REDUCER_TIME: (("mapreduce.job.reduces", _reduces),),
    Heuristic.REDUCE_SLOTS_IDLE: (("mapreduce.job.reduces", _reduces),),
    Heuristic.REDUCER_SKEW: (("mapreduce.job.reduces", _reduces),),
    Heuristic.MAPPER_TIME: (("mapreduce.input.fileinputformat.split.maxsize", _split_bytes),),
    Heuristic.SHUFFLE_WAIT: (("mapreduce.job.reduce.slowstart.completedmaps", _slowstart),),
    Heuristic.SHUFFLE_SORT: (
        ("mapreduce.job.reduce.slowstart.completedmaps", _slowstart),
        ("mapreduce.map.output.compress", _compress),
    ),
    Heuristic.MAP_OUTPUT_COMPRESSION: (("mapreduce.map.output.compress", _compress),),
    Heuristic.REDUCER_GC: (("mapreduce.reduce.java.opts", lambda p, s: [f"-Xmx{v}m" for v in _reduce_heap(p, s)]),),
}


@dataclass(frozen=True, slots=True)
class ModelError:
    """A model's backtested absolute error (fractions): the median and the worst over its cases."""

    model: str
    median: float
    worst: float
    cases: int


@functools.cache
def _suite_calibration() -> Calibration | None:
    """The local suite's backtest (:data:`BACKTEST_JSON`), read once per process: a doctor's search
    of every flagged job asks for it; ``None`` in a checkout without the benchmarks."""
    try:
        return load_calibration(BACKTEST_JSON)
    except PhaselineError:
        return None


def backtest_error(model: str, calibration: Calibration | None = None) -> ModelError | None:
    """The model's backtested error in ``calibration`` (a backtest of the user's cluster, :mod:`predict.calibration`),
    or, without one, in the local suite's (:data:`BACKTEST_JSON`); ``None`` where the backtest has no case of it."""
    if calibration is None:
        calibration = _suite_calibration()
    if calibration is None:  # a checkout without the benchmarks: no error to show
        return None
    cal = calibration.models.get(model)
    if cal is None:
        return None
    return ModelError(model, cal.median_abs_error, cal.worst_abs_error, cal.cases)


@dataclass(frozen=True, slots=True)
class Recommendation:
    """One configuration, the findings it answers, and its predicted time against the job's own."""

    job_id: str
    heuristics: tuple[Heuristic, ...]
    edits: tuple[Edit, ...]
    model: str
    baseline_s: float
    predicted_s: float
    error: ModelError | None
    #: the model's warnings about this prediction that the baseline's did not have (a platform model
    #: asked outside its fitted range): the backtested error does not cover an extrapolation
    notes: tuple[str, ...] = ()

    @property
    def saving_s(self) -> float:
        return self.baseline_s - self.predicted_s

    @property
    def saving_share(self) -> float:
        return self.saving_s / self.baseline_s if self.baseline_s > 0 else 0.0

    @property
    def set_line(self) -> str:
        """The edits as ``phaseline whatif`` options (``--set k=v ...``); the same ``k=v`` go to ``-D``."""
        return " ".join(f"--set {e.key}={e.value}" for e in self.edits)

    @property
    def companions(self) -> tuple[Edit, ...]:
        """The settings to run the edits with that the model did not price (:data:`COMPANIONS`)."""
        return tuple(c for e in self.edits for c in COMPANIONS.get((e.key, e.value), ()))

    @property
    def hadoop_settings(self) -> dict[str, str]:
        """The job's ``-D`` settings: the edits and their companions."""
        return {e.key: e.value for e in (*self.edits, *self.companions)}

    @property
    def summary(self) -> str:
        """One line: the settings, the predicted time and saving, the model's backtested error, the --set line."""
        error = (
            f"backtested error {100 * self.error.median:.1f} % (worst {100 * self.error.worst:.1f} %)"
            if self.error is not None else "no backtest of the model"
        )  # fmt: skip
        caveat = f"; caution, {len(self.notes)} model warning(s): {self.notes[0]}" if self.notes else ""
        run_with = f" (run it with {', '.join(c.label for c in self.companions)})" if self.companions else ""
        return (
            f"{', '.join(e.label for e in self.edits)}{run_with}: predicted {self.predicted_s:.2f} s against "
            f"{self.baseline_s:.2f} s, saving {self.saving_s:.2f} s ({100 * self.saving_share:.0f} %) by {self.model}, "
            f"{error}{caveat}; phaseline whatif {self.set_line}"
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "job_id": self.job_id,
            "heuristics": [str(h) for h in self.heuristics],
            "settings": {e.key: e.value for e in self.edits},
            "run_with": {e.key: e.value for e in self.companions},
            "model": self.model,
            "baseline_s": self.baseline_s,
            "predicted_s": self.predicted_s,
            "saving_s": self.saving_s,
            "saving_share": self.saving_share,
            "model_median_error": None if self.error is None else self.error.median,
            "model_worst_error": None if self.error is None else self.error.worst,
            "set": self.set_line,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class Search:
    """What one search found: the recommendations (faster than the job's own settings, best first), and
    for each flagged finding none of them answers, the fastest of its own settings, which the model
    predicts no faster (the doctor says so instead of staying silent)."""

    found: list[Recommendation]
    passed_over: dict[Heuristic, Recommendation]


def search(
    diagnosis: Diagnosis,
    profile: JobProfile,
    platform: PhaseDurationModel,
    base: Scenario,
    *,
    model: str = "herodotou",
    top: int = 3,
    min_severity: Severity = Severity.MODERATE,
    calibration: Calibration | None = None,
) -> Search:
    """Price every combination of the flagged findings' knobs (each knob also left as it is); keep the
    ``top`` fastest that beat the job's own settings, and each unanswered finding's best own setting.

    A combination the model cannot price (a :class:`~phaseline.errors.PhaselineError`) is passed
    over.  Of equal predictions (within :data:`SAME_S`) only the first is kept: the one with fewer
    edits, then the smaller values (each knob's candidates rise).
    """
    flagged = [f.heuristic for f in diagnosis.findings if f.severity >= min_severity and f.heuristic in KNOBS]
    knobs: dict[str, list[Heuristic]] = {}
    candidates: dict[str, list[str]] = {}
    for heuristic in flagged:
        for key, values in KNOBS[heuristic]:
            knobs.setdefault(key, []).append(heuristic)
            if key not in candidates:
                candidates[key] = values(profile, base)
    keys = [k for k in knobs if candidates[k]]
    if not keys:
        return Search([], {})
    predictor = core.get(model)
    baseline_s, baseline_notes = _price(predictor, profile, platform, base)
    error = backtest_error(model, calibration)
    priced: list[Recommendation] = []
    for combo in itertools.islice(_combinations(keys, candidates), MAX_COMBINATIONS):
        if not combo:
            continue
        try:
            seconds, notes = _price(predictor, profile, platform, apply_edits(base, combo, profile))
        except PhaselineError:
            continue
        answered = tuple(dict.fromkeys(h for e in combo for h in knobs[e.key]))
        fresh = tuple(n for n in notes if n not in baseline_notes)
        priced.append(Recommendation(diagnosis.job_id, answered, combo, model, baseline_s, seconds, error, fresh))
    priced.sort(key=lambda r: (round(r.predicted_s, 6), len(r.edits)))
    out: list[Recommendation] = []
    for r in priced:
        if r.predicted_s >= baseline_s or len(out) >= top:
            break
        if out and abs(r.predicted_s - out[-1].predicted_s) < SAME_S:  # the same time by more change: not another choice
            continue
        out.append(r)
    passed_over: dict[Heuristic, Recommendation] = {}
    for heuristic in dict.fromkeys(flagged):
        if any(heuristic in r.heuristics for r in out):
            continue
        own = {key for key, _ in KNOBS[heuristic]}
        best = next((r for r in priced if {e.key for e in r.edits} <= own), None)  # priced is fastest first
        if best is not None and best.saving_s <= 0:  # (a faster one only missed the top few)
            passed_over[heuristic] = replace(best, heuristics=(heuristic,))
    return Search(out, passed_over)


def _price(
    predictor: core.Model, profile: JobProfile, platform: PhaseDurationModel, scenario: Scenario
) -> tuple[float, tuple[str, ...]]:
    """The predicted seconds, and the model's warnings (an extrapolating platform model) about them."""
    with recording_warnings() as said:
        p = predictor.predict(profile, platform, scenario.cluster, scenario.dataset, scenario.settings)
    return p.seconds, said.texts


def _combinations(keys: Sequence[str], candidates: dict[str, list[str]]) -> Iterable[tuple[Edit, ...]]:
    """Every choice of one value (or none) per key, as the edits it makes."""
    choices = [[None, *candidates[k]] for k in keys]
    for values in itertools.product(*choices):
        yield tuple(Edit(k, v) for k, v in zip(keys, values, strict=True) if v is not None)



def finding_rows(diagnosis: Diagnosis, searched: Search | None = None) -> list[dict[str, Any]]:
    """The diagnosis' findings as output rows; with the job's search, the recommendation of each that
    it answered replaced by the searched settings (best first, ``; or`` between them), and of each
    whose own settings the model predicts no faster (``passed_over``) by that verdict."""
    found = searched.found if searched is not None else []
    passed_over = searched.passed_over if searched is not None else {}
    rows = []
    for finding in diagnosis.findings:
        row = finding.to_dict()
        answers = [r.summary for r in found if finding.heuristic in r.heuristics]
        if answers:
            row["recommendation"] = "; or ".join(answers)
        elif (r := passed_over.get(finding.heuristic)) is not None:
            row["recommendation"] = (
                f"{', '.join(e.label for e in r.edits)}: predicted {r.predicted_s:.2f} s against the job's "
                f"{r.baseline_s:.2f} s by {r.model}, no faster here, so not recommended (the heuristic's advice: "
                f"{finding.recommendation})"
            )
        rows.append(row)
    return rows


def search_job(
    con: duckdb.DuckDBPyConnection,
    diagnosis: Diagnosis,
    platform: PhaseDurationModel,
    cluster: Cluster,
    *,
    model: str = "herodotou",
    top: int = 3,
    min_severity: Severity = Severity.MODERATE,
    calibration: Calibration | None = None,
) -> Search:
    """:func:`search` for a job of the store: its profile extracted, its own settings as the baseline
    on ``cluster``.  A job whose profile cannot be extracted raises
    :class:`~phaseline.errors.ProfileError` saying why."""
    if not any(f.severity >= min_severity and f.heuristic in KNOBS for f in diagnosis.findings):
        return Search([], {})
    profile = extract_profile(con, diagnosis.job_id)
    base = Scenario.for_profile(profile, cluster)
    return search(
        diagnosis, profile, platform, base, model=model, top=top, min_severity=min_severity, calibration=calibration
    )
