"""Golden tests for profiles/sql: tiny inline tables, the query, the expected rows.

The main fixture is one job, ``job_1_0001`` (submit 0, finish 120), 3 maps and 1 reduce::

    t(ms)         0    10   20   30   40   50   60   70   80   90  100  110  120
    m0_0  h1      |mmmmmmmm|s|                                                    SUCCEEDED
    m1_0  h2      |xxxxxxxxxxxxxx|                                                FAILED (no map_finish)
    m1_1  h2                     |mmmmmmmmmmm|s|                                  SUCCEEDED (retry)
    m2_0  h1                |mmmmmmmmmmmmmmmmmmmmmmmmmm|s|                        KILLED (slow)
    m2_1  h3                               |mmmmm|s|                              SUCCEEDED (speculative)
    r0_0  h3            |shuffle...........................|sort|reduce+write|    SUCCEEDED
                    25                                   80   90             110

map_finish: m0_0 15, m1_1 55, m2_0 75, m2_1 65; shuffle_finish 80, sort_finish 90.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phaseline import schemas
from phaseline.errors import DataQualityWarning, NotFoundError, QueryError
from profiles import queries as q
from profiles.doctor import doctor_sql

JOB = "job_1_0001"


def _a(task: str, n: int) -> str:
    return f"attempt_1_0001_{task}_{n}"


def _t(task: str) -> str:
    return f"task_1_0001_{task}"


def make_con(
    tables: Mapping[str, Iterable[Mapping[str, Any]]], con: duckdb.DuckDBPyConnection | None = None
) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB with every store table registered (empty unless given rows).

    Passing ``con`` re-registers the tables on it (the profiles' temp views stay
    installed and read the new tables), which keeps property tests fast.
    """
    con = con if con is not None else duckdb.connect()
    for name, spec in schemas.TABLES.items():
        rows = [{c: r.get(c) for c in spec.columns} for r in tables.get(name, ())]
        table = pa.Table.from_pylist(rows, schema=spec.schema) if rows else spec.schema.empty_table()
        con.register(name, table)
    return con


def attempt(
    task: str, n: int, status: str, start: int | None, finish: int | None, host: str, **kw: Any
) -> dict[str, Any]:
    return {
        "job_id": JOB,
        "task_id": _t(task),
        "attempt_id": _a(task, n),
        "task_type": "MAP" if task.startswith("m") else "REDUCE",
        "status": status,
        "start_ms": start,
        "finish_ms": finish,
        "host": host,
        **kw,
    }


def counter(
    scope: str, name: str, value: int, *, task: str, n: int | None = None, group: str
) -> dict[str, Any]:
    return {
        "job_id": JOB,
        "task_id": _t(task),
        "attempt_id": _a(task, n) if n is not None else None,
        "scope": scope,
        "group_name": group,
        "counter_name": name,
        "value": value,
    }


TC = "org.apache.hadoop.mapreduce.TaskCounter"
FIC = "org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter"
FSC = "org.apache.hadoop.mapreduce.FileSystemCounter"

