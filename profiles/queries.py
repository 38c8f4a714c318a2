"""The profiles stage's SQL as a library: one function per concept, on any DuckDB connection.

Each concept lives in ``profiles/sql/<name>.sql`` (loaded with
:mod:`importlib.resources`): a header documenting the output columns, an
optional ``-- requires: a, b`` line naming the concepts it builds on, ``CREATE
OR REPLACE TEMP VIEW`` statements (helper views start with ``_``; the last view
is named after the concept and covers every job), and a final ``SELECT`` over
that view with bound parameters (``$job_id``, ...).

The connection needs the store's tables as views or registered tables under
their :mod:`phaseline.schemas` names, which is what :meth:`phaseline.store.Store.connect`
gives; tests register small pyarrow tables under the same names.

>>> import duckdb
>>> from phaseline import schemas
>>> con = duckdb.connect()
>>> for name, spec in schemas.TABLES.items():
...     _ = con.register(name, spec.schema.empty_table())
>>> len(timeline(con, "job_1"))
0
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import duckdb
import pandas as pd
import pyarrow as pa

from phaseline.errors import NotFoundError, QueryError
from profiles.slots import assign_slots

_REQUIRES = re.compile(r"^--\s*requires:\s*(.+)$", re.MULTILINE)


def _pandas_type(arrow_type: pa.DataType) -> Any:
    """Arrow -> pandas dtypes for frames: nullable integers and booleans."""
    if pa.types.is_integer(arrow_type):
        return pd.Int64Dtype()
    return pd.BooleanDtype() if pa.types.is_boolean(arrow_type) else None


#: Default straggler threshold: an attempt (or phase) at least this many times its phase median.
DEFAULT_STRAGGLER_K = 1.5


class Concept(enum.StrEnum):
    """The concepts of ``profiles/sql`` that callers query (helper views are not listed)."""

    JOB_SUMMARY = "job_summary"
    TIMELINE = "timeline"
    SLOT_OCCUPANCY = "slot_occupancy"
    WAVES = "waves"
    SLOWSTART = "slowstart"
    PHASES_HISTORY = "phases_history"
    PHASES = "phases"
    SHUFFLE_GAP = "shuffle_gap"
    SKEW_HOSTS = "skew_hosts"
    STRAGGLERS = "stragglers"
    DATA_SKEW = "data_skew"
    WASTED = "wasted"
    WASTED_SUMMARY = "wasted_summary"
    COUNTER_TOTALS = "counter_totals"
    JOB_COUNTERS = "job_counters"
    REDUCE_STAGES = "reduce_stages"
    MAP_TASK_WAVES = "map_task_waves"
    ATTEMPT_CONCURRENCY = "attempt_concurrency"
    SLOT_HANDOVER = "slot_handover"
    JOB_CONF = "job_conf"
    OTHER_SIZES = "other_sizes"
    ATTEMPT_COUNTERS = "_attempt_counters"
    PHASE_DURATIONS = "_phase_durations"


@dataclass(frozen=True, slots=True)
class SqlFile:
    """One parsed ``.sql`` file.

    Attributes
    ----------
    name
        The concept (file stem), also the name of the view it creates.
    requires
        Concepts whose views this file's views read.
    setup
        The ``CREATE OR REPLACE TEMP VIEW`` statements, in order.
    query
        The final parameterized ``SELECT``.
    params
        The named parameters of ``query``.
    """

    name: str
    requires: tuple[str, ...]
    setup: tuple[str, ...]
    query: str
    params: frozenset[str]


def split_sql(text: str, where: str, *, ends_with_select: bool = True) -> tuple[tuple[str, ...], list[Any]]:
    """A ``.sql`` file's ``-- requires:`` names and its statements; one that should end with a
    ``SELECT`` (``ends_with_select``) and does not is a :class:`QueryError` naming ``where``."""
    match = _REQUIRES.search(text)
    requires = tuple(r.strip() for r in match.group(1).split(",")) if match else ()
    statements = duckdb.extract_statements(text)
    if ends_with_select and (not statements or statements[-1].type != duckdb.StatementType.SELECT):
        raise QueryError(f"{where} must end with a SELECT over its view")
    return requires, statements


def load_sql(
    package: str, name: str, missing: str, *, ends_with_select: bool = True
) -> tuple[tuple[str, ...], list[Any]]:
    """:func:`split_sql` of ``<package>/<name>.sql`` (``package`` dotted, e.g. ``profiles.sql``), read through
    :mod:`importlib.resources`; no such file is a :class:`NotFoundError` saying ``missing``."""
    resource = resources.files(package).joinpath(f"{name}.sql")
    if not resource.is_file():
        raise NotFoundError(missing)
    where = f"{package.replace('.', '/')}/{name}.sql"
    return split_sql(resource.read_text(encoding="utf-8"), where, ends_with_select=ends_with_select)


def execute_setup(con: duckdb.DuckDBPyConnection, statements: tuple[str, ...], where: str) -> None:
    """Run a SQL file's setup statements (its views and macros); a DuckDB error names the file, ``where``."""
    try:
        for statement in statements:
            con.execute(statement)
    except duckdb.Error as exc:
        raise QueryError(f"{where}: {exc}") from exc


