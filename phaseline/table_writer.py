"""One table's rows of one source, buffered and written to a staged Parquet file in row groups
(:class:`TableWriter`), a large file's by this process's background writer thread; and the checks
of a row block's columns.  :class:`phaseline.staging.StagedSource` keeps one per table.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
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
from phaseline.utf8_text import Utf8Text

#: Rows buffered per table before they are written as one Parquet row group (at most:
#: a table's ``TableSpec.flush_rows`` may be lower).
FLUSH_ROWS = 32_768


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


class TableWriter:
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
        holds nothing else since the last flush (then it is converted by index); one given as
        :class:`~phaseline.utf8_text.Utf8Text` is kept as its bytes.
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
                cols[i].extend(given.pieces if type(given) is Utf8Text else given)  # (bytes: column() joins them)
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
            run = self._runs[self._names.index("job_id")]
            if run is not None:  # a block's constant: its few values, not the column's
                self.job_ids.update(mend_text(v) for v in run[0] if v is not None)
            else:
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
        # Not fsynced here: the commit makes every staged file durable before its manifest can
        # name them, with one filesystem sync when there are many (one fsync per staged file
        # cost about half of a small file's ingest), phaseline.store.files.make_durable.
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


def _text_safe(values: Sequence[Any], typ: pa.DataType) -> pa.Array:
    """``column(values, typ)``; text with UTF-16 surrogates (a JSON ``\\ud83d\\ude00`` escape read
    as two characters, or a lone half) is mended first, which UTF-8 cannot hold: a pair becomes its
    character, a lone half U+FFFD."""
    try:
        return column(values, typ)
    except UnicodeEncodeError:
        return column([mend_text(v) for v in values], typ)


def mend_text(value: Any) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, list | tuple):
        return [mend_text(v) for v in value]
    if isinstance(value, dict):
        return {k: mend_text(v) for k, v in value.items()}
    return value
