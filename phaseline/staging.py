"""Staging: the rows of one source file written to Parquet before a commit publishes them.

A :class:`StagedSource` takes a reader's rows (dicts, tuples in the table's
``row_columns`` order, or whole column blocks) table by table; each table's
rows go to one Parquet file in a staging directory, written in batches of
:data:`FLUSH_ROWS`.  :meth:`StagedSource.finish` closes the files and gives the
source's :class:`SourceRecord` (its ``sources`` row) and :class:`StagedFile` s,
which :class:`phaseline.store.Transaction` adopts and commits.  Worker
processes stage on their own (nothing here takes the store's lock).
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import chain, repeat
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from phaseline import schemas
from phaseline.arrow import column, indices
from phaseline.arrow import repeat as repeat_value
from phaseline.errors import SchemaError
from phaseline.runs import Runs

__all__ = ["FLUSH_ROWS", "SourceRecord", "StagedFile", "StagedSource", "check_block_names", "check_block_sizes"]

#: Rows buffered per table before they are written as one Parquet row group (at most:
#: a table's ``TableSpec.flush_rows`` may be lower).
FLUSH_ROWS = 32_768


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
    job_ids: tuple[str, ...] = ()

    def as_row(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "sha256": self.sha256,
            "bytes": self.bytes,
            "format": self.format,
            "status": self.status,
            "error": _mend(self.error),  # an OS error may quote a file name that is not UTF-8
            "ingested_at": self.ingested_at,
            "events_read": self.events_read,
            "rows_written": self.rows_written,
            "rows_quarantined": self.rows_quarantined,
            "record_tables": self.record_tables,
            "source_sha256": self.sha256,
            "job_ids": list(self.job_ids),
        }


def check_block_names(
    table: str, row_columns: Sequence[str], per_row: Iterable[str], constant: Iterable[str]
) -> None:
    """Raise :class:`SchemaError` unless a block's column names are columns of ``table``, each given once."""
    per_row, constant = tuple(per_row), tuple(constant)
    unknown = [name for name in (*per_row, *constant) if name not in row_columns]
    if unknown:
        raise SchemaError(f"table {table!r} has no column(s) {sorted(unknown)}")
    both = set(per_row).intersection(constant)
    if both:
        raise SchemaError(f"table {table!r}: column(s) {sorted(both)} given both per row and as constants")


def check_block_sizes(table: str, n: int, columns: Mapping[str, Any]) -> None:
    """Raise :class:`SchemaError` unless every per-row column of a block of ``n`` rows has ``n`` values."""
    for name, values in columns.items():
        try:
            size: int | None = len(values)
        except TypeError:  # not a sequence at all
            size = None
        if size != n:
            got = "no sequence of values" if size is None else f"{size} values"
            raise SchemaError(f"a {table!r} row block of {n} rows has {got} in column {name!r}")


_BACKGROUND: tuple[int, ThreadPoolExecutor] | None = None


