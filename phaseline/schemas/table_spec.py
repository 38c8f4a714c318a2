"""A table's declaration (:class:`TableSpec`) and the catalogue of every table (:data:`TABLES`,
:func:`register`, :func:`table`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from phaseline.errors import SchemaError

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class TableSpec:
    """A table's name, schema, and the columns every row must have.

    ``flush_rows`` caps the rows the store buffers for the table before it writes
    them as one Parquet row group: tables whose rows carry whole trace records
    set it lower, so the buffer stays a few MB however large the file.
    ``plain`` names columns of long, all-distinct values (whole trace records):
    they are written without a Parquet dictionary, which would be built for
    every row group and then dropped (half the write time of ``events``).
    ``unit`` names the columns (``job_id`` first) that say what a row is an
    account of: one job, task, attempt, counter set or conf key.  Two sources
    may describe the same unit (a 0.20 history log and Rumen's parse of it; a
    truncated and a complete copy of one ``.jhist``): the views then keep one source's
    rows per unit (:meth:`phaseline.store.Store.connect`).  Tables without a
    unit (``events``, samples) keep every row of every source.
    """

    name: str
    schema: pa.Schema
    required: tuple[str, ...]
    doc: str
    flush_rows: int = 32_768
    plain: tuple[str, ...] = ()
    unit: tuple[str, ...] = ()

    def parquet_options(self) -> dict[str, Any]:
        """Keyword arguments for ``pq.write_table`` / ``pq.ParquetWriter`` of this table's files.

        >>> table("events").parquet_options()["use_dictionary"]
        ['job_id', 'seq', 'event_type', 'ts_ms', 'source_sha256']
        """
        # page CRCs: `phaseline verify` decodes every page and so finds a byte damaged since
        options: dict[str, Any] = {"compression": "zstd", "write_page_checksum": True}
        if self.plain:
            options["use_dictionary"] = [n for n in self.schema.names if n not in self.plain]
        return options

    @property
    def columns(self) -> tuple[str, ...]:
        return tuple(self.schema.names)

    @property
    def row_columns(self) -> tuple[str, ...]:
        """The columns a reader fills, in order (all but ``source_sha256``, which the store adds).

        A reader may give a row as a tuple in this order instead of a dict (the
        fast path for tables with millions of rows, such as ``counters``).
        """
        return tuple(n for n in self.schema.names if n != "source_sha256")


def _s(*fields: tuple[str, pa.DataType]) -> pa.Schema:
    return pa.schema([pa.field(n, t) for n, t in fields] + [pa.field("source_sha256", pa.string())])


I64 = pa.int64()
STR = pa.string()
F64 = pa.float64()

TABLES: dict[str, TableSpec] = {}


def register(spec: TableSpec) -> TableSpec:
    """Add a table to the store's catalogue (stages call this for their own tables)."""
    if spec.name in TABLES and TABLES[spec.name] != spec:
        raise SchemaError(f"table {spec.name!r} declared twice with different schemas")
    if "source_sha256" not in spec.schema.names:
        raise SchemaError(f"table {spec.name!r} lacks the source_sha256 column")
    TABLES[spec.name] = spec
    return spec


def table(name: str) -> TableSpec:
    """The spec of a table, or a :class:`SchemaError` naming the known ones."""
    try:
        return TABLES[name]
    except KeyError:
        raise SchemaError(f"unknown table {name!r}; known: {', '.join(sorted(TABLES))}") from None
