"""Golden tests of the timeline concepts on the main fixture: attempts, slot occupancy, waves and slow-start."""

from __future__ import annotations

import duckdb
import pytest

from profiles import queries as q
from tests.profiles.profiles_doubles import (
    ATTEMPTS,
    JOB,
    JOBS,
    _a,
    _t,
    make_con,
    rows,
)

# -- timeline -------------------------------------------------------------------------------


def test_timeline_speculative_retry_and_slots(con: duckdb.DuckDBPyConnection) -> None:
    df = q.timeline(con, JOB)
    got = rows(df, "attempt_id", "status", "dur_ms", "attempt_no", "speculative", "host", "slot")
    assert got == [
        (_a("m_000000", 0), "SUCCEEDED", 20, 1, False, "h1", 0),
        (_a("m_000001", 0), "FAILED", 30, 1, False, "h2", 0),
        (_a("m_000002", 0), "KILLED", 60, 1, False, "h1", 0),  # takes over m0_0's slot at t=20
        (_a("r_000000", 0), "SUCCEEDED", 85, 1, False, "h3", 0),
        (_a("m_000001", 1), "SUCCEEDED", 30, 2, False, "h2", 0),  # a retry, not speculative
        (_a("m_000002", 1), "SUCCEEDED", 20, 2, True, "h3", 1),  # m2_0 still running at 50
    ]
    assert (df["t0_ms"] == 0).all()


def test_timeline_has_one_row_per_stored_attempt_when_a_job_came_from_two_files() -> None:
    # The same history ingested from two sources (a .jhist and its REST JSON): every stored row once,
    # not once per matching row of the other source (the ranking once fanned out retried tasks 2 x 2).
    con = make_con({"attempts": ATTEMPTS + ATTEMPTS, "jobs": JOBS})
    df = q.timeline(con, JOB)
    assert len(df) == 2 * len(ATTEMPTS)
    assert sorted(df["attempt_id"]) == sorted(a["attempt_id"] for a in ATTEMPTS + ATTEMPTS)


# -- slot occupancy and waves ---------------------------------------------------------------


def test_slot_occupancy_step_function(con: duckdb.DuckDBPyConnection) -> None:
    df = q.slot_occupancy(con, JOB)
    # at 20 and 30 a finish and a start cancel out: no change point there
    assert rows(df[df.task_type == "MAP"], "ts_ms", "until_ms", "running", "peak") == [
        (0, 50, 2, 3),
        (50, 60, 3, 3),
        (60, 70, 2, 3),
        (70, 80, 1, 3),
        (80, None, 0, 3),
    ]
    assert rows(df[df.task_type == "REDUCE"], "ts_ms", "running") == [(25, 1), (110, 0)]


def test_waves_overlap(con: duckdb.DuckDBPyConnection) -> None:
    df = q.waves(con, JOB)
    # peak 3 map slots: starts at 0, 0, 20 are wave 1; 30, 50 wave 2, which starts
    # while wave 1's slow attempt runs until 80 (overlapping waves)
    assert rows(
        df,
        "task_type",
        "wave",
        "slots",
        "attempts",
        "succeeded",
        "first_start_ms",
        "last_start_ms",
        "last_finish_ms",
        "span_ms",
        "median_dur_ms",
        "overlap_prev_ms",
    ) == [
        ("MAP", 1, 3, 3, 1, 0, 20, 80, 80, 30.0, 0),
        ("MAP", 2, 3, 2, 2, 30, 50, 70, 40, 25.0, 50),
        ("REDUCE", 1, 1, 1, 1, 25, 25, 110, 85, 85.0, 0),
    ]


def test_map_task_waves_lists_successful_maps_with_their_wave(con: duckdb.DuckDBPyConnection) -> None:
    #   slots: 3 (peak)      0    20   30   50 60 70 80
    #   m0 #0  wave 1        |====|                        succeeded, 20 ms
    #   m1 #0  wave 1        |=========|                   failed: not listed
    #   m2 #0  wave 1             |=====================|  killed: not listed
    #   m1 #1  wave 2                  |=========|         succeeded, 30 ms
    #   m2 #1  wave 2                       |=====|        succeeded, 20 ms
    df = q.map_task_waves(con, JOB)
    assert rows(df, "attempt_id", "wave", "slots", "start_ms", "dur_ms") == [
        (_a("m_000000", 0), 1, 3, 0, 20),
        (_a("m_000001", 1), 2, 3, 30, 30),
        (_a("m_000002", 1), 2, 3, 50, 20),
    ]


def test_attempts_of_0_ms_are_one_wave() -> None:
    # A task type whose attempts all took 0 ms has no change point in slot_occupancy (a start and a
    # finish at one ms cancel), so no peak: its attempts had fallen out of the waves (and of the
    # profile's reduce stages), leaving a one-map job with no wave at all
    attempt = {"job_id": JOB, "task_type": "MAP", "status": "SUCCEEDED", "start_ms": 1000, "finish_ms": 1000}
    con = make_con(
        {
            "attempts": [
                {**attempt, "task_id": _t("m_000000"), "attempt_id": _a("m_000000", 0)},
                {**attempt, "task_id": _t("m_000001"), "attempt_id": _a("m_000001", 0)},
            ]
        }
    )
    assert rows(q.waves(con, JOB), "task_type", "wave", "slots", "attempts", "span_ms") == [
        ("MAP", 1, 1, 1, 0),
        ("MAP", 2, 1, 1, 0),
    ]


def test_slowstart(con: duckdb.DuckDBPyConnection) -> None:
    got = q.slowstart(con, JOB).iloc[0]
    assert got["maps"] == 3
    assert got["first_reduce_start_ms"] == 25
    assert got["maps_done_at_reduce_start"] == 1  # only m0 (done at 20)
    assert got["slowstart_observed"] == pytest.approx(1 / 3)
    assert got["slowstart_conf"] == pytest.approx(0.05)
    assert got["last_map_finish_ms"] == 70
    assert got["reduce_lead_ms"] == 45