ATTEMPTS = [
    attempt("m_000000", 0, "SUCCEEDED", 0, 20, "h1", map_finish_ms=15),
    attempt("m_000001", 0, "FAILED", 0, 30, "h2", error="java.io.IOException: disk"),
    attempt("m_000001", 1, "SUCCEEDED", 30, 60, "h2", map_finish_ms=55),
    attempt("m_000002", 0, "KILLED", 20, 80, "h1", map_finish_ms=75),
    attempt("m_000002", 1, "SUCCEEDED", 50, 70, "h3", map_finish_ms=65),
    attempt("r_000000", 0, "SUCCEEDED", 25, 110, "h3", shuffle_finish_ms=80, sort_finish_ms=90),
]
COUNTERS = [
    counter("attempt", "MAP_INPUT_RECORDS", 100, task="m_000000", n=0, group=TC),
    counter("attempt", "BYTES_READ", 1000, task="m_000000", n=0, group=FIC),
    counter("attempt", "MAP_OUTPUT_BYTES", 1200, task="m_000000", n=0, group=TC),
    counter("attempt", "MAP_OUTPUT_RECORDS", 100, task="m_000000", n=0, group=TC),
    counter("task", "BYTES_READ", 2000, task="m_000001", group=FIC),
    counter("task", "MAP_INPUT_RECORDS", 200, task="m_000001", group=TC),
    counter("attempt", "BYTES_READ", 3000, task="m_000002", n=1, group=FIC),
    counter("attempt", "MAP_INPUT_RECORDS", 300, task="m_000002", n=1, group=TC),
    # an attempt-scope value wins over the task-scope one for the same attempt
    counter("task", "BYTES_READ", 9999, task="m_000002", group=FIC),
    counter("task", "REDUCE_SHUFFLE_BYTES", 3000, task="r_000000", group=TC),
    counter("task", "REDUCE_INPUT_RECORDS", 300, task="r_000000", group=TC),
    counter("task", "HDFS_BYTES_WRITTEN", 900, task="r_000000", group=FSC),
]
JOBS = [
    {
        "job_id": JOB,
        "name": "wordcount",
        "user": "alice",
        "status": "SUCCEEDED",
        "submit_ms": 0,
        "launch_ms": 0,
        "finish_ms": 120,
        "total_maps": 3,
        "total_reduces": 1,
    },
]
CONF = [{"job_id": JOB, "key": "mapreduce.job.reduce.slowstart.completedmaps", "value": "0.05"}]


@pytest.fixture
def con() -> duckdb.DuckDBPyConnection:
    return make_con({"attempts": ATTEMPTS, "counters": COUNTERS, "jobs": JOBS, "conf": CONF})


def rows(df: pd.DataFrame, *cols: str) -> list[tuple[Any, ...]]:
    return [tuple(None if pd.isna(v) else v for v in r) for r in df[list(cols)].itertuples(index=False)]


# -- loading the SQL files -----------------------------------------------------------------


def test_a_sql_file_that_is_not_shipped_is_named_with_where_they_are_looked_for() -> None:
    with pytest.raises(NotFoundError, match=r"^no SQL concept 'nope' in profiles/sql \(known: job_summary, "):
        q.sql_file("nope")
    with pytest.raises(NotFoundError, match=r"^no doctor SQL 'nope' in profiles/sql/doctor$"):
        doctor_sql("nope")


def test_a_sql_file_is_named_by_its_path_in_the_package() -> None:
    # a doctor helper has no final SELECT: read as a concept, its path is in the error
    missing = "not asked"
    with pytest.raises(QueryError, match=r"^profiles/sql/doctor/_severity\.sql must end with a SELECT"):
        q.load_sql("profiles.sql.doctor", "_severity", missing)
    requires, statements = q.load_sql("profiles.sql.doctor", "_severity", missing, ends_with_select=False)
    assert statements
    assert requires == doctor_sql("_severity").requires


def test_a_setup_statement_duckdb_refuses_names_its_file() -> None:
    con = duckdb.connect()
    with pytest.raises(QueryError, match=r"^profiles/sql/x\.sql: .*no_such_table"):
        q.execute_setup(con, ("CREATE TEMP VIEW v AS SELECT * FROM no_such_table",), "profiles/sql/x.sql")


# -- edge case: empty job ------------------------------------------------------------------


@pytest.mark.parametrize("concept", [c for c in q.Concept if c != q.Concept.STRAGGLERS])
def test_empty_job_gives_no_rows(concept: str) -> None:
    con = make_con({})
    assert q.frame(con, concept, job_id=JOB).empty


def test_unknown_job_in_a_full_store_gives_no_rows(con: duckdb.DuckDBPyConnection) -> None:
    assert q.timeline(con, "job_9_9999").empty
    assert q.stragglers(con, "job_9_9999").empty
    assert q.job_ids(con) == [JOB]


