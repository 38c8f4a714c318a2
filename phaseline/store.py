"""The store: Parquet files per table, a manifest, and DuckDB views over them.

Layout of a store directory::

    MANIFEST.json                  the one source of truth (replaced atomically)
    meta/sources-<gen>.parquet     the ``sources`` table of generation <gen>
    data/<segment>/<table>/<sha>.parquet
                                   one file per (ingested file, table)
    .tmp/                          staging of uncommitted ingests
    .lock                          advisory write lock (fcntl)

Guarantees
----------
* **Atomic per file.** A file's rows are staged outside ``data/`` and become
  visible only when a new ``MANIFEST.json`` is renamed into place.  A crash or
  kill at any moment leaves the old manifest (the store as it was) or the new
  one (the store after); staged or orphaned Parquet files are never referenced
  and are removed by the next commit.
* **Idempotent.** A file whose content hash is already live is not written
  again; a changed file at the same path replaces its earlier rows in the same
  commit that adds the new ones.
* **Concurrent ingests.** Parsing happens without the lock; commits are
  serialised by an exclusive ``flock`` and re-read the manifest under it.

Readers open the manifest once and get a DuckDB connection with one view per
table of :data:`phaseline.schemas.TABLES`.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from phaseline import schemas
from phaseline.errors import SchemaError, StoreError, StoreLockedError

STORE_FORMAT = "phaseline-store"
STORE_VERSION = 2  # 2: data files list several sources (compaction)
DEFAULT_STORE = "phaseline-store"
FLUSH_ROWS = 32_768
LOCK_TIMEOUT_S = 600.0


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


@dataclass(frozen=True, slots=True)
class SourceRecord:
    """One row of the ``sources`` table."""

    path: str
    sha256: str
    bytes: int
    format: str | None
    status: str
    error: str | None
    ingested_at: datetime
    events_read: int = 0
    rows_written: int = 0
    rows_quarantined: int = 0
    record_tables: str = "events"

    def as_row(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "bytes": self.bytes,
            "format": self.format,
            "status": self.status,
            "error": self.error,
            "ingested_at": self.ingested_at,
            "events_read": self.events_read,
            "rows_written": self.rows_written,
            "rows_quarantined": self.rows_quarantined,
            "record_tables": self.record_tables,
            "source_sha256": self.sha256,
        }


@dataclass(frozen=True, slots=True)
class Manifest:
    """The committed state of a store."""

    generation: int
    sources_file: str | None
    files: tuple[DataFile, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "format": STORE_FORMAT,
            "version": STORE_VERSION,
            "schema_version": schemas.SCHEMA_VERSION,
            "generation": self.generation,
            "sources_file": self.sources_file,
            "files": [
                {"table": f.table, "path": f.path, "sources": list(f.sources), "rows": f.rows, "schema": f.schema}
                for f in self.files
            ],
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

    # -- reading -----------------------------------------------------------------

    @property
    def manifest_path(self) -> Path:
        return self.root / "MANIFEST.json"

    def exists(self) -> bool:
        return self.manifest_path.exists()

    def manifest(self) -> Manifest:
        """The committed manifest (an empty one for a store never written)."""
        try:
            text = self.manifest_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            if self.root.exists() and not self.root.is_dir():
                raise StoreError(f"{self.root} is not a directory") from None
            return EMPTY_MANIFEST
        try:
            doc = json.loads(text)
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
            return Manifest(int(doc["generation"]), doc.get("sources_file"), files)
        except (ValueError, KeyError, TypeError) as exc:
            raise StoreError(f"{self.manifest_path}: corrupt manifest ({exc})") from exc

    def sources(self, manifest: Manifest | None = None) -> pa.Table:
        """The ``sources`` table of a generation (empty table for a new store)."""
        manifest = manifest or self.manifest()
        spec = schemas.SOURCES
        if manifest.sources_file is None:
            return spec.schema.empty_table()
        return pq.read_table(self.root / manifest.sources_file, schema=spec.schema)

    def connect(self, manifest: Manifest | None = None) -> duckdb.DuckDBPyConnection:
        """An in-memory DuckDB connection with one view per table over the store's files."""
        manifest = manifest or self.manifest()
        con = duckdb.connect(":memory:")
        by_table: dict[str, list[DataFile]] = {}
        for f in manifest.files:
            by_table.setdefault(f.table, []).append(f)
        for name, spec in schemas.TABLES.items():
            if name == "sources":
                if manifest.sources_file is None:
                    con.register(name, spec.schema.empty_table())
                else:
                    _create_parquet_view(con, name, [str(self.root / manifest.sources_file)], uniform=True)
                continue
            files = by_table.get(name)
            if files:
                current = schema_fingerprint(spec)
                uniform = all(f.schema == current for f in files)
                _create_parquet_view(con, name, [str(self.root / f.path) for f in files], uniform=uniform)
            else:
                con.register(name, spec.schema.empty_table())
        return con

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

    def _write_manifest(self, manifest: Manifest) -> None:
        tmp = self.root / f".MANIFEST.{uuid.uuid4().hex}.tmp"
        data = json.dumps(manifest.to_json(), indent=1).encode()
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.manifest_path)
        _fsync_dir(self.root)

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
            table = pq.read_table(self.root / f.path)
            drop = pa.array([sha_of[src] for src in gone if src in sha_of], pa.string())
            table = table.filter(pc.invert(pc.is_in(table.column("source_sha256"), value_set=drop)))
            rel = f"data/{segment}/{f.table}/rewrite-{uuid.uuid4().hex[:12]}.parquet"
            _write_parquet(self.root / rel, table)
            kept.append(DataFile(f.table, rel, rest, table.num_rows, f.schema))
        return kept

    def compact(self, *, min_files: int = 16, target_rows: int = 2_000_000, small_rows: int = 250_000) -> int:
        """Merge small Parquet files of each table into few large ones; returns files merged.

        Queries over a store fed thousands of history files would otherwise open
        thousands of files per table.  Atomic like a commit: readers see the old
        or the new manifest.  Sources whose bytes are live under two paths stay
        in their own files (rows of a compacted file are told apart by
        ``source_sha256``).
        """
        with self.lock():
            current = self.manifest()
            sources = self.sources(current)
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
            if not merged:
                return 0
            manifest = Manifest(
                current.generation + 1,
                current.sources_file,
                (*(f for f in current.files if f.path not in merged), *new_files),
            )
            self._write_manifest(manifest)
            self.collect_garbage(manifest)
            return len(merged)

    def _merge_files(self, spec: schemas.TableSpec, group: Sequence[DataFile], segment: str) -> DataFile:
        # DuckDB reads the many small files in C++ on every core (pyarrow, one file at a
        # time, spent ~5x longer opening them); files of older schemas unify by name.
        current = schema_fingerprint(spec)
        con = duckdb.connect(":memory:")
        try:
            paths = [str(self.root / f.path) for f in group]
            _create_parquet_view(con, "_merge", paths, uniform=all(f.schema == current for f in group))
            table = _conform(con.sql('SELECT * FROM "_merge"').to_arrow_table(), spec)
        finally:
            con.close()
        rel = f"data/{segment}/{spec.name}/part-{uuid.uuid4().hex[:12]}.parquet"
        _write_parquet(self.root / rel, table)
        sources = tuple(dict.fromkeys(src for f in group for src in f.sources))
        return DataFile(spec.name, rel, sources, table.num_rows, schema_fingerprint(spec))

    def collect_garbage(self, manifest: Manifest) -> int:
        """Delete data, meta and staging files the manifest does not reference; returns how many.

        Call with the lock held.  Staging directories of transactions still in
        progress in other processes are kept (they hold their own marker lock).
        """
        live = {f.path for f in manifest.files}
        if manifest.sources_file:
            live.add(manifest.sources_file)
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


