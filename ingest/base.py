"""What every reader shares: the row type and the read context (opening files: :mod:`ingest.opening`).

A reader is one module with one entry point, ``read_<format>(path, ctx)``, a
generator of :class:`Row` s (table name + column values, named as in
:mod:`phaseline.schemas`) and, where many rows share most of their values
(the counters of one record), :class:`RowBlock` s: rows given column by
column.  Readers stream: they never hold a whole file.

* A malformed file raises :class:`~phaseline.errors.TraceParseError` naming the
  line or byte offset; the ingest pipeline then quarantines the file (none of
  its rows land).
* A file cut short by a crash raises
  :class:`~phaseline.errors.TraceTruncatedError` *after* yielding every good
  row before the cut; the pipeline lands those rows and records the cut.
* Everything a reader consumed counts in ``ctx.events_read``; records it keeps
  only as raw events (unknown types, unknown log lines) are still rows of the
  ``events`` table, so nothing is dropped silently.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.schemas import table as table_spec

#: The largest single record (line, JSON value, document) a reader accepts.  No real
#: trace comes near; the cap keeps a hostile file (a 1 GB line) from exhausting memory.
MAX_RECORD_CHARS = 64 * 1024 * 1024
#: Unreadable records a reader skips in one file before it gives the whole file up (:func:`skip_record`).
MAX_SKIPPED_RECORDS = 100


class Row(NamedTuple):
    """One row for one table of the store.

    ``values`` is a dict by column name, or (the fast path for big tables) a
    tuple in the table's :attr:`~phaseline.schemas.TableSpec.row_columns` order.
    """

    table: str
    values: dict[str, Any] | tuple[Any, ...]

    def as_dict(self) -> dict[str, Any]:
        """The values by column name, whichever form the reader gave."""
        if isinstance(self.values, dict):
            return self.values
        return dict(zip(table_spec(self.table).row_columns, self.values, strict=True))


@dataclass(frozen=True, slots=True)
class RowBlock:
    """``n`` rows for one table, given column by column (the fast path for many similar rows).

    A reader may yield a block wherever it yields :class:`Row` s; it stands for
    ``n`` rows, in order, and the store appends its columns whole instead of
    receiving one row at a time (e.g. all counters of one JhCounters record).

    Attributes
    ----------
    table
        The table the rows are for.
    n
        How many rows the block holds.
    columns
        Per-row values by column name; each sequence has ``n`` values.
    constants
        Columns whose value is the same in all ``n`` rows, by name.

    Columns named in neither mapping are NULL.  A name that is not a column of
    the table, or a sequence of the wrong length, is a
    :class:`~phaseline.errors.SchemaError` when the block is written or expanded.

    Examples
    --------
    >>> block = RowBlock("counters", 2, {"counter_name": ["A", "B"], "value": [1, 2]},
    ...                  {"job_id": "job_1_1", "scope": "job_total", "group_name": "g"})
    >>> [r.as_dict()["counter_name"] for r in block.rows()]
    ['A', 'B']
    """

    table: str
    n: int
    columns: Mapping[str, Sequence[Any]]
    constants: Mapping[str, Any] = field(default_factory=dict)

    def check(self) -> None:
        """Raise :class:`SchemaError` unless every name is a column and every sequence has ``n`` values."""
        # the store's own checks (imported here: staging pulls in pyarrow.parquet, which
        # readers that only yield blocks never need)
        from phaseline.table_writer import check_block_names, check_block_sizes

        check_block_names(self.table, table_spec(self.table).row_columns, self.columns, self.constants)
        check_block_sizes(self.table, self.n, self.columns)

    def rows(self) -> Iterator[Row]:
        """The block as :class:`Row` s, values as tuples in ``row_columns`` order (checked first)."""
        self.check()
        names = table_spec(self.table).row_columns
        per_column = [
            self.columns[name] if name in self.columns else [self.constants.get(name)] * self.n for name in names
        ]
        for values in zip(*per_column, strict=True):
            yield Row(self.table, values)


def iter_rows(items: Iterable[Row | RowBlock]) -> Iterator[Row]:
    """A reader's output with every :class:`RowBlock` expanded into its rows, in order.

    For callers that look at rows one by one (tests, small readers built on
    other readers); the store takes blocks whole.
    """
    for item in items:
        if isinstance(item, RowBlock):
            yield from item.rows()
        else:
            yield item


def row_count(item: Row | RowBlock) -> int:
    """How many rows one item of a reader's output stands for (``n`` for a block, else 1)."""
    return item.n if isinstance(item, RowBlock) else 1


@dataclass(slots=True)
class ReadContext:
    """Per-file state a reader updates while it streams.

    Attributes
    ----------
    path
        The file being read (as given by the user).
    sha256
        Content hash of the file; the store stamps it on every row.
    events_read
        Records/events/lines of meaning consumed from the file.
    unknown
        Counts of records the reader kept only as raw events, by kind.
    notes
        Non-fatal remarks for the ingest summary (e.g. inflated counters).
    job_id_hint
        A job id known from outside the content (e.g. the file name), for
        formats whose content may lack it.
    """

    path: Path
    sha256: str = ""
    events_read: int = 0
    unknown: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    job_id_hint: str | None = None
    #: Set where a gzip stream opened with this context ended early (:func:`open_binary`):
    #: the reader saw every byte before the cut as the whole file, and the ingest lands
    #: its rows as a partial source with this error.
    cut: TraceTruncatedError | None = None
    #: Records the reader could not read and skipped (a malformed line amid good ones,
    #: :func:`skip_record`): the file lands as partial, its error naming them.
    skipped: list[TraceParseError] = field(default_factory=list)


def skip_record(ctx: ReadContext, error: TraceParseError, *, limit: int = MAX_SKIPPED_RECORDS) -> None:
    """Skip one unreadable record of a file that is otherwise read, or give the file up.

    The record is remembered in ``ctx.skipped`` (the ingest lands the file as
    partial and names it); past ``limit`` such records the file is not a trace of
    its format, or too corrupt to trust, and :class:`TraceParseError` says so,
    naming the first.
    """
    ctx.skipped.append(error)
    if len(ctx.skipped) > limit:
        first = ctx.skipped[0]
        raise TraceParseError(
            error.path,
            f"more than {limit} unreadable records; the first: {first.message}",
            line=first.line,
            offset=first.offset,
            hint="not a trace of this format, or too corrupt to trust",
        )


def skip_or_raise(ctx: ReadContext | None, error: TraceParseError) -> None:
    """:func:`skip_record` where the caller reads on past bad records (it gave a context); else raise ``error``."""
    if ctx is None:
        raise error
    skip_record(ctx, error)


class NotATraceError(TraceParseError):
    """A file a reader took for its format turns out to be no trace at all (a daemon's log with no
    line of a job, task or attempt): the pipeline skips it, ``not a trace: <why>``, landing nothing."""

    def __init__(self, path: str | Path, why: str) -> None:
        super().__init__(path, why, hint="nothing in it is about a MapReduce job; it is skipped, not quarantined")
        self.why = why
