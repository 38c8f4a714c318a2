"""Golden tests for profiles/sql/job_list.sql and job_names.sql (what `phaseline jobs` and `fit` read).

Three jobs: one whose history is whole, one whose history was cut before its end (no finish),
and one known only from task logs (no history file at all).
"""

from __future__ import annotations

import duckdb
import pyarrow as pa

from profiles import queries as q
from tests.profiles.profiles_doubles import make_con

WHOLE, CUT, LOGS_ONLY = "job_1_0001", "job_1_0002", "job_1_0003"
JOBS = [
    {"job_id": WHOLE, "name": "wordcount", "status": "SUCCEEDED", "submit_ms": 1_000, "launch_ms": 1_500,
     "finish_ms": 4_500, "total_maps": 2, "total_reduces": 1, "source_format": "jhist"},
    {"job_id": CUT, "name": "wordcount", "status": None, "submit_ms": None, "launch_ms": 2_000,
     "finish_ms": None, "total_maps": 4, "total_reduces": 1, "source_format": "jhist"},
]
ATTEMPTS = [
    {"job_id": LOGS_ONLY, "task_id": "task_1_0003_m_000000", "attempt_id": "attempt_1_0003_m_000000_0",
     "source_sha256": "b"},
    {"job_id": LOGS_ONLY, "task_id": "task_1_0003_m_000001", "attempt_id": "attempt_1_0003_m_000001_0",
     "source_sha256": "a"},
]


def con_with_sources() -> duckdb.DuckDBPyConnection:
    con = make_con({"jobs": JOBS, "attempts": ATTEMPTS})
    con.register("sources", pa.table({"sha256": ["a", "b"], "format": ["yarn_logs", "tasklog"]}))
    return con


def test_job_list_gives_each_job_once_with_its_duration() -> None:
    rel = q.job_list(con_with_sources())
    rows = [dict(zip(rel.columns, r, strict=True)) for r in rel.fetchall()]
    assert [r["job_id"] for r in rows] == [WHOLE, CUT, LOGS_ONLY]  # by submit time, unknown last
    assert rows[0]["duration_s"] == 3.5  # finish - submit
    assert rows[1]["duration_s"] is None  # a cut history has no finish: no duration, not the span so far
    assert rows[2]["source_format"] == "tasklog,yarn_logs"  # known from attempts: their files' formats
    assert rows[2]["name"] is None


def test_job_names_counts_jobs_per_name() -> None:
    assert q.job_name_counts(con_with_sources()) == {"wordcount": 2}


def test_row_helpers() -> None:
    con = con_with_sources()
    assert q.table_rows(con, "attempts") == 2
    assert q.job_has_rows(con, "attempts", LOGS_ONLY)
    assert not q.job_has_rows(con, "attempts", WHOLE)