def _scanned_rows(con: duckdb.DuckDBPyConnection, sql: str, table_file: str, profile: Path) -> int:
    """Rows the table scans of ``table_file`` hand up while ``sql`` runs (from DuckDB's JSON profile)."""
    con.execute("PRAGMA enable_profiling = 'json'")
    con.execute(f"PRAGMA profiling_output = '{profile}'")
    try:
        con.execute(sql).fetchall()
    finally:
        con.execute("PRAGMA disable_profiling")

    def walk(node: Mapping[str, Any]) -> int:
        info = node.get("extra_info") or {}
        own = node.get("intermediate_rows", 0) if table_file in str(info.get("Filename(s)", "")) else 0
        return own + sum(walk(child) for child in node.get("children", ()))

    return sum(walk(node) for node in json.loads(profile.read_text())["operator"])


#: Concepts that read other jobs by design: other_sizes compares a job with every run of its name.
ACROSS_JOBS = frozenset({q.Concept.OTHER_SIZES})


@pytest.mark.parametrize("concept", [c for c in q.Concept if c not in ACROSS_JOBS])
def test_a_one_job_query_reads_only_that_jobs_counters(concept: q.Concept, tmp_path: Path) -> None:
    # A store of 40 copies of the job: a query for one job must not read the others' counters (the
    # largest table by far in a real store).  Regressions seen: a CTE referenced three times was
    # materialized for every job; a NOT EXISTS subquery was decorrelated above the job filter.
    jobs = [f"job_1_{i:04d}" for i in range(1, 41)]
    tables = {"attempts": ATTEMPTS, "counters": COUNTERS, "jobs": JOBS, "conf": CONF}
    con = duckdb.connect()
    for name, spec in schemas.TABLES.items():
        rows = [
            {c: _renumber(r.get(c), job) for c in spec.columns} for job in jobs for r in tables.get(name, ())
        ]
        path = tmp_path / f"{name}.parquet"
        pq.write_table(
            pa.Table.from_pylist(rows, schema=spec.schema) if rows else spec.schema.empty_table(), path
        )
        con.execute(f"CREATE VIEW \"{name}\" AS SELECT * FROM read_parquet('{path}')")
    q.frame(con, concept, job_id=JOB, **({"k": 2.0} if concept == q.Concept.STRAGGLERS else {}))  # the views
    read = _scanned_rows(
        con, f"SELECT * FROM {concept.value} WHERE job_id = '{JOB}'", "counters", tmp_path / "p.json"
    )
    assert read <= 3 * len(COUNTERS), f"{concept.value} read {read} counter rows of {40 * len(COUNTERS)}"


def _renumber(value: Any, job: str) -> Any:
    return value.replace("1_0001", job.removeprefix("job_")) if isinstance(value, str) else value


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
    con = make_con({"attempts": [{**attempt, "task_id": _t("m_000000"), "attempt_id": _a("m_000000", 0)},
                                 {**attempt, "task_id": _t("m_000001"), "attempt_id": _a("m_000001", 0)}]})
    assert rows(q.waves(con, JOB), "task_type", "wave", "slots", "attempts", "span_ms") == [("MAP", 1, 1, 1, 0),
                                                                                          ("MAP", 2, 1, 1, 0)]


def test_slowstart(con: duckdb.DuckDBPyConnection) -> None:
    got = q.slowstart(con, JOB).iloc[0]
    assert got["maps"] == 3
    assert got["first_reduce_start_ms"] == 25
    assert got["maps_done_at_reduce_start"] == 1  # only m0 (done at 20)
    assert got["slowstart_observed"] == pytest.approx(1 / 3)
    assert got["slowstart_conf"] == pytest.approx(0.05)
    assert got["last_map_finish_ms"] == 70
    assert got["reduce_lead_ms"] == 45


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
    assert rows(without.query("attempt_id == @r0"), *columns) == rows(with_job.query("attempt_id == @r0"), *columns)
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


def test_relation_api_and_all_jobs(con: duckdb.DuckDBPyConnection) -> None:
    rel = q.relation(con, q.Concept.PHASES, job_id=JOB)
    assert rel.aggregate("sum(dur_ms)").fetchall() == [(20 + 30 + 30 + 60 + 20 + 85,)]
    assert q.all_jobs(con, q.Concept.TIMELINE).count("*").fetchall() == [(6,)]


