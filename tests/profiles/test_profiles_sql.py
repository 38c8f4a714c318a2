"""Golden tests for profiles/sql as a whole: its files loaded, empty and unknown jobs, the query API, one job read.

The main fixture (one job, ``job_1_0001``) is in tests/profiles/profiles_doubles.py; the ``con``
fixture (tests/profiles/conftest.py) connects to it.  Tests in other folders still import its
tables and ``make_con`` from here.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from phaseline import schemas
from phaseline.errors import NotFoundError, QueryError
from profiles import queries as q
from profiles.doctor import doctor_sql
from tests.profiles.profiles_doubles import (
    ATTEMPTS,
    CONF,
    COUNTERS,
    JOB,
    JOBS,
    _a,
    _t,
    make_con,
    rows,
)

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


# -- the query API --------------------------------------------------------------------------


def test_relation_api_and_all_jobs(con: duckdb.DuckDBPyConnection) -> None:
    rel = q.relation(con, q.Concept.PHASES, job_id=JOB)
    assert rel.aggregate("sum(dur_ms)").fetchall() == [(20 + 30 + 30 + 60 + 20 + 85,)]
    assert q.all_jobs(con, q.Concept.TIMELINE).count("*").fetchall() == [(6,)]


def test_missing_parameter_is_a_query_error(con: duckdb.DuckDBPyConnection) -> None:
    with pytest.raises(q.QueryError, match="missing"):
        q.relation(con, q.Concept.STRAGGLERS, job_id=JOB)


# -- whatever the row order -----------------------------------------------------------------


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
