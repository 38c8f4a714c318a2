"""Checks shared by the reader tests: read a file, pick a table, check rows, fuzz real bytes.

Every reader is called the way the pipeline calls it, ``reader(path, ReadContext(path))``;
:func:`mutations` is the hypothesis strategy the property tests draw damaged copies
of real traces from (the module-scoped ``fuzz_dir`` fixture in ``conftest.py`` is
where they are written).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from ingest.base import ReadContext, Row, RowBlock, iter_rows
from ingest.formats import Format, Reader
from phaseline.errors import PhaselineError, TraceParseError
from phaseline.schemas import TABLES


def rows_of(reader: Reader, path: Path, hint: str | None = None) -> list[Row]:
    """All rows ``reader`` yields for ``path`` (row blocks expanded), with an optional job id hint."""
    return list(iter_rows(reader(path, ReadContext(path, job_id_hint=hint))))


def table(rows: Sequence[Row | RowBlock], name: str) -> list[dict[str, Any]]:
    """The values (by column name) of the rows bound for table ``name``, in order (blocks expanded)."""
    return [r.as_dict() for r in iter_rows(rows) if r.table == name]


def check_row(row: Row) -> None:
    """A row names a declared table, only its columns, and fills the required ones."""
    spec = TABLES[row.table]
    values = row.as_dict()
    assert set(values) <= set(spec.columns), set(values) - set(spec.columns)
    for col in spec.required:
        assert values.get(col) is not None, (row.table, col)


def parse_error(reader: Reader, path: Path, line: int, what: str = "") -> TraceParseError:
    """The TraceParseError reading ``path`` raises, which must name the file, ``line`` and contain ``what``."""
    with pytest.raises(TraceParseError) as info:
        rows_of(reader, path)
    assert info.value.path == str(path)
    assert info.value.line == line
    assert what in str(info.value)
    return info.value


def read_reconciled(fmt: Format, path: Path) -> tuple[list[Row], ReadContext]:
    """Read a whole file with ``fmt``'s reader, checking every row, and reconcile its counts.

    Every record the reader counted in ``ctx.events_read`` must be kept once in the
    format's record tables.  Returns the rows and the context.
    """
    ctx = ReadContext(path)
    rows = list(iter_rows(fmt.read(path, ctx)))
    for row in rows:
        check_row(row)
    assert sum(r.table in fmt.record_tables for r in rows) == ctx.events_read, path
    return rows, ctx


def read_checked(reader: Reader, path: Path) -> PhaselineError | None:
    """Read a whole file, checking every row; the PhaselineError it raised, if any."""
    try:
        for row in iter_rows(reader(path, ReadContext(path))):
            check_row(row)
    except PhaselineError as exc:
        return exc
    return None


def mutations(data: bytes) -> st.SearchStrategy[bytes]:
    """Truncations, byte flips, shuffled lines and garbage appended to real bytes."""

    def flip(edits: list[tuple[int, int]]) -> bytes:
        out = bytearray(data)
        for pos, value in edits:
            out[pos % len(out)] = value
        return bytes(out)

    def shuffle(seed: int) -> bytes:
        lines = data.split(b"\n")
        random.Random(seed).shuffle(lines)
        return b"\n".join(lines)

    return st.one_of(
        st.integers(0, len(data)).map(lambda n: data[:n]),
        st.lists(st.tuples(st.integers(0, len(data)), st.integers(0, 255)), min_size=1, max_size=8).map(flip),
        st.integers(0, 2**32).map(shuffle),
        st.binary(min_size=1, max_size=300).map(lambda g: data + g),
    )
