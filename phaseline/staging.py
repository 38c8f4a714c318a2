"""Staging: the rows of one source file written to Parquet before a commit publishes them.

A :class:`StagedSource` takes a reader's rows (dicts, tuples in the table's
``row_columns`` order, or whole column blocks) table by table; each table's
rows go to one Parquet file in a staging directory, written in batches of
:data:`~phaseline.table_writer.FLUSH_ROWS`.  :meth:`StagedSource.finish` closes the files and gives the
source's :class:`SourceRecord` (its ``sources`` row) and :class:`StagedFile` s,
which :class:`phaseline.store.Transaction` adopts and commits.  Worker
processes stage on their own (nothing here takes the store's lock).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa

from phaseline import schemas
from phaseline.errors import SchemaError
from phaseline.table_writer import TableWriter, mend_text

__all__ = ["SourceRecord", "StagedFile", "StagedSource"]

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
            **{f.name: getattr(self, f.name) for f in fields(self)},  # (asdict's deep copy: 40 us a file)
            "error": mend_text(self.error),  # an OS error may quote a file name that is not UTF-8
            "source_sha256": self.sha256,
        }


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
    _writers: dict[str, TableWriter] = field(default_factory=dict)

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

    def _writer(self, table: str) -> TableWriter:
        spec = schemas.table(table)
        if table == "sources":
            raise SchemaError("readers do not write the sources table; the store does")
        name = f"{self.sha256[:32]}-{uuid.uuid4().hex[:8]}.parquet"
        writer = self._writers[table] = TableWriter(spec, self.staging / table / name, self.sha256)
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
