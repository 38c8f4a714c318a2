"""The profiles' SQL on Spark: ``profiles/sql/<concept>.sql`` translated to Spark SQL by sqlglot.

The ``.sql`` files stay DuckDB SQL, the one text a reader maintains; this module
transpiles each statement of a concept (:func:`profiles.queries.sql_file`) from
DuckDB's dialect to Spark's with `sqlglot <https://sqlglot.com>`_, at first use.
sqlglot itself rewrites: ``QUALIFY`` into a sub-query filtering the window column,
``arg_max``/``arg_min`` into ``max_by``/``min_by``, ``//`` into ``DIV``, ``ORDER BY x``
into ``x NULLS LAST`` (DuckDB's default; Spark sorts NULLs first when ascending),
``$job_id`` into a named parameter ``:job_id`` (bound by Spark, never formatted in).
This module adds what sqlglot leaves as DuckDB SQL:

* ``first(x ORDER BY k1, k2)`` (an ordered aggregate) -> ``min_by(x, named_struct(...))``;
* ``OVER (w ROWS ...)`` extending a named window -> the window written out in full;
* ``WITH x AS [NOT] MATERIALIZED`` -> a plain CTE;
* ``x / 1000.0`` -> the literal a DOUBLE (DuckDB divides to a DOUBLE, Spark to a DECIMAL);
* stars written out by name from the columns DuckDB reports for every table and view
  (:func:`relation_columns`), so that ``* REPLACE``/``* EXCLUDE``, a ``QUALIFY`` over
  ``SELECT *`` (whose window column would show) and ``UNION ALL BY NAME`` become plain SQL.

A construct that still has no Spark form raises :class:`QueryError` naming the file,
and :data:`DUCKDB_ONLY` lists the ``.sql`` files that cannot run on Spark, with the reason.

The session needs the store's tables as views (:func:`phaseline.spark_views.register_store`).
``tests/phaseline/test_spark_engine.py`` runs every concept on both engines over the same
store and compares the rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from phaseline import schemas
from phaseline.errors import QueryError, first_line
from profiles import queries
from profiles.queries import sql_file

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from sqlglot import exp

#: ``profiles/sql`` files that do not run on Spark, and why: the steps of ``phaseline dataflow``'s
#: reconstruction (:mod:`profiles.dataflow.reconstruct`), which Python drives statement by
#: statement on one DuckDB connection; none is a concept a query names.
_MACROS = "DuckDB table macros (CREATE MACRO ... AS TABLE); Spark SQL has no parameterised views"
_STEP = "a step of the dataflow reconstruction over relations Python registers on the DuckDB connection"
DUCKDB_ONLY: dict[str, str] = {
    "dataflow_job_instances": f"defines {_MACROS}",
    "dataflow_sample_attempts": f"defines {_MACROS}",
    "dataflow_sample_period": f"calls the table macro _sample_attempts ({_MACROS})",
    "dataflow_sample_groups": f"{_STEP} (_stack_vertex) and the table macro _sample_attempts",
    "dataflow_instance_threads": f"{_STEP} (_groups, a temporary table of the step before)",
    "dataflow_instances": f"{_STEP} (_threads)",
    "dataflow_group_threads": f"{_STEP} (_threads)",
    "dataflow_sample_counts": f"{_STEP} (_groups)",
    "dataflow_unmapped": f"{_STEP} (_groups, _stack_vertex)",
    **dict.fromkeys(("dataflow_busy_idle", "dataflow_by_host", "dataflow_chart", "dataflow_hotspots", "dataflow_shuffle_gap", "dataflow_vertex_logs", "dataflow_vertex_system"), f"calls dataflow_job_instances' table macros _job_instances and _instance_members ({_MACROS})"),
}  # fmt: skip


def spark_concepts() -> tuple[str, ...]:
    """Every ``profiles/sql`` file that runs on Spark (all but :data:`DUCKDB_ONLY`), by name."""
    files = resources.files("profiles.sql").iterdir()
    return tuple(sorted(f.name[: -len(".sql")] for f in files
                        if f.name.endswith(".sql") and f.name[: -len(".sql")] not in DUCKDB_ONLY))  # fmt: skip


@cache
def relation_columns() -> dict[str, dict[str, str]]:
    """The columns of the store's tables and of every view the Spark-able files create, by name:
    DuckDB creates the views over empty tables and says (a star is then written out by name)."""
    import duckdb

    con = duckdb.connect(":memory:")
    try:
        for name, spec in schemas.TABLES.items():
            con.register(name, spec.schema.empty_table())
        for concept in spark_concepts():
            queries.install(con, concept)
        columns: dict[str, dict[str, str]] = {}
        listing = con.sql(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "ORDER BY table_name, ordinal_position"
        ).fetchall()
        for table, column, data_type in listing:
            columns.setdefault(table, {})[column] = data_type
        return columns
    finally:
        con.close()


@dataclass(frozen=True, slots=True)
class SparkSqlFile:
    """One concept's statements in Spark SQL (see :class:`profiles.queries.SqlFile`)."""

    name: str
    requires: tuple[str, ...]
    setup: tuple[str, ...]
    query: str
    params: frozenset[str]


