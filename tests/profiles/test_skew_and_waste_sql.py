"""Golden tests of where a job's time went: shuffle gap, host and data skew, stragglers, waste, the summary."""

from __future__ import annotations

import duckdb
import pandas as pd
import pytest

from profiles import queries as q
from tests.profiles.profiles_doubles import (
    JOB,
    _a,
    _t,
    attempt,
    make_con,
    rows,
)

# -- shuffle gap, skew, stragglers, data skew, waste -----------------------------------------


def test_shuffle_gap(con: duckdb.DuckDBPyConnection) -> None:
    assert rows(
        q.shuffle_gap(con, JOB), "last_map_finish_ms", "last_shuffle_end_ms", "gap_ms", "job_span_ms"
    ) == [(70, 80, 10, 120)]
    assert q.shuffle_gap(con, JOB)["gap_share"].iloc[0] == pytest.approx(10 / 120)


def test_skew_hosts_normalized(con: duckdb.DuckDBPyConnection) -> None:
    df = q.skew_hosts(con, JOB)
    whole = df[(df.task_type == "MAP") & (df.phase == "attempt")]
    # successful map attempts: h1 20 ms, h2 30 ms, h3 20 ms; mean 70/3
    assert list(whole["host"]) == ["h2", "h1", "h3"]
    assert list(whole["normalized_dur"]) == pytest.approx([30 * 3 / 70, 20 * 3 / 70, 20 * 3 / 70])
    assert whole["slower_pct"].iloc[0] == pytest.approx((90 / 70 - 1) * 100)
    assert set(df["phase"]) == {"attempt", "map", "spill+merge", "shuffle", "sort", "reduce+write"}


def test_stragglers_against_phase_medians(con: duckdb.DuckDBPyConnection) -> None:
    df = q.stragglers(con, JOB, k=1.5)
    assert rows(df, "attempt_id", "phase", "status", "dur_ms", "median_ms") == [
        (_a("m_000002", 0), "map", "KILLED", 55, 15.0),
        (_a("m_000002", 0), "attempt", "KILLED", 60, 20.0),
        (_a("m_000001", 1), "map", "SUCCEEDED", 25, 15.0),
        (_a("m_000001", 0), "attempt", "FAILED", 30, 20.0),
        (_a("m_000001", 1), "attempt", "SUCCEEDED", 30, 20.0),
    ]
    assert list(df["ratio"]) == pytest.approx([55 / 15, 3.0, 25 / 15, 1.5, 1.5])
    assert q.stragglers(con, JOB, k=4).empty


def test_data_skew(con: duckdb.DuckDBPyConnection) -> None:
    df = q.data_skew(con, JOB)
    assert rows(df, "task_id", "attempt_id", "input_bytes", "input_records") == [
        (_t("m_000002"), _a("m_000002", 1), 3000, 300),
        (_t("m_000001"), _a("m_000001", 1), 2000, 200),
        (_t("m_000000"), _a("m_000000", 0), 1000, 100),
        (_t("r_000000"), _a("r_000000", 0), 3000, 300),
    ]
    assert list(df["input_bytes_ratio"]) == pytest.approx([1.5, 1.0, 0.5, 1.0])


def test_wasted_failed_then_succeeded_and_killed(con: duckdb.DuckDBPyConnection) -> None:
    assert rows(q.wasted(con, JOB), "attempt_id", "status", "wasted_ms", "speculative", "task_succeeded") == [
        (_a("m_000001", 0), "FAILED", 30, False, True),
        (_a("m_000002", 0), "KILLED", 60, False, True),
    ]
    summary = q.wasted_summary(con, JOB)
    assert rows(summary, "task_type", "status", "attempts", "wasted_ms", "attempt_ms") == [
        ("MAP", "FAILED", 1, 30, 160),
        ("MAP", "KILLED", 1, 60, 160),
    ]
    assert list(summary["wasted_share"]) == pytest.approx([30 / 160, 60 / 160])


def test_job_summary(con: duckdb.DuckDBPyConnection) -> None:
    assert rows(
        q.job_summary(con, JOB),
        "name",
        "user",
        "makespan_ms",
        "maps",
        "reduces",
        "attempts",
        "failed_attempts",
        "killed_attempts",
    ) == [("wordcount", "alice", 120, 3, 1, 6, 1, 1)]


def test_job_summary_task_span_is_aria_completion_time() -> None:
    """task_span_ms: first successful map/reduce start to last successful finish; a failed attempt
    that started first, a killed one that ran last and a cleanup attempt stay outside it.

        m0 FAILED     |==|                       (5 .. 15)
        m0 SUCCEEDED       |=====|               (20 .. 50)
        r0 SUCCEEDED          |==========|       (40 .. 100)
        r0 KILLED               |=============|  (45 .. 130)
        cleanup                             |=|  (100 .. 120)
    """
    cleanup = {**attempt("c_000000", 0, "SUCCEEDED", 100, 120, "h1"), "task_type": "CLEANUP"}
    con = make_con(
        {
            "attempts": [
                attempt("m_000000", 0, "FAILED", 5, 15, "h1"),
                attempt("m_000000", 1, "SUCCEEDED", 20, 50, "h1"),
                attempt("r_000000", 0, "SUCCEEDED", 40, 100, "h2"),
                attempt("r_000000", 1, "KILLED", 45, 130, "h3"),
                cleanup,
            ],
            "jobs": [{"job_id": JOB, "submit_ms": 0, "finish_ms": 140, "total_maps": 1, "total_reduces": 1}],
        }
    )
    assert rows(q.job_summary(con, JOB), "makespan_ms", "task_span_ms") == [(140, 80)]
    only_failed = make_con({"attempts": [attempt("m_000000", 0, "FAILED", 5, 15, "h1")], "jobs": []})
    assert pd.isna(q.job_summary(only_failed, JOB).iloc[0]["task_span_ms"])
