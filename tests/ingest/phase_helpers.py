"""Helpers shared by the attempt_phases tests: task-log events and the main lane of spans."""

from __future__ import annotations

import itertools

from ingest.phases.spans import Lane, PhaseSpan
from ingest.tasklog_patterns import TaskEvent
from phaseline.hadoop_names import TaskLogEventKind

TASK = "org.apache.hadoop.mapreduce.TaskCounter"
_line = itertools.count(1)


def ev(
    ts: int,
    kind: TaskLogEventKind,
    thread: str = "main",
    *,
    nbytes: int | None = None,
    records: int | None = None,
    **fields: str,
) -> TaskEvent:
    return TaskEvent(
        next(_line), ts, thread, None, kind, kind.value, tuple(sorted(fields.items())), "", nbytes, records
    )


def main_lane(spans: list[PhaseSpan]) -> list[tuple[str, int, int]]:
    return [(p.phase, p.start_ms, p.end_ms) for p in spans if p.lane is Lane.MAIN]
