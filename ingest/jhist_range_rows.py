"""The rows of a split ``.jhist``'s tasks and attempts: which a range writes, which the merge.

A range (:mod:`ingest.jhist_split`) hands the merge its tasks and attempts by field
(:attr:`~ingest.jhist_split.RangeResult.tasks`, :attr:`~ingest.jhist_split.RangeResult.attempts`) and
writes, at its end, the rows of those finished there (:func:`settled`): a later event seldom takes them
up again.  The merge (:mod:`ingest.jhist_merge`) writes the rows of those still running at their
range's end (a later event mostly takes them up) and of those a later event took up, and drops from a
range's files the rows it replaced (:data:`DROP_KEYS`).  Both write them with :func:`record_blocks`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ingest.base import RowBlock
from ingest.jhist_records import ATTEMPT_COLUMNS, STATE_BLOCK, TASK_COLUMNS, AttemptRecord, TaskRecord

#: What a range hands over of each task: TaskRecord's row fields, whether its counters were written, and
#: whether its held counters were (at the range's end).
TASK_FIELDS = (*TaskRecord.__slots__[:8], "counters_emitted", "held_written")
#: The rows a range writes at its end that the merge may leave out, by table: the column naming the
#: task or attempt a later event changed (:attr:`ingest.jhist_merge.MergeOutcome.drops`).
DROP_KEYS = {"counters": "task_id", "tasks": "task_id", "attempts": "attempt_id"}
_FIELDS = {"tasks": {name: i for i, name in enumerate(TASK_FIELDS)},
           "attempts": {name: i for i, name in enumerate(AttemptRecord.__slots__)}}  # fmt: skip
_NAMES = {"tasks": TASK_COLUMNS, "attempts": ATTEMPT_COLUMNS}


def settled(table: str, columns: list[list[Any]]) -> list[bool]:
    """Which of a range's tasks or attempts (by field) are finished at its end: the range writes their rows,
    the merge those of the others and of those a later event took up."""
    return [status is not None for status in columns[_FIELDS[table]["status"]]]


def select(columns: list[list[Any]], keep: list[bool]) -> list[list[Any]]:
    """The records of ``columns`` (by field) that ``keep`` keeps."""
    if all(keep):
        return columns
    rows = [i for i, k in enumerate(keep) if k]
    return [[c[i] for i in rows] for c in columns]


def record_blocks(table: str, columns: list[list[Any]], job_id: str | None) -> Iterator[RowBlock]:
    """The ``tasks`` or ``attempts`` rows of a range's records by field, as
    :meth:`~ingest.jhist_state.HistoryState.rows` writes them: an attempt's host is its completion's, else
    its start's tracker."""
    field_of, names = _FIELDS[table], _NAMES[table]
    if table == "attempts":
        host, tracker = field_of["host"], field_of["tracker_host"]
        columns = list(columns)
        columns[host] = [t if h is None else h for h, t in zip(columns[host], columns[tracker], strict=True)]
    for at in range(0, len(columns[0]), STATE_BLOCK):
        part = {name: columns[field_of[name]][at : at + STATE_BLOCK] for name in names}
        yield RowBlock(table, len(part[names[0]]), part, {"job_id": job_id})