def _background() -> ThreadPoolExecutor:
    """This process's one Parquet writer thread (made on first use; a forked worker makes its own).

    Encoding and compressing a row group release the GIL, so a large file's
    row groups are written while its reader goes on (a 50 MB ``.jhist``
    ingest: 2.58 -> 2.35 s, measured side by side).
    """
    global _BACKGROUND
    pid = os.getpid()
    if _BACKGROUND is None or _BACKGROUND[0] != pid:
        _BACKGROUND = (pid, ThreadPoolExecutor(1, thread_name_prefix="phaseline-parquet"))
    return _BACKGROUND[1]


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
        "_limit",
        "_names",
        "_pending",
        "_runs",
        "_tuples",
        "_types",
        "job_ids",
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
        self._limit = min(FLUSH_ROWS, spec.flush_rows)
        self.rows_written = 0
        self.job_ids: set[str] = set()  # of the rows checked so far, when the table has a unit
        self._pending: Future[None] | None = None  # this writer's row group being written in the background
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
        if self._buffered >= self._limit:
            self.flush()

    def add_columns(self, n: int, columns: Mapping[str, Sequence[Any]], constants: Mapping[str, Any]) -> None:
        """Append ``n`` rows given by column (``constants``: one value for all ``n``; others NULL).

        A column given as :class:`~phaseline.runs.Runs` stays runs while the column
        holds nothing else since the last flush (then it is converted by index).
        """
        key = (tuple(columns), tuple(constants))
        if key not in self._block_keys:
            check_block_names(self.spec.name, self._names, key[0], key[1])
            self._block_keys.add(key)
        check_block_sizes(self.spec.name, n, columns)
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
                run = runs[i]
                if type(given) is Runs and (run is not None or not before):
                    # runs stay runs (converted by index in _batch)
                    if run is None:
                        runs[i] = (list(given.values), list(given.counts))
                    else:
                        run[0].extend(given.values)
                        run[1].extend(given.counts)
                    continue
                if run is not None:
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
        if self._buffered >= self._limit:
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
                    arrays.append(_text_safe(values, typ))
                elif len(run[0]) == 1 and run[0][0] is None:
                    arrays.append(pa.nulls(n, typ))
                else:  # one value per run, repeated by index
                    index = np.repeat(np.arange(len(run[0]), dtype=np.int32), run[1])
                    arrays.append(_text_safe(run[0], typ).take(indices(index)))
            except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, UnicodeError) as exc:
                raise SchemaError(
                    f"rows for table {self.spec.name!r} do not fit its schema: column {name!r}: {exc}"
                ) from exc
        arrays.append(repeat_value(self.sha256, n, pa.string()))
        return pa.Table.from_arrays(arrays, schema=self.spec.schema)

    def checked_batch(self) -> pa.Table:
        """The buffered rows as one Arrow table, checked (required columns filled); the buffer is emptied."""
        batch = self._batch()
        for col in self.spec.required:
            if batch.column(col).null_count:
                raise SchemaError(f"table {self.spec.name!r}: required column {col!r} has empty values")
        if self.spec.unit:
            self.job_ids.update(pc.unique(batch.column("job_id")).drop_null().to_pylist())
        self._reset()
        return batch

    def flush(self, *, behind: bool = True) -> None:
        """Write the buffered rows as one row group.

        With ``behind`` (a flush because the buffer filled, mid-file) the write
        runs on the background writer thread while the reader goes on; this
        writer's previous write is waited for first, so its row groups keep
        their order and at most one batch per table is in flight.  An error of a
        background write is raised here, at the next flush or at :meth:`close`.
        """
        self._wait()
        if not self._buffered:
            return
        batch = self.checked_batch()
        if self.writer is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.writer = pq.ParquetWriter(self.path, self.spec.schema, **self.spec.parquet_options())
        self.rows_written += batch.num_rows
        if behind:
            self._pending = _background().submit(self.writer.write_table, batch)
        else:
            self.writer.write_table(batch)

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def close(self) -> None:
        # Not fsynced here: the commit makes every staged file durable with one
        # filesystem sync before its manifest can name them (one fsync per staged
        # file cost about half of a small file's ingest).
        self.flush(behind=False)
        if self.writer is not None:
            self.writer.close()

    def abort(self) -> None:
        self._reset()
        with contextlib.suppress(Exception):
            self._wait()
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

    def take_tables(
        self, status: str, *, error: str | None = None, events_read: int = 0
    ) -> tuple[SourceRecord, dict[str, pa.Table]] | None:
        """Finish the source by handing its rows over, one Arrow table per table, instead of writing them.

        Returns its ``sources`` row (as :meth:`finish` would give it) and the
        tables; ``None`` (and nothing taken) once some rows were written to this
        source's own files (a source too large to buffer whole).  The tables are
        checked as a flush checks them (:class:`SchemaError` otherwise).
        """
        if any(w.writer is not None for w in self._writers.values()):
            return None
        tables = {name: w.checked_batch() for name, w in self._writers.items() if w.buffered}
        rows = sum(t.num_rows for t in tables.values())
        return self._record(status, error, events_read, rows, 0), tables

    def rows_by_table(self) -> dict[str, int]:
        return {t: w.rows_written + w.buffered for t, w in self._writers.items()}

    def _record(self, status: str, error: str | None, events_read: int, rows: int, quarantined: int) -> SourceRecord:
        job_ids = tuple(sorted(set().union(*(w.job_ids for w in self._writers.values())))) if rows else ()
        return SourceRecord(
            self.path, self.sha256, self.bytes, self.format, status, error, datetime.now(UTC),
            events_read, rows, quarantined, ",".join(self.record_tables), job_ids,
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


def _text_safe(values: Sequence[Any], typ: pa.DataType) -> pa.Array:
    """``column(values, typ)``; text with UTF-16 surrogates (a JSON ``\\ud83d\\ude00`` escape read
    as two characters, or a lone half) is mended first, which UTF-8 cannot hold: a pair becomes its
    character, a lone half U+FFFD."""
    try:
        return column(values, typ)
    except UnicodeEncodeError:
        return column([_mend(v) for v in values], typ)


def _mend(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list | tuple):
        return [_mend(v) for v in value]
    if isinstance(value, dict):
        return {k: _mend(v) for k, v in value.items()}
    return value
