"""A run of one JVM on its warm clock: what its tasks took without the JIT's compiles.

The local engine compiles in the thread that needs the code (``-XX:-BackgroundCompilation``,
:data:`platform_model.engine.job.MEASURING_JVM_FLAGS`), so every compile is time a task stood still,
and JFR's ``jdk.Compilation`` events (the engine's ``jit.jfr``, :mod:`ingest.jfr`) say when and how
long.  A small run is mostly compiling: sort at 4 MiB (4 maps, one slot), its second reduce 440 ms
of which 324 ms compiling, its later maps 78-135 ms of which 24-81 ms; at 32 MiB the second reduce
370 ms, 117 ms compiling (2026-12-02).  Priced per record, that compile time made a run eight times
larger pay it eight times (groupby +66 to +109 %, benchmarks/BACKTEST.md).  The compiles are the
code's, not the data's: the JVM compiles a method once it is hot, whatever the input.

Where a run's tasks ran one at a time (no two attempts of the job overlap: the local engine's one
map and one reduce slot), :func:`warm_clock` reads the job on its warm clock: every instant of the
job (attempts, tasks, phases, task-log events, the job's finish) moved earlier by the compile time
before it within the job's tasks, so each task, phase and completion time is what it took without
compiling; the compile time inside the tasks is the profile's one-time term
(:attr:`~profiles.profile.JobProfile.jit_one_time_ms`), which every model adds once per job
(:mod:`predict.jit_one_time`), as ARIA keeps the first wave's cost apart from the typical task's
(Verma et al. 2011, section 3).  Where tasks ran side by side a compile stalls one of them only, and
the run is read as it was.

The warm clock is a cursor of the store's connection whose views ``jobs``, ``tasks``, ``attempts``,
``attempt_phases`` and ``attempt_events`` shadow the store's for that job (temporary views over the
store's own, on that cursor alone): every query of the profiles stage reads it unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from phaseline.store.views import sql_string
from profiles import queries as q

__all__ = ["WarmClock", "frames_on_warm_clock", "merged_stalls", "warm_clock"]

#: Timestamps are whole milliseconds: an attempt that starts within this of the previous one's
#: finish followed it (the local engine starts the next task in the same millisecond or the next).
FOLLOW_MS = 1

#: The tables read on the warm clock, and their columns that are instants (epoch ms).
_INSTANTS: dict[str, tuple[str, ...]] = {
    "jobs": ("finish_ms",),
    "tasks": ("start_ms", "finish_ms"),
    "attempts": ("start_ms", "finish_ms", "map_finish_ms", "shuffle_finish_ms", "sort_finish_ms"),
    "attempt_phases": ("start_ms", "end_ms"),
    "attempt_events": ("ts_ms",),
}
#: What ``jit_compiles.sql`` reads besides them: the compiles, and which run directory holds which job.
_COMPILES_READ = ("system_samples", "sources", "events")


@dataclass(frozen=True, slots=True)
class WarmClock:
    """A job read without its compiles: ``con`` shows it on the warm clock; ``compile_ms`` is the
    compile time its tasks stood still, over ``compiles`` compiles."""

    con: duckdb.DuckDBPyConnection
    compile_ms: float
    compiles: int

    @property
    def evidence(self) -> str:
        """One line for the profile's evidence."""
        return (
            f"the JIT's compiles set apart ({self.compile_ms:.0f} ms over {self.compiles} compiles in its "
            "tasks, which ran one at a time in one JVM): costs from the tasks' time without them, which "
            "is added once per job"
        )


