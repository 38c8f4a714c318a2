"""Arrow arrays from Python values, built from numpy buffers, so that ingest never imports pandas.

``pa.array`` asks pandas whether each input is one of its objects, and so
imports pandas the first time it runs: about 0.2 s and 47 MB of resident
memory, which every ingest process (the CLI and each worker) paid though
nothing on that path uses pandas.  :func:`column` builds the columns the
store writes (strings, 64-bit integers, doubles, booleans, millisecond UTC
timestamps, lists of strings) from their buffers with numpy instead and gives the same array.
The common cases are bulk operations: a string column of ASCII text is one
``str.join`` and one ``encode`` (about 70-90 ns a value, against 50-170 for
``pa.array``), an integer column one type check and one ``np.array`` (about
55 ns, against 30).  Any other type, and any value of an unexpected type,
goes to ``pa.array``, which converts it (or raises) exactly as before.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from itertools import repeat as repeat_each
from typing import Any

import numpy as np
import pyarrow as pa

__all__ = ["column", "indices", "repeat", "table_from_rows"]

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)
_MAX_OFFSET = 2**31 - 1  # ``string`` offsets are int32
_INT = frozenset((int,))
_INT_OR_NONE = frozenset((int, type(None)))
_STRING_LIST = pa.list_(pa.string())
_LIST_OR_NONE = frozenset((list, tuple, type(None)))


class _Unfit(Exception):
    """The values are not plainly of the column's type: ``pa.array`` decides."""


def column(values: Sequence[Any], typ: pa.DataType) -> pa.Array:
    """``pa.array(values, type=typ)`` built from numpy buffers (``pa.array`` itself for other types).

    >>> column(["a", None, "bc"], pa.string()).to_pylist()
    ['a', None, 'bc']
    """
    n = len(values)
    try:
        if typ == pa.string():
            return _strings(values, n)
        if typ == pa.int64():
            return _ints(values, n, typ)
        if typ == pa.float64():
            return _fixed(values, n, typ, np.float64, _is_real)
        if typ == pa.bool_():
            return _booleans(values, n)
        if typ == pa.timestamp("ms", tz="UTC"):
            return _ints([_ms(v) for v in values], n, typ)
        if typ == _STRING_LIST:
            return _string_lists(values, n)
    except _Unfit:
        pass
    return pa.array(values, type=typ)


def indices(positions: np.ndarray[Any, Any]) -> pa.Array:
    """An ``int32`` or ``int64`` array of ``positions`` (a numpy array), for ``take``."""
    dtype = np.int32 if positions.dtype == np.int32 else np.int64
    data = np.ascontiguousarray(positions, dtype=dtype)
    return pa.Array.from_buffers(pa.from_numpy_dtype(dtype), len(data), [None, pa.py_buffer(data)])


def repeat(value: Any, n: int, typ: pa.DataType) -> pa.Array:
    """``n`` copies of ``value`` (``pa.repeat`` of a scalar made without ``pa.scalar``).

    >>> repeat("ab", 3, pa.string()).to_pylist()
    ['ab', 'ab', 'ab']
    """
    if typ == pa.string() and type(value) is str and value.isascii() and n * len(value) <= _MAX_OFFSET:
        # (a source's sha256 on each of its rows: its bytes n times and even offsets, ~3x faster than take)
        data = value.encode()
        offsets = np.arange(n + 1, dtype=np.int32) * np.int32(len(data))
        return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data * n))
    return column([value], typ).take(indices(np.zeros(n, dtype=np.int32)))


def table_from_rows(rows: Sequence[Mapping[str, Any]], schema: pa.Schema) -> pa.Table:
    """``pa.Table.from_pylist(rows, schema=schema)`` by :func:`column` (absent keys are NULL)."""
    return pa.Table.from_arrays(
        [column([r.get(f.name) for r in rows], f.type) for f in schema], schema=schema
    )


