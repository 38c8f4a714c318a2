"""Backtest: predict runs the store has already measured, and say how far off every model is.

For every job name with runs at several input sizes, map counts or reduce
counts (Zhang et al. 2013, section 6, Figures 4 and 5 do the same on their
applications):

1. runs with the same input size (within :data:`SAME_SIZE_RTOL`), map count
   and reduce count form a *case*, measured as the median of their completion
   times; the completion time is ARIA's (Verma et al. 2011): first task
   attempt start to last attempt finish;
2. the profile comes from the smallest case's median run, the lower of the
   two middle ones when the case has an even number of runs
   (:func:`profiles.extract.extract_profile`), with the makespans of all that
   case's runs (their spread is the machine's run-to-run variation, which the
   bounds' and the simulator's intervals include);
3. every other case is predicted with every registered model, with the
   case's input size, split count and reduce count;
4. error = (predicted - measured) / measured; for models with an interval,
   whether it contains the measured time; and whether the prediction falls
   within the case's fastest and slowest runs (the noise floor);
5. the errors a *perfect* model would still show (:func:`noise_floor`): the
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

import importlib.resources
import math
import statistics
import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import duckdb
import numpy as np

from phaseline.errors import DataQualityWarning, PhaselineError, PhaselineWarning, PredictionError
from predict import core
from predict.core import MS_PER_S, Cluster, Dataset, JobSettings, PhaseDurationModel
from profiles import queries
from profiles.extract import extract_profile
from profiles.merge_runs import SELECTIVITY_SPREAD, selectivity_spread
from profiles.profile import local_runner_job

__all__ = [
    "NOTHING_TO_BACKTEST", "BacktestRow", "ModelSummary", "NoiseFloor", "Run", "backtest", "error_table",
    "load_runs", "noise_floor", "require_rows", "summarize",
]  # fmt: skip

#: Input sizes within this relative distance are the same case.
SAME_SIZE_RTOL = 0.02

#: Why an empty backtest is an error, whatever the output format.
NOTHING_TO_BACKTEST = (
    "nothing to backtest: the store needs a job with runs at >= 2 input sizes, map counts or reduce counts "
    "(e.g. `phaseline backtest --suite local`)"
)


@dataclass(frozen=True, slots=True)
class Run:
    """One measured run of a job (a row of ``backtest_runs.sql``)."""

    job_id: str
    name: str
    maps: int
    reduces: int
    input_bytes: float
    span_ms: float
    map_slots: int
    reduce_slots: int
    local: bool
    map_selectivity: float | None = None  # map output / input bytes (job totals)


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

    @property
    def extent(self) -> str | None:
        """``"extrapolation"`` for a case larger than the profiled run (past :data:`SAME_SIZE_RTOL`),
        ``"interpolation"`` for one within the profiled size (other slots or reduces), ``None`` unknown."""
        if self.scale is None:
            return None
        return "extrapolation" if self.scale > 1 + SAME_SIZE_RTOL else "interpolation"

    @property
    def case_key(self) -> tuple[str, str, tuple[str, ...]]:
        """What tells this row's case from every other: its job, label and runs."""
        return (self.job, self.case, self.case_job_ids)

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
        }


def load_runs(con: duckdb.DuckDBPyConnection, *, skipped: list[str] | None = None) -> list[Run]:
    """Every successful job with an input size and a measured task span, from the store.

    The input size is the job's FileInputFormat ``BYTES_READ`` (Hadoop 2/3's
    ``FileInputFormatCounter``, 1.x's ``FileInputFormat$Counter``), else
    0.20's ``MAP_INPUT_BYTES``; but for a LocalJobRunner run, the sum of its
    maps' split lengths as ``data_skew.sql`` reads them (a map run beside
    another in the one JVM counts the other's reads too, since the counter is a
    delta of the JVM's file-system statistics: 77 MiB counted for a 64 MiB input
    on two slots), the same measure on one slot as on two.  Jobs without one (or with 0 bytes), and jobs
    without a positive task span, are left out; how many of each is appended
    to ``skipped``.
    """
    sql = importlib.resources.files("predict").joinpath("backtest_runs.sql").read_text("utf-8")
    queries.install(con, queries.Concept.JOB_SUMMARY)  # the span's one definition (backtest_runs.sql)
    out = []
    no_input: list[str] = []
    no_span: list[str] = []
    for job_id, name, maps, reduces, input_bytes, selectivity, span, _submit, m_slots, r_slots in con.execute(
        sql
    ).fetchall():
        local = local_runner_job(str(job_id))
        if local:  # (a job of several input formats, MultipleInputs, counts no BYTES_READ at all)
            counted = float(input_bytes) if input_bytes is not None and input_bytes > 0 else None
            input_bytes = _local_map_input(con, str(job_id)) or counted
            if selectivity is not None and counted is not None and input_bytes:
                selectivity = float(selectivity) * counted / input_bytes
        if input_bytes is None or input_bytes <= 0:
            no_input.append(str(job_id))
            continue
        if span is None or span <= 0:
            no_span.append(str(job_id))
            continue
        out.append(
            Run(
                job_id,
                name,
                int(maps or 0),
                int(reduces or 0),
                float(input_bytes),
                float(span),
                int(m_slots or 1),
                int(r_slots or 1),
                local,
                None if selectivity is None else float(selectivity),
            )
        )
    if skipped is not None and no_input:
        skipped.append(
            f"{len(no_input)} job(s) without an input size to scale by (no FileInputFormat BYTES_READ or "
            f"MAP_INPUT_BYTES job counter, or 0 bytes), e.g. {no_input[0]}: not backtested"
        )
    if skipped is not None and no_span:
        skipped.append(
            f"{len(no_span)} job(s) without a measured task span (no successful map or reduce attempt with "
            f"its start and finish), e.g. {no_span[0]}: not backtested"
        )
    return out