def merged_stalls(compiles: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Compiles ``(start_ms, dur_ms)`` as disjoint ``(start, end)`` intervals (two compiler threads may
    compile at once; the tasks stood still once).

    >>> merged_stalls([(0, 5), (3, 4), (10, 1)])
    [(0, 7), (10, 11)]
    """
    out: list[tuple[float, float]] = []
    for start, dur in sorted(compiles):
        end = start + max(dur, 0.0)
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _one_at_a_time(con: duckdb.DuckDBPyConnection, job_id: str) -> bool:
    rows = con.execute(
        "SELECT start_ms, finish_ms FROM attempts WHERE job_id = $job_id AND start_ms IS NOT NULL "
        "ORDER BY start_ms, finish_ms",
        {"job_id": job_id},
    ).fetchall()
    if not rows or any(finish is None for _, finish in rows):
        return False
    latest = rows[0][1]
    for start, finish in rows[1:]:
        if start < latest - FOLLOW_MS:
            return False
        latest = max(latest, finish)
    return True


def _shadow(cur: duckdb.DuckDBPyConnection, db: str, table: str, job_id: str) -> None:
    """``table`` on the warm clock for ``job_id`` (a temporary view over database ``db``'s, on ``cur``)."""
    warped = [f"CASE WHEN job_id = $job THEN _warm({c}) ELSE {c} END AS {c}" for c in _INSTANTS[table]]
    if table == "attempt_phases":  # a phase's length less the compiles inside it
        inside = "((end_ms - _warm(end_ms)) - (start_ms - _warm(start_ms)))"
        warped.append(f"CASE WHEN job_id = $job AND end_ms IS NOT NULL AND start_ms IS NOT NULL "
                      f"THEN greatest(0, dur_ms - {inside}) ELSE dur_ms END AS dur_ms")  # fmt: skip
        warped.append(f"CASE WHEN job_id = $job AND end_ms IS NOT NULL AND start_ms IS NOT NULL "
                      f"THEN greatest(0, dur_us - 1000 * {inside}) ELSE dur_us END AS dur_us")  # fmt: skip
    sql = f'SELECT * REPLACE ({", ".join(warped)}) FROM "{db}".main."{table}"'
    cur.execute(f'CREATE TEMP VIEW "{table}" AS {sql.replace("$job", sql_string(job_id))}')


def warm_clock(con: duckdb.DuckDBPyConnection, job_id: str) -> WarmClock | None:
    """The job on its warm clock (module docstring); ``None`` where it cannot be read so: no compiles
    recorded, tasks side by side, or tables that are not the store's views (a test's registered frames)."""
    ((db,),) = con.execute("SELECT current_database()").fetchall()
    stored = {t for (t,) in con.execute("SELECT table_name FROM information_schema.tables "
                                        "WHERE table_schema = 'main' AND table_catalog = $db", {"db": db})
              .fetchall()}  # fmt: skip
    if not stored.issuperset((*_INSTANTS, *_COMPILES_READ)):
        return None
    compiles = [(float(s), float(d)) for s, d in q.frame(con, "jit_compiles", job_id=job_id)
                .itertuples(index=False)]  # fmt: skip
    if not compiles or not _one_at_a_time(con, job_id):
        return None
    stalls = merged_stalls(compiles)
    cur = con.cursor()
    for (name,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE temporary").fetchall():
        cur.register(name, con.sql(f'SELECT * FROM "{name}"').to_arrow_table())  # the store's own
    before, rows = 0.0, []
    for start, end in stalls:
        rows.append((start, end, before))
        before += end - start
    cur.execute("CREATE TEMP TABLE _jit_stalls (s DOUBLE, e DOUBLE, before DOUBLE)")
    cur.executemany("INSERT INTO _jit_stalls VALUES (?, ?, ?)", rows)
    # an instant less the compile time before it: the last stall that began before it, and all before that
    cur.execute("CREATE TEMP MACRO _warm(t) AS CAST(round(t - coalesce((SELECT max(before + least(t, e) - s) "
                "FROM _jit_stalls WHERE s <= t), 0)) AS BIGINT)")  # fmt: skip
    for table in _INSTANTS:
        _shadow(cur, db, table, job_id)
    return WarmClock(cur, before, len(compiles))


def frames_on_warm_clock(
    con: duckdb.DuckDBPyConnection, job_id: str, frames: q.JobFrames | None = None
) -> tuple[duckdb.DuckDBPyConnection, q.JobFrames, WarmClock | None]:
    """The connection and frames to profile ``job_id`` from, and its warm clock: on that clock where the
    run has one (``frames`` given are the measured clock's, and are queried again), else as given."""
    warm = warm_clock(con, job_id)
    if warm is not None:
        con, frames = warm.con, None
    return con, frames or q.JobFrames.query(con, job_id), warm