def _write_parquet(path: Path, table: pa.Table) -> None:
    """Write a Parquet file under a temporary name, fsync it, and rename it into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    pq.write_table(table, tmp, compression="zstd")
    with open(tmp, "rb+") as fh:
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def _conform(table: pa.Table, spec: schemas.TableSpec) -> pa.Table:
    """A table read from an older file, with the current schema's columns (missing ones null)."""
    columns = [
        table.column(f.name).cast(f.type) if f.name in table.column_names else pa.nulls(table.num_rows, f.type)
        for f in spec.schema
    ]
    return pa.Table.from_arrays(columns, schema=spec.schema)


def schema_fingerprint(spec: schemas.TableSpec) -> str:
    """A short hash of a table's declared schema (names and types)."""
    text = ";".join(f"{f.name}:{f.type}" for f in spec.schema)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _create_parquet_view(
    con: duckdb.DuckDBPyConnection, name: str, paths: Sequence[str], *, uniform: bool
) -> None:
    """A view over Parquet files; files written under older schemas are unified by column name."""
    listing = ", ".join("'" + p.replace("'", "''") + "'" for p in paths)
    union = "" if uniform else ", union_by_name = true"
    con.execute(f'CREATE VIEW "{name}" AS SELECT * FROM read_parquet([{listing}]{union})')


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


