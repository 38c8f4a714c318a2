"""``phaseline profile | timeline | phases | report | critical-path``: what a job did and where its time went."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import pandas as pd

from phaseline.cli.output import emit, handle_errors, job_table_command, open_store, read_store_option
from phaseline.store import PartitionFilter
from profiles import queries as q
from profiles.critical_path import critical_path
from profiles.extract import extract_profile
from profiles.merge_runs import merge_profiles
from profiles.profile import evidence_line
from profiles.report import write_report
from profiles.timeline_plot import write_timeline

if TYPE_CHECKING:
    import duckdb

#: The contract columns of ``phaseline phases`` (more may follow them).
PHASE_COLUMNS = (
    "attempt_id",
    "task_type",
    "phase",
    "start_ms",
    "end_ms",
    "dur_ms",
    "data_bytes",
    "source",
    "data_records",
    "status",
    "host",
    "seq",
    "lane",
)


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows as dicts with ``None`` for missing values."""
    clean = df.astype(object).where(df.notna(), None)
    return [{str(k): v for k, v in r.items()} for r in clean.to_dict("records")]


@click.command("profile")
@click.argument("job_ids", nargs=-1, required=True)
@click.option(
    "--out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    help="Profile JSON to write (several JOB_IDs: runs of one job, merged).",
)
@read_store_option
@handle_errors
def profile(job_ids: tuple[str, ...], out: Path, store_dir: Path | None, where: PartitionFilter) -> None:
    """Extract the job profile of one or more past runs (Zhang 2013, Herodotou 2011)."""
    con = open_store(store_dir, where=where).connect()
    job_ids = tuple(dict.fromkeys(job_ids))  # a run named twice is one run, not two to merge
    merged = merge_profiles([extract_profile(con, j) for j in job_ids])
    merged.save(out)
    click.echo(f"profile of {', '.join(job_ids)} -> {out}", err=True)
    click.echo(f"  {evidence_line(merged)}", err=True)
    if len(job_ids) == 1 and (others := q.other_sizes(con, job_ids[0])):
        click.echo(
            f"  the store holds {len(others)} run(s) of this job at other input sizes (e.g. {others[-1]}): "
            f"`phaseline profile {job_ids[0]} {others[-1]} --out ...` fits its fixed and per-byte cost across them",
            err=True,
        )


def _timeline_file(ctx: click.Context, param: click.Parameter, out: Path) -> Path:
    """A --out that no timeline writer writes is a usage error (exit status 2), found before the store is read."""
    if out.suffix.lower() not in (".png", ".svg", ".json"):
        raise click.BadParameter(f"write FILE.png, FILE.svg or FILE.json (Chrome trace), not {out.name!r}")
    return out


def _job_file_command(
    name: str,
    write: Callable[[duckdb.DuckDBPyConnection, str, Path], object],
    doc: str,
    out_help: str,
    check_out: Callable[[click.Context, click.Parameter, Path], Path] | None = None,
) -> click.Command:
    """A command that writes one file about a job (``JOB_ID --out FILE``) with ``write`` and says where."""

    @click.command(name, help=doc)
    @click.argument("job_id")
    @click.option(
        "--out",
        type=click.Path(dir_okay=False, path_type=Path),
        required=True,
        callback=check_out,
        help=out_help,
    )
    @read_store_option
    @handle_errors
    def command(job_id: str, out: Path, store_dir: Path | None, where: PartitionFilter) -> None:
        con = open_store(store_dir, where=where).connect()
        write(con, job_id, out)
        click.echo(f"{name} of {job_id} -> {out}", err=True)

    return command


timeline = _job_file_command(
    "timeline",
    write_timeline,
    "Draw a job's attempts by phase (PNG/SVG), or write them as a Chrome trace (.json).",
    "FILE.png or FILE.svg (Gantt chart) or FILE.json (Chrome trace for Perfetto UI).",
    _timeline_file,
)


@job_table_command("phases")
def phases(job_id: str, store_dir: Path | None, where: PartitionFilter, fmt: str) -> None:
    """One row per (attempt, phase): start, end, duration, data and where they came from."""
    con = open_store(store_dir, where=where).connect()
    q.require_job(con, job_id)
    df = q.phases(con, job_id)
    emit(_records(df[list(PHASE_COLUMNS)]), fmt, columns=PHASE_COLUMNS)


report = _job_file_command(
    "report",
    write_report,
    "Write an offline HTML report: summary, timeline, phases, skew, critical path, profile.",
    "HTML file to write (self-contained, works offline).",
)


@job_table_command("critical-path")
def critical_path_cmd(job_id: str, store_dir: Path | None, where: PartitionFilter, fmt: str) -> None:
    """The chain of attempts and phases that set the job's finish time, with each step's share."""
    con = open_store(store_dir, where=where).connect()
    df = critical_path(con, job_id).to_frame()
    df["share"] = df["share"].round(4)
    emit(_records(df), fmt, columns=list(df.columns))