def test_missing_parameter_is_a_query_error(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(q.QueryError, match="missing"):
        q.relation(con, q.Concept.STRAGGLERS, job_id=JOB)


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


# -- profile extraction from task-log phases ---------------------------------------------


def test_extract_profile_from_task_log_phases() -> None:
    """Per-record and per-byte costs come only from task-log phases that measured them.

    m0_0  0 |read 0-10|map 10-40|collect 40-50|  (60 ms span; 10 ms no phase covers)
    m1_0  0 |read 0-20|map 20-60|collect 60-70|  (80 ms span)
    r0_0 50 |shuffle 50-90|sort 90-95|reduce 95-115|write 115-125|
    """
    from profiles.extract import extract_profile

    m0, m1, r0 = _a("m_000000", 0), _a("m_000001", 0), _a("r_000000", 0)

    def ph(aid: str, ttype: str, phase: str, s: int, e: int, b: int | None, r: int | None) -> dict[str, Any]:
        return {"job_id": JOB, "attempt_id": aid, "task_type": ttype, "phase": phase, "start_ms": s,
                "end_ms": e, "dur_ms": e - s, "data_bytes": b, "data_records": r}  # fmt: skip

    log = [
        ph(m0, "MAP", "read", 0, 10, 1000, 100), ph(m0, "MAP", "map", 10, 40, None, 100),
        ph(m0, "MAP", "collect", 40, 50, None, 50),
        ph(m1, "MAP", "read", 0, 20, 3000, 300), ph(m1, "MAP", "map", 20, 60, None, 300),
        ph(m1, "MAP", "collect", 60, 70, None, 150),
        ph(r0, "REDUCE", "shuffle", 50, 90, 4000, None), ph(r0, "REDUCE", "sort", 90, 95, None, 200),
        ph(r0, "REDUCE", "reduce", 95, 115, None, 200), ph(r0, "REDUCE", "write", 115, 125, 500, 20),
    ]  # fmt: skip
    cnt = []
    for task, values in (
        ("m_000000", {"MAP_INPUT_RECORDS": 100, "MAP_OUTPUT_RECORDS": 50, "MAP_OUTPUT_BYTES": 400,
                      "MAP_OUTPUT_MATERIALIZED_BYTES": 200, "COMBINE_INPUT_RECORDS": 50,
                      "COMBINE_OUTPUT_RECORDS": 25}),
        ("m_000001", {"MAP_INPUT_RECORDS": 300, "MAP_OUTPUT_RECORDS": 150, "MAP_OUTPUT_BYTES": 1200,
                      "MAP_OUTPUT_MATERIALIZED_BYTES": 600, "COMBINE_INPUT_RECORDS": 150,
                      "COMBINE_OUTPUT_RECORDS": 75}),
        ("r_000000", {"REDUCE_SHUFFLE_BYTES": 800, "REDUCE_INPUT_RECORDS": 100, "REDUCE_INPUT_GROUPS": 20,
                      "REDUCE_OUTPUT_RECORDS": 20}),
    ):  # fmt: skip
        cnt += [counter("task", k, v, task=task, group=TC) for k, v in values.items()]
    cnt.append(counter("task", "BYTES_READ", 1000, task="m_000000", group=FIC))
    cnt.append(counter("task", "BYTES_READ", 3000, task="m_000001", group=FIC))
    cnt.append(counter("task", "BYTES_WRITTEN", 500, task="r_000000", group="FileOutputFormatCounter"))
    con = make_con(
        {
            "jobs": [{"job_id": JOB, "name": "agg", "submit_ms": 0, "finish_ms": 130, "total_reduces": 1}],
            "attempts": [
                attempt("m_000000", 0, "SUCCEEDED", 0, 60, "h1", map_finish_ms=50),
                attempt("m_000001", 0, "SUCCEEDED", 0, 80, "h2", map_finish_ms=70),
                attempt("r_000000", 0, "SUCCEEDED", 50, 125, "h1", shuffle_finish_ms=90, sort_finish_ms=95),
            ],
            "attempt_phases": log,
            "counters": cnt,
            "conf": [{"job_id": JOB, "key": "mapreduce.map.output.compress", "value": "false"}],
        }
    )
    # two maps on two slots: one wave, which the profile says cannot tell one-time from per-task cost
    with pytest.warns(DataQualityWarning, match="one wave on 2 slot"):
        p = extract_profile(con, JOB)
    assert (p.num_maps, p.num_reduces) == (2, 1)
    assert (p.input.splits, p.input.avg_split_bytes, p.input.max_split_bytes) == (2, 2000.0, 3000.0)
    assert p.map_size_sel == pytest.approx(1600 / 4000)
    assert p.map_recs_sel == pytest.approx(200 / 400)
    assert p.combine_recs_sel == pytest.approx(100 / 200)
    assert p.combine_size_sel == pytest.approx(800 / 1600)
    assert p.dataflow.interm_compress_ratio is None  # a combiner ran: size ratio is not compression
    assert p.reduce_recs_sel == pytest.approx(20 / 100)
    assert p.reduce_size_sel == pytest.approx(500 / 800)
    assert p.dataflow.recs_per_red_group == pytest.approx(100 / 20)
    assert p.map_ms_per_record == pytest.approx((30 + 40) / (100 + 300))
    assert p.reduce_ms_per_record == pytest.approx(20 / 200)
    assert p.costs.hdfs_read == pytest.approx((10 + 20) / 4000)
    assert p.costs.hdfs_write == pytest.approx(10 / 500)
    assert p.costs.network is None  # the only shuffle started before the last map ended
    assert p.map_task_overhead_ms == pytest.approx((10 + 10) / 2)
    assert p.reduce_task_overhead_ms == pytest.approx(0.0)
    assert p.phases["map"].avg_ms == pytest.approx(35.0)
    assert p.phases["map"].max_ms == 40.0
    assert p.stages["first_shuffle"].avg_ms == pytest.approx(90 - 80)
    assert p.stages["reduce_phase"].avg_ms == pytest.approx(125 - 90)
    assert p.source.config == {"mapreduce.map.output.compress": "false"}


def test_the_successful_attempt_of_a_task_is_chosen_whatever_the_row_order() -> None:
    # arg_max(attempt_id, finish_ms) skipped an attempt without a finish time (its task fell out of
    # data_skew, and its task counters out of the totals) and broke a tie by row order
    def attempt(task: str, n: int, host: str, start: int | None, finish: int | None) -> dict[str, Any]:
        return {"job_id": JOB, "task_id": _t(task), "attempt_id": _a(task, n), "task_type": "MAP",
                "status": "SUCCEEDED", "host": host, "start_ms": start, "finish_ms": finish}  # fmt: skip

    attempts = [attempt("m_000000", 0, "h1", 0, 10), attempt("m_000000", 1, "h2", 5, 10),
                attempt("m_000001", 0, "h1", 0, None)]  # fmt: skip
    counters = [{"job_id": JOB, "scope": "task", "task_id": _t("m_000001"), "group_name": "g",
                 "counter_name": "MAP_INPUT_RECORDS", "value": 5}]  # fmt: skip
    for order in (attempts, attempts[::-1]):
        con = make_con({"attempts": order, "counters": counters})
        got = rows(q.data_skew(con, JOB).sort_values("task_id"), "task_id", "attempt_id", "host", "dur_ms")
        assert got == [(_t("m_000000"), _a("m_000000", 1), "h2", 5), (_t("m_000001"), _a("m_000001", 0), "h1", None)]
        assert rows(q.attempt_counters(con, JOB), "attempt_id", "map_input_records") == [(_a("m_000001", 0), 5)]


def test_a_conf_key_set_twice_gives_one_rows_value_and_source() -> None:
    # the value and the source had been taken from different rows (the source by row order)
    conf = [{"job_id": JOB, "key": "k", "value": v, "source": s} for v, s in (("A", "z.xml"), ("B", None), ("C", "a.xml"))]
    for order in (conf, conf[::-1], conf[1:] + conf[:1]):
        con = make_con({"conf": order})
        q.install(con, "job_conf")
        assert con.execute("SELECT value, source FROM job_conf").fetchall() == [("C", "a.xml")]