def _local_map_input(con: duckdb.DuckDBPyConnection, job_id: str) -> float | None:
    """The job's maps' inputs summed as ``data_skew.sql`` reads each (split lengths where maps overlapped)."""
    maps = queries.data_skew(con, job_id)
    sizes = maps.loc[maps["task_type"] == "MAP", "input_bytes"].dropna()
    total = float(sizes.sum())
    return total if total > 0 else None


def _warn_if_mixed(name: str, runs: Sequence[Run]) -> None:
    """Warn when runs under one name differ in map selectivity as :func:`merge_profiles` warns for them."""
    spread = selectivity_spread([r.map_selectivity for r in runs])
    if spread is not None:
        low, high = spread
        warnings.warn(
            DataQualityWarning(
                f"runs named {name!r} differ in map selectivity ({low:.3g} to {high:.3g}, more than "
                f"x{SELECTIVITY_SPREAD:g}): other data or other code under one name, so their errors measure "
                "that, not the models"
            ),
            stacklevel=3,
        )


def _cases(runs: Sequence[Run]) -> list[list[Run]]:
    """Runs grouped by (input size within SAME_SIZE_RTOL, maps, reduces, map slots), smallest input
    (then fewest slots) first.

    Runs of one input cut into other map counts (another split size) are other
    cases: their times differ by as much as other inputs' would; so are runs on
    other slots (LocalJobRunner's map parallelism).
    """
    groups: list[list[Run]] = []
    for run in sorted(runs, key=lambda r: (r.input_bytes, r.maps, r.reduces, r.map_slots, r.job_id)):
        for g in groups:
            ref = g[0]
            if (
                ref.reduces == run.reduces
                and ref.maps == run.maps
                and ref.map_slots == run.map_slots
                and abs(ref.input_bytes - run.input_bytes) <= SAME_SIZE_RTOL * ref.input_bytes
            ):
                g.append(run)
                break
        else:
            groups.append([run])
    return groups


def _profiled_index(n_runs: int) -> int:
    """Which of the profiled case's runs, sorted by time, is profiled: the median, the lower of the
    two middle ones for an even count (what :func:`noise_floor` simulates)."""
    return (n_runs - 1) // 2


def _label(run: Run, digits: int | None = 1) -> str:
    """``input=8.1MiB maps=4 reduces=2``: the input in MiB to ``digits`` decimals, or in bytes (``None``),
    and `` slots=2`` where the run had more than one map slot."""
    size = f"{round(run.input_bytes)}B" if digits is None else f"{run.input_bytes / 2**20:.{digits}f}MiB"
    slots = f" slots={run.map_slots}" if run.map_slots > 1 else ""
    return f"input={size} maps={run.maps} reduces={run.reduces}{slots}"