def _is_real(v: Any) -> bool:
    # pa.array refuses integers a double cannot hold exactly
    return type(v) is float or (type(v) is int and -(2**53) <= v <= 2**53)


def _validity(values: Sequence[Any], n: int) -> tuple[pa.Buffer | None, int]:
    """The validity bitmap (``None`` when no value is missing) and the null count."""
    if None not in values:
        return None, 0
    missing = np.fromiter(map(operator.is_, values, repeat_each(None)), dtype=np.bool_, count=n)
    return pa.py_buffer(np.packbits(~missing, bitorder="little")), int(missing.sum())


def _string_lists(values: Sequence[Any], n: int) -> pa.Array:
    """A ``list<string>`` column: the lists' strings as one string column, and their offsets.

    >>> column([["a", "b"], None, []], pa.list_(pa.string())).to_pylist()
    [['a', 'b'], None, []]
    """
    if not {type(v) for v in values} <= _LIST_OR_NONE:
        raise _Unfit
    validity, nulls = _validity(values, n)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum([0 if v is None else len(v) for v in values], out=offsets[1:])
    flat = [s for v in values if v is not None for s in v]
    inner = _strings(flat, len(flat))
    return pa.Array.from_buffers(
        _STRING_LIST, n, [validity, pa.py_buffer(offsets)], null_count=nulls, children=[inner]
    )


def _strings(values: Sequence[Any], n: int) -> pa.Array:
    if n and type(values[0]) is bytes:
        return _utf8(values, n)
    try:
        text = "".join(values)  # fails on a None (or a non-string), which the slower path sorts out
        validity: pa.Buffer | None = None
        nulls = 0
        filled = values
    except TypeError:
        validity, nulls = _validity(values, n)
        filled = ["" if v is None else v for v in values]
        try:
            text = "".join(filled)
        except TypeError:
            raise _Unfit from None
    if text.isascii():
        # One character is one byte: the offsets are the characters' running count.
        data = text.encode()
        lengths = np.fromiter(map(len, filled), dtype=np.int64, count=n)
    else:
        try:
            encoded = [v.encode() for v in filled]
        except UnicodeError:
            raise _Unfit from None
        data = b"".join(encoded)
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=n)
    if len(data) > _MAX_OFFSET:
        raise _Unfit
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(lengths, out=offsets[1:], dtype=np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data), validity, nulls)


def _utf8(values: Sequence[Any], n: int) -> pa.Array:
    """A string column of text given as UTF-8 bytes (:class:`~phaseline.utf8_text.Utf8Text`), joined as it
    is; Arrow checks that it is UTF-8 (else ``pa.array`` names the value that is not).

    >>> column([b"caf\\xc3\\xa9", b""], pa.string()).to_pylist()
    ['café', '']
    """
    try:
        data = b"".join(values)  # fails on a None or a str, which pa.array sorts out
    except TypeError:
        raise _Unfit from None
    if len(data) > _MAX_OFFSET:
        raise _Unfit
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(np.fromiter(map(len, values), dtype=np.int64, count=n), out=offsets[1:], dtype=np.int32)
    array = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        array.validate(full=True)
    except pa.ArrowInvalid:
        raise _Unfit from None
    return array


def _ints(values: Sequence[Any], n: int, typ: pa.DataType) -> pa.Array:
    """A 64-bit column (``int64``, or millisecond timestamps as :func:`_ms` gives them) of plain
    ``int`` values (``bool`` is not one, as for ``pa.array``) and ``None``."""
    types = set(map(type, values))
    if types <= _INT:
        validity, nulls, filled = None, 0, values
    elif types <= _INT_OR_NONE:
        validity, nulls = _validity(values, n)
        filled = [0 if v is None else v for v in values]
    else:
        raise _Unfit
    try:
        data = np.array(filled, dtype=np.int64)
    except OverflowError:
        raise _Unfit from None
    return pa.Array.from_buffers(typ, n, [validity, pa.py_buffer(data)], null_count=nulls)


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
