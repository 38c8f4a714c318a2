"""The store: Parquet files per table, a manifest, and DuckDB views over them.

Layout of a store directory::

    MANIFEST.json                  the one source of truth (replaced atomically)
    meta/sources-<gen>.parquet     the ``sources`` table of generation <gen>
    data/<segment>/<table>/<name>.parquet
                                   one file per (ingested file, table), or per
                                   (chunk of small files, table), or compacted
    .tmp/                          staging of uncommitted ingests
    .lock                          advisory write lock (fcntl)

Guarantees
----------
* **Atomic per file.** A file's rows are staged outside ``data/`` and become
  visible only when a new ``MANIFEST.json`` is renamed into place.  A crash or
  kill at any moment leaves the old manifest (the store as it was) or the new
  one (the store after); staged or orphaned Parquet files are never referenced
  and are removed by the first commit of the next ingest.  Sources staged
  together (:class:`~phaseline.staged_batch.StagedGroup`) may share data files
  and are published by one commit (one already live with the same content is
  left out of the shared files).
* **Readers keep reading.** A file that a commit or a compaction replaces
  leaves the manifest's ``files`` for its ``retired`` list and stays on disk
  for :data:`RETAIN_REPLACED_S`: a reader that opened the store before (its
  views name the old files) goes on reading the generation it opened.  A
  later commit or compaction deletes the retired files whose time has passed.
* **Idempotent.** A file whose content hash is already live is not written
  again; a changed file at the same path replaces its earlier rows in the same
  commit that adds the new ones.
* **Concurrent ingests.** Parsing happens without the lock; commits are
  serialised by an exclusive ``flock`` and re-read the manifest under it.

Readers open the manifest once and get a DuckDB connection with one view per
table of :data:`phaseline.schemas.TABLES`; such a connection reads the
generation it opened for :data:`RETAIN_REPLACED_S` at least.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import hashlib
import os
import shutil
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from phaseline import schemas
from phaseline.arrow import column, table_from_rows
from phaseline.errors import StoreError, StoreLockedError, first_line
from phaseline.staged_batch import StagedGroup
from phaseline.staging import SourceRecord, StagedFile, StagedSource

if TYPE_CHECKING:
    import duckdb

def _duckdb_memory() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection; duckdb is imported here, so an ingest that never
    compacts or queries does not load it (~60 ms of start-up)."""
    import duckdb

    return duckdb.connect(":memory:")


STORE_FORMAT = "phaseline-store"
STORE_VERSION = 2  # 2: data files list several sources (compaction)
DEFAULT_STORE = "phaseline-store"
LOCK_TIMEOUT_S = 600.0
#: Data files with fewer rows are merged by :meth:`Store.compact`.
SMALL_FILE_ROWS = 250_000
#: How the ``sources.error`` of a file skipped as a copy begins; the key of the source holding its bytes follows.
COPY_OF = "same content as "


def default_store_path() -> Path:
    """``$PHASELINE_STORE`` or ``./phaseline-store``."""
    return Path(os.environ.get("PHASELINE_STORE") or DEFAULT_STORE)


@dataclass(frozen=True, slots=True)
class DataFile:
    """One Parquet file of one table: the rows of one source, or of many after compaction."""

    table: str
    path: str  # relative to the store root
    sources: tuple[str, ...]  # the keys (``sources.path``) of the sources whose rows it holds
    rows: int
    schema: str = ""  # fingerprint of the table schema the file was written with


#: Seconds a file replaced by a commit or a compaction stays on disk for readers of older generations.
RETAIN_REPLACED_S = 3600.0

#: Two sources of one job id whose submit times differ by more than this describe two runs, not
#: one: a history and its copy, or Rumen's parse of it, carry the same submit time to the
#: millisecond; a job id comes back only when a cluster's id prefix does (LocalJobRunner's random
#: ``job_local<N>_0001``, a hand-edited or replayed trace).
SAME_RUN_SLACK_MS = 60_000


@dataclass(frozen=True, slots=True)
class Retired:
    """A file an earlier generation named, kept on disk for its readers until ``at`` + the retention."""

    path: str  # relative to the store root
    at: float  # Unix time it left the manifest's files


@dataclass(frozen=True, slots=True)
class Manifest:
    """The committed state of a store."""

    generation: int
    sources_file: str | None
    files: tuple[DataFile, ...]
    retired: tuple[Retired, ...] = ()

    def referenced(self) -> set[str]:
        """Every path the manifest names: its data files, its sources file, the retired files."""
        paths = {f.path for f in self.files} | {r.path for r in self.retired}
        if self.sources_file:
            paths.add(self.sources_file)
        return paths

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STORE_FORMAT,
            "version": STORE_VERSION,
            "schema_version": schemas.SCHEMA_VERSION,
            "generation": self.generation,
            "sources_file": self.sources_file,
            "files": [
                {
                    "table": f.table,
                    "path": f.path,
                    "sources": list(f.sources),
                    "rows": f.rows,
                    "schema": f.schema,
                }
                for f in self.files
            ],
            "retired": [{"path": r.path, "at": r.at} for r in self.retired],
        }


