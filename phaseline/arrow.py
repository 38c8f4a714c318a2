"""Arrow arrays from Python values, built from buffers until ``pa.array`` is worth its start-up.

``pa.array`` asks pandas whether each input is one of its objects, and so
imports pandas the first time it runs: about 0.2 s, which every ingest
process (the CLI and each worker) paid before writing its first row, though
nothing on that path uses pandas.  :func:`column` builds the columns the
store writes (strings, 64-bit integers, doubles, booleans, millisecond UTC
timestamps) from their buffers with numpy instead, which gives the same
array but costs about 0.1-0.2 us more per value than ``pa.array`` once pandas
is loaded.  So it does that only for the first :data:`BUFFER_BUDGET` values
a process converts (about what the import costs), then hands everything to
``pa.array`` (the rent-or-buy rule: never more than twice the cheaper of the
two): a small ingest never imports pandas, a large one pays the import once.
Any other type, and any value of an unexpected type, goes to ``pa.array``,
which converts it (or raises) exactly as before.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["BUFFER_BUDGET", "column", "expect", "from_buffers", "indices", "repeat", "table_from_rows"]

#: Values a process converts from buffers before :func:`column` uses ``pa.array`` (see above).
BUFFER_BUDGET = 1_000_000
_spent = [0]
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_MAX_OFFSET = 2**31 - 1  # ``string`` offsets are int32


class _Unfit(Exception):
    """The values are not plainly of the column's type: ``pa.array`` decides."""


def column(values: Sequence[Any], typ: pa.DataType) -> pa.Array:
    """``pa.array(values, type=typ)``: from buffers while the process's budget lasts (module docstring).

    >>> column([1, None, -3], pa.int64()).null_count
    1
    """
    n = len(values)
    if _spent[0] + n > BUFFER_BUDGET or "pandas" in sys.modules:
        _spent[0] = BUFFER_BUDGET
        return pa.array(values, type=typ)
    _spent[0] += n
    return from_buffers(values, typ)


def expect(values: int) -> None:
    """Say that about ``values`` more values are coming: past the budget, ``pa.array`` starts now.

    A caller that knows its volume ahead (the ingest of a large file) so pays
    the import once instead of the buffers' extra cost first.
    """
    if _spent[0] + values > BUFFER_BUDGET:
        _spent[0] = BUFFER_BUDGET


def from_buffers(values: Sequence[Any], typ: pa.DataType) -> pa.Array:
    """``pa.array(values, type=typ)`` built from numpy buffers (``pa.array`` itself for other types).

    >>> from_buffers(["a", None, "bc"], pa.string()).to_pylist()
    ['a', None, 'bc']
    """
    n = len(values)
    try:
        if typ == pa.string():
            return _strings(values, n)
        if typ == pa.int64():
            return _fixed(values, n, typ, np.int64, _is_int)
        if typ == pa.float64():
            return _fixed(values, n, typ, np.float64, _is_real)
        if typ == pa.bool_():
            return _booleans(values, n)
        if typ == pa.timestamp("ms", tz="UTC"):
            return _fixed([_ms(v) for v in values], n, typ, np.int64, _is_int)
    except _Unfit:
        pass
    return pa.array(values, type=typ)


def indices(positions: np.ndarray[Any, Any]) -> pa.Array:
    """An ``int32`` or ``int64`` array of ``positions`` (a numpy array), for ``take``."""
    dtype = np.int32 if positions.dtype == np.int32 else np.int64
    data = np.ascontiguousarray(positions, dtype=dtype)
    return pa.Array.from_buffers(pa.from_numpy_dtype(dtype), len(data), [None, pa.py_buffer(data)])


def repeat(value: Any, n: int, typ: pa.DataType) -> pa.Array:
    """``n`` copies of ``value`` (``pa.repeat`` of a scalar made without ``pa.scalar``)."""
    return column([value], typ).take(indices(np.zeros(n, dtype=np.int32)))


def table_from_rows(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """``pa.Table.from_pylist(rows, schema=schema)`` by :func:`column` (absent keys are NULL)."""
    return pa.Table.from_arrays(
        [column([r.get(f.name) for r in rows], f.type) for f in schema], schema=schema
    )


def _is_int(v: Any) -> bool:
    return type(v) is int


def _is_real(v: Any) -> bool:
    # pa.array refuses integers a double cannot hold exactly
    return type(v) is float or (type(v) is int and -(2**53) <= v <= 2**53)


def _validity(values: Sequence[Any], n: int) -> tuple[pa.Buffer | None, int]:
    """The validity bitmap (``None`` when no value is missing) and the null count."""
    if None not in values:
        return None, 0
    missing = np.fromiter((v is None for v in values), dtype=np.bool_, count=n)
    return pa.py_buffer(np.packbits(~missing, bitorder="little")), int(missing.sum())


def _strings(values: Sequence[Any], n: int) -> pa.Array:
    try:
        encoded = [b"" if v is None else v.encode() for v in values]
        data = b"".join(encoded)
    except (AttributeError, TypeError, UnicodeError):
        raise _Unfit from None
    if len(data) > _MAX_OFFSET:
        raise _Unfit
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.fromiter(map(len, encoded), dtype=np.int32, count=n), out=offsets[1:])
    validity, nulls = _validity(values, n)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data), validity, nulls)


def _fixed(values: Sequence[Any], n: int, typ: pa.DataType, dtype: Any, accepts: Any) -> pa.Array:
    if not all(v is None or accepts(v) for v in values):
        raise _Unfit
    filled = values if None not in values else [0 if v is None else v for v in values]
    try:
        data = np.fromiter(filled, dtype=dtype, count=n)
    except OverflowError:
        raise _Unfit from None
    validity, nulls = _validity(values, n)
    return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(data)], null_count=nulls)


def _booleans(values: Sequence[Any], n: int) -> pa.Array:
    if not all(v is None or type(v) is bool for v in values):
        raise _Unfit
    bits = np.packbits(np.fromiter((v is True for v in values), dtype=np.bool_, count=n), bitorder="little")
    validity, nulls = _validity(values, n)
    return pa.Array.from_buffers(pa.bool_(), n, [validity, pa.py_buffer(bits)], null_count=nulls)


def _ms(v: Any) -> int | None:
    """Milliseconds since the epoch of a timezone-aware datetime, rounded down as ``pa.array`` does."""
    if v is None:
        return None
    if type(v) is not datetime or v.tzinfo is None:
        raise _Unfit
    return (v - _EPOCH) // _MS
