"""The fields of HiTune's report CSVs: cleaned (:func:`clean`: quotes and Hadoop 1.x escapes),
read as numbers, times, hosts and job ids, and a file's data lines turned into rows
(:func:`data_rows`, a malformed line kept as such).  :mod:`ingest.hitune_csv` has the format.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from ingest.base import ReadContext, Row
from ingest.mrcommon import int64
from ingest.opening import iter_lines
from ingest.samples_hitune import malformed_row

SOURCE = "hitune_csv"
_ESCAPE = re.compile(r"\\(.)")


def clean(value: str) -> str:
    """Strip spaces and surrounding quotes and undo Hadoop 1.x escapes.

    >>> clean(' "main"')
    'main'
    >>> clean('org.apache.hadoop.mapred.ReduceTask\\\\$ReduceCopier')
    'org.apache.hadoop.mapred.ReduceTask$ReduceCopier'
    """
    text = value.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    return _ESCAPE.sub(r"\1", text)


RowsOf = Callable[[int, str, list[str]], Iterator[Row]]  # (line number, line, cleaned fields) -> rows


def field_int(text: str) -> int | None:
    """An integer field (empty: None); ``ValueError`` for one that is no integer or past 64 bits."""
    t = clean(text)
    return int64(int(t), repr(t[:40])) if t else None


def required_int(text: str) -> int:
    """A field that must hold an integer that fits 64 bits (``ValueError`` otherwise)."""
    return int64(int(text), repr(text[:40]))


def time_or_none(text: str) -> int | None:
    """A record's time for its event row, or None when it is none (empty, not digits, past 64 bits)."""
    try:
        return field_int(text)
    except ValueError:
        return None


def float_field(text: str) -> float | None:
    """A metric field's number, or None for a field that holds none (empty, text); ``ValueError``
    for one that is not finite (``nan``, ``inf``, ``1e999``): no measurement, so a corrupt row."""
    t = clean(text)
    try:
        number = float(t) if t else None
    except ValueError:
        return None
    if number is not None and not math.isfinite(number):
        raise ValueError(f"{t[:40]!r} is not a finite number")
    return number


def host_of_tracker(tracker: str) -> str | None:
    # tracker_sr216:localhost.localdomain/127.0.0.1:43445 -> sr216
    name = clean(tracker)
    return name.removeprefix("tracker_").split(":")[0] or None


def data_rows(path: Path, ctx: ReadContext, header: list[str], rows_of: RowsOf) -> Iterator[Row]:
    """The rows ``rows_of`` makes of each data line's cleaned fields (lines after the header).

    A line with another number of fields than the header is kept as ``malformed``.
    """
    for line_no, line in iter_lines(path, ctx):
        if line_no == 1 or not line.strip():
            continue
        ctx.events_read += 1
        f = line.split(",")
        if len(f) != len(header):
            yield malformed_row(ctx, line_no, f"expected {len(header)} fields, found {len(f)}", line)
            continue
        yield from rows_of(line_no, line, [clean(x) for x in f])


def job_of(attempt_or_task: str) -> str | None:
    parts = attempt_or_task.split("_")
    return f"job_{parts[1]}_{parts[2]}" if len(parts) >= 3 else None


def required_job_of(attempt_or_task: str) -> str:
    """The job of an attempt or task row; ``ValueError`` for an id that names none (the row needs one)."""
    job_id = job_of(attempt_or_task)
    if job_id is None:
        raise ValueError(f"id {attempt_or_task[:60]!r} names no job")
    return job_id
