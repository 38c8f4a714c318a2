"""Backtest: predict runs the store has already measured, and say how far off every model is.

For every job name with runs at several input sizes, map counts or reduce
counts (Zhang et al. 2013, section 6, Figures 4 and 5 do the same on their
applications):

1. runs with the same input size (within :data:`~predict.backtest_runs.SAME_SIZE_RTOL`), map count
   and reduce count form a *case*, measured as the median of their completion
   times; the completion time is ARIA's (Verma et al. 2011): first task
   attempt start to last attempt finish;
2. the profile comes from the smallest case's median run, the lower of the
   two middle ones when the case has an even number of runs
   (:func:`profiles.extract.extract_profile`), with the makespans of all that
   case's runs (their spread is the machine's run-to-run variation, which the
   bounds' and the simulator's intervals include);
3. every other case is predicted with every registered model, with the
   case's input size, split count and reduce count; where the job also ran on
   other map slot counts, each count's cases are predicted once more, from
   the smallest case on that count (:attr:`BacktestRow.slots`: the same slots
   as the profile, or other ones);
4. error = (predicted - measured) / measured; for models with an interval,
   whether it contains the measured time; and whether the prediction falls
   within the case's fastest and slowest runs (the noise floor);
5. the errors a *perfect* model would still show (:func:`~predict.backtest_scores.noise_floor`): the
   profile and each case are medians of a few runs of a noisy machine, so a
   model that knew every job's true time, but learned it from the profile's
   runs, would be off by the ratio of two medians of noise.  With the
   run-to-run noise of the suite's own runs this floor is the yardstick for
   the errors above (summary keys ``floor_median_abs_error``,
   ``floor_worst_abs_error``).

On the LocalJobRunner (job ids ``job_local...``) the cluster is one node with
``mapreduce.local.{map,reduce}.tasks.maximum`` slots, and reduces start only
when every map is done (slow start 1.0: LocalJobRunner has no slow start).
Runs on a real cluster say nothing in the store of how many nodes and slots
it had: they are backtested only on a cluster the caller gives, and skipped
(with the reason) otherwise.

What cannot be backtested is skipped, never the whole backtest: runs without
an input size, a job whose profiled run cannot be profiled, a case or a model
that cannot be predicted; each reason is appended to ``skipped``.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any

import duckdb

from phaseline.errors import PhaselineError, recording_warnings
from predict import core
from predict.backtest_runs import (
    SAME_SIZE_RTOL,
    Run,
    case_labels,
    group_cases,
    load_runs,
    profiled_index,
    warn_if_mixed,
)
from predict.core import MS_PER_S, Cluster, Dataset, JobSettings, PhaseDurationModel
from profiles.extract import extract_profile
from profiles.profile import JobProfile

__all__ = ["BacktestRow", "backtest", "case_profile"]

@dataclass(frozen=True, slots=True)
class BacktestRow:
    """One model's prediction of one case; ``error`` is relative, signed (+ = over-predicted)."""

    job: str
    case: str
    model: str
    predicted_s: float
    measured_s: float
    error: float
    low_s: float | None
    high_s: float | None
    runs: int
    profile_job: str
    warnings: tuple[str, ...] = ()  # e.g. the platform model extrapolated past its fitted range
    #: The fastest and slowest of the case's runs: their spread is the machine's run-to-run
    #: noise, the floor below which no model's error can be judged.
    measured_min_s: float | None = None
    measured_max_s: float | None = None
    #: Every run of the case, and of the profiled case (seconds): what :func:`noise_floor` reads.
    measured_runs_s: tuple[float, ...] = ()
    profile_runs_s: tuple[float, ...] = ()
    #: The job ids of the case's runs: the case itself, whatever its ``case`` label says.
    case_job_ids: tuple[str, ...] = ()
    #: The case's input over the profiled run's: > 1 is an extrapolation past the profiled size.
    scale: float | None = None
    #: The map slots of the profiled run and of the case (LocalJobRunner's parallelism; None: not known).
    profile_slots: int | None = None
    case_slots: int | None = None

    @property
    def extent(self) -> str | None:
        """``"extrapolation"`` for a case larger than the profiled run (past :data:`SAME_SIZE_RTOL`),
        ``"interpolation"`` for one within the profiled size (other slots or reduces), ``None`` unknown."""
        if self.scale is None:
            return None
        return "extrapolation" if self.scale > 1 + SAME_SIZE_RTOL else "interpolation"

    @property
    def slots(self) -> str | None:
        """``"same slots"`` for a case predicted from a profile run on as many map slots, ``"other
        slots"`` for one predicted across slot counts (a what-if of the cluster), ``None`` unknown."""
        if self.profile_slots is None or self.case_slots is None:
            return None
        return "same slots" if self.profile_slots == self.case_slots else "other slots"

    @property
    def case_key(self) -> tuple[str, str, tuple[str, ...], str]:
        """What tells this row's case and profile from every other: its job, label, runs and profiled run."""
        return (self.job, self.case, self.case_job_ids, self.profile_job)

    @property
    def spread(self) -> float | None:
        """(slowest - fastest run) / median run of the case; None with one run."""
        if self.measured_min_s is None or self.measured_max_s is None or self.runs < 2:
            return None
        return (self.measured_max_s - self.measured_min_s) / self.measured_s

    @property
    def within_runs(self) -> bool | None:
        """Whether the prediction lies between the case's fastest and slowest run (None: one run)."""
        lo, hi = self.measured_min_s, self.measured_max_s
        if lo is None or hi is None or self.runs < 2:
            return None
        return lo <= self.predicted_s <= hi

    @property
    def covered(self) -> bool | None:
        """Whether the model's interval contains the measured time (None: the model gives none)."""
        if self.low_s is None or self.high_s is None:
            return None
        return self.low_s <= self.measured_s <= self.high_s

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> BacktestRow:
        """The row :meth:`to_dict` wrote (its derived keys, ``covered``, ``spread``, ``extent`` ..., are recomputed)."""
        return cls(
            job=d["job"],
            case=d["case"],
            model=d["model"],
            predicted_s=d["predicted_s"],
            measured_s=d["measured_s"],
            error=d["error"],
            low_s=d.get("low_s"),
            high_s=d.get("high_s"),
            runs=d["runs"],
            profile_job=d["profile_job"],
            warnings=tuple(d.get("warnings", ())),
            measured_min_s=d.get("measured_min_s"),
            measured_max_s=d.get("measured_max_s"),
            measured_runs_s=tuple(d.get("measured_runs_s", ())),
            profile_runs_s=tuple(d.get("profile_runs_s", ())),
            case_job_ids=tuple(d.get("case_job_ids", ())),
            scale=d.get("scale"),
            profile_slots=d.get("profile_slots"),
            case_slots=d.get("case_slots"),
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "job": self.job,
            "case": self.case,
            "model": self.model,
            "predicted_s": self.predicted_s,
            "measured_s": self.measured_s,
            "error": self.error,
            "low_s": self.low_s,
            "high_s": self.high_s,
            "covered": self.covered,
            "runs": self.runs,
            "profile_job": self.profile_job,
            "warnings": list(self.warnings),
            "measured_min_s": self.measured_min_s,
            "measured_max_s": self.measured_max_s,
            "spread": self.spread,
            "within_runs": self.within_runs,
            "measured_runs_s": list(self.measured_runs_s),
            "profile_runs_s": list(self.profile_runs_s),
            "case_job_ids": list(self.case_job_ids),
            "scale": self.scale,
            "extent": self.extent,
            "profile_slots": self.profile_slots,
            "case_slots": self.case_slots,
            "slots": self.slots,
        }


