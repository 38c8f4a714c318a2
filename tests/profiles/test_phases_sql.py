"""Golden tests of the phases concepts: history boundaries, task-log phases first, edge cases, an invariant."""

from __future__ import annotations

from typing import Any

import duckdb
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from profiles import queries as q
from tests.profiles.profiles_doubles import (
    ATTEMPTS,
    COUNTERS,
    FSC,
    JOB,
    JOBS,
    _a,
    attempt,
    counter,
    make_con,
    rows,
)

# -- phases ---------------------------------------------------------------------------------


def test_phases_history_boundaries_and_data(con: duckdb.DuckDBPyConnection) -> None:
    df = q.phases_history(con, JOB).sort_values(["attempt_id", "seq"])
    assert rows(df, "attempt_id", "phase", "start_ms", "end_ms", "dur_ms", "data_bytes", "data_records") == [
        (_a("m_000000", 0), "map", 0, 15, 15, 1000, 100),
        (_a("m_000000", 0), "spill+merge", 15, 20, 5, 1200, 100),
        # failed without a map_finish: one combined row spanning the attempt
        (_a("m_000001", 0), "map+spill+merge", 0, 30, 30, None, None),
        (_a("m_000001", 1), "map", 30, 55, 25, 2000, 200),  # task-scope counters go to the success
        (_a("m_000001", 1), "spill+merge", 55, 60, 5, None, None),
        (_a("m_000002", 0), "map", 20, 75, 55, None, None),  # killed: no counters
        (_a("m_000002", 0), "spill+merge", 75, 80, 5, None, None),
        (_a("m_000002", 1), "map", 50, 65, 15, 3000, 300),  # attempt scope beats task scope (9999)
        (_a("m_000002", 1), "spill+merge", 65, 70, 5, None, None),
        (_a("r_000000", 0), "shuffle", 25, 80, 55, 3000, None),
        (_a("r_000000", 0), "sort", 80, 90, 10, 3000, 300),
        (_a("r_000000", 0), "reduce+write", 90, 110, 20, 900, 300),
    ]
    assert set(df["source"]) == {"history"}


def test_phases_prefers_task_logs(con: duckdb.DuckDBPyConnection) -> None:
    r0 = _a("r_000000", 0)
    log_phases = [
        {
            "job_id": JOB,
            "attempt_id": r0,
            "task_type": "REDUCE",
            "phase": p,
            "start_ms": s,
            "end_ms": e,
            "dur_ms": e - s,
            "data_bytes": b,
            "data_records": None,
        }
        for p, s, e, b in [
            ("shuffle", 26, 80, 3000),
            ("sort", 80, 89, 3000),
            ("reduce", 89, 100, None),
            ("write", 100, 109, 900),
        ]
    ]
    con = make_con({"attempts": ATTEMPTS, "counters": COUNTERS, "jobs": JOBS, "attempt_phases": log_phases})
    df = q.phases(con, JOB)
    r = df[df.attempt_id == r0]
    assert rows(r, "phase", "seq", "start_ms", "end_ms", "source", "host") == [
        ("shuffle", 1, 26, 80, "tasklog", "h3"),
        ("sort", 2, 80, 89, "tasklog", "h3"),
        ("reduce", 3, 89, 100, "tasklog", "h3"),
        ("write", 4, 100, 109, "tasklog", "h3"),
    ]
    assert set(df[df.attempt_id != r0]["source"]) == {"history"}
    assert len(df[df.attempt_id != r0]) == 9


def test_task_log_phases_are_not_repeated_when_the_history_was_stored_twice() -> None:
    # The attempts stored from two files (a .jhist and its REST JSON): each log phase still once.
    r0 = _a("r_000000", 0)
    log = [{"job_id": JOB, "attempt_id": r0, "task_type": "REDUCE", "phase": p, "start_ms": s, "end_ms": e}
           for p, s, e in [("shuffle", 26, 80), ("sort", 80, 89), ("reduce", 89, 109)]]  # fmt: skip
    con = make_con({"attempts": ATTEMPTS + ATTEMPTS, "jobs": JOBS, "attempt_phases": log})
    r = q.phases(con, JOB).query("attempt_id == @r0")
    assert rows(r, "phase", "seq", "source", "host", "status") == [
        ("shuffle", 1, "tasklog", "h3", "SUCCEEDED"),
        ("sort", 2, "tasklog", "h3", "SUCCEEDED"),
        ("reduce", 3, "tasklog", "h3", "SUCCEEDED"),
    ]


def test_log_phases_without_a_job_id_take_their_attempts_job() -> None:
    # No reader writes them (a task log's attempt id names its job), but the schema allows them: such
    # phases are the job's whose attempt has that id, as those with a job id are, with the same columns.
    r0 = _a("r_000000", 0)
    log = [{"job_id": job, "attempt_id": r0, "task_type": None, "phase": p, "start_ms": s, "end_ms": e}
           for job in (JOB, None) for p, s, e in [("shuffle", 26, 80), ("reduce", 80, 109)]]  # fmt: skip
    with_job = q.phases(make_con({"attempts": ATTEMPTS, "jobs": JOBS, "attempt_phases": log[:2]}), JOB)
    without = q.phases(make_con({"attempts": ATTEMPTS, "jobs": JOBS, "attempt_phases": log[2:]}), JOB)
    columns = ("job_id", "task_id", "task_type", "status", "host", "phase", "seq", "source")
    assert rows(without.query("attempt_id == @r0"), *columns) == rows(
        with_job.query("attempt_id == @r0"), *columns
    )
    assert rows(without.query("attempt_id == @r0"), "phase", "seq", "task_type", "host") == [
        ("shuffle", 1, "REDUCE", "h3"),
        ("reduce", 2, "REDUCE", "h3"),
    ]