Columns = dict[str, dict[str, str]]


def to_spark(statement: str, *, where: str = "SQL", columns: Columns | None = None) -> str:
    """One DuckDB statement in Spark SQL (``where`` names it in an error).

    ``columns`` (relation -> column -> type) lets stars be written out: DuckDB's
    ``* REPLACE``/``* EXCLUDE``, a ``QUALIFY`` over ``SELECT *`` (whose window column
    would otherwise show) and ``UNION ALL BY NAME`` need the columns by name.

    >>> to_spark("SELECT first(v ORDER BY k DESC NULLS LAST) FROM t GROUP BY g")
    "SELECT MAX_BY(v, NAMED_STRUCT('n0', NOT k IS NULL, 'k0', k)) FROM t GROUP BY g"
    >>> to_spark("SELECT * REPLACE (a + 1 AS a) FROM t UNION ALL BY NAME SELECT b FROM t",
    ...          columns={"t": {"a": "BIGINT", "b": "BIGINT"}})
    'SELECT t.a + 1 AS a, t.b AS b FROM t AS t UNION ALL SELECT NULL AS a, t.b AS b FROM t AS t'
    """
    import sqlglot
    from sqlglot.errors import SqlglotError
    from sqlglot.optimizer.qualify import qualify

    try:
        tree: exp.Expr = sqlglot.parse_one(statement, read="duckdb")
        tree = _double_division(_plain_ctes(_inline_named_windows(_ordered_first(tree, where))))
        if columns is not None:
            tree = qualify(
                tree, schema=dict(columns), dialect="duckdb", expand_stars=True, validate_qualify_columns=False,
                identify=False, quote_identifiers=False,
            )  # fmt: skip
            tree = _union_by_name(tree, where)
        return tree.sql(dialect="spark", unsupported_level=sqlglot.ErrorLevel.RAISE)
    except (SqlglotError, ValueError) as exc:
        raise QueryError(f"{where}: cannot be written in Spark SQL ({first_line(exc)})") from exc


def _ordered_first(tree: exp.Expr, where: str) -> exp.Expr:
    """DuckDB's ordered aggregate ``first(x ORDER BY k1, k2)`` as Spark's ``min_by(x, (k1, k2))``.

    Spark has no ordered ``first``; ``min_by``/``max_by`` over a struct of the keys
    picks the same row (structs compare field by field).  Each key is preceded by
    whether it is NULL, so that NULLs sort where the ``ORDER BY`` puts them (DuckDB:
    last unless ``NULLS FIRST``).  Keys must share one direction (a descending
    string cannot be negated): ``max_by`` for ``DESC``.
    """
    from sqlglot import exp

    for node in list(tree.find_all(exp.First)):
        order = node.this
        if not isinstance(order, exp.Order):
            continue
        keys = list(order.expressions)
        directions = {bool(k.args.get("desc")) for k in keys}
        if len(directions) != 1:
            raise QueryError(f"{where}: first(... ORDER BY) with keys in both directions has no Spark form")
        desc = directions.pop()
        fields: list[exp.Expr] = []
        for i, k in enumerate(keys):
            is_null: exp.Expr = exp.Is(this=k.this.copy(), expression=exp.Null())
            if bool(k.args.get("nulls_first")) != desc:  # (min: False first; max: True first)
                is_null = exp.Not(this=is_null)
            fields += [exp.Literal.string(f"n{i}"), is_null, exp.Literal.string(f"k{i}"), k.this.copy()]
        struct = exp.Anonymous(this="NAMED_STRUCT", expressions=fields)
        pick = exp.ArgMax if desc else exp.ArgMin
        node.replace(pick(this=order.this.copy(), expression=struct))
    return tree