def backtest(
    con: duckdb.DuckDBPyConnection,
    platform: PhaseDurationModel,
    *,
    models: Iterable[str] | None = None,
    cluster: Cluster | None = None,
    skipped: list[str] | None = None,
) -> list[BacktestRow]:
    """Predict every case of every job with several cases, from the profile of its smallest run.

    ``cluster``: the cluster every run is predicted on.  Without it,
    LocalJobRunner runs are predicted on one node with their own
    ``mapreduce.local.*`` slots, and a job with any run from a real cluster
    (whose nodes and slots the store does not hold) is skipped, the reason
    appended to ``skipped``: predicted on one node with one slot, its errors
    would measure that guess, not the models.

    Nothing that goes wrong for one job stops the others: runs without an
    input size (:func:`~predict.backtest_runs.load_runs`), a job whose profiled run cannot be
    profiled, a case whose settings or input cannot be read (a PhaselineError
    each), and a model that cannot predict a case are skipped and the reason
    appended to ``skipped``.
    """
    names = tuple(models) if models is not None else core.models()
    notes: list[str] = skipped if skipped is not None else []
    by_name: dict[str, list[Run]] = defaultdict(list)
    for run in load_runs(con, skipped=notes):
        by_name[run.name].append(run)
    rows: list[BacktestRow] = []
    for name, runs in sorted(by_name.items()):
        cases = group_cases(runs)
        if len(cases) < 2:
            continue
        on_cluster = [r.job_id for r in runs if not r.local]
        if cluster is None and on_cluster:
            notes.append(
                f"{name}: {len(on_cluster)} of its {len(runs)} runs ran on a cluster, not the LocalJobRunner "
                f"(e.g. {on_cluster[0]}), and the store does not say its nodes and slots: give them (`phaseline "
                "backtest --nodes N --map-slots-per-node M --reduce-slots-per-node R`) to backtest it"
            )
            continue
        warn_if_mixed(name, runs)
        labels = case_labels(cases)
        for profiled_case, predicted in _profiled_groups(cases, labels):
            profiled = _profiled(con, name, profiled_case, notes)
            if profiled is None:
                continue
            for case, label in predicted:
                rows.extend(_case_rows(profiled, case, label, platform, names, cluster, notes))
    return rows


