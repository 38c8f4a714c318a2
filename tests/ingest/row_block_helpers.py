"""Rows shared by the row-block tests: counters as rows and as blocks, mixed as a reader may."""

from __future__ import annotations

from ingest.base import Row, RowBlock
from phaseline.runs import Runs

JOB = "job_1_0001"


def _block(
    task: str | None, attempt: str | None, scope: str, counters: list[tuple[str, str, int]]
) -> RowBlock:
    return RowBlock(
        "counters",
        len(counters),
        {
            "group_name": [g for g, _, _ in counters],
            "counter_name": [c for _, c, _ in counters],
            "value": [v for _, _, v in counters],
        },
        {"job_id": JOB, "task_id": task, "attempt_id": attempt, "scope": scope},
    )


#: Rows for one table as a reader may mix them: tuples, dicts and blocks with runs of constants.
MIXED: list[Row | RowBlock] = [
    Row("counters", (JOB, None, None, "job_total", "g", "A", 1)),
    _block("task_1", None, "task", [("g", "A", 2), ("g", "B", 3)]),
    _block("task_1", "attempt_1", "attempt", [("g", "A", 4)]),
    Row("counters", {"job_id": JOB, "scope": "job_map", "group_name": "h", "counter_name": "C", "value": 5}),
    _block("task_2", "attempt_2", "attempt", [("g", "A", 6), ("h", "C", -7), ("h", "D", 2**63 - 1)]),
    _block("task_2", "attempt_2", "attempt", []),
    _block("task_2", "attempt_3", "attempt", [("g", "A", 8)]),
    Row("counters", (JOB, "task_3", None, "task", "g", "A", 9)),
    # as the .jhist reader gathers records: scope, task, attempt and group names as runs
    RowBlock(
        "counters",
        4,
        {
            "scope": Runs(["task", "attempt"], [1, 3]),
            "task_id": Runs(["task_4", "task_4"], [1, 3]),
            "attempt_id": Runs([None, "attempt_4"], [1, 3]),
            "group_name": Runs(["g", "h", "g"], [2, 0, 2]),
            "counter_name": ["A", "B", "A", "B"],
            "value": [10, 11, 12, 13],
        },
        {"job_id": JOB},
    ),
    RowBlock(
        "counters",
        2,
        {
            "scope": Runs(["task"], [2]),
            "task_id": Runs(["task_5"], [2]),
            "attempt_id": Runs([None], [2]),
            "group_name": ["h", "g"],
            "counter_name": ["C", "A"],
            "value": [14, 15],
        },
        {"job_id": JOB},
    ),
]