@cache
def sql_file(name: str) -> SqlFile:
    """Load and split ``profiles/sql/<name>.sql``."""
    missing = f"no SQL concept {name!r} in profiles/sql (known: {', '.join(Concept)})"
    requires, statements = load_sql("profiles.sql", name, missing)
    return SqlFile(
        name=name,
        requires=requires,
        setup=tuple(s.query for s in statements[:-1]),
        query=statements[-1].query,
        params=frozenset(statements[-1].named_parameters),
    )


def install(con: duckdb.DuckDBPyConnection, name: str) -> None:
    """Create the temp views of ``name`` and of everything it requires on ``con`` (once per connection)."""
    existing = {
        row[0] for row in con.execute("SELECT view_name FROM duckdb_views() WHERE temporary").fetchall()
    }
    _install(con, name, existing)


def _install(con: duckdb.DuckDBPyConnection, name: str, existing: set[str]) -> None:
    if name in existing:
        return
    spec = sql_file(name)
    for dep in spec.requires:
        _install(con, dep, existing)
    execute_setup(con, spec.setup, f"profiles/sql/{name}.sql")
    existing.add(name)


def relation(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> duckdb.DuckDBPyRelation:
    """The concept's final query as a lazy DuckDB relation (for further SQL or ``.to_arrow_table()``).

    Parameters
    ----------
    con
        A connection with the store's tables.
    name
        A :class:`Concept` value.
    **params
        The query's bound parameters (``job_id``, and ``k`` for stragglers).
    """
    spec = sql_file(name)
    missing = spec.params - params.keys()
    if missing:
        raise QueryError(f"{name}: missing parameters {sorted(missing)}")
    install(con, name)
    try:
        return con.sql(spec.query, params={k: params[k] for k in spec.params})
    except duckdb.Error as exc:
        raise QueryError(f"profiles/sql/{name}.sql: {exc}") from exc


def all_jobs(con: duckdb.DuckDBPyConnection, name: str) -> duckdb.DuckDBPyRelation:
    """The concept's view over every job of the store, as a relation."""
    install(con, name)
    return con.view(name)


def frame(con: duckdb.DuckDBPyConnection, name: str, **params: Any) -> pd.DataFrame:
    """The concept's final query as a pandas DataFrame."""
    rel = relation(con, name, **params)
    try:
        table = rel.to_arrow_table()
    except duckdb.Error as exc:
        raise QueryError(f"profiles/sql/{name}.sql: {exc}") from exc
    # DuckDB sums of BIGINT are HUGEINT, Arrow decimals: floats, like DuckDB's own df()
    for i, field in enumerate(table.schema):
        if pa.types.is_decimal(field.type):
            table = table.set_column(i, field.name, table.column(i).cast(pa.float64()))
    # via Arrow: strings stay Arrow-backed (no Python object per cell), integers
    # become nullable Int64 rather than floats where a column has NULLs
    frame: pd.DataFrame = table.to_pandas(types_mapper=_pandas_type)
    return frame


# -- one function per concept (notebook API) ---------------------------------------------------


def job_summary(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """One row: the job's identity, times and attempt counts (``job_summary.sql``)."""
    return frame(con, Concept.JOB_SUMMARY, job_id=job_id)


def timeline(con: duckdb.DuckDBPyConnection, job_id: str, *, slots: bool = True) -> pd.DataFrame:
    """Every attempt of the job with start, end, host and (``slots=True``) a slot lane per host.

    See ``timeline.sql`` for the columns; ``slot`` is added by :func:`assign_slots`.
    """
    df = frame(con, Concept.TIMELINE, job_id=job_id)
    return assign_slots(df) if slots else df


def timed(timeline_df: pd.DataFrame) -> pd.DataFrame:
    """The attempts of a :func:`timeline` frame that have a duration: both times known and the
    finish not before the start (``timeline.sql`` leaves ``dur_ms`` NULL otherwise)."""
    return timeline_df[timeline_df["dur_ms"].notna()]


def slot_occupancy(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Running attempts per task type as a step function of time (``slot_occupancy.sql``)."""
    return frame(con, Concept.SLOT_OCCUPANCY, job_id=job_id)


def waves(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Map and reduce waves (``waves.sql``)."""
    return frame(con, Concept.WAVES, job_id=job_id)


def slowstart(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """The reduce slow-start point (``slowstart.sql``)."""
    return frame(con, Concept.SLOWSTART, job_id=job_id)


def phases(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """One row per (attempt, phase) from the best source (``phases.sql``)."""
    return frame(con, Concept.PHASES, job_id=job_id)


def phases_history(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Phases from history times only (``phases_history.sql``)."""
    return frame(con, Concept.PHASES_HISTORY, job_id=job_id)


def shuffle_gap(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Last map end vs last shuffle end (``shuffle_gap.sql``, HiTune Fig. 16)."""
    return frame(con, Concept.SHUFFLE_GAP, job_id=job_id)


def skew_hosts(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Per-host normalized durations (``skew_hosts.sql``, HiTune Fig. 20)."""
    return frame(con, Concept.SKEW_HOSTS, job_id=job_id)


def stragglers(con: duckdb.DuckDBPyConnection, job_id: str, k: float = DEFAULT_STRAGGLER_K) -> pd.DataFrame:
    """Attempts and phases at least ``k`` times their phase median (``stragglers.sql``)."""
    if not k > 0:
        raise QueryError(f"stragglers: k must be positive, got {k}")
    return frame(con, Concept.STRAGGLERS, job_id=job_id, k=float(k))


def data_skew(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Per-task input/shuffle bytes and records (``data_skew.sql``)."""
    return frame(con, Concept.DATA_SKEW, job_id=job_id)


def wasted(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Failed and killed attempts and the time they took (``wasted.sql``)."""
    return frame(con, Concept.WASTED, job_id=job_id)


def wasted_summary(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Wasted attempts and time per task type and status (``wasted_summary.sql``)."""
    return frame(con, Concept.WASTED_SUMMARY, job_id=job_id)


def attempt_counters(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """The pivoted counters of each attempt (``_attempt_counters.sql``)."""
    return frame(con, Concept.ATTEMPT_COUNTERS, job_id=job_id)


def counter_totals(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Counters summed over successful map and reduce attempts (``counter_totals.sql``)."""
    return frame(con, Concept.COUNTER_TOTALS, job_id=job_id)


def job_counters(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """The job-level counters of the history (``job_counters.sql``)."""
    return frame(con, Concept.JOB_COUNTERS, job_id=job_id)


def reduce_stages(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """First/typical shuffle and reduce-phase spans of successful reduces (``reduce_stages.sql``)."""
    return frame(con, Concept.REDUCE_STAGES, job_id=job_id)


def map_task_waves(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Successful map attempts with their wave and duration (``map_task_waves.sql``)."""
    return frame(con, Concept.MAP_TASK_WAVES, job_id=job_id)


def attempt_concurrency(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.DataFrame:
    """Every timed attempt, with how many of the job's ran on its host meanwhile (``attempt_concurrency.sql``)."""
    return frame(con, Concept.ATTEMPT_CONCURRENCY, job_id=job_id)


def job_conf(con: duckdb.DuckDBPyConnection, job_id: str) -> dict[str, str]:
    """The job's configuration as a dict (``job_conf.sql``)."""
    df = frame(con, Concept.JOB_CONF, job_id=job_id)
    return {str(k): str(v) for k, v in zip(df["key"], df["value"], strict=True) if v is not None}


def other_sizes(con: duckdb.DuckDBPyConnection, job_id: str) -> list[str]:
    """Other successful runs of the job's name at other sizes, smallest first (``other_sizes.sql``)."""
    return [str(j) for j in frame(con, Concept.OTHER_SIZES, job_id=job_id)["job_id"]]


def job_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every job id the store knows, sorted."""
    install(con, Concept.JOB_SUMMARY)
    return [row[0] for row in con.execute("SELECT job_id FROM job_summary ORDER BY job_id").fetchall()]


def require_job(con: duckdb.DuckDBPyConnection, job_id: str) -> pd.Series:
    """The job's summary row, or :class:`NotFoundError` saying how to find job ids."""
    summary = job_summary(con, job_id)
    if summary.empty:
        raise NotFoundError(
            f"job {job_id!r} is not in the store; list the jobs with `phaseline jobs` "
            "or ingest its history file first"
        )
    return summary.iloc[0]


@dataclass(frozen=True, slots=True)
class JobFrames:
    """What most views of one job read, queried once: its summary row, attempts and phases.

    The report, the timeline files, the critical path and the profile of a job
    each read these three; :func:`~profiles.analyze.analyze_job` queries them
    once and passes them on.  Readers take them as they are (no view modifies
    a frame it is given).
    """

    job_id: str
    summary: pd.Series
    attempts: pd.DataFrame  # :func:`timeline` with ``slots=False``
    phases: pd.DataFrame

    @classmethod
    def query(cls, con: duckdb.DuckDBPyConnection, job_id: str) -> JobFrames:
        """The job's frames; :class:`NotFoundError` when it is not in the store."""
        return cls(job_id, require_job(con, job_id), timeline(con, job_id, slots=False), phases(con, job_id))

    def timeline(self) -> pd.DataFrame:
        """The attempts with their ``slot`` lanes, as :func:`timeline` gives them."""
        return assign_slots(self.attempts)


# -- the store as a whole -----------------------------------------------------------------------


def job_list(con: duckdb.DuckDBPyConnection) -> duckdb.DuckDBPyRelation:
    """Every job, one row each (``job_list.sql``): identity, times, ``duration_s``, task counts, format."""
    return relation(con, "job_list")


def job_name_counts(con: duckdb.DuckDBPyConnection) -> dict[str | None, int]:
    """How many jobs carry each job name (``job_names.sql``)."""
    return {name: int(n) for name, n in relation(con, "job_names").fetchall()}


def table_rows(con: duckdb.DuckDBPyConnection, table: str) -> int:
    """Rows of the store's table (view) ``table``."""
    return len(con.table(table))


def job_has_rows(con: duckdb.DuckDBPyConnection, table: str, job_id: str) -> bool:
    """Whether the store's table (view) ``table`` holds any row of ``job_id``."""
    rel = con.table(table).filter(duckdb.ColumnExpression("job_id") == duckdb.ConstantExpression(job_id))
    return bool(rel.limit(1).fetchall())
