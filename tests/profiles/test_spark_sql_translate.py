"""The DuckDB -> Spark SQL translation of the profiles' queries (profiles.spark_sql), without a JVM:
each rewrite on a small statement, and every Spark-able .sql file translating cleanly.

Running the translations on Spark against DuckDB is tests/phaseline/test_spark_engine.py (slow).
"""

from __future__ import annotations

import re

import pytest

from phaseline.errors import QueryError
from profiles import spark_sql

pytest.importorskip("sqlglot")


def test_ordered_first_becomes_min_by_over_a_struct_with_nulls_last() -> None:
    """DuckDB's ``first(x ORDER BY k1, k2)``: ascending, NULL keys last (DuckDB's default)."""
    out = spark_sql.to_spark("SELECT first(v ORDER BY s NULLS LAST, v) FROM t GROUP BY g")
    assert out == (
        "SELECT MIN_BY(v, NAMED_STRUCT('n0', s IS NULL, 'k0', s, 'n1', v IS NULL, 'k1', v)) FROM t GROUP BY g"
    )


def test_ordered_first_descending_becomes_max_by() -> None:
    out = spark_sql.to_spark("SELECT first(a ORDER BY f DESC NULLS LAST, a DESC) FROM t GROUP BY g")
    assert out == (
        "SELECT MAX_BY(a, NAMED_STRUCT('n0', NOT f IS NULL, 'k0', f, 'n1', NOT a IS NULL, 'k1', a)) "
        "FROM t GROUP BY g"
    )


def test_ordered_first_in_both_directions_is_refused_by_name() -> None:
    with pytest.raises(QueryError, match=r"x\.sql: first\(\.\.\. ORDER BY\) with keys in both directions"):
        spark_sql.to_spark("SELECT first(a ORDER BY f DESC, a) FROM t", where="x.sql")


def test_named_window_extended_by_a_frame_is_written_out() -> None:
    out = spark_sql.to_spark(
        "SELECT row_number() OVER w AS n, max(f) OVER (w ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS m "
        "FROM t WINDOW w AS (PARTITION BY a ORDER BY b)"
    )
    assert out == (
        "SELECT ROW_NUMBER() OVER (PARTITION BY a ORDER BY b NULLS LAST) AS n, "
        "MAX(f) OVER (PARTITION BY a ORDER BY b NULLS LAST ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS m "
        "FROM t"
    )


def test_star_replace_qualify_and_union_by_name_need_the_columns() -> None:
    """Stars written out by name: the window column QUALIFY needs is not among the outputs, and
    the union's sides line up by name (NULL where a side has none)."""
    columns = {"t": {"a": "BIGINT", "b": "VARCHAR", "c": "BIGINT"}}
    out = spark_sql.to_spark(
        "SELECT * REPLACE (a + 1 AS a) FROM t QUALIFY row_number() OVER (PARTITION BY b ORDER BY c) = 1 "
        "UNION ALL BY NAME SELECT b FROM t",
        columns=columns,
    )
    assert out == (
        "SELECT a, b, c FROM (SELECT t.a + 1 AS a, t.b AS b, t.c AS c, "
        "ROW_NUMBER() OVER (PARTITION BY t.b ORDER BY t.c NULLS LAST) AS _w FROM t AS t) AS _t WHERE _w = 1 "
        "UNION ALL SELECT NULL AS a, t.b AS b, NULL AS c FROM t AS t"
    )


def test_decimal_divisor_divides_to_double_and_cte_hints_go() -> None:
    out = spark_sql.to_spark(
        "WITH a AS NOT MATERIALIZED (SELECT x / 1000.0 AS y, x * 1.5 AS z FROM t) SELECT * FROM a"
    )
    assert out == "WITH a AS (SELECT x / CAST(1000.0 AS DOUBLE) AS y, x * 1.5 AS z FROM t) SELECT * FROM a"


def test_parameters_stay_bound() -> None:
    assert (
        spark_sql.to_spark("SELECT * FROM t WHERE job_id = $job_id")
        == "SELECT * FROM t WHERE job_id = :job_id"
    )


@pytest.mark.parametrize("concept", spark_sql.spark_concepts())
def test_every_spark_concept_translates(concept: str) -> None:
    """Each file's statements come out as Spark SQL with none of DuckDB's own constructs left."""
    spec = spark_sql.spark_sql_file(concept)
    for statement in (*spec.setup, spec.query):
        statement = re.sub(r"/\*.*?\*/", "", statement, flags=re.DOTALL)  # (the file's comments stay)
        statement = re.sub(r"'[^']*'", "''", statement)  # (nor string literals: a counter's name)
        for duckdb_only in ("QUALIFY", " REPLACE (", "EXCLUDE (", "BY NAME", "MATERIALIZED", "$", "OVER w"):
            assert duckdb_only not in statement, (concept, duckdb_only)
    assert spec.params == {p for p in ("job_id", "k") if f":{p}" in spec.query}


def test_duckdb_only_files_say_why() -> None:
    for name, why in spark_sql.DUCKDB_ONLY.items():
        with pytest.raises(QueryError, match="does not run on Spark"):
            spark_sql.spark_sql_file(name)
        assert why
