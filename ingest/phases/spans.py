"""The rows of ``attempt_phases`` (:class:`PhaseSpan`), their lanes and names, and the log-line
arithmetic the map and reduce sides share (first event of a kind, a thread, consecutive spans from
start marks, sums of known sizes).  :mod:`ingest.phases` says what the phases are.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ingest.mrcommon import INT64_MAX, INT64_MIN, parse_int64
from ingest.tasklog_patterns import TaskEvent
from phaseline.hadoop_names import (
    FILE_INPUT_FORMAT_COUNTER_GROUP,
    FILE_OUTPUT_FORMAT_COUNTER_GROUP,
    TASK_COUNTER_GROUP,
    TaskLogEventKind,
)
from phaseline.schemas import Phase

COVERAGE_TOLERANCE_MS = 1  # main-lane phases cover [start, finish] of the attempt to this many ms

TASK = TASK_COUNTER_GROUP
FIF = FILE_INPUT_FORMAT_COUNTER_GROUP
FOF = FILE_OUTPUT_FORMAT_COUNTER_GROUP


class Lane(enum.StrEnum):
    """Whether a phase is on the attempt's task thread or concurrent helper-thread work."""

    MAIN = "main"
    BACKGROUND = "background"


class Overhead(enum.StrEnum):
    """Parts of an attempt's span that are no phase of the model, named so nothing is dropped."""

    SETUP = "setup"  # JVM/task start until the first phase marker
    WAIT = "wait"  # reduce: shuffle set up, no map output fetched yet
    COMMIT = "commit"  # 'is done. And is in the process of committing' .. "Task '...' done."
    OTHER = "other"  # after done: counters, metrics shutdown


def combined(*phases: Phase) -> str:
    """Name of a span holding several phases log lines cannot split, e.g. ``read+map+collect``."""
    return "+".join(p.value for p in phases)


READ_MAP_COLLECT = combined(Phase.READ, Phase.MAP, Phase.COLLECT)
READ_MAP_WRITE = combined(Phase.READ, Phase.MAP, Phase.WRITE)
REDUCE_WRITE = combined(Phase.REDUCE, Phase.WRITE)


@dataclass(frozen=True, slots=True)
class PhaseSpan:
    """One row of ``attempt_phases``."""

    phase: str
    lane: Lane
    start_ms: int
    end_ms: int
    dur_ms: int
    data_bytes: int | None = None
    data_records: int | None = None
    dur_us: int | None = None  # where timers measured it (:func:`ingest.phases.splits.split_span`); log lines give whole ms


def first_of(events: Sequence[TaskEvent], kind: TaskLogEventKind) -> TaskEvent | None:
    return next((e for e in events if e.kind is kind), None)


def thread_of(ev: TaskEvent | None) -> tuple[str | None, int | None] | None:
    return None if ev is None else (ev.thread_name, ev.thread_id)


def partition(start: int, finish: int, cuts: Sequence[tuple[str, int | None]]) -> list[tuple[str, int, int]]:
    """Consecutive ``(name, start, end)`` spans from named start marks (``None``: phase absent)."""
    present = [(name, min(max(t, start), finish)) for name, t in cuts if t is not None]
    spans: list[tuple[str, int, int]] = []
    prev = start
    for i, (name, t) in enumerate(present):
        begin = start if i == 0 else max(t, prev)
        end = finish if i + 1 == len(present) else max(min(max(present[i + 1][1], begin), finish), begin)
        spans.append((name, begin, end))
        prev = end
    return spans


def sum_known(values: Sequence[int | None]) -> int | None:
    """The sum of the known values (None: none known, or a sum past 64 bits, which only corrupt sizes give)."""
    present = [v for v in values if v is not None]
    if not present:
        return None
    total = sum(present)
    return total if INT64_MIN <= total <= INT64_MAX else None


def sum_all(values: Sequence[int | None]) -> int | None:
    """The sum of the values when every one is known (None otherwise: a part would be missing)."""
    return None if any(v is None for v in values) else sum_known(values)


def field_int(ev: TaskEvent, key: str) -> int | None:
    """An integer a log line names (``len: 1234``), None when absent or no 64-bit integer."""
    text = ev.field(key)
    return parse_int64(text) if text else None


def usable_counter(counters: Mapping[tuple[str, str], int], group: str, name: str, usable: bool = True) -> int | None:
    return counters.get((group, name)) if usable else None