class _TableWriter:
    """Buffers rows of one table for one source and streams them to Parquet.

    Rows arrive one at a time (a dict, never mutated, or a tuple in
    ``row_columns`` order) or as blocks of columns (:meth:`add_columns`).
    Single rows wait as tuples and are transposed when a block or a flush
    comes; blocks extend per-column lists at once, and a column that so far
    came only as block constants (a file's job id, an attempt's id) is kept
    as runs of ``(value, count)`` until a row gives it per-row values.  A flush
    builds one Arrow array per column (runs by ``take`` from their values),
    about twice as fast as ``Table.from_pylist``; rows keep the order they
    arrived in.
    """

    __slots__ = (
        "_block_keys",
        "_buffered",
        "_checked",
        "_cols",
        "_in_cols",
        "_names",
        "_runs",
        "_tuples",
        "_types",
        "path",
        "rows_written",
        "sha256",
        "spec",
        "writer",
    )

    def __init__(self, spec: schemas.TableSpec, path: Path, sha256: str) -> None:
        self.spec = spec
        self.path = path
        self.sha256 = sha256
        self.writer: pq.ParquetWriter | None = None
        self._names = spec.row_columns
        self._types = [spec.schema.field(n).type for n in self._names]
        self._block_keys: set[tuple[tuple[str, ...], tuple[str, ...]]] = set()  # column names already checked
        self._checked = False
        self.rows_written = 0
        self._reset()

    def _reset(self) -> None:
        width = len(self._names)
        self._tuples: list[tuple[Any, ...]] = []  # single rows not yet moved into _cols
        self._cols: list[list[Any]] = [[] for _ in range(width)]  # the first _in_cols rows, by column
        # (values, counts): column i's _in_cols rows are values[0] counts[0] times, then values[1]...
        self._runs: list[tuple[list[Any], list[int]] | None] = [None] * width
        self._in_cols = 0
        self._buffered = 0

    def add(self, values: dict[str, Any] | tuple[Any, ...]) -> None:
        if type(values) is tuple:
            self._tuples.append(values)  # lengths are checked when the rows are transposed
        else:
            if not self._checked:
                unknown = set(values) - set(self._names)
                if unknown:
                    raise SchemaError(f"table {self.spec.name!r} has no column(s) {sorted(unknown)}")
                self._checked = True
            self._tuples.append(tuple(map(values.get, self._names)))  # type: ignore[union-attr]
        self._buffered += 1
        if self._buffered >= FLUSH_ROWS:
            self.flush()

    def add_columns(self, n: int, columns: Mapping[str, Sequence[Any]], constants: Mapping[str, Any]) -> None:
        """Append ``n`` rows given by column (``constants``: one value for all ``n``; others NULL)."""
        key = (tuple(columns), tuple(constants))
        if key not in self._block_keys:
            unknown = [name for name in (*key[0], *key[1]) if name not in self._names]
            if unknown:
                raise SchemaError(f"table {self.spec.name!r} has no column(s) {sorted(unknown)}")
            both = set(key[0]).intersection(key[1])
            if both:
                raise SchemaError(
                    f"table {self.spec.name!r}: column(s) {sorted(both)} given both per row and as constants"
                )
            self._block_keys.add(key)
        for name, values in columns.items():
            size = len(values) if isinstance(values, Sized) else None
            if size != n:
                got = "no sequence of values" if size is None else f"{size} values"
                raise SchemaError(f"a {self.spec.name!r} row block of {n} rows has {got} in column {name!r}")
        if n <= 0:
            if n < 0:
                raise SchemaError(f"a {self.spec.name!r} row block cannot hold {n} rows")
            return
        if self._tuples:
            self._spill()
        cols, runs, before = self._cols, self._runs, self._in_cols
        for i, name in enumerate(self._names):
            given = columns.get(name)
            if given is not None:
                if runs[i] is not None:
                    self._materialise(i)
                cols[i].extend(given)
                continue
            v = constants.get(name)
            run = runs[i]
            if not before:
                runs[i] = ([v], [n])
            elif run is None:
                cols[i].extend([v] * n)
            else:
                last = run[0][-1]
                if last is v or (type(last) is type(v) and last == v):
                    run[1][-1] += n
                else:
                    run[0].append(v)
                    run[1].append(n)
        self._in_cols += n
        self._buffered += n
        if self._buffered >= FLUSH_ROWS:
            self.flush()

    def _materialise(self, i: int) -> None:
        """Turn column ``i``'s runs of constants into a list of its ``_in_cols`` values."""
        run = self._runs[i]
        assert run is not None
        self._cols[i] = list(chain.from_iterable(map(repeat, *run)))
        self._runs[i] = None

    def _spill(self) -> None:
        """Move the waiting single rows into the column lists, after the rows already there."""
        tuples = self._tuples
        self._check_widths(tuples)
        for i, values in enumerate(zip(*tuples, strict=True)):
            if self._runs[i] is not None:
                self._materialise(i)
            self._cols[i].extend(values)
        self._in_cols += len(tuples)
        self._tuples = []

    def _check_widths(self, tuples: list[tuple[Any, ...]]) -> None:
        width = len(self._names)
        for t in tuples:
            if len(t) != width:
                raise SchemaError(
                    f"a {self.spec.name!r} row tuple has {len(t)} values; the table's row columns are "
                    f"{list(self._names)}"
                )

    @property
    def buffered(self) -> int:
        return self._buffered

    def _batch(self) -> pa.Table:
        n = self._buffered
        if self._in_cols:
            if self._tuples:
                self._spill()
            columns: Sequence[Sequence[Any]] = self._cols
        else:
            self._check_widths(self._tuples)
            columns = list(zip(*self._tuples, strict=True)) or [()] * len(self._names)
        arrays = []
        for name, typ, values, run in zip(self._names, self._types, columns, self._runs, strict=True):
            try:
                if run is None:
                    arrays.append(pa.array(values, type=typ))
                elif len(run[0]) > 1:  # one value per run, repeated by index
                    index = np.repeat(np.arange(len(run[0]), dtype=np.int32), run[1])
                    arrays.append(pa.array(run[0], type=typ).take(pa.array(index)))
                elif run[0][0] is None:
                    arrays.append(pa.nulls(n, typ))
                else:
                    arrays.append(pa.repeat(pa.scalar(run[0][0], type=typ), n))
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError) as exc:
                raise SchemaError(
                    f"rows for table {self.spec.name!r} do not fit its schema: column {name!r}: {exc}"
                ) from exc
        const = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([self.sha256]))
        arrays.append(const.cast(pa.string()))
        return pa.Table.from_arrays(arrays, schema=self.spec.schema)

    def flush(self) -> None:
        if not self._buffered:
            return
        batch = self._batch()
        for col in self.spec.required:
            if batch.column(col).null_count:
                raise SchemaError(f"table {self.spec.name!r}: required column {col!r} has empty values")
        if self.writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.writer = pq.ParquetWriter(self.path, self.spec.schema, compression="zstd")
        self.writer.write_table(batch)
        self.rows_written += batch.num_rows
        self._reset()

    def close(self) -> None:
        self.flush()
        if self.writer is not None:
            self.writer.close()
            with open(self.path, "rb+") as fh:
                os.fsync(fh.fileno())

    def abort(self) -> None:
        self._reset()
        if self.writer is not None:
            with contextlib.suppress(Exception):
                self.writer.close()
        self.path.unlink(missing_ok=True)