def _labels(cases: Sequence[Sequence[Run]]) -> list[str]:
    """One label per case (its first run's), unique: in MiB to one decimal, and where two cases'
    labels would be the same (cases 2 % apart at 1 MiB both round to ``1.0MiB``), those with more
    decimals until they differ (``0.96MiB``, ``1.04MiB``), else in bytes."""
    firsts = [case[0] for case in cases]
    labels = [_label(run) for run in firsts]
    for digits in (2, 3, 4, 5, 6, None):
        clash = {label for label in labels if labels.count(label) > 1}
        if not clash:
            break
        labels = [
            _label(run, digits) if label in clash else label for label, run in zip(labels, firsts, strict=True)
        ]
    return labels


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
    input size (:func:`load_runs`), a job whose profiled run cannot be
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
        cases = _cases(runs)
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
        _warn_if_mixed(name, runs)
        # The smallest case's median run (by measured span): one slow or fast repeat of the
        # profiled case would otherwise skew every prediction of the job.
        smallest = sorted(cases[0], key=lambda r: (r.span_ms, r.job_id))
        base = smallest[_profiled_index(len(smallest))]
        # ... and the makespans of all its runs: their spread is the machine's run-to-run
        # variation, which the bounds' and the simulator's intervals then include.
        try:
            # what the profile says of its own evidence (one wave: no one-time cost told apart) goes
            # with every row predicted from it, as the models' warnings do
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("always", PhaselineWarning)
                profile = replace(
                    extract_profile(con, base.job_id), makespans_ms=tuple(float(r.span_ms) for r in smallest)
                )
            profile_warnings = tuple(str(w.message) for w in said if issubclass(w.category, PhaselineWarning))
        except PhaselineError as exc:
            notes.append(f"{name}: its profiled run {base.job_id} cannot be profiled: {exc}")
            continue
        for case, label in zip(cases, _labels(cases), strict=True):
            first = case[0]
            if case is cases[0]:
                continue  # the profiled case itself
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
                continue
            for model in names:
                try:
                    # A backtest predicts runs larger than the benchmarks: extrapolation is expected
                    # and recorded with the row, not raised once per prediction.
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always", PhaselineWarning)
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
                        warnings=tuple(dict.fromkeys((*profile_warnings, *(str(w.message) for w in caught)))),
                        measured_min_s=min(spans),
                        measured_max_s=max(spans),
                        measured_runs_s=tuple(spans),
                        profile_runs_s=tuple(r.span_ms / MS_PER_S for r in smallest),
                        case_job_ids=tuple(r.job_id for r in case),
                        scale=first.input_bytes / base.input_bytes if base.input_bytes > 0 else None,
                    )
                )
    return rows


@dataclass(frozen=True, slots=True)
class ModelSummary:
    """A model's errors over all cases: median and worst absolute error, interval coverage."""

    model: str
    cases: int
    median_abs_error: float
    worst_abs_error: float
    coverage: float | None  # share of cases whose interval contains the measured time
    #: share of cases (with >= 2 runs) whose prediction lies within the range of the case's runs
    within_runs: float | None = None
    #: median over those cases of the runs' spread ((slowest - fastest) / median): the noise floor
    median_spread: float | None = None
    #: median width of the model's interval, (high - low) / measured: what the coverage cost
    median_width: float | None = None
    #: what a perfect model would score on the same cases (:func:`noise_floor`)
    floor_median_abs_error: float | None = None
    floor_worst_abs_error: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "cases": self.cases,
            "median_abs_error": self.median_abs_error,
            "worst_abs_error": self.worst_abs_error,
            "coverage": self.coverage,
            "within_runs": self.within_runs,
            "median_spread": self.median_spread,
            "median_width": self.median_width,
            "floor_median_abs_error": self.floor_median_abs_error,
            "floor_worst_abs_error": self.floor_worst_abs_error,
        }