EMPTY_MANIFEST = Manifest(0, None, ())


class Store:
    """A phaseline store directory.

    Parameters
    ----------
    root
        The store directory; created on first write.
    """

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else default_store_path()
        #: Seconds replaced files stay on disk (:data:`RETAIN_REPLACED_S`).
        self.retain_s = RETAIN_REPLACED_S

    # -- reading -----------------------------------------------------------------

    @property
    def manifest_path(self) -> Path:
        return self.root / "MANIFEST.json"

    def exists(self) -> bool:
        return self.manifest_path.exists()

    def manifest(self) -> Manifest:
        """The committed manifest (an empty one for a store never written)."""
        return self._parse_manifest(self._manifest_bytes())

    def _manifest_bytes(self) -> bytes | None:
        """The manifest file's bytes (``None`` for a store never written)."""
        try:
            return self.manifest_path.read_bytes()
        except FileNotFoundError:
            if self.root.exists() and not self.root.is_dir():
                raise StoreError(f"{self.root} is not a directory") from None
            return None

    def _parse_manifest(self, raw: bytes | None) -> Manifest:
        if raw is None:
            return EMPTY_MANIFEST
        try:
            doc = orjson.loads(raw)
            if doc.get("format") != STORE_FORMAT:
                raise StoreError(f"{self.manifest_path}: not a phaseline store manifest")
            if doc.get("version") != STORE_VERSION:
                raise StoreError(
                    f"{self.manifest_path}: store version {doc.get('version')} is not supported "
                    f"(this phaseline reads version {STORE_VERSION})"
                )
            files = tuple(
                DataFile(
                    str(f["table"]),
                    str(f["path"]),
                    tuple(str(x) for x in f["sources"]),
                    int(f["rows"]),
                    str(f.get("schema", "")),
                )
                for f in doc["files"]
            )
            retired = tuple(Retired(str(r["path"]), float(r["at"])) for r in doc.get("retired", ()))
            return Manifest(int(doc["generation"]), doc.get("sources_file"), files, retired)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StoreError(f"{self.manifest_path}: corrupt manifest ({exc})") from exc

    def sources(self, manifest: Manifest | None = None) -> pa.Table:
        """The ``sources`` table of a generation (empty table for a new store)."""
        manifest = manifest or self.manifest()
        spec = schemas.SOURCES
        if manifest.sources_file is None:
            return pa.Table.from_batches([], schema=spec.schema)
        path = self.root / manifest.sources_file
        try:
            # Not pq.read_table nor Schema.empty_table: both import pandas, ~0.25 s of every ingest's start-up.
            return _conform(pq.ParquetFile(path).read(), spec)
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise StoreError(f"{path}: the sources table cannot be read ({exc}); see `phaseline verify`") from exc

    def connect(self, manifest: Manifest | None = None) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with the store's tables as views.

        Schema ``raw`` holds one view per table over every row of every source.
        The default schema's views, the ones to query, hold the same rows except
        where several sources describe one unit (:attr:`~phaseline.schemas.TableSpec.unit`:
        the same job, task, attempt or counter set; say a 0.20 history log and
        Rumen's parse of it): there only the preferred source's rows of that unit
        are kept, so nothing is counted twice.  The sources of a job are ranked
        once, for all tables: a first-hand format before a derived one
        (:data:`~phaseline.schemas.DERIVED_FORMATS`), a source whose successful
        tasks fit its own job totals before one with more (edited by hand, or
        two runs under one id), the source with more rows
        about the job (a complete copy before a truncated one), a landed
        source before a partial one, the first path in sort order.  A derived
        source stands in only where no first-hand one has rows of the table for
        the job; it adds no unit to a first-hand account.  Sources that say the
        job was submitted at another time than the kept one (by more than
        :data:`SAME_RUN_SLACK_MS`) are another run under the same id: they add
        nothing, and ``phaseline verify`` names them.  The temporary table
        ``overlapping_sources`` (``table_name, job_id, path, format, rows,
        preference, stand_in, other_run, submit_ms``; preference 1 is kept; a
        ``stand_in`` source adds no unit to the others') lists every such case.
        """
        import duckdb  # loaded by _duckdb_memory already

        manifest = manifest or self.manifest()
        con = _duckdb_memory()
        try:
            self._create_views(con, manifest)
        except duckdb.Error as exc:
            raise StoreError(
                f"{self.root}: the store's files cannot be read ({first_line(exc)}); see `phaseline verify`"
            ) from exc
        return con

    def _create_views(self, con: duckdb.DuckDBPyConnection, manifest: Manifest) -> None:
        con.execute("CREATE SCHEMA raw")
        by_table: dict[str, list[DataFile]] = {}
        for f in manifest.files:
            by_table.setdefault(f.table, []).append(f)
        for name, spec in schemas.TABLES.items():
            files = by_table.get(name)
            if name == "sources" and manifest.sources_file is not None:
                _create_parquet_view(con, f'raw."{name}"', [str(self.root / manifest.sources_file)], uniform=True)
            elif files and name != "sources":
                current = schema_fingerprint(spec)
                uniform = all(f.schema == current for f in files)
                paths = [str(self.root / f.path) for f in files]
                _create_parquet_view(con, f'raw."{name}"', paths, uniform=uniform, spec=spec)
            else:  # no rows yet: an empty table of the declared types (nothing left registered)
                con.register("_empty", spec.schema.empty_table())
                con.execute(f'CREATE TABLE raw."{name}" AS SELECT * FROM "_empty"')
                con.unregister("_empty")
        shared = [
            name
            for name, spec in schemas.TABLES.items()
            if spec.unit and len({key for f in by_table.get(name, ()) for key in f.sources}) > 1
        ]
        overlapping = _find_overlaps(con, shared)
        for name, spec in schemas.TABLES.items():
            if name in overlapping:
                con.execute(_one_account_view(name, spec.unit))
            else:
                con.execute(f'CREATE VIEW main."{name}" AS SELECT * FROM raw."{name}"')

    # -- writing -----------------------------------------------------------------

    def begin(self) -> Transaction:
        """Start staging files; nothing is visible until :meth:`Transaction.commit`."""
        self.root.mkdir(parents=True, exist_ok=True)
        return Transaction(self)

    @contextlib.contextmanager
    def lock(self, timeout_s: float = LOCK_TIMEOUT_S) -> Iterator[None]:
        """Hold the store's exclusive write lock."""
        self.root.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.root / ".lock", os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise StoreLockedError(
                            f"{self.root}: another phaseline process holds the write lock "
                            f"for more than {timeout_s:.0f} s"
                        ) from None
                    time.sleep(0.05)
            try:
                yield
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def _write_manifest(self, manifest: Manifest) -> bytes:
        """Replace the manifest atomically (fsynced, then renamed); returns the bytes written."""
        tmp = self.root / f".MANIFEST.{uuid.uuid4().hex}.tmp"
        # orjson: ~0.013 s per commit for the ~15 MB manifest of 20,000 sources (json.dumps: ~0.1 s)
        data = orjson.dumps(manifest.to_json(), option=orjson.OPT_INDENT_2)
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.manifest_path)
        _fsync_dir(self.root)
        return data

    def _without_sources(
        self, files: Sequence[DataFile], removed: set[str], sha_of: Mapping[str, str], segment: str
    ) -> list[DataFile]:
        """``files`` minus the rows of the ``removed`` sources (by path); call with the lock held.

        A single-source file of a removed source is dropped; a compacted file
        holding other sources too is rewritten without the removed sources' rows
        (identified by ``source_sha256``, unique within a compacted file).
        """
        kept: list[DataFile] = []
        for f in files:
            gone = removed.intersection(f.sources)
            if not gone:
                kept.append(f)
                continue
            rest = tuple(src for src in f.sources if src not in gone)
            if not rest:
                continue
            try:
                table = pq.read_table(self.root / f.path)
            except (OSError, ValueError, pa.ArrowException) as exc:
                raise StoreError(
                    f"{self.root / f.path}: cannot be rewritten without the sources replaced now "
                    f"({first_line(exc)}); see `phaseline verify`"
                ) from exc
            drop = column([sha_of[src] for src in gone if src in sha_of], pa.string())
            table = table.filter(pc.invert(pc.is_in(table.column("source_sha256"), value_set=drop)))
            rel = f"data/{segment}/{f.table}/rewrite-{uuid.uuid4().hex[:12]}.parquet"
            _write_parquet(self.root / rel, table, f.table)
            kept.append(DataFile(f.table, rel, rest, table.num_rows, f.schema))
        return kept

    def compact(
        self, *, min_files: int = 16, target_rows: int = 2_000_000, small_rows: int = SMALL_FILE_ROWS
    ) -> int:
        """Merge small Parquet files of each table into few large ones; returns files merged.

        Queries over a store fed thousands of history files would otherwise open
        thousands of files per table.  Atomic like a commit: readers see the old
        or the new manifest, and the merged files are retired (kept for readers
        of the generation before, :data:`RETAIN_REPLACED_S`).  Sources whose
        bytes are live under two paths stay in their own files (rows of a
        compacted file are told apart by ``source_sha256``).  Retired files whose
        retention has passed are deleted, even when nothing is merged.
        """
        with self.lock():
            current = self.manifest()
            sources = self.sources(current)
            sha_of = dict(
                zip(sources.column("path").to_pylist(), sources.column("sha256").to_pylist(), strict=True)
            )
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
                groups: list[list[DataFile]] = [[]]
                rows = 0
                for f in small:
                    if groups[-1] and rows + f.rows > target_rows:
                        groups.append([])
                        rows = 0
                    groups[-1].append(f)
                    rows += f.rows
                for group in groups:
                    if len(group) > 1:
                        new_files.append(self._merge_files(spec, group, segment))
                        merged.update(g.path for g in group)
            files = (*(f for f in current.files if f.path not in merged), *new_files)
            retired, expired = self._retire(current, files, current.sources_file)  # expired: garbage below
            if not merged and not expired:
                return 0
            manifest = Manifest(current.generation + 1, current.sources_file, files, retired)
            self._write_manifest(manifest)
            self.collect_garbage(manifest)
            return len(merged)

    def _merge_files(self, spec: schemas.TableSpec, group: Sequence[DataFile], segment: str) -> DataFile:
        # DuckDB reads the many small files in C++ on every core (pyarrow, one file at a
        # time, spent ~5x longer opening them); files of older schemas unify by name.
        current = schema_fingerprint(spec)
        con = _duckdb_memory()
        try:
            paths = [str(self.root / f.path) for f in group]
            _create_parquet_view(con, "_merge", paths, uniform=all(f.schema == current for f in group))
            table = _conform(con.sql('SELECT * FROM "_merge"').to_arrow_table(), spec)
        finally:
            con.close()
        rel = f"data/{segment}/{spec.name}/part-{uuid.uuid4().hex[:12]}.parquet"
        _write_parquet(self.root / rel, table, spec.name)
        sources = tuple(dict.fromkeys(src for f in group for src in f.sources))
        return DataFile(spec.name, rel, sources, table.num_rows, schema_fingerprint(spec))

    def collect_garbage(self, manifest: Manifest) -> int:
        """Delete data, meta and staging files the manifest does not reference; returns how many.

        Call with the lock held.  Retired files still in their retention are
        referenced; staging directories of transactions still in progress in
        other processes are kept (they hold their own marker lock).
        """
        live = manifest.referenced()
        removed = 0
        for sub in ("data", "meta"):
            base = self.root / sub
            if not base.exists():
                continue
            for path in base.rglob("*.parquet"):
                rel = path.relative_to(self.root).as_posix()
                if rel not in live:
                    path.unlink(missing_ok=True)
                    removed += 1
            for d in sorted((p for p in base.rglob("*") if p.is_dir()), reverse=True):
                with contextlib.suppress(OSError):
                    d.rmdir()  # only empty ones
        tmp = self.root / ".tmp"
        if tmp.exists():
            for d in tmp.iterdir():
                if not _staging_in_use(d):
                    shutil.rmtree(d, ignore_errors=True)
                    removed += 1
        for stale in self.root.glob(".MANIFEST.*.tmp"):
            stale.unlink(missing_ok=True)
        return removed

    def _retire(
        self, before: Manifest, files: Sequence[DataFile], sources_file: str | None
    ) -> tuple[tuple[Retired, ...], list[str]]:
        """The ``retired`` list of the generation after ``before`` (whose files are ``files`` and
        ``sources_file``), and the retired paths whose retention has passed (to delete once the
        new manifest is written).  Call with the lock held."""
        now = time.time()
        live = {f.path for f in files}
        gone = [f.path for f in before.files if f.path not in live]
        if before.sources_file and before.sources_file != sources_file:
            gone.append(before.sources_file)
        kept: list[Retired] = []
        expired: list[str] = []
        for r in before.retired:
            if r.path in live:  # (names are never used twice; a live file is never deleted)
                continue
            if now - r.at >= self.retain_s:
                expired.append(r.path)
            else:
                kept.append(r)
        return (*kept, *(Retired(p, now) for p in gone)), expired

    def _delete(self, paths: Sequence[str]) -> None:
        """Delete files (relative paths) and the data directories they leave empty."""
        parents: set[Path] = set()
        for rel in paths:
            path = self.root / rel
            path.unlink(missing_ok=True)
            parents.update((path.parent, path.parent.parent))
        for d in sorted(parents, key=lambda p: len(p.parts), reverse=True):
            if d.is_relative_to(self.root / "data"):
                with contextlib.suppress(OSError):
                    d.rmdir()  # only empty ones


def _write_parquet(path: Path, table: pa.Table, name: str) -> None:
    """Write a Parquet file of table ``name`` under a temporary name, fsync it, and rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, **schemas.table(name).parquet_options())
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _conform(table: pa.Table, spec: schemas.TableSpec) -> pa.Table:
    """A table read from an older file, with the current schema's columns (missing ones null)."""
    columns = [
        table.column(f.name).cast(f.type)
        if f.name in table.column_names
        else pa.nulls(table.num_rows, f.type)
        for f in spec.schema
    ]
    return pa.Table.from_arrays(columns, schema=spec.schema)


def schema_fingerprint(spec: schemas.TableSpec) -> str:
    """A short hash of a table's declared schema (names and types)."""
    text = ";".join(f"{f.name}:{f.type}" for f in spec.schema)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _create_parquet_view(
    con: duckdb.DuckDBPyConnection, name: str, paths: Sequence[str], *, uniform: bool,
    spec: schemas.TableSpec | None = None,
) -> None:
    """A view (``name`` is quoted SQL) over Parquet files; files of older schemas are unified by column name,
    and a column of ``spec`` that none of them has is NULL (queries may name every declared column)."""
    listing = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
    source = f"read_parquet([{listing}]{'' if uniform else ', union_by_name = true'})"
    added = ""
    if not uniform and spec is not None:
        have = set(con.sql(f"SELECT * FROM {source} LIMIT 0").columns)
        missing = pa.schema([f for f in spec.schema if f.name not in have])
        if len(missing):
            types = con.from_arrow(missing.empty_table()).dtypes
            added = "".join(f', CAST(NULL AS {t}) AS "{f.name}"' for f, t in zip(missing, types, strict=True))
    con.execute(f"CREATE VIEW {name} AS SELECT *{added} FROM {source}")


def _find_overlaps(con: duckdb.DuckDBPyConnection, tables: Sequence[str]) -> set[str]:
    """Fill the temporary table ``overlapping_sources`` (see :meth:`Store.connect`); the tables with any.

    ``sources.job_ids`` says which jobs two sources share without reading the data;
    only those jobs' rows are then counted.  Sources ingested before that column
    existed have it NULL, and the rows of every job are counted instead.
    """
    landed = "status IN ('landed', 'partial') AND rows_written > 0"
    unknown = "job_ids IS NULL" if "job_ids" in con.sql("SELECT * FROM raw.sources LIMIT 0").columns else "true"
    (unknown_sources,) = con.execute(f"SELECT count(*) FROM raw.sources WHERE {landed} AND {unknown}").fetchone() or (0,)
    if unknown_sources:
        only = ""
    else:
        con.execute(f"""
            CREATE TEMP TABLE _shared_jobs AS
            SELECT job_id FROM (SELECT unnest(job_ids) AS job_id, sha256 FROM raw.sources WHERE {landed})
            GROUP BY job_id HAVING count(DISTINCT sha256) > 1
        """)
        (shared,) = con.execute("SELECT count(*) FROM _shared_jobs").fetchone() or (0,)
        tables = tables if shared else ()
        only = " AND job_id IN (SELECT job_id FROM _shared_jobs)"
    per_job = " UNION ALL ".join(
        f"SELECT '{name}' AS table_name, job_id, source_sha256, count(*) AS rows "
        f'FROM raw."{name}" WHERE job_id IS NOT NULL{only} GROUP BY ALL'
        for name in tables
    ) or "SELECT NULL::VARCHAR AS table_name, NULL::VARCHAR AS job_id, NULL::VARCHAR AS source_sha256, 0 AS rows"
    derived = ", ".join(f"'{f}'" for f in sorted(schemas.DERIVED_FORMATS))
    con.execute(f"""
        CREATE TEMP TABLE overlapping_sources AS
        WITH per_job AS ({per_job}),
        shared AS (
            SELECT * FROM per_job QUALIFY count(*) OVER (PARTITION BY table_name, job_id) > 1
        ),
        src AS (
            SELECT * FROM raw.sources WHERE status IN ('landed', 'partial')
            QUALIFY row_number() OVER (PARTITION BY sha256 ORDER BY path) = 1
        ),
        overfull AS (  -- sources with more successful tasks of a type than their own job total
            SELECT DISTINCT t.job_id, t.source_sha256
            FROM (SELECT job_id, source_sha256, task_type, count(DISTINCT task_id) AS n FROM raw.tasks
                  WHERE status = 'SUCCEEDED' AND job_id IN (SELECT job_id FROM shared) GROUP BY ALL) AS t
            JOIN raw.jobs AS j USING (job_id, source_sha256)
            WHERE t.n > if(t.task_type = 'MAP', j.total_maps, if(t.task_type = 'REDUCE', j.total_reduces, NULL))
        ),
        submitted AS (  -- when each source says the job was submitted
            SELECT job_id, source_sha256, min(submit_ms) AS submit_ms FROM raw.jobs
            WHERE job_id IN (SELECT job_id FROM shared) GROUP BY ALL
        ),
        sources_of_job AS (  -- one row per (job, source): its rows, and what ranks it
            SELECT p.job_id, p.source_sha256, src.path, src.format, src.status, sum(p.rows) AS rows,
                   coalesce(src.format IN ({derived}), false) AS derived,
                   (p.job_id, p.source_sha256) IN (SELECT (job_id, source_sha256) FROM overfull) AS overfull,
                   any_value(t.submit_ms) AS submit_ms
            FROM per_job AS p LEFT JOIN src ON src.sha256 = p.source_sha256
            LEFT JOIN submitted AS t ON t.job_id = p.job_id AND t.source_sha256 = p.source_sha256
            WHERE p.job_id IN (SELECT job_id FROM shared)
            GROUP BY p.job_id, p.source_sha256, src.path, src.format, src.status
        ),
        ranked AS (
            SELECT *, row_number() OVER (
                       PARTITION BY job_id
                       ORDER BY derived, overfull, rows DESC, status = 'landed' DESC, path, source_sha256
                   ) AS preference
            FROM sources_of_job
        ),
        judged AS (  -- the submit time of the kept run: the first one given, in order of preference
            SELECT *, first_value(submit_ms IGNORE NULLS) OVER (
                       PARTITION BY job_id ORDER BY preference ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING
                   ) AS kept_submit_ms
            FROM ranked
        )
        SELECT s.table_name, s.job_id, s.source_sha256, r.path, r.format, s.rows, r.preference,
               r.derived OR r.overfull AS stand_in,
               coalesce(abs(r.submit_ms - r.kept_submit_ms) > {SAME_RUN_SLACK_MS}, false) AS other_run,
               r.submit_ms
        FROM shared AS s JOIN judged AS r USING (job_id, source_sha256)
    """)
    con.execute("DROP TABLE IF EXISTS _shared_jobs")  # a step of the above, not a relation for users
    return {r[0] for r in con.execute("SELECT DISTINCT table_name FROM overlapping_sources").fetchall()}


def _one_account_view(name: str, unit: Sequence[str]) -> str:
    """The view of table ``name`` keeping, per unit of an overlapping job, its preferred source's rows.

    A derived source (:data:`~phaseline.schemas.DERIVED_FORMATS`: Rumen's parse of a history),
    or one with more successful tasks than its own job total (``stand_in``), stands in for a
    job only where no other source has rows of the table for it: it never adds units (an
    attempt, a counter set) to another source's account of the same job.  A source of
    another run under the same job id (``other_run``) adds nothing at all.
    """
    partition = ", ".join(f'r."{c}"' for c in unit)
    return f"""
        CREATE VIEW main."{name}" AS
        SELECT r.* FROM raw."{name}" AS r
        WHERE NOT EXISTS (
            SELECT 1 FROM overlapping_sources AS o WHERE o.table_name = '{name}' AND o.job_id = r.job_id
        )
        UNION ALL
        SELECT r.* FROM raw."{name}" AS r
        JOIN overlapping_sources AS o
          ON o.table_name = '{name}' AND o.job_id = r.job_id AND o.source_sha256 = r.source_sha256
        WHERE NOT o.other_run
        QUALIFY o.preference = min(o.preference) OVER (PARTITION BY {partition})
            AND (NOT o.stand_in OR bool_and(o.stand_in) OVER (PARTITION BY r.job_id))
    """


def sync_filesystem(path: Path) -> None:
    """Flush every written file of the filesystem holding ``path`` to disk (Linux ``syncfs``).

    One call makes a whole batch of staged files durable, where one ``fsync`` per
    file would cost milliseconds each; elsewhere it falls back to ``os.sync()``.
    """
    syncfs = _libc_syncfs()
    if syncfs is None:
        os.sync()
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        if syncfs(fd) != 0:
            err = ctypes.get_errno()
            raise StoreError(f"{path}: syncfs failed: {os.strerror(err)}")
    finally:
        os.close(fd)


@functools.cache
def _libc_syncfs() -> Callable[[int], int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        func = libc.syncfs
    except (OSError, AttributeError):
        return None
    func.argtypes = [ctypes.c_int]
    func.restype = ctypes.c_int
    return func


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _staging_in_use(directory: Path) -> bool:
    marker = directory / ".inuse"
    if not marker.exists():
        return False
    fd = os.open(marker, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


class Transaction:
    """Stages sources; :meth:`commit` makes them visible atomically."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
        self.staging = store.root / ".tmp" / self.id
        self.staging.mkdir(parents=True)
        self._marker_fd = os.open(self.staging / ".inuse", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._marker_fd, fcntl.LOCK_EX)
        self._done: list[StagedGroup] = []
        self._pending = 0
        #: ``is_copy(key, format, other)``: whether a source read now is a copy of ``other``, live
        #: with the same bytes (the pipeline's rule); None: the same bytes under two keys are two
        #: sources.  :meth:`commit` asks it under the lock, where another ingest's commit shows.
        self.is_copy: Callable[[str, str | None, str], bool] | None = None
        # What this transaction's last commit wrote (manifest bytes, manifest, sources): the
        # next commit reuses it when the manifest on disk is still those bytes.
        self._committed: tuple[bytes, Manifest, pa.Table] | None = None

    def stage(self, path: str, sha256: str, size: int, fmt: str | None) -> StagedSource:
        return StagedSource(self.staging, path, sha256, size, fmt, self.adopt)

    def adopt(self, record: SourceRecord, files: tuple[StagedFile, ...]) -> None:
        """Queue a finished source (staged in this transaction's directory) for the next commit."""
        self.adopt_group(StagedGroup.single(record, files))

    def adopt_group(self, group: StagedGroup) -> None:
        """Queue finished sources whose files may hold rows of several of them (a :class:`StagedBatch`).

        Each multi-source file's sources must differ in content hash (their rows
        are told apart by ``source_sha256``) and a key appears once per group.
        """
        sha_of = {r.path: r.sha256 for r in group.records}
        if len(sha_of) != len(group.records):
            raise StoreError("a staged group names one source twice")
        for f, keys in group.files:
            if any(k not in sha_of for k in keys):
                raise StoreError(f"{f.path}: staged file of a source the group does not record")
            if len(keys) > 1 and len({sha_of[k] for k in keys}) != len(keys):
                raise StoreError(f"{f.path}: sources of one staged file share a content hash")
        self._done.append(group)
        self._pending += len(group.records)

    @property
    def pending(self) -> int:
        """Sources adopted since the last commit."""
        return self._pending

    def _current(self) -> tuple[Manifest, pa.Table]:
        """The committed manifest and sources table; call with the lock held.

        After this transaction's own commit, the sources table is not read again
        while the manifest on disk is the one that commit wrote.
        """
        store = self.store
        raw = store._manifest_bytes()
        if self._committed is not None and raw == self._committed[0]:
            return self._committed[1], self._committed[2]
        manifest = store._parse_manifest(raw)
        return manifest, store.sources(manifest)

    def commit(self) -> Manifest:
        """Publish every finished source; returns the new manifest.

        A source already live at the same path with the same content is dropped
        (idempotence); one whose path is live with other content replaces it.
        Sources are keyed by path: the same bytes under two paths are two
        sources (the pipeline decides what counts as a copy).  The files it
        replaces are retired (kept for readers of the generation before,
        :data:`RETAIN_REPLACED_S`).  The first commit of a transaction also
        removes what crashed ingests left behind and the retired files whose
        retention has passed; later ones remove only the latter.
        """
        store = self.store
        with store.lock():
            current, current_sources = self._current()
            paths = current_sources.column("path").to_pylist()
            sha_of = dict(zip(paths, current_sources.column("sha256").to_pylist(), strict=True))
            status_of = dict(zip(paths, current_sources.column("status").to_pylist(), strict=True))
            segment = f"{current.generation + 1:08d}-{self.id}"
            groups, self._done, self._pending = self._done, [], 0
            # Which group's version of each source is published: the last staged, except
            # that a source live with the same content (and not quarantined) is skipped.
            winner: dict[str, int] = {}
            for i, group in enumerate(groups):
                for record in group.records:
                    live = status_of.get(record.path)
                    if (
                        record.path not in winner
                        and sha_of.get(record.path) == record.sha256
                        and live != "quarantined"
                        and not (live == "skipped" and record.status != "skipped")  # a copy read now
                    ):
                        continue  # unchanged, or committed meanwhile by another ingest
                    winner[record.path] = i
            copies = self._copies_committed_meanwhile(groups, winner, sha_of, status_of)
            new_files: list[DataFile] = []
            new_records: dict[str, SourceRecord] = {}
            for i, group in enumerate(groups):
                published = {
                    r.path: r for r in group.records if winner.get(r.path) == i and r.path not in copies
                }
                new_records.update(published)
                new_records.update((r.path, copies[r.path]) for r in group.records if r.path in copies)
                for f, keys in group.files:
                    data_file = self._publish(
                        f, tuple(k for k in keys if k in published), keys, published, segment
                    )
                    if data_file is not None:
                        new_files.append(data_file)
            if not new_records:
                return current
            keep = store._without_sources(current.files, set(new_records), sha_of, segment)
            kept_sources = current_sources.filter(
                pc.invert(
                    pc.is_in(
                        current_sources.column("path"),
                        value_set=column(list(new_records), pa.string()),
                    )
                )
            )
            sources_table = pa.concat_tables(
                [
                    kept_sources,
                    table_from_rows([r.as_row() for r in new_records.values()], schemas.SOURCES.schema),
                ]
            )
            generation = current.generation + 1
            sources_rel = f"meta/sources-{generation:08d}-{self.id}.parquet"
            (store.root / "meta").mkdir(exist_ok=True)
            tmp = store.root / (sources_rel + ".tmp")
            pq.write_table(sources_table, tmp, compression="zstd", write_page_checksum=True)
            os.replace(tmp, store.root / sources_rel)
            # Every file the new manifest names (staged by this process or by workers,
            # moved into data/, and the sources file) reaches the disk before it does.
            sync_filesystem(store.root)
            files = (*keep, *new_files)
            retired, expired = store._retire(current, files, sources_rel)
            manifest = Manifest(generation, sources_rel, files, retired)
            written = store._write_manifest(manifest)
            if self._committed is None:
                store.collect_garbage(manifest)
            else:
                store._delete(expired)
            self._committed = (written, manifest, sources_table)
            return manifest

    def _copies_committed_meanwhile(
        self,
        groups: Sequence[StagedGroup],
        winner: Mapping[str, int],
        sha_of: Mapping[str, str],
        status_of: Mapping[str, str],
    ) -> dict[str, SourceRecord]:
        """Sources read now whose bytes another ingest landed under another key since this one
        planned (two ingests of copies at once): each becomes a skipped copy, its rows dropped.
        ``sha_of`` and ``status_of``: the committed sources' (by key)."""
        if self.is_copy is None:
            return {}
        held: dict[str, list[str]] = {}  # sha256 -> live landed keys
        for key, sha in sha_of.items():
            if status_of[key] in ("landed", "partial") and key not in winner:
                held.setdefault(sha, []).append(key)
        copies: dict[str, SourceRecord] = {}
        for i, group in enumerate(groups):
            for r in group.records:
                if winner.get(r.path) != i or r.status not in ("landed", "partial"):
                    continue
                twin = next((k for k in held.get(r.sha256, ()) if self.is_copy(r.path, r.format, k)), None)
                if twin is not None:
                    copies[r.path] = replace(
                        r,
                        format=None,
                        status="skipped",
                        error=f"{COPY_OF}{twin} (landed by another ingest meanwhile)",
                        events_read=0,
                        rows_written=0,
                        rows_quarantined=0,
                        job_ids=(),
                    )
        return copies

    def _publish(
        self,
        staged: StagedFile,
        kept: tuple[str, ...],
        keys: tuple[str, ...],
        published: Mapping[str, SourceRecord],
        segment: str,
    ) -> DataFile | None:
        """Move a staged file into ``data/``; rows of its sources that are not published are left out."""
        if not kept:
            staged.path.unlink(missing_ok=True)
            return None
        rel = f"data/{segment}/{staged.table}/{staged.path.name}"
        dest = self.store.root / rel
        rows = staged.rows
        if kept == keys:
            dest.parent.mkdir(parents=True, exist_ok=True)
            os.replace(staged.path, dest)
        else:  # a batch file holding a source that is not published: rewritten without its rows
            table = pq.read_table(staged.path)
            shas = column([published[k].sha256 for k in kept], pa.string())
            table = table.filter(pc.is_in(table.column("source_sha256"), value_set=shas))
            _write_parquet(dest, table, staged.table)
            staged.path.unlink(missing_ok=True)
            rows = table.num_rows
        return DataFile(staged.table, rel, kept, rows, schema_fingerprint(schemas.table(staged.table)))

    def close(self) -> None:
        """Drop whatever was not committed and release the staging area."""
        self._done = []
        self._pending = 0
        with contextlib.suppress(OSError):
            fcntl.flock(self._marker_fd, fcntl.LOCK_UN)
            os.close(self._marker_fd)
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
