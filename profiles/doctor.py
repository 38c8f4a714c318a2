"""Diagnose jobs: heuristics with severities, one ``.sql`` file each, thresholds in one config.

The MapReduce heuristics of Dr. Elephant (LinkedIn; ``linkedin/dr-elephant``,
``app/com/linkedin/drelephant/mapreduce/heuristics/*.java`` and ``app-conf/HeuristicConf.xml``:
skew, GC, task time, mapper speed, spill, memory, shuffle and sort, exceptions, distributed
cache), as far as the store's data allows, and phaseline's own, which the phase data makes
possible (spills per map from the task logs, map-side merge passes, reduces waiting on the last
map wave, stragglers apart from skew, idle reduce slots, uncompressed map output).

Each heuristic is ``profiles/sql/doctor/<name>.sql``: helper views over every job, then a final
``SELECT`` with the bound ``$job_id`` (NULL: every job, a row each) and the heuristic's thresholds (from
``profiles/doctor.toml``, which ``--config FILE`` overrides) giving ``level`` (0 None ..
4 Critical), ``value``, ``threshold``, ``detail``, ``recommendation``, and ``skipped`` (why the
job's data cannot support it; the heuristic is then not graded).

>>> import duckdb
>>> from phaseline import schemas
>>> con = duckdb.connect()
>>> for name, spec in schemas.TABLES.items():
...     _ = con.register(name, spec.schema.empty_table())
>>> diagnose(con, "job_1").findings
()
"""

from __future__ import annotations

import enum
import itertools
import json
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb

from phaseline.errors import ConfigError, NotFoundError, QueryError
from profiles import queries

#: The version of the configuration's shape; a ``--config`` file saying another is refused.
CONFIG_VERSION = 1

_PACKAGE = "profiles.sql.doctor"
_CONCEPTS = frozenset(queries.Concept)


class Severity(enum.IntEnum):
    """Dr. Elephant's severities, ordered (``Severity.SEVERE > Severity.LOW``)."""

    NONE = 0
    LOW = 1
    MODERATE = 2
    SEVERE = 3
    CRITICAL = 4

    @property
    def label(self) -> str:
        """``None``, ``Low``, ``Moderate``, ``Severe``, ``Critical``."""
        return self.name.capitalize()


class Heuristic(enum.StrEnum):
    """The heuristics, in the order findings are listed (Dr. Elephant's first)."""

    MAPPER_SKEW = "mapper_skew"
    MAPPER_GC = "mapper_gc"
    MAPPER_TIME = "mapper_time"
    MAPPER_SPEED = "mapper_speed"
    MAPPER_SPILL = "mapper_spill"
    MAPPER_MEMORY = "mapper_memory"
    REDUCER_SKEW = "reducer_skew"
    REDUCER_GC = "reducer_gc"
    REDUCER_TIME = "reducer_time"
    REDUCER_MEMORY = "reducer_memory"
    SHUFFLE_SORT = "shuffle_sort"
    EXCEPTIONS = "exceptions"
    DISTRIBUTED_CACHE = "distributed_cache"
    MAP_SPILLS = "map_spills"
    MERGE_PASSES = "merge_passes"
    SHUFFLE_WAIT = "shuffle_wait"
    STRAGGLERS = "stragglers"
    REDUCE_SLOTS_IDLE = "reduce_slots_idle"
    MAP_OUTPUT_COMPRESSION = "map_output_compression"


@dataclass(frozen=True, slots=True)
class Finding:
    """One heuristic's verdict on one job (the keys of ``phaseline doctor --format json``)."""

    job_id: str
    heuristic: Heuristic
    severity: Severity
    value: float | None
    threshold: str
    detail: str
    recommendation: str

    def to_dict(self) -> dict[str, Any]:
        """The output contract: ``job_id, heuristic, severity, value, threshold, detail, recommendation``."""
        return {
            "job_id": self.job_id,
            "heuristic": str(self.heuristic),
            "severity": self.severity.label,
            "value": self.value,
            "threshold": self.threshold,
            "detail": self.detail,
            "recommendation": self.recommendation,
        }


