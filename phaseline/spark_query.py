"""Read-only Spark SQL over a store: ``phaseline query --engine spark``.

The statements are Spark SQL, run on a session whose temporary views are the
store's tables (:func:`phaseline.spark_views.register_store`: ``<table>``, and
``raw_<table>`` for every source's rows).  Only queries run: a statement that is
not a query (an ``INSERT OVERWRITE DIRECTORY`` or a ``CREATE TABLE ... LOCATION``
could overwrite the store's own files, an ``ADD JAR`` loads code) is refused
before Spark sees any of them.  The statements are split and classified by
sqlglot's Spark dialect.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from phaseline.errors import QueryError, first_line
from phaseline.spark import DEFAULT_MASTER, spark_session
from phaseline.spark_views import register_store
from phaseline.store import Store


@dataclass(frozen=True, slots=True)
class QueryResult:
    """The last statement's rows (tuples in ``columns`` order) and how many statements ran."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    statements: int


def read_only_statements(sql: str) -> list[str]:
    """``sql`` split into statements, each a query (``SELECT``, ``WITH``, set operations,
    ``VALUES``) or a ``DESCRIBE``/``SHOW``, in Spark SQL; anything else raises :class:`QueryError`.

    >>> read_only_statements("SELECT 1; SELECT 2")
    ['SELECT 1', 'SELECT 2']
    >>> read_only_statements("INSERT OVERWRITE DIRECTORY '/tmp/x' SELECT 1")
    Traceback (most recent call last):
    ...
    phaseline.errors.QueryError: INSERT is refused: `phaseline query` only reads; select the rows and write them with --format csv or json
    """
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import SqlglotError

    try:
        trees = [t for t in sqlglot.parse(sql, read="spark") if t is not None]
    except SqlglotError as exc:
        raise QueryError(f"query failed: {first_line(exc)}") from exc
    for tree in trees:
        if not isinstance(tree, (exp.Query, exp.Describe, exp.Show)):
            kind = tree.key.upper() if not isinstance(tree, exp.Command) else str(tree.this).upper()
            raise QueryError(
                f"{kind} is refused: `phaseline query` only reads; select the rows and write them "
                "with --format csv or json"
            )
    if len(trees) == 1:  # the user's own text: sqlglot's rewriting of it is not needed to run it
        return [sql.strip().rstrip(";").strip()]
    return [t.sql(dialect="spark") for t in trees]


def spark_query(store: Store | Path, sql: str, *, master: str = DEFAULT_MASTER) -> QueryResult:
    """Run read-only Spark SQL over ``store``'s tables on ``master``; the last statement's rows.

    ``store`` may be the root of a partitioned store (one store per ``key=value`` directory,
    :func:`phaseline.store.partitions`), a :class:`Store` with a ``where`` only the partitions
    it chooses (:func:`phaseline.spark_views.register_store`).  Timestamps come back time-zone aware in
    UTC, as DuckDB gives them.
    """
    statements = read_only_statements(sql)
    if not statements:
        return QueryResult((), (), 0)
    with spark_session(master) as spark:
        register_store(spark, store)
        try:
            for statement in statements:
                frame = spark.sql(statement)
            table = frame.toArrow()
        except Exception as exc:  # Spark's AnalysisException / ParseException: its message, first line
            raise QueryError(f"query failed: {_reason(exc)}") from exc
    columns = tuple(table.column_names)
    values = [table.column(i).to_pylist() for i in range(table.num_columns)]  # (names may repeat)
    rows = tuple(zip(*values, strict=True)) if values else ()
    return QueryResult(columns, rows, len(statements))


def _reason(exc: Exception, depth: int = 32) -> str:
    """Why a query failed, one line: for a Spark job that failed in the JVM (py4j's
    ``java_exception``: "An error occurred while calling o1477.getResult"), the innermost Java
    cause's message, which names a file that cannot be read ("file:/... is not a Parquet file");
    else the exception's own first line."""
    cause = getattr(exc, "java_exception", None)
    try:
        while cause is not None and depth and cause.getCause() is not None:
            cause, depth = cause.getCause(), depth - 1
        if cause is not None:
            text = str(cause.getMessage() or cause.toString())
            return text.strip().splitlines()[0] if text.strip() else first_line(exc)
    except Exception:  # the JVM gone meanwhile: what py4j said
        pass
    return first_line(exc)
