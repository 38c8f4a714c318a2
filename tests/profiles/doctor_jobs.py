"""One tiny inline job for the doctor's heuristics (tests/profiles/test_doctor_sql.py and
test_doctor_scans.py): its maps and reduces (a start, a finish and counters each), its configuration
and its task-log spill events, as store tables in an in-memory DuckDB."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import duckdb

from profiles.doctor import DoctorConfig, Heuristic, heuristic_rows, install
from tests.profiles.profiles_doubles import make_con as tables_con

JOB = "job_1_0001"
MIN = 60_000  # ms
MB = 1_000_000
MiB = 2**20
TC = "org.apache.hadoop.mapreduce.TaskCounter"
FIC = "org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter"


@dataclass
class Task:
    """One task with one successful attempt (unless ``status`` says otherwise) and its counters."""

    start: int
    finish: int
    counters: Mapping[str, int] = field(default_factory=dict)
    status: str = "SUCCEEDED"
    shuffle_finish: int | None = None
    sort_finish: int | None = None
    error: str | None = None
    spills: int = 0  # task-log spill_finish events


def make_con(
    maps: Iterable[Task] = (),
    reduces: Iterable[Task] = (),
    conf: Mapping[str, str] | None = None,
    status: str = "SUCCEEDED",
    finish: int | None = None,
) -> duckdb.DuckDBPyConnection:
    tables: dict[str, list[dict[str, Any]]] = {
        "attempts": [],
        "counters": [],
        "attempt_events": [],
        "conf": [],
    }
    last = 0
    for kind, tasks in (("m", maps), ("r", reduces)):
        for i, t in enumerate(tasks):
            task_id, attempt_id = f"task_1_0001_{kind}_{i:06d}", f"attempt_1_0001_{kind}_{i:06d}_0"
            last = max(last, t.finish)
            tables["attempts"].append({
                "job_id": JOB, "task_id": task_id, "attempt_id": attempt_id,
                "task_type": "MAP" if kind == "m" else "REDUCE", "status": t.status,
                "start_ms": t.start, "finish_ms": t.finish, "host": f"h{i % 3}",
                "shuffle_finish_ms": t.shuffle_finish, "sort_finish_ms": t.sort_finish, "error": t.error,
            })  # fmt: skip
            for name, value in t.counters.items():
                group = FIC if name == "BYTES_READ" else TC
                tables["counters"].append({
                    "job_id": JOB, "task_id": task_id, "attempt_id": attempt_id, "scope": "attempt",
                    "group_name": group, "counter_name": name, "value": value,
                })  # fmt: skip
            for n in range(t.spills):
                tables["attempt_events"].append(
                    {"job_id": JOB, "attempt_id": attempt_id, "ts_ms": t.start + n, "kind": "spill_finish"}
                )
    tables["jobs"] = [{"job_id": JOB, "name": "case", "status": status, "submit_ms": 0, "launch_ms": 0,
                       "finish_ms": last if finish is None else finish}]  # fmt: skip
    tables["conf"] = [{"job_id": JOB, "key": k, "value": v} for k, v in (conf or {}).items()]
    return tables_con(tables)


CONFIG = DoctorConfig.default()


def grade(con: duckdb.DuckDBPyConnection, heuristic: Heuristic) -> dict[str, Any]:
    install(con, heuristic)
    (row,) = heuristic_rows(con, heuristic, JOB, CONFIG)
    return row


def maps_of(n: int, minutes: float, **counters: int) -> list[Task]:
    return [Task(0, int(minutes * MIN), dict(counters)) for _ in range(n)]
