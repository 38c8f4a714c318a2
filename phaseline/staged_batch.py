"""Many small sources staged together: one Parquet file per table for a whole batch.

A Parquet file costs about a millisecond to write however few rows it holds, and
a small history file has rows in five tables.  Staged one file per (source,
table), a 33 kB ``.jhist`` spent ~6 ms in Parquet overhead (more than reading
it took), its commit moved five files, and the store later had to read them all
back to compact them.  A :class:`StagedBatch` gathers the rows of the sources
one process reads one after another and writes each table's rows once, as a
multi-source file like those :meth:`phaseline.store.Store.compact` writes (rows
told apart by ``source_sha256``, so no two sources of one file share a hash).

A source joins the batch only after it has finished without error: its rows are
taken whole, as Arrow tables, from its :class:`~phaseline.staging.StagedSource`,
so a file that fails half-way adds nothing.  The batch is adopted by a
transaction as one :class:`StagedGroup`, and each of its sources lands whole or
not at all.  A source that already streamed rows to its own files (too large to
hold in memory) or whose hash is already in the batch keeps its own files and
travels in the same group.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from phaseline import schemas
from phaseline.staging import SourceRecord, StagedFile, StagedSource

__all__ = ["BATCH_BYTES", "StagedBatch", "StagedGroup"]

#: Arrow bytes a batch holds before it writes them out as one file per table.
BATCH_BYTES = 64 << 20


@dataclass(frozen=True, slots=True)
class StagedGroup:
    """Finished sources a transaction adopts together.

    ``files`` pairs each staged file with the keys (``sources.path``) of the
    sources whose rows it holds; a source's rows may be spread over several files.
    """

    records: tuple[SourceRecord, ...]
    files: tuple[tuple[StagedFile, tuple[str, ...]], ...]

    @classmethod
    def single(cls, record: SourceRecord, files: tuple[StagedFile, ...]) -> StagedGroup:
        """One source and its own files."""
        return cls((record,), tuple((f, (record.path,)) for f in files))


class StagedBatch:
    """Rows of many finished sources, written as one Parquet file per table into ``staging``.

    Parameters
    ----------
    staging
        The transaction's staging directory (workers write there too).
    max_bytes
        Arrow bytes held before the rows so far are written out (a batch then
        has several files per table).
    """

    def __init__(self, staging: Path, *, max_bytes: int = BATCH_BYTES) -> None:
        self.staging = staging
        self.max_bytes = max_bytes
        self._records: list[SourceRecord] = []
        self._own: list[tuple[StagedFile, tuple[str, ...]]] = []
        self._written: list[tuple[StagedFile, tuple[str, ...]]] = []
        self._tables: dict[str, list[tuple[str, pa.Table]]] = {}
        self._shas: set[str] = set()
        self._bytes = 0

    def take(
        self, staged: StagedSource, status: str, *, error: str | None = None, events_read: int = 0
    ) -> SourceRecord | None:
        """Move a finished source's rows into the batch and return its ``sources`` row.

        ``None`` when the source cannot join (rows already streamed to its own
        files, or its hash is in the batch already): finish it on its own and
        :meth:`add` the outcome.  Raises :class:`SchemaError` (and takes nothing)
        when its rows do not fit their tables.
        """
        if staged.sha256 in self._shas:
            return None
        taken = staged.take_tables(status, error=error, events_read=events_read)
        if taken is None:
            return None
        record, tables = taken
        for name, table in tables.items():
            self._tables.setdefault(name, []).append((staged.path, table))
            self._bytes += table.nbytes
        if tables:
            self._shas.add(staged.sha256)
        self._records.append(record)
        if self._bytes >= self.max_bytes:
            self._write()
        return record

    def add(self, record: SourceRecord, files: tuple[StagedFile, ...]) -> None:
        """Add a source finished on its own (its own files, or none)."""
        self._records.append(record)
        self._own.extend((f, (record.path,)) for f in files)

    def __len__(self) -> int:
        return len(self._records)

    def _write(self) -> None:
        for name, parts in self._tables.items():
            table = pa.concat_tables([t for _, t in parts])
            path = self.staging / name / f"batch-{uuid.uuid4().hex[:16]}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            # Not fsynced: the commit syncs the filesystem once before its manifest names the file.
            pq.write_table(table, path, **schemas.table(name).parquet_options())
            self._written.append((StagedFile(name, path, table.num_rows), tuple(key for key, _ in parts)))
        self._tables = {}
        self._shas = set()
        self._bytes = 0

    def close(self) -> StagedGroup:
        """Write what is held and hand everything over for :meth:`Transaction.adopt_group`."""
        self._write()
        group = StagedGroup(tuple(self._records), (*self._own, *self._written))
        self._records, self._own, self._written = [], [], []
        return group
