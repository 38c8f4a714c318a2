"""``phaseline dataflow | dataflow-chart | hotspots | dataflow-gap``: HiTune-style dataflow analysis."""

from __future__ import annotations

from pathlib import Path

import click
import duckdb

from phaseline.cli.output import (
    emit,
    format_option,
    handle_errors,
    job_table_command,
    number_at_least,
    only_with,
    open_store,
    store_option,
)
from phaseline.errors import NotFoundError, SpecError
from phaseline.store import Store
from profiles.dataflow.plots import write_busy_idle, write_chart
from profiles.dataflow.reconstruct import (
    Reconstruction,
    dataflow_query,
    dataflow_table,
    reconstruct,
    store_instances,
)
from profiles.dataflow.spec import DataflowSpec, load_spec, shipped_spec
from profiles.queries import job_has_rows


def _spec(text: str) -> DataflowSpec:
    if Path(text).is_file():
        return load_spec(text)
    if text in ("hadoop-0.20", "hadoop-2"):
        return shipped_spec(text)
    raise SpecError(f"{text}: no such specification file (shipped: hadoop-0.20, hadoop-2)")


def _no_samples(con: duckdb.DuckDBPyConnection, job_id: str) -> NotFoundError:
    if not any(job_has_rows(con, table, job_id) for table in ("jobs", "attempts")):
        return NotFoundError(f"job {job_id!r} is not in the store; list the jobs with `phaseline jobs`")
    return NotFoundError(
        f"job {job_id!r} has no thread samples: the dataflow commands need its JFR recording, jstack "
        "dumps or HiTune records ingested (`phaseline engine run --jfr` records one)"
    )


def _rebuild(store: Store, con: duckdb.DuckDBPyConnection, job_id: str, spec: DataflowSpec,
             period_ms: float | None = None) -> Reconstruction:
    """Rebuild JOB_ID's vertex instances from its samples and store them; say so on stderr."""
    result = reconstruct(con, job_id, spec, period_ms=period_ms)
    store_instances(store, result, spec)
    click.echo(
        f"{result.samples} samples: {result.mapped} mapped to vertices, {result.unmapped} unmapped, "
        f"{result.ambiguous} ambiguous, {result.unattributed} on threads of no attempt; "
        f"{result.instances.num_rows} vertex instances (sampling period {result.period_ms:g} ms)",
        err=True,
    )
    return result


def _with_instances(store_dir: Path | None, job_id: str) -> duckdb.DuckDBPyConnection:
    """A connection on which JOB_ID has vertex instances: rebuilt first (shipped hadoop-2 spec) if it has
    samples but none yet, a NotFoundError if it has neither."""
    store = open_store(store_dir)
    con = store.connect()
    if job_has_rows(con, "vertex_instances", job_id):
        return con
    if not job_has_rows(con, "samples", job_id):
        raise _no_samples(con, job_id)
    _rebuild(store, con, job_id, shipped_spec("hadoop-2"))
    return store.connect()


@click.command("dataflow")
@click.argument("job_id")
@click.option("--spec", "spec_text", default="hadoop-2", show_default=True,
              help="Dataflow specification: a file, or a shipped one (hadoop-0.20, hadoop-2).")
@click.option("--period-ms", type=number_at_least(1.0), default=None,
              help="Sampling period in ms, at least 1 (samples are timed in whole ms) [default: estimated from the samples].")
@click.option("--unmapped", "show_unmapped", is_flag=True, help="List the execution positions no vertex claims.")
@store_option
@format_option
@handle_errors
def dataflow(job_id: str, spec_text: str, period_ms: float | None, show_unmapped: bool,
             store_dir: Path | None, fmt: str) -> None:
    """Rebuild JOB_ID's vertex instances from its thread samples and show busy vs idle per vertex.

    samples counts sample periods: busy_samples are the RUNNABLE stack samples,
    idle_samples the others plus each recorded wait (park, monitor, I/O) in
    periods of its length, so a waiting thread weighs as a sampled one would
    (HiTune samples every thread every period).  `hotspots` counts stack
    samples alone, each under the vertex its stack names: its totals differ.
    The instances are stored (table vertex_instances) for the other dataflow commands.
    A thread group pool's vertex (the copiers) has one instance per attempt over all its threads.
    Jobs ingested from HiTune's CSVs already have instances; they are shown as they are, unless
    the job has rebuilt ones too: then the dataflow commands count those alone, never both.
    """
    spec = _spec(spec_text)  # a bad --spec is an error whatever the job holds
    store = open_store(store_dir)
    con = store.connect()
    if job_has_rows(con, "samples", job_id):
        result = _rebuild(store, con, job_id, spec, period_ms)
        if show_unmapped:
            emit([
                {"status": p.status.value, "thread": p.thread_name, "top_frame": p.top_frame,
                 "bottom_frame": p.bottom_frame, "candidates": ",".join(p.candidates), "samples": p.samples}
                for p in result.unmapped_positions
            ], fmt, columns=["status", "thread", "top_frame", "bottom_frame", "candidates", "samples"],
                title="unmapped execution positions")
            return
        con = store.connect()
    elif not job_has_rows(con, "vertex_instances", job_id):
        raise _no_samples(con, job_id)
    else:
        # instances as ingested (HiTune's CSVs): nothing is rebuilt, so what steers a rebuild was not used
        given = [name for name, used in (("--unmapped", show_unmapped), ("--period-ms", period_ms is not None),
                                          ("--spec", spec_text != "hadoop-2")) if used]  # fmt: skip
        if given:
            raise click.UsageError(
                f"{job_id} has no thread samples to rebuild its instances from (they were ingested as they are): "
                f"{', '.join(given)}: for a rebuild only"
            )
    _emit_query(con, "busy_idle", fmt, f"{job_id}: busy vs idle per vertex", job_id=job_id)


