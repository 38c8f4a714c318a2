"""``phaseline verify``, ``compact``: looking after a store (a partitioned one's partitions each)."""

from __future__ import annotations

from pathlib import Path

import click

from phaseline.cli.output import emit, format_option, handle_errors, open_store, read_store_option
from phaseline.store import MIN_SMALL_FILES, PartitionFilter


@click.command()
@read_store_option
@format_option
@handle_errors
def verify(store_dir: Path | None, where: PartitionFilter, fmt: str) -> None:
    """Re-check the whole store: schemas, row counts against sources, reconciliation, orphans.

    A partitioned store's root: each partition (of --partition) is checked, each finding
    led by its partition.  Exit status 0 when consistent, 1 when any error was found.
    """
    from phaseline.verify import findings_rows, verify_store

    report = verify_store(open_store(store_dir, where=where))
    emit(findings_rows(report), fmt, columns=["severity", "check", "subject", "detail"])
    click.echo(
        f"{report.files_checked} files, {report.sources_checked} sources: "
        + ("consistent" if report.ok else "INCONSISTENT"),
        err=True,
    )
    if not report.ok:
        raise SystemExit(1)


@click.command()
@read_store_option
@click.option(
    "--min-files",
    type=click.IntRange(2),
    default=MIN_SMALL_FILES,
    show_default=True,
    help="Merge a table's small files when it has at least this many.",
)
@handle_errors
def compact(store_dir: Path | None, where: PartitionFilter, min_files: int) -> None:
    """Merge the store's many small Parquet files into few large ones (queries get faster).

    ``phaseline ingest`` does this by itself, at its end, when a table has as many small files as
    --min-files' default.
    Merged and replaced files stay on disk for an hour, for readers that opened
    the store before; a later commit or compaction deletes them.  A partitioned store's
    root: each partition (of --partition) is compacted, one after the other.
    """
    for spec, store in open_store(store_dir, where=where).partitions():
        before = len(store.manifest().files)
        merged = store.compact(min_files=min_files)
        label = "/".join(f"{k}={v}" for k, v in spec) + ": " if spec else ""  # (a store of its own: none)
        click.echo(f"{label}{merged} files merged: {before} -> {len(store.manifest().files)} files", err=True)
