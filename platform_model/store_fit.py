"""The platform model fitted from a store: which of its jobs, then the fit (Zhang et al. 2013, section 4).

A store the microbenchmarks ran into (``phaseline bench run``) may also hold
the traces ingested beside them; a platform model is the benchmarks' alone
unless asked otherwise.  :func:`fit_from_store` is ``phaseline fit``'s, with the
choice of jobs (:func:`choose_jobs`) said back to the caller;
:func:`fit_bench_runs` is the fit of a store's microbenchmark runs with what
they allow (a phase they leave unfittable is priced from each job's profiled
span), which ``phaseline backtest`` takes when no platform model is given, as
the local suite does from its own runs.  :func:`fit_notes` says what a fit left
out, for the user.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phaseline.errors import InsufficientDataError, QueryError
from platform_model.engine.job import BENCH_APP
from platform_model.fit import Norm
from platform_model.model import PlatformModel, fit_platform
from platform_model.profile import SLOT_HANDOVER, PlatformProfile, profile_from_store
from platform_model.segments import Criterion

if TYPE_CHECKING:
    import duckdb

#: Runs listed per phase in a note before the rest are counted.
NOTE_RUNS = 8


@dataclass(frozen=True, slots=True)
class JobChoice:
    """The jobs a fit takes from a store: those named ``job_name`` (None: all), ``kept`` of ``total``."""

    job_name: str | None
    kept: int
    total: int

    @property
    def left_out(self) -> int:
        """Jobs of the store the fit leaves out (other names)."""
        return self.total - self.kept


@dataclass(frozen=True, slots=True)
class StoreFit:
    """A platform model, the profile it was fitted on, and the store's jobs it took."""

    model: PlatformModel
    profile: PlatformProfile
    choice: JobChoice


def choose_jobs(con: duckdb.DuckDBPyConnection | None, job_name: str | None, all_jobs: bool) -> JobChoice:
    """Which jobs ``phaseline fit`` takes from the store ``con`` is on: ``job_name``'s if given; else
    the microbenchmark's (``phaseline-bench``) where the store has any; else (or ``all_jobs``) all."""
    import duckdb

    from profiles.queries import job_name_counts

    if all_jobs or con is None:
        return JobChoice(None, 0, 0)  # (a missing store: profile_from_store says what to run)
    try:
        counts = job_name_counts(con)
    except (QueryError, duckdb.Error):  # a store without a jobs table: fit what it has
        return JobChoice(None, 0, 0)
    total = sum(counts.values())
    if job_name is None:
        if not counts.get(BENCH_APP):
            return JobChoice(None, total, total)
        job_name = BENCH_APP
    return JobChoice(job_name, counts.get(job_name, 0), total)


def fit_from_store(
    store_path: Path,
    *,
    job_name: str | None = None,
    all_jobs: bool = False,
    norm: Norm = Norm.HUBER,
    criterion: Criterion = Criterion.BIC,
    split: bool = True,
    settings: Mapping[str, str] | None = None,
    cluster: Mapping[str, Any] | None = None,
    skip_unfittable: bool = False,
    on_choice: Callable[[JobChoice], None] | None = None,
) -> StoreFit:
    """The platform model of the store's jobs that :func:`choose_jobs` picks (``phaseline fit``);
    ``on_choice`` hears the choice before the fit (which may fail for want of data)."""
    from phaseline.store import Store

    store = Store(store_path)
    con = store.connect() if store.exists() else None  # one connection for the choice and the rows
    choice = choose_jobs(con, job_name, all_jobs)
    if on_choice is not None:
        on_choice(choice)
    profile = profile_from_store(store_path, job_name=choice.job_name, con=con)
    model = fit_platform(
        profile, norm=norm, criterion=criterion, split=split, settings=settings, cluster=cluster,
        skip_unfittable=skip_unfittable,
    )  # fmt: skip
    return StoreFit(model, profile, choice)


def fit_bench_runs(
    store_path: Path,
    *,
    con: duckdb.DuckDBPyConnection | None = None,
    job_name: str | None = BENCH_APP,
    cluster: Mapping[str, Any] | None = None,
) -> StoreFit:
    """The platform model of a store's microbenchmark runs (its jobs named ``job_name``; None: all),
    fitted with what they allow: a phase they leave unfittable is left out of the model
    (:attr:`PlatformModel.unfitted`), priced from each job's profiled span.

    Raises
    ------
    InsufficientDataError
        The store holds no such run.
    """
    profile = profile_from_store(store_path, job_name=job_name, con=con)
    runs = int(profile.frame["run_id"].nunique())
    if not runs:
        named = f" (jobs named {job_name})" if job_name is not None else ""
        raise InsufficientDataError(
            f"the store holds no microbenchmark runs{named} to fit a platform model from"
        )
    model = fit_platform(profile, skip_unfittable=True, cluster=cluster)
    return StoreFit(model, profile, JobChoice(job_name, runs, runs))


def fit_notes(model: PlatformModel, profile: PlatformProfile) -> list[str]:
    """What a fit left out, one line each: phases not fitted (and why), and phases fitted on
    incomplete runs (the runs, and why their attempts had no data)."""
    notes: list[str] = []
    for phase, why in model.unfitted.items():
        runs = profile.runs_missing(phase)
        shown = ", ".join(runs[:NOTE_RUNS]) + (f", ... ({len(runs)} runs)" if len(runs) > NOTE_RUNS else "")
        why = why.removeprefix("not fitted: ")  # the model's reason for a phase it could not fit says so itself
        notes.append(f"not fitted: {phase}: {why}" + (f"; runs: {shown}" if runs else ""))
    for phase in model.phases:
        runs = profile.runs_missing(phase)
        if runs:
            reasons = profile.missing_summary()[phase]
            why = "; ".join(f"{c} attempt(s): {r}" for r, c in reasons.most_common())
            more = " ..." if len(runs) > NOTE_RUNS else ""
            notes.append(f"incomplete: {phase}: {why}; runs: {', '.join(runs[:NOTE_RUNS])}{more}")
    return notes


def handover_note(model: PlatformModel) -> str | None:
    """The slot handover the fit measured (``cluster.slot_handover``), one line; None where it measured none."""
    measured = model.cluster.get(SLOT_HANDOVER) or {}
    parts = [f"{task_type.lower()} {r['ms']:.0f} ms (the median of {r['handovers']} in {r['jobs']} job(s))"
             for task_type, r in sorted(measured.items())]  # fmt: skip
    if not parts:
        return None
    return "slot handover: " + ", ".join(parts) + ": a freed slot's wait for the next task, which every model adds"


__all__ = ["JobChoice", "StoreFit", "choose_jobs", "fit_bench_runs", "fit_from_store", "fit_notes", "handover_note"]