def _image_file(ctx: click.Context, param: click.Parameter, out: Path | None) -> Path | None:
    """An --out no chart writer writes is a usage error (exit status 2), found before the store is read."""
    if out is not None and out.suffix.lower() not in (".png", ".svg"):
        raise click.BadParameter(f"write FILE.png or FILE.svg, not {out.name!r}")
    return out


@click.command("dataflow-chart")
@click.argument("job_id")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True, callback=_image_file,
              help="Output .png or .svg.")
@store_option
@handle_errors
def dataflow_chart(job_id: str, out: Path, store_dir: Path | None) -> None:
    """Draw JOB_ID's dataflow execution chart (one line per task; bootstrap, vertices, idle)."""
    con = _with_instances(store_dir, job_id)
    write_chart(dataflow_query(con, "chart", job_id=job_id), out, title=f"{job_id}: dataflow execution")
    click.echo(str(out))


@click.command("hotspots")
@click.argument("job_id")
@click.option("--top", type=click.IntRange(min=1), default=5, show_default=True, help="Methods per vertex.")
@click.option("--by-host", "vertex", default=None, help="Instead: this vertex's busy/idle per host, normalized.")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None, callback=_image_file,
              help="Also draw busy vs idle (per vertex, or per host with --by-host) as .png/.svg.")
@store_option
@format_option
@handle_errors
def hotspots(job_id: str, top: int, vertex: str | None, out: Path | None, store_dir: Path | None, fmt: str) -> None:
    """Method hotspots per vertex of JOB_ID, or one vertex's busy/idle by host (--by-host).

    pct is a method's share of the vertex's samples: raw samples count under
    their innermost frame (a vertex's pcts add to 100); HiTune's function
    counts are inclusive (every sample with the method on the stack), so
    theirs can add past 100.
    """
    only_with("top", "to the hotspots per vertex, not with --by-host", vertex is None)
    con = _with_instances(store_dir, job_id)
    if vertex is not None:
        rows = dataflow_query(con, "by_host", job_id=job_id, vertex=vertex)
        if not rows:
            vertices = sorted({r["vertex"] for r in dataflow_query(con, "busy_idle", job_id=job_id)})
            raise NotFoundError(f"job {job_id!r} has no instances of vertex {vertex!r}; it has {', '.join(vertices)}")
        if out is not None:
            write_busy_idle(rows, out, by="host", title=f"{job_id}: {vertex} by host")
        emit(rows, fmt, title=f"{job_id}: {vertex} instances by host (normalized)")  # never empty here
        return
    if out is not None:
        write_busy_idle(dataflow_query(con, "busy_idle", job_id=job_id), out, by="vertex")
    _emit_query(con, "hotspots", fmt, f"{job_id}: hotspots per vertex", job_id=job_id, top=top)


@job_table_command("dataflow-gap", partition=False)  # (it may store the job's vertex instances)
def dataflow_gap(job_id: str, store_dir: Path | None, fmt: str) -> None:
    """Per reduce of JOB_ID: the gap between the end of the last map and the end of its shuffle.

    From the job's vertex instances (its thread samples); `phaseline report` shows the job's
    gap from its history and logs.
    """
    con = _with_instances(store_dir, job_id)
    _emit_query(con, "shuffle_gap", fmt, f"{job_id}: map end -> shuffle end", job_id=job_id)


def _emit_query(con: duckdb.DuckDBPyConnection, name: str, fmt: str, title: str, **params: object) -> None:
    """Print a dataflow query's rows, with its columns' names even when it has no rows."""
    columns, rows = dataflow_table(con, name, **params)
    emit(rows, fmt, columns=columns, title=title)
