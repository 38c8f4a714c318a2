"""The critical path of measured runs: golden chains, and the makespan invariant (hypothesis)."""

from __future__ import annotations

from typing import Any

import duckdb
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from profiles.critical_path import Release, StepKind, critical_path
from tests.profiles.profiles_doubles import JOB, _a, attempt, make_con


def _job(submit: int, finish: int) -> dict[str, Any]:
    return {"job_id": JOB, "name": "cp", "submit_ms": submit, "finish_ms": finish}


def _steps(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str | None, int, int]]:
    cp = critical_path(con, JOB)
    return [(str(s.kind), s.label, s.attempt_id, s.start_ms, s.end_ms) for s in cp.steps]


def test_slot_wait_and_the_map_the_shuffle_waited_for() -> None:
    """
    t(ms)      0    10   20   30   40   50   60   70   80   90  100
    h1 m0_0     |mmmmmmmm|s|                                           map 5..25, spill+merge ..30
    h1 m2_0                  |mmmmmmmmmm|s|                            starts 32 in m0_0's slot
    h2 m1_0     |xxxxx|                                                FAILED
    h2 m1_1            |mmmmmm|s|                                      retry
    h3 r0_0        |shuffle.................|sort|reduce+write|        shuffle ends 70
    critical: start 0-5, m0_0, wait 30-32, m2_0, r0_0 shuffle tail 60-70, sort, reduce+write, end 90-100
    """
    con = make_con(
        {
            "jobs": [_job(0, 100)],
            "attempts": [
                attempt("m_000000", 0, "SUCCEEDED", 5, 30, "h1", map_finish_ms=25),
                attempt("m_000002", 0, "SUCCEEDED", 32, 60, "h1", map_finish_ms=55),
                attempt("m_000001", 0, "FAILED", 5, 20, "h2"),
                attempt("m_000001", 1, "SUCCEEDED", 22, 40, "h2", map_finish_ms=35),
                attempt("r_000000", 0, "SUCCEEDED", 10, 90, "h3", shuffle_finish_ms=70, sort_finish_ms=75),
            ],
        }
    )
    m0, m2, r0 = _a("m_000000", 0), _a("m_000002", 0), _a("r_000000", 0)
    assert _steps(con) == [
        ("start", "job start to the path's first attempt", None, 0, 5),
        ("phase", "map", m0, 5, 25),
        ("phase", "spill+merge", m0, 25, 30),
        ("wait", "wait (slot)", None, 30, 32),
        ("phase", "map", m2, 32, 55),
        ("phase", "spill+merge", m2, 55, 60),
        ("phase", "shuffle", r0, 60, 70),
        ("phase", "sort", r0, 70, 75),
        ("phase", "reduce+write", r0, 75, 90),
        ("end", "job commit/cleanup", None, 90, 100),
    ]
    cp = critical_path(con, JOB)
    assert cp.length_ms == cp.makespan_ms == 100
    assert cp.busy_ms == 83
    assert sum(s.share for s in cp.steps) == pytest.approx(1.0)
    assert cp.attempts == (m0, m2, r0)
    assert cp.graph.edges[m2, r0]["kind"] == Release.SHUFFLE
    assert cp.graph.edges[m0, m2]["binding"]


def test_a_background_spill_beside_the_map_function_is_not_on_the_path() -> None:
    """
    t(ms)      0    10   20   30   40   50
    h1 m0_0     |map.........|collect....|spill|      task thread (lane main)
                     |spill (SpillThread)..|          lane background, 14..32
    critical: start 0-5, map 5-20, collect 20-40, spill 40-45, end 45-50
    (the helper's spill had cut the map function at 14 and taken 14..20 as 'spill')
    """
    m0 = _a("m_000000", 0)
    phases = [
        {"job_id": JOB, "attempt_id": m0, "task_type": "MAP", "phase": p, "lane": lane, "start_ms": s, "end_ms": e,
         "dur_ms": e - s}
        for p, lane, s, e in [("map", "main", 5, 20), ("spill", "background", 14, 32), ("collect", "main", 20, 40),
                              ("spill", "main", 40, 45)]
    ]  # fmt: skip
    con = make_con({"jobs": [_job(0, 50)], "attempts": [attempt("m_000000", 0, "SUCCEEDED", 5, 45, "h1")],
                    "attempt_phases": phases})  # fmt: skip
    assert _steps(con) == [
        ("start", "job start to the path's first attempt", None, 0, 5),
        ("phase", "map", m0, 5, 20),
        ("phase", "collect", m0, 20, 40),
        ("phase", "spill", m0, 40, 45),
        ("end", "job commit/cleanup", None, 45, 50),
    ]


def test_retry_and_slowstart_release() -> None:
    """
    t(ms)      0    10   20   30   40   50   60   70
    h2 m1_0     |xxxxx|                               FAILED at 20
    h2 m1_1            |mmmmmmmmmmmmmmmmmm|s|          retry from 22, the last map (ends 65)
    h1 m0_0     |mm|s|                                 ends 15
    h1 r0_0              |shuffle...........|r+w|      starts 24 (after m1_0 ended on h2? no:
                                                       the latest map before 24 is m0_0 at 15)
    """
    con = make_con(
        {
            "jobs": [_job(0, 75)],
            "attempts": [
                attempt("m_000001", 0, "FAILED", 5, 20, "h2"),
                attempt("m_000001", 1, "SUCCEEDED", 22, 65, "h2", map_finish_ms=60),
                attempt("m_000000", 0, "SUCCEEDED", 5, 15, "h1", map_finish_ms=12),
                attempt("r_000000", 0, "SUCCEEDED", 24, 72, "h1", shuffle_finish_ms=68, sort_finish_ms=68),
            ],
        }
    )
    m1_0, m1_1 = _a("m_000001", 0), _a("m_000001", 1)
    steps = _steps(con)
    assert steps[:5] == [
        ("start", "job start to the path's first attempt", None, 0, 5),
        ("phase", "map+spill+merge", m1_0, 5, 20),  # the failed attempt is on the path
        ("wait", "wait (retry)", None, 20, 22),
        ("phase", "map", m1_1, 22, 60),
        ("phase", "spill+merge", m1_1, 60, 65),
    ]
    assert steps[5][2] == _a("r_000000", 0)
    assert steps[5][3:] == (65, 68)


