"""``phaseline analyze``: the main job — ingest traces and explain every job in them."""

from __future__ import annotations

from pathlib import Path

import click

from phaseline.cli.output import (
    emit,
    format_option,
    handle_errors,
    open_store,
    store_option,
    warn_if_no_files,
)
from phaseline.schemas import SourceStatus

EXIT_QUARANTINED = 3


@click.command()
@click.argument("paths", nargs=-1, required=True)
@store_option
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("phaseline-report"),
    show_default=True,
    help="Directory for the per-job reports, profiles, timelines and traces.",
)
@click.option(
    "--workers", "-j", type=click.IntRange(1), default=1, show_default=True,
    help="Processes that parse the files and then write the jobs' reports.",
)
@format_option
@handle_errors
def analyze(paths: tuple[str, ...], store_dir: Path | None, out_dir: Path, workers: int, fmt: str) -> None:
    """Ingest PATHS and explain every job they hold: where the time went, per phase.

    Writes OUT/<job_id>/report.html (offline HTML, with the job's findings as
    `phaseline doctor` grades them), profile.json (the job profile for
    predictions), timeline.svg and trace.json (open in Perfetto UI), and
    OUT/index.html over every job (sortable by duration and worst severity),
    and prints one row per job; a job whose profile cannot be extracted gets no
    profile.json, and a warning saying why.  A file quarantined or read in part
    is named on stderr with why.  Exit status 3 when any file was quarantined.
    """
    from profiles.analyze import analyze as run_analysis

    result = run_analysis(paths, open_store(store_dir, create=True), out_dir, workers=workers)
    rows = [
        {
            "job_id": j.job_id,
            "name": j.name,
            "status": j.status,
            "duration_s": None if j.duration_s is None else round(j.duration_s, 3),
            "maps": j.maps,
            "reduces": j.reduces,
            "top_phases": j.top_phases,
            "worst_severity": j.worst_severity.label,
            "phase_shares": {k: round(v, 4) for k, v in j.phase_shares.items()},
            "report": str(j.out_dir / "report.html"),
            "profile_error": j.profile_error,
        }
        for j in result.jobs
    ]
    shown = ["job_id", "name", "status", "duration_s", "maps", "reduces", "top_phases", "worst_severity"]
    # named even without rows: a CSV of no jobs still has its header
    columns = shown if fmt == "table" else [*shown, "report", "profile_error"]
    if fmt == "json":  # every phase's share, a number (top_phases is the table's text)
        columns.insert(columns.index("report"), "phase_shares")
    emit(rows, fmt, columns=columns, title="phaseline analyze")
    for j in result.jobs:
        if j.profile_error is not None:
            why = j.profile_error.removeprefix(f"{j.job_id}: ")
            click.echo(f"warning: no profile.json for {j.job_id}: {why}", err=True)
    ingest = result.ingest
    warn_if_no_files(len(ingest.results), paths)
    for r in ingest.results:  # what did not land whole, and why (ingest prints every file's line)
        if r.status in (SourceStatus.QUARANTINED, SourceStatus.PARTIAL):
            click.echo(f"{r.status:<11} {r.path}\n            {r.error}", err=True)
    click.echo(
        f"{len(ingest.results)} files ({ingest.quarantined} quarantined), {len(rows)} jobs -> {out_dir} "
        f"({out_dir / 'index.html'})",
        err=True,
    )
    if ingest.count(SourceStatus.QUARANTINED):
        raise SystemExit(EXIT_QUARANTINED)
