"""``phaseline dataflow | dataflow-chart | hotspots | dataflow-gap``: HiTune-style dataflow analysis."""

from __future__ import annotations

from pathlib import Path

import click

from phaseline.cli.output import emit, format_option, handle_errors, open_store, store_option
from phaseline.errors import SpecError
from profiles.dataflow.plots import write_busy_idle, write_chart
from profiles.dataflow.reconstruct import dataflow_query, reconstruct, store_instances
from profiles.dataflow.spec import DataflowSpec, load_spec, shipped_spec


def _spec(text: str) -> DataflowSpec:
    if Path(text).is_file():
        return load_spec(text)
    if text in ("hadoop-0.20", "hadoop-2"):
        return shipped_spec(text)
    raise SpecError(f"{text}: no such specification file (shipped: hadoop-0.20, hadoop-2)")


def _has_samples(con: object, job_id: str) -> bool:
    row = con.execute("SELECT count(*) FROM samples WHERE job_id = $j", {"j": job_id}).fetchone()  # type: ignore[attr-defined]
    return bool(row and row[0])


@click.command("dataflow")
@click.argument("job_id")
@click.option("--spec", "spec_text", default="hadoop-2", show_default=True,
              help="Dataflow specification: a file, or a shipped one (hadoop-0.20, hadoop-2).")
@click.option("--period-ms", type=float, default=None, help="Sampling period [default: estimated from the samples].")
@click.option("--unmapped", "show_unmapped", is_flag=True, help="List the execution positions no vertex claims.")
@store_option
@format_option
@handle_errors
def dataflow(job_id: str, spec_text: str, period_ms: float | None, show_unmapped: bool,
             store_dir: Path | None, fmt: str) -> None:
    """Rebuild JOB_ID's vertex instances from its thread samples and show busy vs idle per vertex.

    The instances are stored (table vertex_instances) for the other dataflow commands.
    Jobs ingested from HiTune's CSVs already have instances; they are shown as they are.
    """
    store = open_store(store_dir)
    con = store.connect()
    if _has_samples(con, job_id):
        spec = _spec(spec_text)
        result = reconstruct(con, job_id, spec, period_ms=period_ms)
        store_instances(store, result, spec)
        click.echo(
            f"{result.samples} samples: {result.mapped} mapped to vertices, {result.unmapped} unmapped, "
            f"{result.ambiguous} ambiguous, {result.unattributed} on threads of no attempt; "
            f"{result.instances.num_rows} vertex instances (sampling period {result.period_ms:g} ms)",
            err=True,
        )
        if show_unmapped:
            emit([
                {"status": p.status.value, "thread": p.thread_name, "top_frame": p.top_frame,
                 "bottom_frame": p.bottom_frame, "candidates": ",".join(p.candidates), "samples": p.samples}
                for p in result.unmapped_positions
            ], fmt, title="unmapped execution positions")
            return
        con = store.connect()
    emit(dataflow_query(con, "busy_idle", job_id=job_id), fmt, title=f"{job_id}: busy vs idle per vertex")


@click.command("dataflow-chart")
@click.argument("job_id")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, help="Output .png or .svg.")
@store_option
@handle_errors
def dataflow_chart(job_id: str, out: Path, store_dir: Path | None) -> None:
    """Draw JOB_ID's dataflow execution chart (one line per task; bootstrap, vertices, idle)."""
    con = open_store(store_dir).connect()
    write_chart(dataflow_query(con, "chart", job_id=job_id), out, title=f"{job_id}: dataflow execution")
    click.echo(str(out))


@click.command("hotspots")
@click.argument("job_id")
@click.option("--top", type=int, default=5, show_default=True, help="Methods per vertex.")
@click.option("--by-host", "vertex", default=None, help="Instead: this vertex's busy/idle per host, normalized.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Also draw busy vs idle (per vertex, or per host with --by-host) as .png/.svg.")
@store_option
@format_option
@handle_errors
def hotspots(job_id: str, top: int, vertex: str | None, out: Path | None, store_dir: Path | None, fmt: str) -> None:
    """Method hotspots per vertex of JOB_ID, or one vertex's busy/idle by host (--by-host)."""
    con = open_store(store_dir).connect()
    if vertex is not None:
        rows = dataflow_query(con, "by_host", job_id=job_id, vertex=vertex)
        if out is not None:
            write_busy_idle(rows, out, by="host", title=f"{job_id}: {vertex} by host")
        emit(rows, fmt, title=f"{job_id}: {vertex} instances by host (normalized)")
        return
    if out is not None:
        write_busy_idle(dataflow_query(con, "busy_idle", job_id=job_id), out, by="vertex")
    emit(dataflow_query(con, "hotspots", job_id=job_id, top=top), fmt, title=f"{job_id}: hotspots per vertex")


@click.command("dataflow-gap")
@click.argument("job_id")
@store_option
@format_option
@handle_errors
def dataflow_gap(job_id: str, store_dir: Path | None, fmt: str) -> None:
    """Per reduce of JOB_ID: the gap between the end of the last map and the end of its shuffle."""
    con = open_store(store_dir).connect()
    emit(dataflow_query(con, "shuffle_gap", job_id=job_id), fmt, title=f"{job_id}: map end -> shuffle end")
