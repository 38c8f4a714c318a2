"""The main job: ingest traces, then explain every job they hold.

:func:`analyze` ingests paths into a store and, for each job whose rows came
from those paths, writes an HTML report, the job profile (JSON), a timeline
(SVG) and a Chrome trace (JSON, for Perfetto UI) into ``out_dir/<job_id>/``,
and returns one summary row per job: what it was and where its time went.
A job the data cannot profile (e.g. a failed job without successful tasks)
still gets its report; the reason its profile is missing is recorded.  Each report has the
job's findings (:mod:`profiles.doctor`), and ``out_dir/index.html`` lists every job analysed,
sortable by duration and by worst severity.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import re
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from ingest.pipeline import FileResult, IngestSummary, ingest_paths
from phaseline.errors import ProfileError, recording_warnings
from phaseline.store import Store
from profiles import queries as q
from profiles.doctor import Diagnosis, Severity, diagnose, diagnose_jobs
from profiles.index_page import IndexRow, write_index
from profiles.report import write_report
from profiles.report_sections import extract_saying
from profiles.timeline_plot import gantt_svg, write_timeline

_JOBS_OF_SOURCES = """
WITH src AS (SELECT sha256 FROM sources WHERE path IN (SELECT unnest($paths)))
SELECT DISTINCT job_id FROM (  -- raw: the job is these paths' even where the views take its rows from another source
    SELECT job_id, source_sha256 FROM raw.jobs
    UNION ALL SELECT job_id, source_sha256 FROM raw.attempts
) WHERE source_sha256 IN (SELECT sha256 FROM src) AND job_id IS NOT NULL
ORDER BY job_id
"""


@dataclass(frozen=True, slots=True)
class JobAnalysis:
    """One analysed job: its outputs and the headline figures."""

    job_id: str
    name: str | None
    status: str | None
    duration_s: float | None
    maps: int  # the job's total (its record's), else the map tasks that ran
    reduces: int  # likewise
    #: every phase's share of the successful attempts' task-thread time (0.41: 41 %), largest first
    phase_shares: dict[str, float]
    out_dir: Path
    profile_error: str | None
    #: the worst severity of the job's findings (``phaseline doctor``), and how many are Low or worse
    worst_severity: Severity = Severity.NONE
    findings: int = 0

    @property
    def top_phases(self) -> str:
        """The three largest :attr:`phase_shares`, for a table: ``spill 41%, read+map+collect 30%, shuffle 12%``."""
        return ", ".join(f"{name} {100 * share:.0f}%" for name, share in list(self.phase_shares.items())[:3])


@dataclass(frozen=True, slots=True)
class Analysis:
    ingest: IngestSummary
    jobs: tuple[JobAnalysis, ...]


def _phase_shares(phases: pd.DataFrame) -> dict[str, float]:
    """Each phase's share of the successful attempts' task-thread time, largest first.

    Helper-thread phases (lane ``background``) run beside the task thread's,
    so they are left out: counted in, they made shares of more than the time spent.
    """
    phases = phases[(phases["lane"] == "main") & (phases["status"] == "SUCCEEDED")]  # as the report's breakdown
    if phases.empty:
        return {}
    totals = phases.groupby("phase")["dur_ms"].sum().sort_values(ascending=False, kind="stable")
    whole = float(totals.sum())
    if whole <= 0:
        return {}
    return {str(name): float(ms) / whole for name, ms in totals.items()}


def _count(row: dict[str, Any], total: str, ran: str) -> int:
    """The job record's ``total`` where it has one, else the count of tasks that ran."""
    value = row.get(total)
    return int(value if value is not None else row.get(ran) or 0)


_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def job_dir_name(job_id: str) -> str:
    """A directory name for a job's outputs that stays inside the output directory.

    Job ids come from traces, and a hostile trace may name its job
    ``../../x`` or ``/tmp/x``: such an id (anything but letters, digits, ``_``,
    ``.`` and ``-``, one starting with ``.``, or one over 100 characters) is
    spelled with ``_`` for the rest, cut to 80 characters, and given a short
    hash of the real id, so that two ids never share a name.

    Examples
    --------
    >>> job_dir_name("job_1329348432655_0001")
    'job_1329348432655_0001'
    >>> job_dir_name("../../etc")
    '__.._etc-74ccf3c5b4'
    >>> job_dir_name("/tmp/x")
    '_tmp_x-2e56aa36f5'
    """
    safe = _UNSAFE_NAME.sub("_", job_id)
    if safe == job_id and safe and not safe.startswith(".") and len(job_id) <= 100:
        return job_id
    digest = hashlib.sha256(job_id.encode("utf-8", "surrogatepass")).hexdigest()[:10]
    return f"_{safe.lstrip('.')[:80]}-{digest}" if safe.startswith(".") else f"{safe[:80]}-{digest}"


