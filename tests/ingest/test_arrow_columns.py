"""phaseline.arrow builds the same arrays as pa.array (and defers to it for anything else)."""

from __future__ import annotations

import math
import subprocess
import sys
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phaseline.arrow import column, indices

TYPES = {
    "string": (pa.string(), st.text()),
    "int64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "float64": (pa.float64(), st.floats(allow_nan=True) | st.integers(-(2**53), 2**53)),
    "bool": (pa.bool_(), st.booleans()),
    "timestamp": (
        pa.timestamp("ms", tz="UTC"),
        st.integers(-(10**15), 4_102_444_800_000_000).map(
            lambda us: datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=us)
        ),  # sub-millisecond parts, before and after the epoch
    ),
    "list<string>": (pa.list_(pa.string()), st.lists(st.none() | st.text(), max_size=5)),
}


def _same(a: pa.Array, b: pa.Array) -> None:
    assert a.type == b.type
    assert a.null_count == b.null_count
    left, right = a.to_pylist(), b.to_pylist()
    assert len(left) == len(right)
    for x, y in zip(left, right, strict=True):
        if isinstance(x, float) and math.isnan(x):
            assert isinstance(y, float)
            assert math.isnan(y)
        else:
            assert x == y


@pytest.mark.parametrize("name", sorted(TYPES))
@settings(max_examples=150, deadline=None)
@given(data=st.data())
def test_column_equals_pa_array(name: str, data: st.DataObject) -> None:
    typ, values = TYPES[name]
    got = data.draw(st.lists(st.none() | values, max_size=40))
    _same(column(got, typ), pa.array(got, type=typ))


@pytest.mark.parametrize(
    ("values", "typ"),
    [
        (["a", 1], pa.string()),  # not a string: pa.array decides (and refuses)
        ([1, "2"], pa.int64()),
        ([2**64], pa.int64()),
        ([2**53 + 1], pa.float64()),
        ([1.5], pa.int64()),
        ([True], pa.int64()),
        (["\ud800"], pa.string()),  # a lone surrogate cannot be UTF-8
        ([b"ok", b"\xff"], pa.string()),  # text given as bytes that are not UTF-8
        ([b"bytes", "str", None], pa.string()),  # bytes beside strings and nulls
    ],
)
def test_values_of_another_type_meet_pa_arrays_own_verdict(values: list[Any], typ: pa.DataType) -> None:
    try:
        expected: pa.Array | type[Exception] = pa.array(values, type=typ)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError, TypeError, UnicodeError) as exc:
        expected = type(exc)
    if isinstance(expected, pa.Array):
        _same(column(values, typ), expected)
    else:
        with pytest.raises(expected):
            column(values, typ)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(st.characters(exclude_categories=("Cs",)))))
def test_text_given_as_utf8_bytes_is_the_same_column(values: list[str]) -> None:
    """Utf8Text's way in: the lines' bytes joined as they are give the strings' own column."""
    _same(column([v.encode() for v in values], pa.string()), pa.array(values, type=pa.string()))


def test_other_zones_and_naive_timestamps_as_pa_array_reads_them() -> None:
    typ = pa.timestamp("ms", tz="UTC")
    odd = [datetime(2026, 1, 1, 0, 0, 0, 1500, tzinfo=timezone(timedelta(hours=2))), datetime(2026, 1, 1)]
    for v in odd:
        try:
            expected = pa.array([v], type=typ)
        except (pa.ArrowInvalid, ValueError):
            continue
        _same(column([v], typ), expected)


def test_indices_for_take() -> None:
    arr = column(["x", "y", "z"], pa.string())
    assert arr.take(indices(np.array([2, 0, 2], dtype=np.int32))).to_pylist() == ["z", "x", "z"]
    assert arr.take(indices(np.array([1], dtype=np.int64))).to_pylist() == ["y"]


@pytest.mark.parametrize(
    "values",
    [
        ["plain", None, "ascii", ""],
        ["h\u00f4te", None, "\u6771\u4eac", "x"],  # not ASCII: characters are not bytes
        [None, None],
        [],
    ],
)
def test_strings_ascii_or_not_as_pa_array(values: list[Any]) -> None:
    _same(column(values, pa.string()), pa.array(values, type=pa.string()))


def test_building_the_stores_columns_does_not_import_pandas() -> None:
    code = (
        "import sys, pyarrow as pa\n"
        "from datetime import datetime, UTC\n"
        "from phaseline.arrow import column\n"
        "column(['a', None], pa.string()); column([1, None], pa.int64()); column([1.5], pa.float64())\n"
        "column([True, None], pa.bool_()); column([datetime(2026, 1, 1, tzinfo=UTC)], pa.timestamp('ms', tz='UTC'))\n"
        "column([['job_1', 'job_2'], None, []], pa.list_(pa.string()))\n"  # sources.job_ids, stacks.frames
        "column(['attempt_%d' % i for i in range(2_000_000)], pa.string())\n"  # large too (no switch to pa.array)
        "column(list(range(2_000_000)), pa.int64())\n"
        "print('pandas' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "False"


def test_an_ingest_does_not_import_pandas(fixtures_dir: Path, tmp_path: Path) -> None:
    # the whole path, sources row included: pandas costs every ingest process ~0.2 s and ~47 MB
    jhist = fixtures_dir / "apache-hadoop/mapreduce-client-jobclient/job_1329348432655_0001-10.jhist"
    code = (
        "import sys\n"
        "from ingest.pipeline import ingest_paths\n"
        "from phaseline.store import Store\n"
        f"ingest_paths([{str(jhist)!r}], Store({str(tmp_path / 'store')!r}))\n"
        "print('pandas' in sys.modules, 'duckdb' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout
    assert out.strip() == "False False"