def test_map_only_single_task_job() -> None:
    """Edge cases 'one task' and 'map-only': the tail of a map is its output write."""
    con = make_con(
        {
            "attempts": [attempt("m_000000", 0, "SUCCEEDED", 1000, 2000, "h1", map_finish_ms=1800)],
            "jobs": [
                {"job_id": JOB, "submit_ms": 900, "finish_ms": 2100, "total_maps": 1, "total_reduces": 0}
            ],
            "counters": [counter("task", "HDFS_BYTES_WRITTEN", 77, task="m_000000", group=FSC)],
        }
    )
    assert rows(q.phases(con, JOB), "phase", "start_ms", "end_ms", "data_bytes") == [
        ("map", 1000, 1800, None),
        ("write", 1800, 2000, 77),
    ]
    assert rows(q.waves(con, JOB), "task_type", "wave", "slots", "attempts") == [("MAP", 1, 1, 1)]
    ss = q.slowstart(con, JOB).iloc[0]
    assert pd.isna(ss["first_reduce_start_ms"])
    assert pd.isna(ss["slowstart_observed"])
    assert q.shuffle_gap(con, JOB).empty
    assert q.wasted(con, JOB).empty
    assert rows(q.job_summary(con, JOB), "makespan_ms", "maps", "reduces") == [(1200, 1, 0)]


def test_missing_and_out_of_range_boundaries_are_merged_or_clamped() -> None:
    con = make_con(
        {
            "attempts": [
                attempt("r_000000", 0, "SUCCEEDED", 0, 100, "h", shuffle_finish_ms=40, sort_finish_ms=None),
                attempt("r_000001", 0, "SUCCEEDED", 0, 100, "h", shuffle_finish_ms=None, sort_finish_ms=60),
                attempt("r_000002", 0, "SUCCEEDED", 0, 100, "h", shuffle_finish_ms=150, sort_finish_ms=30),
                attempt("r_000003", 0, "SUCCEEDED", 0, 100, "h", shuffle_finish_ms=0, sort_finish_ms=-1),
            ]
        }
    )
    df = q.phases_history(con, JOB).sort_values(["attempt_id", "seq"])
    assert rows(df, "attempt_id", "phase", "start_ms", "end_ms") == [
        (_a("r_000000", 0), "shuffle", 0, 40),
        (_a("r_000000", 0), "sort+reduce+write", 40, 100),
        (_a("r_000001", 0), "shuffle+sort", 0, 60),
        (_a("r_000001", 0), "reduce+write", 60, 100),
        # shuffle_finish after finish is clamped to it; sort cannot end before shuffle
        (_a("r_000002", 0), "shuffle", 0, 100),
        (_a("r_000002", 0), "sort", 100, 100),
        (_a("r_000002", 0), "reduce+write", 100, 100),
        (_a("r_000003", 0), "shuffle+sort+reduce+write", 0, 100),
    ]


# -- invariants ------------------------------------------------------------------------------


_boundary = st.one_of(st.none(), st.integers(min_value=-5, max_value=1_200))


@st.composite
def _attempts(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(min_value=1, max_value=6))):
        start = draw(st.integers(min_value=0, max_value=500))
        finish = start + draw(st.integers(min_value=0, max_value=600))
        is_map = draw(st.booleans())
        kw = (
            {"map_finish_ms": draw(_boundary)}
            if is_map
            else {"shuffle_finish_ms": draw(_boundary), "sort_finish_ms": draw(_boundary)}
        )
        out.append(attempt(f"{'m' if is_map else 'r'}_{i:06d}", 0, "SUCCEEDED", start, finish, "h", **kw))
    return out


_SHARED_CON = duckdb.connect()


@settings(max_examples=60, deadline=None)
@given(_attempts())
def test_history_phases_never_overlap_and_sum_to_the_span(attempts: list[dict[str, Any]]) -> None:
    df = q.phases_history(make_con({"attempts": attempts}, _SHARED_CON), JOB)
    spans = {a["attempt_id"]: (a["start_ms"], a["finish_ms"]) for a in attempts}
    assert set(df["attempt_id"]) == set(spans)
    for attempt_id, g in df.sort_values("seq").groupby("attempt_id"):
        start, finish = spans[str(attempt_id)]
        assert (g["dur_ms"] >= 0).all()
        assert g["start_ms"].iloc[0] == start
        assert g["end_ms"].iloc[-1] == finish
        assert (g["start_ms"].iloc[1:].to_numpy() == g["end_ms"].iloc[:-1].to_numpy()).all()
        assert g["dur_ms"].sum() == finish - start