def _union_by_name(tree: exp.Expr, where: str) -> exp.Expr:
    """``a UNION ALL BY NAME b`` (stars written out) as a plain union: each side's columns in the
    order DuckDB gives (the left's, then the right's new ones), NULL where a side has none."""
    from sqlglot import exp

    for union in list(tree.find_all(exp.Union)):
        if not union.args.get("by_name"):
            continue
        left, right = union.left, union.right
        if not (isinstance(left, exp.Select) and isinstance(right, exp.Select)):
            raise QueryError(f"{where}: UNION BY NAME of a nested set operation has no Spark form here")
        names = list(dict.fromkeys([*left.named_selects, *right.named_selects]))
        for side in (left, right):
            by_name = dict(zip(side.named_selects, side.selects, strict=True))
            side.set("expressions", [
                by_name[n] if n in by_name else exp.alias_(exp.Null(), n) for n in names
            ])  # fmt: skip
        union.set("by_name", None)
    return tree


def _plain_ctes(tree: exp.Expr) -> exp.Expr:
    """``WITH x AS [NOT] MATERIALIZED (...)`` without the hint, which Spark does not parse (its
    planner inlines a CTE referenced once, which is what the hint asks DuckDB for)."""
    from sqlglot import exp

    for cte in tree.find_all(exp.CTE):
        cte.set("materialized", None)
    return tree


def _double_division(tree: exp.Expr) -> exp.Expr:
    """``x / 1000.0`` with the literal a DOUBLE: DuckDB divides to a DOUBLE, Spark would to a DECIMAL."""
    from sqlglot import exp

    for div in tree.find_all(exp.Div):
        for side in (div.this, div.expression):
            if isinstance(side, exp.Literal) and side.is_number and not side.is_int:
                side.replace(exp.cast(side.copy(), exp.DataType.build("DOUBLE")))
    return tree


def _inline_named_windows(tree: exp.Expr) -> exp.Expr:
    """``OVER w`` and ``OVER (w ROWS ...)`` with ``WINDOW w AS (...)`` written out in full
    (Spark takes a named window only alone, not extended by a frame)."""
    from sqlglot import exp

    for select in list(tree.find_all(exp.Select)):
        named = {w.this.name: w for w in select.args.get("windows") or []}
        if not named:
            continue
        for win in list(select.find_all(exp.Window)):
            ref = win.args.get("alias")
            if win.find_ancestor(exp.Select) is not select or ref is None or ref.name not in named:
                continue
            base = named[ref.name]
            win.set("alias", None)
            win.set("partition_by", [p.copy() for p in base.args.get("partition_by") or []])
            if base.args.get("order") is not None:
                win.set("order", base.args["order"].copy())
            if win.args.get("spec") is None and base.args.get("spec") is not None:
                win.set("spec", base.args["spec"].copy())
        select.set("windows", None)
    return tree


@cache
def spark_sql_file(name: str) -> SparkSqlFile:
    """``profiles/sql/<name>.sql`` in Spark SQL."""
    if name in DUCKDB_ONLY:
        raise QueryError(f"profiles/sql/{name}.sql does not run on Spark: {DUCKDB_ONLY[name]}")
    spec = sql_file(name)
    where = f"profiles/sql/{name}.sql"
    columns = relation_columns()
    return SparkSqlFile(
        name=spec.name,
        requires=spec.requires,
        setup=tuple(to_spark(s, where=where, columns=columns) for s in spec.setup),
        query=to_spark(spec.query, where=where, columns=columns),
        params=spec.params,
    )


def install(spark: SparkSession, name: str) -> None:
    """Create the temporary views of ``name`` and of what it requires (each once per session)."""
    existing = {t.name for t in spark.catalog.listTables() if t.isTemporary}
    _install(spark, name, existing)


def _install(spark: SparkSession, name: str, existing: set[str]) -> None:
    if name in existing:
        return
    spec = spark_sql_file(name)
    for dep in spec.requires:
        _install(spark, dep, existing)
    for statement in spec.setup:
        _run(spark, name, statement)
    existing.add(name)


def _run(spark: SparkSession, name: str, statement: str, args: dict[str, Any] | None = None) -> DataFrame:
    try:
        return spark.sql(statement, args=args)
    except Exception as exc:  # Spark's AnalysisException / ParseException
        raise QueryError(f"profiles/sql/{name}.sql on Spark: {first_line(exc)}") from exc


def relation(spark: SparkSession, name: str, **params: Any) -> DataFrame:
    """The concept's final query on Spark, parameters bound (as :func:`profiles.queries.relation`)."""
    spec = spark_sql_file(name)
    missing = spec.params - params.keys()
    if missing:
        raise QueryError(f"{name}: missing parameters {sorted(missing)}")
    install(spark, name)
    return _run(spark, name, spec.query, {k: params[k] for k in spec.params})