@dataclass(frozen=True, slots=True)
class Skipped:
    """A heuristic the job's data cannot support, and why."""

    job_id: str
    heuristic: Heuristic
    reason: str


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """Every finding of one job, and the heuristics skipped."""

    job_id: str
    findings: tuple[Finding, ...]
    skipped: tuple[Skipped, ...]

    @property
    def worst(self) -> Severity:
        """The worst severity among the findings (``NONE`` without any)."""
        return max((f.severity for f in self.findings), default=Severity.NONE)


# -- configuration ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DoctorConfig:
    """The thresholds: heuristic -> parameter -> a number or the four limits of a scale."""

    version: int
    params: Mapping[Heuristic, Mapping[str, float | tuple[float, ...]]]

    @classmethod
    def default(cls) -> DoctorConfig:
        """The shipped thresholds (``profiles/doctor.toml``)."""
        text = resources.files("profiles").joinpath("doctor.toml").read_text(encoding="utf-8")
        return _parse_config(tomllib.loads(text), "profiles/doctor.toml", None)

    @classmethod
    def load(cls, path: Path) -> DoctorConfig:
        """The defaults, with what ``path`` (TOML, or JSON by its ``.json`` suffix) changes.

        Raises :class:`~phaseline.errors.ConfigError` naming the file and key for an unknown
        heuristic or parameter, a list that is not four increasing (or decreasing) numbers, or
        another ``version``.
        """
        try:
            raw = path.read_bytes()
        except OSError as exc:
            raise ConfigError(f"{path}: cannot read the doctor configuration: {exc.strerror}") from exc
        try:
            data = json.loads(raw) if path.suffix.lower() == ".json" else tomllib.loads(raw.decode("utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:  # (TOMLDecodeError and JSONDecodeError are ValueErrors)
            raise ConfigError(f"{path}: not a {'JSON' if path.suffix.lower() == '.json' else 'TOML'} file: {exc}") from exc
        return _parse_config(data, str(path), cls.default())


def _parse_config(data: Any, where: str, base: DoctorConfig | None) -> DoctorConfig:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: the configuration must be a table of heuristics")
    version = data.get("version", CONFIG_VERSION if base is not None else None)
    if version != CONFIG_VERSION:
        raise ConfigError(f"{where}: version = {version!r}; this phaseline reads version {CONFIG_VERSION}")
    params: dict[Heuristic, dict[str, float | tuple[float, ...]]] = (
        {h: dict(p) for h, p in base.params.items()} if base is not None else {}
    )
    for name, table in data.items():
        if name == "version":
            continue
        try:
            heuristic = Heuristic(name)
        except ValueError:
            raise ConfigError(f"{where}: [{name}]: no such heuristic; known: {', '.join(Heuristic)}") from None
        if not isinstance(table, dict):
            raise ConfigError(f"{where}: [{name}] must be a table of thresholds")
        known = params.setdefault(heuristic, {})
        for key, value in table.items():
            if base is not None and key not in known:
                raise ConfigError(f"{where}: [{name}] {key}: no such threshold; known: {', '.join(sorted(known))}")
            known[key] = _threshold(value, f"{where}: [{name}] {key}")
    missing = [h for h in Heuristic if h not in params]
    if missing:
        raise ConfigError(f"{where}: no thresholds for {', '.join(missing)}")
    return DoctorConfig(CONFIG_VERSION, {h: dict(params[h]) for h in Heuristic})


def _threshold(value: Any, where: str) -> float | tuple[float, ...]:
    if isinstance(value, bool):
        raise ConfigError(f"{where}: {value!r} is not a number")
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, list) and len(value) == 4 and all(
        isinstance(v, int | float) and not isinstance(v, bool) for v in value
    ):
        limits = tuple(float(v) for v in value)
        pairs = list(itertools.pairwise(limits))
        if all(a <= b for a, b in pairs) or all(a >= b for a, b in pairs):
            return limits
        raise ConfigError(f"{where}: the four limits {value} must rise (or fall) from Low to Critical")
    raise ConfigError(f"{where}: {value!r} is neither a number nor a list of four (Low, Moderate, Severe, Critical)")


# -- the SQL ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class DoctorSql:
    """One parsed ``profiles/sql/doctor/<name>.sql``: its setup statements and (heuristics) final query."""

    name: str
    requires: tuple[str, ...]
    setup: tuple[str, ...]
    query: str | None
    params: frozenset[str]


#: Jobs that are at least this share of the store's are graded together, a query a heuristic over every job
#: (:func:`diagnose_together`): such a query costs a few one-job ones (0.38 s against 0.06 s, 2026-11-30).
TOGETHER_SHARE = 0.5


@cache
def doctor_sql(name: str) -> DoctorSql:
    """Load and split ``profiles/sql/doctor/<name>.sql`` (helpers, ``_*``, have no final query)."""
    helper = name.startswith("_")
    missing = f"no doctor SQL {name!r} in profiles/sql/doctor"
    requires, statements = queries.load_sql(_PACKAGE, name, missing, ends_with_select=not helper)
    setup = statements if helper else statements[:-1]
    return DoctorSql(
        name=name,
        requires=requires,
        setup=tuple(s.query for s in setup),
        query=None if helper else statements[-1].query,
        params=frozenset() if helper else frozenset(statements[-1].named_parameters),
    )


def install(con: duckdb.DuckDBPyConnection, name: str, done: set[str] | None = None) -> None:
    """Create the views (and macros) of a doctor SQL file and of what it requires, once per call chain.

    A requirement that names a profiles concept (:class:`profiles.queries.Concept`: ``stragglers``,
    ``data_skew``) is that concept's view; any other is a doctor file (``_severity``, ``_skew``).
    """
    done = set() if done is None else done
    if name in done:
        return
    spec = doctor_sql(name)
    for dep in spec.requires:
        if dep in _CONCEPTS:
            queries.install(con, dep)
        else:
            install(con, dep, done)
    queries.execute_setup(con, spec.setup, f"profiles/sql/doctor/{name}.sql")
    done.add(name)


def heuristic_rows(
    con: duckdb.DuckDBPyConnection, heuristic: Heuristic, job_id: str | None, config: DoctorConfig
) -> list[dict[str, Any]]:
    """The final query's rows of ``heuristic``, as dicts: at most one, ``job_id``'s; with ``None``, one a job
    of the store (every job graded by one query)."""
    spec = doctor_sql(heuristic)
    assert spec.query is not None
    params: dict[str, Any] = {"job_id": job_id}
    for key, value in config.params[heuristic].items():
        params[key] = list(value) if isinstance(value, tuple) else value
    missing = spec.params - params.keys()
    if missing:
        raise ConfigError(f"[{heuristic}]: the configuration lacks {', '.join(sorted(missing))}")
    try:
        cursor = con.execute(spec.query, {k: params[k] for k in spec.params})
        names = [d[0] for d in cursor.description or ()]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    except duckdb.Error as exc:
        raise QueryError(f"profiles/sql/doctor/{heuristic}.sql: {exc}") from exc


def grade(job_id: str, heuristic: Heuristic, row: Mapping[str, Any] | None) -> Finding | Skipped:
    """One heuristic's row for ``job_id`` (``None``: the query gave the job none) as a finding, or why not."""
    if row is None:
        return Skipped(job_id, heuristic, "the job has no rows to grade")
    if row.get("skipped") is not None or row.get("level") is None:
        return Skipped(job_id, heuristic, row.get("skipped") or "no figure to grade")
    value = row.get("value")
    return Finding(
        job_id=job_id,
        heuristic=heuristic,
        severity=Severity(int(row["level"])),
        value=None if value is None else float(value),
        threshold=str(row.get("threshold") or ""),
        detail=str(row.get("detail") or ""),
        recommendation=str(row.get("recommendation") or ""),
    )


def diagnose(
    con: duckdb.DuckDBPyConnection,
    job_id: str,
    config: DoctorConfig | None = None,
    heuristics: Iterable[Heuristic] = tuple(Heuristic),
) -> Diagnosis:
    """Every heuristic on one job: a :class:`Finding` where the data allows, a :class:`Skipped` where not.

    A job that is not in the store gets no finding and every heuristic skipped
    (:func:`diagnose_jobs` refuses it by name instead).
    """
    (diagnosis,) = _graded(con, [job_id], job_id, config, heuristics)
    return diagnosis


def _graded(
    con: duckdb.DuckDBPyConnection,
    jobs: list[str],
    query_job: str | None,
    config: DoctorConfig | None,
    heuristics: Iterable[Heuristic],
) -> list[Diagnosis]:
    """Each of ``jobs`` graded by every heuristic, whose query is run once for ``query_job`` (``None``:
    for every job of the store); a job the query gives no row is skipped by that heuristic."""
    config = DoctorConfig.default() if config is None else config
    graded: dict[str, list[Finding | Skipped]] = {j: [] for j in jobs}
    done: set[str] = set()
    for heuristic in heuristics:
        install(con, heuristic, done)
        rows: dict[str, dict[str, Any]] = {}
        for row in heuristic_rows(con, heuristic, query_job, config):
            rows.setdefault(str(row["job_id"]), row)  # a job's first row
        for j in jobs:
            graded[j].append(grade(j, heuristic, rows.get(j)))
    return [
        Diagnosis(j, tuple(g for g in gs if isinstance(g, Finding)), tuple(g for g in gs if isinstance(g, Skipped)))
        for j, gs in graded.items()
    ]


def diagnose_jobs(
    con: duckdb.DuckDBPyConnection, job_ids: Iterable[str] = (), config: DoctorConfig | None = None
) -> list[Diagnosis]:
    """:func:`diagnose` for each of ``job_ids`` (every job of the store when empty); an unknown id is
    :class:`~phaseline.errors.NotFoundError`.

    Where the jobs are at least :data:`TOGETHER_SHARE` of the store's, each heuristic grades them all in one
    query (:func:`diagnose_together`), else each job is queried alone.
    """
    wanted = list(dict.fromkeys(job_ids))
    known = queries.job_ids(con)
    unknown = [j for j in wanted if j not in set(known)]
    if unknown:
        raise NotFoundError(
            f"job(s) {', '.join(map(repr, unknown))} not in the store; list them with `phaseline jobs`"
        )
    config = DoctorConfig.default() if config is None else config
    jobs = wanted or known
    if len(jobs) > 1 and len(jobs) >= TOGETHER_SHARE * len(known):
        return diagnose_together(con, jobs, config)
    return [diagnose(con, j, config) for j in jobs]


def diagnose_together(
    con: duckdb.DuckDBPyConnection,
    job_ids: Iterable[str],
    config: DoctorConfig | None = None,
    heuristics: Iterable[Heuristic] = tuple(Heuristic),
) -> list[Diagnosis]:
    """:func:`diagnose` of each of ``job_ids``, each heuristic's query run once over every job of the store.

    The same findings as one query a job: a heuristic's query with ``$job_id`` NULL gives each job the row
    it gives that job alone (its views group by job).  A one-job query reads only that job's rows where
    the store's files allow it, the query of every job all of them: on a 113-job store one heuristic took
    0.06 s for one job and 0.38 s for all (2026-11-30).
    """
    return _graded(con, list(dict.fromkeys(job_ids)), None, config, heuristics)