@dataclass(frozen=True, slots=True)
class StagedFile:
    """A closed Parquet file in the staging area, waiting for a commit."""

    table: str
    path: Path
    rows: int


@dataclass(slots=True)
class StagedSource:
    """Rows of one source file being written to a staging directory.

    Works inside a :class:`Transaction` (``txn.stage(...)``) or on its own in a
    worker process (``StagedSource(staging_dir, ...)``); in the latter case the
    caller hands :meth:`finish`'s result to :meth:`Transaction.adopt`.
    """

    staging: Path
    path: str
    sha256: str
    bytes: int
    format: str | None
    on_done: Callable[[SourceRecord, tuple[StagedFile, ...]], None] | None = None
    record_tables: tuple[str, ...] = ("events",)
    _writers: dict[str, _TableWriter] = field(default_factory=dict)

    def add(self, table: str, values: dict[str, Any] | tuple[Any, ...]) -> None:
        """Append one row: a dict by column name, or a tuple in the table's ``row_columns`` order."""
        writer = self._writers.get(table) or self._writer(table)
        writer.add(values)

    def add_columns(
        self, table: str, n: int, columns: Mapping[str, Sequence[Any]], constants: Mapping[str, Any]
    ) -> None:
        """Append ``n`` rows given by column, after the rows added before (a reader's ``RowBlock``).

        ``columns`` maps names to sequences of ``n`` values, ``constants`` names to
        one value for all ``n`` rows; columns in neither are NULL.  An unknown
        name or a sequence of another length raises :class:`SchemaError`.
        """
        writer = self._writers.get(table) or self._writer(table)
        writer.add_columns(n, columns, constants)

    def _writer(self, table: str) -> _TableWriter:
        spec = schemas.table(table)
        if table == "sources":
            raise SchemaError("readers do not write the sources table; the store does")
        name = f"{self.sha256[:32]}-{uuid.uuid4().hex[:8]}.parquet"
        writer = self._writers[table] = _TableWriter(spec, self.staging / table / name, self.sha256)
        return writer

    def rows_by_table(self) -> dict[str, int]:
        return {t: w.rows_written + w.buffered for t, w in self._writers.items()}

    def _record(self, status: str, error: str | None, events_read: int, rows: int, quarantined: int) -> SourceRecord:
        return SourceRecord(
            self.path, self.sha256, self.bytes, self.format, status, error, datetime.now(UTC),
            events_read, rows, quarantined, ",".join(self.record_tables),
        )

    def finish(
        self,
        status: str,
        *,
        error: str | None = None,
        events_read: int = 0,
        rows_quarantined: int = 0,
    ) -> tuple[SourceRecord, tuple[StagedFile, ...]]:
        """Close the source's files; they are published by the next commit."""
        for w in self._writers.values():
            w.close()
        files = tuple(StagedFile(t, w.path, w.rows_written) for t, w in self._writers.items() if w.rows_written)
        record = self._record(status, error, events_read, sum(f.rows for f in files), rows_quarantined)
        if self.on_done is not None:
            self.on_done(record, files)
        return record, files

    def discard(
        self,
        status: str,
        error: str,
        *,
        events_read: int = 0,
        rows_quarantined: int = 0,
    ) -> tuple[SourceRecord, tuple[StagedFile, ...]]:
        """Throw away every row of this source; only its ``sources`` row will be committed."""
        for w in self._writers.values():
            w.abort()
        self._writers = {}
        record = self._record(status, error, events_read, 0, rows_quarantined)
        if self.on_done is not None:
            self.on_done(record, ())
        return record, ()


