"""``phaseline ingest``, ``query``, ``jobs``, ``tables``: getting traces in and looking at them."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from ingest.history_dirs import TimeWindow, history_files
from ingest.pipeline import FileResult, IngestSummary, ingest_paths
from phaseline.cli.output import (
    emit,
    format_option,
    handle_errors,
    number_at_least,
    open_store,
    read_store_option,
    store_option,
    warn_if_no_files,
)
from phaseline.errors import QueryError
from phaseline.schemas import TABLES, SourceStatus
from phaseline.store import PartitionFilter, default_store_path
from phaseline.verify import other_runs

EXIT_QUARANTINED = 3
ENGINE_LOCAL = "local"
ENGINE_SPARK = "spark"


def engine_options(func: Callable[..., None]) -> Callable[..., None]:
    """``--engine local|spark`` and ``--master URL`` (Spark's master; default local[2])."""
    from phaseline.spark import DEFAULT_MASTER  # (pyspark is imported only when a session starts)

    func = click.option(
        "--master",
        default=DEFAULT_MASTER,
        show_default=True,
        metavar="URL",
        help="Spark master URL with --engine spark (local[N], spark://host:port, yarn).",
    )(func)
    return click.option(
        "--engine",
        type=click.Choice([ENGINE_LOCAL, ENGINE_SPARK]),
        default=ENGINE_LOCAL,
        show_default=True,
        help="local: this process (DuckDB, -j worker processes); spark: Spark tasks and Spark SQL.",
    )(func)


@click.command()
@click.argument("paths", nargs=-1, required=True)
@store_option
@click.option("--quiet", "-q", is_flag=True, help="Only the final summary.")
@click.option(
    "--workers", "-j", type=click.IntRange(1), default=1, show_default=True,
    help="Parser processes (a plain .jhist of 64 MiB or more is read in ranges by them).",
)
@click.option(
    "--commit-every",
    type=click.IntRange(1),
    default=500,
    show_default=True,
    help="Commit after this many files (an interrupted ingest keeps what was committed).",
)
@click.option(
    "--file-timeout",
    type=number_at_least(0.1, 1e7),  # 116 days: past any file; 1e300 overflowed the interval timer
    default=600.0,
    show_default=True,
    help="Seconds one file may take before it is quarantined.",
)
@click.option(
    "--since",
    metavar="WHEN",
    help="Only files of jobs that finished at or after WHEN (YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS], UTC): "
    "a history server's done/YYYY/MM/DD dirs outside the window are not entered.",
)
@click.option("--until", metavar="WHEN", help="Only files of jobs that finished before WHEN (a date alone: through that day).")
@click.option(
    "--new-only",
    is_flag=True,
    help="Resume a growing directory: files the store holds with the same path and size are not hashed or read.",
)
@click.option(
    "--partition-by",
    type=click.Choice(["day", "cluster", "day,cluster"]),
    help="One store per partition under --store (day=YYYY-MM-DD[/cluster=<ts>]): a job's files go to its "
    "UTC submit day and cluster (job_<cluster>_<seq>), others to day=unknown / cluster=unknown.",
)
@engine_options
@handle_errors
def ingest(
    paths: tuple[str, ...],
    store_dir: Path | None,
    quiet: bool,
    workers: int,
    commit_every: int,
    file_timeout: float,
    since: str | None,
    until: str | None,
    new_only: bool,
    partition_by: str | None,
    engine: str,
    master: str,
) -> None:
    """Ingest trace files, directories or globs into the store.

    Formats are detected from content: .jhist (JSON or Hadoop 3's binary),
    0.18-1.x history, job conf XML, Rumen JSON, History Server REST JSON, job
    summary logs, task-attempt and YARN logs (`yarn logs` output, or the
    NodeManagers' uploaded TFile / indexed files), engine run directories,
    stack samples; compressed with gzip, bzip2, zstd, lz4 or snappy as Hadoop
    and Spark write them.  A file that is no trace is skipped
    ("not a trace: ...").  Exit status: 0 when every file landed
    (or was unchanged/skipped), 3 when any file was quarantined.

    With --partition-by, --store is the root of a partitioned store: each file
    goes to the store of its partition, created as needed (how a file's day
    and cluster are found: ``ingest.partitioning``).
    """
    root = store_dir if store_dir is not None else default_store_path()
    stores = [] if partition_by else [open_store(store_dir, create=True)]
    # walked once (by date, within --since/--until): counted for the progress bar, then ingested
    files = list(history_files(paths, TimeWindow.parse(since, until)))

    with _file_reporter(len(files)) as echo:

        last: list[Path] = []

        def on_file(path: Path, r: FileResult) -> None:
            text = _file_line(path, r) if not quiet or r.status == SourceStatus.QUARANTINED else None
            echo(text, advance=not last or last[-1] != path)  # an archive's members: one step
            last[:] = [path]

        options: dict[str, Any] = {"commit_every_files": commit_every, "file_timeout_s": file_timeout, "new_only": new_only}
        if partition_by:
            from ingest.partitioning import ingest_partitioned, parse_partition_by

            parted = ingest_partitioned(
                files, root, parse_partition_by(partition_by), engine=engine, master=master,
                on_file=on_file, workers=workers, **options,
            )  # fmt: skip
            summary, stores = parted.summary, [store for _, store, _ in parted.parts]
        elif engine == ENGINE_SPARK:
            from ingest.spark_ingest import ingest_paths_spark

            summary = ingest_paths_spark(files, stores[0], master=master, on_file=on_file, **options)
        else:
            summary = ingest_paths(files, stores[0], on_file=on_file, workers=workers, **options)
    _print_summary(summary, root)
    landed = {r.path for r in summary.results if r.status in (SourceStatus.LANDED, SourceStatus.PARTIAL)}
    for store in stores:
        for finding in other_runs(store, landed):
            click.echo(f"warning: {finding.subject}: {finding.detail}", err=True)
    warn_if_no_files(len(files), paths)
    if summary.quarantined:
        raise SystemExit(EXIT_QUARANTINED)


def _file_line(path: Path, r: FileResult) -> str:
    """One file's line of the ingest report: its status, its path as given, its format, rows and
    notes."""
    rows = ", ".join(f"{t}={n}" for t, n in sorted(r.rows.items()))
    # an archive's members are keyed <archive>!<member>: show them as the path given, !member
    key = str(path.resolve())
    shown = f"{path}{r.path[len(key):]}" if r.path.startswith(key + "!") else str(path)
    text = f"{r.status:<11} {shown}  [{r.format or '-'}] events={r.events_read} rows={r.rows_written}"
    if rows:
        text += f" ({rows})"
    if r.unknown:
        text += f" unknown={dict(r.unknown)}"
    if r.error:
        text += f"\n            {r.error}"
    for note in r.notes:  # what the reader decided by a rule of thumb, or repaired
        text += f"\n            note: {note}"
    return text


@contextlib.contextmanager
def _file_reporter(total: int) -> Iterator[Callable[..., None]]:
    """A function that reports one finished file (its line, or ``None`` for none) on stderr;
    ``advance=False`` for a further member of the archive just reported.

    With more than 20 files and stderr a terminal, rich draws a progress bar and prints the
    lines above it; otherwise each line is written as it is, one line per file (rich would
    wrap it at 80 columns), and rich is not even imported.
    """
    if total <= 20 or not sys.stderr.isatty():
        closed = False

        def plain(text: str | None, advance: bool = True) -> None:
            # stderr piped into `head` that has exited: stop reporting, but finish and commit the
            # ingest (the first line to a closed pipe had thrown away every file read so far)
            nonlocal closed
            if text is not None and not closed:
                try:
                    click.echo(text, err=True)
                except BrokenPipeError:
                    closed = True

        yield plain
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    with Progress(
        TextColumn("ingest"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(), console=console
    ) as progress:
        task = progress.add_task("ingest", total=total)

        def report(text: str | None, advance: bool = True) -> None:
            if advance:
                progress.advance(task)
            if text is not None:
                progress.console.print(text, markup=False, highlight=False)

        yield report


def _print_summary(summary: IngestSummary, root: Path) -> None:
    landed = summary.count(SourceStatus.LANDED) + summary.count(SourceStatus.PARTIAL)
    click.echo(
        f"{len(summary.results)} files: {landed} landed "
        f"({summary.count(SourceStatus.PARTIAL)} partial), {summary.count('unchanged')} unchanged, "
        f"{summary.count(SourceStatus.SKIPPED)} skipped, {summary.quarantined} quarantined -> {root}",
        err=True,
    )
    rows = summary.rows_per_table()
    if rows:
        click.echo("rows: " + ", ".join(f"{t}={n}" for t, n in rows.items()), err=True)


@click.command()
@click.argument("sql")
@read_store_option
@format_option
@engine_options
@handle_errors
def query(sql: str, store_dir: Path | None, where: PartitionFilter, fmt: str, engine: str, master: str) -> None:
    """Run DuckDB SQL over the store's tables (one view per table).

    Read-only: statements that write files or load extensions (COPY, EXPORT,
    ATTACH, INSTALL/LOAD) are refused; write results with --format csv/json.
    A job that several ingested files describe appears once in the views;
    ``raw.<table>`` has every file's rows, and ``overlapping_sources`` lists
    such jobs with the file each view keeps.  With --engine spark the SQL is
    Spark SQL on --master, over the same views (``raw_<table>`` for
    ``raw.<table>``); only queries run.  On either engine --store may be the
    root of a partitioned store (ingest --partition-by), queried as one with
    the keys as columns: WHERE day = '2026-11-28' reads that day's files, and
    --partition day=2026-11-28 opens no other day's files at all.
    """
    import duckdb  # loaded by connect() already

    if not sql.strip(" \t\r\n;"):
        raise click.BadParameter("no statement in it", param_hint="SQL")
    if engine == ENGINE_SPARK:
        from phaseline.spark_query import spark_query

        # (a partitioned store's root holds no manifest of its own: spark_query finds its partitions)
        result = spark_query(open_store(store_dir, where=where), sql, master=master)
        if result.statements > 1:
            click.echo(f"warning: {result.statements} statements ran; the rows are the last one's", err=True)
        cols = _unique_names(list(result.columns))
        emit([dict(zip(cols, r, strict=True)) for r in result.rows], fmt, columns=cols)
        return
    try:
        parsed = duckdb.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(f"query failed: {exc}") from exc
    if not parsed:  # only comments: nothing to run, no rows
        emit([], fmt, columns=[])
        return
    kinds = [s.type.name for s in parsed]
    if writes := sorted(set(kinds) & _WRITING_STATEMENTS):
        raise click.BadParameter(
            f"{', '.join(writes)} is refused: `phaseline query` only reads, and statements that write files "
            "(a COPY could overwrite the store's own) or load extensions are not run; select the rows and "
            "write them with --format csv or json",
            param_hint="SQL",
        )
    statements = len(kinds)
    con = open_store(store_dir, where=where).connect()
    try:
        # one at a time: run as one script, a last statement that returns no rows (a CREATE) left
        # the rows of the one before it, which the warning below then called the last one's
        for statement in parsed:
            cursor = con.execute(statement)
        cols = _unique_names([d[0] for d in (cursor.description if cursor is not None else None) or []])
        rows = [dict(zip(cols, r, strict=True)) for r in cursor.fetchall()] if cols else []
    except duckdb.Error as exc:  # the whole message: the user's SQL with DuckDB's caret under the fault
        raise QueryError(f"query failed: {exc}") from exc
    if statements > 1:
        click.echo(f"warning: {statements} statements ran; the rows are the last one's", err=True)
    emit(rows, fmt, columns=cols)


#: DuckDB statement kinds that write files or fetch code (the rest touch only the query's in-memory
#: database: a temporary table or a setting is gone when the command ends).
_WRITING_STATEMENTS = frozenset({"COPY", "EXPORT", "IMPORT", "ATTACH", "DETACH", "LOAD", "COPY_DATABASE"})


def _unique_names(names: list[str]) -> list[str]:
    """Result column names made unique as DuckDB makes a table's (``a, a`` -> ``a, a_1``): rows are
    emitted by name, and a join's ``status`` of two tables had printed the second's value twice.

    >>> _unique_names(["a", "a", "a_1", "b"])
    ['a', 'a_2', 'a_1', 'b']
    """
    taken = set(names)
    seen: set[str] = set()
    out = []
    for name in names:
        new, k = name, 0
        while new in seen or (new != name and new in taken):
            k += 1
            new = f"{name}_{k}"
        seen.add(new)
        out.append(new)
    return out


@click.command()
@read_store_option
@format_option
@handle_errors
def jobs(store_dir: Path | None, where: PartitionFilter, fmt: str) -> None:
    """List the jobs in the store.

    ``duration_s`` is submit to finish, the job's makespan as `analyze` and `report` give it;
    empty for a job whose history has no finish (a cut file, its status empty too), where
    `analyze` and `report` give the span so far (to its last attempt's finish).  A job known only
    from task logs (no history file) is listed with its history columns empty.
    """
    from profiles.queries import job_list

    con = open_store(store_dir, where=where).connect()
    rel = job_list(con)
    cols = list(rel.columns)
    emit([dict(zip(cols, r, strict=True)) for r in rel.fetchall()], fmt, columns=cols)


@click.command()
@read_store_option
@format_option
@handle_errors
def tables(store_dir: Path | None, where: PartitionFilter, fmt: str) -> None:
    """List the store's tables with their row counts and columns."""
    store = open_store(store_dir, where=where)
    con = store.connect()
    from profiles.queries import table_rows

    rows = [
        {"table": name, "rows": table_rows(con, name), "columns": ", ".join(spec.columns), "doc": spec.doc}
        for name, spec in TABLES.items()
    ]
    emit(rows, fmt)