def test_reduce_started_by_slowstart() -> None:
    # the reduce's shuffle overlaps no map finish; what let it start was m0_0 ending at 15
    con = make_con(
        {
            "jobs": [_job(0, 60)],
            "attempts": [
                attempt("m_000000", 0, "SUCCEEDED", 5, 15, "h1", map_finish_ms=12),
                attempt("r_000000", 0, "SUCCEEDED", 18, 60, "h2", shuffle_finish_ms=30, sort_finish_ms=31),
            ],
        }
    )
    steps = _steps(con)
    assert steps[3] == ("wait", "wait (slowstart)", None, 15, 18)
    assert critical_path(con, JOB).length_ms == 60


def test_empty_job_has_an_empty_path() -> None:
    con = make_con({"jobs": [_job(0, 10)]})
    cp = critical_path(con, JOB)
    assert cp.steps == ()
    assert cp.length_ms == 0


def test_unknown_job_is_not_found() -> None:
    with pytest.raises(LookupError, match="not in the store"):
        critical_path(make_con({}), JOB)


_SHARED_CON = duckdb.connect()
_maybe = st.one_of(st.none(), st.integers(min_value=0, max_value=400))


@st.composite
def _runs(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    attempts = []
    for i in range(draw(st.integers(min_value=1, max_value=8))):
        start = draw(st.integers(min_value=0, max_value=300))
        finish = start + draw(st.integers(min_value=0, max_value=300))
        is_map = draw(st.booleans())
        status = draw(st.sampled_from(["SUCCEEDED", "SUCCEEDED", "FAILED", "KILLED"]))
        host = draw(st.sampled_from(["h1", "h2", "h3"]))
        kw = (
            {"map_finish_ms": draw(_maybe)}
            if is_map
            else {"shuffle_finish_ms": draw(_maybe), "sort_finish_ms": draw(_maybe)}
        )
        n = draw(st.integers(min_value=0, max_value=1))
        attempts.append(attempt(f"{'m' if is_map else 'r'}_{i:06d}", n, status, start, finish, host, **kw))
    submit = draw(st.integers(min_value=0, max_value=50))
    finish = max(a["finish_ms"] for a in attempts) + draw(st.integers(min_value=-20, max_value=50))
    return _job(submit, finish), attempts


@settings(max_examples=60, deadline=None)
@given(_runs())
def test_critical_path_is_never_longer_than_the_makespan(
    run: tuple[dict[str, Any], list[dict[str, Any]]],
) -> None:
    job, attempts = run
    cp = critical_path(make_con({"jobs": [job], "attempts": attempts}, _SHARED_CON), JOB)
    assert cp.length_ms <= cp.makespan_ms
    assert cp.busy_ms <= cp.makespan_ms
    for a, b in zip(cp.steps, cp.steps[1:], strict=False):
        assert a.end_ms <= b.start_ms  # in time order, never overlapping
    assert all(s.dur_ms > 0 for s in cp.steps)
    assert all(s.kind in StepKind for s in cp.steps)
    assert sum(s.share for s in cp.steps) <= 1.0 + 1e-9


def test_job_cleanup_waits_for_the_last_task() -> None:
    # 0.20/1.x histories carry the job's setup and cleanup tasks as attempts of their own
    cleanup = {**attempt("m_000009", 0, "SUCCEEDED", 50, 58, "h2"), "task_type": "CLEANUP"}
    con = make_con(
        {
            "jobs": [_job(0, 60)],
            "attempts": [attempt("m_000000", 0, "SUCCEEDED", 5, 45, "h1", map_finish_ms=40), cleanup],
        }
    )
    assert _steps(con)[-4:] == [
        ("phase", "write", _a("m_000000", 0), 40, 45),  # a map-only job: the map's tail writes its output
        ("wait", "wait (tasks done)", None, 45, 50),
        ("phase", "cleanup", _a("m_000009", 0), 50, 58),
        ("end", "job commit/cleanup", None, 58, 60),
    ]


def test_a_failed_job_ends_on_the_attempt_that_failed_it(fixtures_dir: Any, tmp_path: Any) -> None:
    # Hadoop 0.23.9's failed job: m_000001's fourth attempt fails 4 ms before JOB_FAILED and m_000000's,
    # killed as the job failed, ends 23 ms after it; the path ended on the killed one
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    store = Store(tmp_path / "store")
    ingest_paths([fixtures_dir / "apache-hadoop/mapreduce-client-hs/job_0.23.9-FAILED.jhist"], store)
    con = store.connect()
    cp = critical_path(con, "job_1399356417814_19732")
    (status,) = con.execute(
        "SELECT status FROM attempts WHERE attempt_id = 'attempt_1399356417814_19732_m_000000_3'"
    ).fetchone()
    assert status == "KILLED"
    assert cp.attempts[-1] == "attempt_1399356417814_19732_m_000001_3"
    assert [s.kind for s in cp.steps[-2:]] == [StepKind.PHASE, StepKind.END]  # then the job's 4 ms
    assert cp.steps[-1].dur_ms == 4
    assert cp.length_ms == cp.makespan_ms