def _profiled_groups(
    cases: list[list[Run]], labels: list[str]
) -> list[tuple[list[Run], list[tuple[list[Run], str]]]]:
    """Which cases are predicted from which profiled case: every other case from the smallest case
    (the profile a user takes once); and, where the job ran on other map slot counts too, each such
    count's cases from the smallest case on that count, as a user profiles the cluster they predict
    for.  The first predicts across slot counts (a what-if of the cluster: on the LocalJobRunner,
    map threads sharing one JVM, which a cluster's own JVM per task does not); the second is the
    promise "profile once, predict a new dataset" on one cluster (:attr:`BacktestRow.slots`)."""
    groups = [(cases[0], list(zip(cases[1:], labels[1:], strict=True)))]
    base_slots = cases[0][0].map_slots
    for slots in sorted({case[0].map_slots for case in cases} - {base_slots}):
        on = [(case, label) for case, label in zip(cases, labels, strict=True) if case[0].map_slots == slots]
        if len(on) > 1:  # cases are ordered by size: the first on this count is its smallest
            groups.append((on[0][0], on[1:]))
    return groups


@dataclass(frozen=True, slots=True)
class _Profiled:
    """A job's profile, from its smallest case's median run, and what it says of its own evidence."""

    name: str
    base: Run
    runs: tuple[Run, ...]  # the smallest case's runs, by measured span
    profile: JobProfile
    warnings: tuple[str, ...]


def _profiled(
    con: duckdb.DuckDBPyConnection, name: str, smallest_case: list[Run], notes: list[str]
) -> _Profiled | None:
    """The profile of the smallest case's median run (by measured span: one slow or fast repeat of the
    profiled case would otherwise skew every prediction of the job), with the makespans of all its
    runs (their spread is the machine's run-to-run variation, which the bounds' and the simulator's
    intervals then include); None, the reason in ``notes``, where the run cannot be profiled."""
    smallest = sorted(smallest_case, key=lambda r: (r.span_ms, r.job_id))
    base = smallest[profiled_index(len(smallest))]
    try:
        # what the profile says of its own evidence (one wave: no one-time cost told apart) goes
        # with every row predicted from it, as the models' warnings do
        with recording_warnings() as said:
            profile = replace(
                extract_profile(con, base.job_id), makespans_ms=tuple(float(r.span_ms) for r in smallest)
            )
    except PhaselineError as exc:
        notes.append(f"{name}: its profiled run {base.job_id} cannot be profiled: {exc}")
        return None
    return _Profiled(name, base, tuple(smallest), profile, said.texts)


def case_profile(con: duckdb.DuckDBPyConnection, name: str, case: list[Run]) -> JobProfile | None:
    """The profile the backtest takes of one case of job ``name``: its median run's, with the
    makespans of all its runs (``None`` where that run cannot be profiled)."""
    profiled = _profiled(con, name, case, [])
    return None if profiled is None else profiled.profile


def _case_rows(
    profiled: _Profiled,
    case: list[Run],
    label: str,
    platform: PhaseDurationModel,
    models: tuple[str, ...],
    cluster: Cluster | None,
    notes: list[str],
) -> list[BacktestRow]:
    """One case predicted by every model from the job's profile; what cannot be, said in ``notes``."""
    name, base, profile = profiled.name, profiled.base, profiled.profile
    first = case[0]
    spans = [r.span_ms / MS_PER_S for r in case]
    measured = statistics.median(spans)
    try:
        where = cluster or Cluster(1, first.map_slots, first.reduce_slots)
        settings = JobSettings.from_config(
            profile.source.config,
            reduces=first.reduces,
            **({"slowstart": 1.0} if first.local else {}),
        )
        dataset = Dataset(input_bytes=first.input_bytes, splits=first.maps)
    except PhaselineError as exc:
        notes.append(f"{name} {label}: {exc}")
        return []
    rows = []
    for model in models:
        try:
            # A backtest predicts runs larger than the benchmarks: extrapolation is expected
            # and recorded with the row, not raised once per prediction.
            with recording_warnings() as said:
                pred = core.get(model).predict(profile, platform, where, dataset, settings)
        except PhaselineError as exc:
            notes.append(f"{model} on {name} {label}: {exc}")
            continue
        rows.append(
            BacktestRow(
                job=name,
                case=label,
                model=model,
                predicted_s=pred.seconds,
                measured_s=measured,
                error=(pred.seconds - measured) / measured,
                low_s=pred.low_s,
                high_s=pred.high_s,
                runs=len(case),
                profile_job=base.job_id,
                warnings=tuple(dict.fromkeys((*profiled.warnings, *said.texts))),
                measured_min_s=min(spans),
                measured_max_s=max(spans),
                measured_runs_s=tuple(spans),
                profile_runs_s=tuple(r.span_ms / MS_PER_S for r in profiled.runs),
                case_job_ids=tuple(r.job_id for r in case),
                scale=first.input_bytes / base.input_bytes if base.input_bytes > 0 else None,
                profile_slots=base.map_slots,
                case_slots=first.map_slots,
            )
        )
    return rows
