"""The checks that query a store's data through its views (``overlaps``, ``runs``, ``times``,
``counts``), on one DuckDB connection; :func:`other_runs` is what ``phaseline ingest`` warns of."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection
from datetime import UTC, datetime
from typing import TYPE_CHECKING, NamedTuple

from phaseline.errors import StoreError
from phaseline.store import Manifest, Store
from phaseline.store.sql import load, render
from phaseline.verify.findings import Finding

if TYPE_CHECKING:
    import duckdb


def check_data(store: Store, manifest: Manifest, findings: list[Finding]) -> None:
    """The checks that query the data (overlaps, times), on one connection to the store."""
    import duckdb  # only these checks query the data

    try:
        con = store.connect(manifest)
    except (StoreError, duckdb.Error) as exc:  # reported as the first data check's, as it always was
        findings.append(Finding("error", "overlaps", str(store.root), str(exc)))
        return
    _check_overlaps(con, str(store.root), findings)
    _check_times(con, str(store.root), findings)
    _check_counts(con, str(store.root), findings)


def _check_overlaps(con: duckdb.DuckDBPyConnection, root: str, findings: list[Finding]) -> None:
    """The overlaps and runs checks: jobs that several sources describe, and the one the views keep.

    Sources that describe different units of one job (an engine run's ``run.json``
    holds the job's counters, its log the attempts') complement each other and
    are not reported: only jobs some of whose rows the views set aside.  A source
    of another run under the same job id (``overlapping_sources.other_run``) is a
    ``runs`` finding of its own: none of its rows are shown.
    """
    import duckdb

    try:
        overlaps = con.execute(load("verify_overlaps")).fetchall()
        set_aside: dict[str, int] = defaultdict(int)
        for (table,) in con.execute(load("overlapping_tables")).fetchall():
            for job_id, n in con.execute(render("verify_set_aside", table=table), {"table_name": table}).fetchall():
                set_aside[job_id] += n
    except duckdb.Error as exc:
        findings.append(Finding("error", "overlaps", root, str(exc)))
        return
    by_job: dict[str, list[_Source]] = defaultdict(list)
    for job_id, *source in overlaps:
        by_job[job_id].append(_Source(*source))
    for job_id, ranked in by_job.items():
        kept, others = ranked[0], ranked[1:]
        runs = [o for o in others if o.other_run]
        same = [o for o in others if not o.other_run]
        of_runs = sum(o.rows for o in runs)
        if same and set_aside[job_id] > of_runs:
            also = "; ".join(f"{o.path} ({o.format}: {o.tables})" for o in same)
            findings.append(Finding(
                "warning", "overlaps", job_id,
                f"described by {len(same) + 1} sources; the views take its rows from {kept.path} ({kept.format}) "
                f"and from the others only what that one lacks ({set_aside[job_id] - of_runs} rows set aside): {also}",
            ))  # fmt: skip
        if runs:
            listing = "; ".join(
                f"{o.path} ({o.format}: submitted {_utc(o.submit_ms)}, {_apart(o.submit_ms, kept.submit_ms)})"
                for o in runs
            )
            findings.append(Finding(
                "warning", "runs", job_id,
                f"another run under the same job id: the views take its rows from {kept.path} ({kept.format}, "
                f"submitted {_utc(kept.submit_ms)}) and none of the {of_runs} rows of {listing}; ingest the other "
                "run into a store of its own to see it",
            ))  # fmt: skip


class _Source(NamedTuple):
    """One source of a job that several describe (``overlapping_sources``, its tables folded)."""

    path: str
    format: str
    tables: str  # the tables it has rows in, comma-separated
    other_run: bool
    submit_ms: int | None
    rows: int


def other_runs(store: Store, paths: Collection[str]) -> list[Finding]:
    """The ``runs`` findings (another run under a job id, whose rows the views leave out) of jobs
    that the sources ``paths`` (store keys: what an ingest just landed) describe: what ``phaseline
    ingest`` warns of.  The store is opened only when one of them shares a job id with another
    source (or a source too old to list its jobs is live)."""
    if not paths:
        return []
    live = [
        s for s in store.sources().select(["path", "sha256", "status", "job_ids"]).to_pylist()
        if s["status"] in ("landed", "partial")
    ]  # fmt: skip
    mine = {job for s in live if s["path"] in paths for job in s["job_ids"] or ()}
    described = Counter(job for s in {s["sha256"]: s for s in live}.values() for job in s["job_ids"] or ())
    if not any(described[job] > 1 for job in mine) and all(s["job_ids"] is not None for s in live):
        return []
    findings: list[Finding] = []
    _check_overlaps(store.connect(), str(store.root), findings)
    return [f for f in findings if f.check == "runs" and f.subject in mine]


def _utc(ms: int | None) -> str:
    """``2012-02-15 23:27:23 UTC`` from epoch milliseconds; ``at no known time`` for None."""
    if ms is None:
        return "at no known time"
    return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _apart(ms: int | None, kept_ms: int | None) -> str:
    """``3600 s after the kept one``: how far a source's submit time lies from the kept run's."""
    if ms is None or kept_ms is None:
        return "no submit time to compare"
    gap = (ms - kept_ms) / 1000
    return f"{abs(gap):.0f} s {'after' if gap > 0 else 'before'} the kept one"


#: Attempts may start this long before their job's submit time (clock resolution, log flushing).
CLOCK_SLACK_MS = 1000


def _check_times(con: duckdb.DuckDBPyConnection, root: str, findings: list[Finding]) -> None:
    """The times check: jobs with attempts that start before the job was submitted or before
    their task was started, or that finish before they start.

    The data is kept as the trace has it (a 0.20 log can have a tracker's clock ahead of the
    JobTracker's); the warning says why a report's first wave, which spans attempts, can then
    last longer than the makespan, which counts from the submit time.  A tracker's clock behind
    the JobTracker's shows as attempts that start before their task (the Yahoo log's job 0002:
    one map 106 s early, which makes the span from its first attempt 223 s where its other
    attempts span 126 s).  An attempt that ends
    before it starts (mumak's Rumen trace has failed reduces 80 s backwards) has no duration
    in the views: it is left out of every sum of attempt time and every chart.
    """
    import duckdb

    try:
        late = con.execute(load("verify_early_attempts"), {"clock_slack_ms": CLOCK_SLACK_MS}).fetchall()
        backwards = con.execute(load("verify_backwards_attempts")).fetchall()
        skewed = con.execute(load("verify_skewed_attempts"), {"clock_slack_ms": CLOCK_SLACK_MS}).fetchall()
    except duckdb.Error as exc:
        findings.append(Finding("error", "times", root, str(exc)))
        return
    for job_id, n, earliest in late:
        findings.append(
            Finding(
                "warning", "times", job_id,
                f"{n} attempt(s) start before the job was submitted (the earliest by {-earliest / 1000:.1f} s): "
                "the trace's clocks disagree; kept as written, its waves can outlast its makespan",
            )
        )
    for job_id, n, earliest, attempt_id in skewed:
        findings.append(
            Finding(
                "warning", "times", job_id,
                f"{n} attempt(s) start before their task was started ({attempt_id} by {-earliest / 1000:.1f} s): "
                "a tracker's clock behind the JobTracker's; kept as written, the job's span from its first "
                "attempt (a profile's makespan) and its first wave are longer than the run was",
            )
        )
    for job_id, n, most, attempt_id in backwards:
        findings.append(
            Finding(
                "warning", "times", job_id,
                f"{n} attempt(s) finish before they start ({attempt_id} by {-most / 1000:.1f} s): kept as "
                "written, without a duration (left out of attempt-time sums, waves and charts)",
            )
        )


def _check_counts(con: duckdb.DuckDBPyConnection, root: str, findings: list[Finding]) -> None:
    """The counts check: successful tasks beyond the job's own total or finished count."""
    import duckdb

    try:
        odd = con.execute(load("verify_counts")).fetchall()
    except duckdb.Error as exc:
        findings.append(Finding("error", "counts", root, str(exc)))
        return
    for job_id, task_type, n, total, finished in odd:
        kind = task_type.lower()
        findings.append(
            Finding(
                "warning", "counts", job_id,
                f"{n} successful {kind} tasks, but the job says {total} {kind}s in all and {finished} "
                "finished: the trace was edited or holds another run's tasks; kept as written",
            )
        )
