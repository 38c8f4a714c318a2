"""Rows of two engines compared (tests/phaseline/test_spark_engine.py): a table's rows in one order,
and two such lists alike but for floats summed in another order."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime
from typing import Any

import pyarrow as pa

#: Relative tolerance of a float compared across engines (sums in another order).
FLOAT_REL = 1e-9


def _comparable(value: Any) -> Any:
    if isinstance(value, float):
        return ("float", value)  # compared with a tolerance by _same_rows
    if isinstance(value, datetime):
        return value.timestamp()
    if isinstance(value, list | tuple):
        return tuple(_comparable(v) for v in value)
    return value


def _sort_key(row: Sequence[Any]) -> tuple[Any, ...]:
    return tuple((v is None, repr(v)) for v in row)


def sorted_rows(table: pa.Table, drop: set[str] = frozenset()) -> list[tuple[Any, ...]]:  # type: ignore[assignment]
    """The table's rows (without the ``drop`` columns) in one order, floats marked for a tolerant compare."""
    names = [n for n in table.column_names if n not in drop]
    columns = [table.column(n).to_pylist() for n in names]
    rows = [tuple(_comparable(v) for v in r) for r in zip(*columns, strict=True)] if columns else []
    return sorted(rows, key=_sort_key)


def _same_value(a: Any, b: Any) -> bool:
    if (
        isinstance(a, tuple)
        and len(a) == 2
        and a[:1] == ("float",)
        and isinstance(b, tuple)
        and b[:1] == ("float",)
    ):
        x, y = a[1], b[1]
        return (math.isnan(x) and math.isnan(y)) or math.isclose(x, y, rel_tol=FLOAT_REL, abs_tol=1e-9)
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(_same_value(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def assert_same_rows(left: list[tuple[Any, ...]], right: list[tuple[Any, ...]], what: str) -> None:
    """Both engines' sorted rows (:func:`sorted_rows`) alike, floats within :data:`FLOAT_REL`."""
    assert len(left) == len(right), f"{what}: {len(left)} rows locally, {len(right)} on Spark"
    for i, (a, b) in enumerate(zip(left, right, strict=True)):
        assert _same_value(a, b), f"{what}: sorted row {i} differs:\n  local {a}\n  spark {b}"
