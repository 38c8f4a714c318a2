"""``phaseline doctor``: what is wrong with a job (heuristics with severities), and which settings fix it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from phaseline.cli.output import emit, format_option, handle_errors, open_store, store_option
from phaseline.errors import PhaselineError

#: The output contract of ``--format json``/``csv`` (issue 39): one row per finding.
COLUMNS = ("job_id", "heuristic", "severity", "value", "threshold", "detail", "recommendation")


def _cluster_options(func: Any) -> Any:
    from phaseline.cli.predict import cluster_options

    return cluster_options(func)


@click.command()
@click.argument("job_ids", nargs=-1)
@store_option
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
@_cluster_options
@format_option
@handle_errors
def doctor(
    job_ids: tuple[str, ...],
    store_dir: Path | None,
    config_path: Path | None,
    recommend: bool,
    platform: Path | None,
    model_name: str,
    top: int,
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
    predicted time and saving, the model's backtested error, and a --set line to
    paste into `phaseline whatif`.  Exit status 0 whatever the findings.
    """
    from profiles.doctor import DoctorConfig, diagnose_jobs

    if recommend and platform is None:
        raise click.UsageError("--recommend needs --platform FILE (a platform model from `phaseline fit`)")
    config = DoctorConfig.load(config_path) if config_path is not None else DoctorConfig.default()
    con = open_store(store_dir).connect()
    diagnoses = diagnose_jobs(con, job_ids, config)
    rows = [f.to_dict() for d in diagnoses for f in d.findings]
    if fmt == "table":  # (csv and json keep every digit)
        rows = [r | {"value": None if r["value"] is None else float(f"{r['value']:.4g}")} for r in rows]
    emit(rows, fmt, columns=list(COLUMNS), title="phaseline doctor")
    for d in diagnoses:
        for s in d.skipped:
            click.echo(f"skipped {s.heuristic} for {s.job_id}: {s.reason}", err=True)
    if recommend:
        assert platform is not None
        _recommend(con, diagnoses, platform, model_name, top, fmt, cluster_kw)


def _recommend(con: Any, diagnoses: list[Any], platform: Path, model: str, top: int, fmt: str,
               cluster_kw: dict[str, Any]) -> None:
    from phaseline.cli.predict import cluster_from
    from platform_model.model import PlatformModel
    from predict.recommend import recommend_job

    fitted = PlatformModel.load(platform)
    rows: list[dict[str, Any]] = []
    for d in diagnoses:
        try:
            found = recommend_job(con, d, fitted, cluster_from(cluster_kw), model=model, top=top)
        except PhaselineError as exc:
            click.echo(f"warning: no recommendation for {d.job_id}: {exc}", err=True)
            continue
        rows.extend(r.to_dict() for r in found)
    if fmt == "table":
        for r in rows:
            r["saving"] = f"{r['saving_s']:.2f} s ({100 * r['saving_share']:.0f} %)"
            err = r["model_median_error"]
            r["model_error"] = "" if err is None else f"{100 * err:.1f} % (worst {100 * r['model_worst_error']:.1f} %)"
            r["heuristics"] = ", ".join(r["heuristics"])
        emit(rows, fmt, columns=["job_id", "heuristics", "predicted_s", "baseline_s", "saving", "model_error", "set"],
             title=f"recommendations ({model}; predicted, with the model's backtested error)")
    else:
        emit(rows, fmt, title="recommendations")