def summarize(rows: Sequence[BacktestRow]) -> list[ModelSummary]:
    """Per model: median and worst |error| and interval coverage (Zhang et al. 2013 report the first two).

    Also, where cases have several runs: the share of predictions that fall within the
    range of the case's runs, and the median run-to-run spread (the noise floor); for
    models with intervals, their median width relative to the measured time (a coverage
    is only as good as the width it took).
    """
    by_model: dict[str, list[BacktestRow]] = defaultdict(list)
    for row in rows:
        by_model[row.model].append(row)
    out = []
    for model, rs in by_model.items():
        errs = [abs(r.error) for r in rs]
        cov = [r.covered for r in rs if r.covered is not None]
        within = [r.within_runs for r in rs if r.within_runs is not None]
        spreads = [r.spread for r in rs if r.spread is not None]
        widths = [
            (r.high_s - r.low_s) / r.measured_s
            for r in rs
            if r.low_s is not None and r.high_s is not None and r.measured_s > 0
        ]
        floor = noise_floor(rs)
        out.append(
            ModelSummary(
                model,
                len(rs),
                statistics.median(errs),
                max(errs),
                sum(cov) / len(cov) if cov else None,
                sum(within) / len(within) if within else None,
                statistics.median(spreads) if spreads else None,
                statistics.median(widths) if widths else None,
                floor.median_abs_error if floor else None,
                floor.worst_abs_error if floor else None,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class NoiseFloor:
    """The errors of a perfect model on a backtest's cases, from the runs' own noise.

    ``sigma`` is the run-to-run standard deviation of log completion times,
    pooled over every case with two runs or more; ``median_abs_error`` and
    ``worst_abs_error`` are the medians, over the simulated backtests, of the
    median and of the largest |error|; ``p_worst_within`` maps a bound to the
    share of simulated backtests whose largest |error| stays within it.
    """

    sigma: float
    median_abs_error: float
    worst_abs_error: float
    p_worst_within: dict[float, float]


def noise_floor(
    rows: Sequence[BacktestRow],
    *,
    replications: int = 4_000,
    seed: int = 0,
    bounds: Sequence[float] = (0.17,),
    sigma: float | None = None,
) -> NoiseFloor | None:
    """How far a perfect model would be off, given how noisy the measured runs are.

    A perfect model knows every case's true completion time ``T`` but learns
    it through the profile, which is the profiled case's median run as
    :func:`backtest` picks it: of its ``n_p`` runs sorted by time, the one at
    ``(n_p - 1) // 2`` (the lower of the two middle runs when ``n_p`` is
    even); each case is measured as the median of its ``n_c`` runs (the mean
    of the two middle ones when ``n_c`` is even, as ``measured_s`` is).  With
    multiplicative lognormal run-to-run noise of log-sd ``sigma``, its error
    on a case is ``lower_med(n_p draws) / med(n_c draws) - 1``; one noise draw
    of the profile is shared by all cases predicted from it, as in the
    backtest.  Each replication draws every case of ``rows`` once (same jobs,
    same run counts; rows of one case, :attr:`BacktestRow.case_key`, count
    once); the medians over ``replications`` are returned.  It is a floor:
    the platform model's own noise and every modelling error come on top.
    ``sigma`` given: that noise instead of the runs' (what would a quieter
    machine allow?).  ``None`` when no case (or profile) has two runs to
    estimate sigma from.

    >>> row = BacktestRow("j", "c", "m", 1.0, 1.0, 0.0, None, None, 3, "p",
    ...                   measured_runs_s=(1.0, 1.0, 1.0), profile_runs_s=(0.5, 0.5, 0.5))
    >>> noise_floor([row]).worst_abs_error
    0.0
    """
    cases = {r.case_key: r for r in rows if r.measured_runs_s and r.profile_runs_s}
    if not cases:
        return None
    profiles = {r.job: r.profile_runs_s for r in cases.values()}  # one profiled case per job
    if sigma is None:
        samples = [r.measured_runs_s for r in cases.values()] + list(profiles.values())
        devs = [np.log(s) - np.log(s).mean() for s in map(np.asarray, samples) if len(s) >= 2 and min(s) > 0]
        dof = sum(len(d) - 1 for d in devs)
        if dof == 0:
            return None
        sigma = float(np.sqrt(sum(float((d**2).sum()) for d in devs) / dof))
    rng = np.random.default_rng(seed)

    def medians(n_runs: int, *, lower: bool = False) -> np.ndarray[Any, Any]:
        """One median of ``n_runs`` noise draws per replication; ``lower``: the draw sorted at
        :func:`_profiled_index` (the profiled run), else their median (the measured time)."""
        draws = rng.lognormal(0.0, sigma, size=(replications, n_runs))
        if lower:
            return np.sort(draws, axis=1)[:, _profiled_index(n_runs)]
        return np.median(draws, axis=1)

    profile_noise = {job: medians(len(runs), lower=True) for job, runs in sorted(profiles.items())}
    errors = np.empty((replications, len(cases)))
    for i, r in enumerate(cases.values()):
        errors[:, i] = np.abs(profile_noise[r.job] / medians(len(r.measured_runs_s)) - 1)
    worst = errors.max(axis=1)
    return NoiseFloor(
        sigma,
        float(np.median(np.median(errors, axis=1))),
        float(np.median(worst)),
        {b: float(np.mean(worst <= b)) for b in bounds},
    )


def require_rows(rows: Sequence[BacktestRow]) -> None:
    """Raise the :class:`PredictionError` of an empty backtest (:data:`NOTHING_TO_BACKTEST`) if ``rows``
    is empty."""
    if not rows:
        raise PredictionError(NOTHING_TO_BACKTEST)


def error_table(rows: Sequence[BacktestRow]) -> list[dict[str, object]]:
    """Rows for display: one per case (:attr:`BacktestRow.case_key`) with each model's prediction
    (``<model>_s``, seconds) and error (``<model>_err``, a share: ``0.035`` is +3.5 %; ``None``
    where it is not finite) side by side; no rows is :func:`require_rows`' error."""
    require_rows(rows)
    models = list(dict.fromkeys(r.model for r in rows))
    blank = {f"{m}_{k}": None for m in models for k in ("s", "err")}
    table: dict[tuple[str, str, tuple[str, ...]], dict[str, object]] = {}
    for r in rows:
        line = table.setdefault(
            r.case_key, {"job": r.job, "case": r.case, "measured_s": round(r.measured_s, 2), **blank}
        )
        line[f"{r.model}_s"] = round(r.predicted_s, 2)
        line[f"{r.model}_err"] = round(r.error, 4) if math.isfinite(r.error) else None
    return list(table.values())
