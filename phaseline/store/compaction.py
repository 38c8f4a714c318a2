"""Compaction: merge a table's many small Parquet files into few large ones, atomically like a commit."""

from __future__ import annotations

import uuid
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from phaseline import schemas
from phaseline.store.files import conform, write_parquet
from phaseline.store.manifest import DataFile, Manifest, schema_fingerprint
from phaseline.store.views import create_parquet_view, duckdb_memory

if TYPE_CHECKING:
    from phaseline.store.directory import Store

#: Data files with fewer rows are merged by :func:`compact`.
SMALL_FILE_ROWS = 250_000
#: A table with this many small files is merged (:func:`compact`), by ``phaseline ingest`` too, at its end
#: (``ingest.pipeline``).  Measured on the 140 runs of the YARN suite (2026-11-30): one ingest left 37 files
#: a table (a chunk closes at 32 MiB of input) and one job's doctor took 2.42 s, its profile 0.66 s; compacted
#: (0.47 s, 5 % of the ingest's 8.7 s) 1.22 s and 0.35 s.  Of the first 70 runs, 19 files: 1.82 -> 1.31 s
#: and 0.51 -> 0.36 s for 0.39 s; 6 and 11 files were left as they were.
MIN_SMALL_FILES = 16


def compact(
    store: Store, *, min_files: int = MIN_SMALL_FILES, target_rows: int = 2_000_000, small_rows: int = SMALL_FILE_ROWS
) -> int:
    """Merge small Parquet files of each table into few large ones; returns files merged.

    Queries over a store fed thousands of history files would otherwise open
    thousands of files per table.  Atomic like a commit: readers see the old
    or the new manifest, and the merged files are retired (kept for readers
    of the generation before, :data:`~phaseline.store.directory.RETAIN_REPLACED_S`).
    Sources whose bytes are live under two paths stay in their own files (rows of a
    compacted file are told apart by ``source_sha256``).  Retired files whose
    retention has passed are deleted, even when nothing is merged.
    """
    with store.lock():
        current = store.manifest()
        sources = store.sources(current)
        sha_of = dict(zip(sources.column("path").to_pylist(), sources.column("sha256").to_pylist(), strict=True))
        shared = {sha for sha, n in Counter(sha_of.values()).items() if n > 1}
        segment = f"{current.generation + 1:08d}-compact-{uuid.uuid4().hex[:8]}"
        by_table: dict[str, list[DataFile]] = {}
        for f in current.files:
            if f.rows < small_rows and not any(sha_of.get(src) in shared for src in f.sources):
                by_table.setdefault(f.table, []).append(f)
        merged: set[str] = set()
        new_files: list[DataFile] = []
        for table_name, small in by_table.items():
            if len(small) < min_files:
                continue
            spec = schemas.table(table_name)
            for group in _groups(small, target_rows):
                if len(group) > 1:
                    new_files.append(_merge_files(store, spec, group, segment))
                    merged.update(g.path for g in group)
        files = (*(f for f in current.files if f.path not in merged), *new_files)
        retired, expired = store._retire(current, files, current.sources_file)  # expired: garbage below
        if not merged and not expired:
            return 0
        manifest = Manifest(current.generation + 1, current.sources_file, files, retired)
        store._write_manifest(manifest)
        store.collect_garbage(manifest)
        return len(merged)


def _groups(small: Sequence[DataFile], target_rows: int) -> list[list[DataFile]]:
    """Consecutive runs of ``small`` of up to ``target_rows`` rows each (a file larger alone)."""
    groups: list[list[DataFile]] = [[]]
    rows = 0
    for f in small:
        if groups[-1] and rows + f.rows > target_rows:
            groups.append([])
            rows = 0
        groups[-1].append(f)
        rows += f.rows
    return groups


def _merge_files(store: Store, spec: schemas.TableSpec, group: Sequence[DataFile], segment: str) -> DataFile:
    # DuckDB reads the many small files in C++ on every core (pyarrow, one file at a
    # time, spent ~5x longer opening them); files of older schemas unify by name.
    current = schema_fingerprint(spec)
    con = duckdb_memory()
    try:
        paths = [str(store.root / f.path) for f in group]
        create_parquet_view(con, "_merge", paths, uniform=all(f.schema == current for f in group))
        table = conform(con.sql('SELECT * FROM "_merge"').to_arrow_table(), spec)
    finally:
        con.close()
    rel = f"data/{segment}/{spec.name}/part-{uuid.uuid4().hex[:12]}.parquet"
    write_parquet(store.root / rel, table, spec.name)
    sources = tuple(dict.fromkeys(src for f in group for src in f.sources))
    return DataFile(spec.name, rel, sources, table.num_rows, schema_fingerprint(spec))