def analyze_job(
    con: duckdb.DuckDBPyConnection, job_id: str, out_dir: Path, diagnosis: Diagnosis | None = None
) -> JobAnalysis:
    """Write one job's report, profile, timeline and trace into ``out_dir/<job dir>``; return its summary row.

    ``diagnosis``: the job's, where the caller graded many jobs together (:func:`profiles.doctor.diagnose_jobs`).
    """
    target = out_dir / job_dir_name(job_id)
    target.mkdir(parents=True, exist_ok=True)
    frames = q.JobFrames.query(con, job_id)  # queried once for every output below
    profile, said = extract_saying(con, job_id, frames)
    for message in said:  # what the profile says of its evidence: in its report, and said here too
        warnings.warn(message, stacklevel=2)
    if isinstance(profile, ProfileError):
        (target / "profile.json").unlink(missing_ok=True)  # an earlier run's, of other data, must not stay
    else:
        profile.save(target / "profile.json")
    gantt = gantt_svg(frames)
    (target / "timeline.svg").write_text(gantt, encoding="utf-8")  # as write_timeline writes it
    diagnosis = diagnose(con, job_id) if diagnosis is None else diagnosis
    write_report(con, job_id, target / "report.html", frames=frames, profile=profile, profile_notes=said,
                 gantt=gantt, diagnosis=diagnosis)  # fmt: skip
    write_timeline(con, job_id, target / "trace.json", frames=frames)
    row = {str(k): None if pd.api.types.is_scalar(v) and pd.isna(v) else v for k, v in frames.summary.items()}
    makespan = row.get("makespan_ms")
    return JobAnalysis(
        job_id=job_id,
        name=row.get("name"),
        status=row.get("status"),
        duration_s=float(makespan) / 1000 if makespan is not None else None,
        # the job's own totals, as `phaseline jobs` shows them; else the tasks that ran
        maps=_count(row, "total_maps", "maps"),
        reduces=_count(row, "total_reduces", "reduces"),
        phase_shares=_phase_shares(frames.phases),
        out_dir=target,
        profile_error=str(profile) if isinstance(profile, ProfileError) else None,
        worst_severity=diagnosis.worst,
        findings=sum(1 for f in diagnosis.findings if f.severity > Severity.NONE),
    )


def write_job_index(jobs: Sequence[JobAnalysis], out_dir: Path) -> Path:
    """``out_dir/index.html`` over ``jobs``: each one's report, duration and worst severity, sortable by both."""
    rows = [
        IndexRow(j.job_id, j.name, j.status, j.duration_s, j.worst_severity, j.findings,
                 (j.out_dir / "report.html").relative_to(out_dir).as_posix())
        for j in jobs
    ]  # fmt: skip
    return write_index(rows, out_dir / "index.html")


def analyze(
    paths: Sequence[str | Path],
    store: Store,
    out_dir: Path,
    *,
    on_file: Callable[[Path, FileResult], None] | None = None,
    workers: int = 1,
) -> Analysis:
    """Ingest ``paths`` into ``store`` and analyse every job they hold (see the module docstring).

    ``workers`` processes parse the files and then write the jobs' outputs (the
    charts take most of the time: seconds for a job of thousands of tasks).
    """
    summary = ingest_paths(paths, store, on_file=on_file, workers=workers)
    con = store.connect()
    keys = [r.path for r in summary.results]
    job_ids = [r[0] for r in con.execute(_JOBS_OF_SOURCES, {"paths": keys}).fetchall()]
    out_dir.mkdir(parents=True, exist_ok=True)
    graded = _diagnoses(con, job_ids)
    if workers == 1 or len(job_ids) < 2:
        jobs = tuple(analyze_job(con, job_id, out_dir, graded.get(job_id)) for job_id in job_ids)
        write_job_index(jobs, out_dir)
        return Analysis(summary, jobs)
    con.close()
    # spawned, not forked: a forked copy of a process running DuckDB's threads may hang
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(min(workers, len(job_ids)), mp_context=context,
                             initializer=_open_in_worker, initargs=(store.root,)) as pool:  # fmt: skip
        done = list(pool.map(_analyze_in_worker, job_ids, [graded.get(j) for j in job_ids], [out_dir] * len(job_ids)))
    for _, caught in done:  # the workers' warnings, said here as if the jobs were analysed here
        for category, message in caught:
            warnings.warn(message, category, stacklevel=2)
    jobs = tuple(job for job, _ in done)
    write_job_index(jobs, out_dir)
    return Analysis(summary, jobs)


_worker_con: duckdb.DuckDBPyConnection | None = None


def _open_in_worker(root: Path) -> None:
    global _worker_con
    _worker_con = Store(root).connect()


def _diagnoses(con: duckdb.DuckDBPyConnection, job_ids: Sequence[str]) -> dict[str, Diagnosis]:
    """The jobs' diagnoses, graded together where they are most of the store (:func:`diagnose_jobs`); a job
    the store's views do not hold (its rows all another source's) is left to :func:`analyze_job`."""
    known = set(q.job_ids(con))
    graded = [j for j in job_ids if j in known]
    return {d.job_id: d for d in diagnose_jobs(con, graded)} if graded else {}


def _analyze_in_worker(
    job_id: str, diagnosis: Diagnosis | None, out_dir: Path
) -> tuple[JobAnalysis, list[tuple[type[Warning], str]]]:
    assert _worker_con is not None, "the pool's initializer opens the store"
    with recording_warnings() as said:
        job = analyze_job(_worker_con, job_id, out_dir, diagnosis)
    return job, [(type(w), str(w)) for w in said]
