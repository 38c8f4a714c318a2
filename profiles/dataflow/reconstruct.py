"""Rebuild a job's dataflow execution from thread samples (Dai et al. 2011, section 5.3).

1. Every distinct execution position (stack, thread name) of the job's samples
   is resolved against a :class:`~profiles.dataflow.spec.DataflowSpec`: mapped
   to one vertex, or unmapped / ambiguous (kept, counted, reported).
2. Samples are attributed to attempts (their own target, or the thread id
   joined with the task-attempt logs, ``dataflow_sample_attempts.sql``); the
   sampling period is estimated on these thread traces (one per host, attempt
   and thread: every task JVM's main thread is thread 1).
3. Per attempt, thread and vertex, the sample trace ordered by time gives one
   range: first to last sample, node, busy and idle sample counts
   (``dataflow_sample_groups.sql``, ``dataflow_instance_threads.sql``).  A range
   is a vertex instance, except for a vertex a Thread Group Pool runs: its
   ranges in the threads of one attempt are one instance (section 5.3: "multiple
   ranges each in a different thread"; ``dataflow_instances.sql``).

:func:`reconstruct` returns the instances (``vertex_instances`` rows), the
threads of each thread group instance and what could not be mapped;
:func:`store_instances` writes them to the store as a derived source, replacing
an earlier reconstruction of the same job.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

import duckdb
import orjson
import pyarrow as pa

from phaseline import schemas
from phaseline.errors import NotFoundError, QueryError
from phaseline.schemas import SourceStatus
from phaseline.store import Store
from profiles.dataflow.spec import DataflowSpec, MatchStatus

#: Sampling period assumed when a job's samples give no estimate (JFR's default, HiTune's 20 ms).
DEFAULT_PERIOD_MS = 20.0
DERIVED_PREFIX = "dataflow:"
#: The ``vertex_breakdown`` kind of a thread group instance's threads: one row per thread (its
#: id, its name as ``name``, its samples), so that the hotspot and log queries find the samples
#: and log lines of every thread of the group, not only of the instance's own ``thread_id``.
THREAD_KIND = "thread"


def sql(name: str) -> str:
    """The text of ``profiles/sql/<name>.sql``."""
    return (resources.files("profiles.sql") / f"{name}.sql").read_text(encoding="utf-8")


@dataclass(frozen=True, slots=True)
class UnmappedPosition:
    """An execution position no vertex (or more than one) claims, with how many samples hit it."""

    status: MatchStatus
    thread_name: str | None
    top_frame: str | None
    bottom_frame: str | None
    candidates: tuple[str, ...]
    samples: int


@dataclass(frozen=True, slots=True)
class Reconstruction:
    """The vertex instances of one job and the bookkeeping of its samples."""

    job_id: str
    instances: pa.Table  # schema of vertex_instances (without source_sha256)
    samples: int
    mapped: int
    unmapped: int
    ambiguous: int
    unattributed: int  # mapped to a vertex, but on a thread bound to no attempt
    period_ms: float
    unmapped_positions: tuple[UnmappedPosition, ...]
    #: vertex_breakdown rows (without source_sha256), kind :data:`THREAD_KIND`: the threads of each
    #: thread group instance
    group_threads: pa.Table


def _resolve_positions(con: duckdb.DuckDBPyConnection, job_id: str, spec: DataflowSpec) -> pa.Table:
    positions = con.execute(
        """
        SELECT s.stack_id, s.thread_name, st.frames
        FROM (SELECT DISTINCT stack_id, thread_name FROM samples
              WHERE job_id = $job_id AND stack_id IS NOT NULL) s
        JOIN (SELECT stack_id, any_value(frames) AS frames FROM stacks GROUP BY stack_id) st
          ON st.stack_id = s.stack_id
        """,
        {"job_id": job_id},
    ).fetchall()
    ids, names, vertices, statuses = [], [], [], []
    for sid, name, frames in positions:
        res = spec.resolve(frames, name)
        ids.append(sid)
        names.append(name)
        vertices.append(res.vertex if res.vertex else ",".join(res.candidates) or None)
        statuses.append(res.status.value)
    return pa.table(
        {
            "stack_id": pa.array(ids, pa.int64()),
            "thread_name": pa.array(names, pa.string()),
            "vertex": pa.array(vertices, pa.string()),
            "status": pa.array(statuses, pa.string()),
        }
    )


def _period(con: duckdb.DuckDBPyConnection, job_id: str, period_ms: float | None) -> float:
    """The sampling period: ``period_ms``, else estimated on the thread traces of ``_sample_attempts``."""
    if period_ms is not None:
        if period_ms <= 0:
            raise QueryError(f"the sampling period must be positive, got {period_ms}")
        return period_ms
    row = con.execute(sql("dataflow_sample_period"), {"job_id": job_id}).fetchone()
    return float(row[0]) if row and row[0] else DEFAULT_PERIOD_MS


def reconstruct(
    con: duckdb.DuckDBPyConnection, job_id: str, spec: DataflowSpec, *, period_ms: float | None = None
) -> Reconstruction:
    """Rebuild the vertex instances of ``job_id`` from its samples.

    Parameters
    ----------
    con
        A connection from :meth:`phaseline.store.Store.connect` (views ``samples``,
        ``stacks``, ``attempt_events``, ``attempts``).
    job_id
        The job.
    spec
        The dataflow specification (e.g. :func:`~profiles.dataflow.spec.shipped_spec`).
    period_ms
        The sampling period; estimated from the samples when omitted.

    Returns
    -------
    Reconstruction
        The instances (one row per attempt, thread and vertex; per attempt and
        vertex for a thread group pool's vertex) and counts of mapped, unmapped,
        ambiguous and unattributed samples.
    """
    total = con.execute("SELECT count(*) FROM samples WHERE job_id = $job_id", {"job_id": job_id}).fetchone()
    if not total or total[0] == 0:
        raise NotFoundError(f"no samples for job {job_id!r}; ingest its .jfr / jstack / HiTune sample files first")
    con.register("_stack_vertex", _resolve_positions(con, job_id, spec))
    try:
        con.execute(sql("dataflow_sample_attempts"))  # the table macro _sample_attempts
        period = _period(con, job_id, period_ms)
        # grouped inside DuckDB: ten million samples never leave it as rows
        con.execute("CREATE OR REPLACE TEMP TABLE _groups AS " + sql("dataflow_sample_groups"), {"job_id": job_id})
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _threads AS " + sql("dataflow_instance_threads"),
            {"period_ms": period, "group_vertices": list(spec.group_vertices())},
        )
        instances = con.sql(sql("dataflow_instances")).to_arrow_table()
        group_threads = con.sql(sql("dataflow_group_threads"), params={"kind": THREAD_KIND}).to_arrow_table()
        counts = con.execute(sql("dataflow_sample_counts")).fetchone()
        unmapped_rows = con.execute(sql("dataflow_unmapped")).fetchall()
    finally:
        con.execute("DROP TABLE IF EXISTS _groups")
        con.execute("DROP TABLE IF EXISTS _threads")
        con.execute("DROP MACRO TABLE IF EXISTS _sample_attempts")
        with contextlib.suppress(duckdb.Error):
            con.unregister("_stack_vertex")
    assert counts is not None
    positions = tuple(
        UnmappedPosition(
            MatchStatus.AMBIGUOUS if status == "ambiguous" else MatchStatus.UNMAPPED,
            name, top, bottom, tuple(cands.split(",")) if status == "ambiguous" and cands else (), int(n),
        )
        for status, name, top, bottom, cands, n in unmapped_rows
    )
    return Reconstruction(
        job_id, _as_table(instances, schemas.VERTEX_INSTANCES), int(total[0]), int(counts[0]), int(counts[1]),
        int(counts[2]), int(counts[3]), period, positions, _as_table(group_threads, schemas.VERTEX_BREAKDOWN),
    )


def _as_table(table: pa.Table, spec: schemas.TableSpec) -> pa.Table:
    """``table`` with the columns and types of a store table (without source_sha256)."""
    cols = [f for f in spec.schema if f.name != "source_sha256"]
    return table.select([f.name for f in cols]).cast(pa.schema(cols))


def store_instances(store: Store, result: Reconstruction, spec: DataflowSpec, inputs: Sequence[str] = ()) -> int:
    """Write a reconstruction's instances to the store as the derived source ``dataflow:<job_id>``.

    With them, the threads of its thread group instances (``vertex_breakdown``,
    kind :data:`THREAD_KIND`).  A later reconstruction of the same job (another
    spec, more samples) replaces it.  Returns the number of instances written.
    """
    digest = hashlib.sha256()
    for part in (result.job_id, spec.path, *sorted(inputs), str(result.instances.num_rows)):
        digest.update(part.encode())
        digest.update(b"\0")
    digest.update(orjson.dumps(result.instances.to_pylist()))
    digest.update(orjson.dumps(result.group_threads.to_pylist()))
    sha = digest.hexdigest()
    with store.begin() as txn:
        staged = txn.stage(f"{DERIVED_PREFIX}{result.job_id}", sha, 0, "dataflow-reconstruction")
        staged.record_tables = ("vertex_instances", "vertex_breakdown")
        for row in result.instances.to_pylist():
            staged.add("vertex_instances", row)
        for row in result.group_threads.to_pylist():
            staged.add("vertex_breakdown", row)
        staged.finish(SourceStatus.LANDED, events_read=result.instances.num_rows + result.group_threads.num_rows)
        txn.commit()
    return int(result.instances.num_rows)


def dataflow_query(con: duckdb.DuckDBPyConnection, name: str, **params: object) -> list[dict[str, Any]]:
    """Run ``profiles/sql/dataflow_<name>.sql`` with bound parameters; rows as dicts."""
    return dataflow_table(con, name, **params)[1]


def dataflow_table(
    con: duckdb.DuckDBPyConnection, name: str, **params: object
) -> tuple[list[str], list[dict[str, Any]]]:
    """:func:`dataflow_query` with the query's column names (which no row gives when there is none)."""
    try:
        con.execute(sql("dataflow_job_instances"))  # the table macros the queries share
        cur = con.execute(sql(f"dataflow_{name}"), params)
        cols = [d[0] for d in cur.description or ()]
        return cols, [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]
    except duckdb.Error as exc:
        raise QueryError(f"dataflow_{name}.sql failed: {exc}") from exc
