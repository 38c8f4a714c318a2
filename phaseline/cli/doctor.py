"""``phaseline doctor``: what is wrong with a job (heuristics with severities), and which settings fix it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from phaseline.cli.output import emit, format_option, handle_errors, open_store, read_store_option
from phaseline.errors import PhaselineError
from phaseline.store import PartitionFilter

#: The output contract of ``--format json``/``csv`` (issue 39): one row per finding.
COLUMNS = ("job_id", "heuristic", "severity", "value", "threshold", "detail", "recommendation")


def _cluster_options(func: Any) -> Any:
    from phaseline.cli.predict import cluster_options

    return cluster_options(func)


@click.command()
@click.argument("job_ids", nargs=-1)
@read_store_option
@click.option(
    "--config",
    "config_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Thresholds (TOML, or JSON by its .json suffix) overriding the shipped ones (profiles/doctor.toml).",
)
@click.option(
    "--recommend",
    is_flag=True,
    help="Search the settings of the Moderate-or-worse findings with a what-if model; print the best few.",
)
@click.option(
    "--platform",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Platform model JSON (`phaseline fit`), which --recommend prices settings with.",
)
@click.option("--model", "model_name", default="herodotou", show_default=True,
              help="The model --recommend searches with (`phaseline predict --list-models`).")
@click.option("--top", type=click.IntRange(min=1), default=3, show_default=True,
              help="Recommendations per job.")
@click.option(
    "--calibration",
    "calibration_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="With --recommend: a backtest of this cluster (a suite's backtest.json, or `phaseline backtest --format "
    "json`) whose errors are shown beside each recommendation [default: the local suite's, benchmarks/BACKTEST.json].",
)
@click.option("--min-severity", type=click.Choice(["Low", "Moderate", "Severe", "Critical"]), default="Moderate",
              show_default=True, help="The findings --recommend answers: this severity or worse.")
@_cluster_options
@format_option
@handle_errors
def doctor(
    job_ids: tuple[str, ...],
    store_dir: Path | None,
    where: PartitionFilter,
    config_path: Path | None,
    recommend: bool,
    platform: Path | None,
    model_name: str,
    top: int,
    min_severity: str,
    calibration_file: Path | None,
    fmt: str,
    **cluster_kw: Any,
) -> None:
    """Diagnose JOB_IDS (every job of the store when none): Dr. Elephant's MapReduce heuristics and
    phaseline's own, each with a severity (None, Low, Moderate, Severe, Critical).

    One row per finding: job_id, heuristic, severity, value, threshold, detail,
    recommendation.  A heuristic the job's data cannot support (no counters, no
    task logs, no reduces) is named on stderr with why.  With --recommend (and
    --platform) the settings the findings point at are searched with the what-if
    model at the cluster given (--nodes, slots): the best few, each with its
    predicted time and saving, the model's backtested error (of --calibration, a
    backtest of this cluster; else of the local suite), and a --set line to
    paste into `phaseline whatif` (or as -D options); they replace the flagged
    findings' recommendation (csv, json) and follow the findings as a table
    (table).  A flagged finding none of whose own settings the model predicts
    faster says so in its recommendation.  Exit status 0 whatever the findings.
    """
    from profiles.doctor import DoctorConfig, diagnose_jobs

    if recommend and platform is None:
        raise click.UsageError("--recommend needs --platform FILE (a platform model from `phaseline fit`)")
    if calibration_file is not None and not recommend:
        raise click.UsageError("--calibration goes with --recommend (the backtested error beside each recommendation)")
    config = DoctorConfig.load(config_path) if config_path is not None else DoctorConfig.default()
    con = open_store(store_dir, where=where).connect()
    diagnoses = diagnose_jobs(con, job_ids, config)
    for d in diagnoses:
        for s in d.skipped:
            click.echo(f"skipped {s.heuristic} for {s.job_id}: {s.reason}", err=True)
    searches: dict[str, Any] = {}
    if recommend:
        assert platform is not None
        searches = _search(con, diagnoses, platform, model_name, top, min_severity, calibration_file, cluster_kw)
    from predict.recommend import finding_rows

    rows = [row for d in diagnoses for row in finding_rows(d, searches.get(d.job_id))]
    if fmt == "table":  # (csv and json keep every digit)
        rows = [r | {"value": None if r["value"] is None else float(f"{r['value']:.4g}")} for r in rows]
    emit(rows, fmt, columns=list(COLUMNS), title="phaseline doctor")
    found = [r for d in diagnoses if d.job_id in searches for r in searches[d.job_id].found]
    if fmt == "table" and found:
        _recommendation_table(found, model_name)


def _search(con: Any, diagnoses: list[Any], platform: Path, model: str, top: int, min_severity: str,
            calibration_file: Path | None, cluster_kw: dict[str, Any]) -> dict[str, Any]:
    """Each job's search (a job without a recommendation is named on stderr, with why)."""
    from phaseline.cli.predict import cluster_from
    from platform_model.model import PlatformModel
    from predict.calibration import load_calibration
    from predict.recommend import search_job
    from profiles.doctor import Severity

    fitted = PlatformModel.load(platform)
    calibration = None if calibration_file is None else load_calibration(calibration_file)
    searches: dict[str, Any] = {}
    for d in diagnoses:
        try:
            searches[d.job_id] = search_job(
                con, d, fitted, cluster_from(cluster_kw), model=model, top=top,
                min_severity=Severity[min_severity.upper()], calibration=calibration,
            )  # fmt: skip
        except PhaselineError as exc:
            click.echo(f"no recommendation for {d.job_id}: {exc}", err=True)
            continue
        if not searches[d.job_id].found:
            click.echo(f"no recommendation for {d.job_id}: no {min_severity}-or-worse finding with a setting "
                       f"to change, or no setting the {model} model predicts faster", err=True)
    return searches


def _recommendation_table(found: list[Any], model: str) -> None:
    rows = []
    for r in found:
        row = r.to_dict()
        err = row["model_median_error"]
        rows.append({
            "job_id": row["job_id"],
            "answers": ", ".join(row["heuristics"]),
            "predicted_s": round(r.predicted_s, 2),
            "baseline_s": round(r.baseline_s, 2),
            "saving": f"{r.saving_s:.2f} s ({100 * r.saving_share:.0f} %)",
            "model_error": "" if err is None else f"{100 * err:.1f} % (worst {100 * row['model_worst_error']:.1f} %)",
            "set": r.set_line,
            "caution": f"{len(r.notes)} model warning(s), e.g. {r.notes[0]}" if r.notes else "",
        })  # fmt: skip
    emit(rows, "table", title=f"recommendations ({model}: predicted, beside the model's backtested error)")