class Transaction:
    """Stages sources; :meth:`commit` makes them visible atomically."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:12]}"
        self.staging = store.root / ".tmp" / self.id
        self.staging.mkdir(parents=True)
        self._marker_fd = os.open(self.staging / ".inuse", os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self._marker_fd, fcntl.LOCK_EX)
        self._done: list[tuple[SourceRecord, tuple[StagedFile, ...]]] = []

    def stage(self, path: str, sha256: str, size: int, fmt: str | None) -> StagedSource:
        return StagedSource(self.staging, path, sha256, size, fmt, self.adopt)

    def adopt(self, record: SourceRecord, files: tuple[StagedFile, ...]) -> None:
        """Queue a finished source (staged in this transaction's directory) for the next commit."""
        self._done.append((record, files))

    @property
    def pending(self) -> int:
        return len(self._done)

    def commit(self) -> Manifest:
        """Publish every finished source; returns the new manifest.

        A source already live at the same path with the same content is dropped
        (idempotence); one whose path is live with other content replaces it.
        Sources are keyed by path: the same bytes under two paths are two
        sources (the pipeline decides what counts as a copy).
        """
        store = self.store
        with store.lock():
            current = store.manifest()
            current_sources = store.sources(current)
            paths = current_sources.column("path").to_pylist()
            sha_of = dict(zip(paths, current_sources.column("sha256").to_pylist(), strict=True))
            status_of = dict(zip(paths, current_sources.column("status").to_pylist(), strict=True))
            segment = f"{current.generation + 1:08d}-{self.id}"
            new_files: list[DataFile] = []
            new_records: dict[str, SourceRecord] = {}
            for record, files in self._done:
                if (
                    record.path not in new_records
                    and sha_of.get(record.path) == record.sha256
                    and status_of.get(record.path) != "quarantined"
                ):
                    continue  # unchanged, or committed meanwhile by another ingest
                if record.path in new_records:  # staged twice in one transaction: the last wins
                    new_files = [f for f in new_files if f.sources != (record.path,)]
                for f in files:
                    rel = f"data/{segment}/{f.table}/{f.path.name}"
                    dest = store.root / rel
                    dest.parent.mkdir(parents=True, exist_ok=True)
                    os.replace(f.path, dest)
                    new_files.append(
                        DataFile(f.table, rel, (record.path,), f.rows, schema_fingerprint(schemas.table(f.table)))
                    )
                new_records[record.path] = record
            self._done = []
            if not new_records:
                return current
            keep = store._without_sources(current.files, set(new_records), sha_of, segment)
            kept_sources = current_sources.filter(
                pc.invert(
                    pc.is_in(
                        current_sources.column("path"),
                        value_set=pa.array(list(new_records), pa.string()),
                    )
                )
            )
            sources_table = pa.concat_tables(
                [
                    kept_sources,
                    pa.Table.from_pylist(
                        [r.as_row() for r in new_records.values()], schema=schemas.SOURCES.schema
                    ),
                ]
            )
            generation = current.generation + 1
            sources_rel = f"meta/sources-{generation:08d}-{self.id}.parquet"
            (store.root / "meta").mkdir(exist_ok=True)
            tmp = store.root / (sources_rel + ".tmp")
            pq.write_table(sources_table, tmp, compression="zstd")
            os.replace(tmp, store.root / sources_rel)
            manifest = Manifest(generation, sources_rel, (*keep, *new_files))
            store._write_manifest(manifest)
            store.collect_garbage(manifest)
            return manifest

    def close(self) -> None:
        """Drop whatever was not committed and release the staging area."""
        self._done = []
        with contextlib.suppress(OSError):
            fcntl.flock(self._marker_fd, fcntl.LOCK_UN)
            os.close(self._marker_fd)
        shutil.rmtree(self.staging, ignore_errors=True)

    def __enter__(self) -> Transaction:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
