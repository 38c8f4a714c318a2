"""Re-check a whole store: files, schemas, row counts, reconciliation, orphans.

``phaseline verify`` runs :func:`verify_store`.  Each finding names the check,
the file or source it concerns, and what is wrong; ``ok`` is true when no
finding is an error.

Checks
------
* ``manifest``: the manifest reads and every file it names exists.
* ``schema``: every Parquet file's columns have the declared types (older files
  may lack columns added since; extra or retyped columns are errors).
* ``rows``: each file's row count equals the manifest's.
* ``data``: every page of every file decodes, its checksum verified where the
  file has them (the store writes them): a byte damaged since the write is
  named with its file, where the footer alone reads fine.
* ``sources``: every data file belongs to a ``landed``/``partial`` source, and
  a source's ``rows_written`` equals the rows of its files.
* ``reconcile``: for every landed source, the rows in its reader's record
  tables (``sources.record_tables``, usually ``events``) equal ``events_read``:
  each record read is kept once; quarantined or skipped sources have no rows.
* ``copies``: two landed sources with the same bytes (sha256) for the same jobs.
  Their rows carry the same ``source_sha256``, so the views cannot set either
  aside and count every row twice.  Ingest skips such a copy; a store written
  before it did may hold one (re-ingest into a new store).  A warning: a source
  skipped as a copy whose bytes no landed source holds any more (the file it
  copied was replaced by other bytes since): ingesting it again reads it.
* ``overlaps`` (warnings): jobs described by several sources (a history log
  and Rumen's parse of it, two copies of one ``.jhist``), with the source whose
  rows the views keep (see :meth:`phaseline.store.Store.connect`); run only
  when the checks above found no error.
* ``runs`` (warnings): jobs of which another source holds another run under
  the same job id (submitted more than :data:`~phaseline.store.SAME_RUN_SLACK_MS`
  from the kept source's run): none of its rows are in the views; ``phaseline
  ingest`` warns of it as it lands (:func:`other_runs`).
* ``times`` (warnings): jobs with attempts that start before the job was submitted, or
  that finish before they start.
* ``counts`` (warnings): jobs with more successful map (or reduce) tasks than the
  job's own total, or than it says finished: a file edited by hand, or two runs'
  tasks under one job id.
* ``orphans``: Parquet files on disk that the manifest does not reference
  (left by a crash; the next commit removes them).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Collection
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from phaseline import schemas
from phaseline.errors import StoreError
from phaseline.store import COPY_OF, Manifest, Store
from phaseline.store.sql import load, render

if TYPE_CHECKING:
    import duckdb


@dataclass(frozen=True, slots=True)
class Finding:
    severity: str  # "error" or "warning"
    check: str
    subject: str
    detail: str


@dataclass(frozen=True, slots=True)
class VerifyReport:
    findings: tuple[Finding, ...]
    files_checked: int
    sources_checked: int

    @property
    def ok(self) -> bool:
        return not any(f.severity == "error" for f in self.findings)


def verify_store(store: Store) -> VerifyReport:
    """Check a store's consistency; never modifies it."""
    try:
        manifest = store.manifest()
    except StoreError as exc:
        return VerifyReport((Finding("error", "manifest", str(store.manifest_path), str(exc)),), 0, 0)
    findings: list[Finding] = []
    try:
        sources: list[dict[str, Any]] = store.sources(manifest).to_pylist()
    except StoreError as exc:
        # The file checks still run; those against the sources table cannot.
        findings.append(Finding("error", "sources", str(manifest.sources_file), str(exc)))
        _check_files(store, manifest, {}, findings)
        sources = []
    else:
        rows = _check_files(store, manifest, {s["path"]: s["sha256"] for s in sources}, findings)
        _check_sources(sources, rows, findings)
        if not any(f.severity == "error" for f in findings):
            _check_data(store, manifest, findings)
    _check_orphans(store, manifest, findings)
    return VerifyReport(tuple(findings), len(manifest.files), len(sources))


def _check_files(
    store: Store, manifest: Manifest, sha_of: dict[str, str], findings: list[Finding]
) -> dict[tuple[str, str], int]:
    """The manifest, schema and rows checks; returns the rows per (source key, table)."""
    rows: dict[tuple[str, str], int] = defaultdict(int)
    for f in manifest.files:
        path = store.root / f.path
        if not path.exists():
            findings.append(Finding("error", "manifest", f.path, "file named by the manifest is missing"))
            continue
        try:
            parquet = pq.ParquetFile(path, page_checksum_verification=True)  # the footer, read once
            meta, file_schema = parquet.metadata, parquet.schema_arrow
            per_source = _rows_per_source(path, f.sources, meta.num_rows, sha_of)
        except (OSError, ValueError) as exc:
            findings.append(Finding("error", "schema", f.path, f"unreadable Parquet: {exc}"))
            continue
        spec = schemas.TABLES.get(f.table)
        if spec is None:
            findings.append(Finding("error", "schema", f.path, f"table {f.table!r} is not declared"))
        else:
            for field in file_schema:
                declared = spec.schema.field(field.name) if field.name in spec.schema.names else None
                if declared is None:
                    findings.append(Finding("error", "schema", f.path, f"column {field.name!r} is not declared"))
                elif not declared.type.equals(field.type):
                    findings.append(
                        Finding("error", "schema", f.path, f"column {field.name!r} is {field.type}, declared {declared.type}")
                    )
        if meta.num_rows != f.rows:
            findings.append(Finding("error", "rows", f.path, f"{meta.num_rows} rows, manifest says {f.rows}"))
        if (damage := _undecodable(parquet)) is not None:
            findings.append(Finding("error", "data", f.path, f"damaged data: {damage}"))
        for key, n in per_source:
            rows[key, f.table] += n
    return rows


def _undecodable(parquet: pq.ParquetFile) -> str | None:
    """Why a data file's pages do not decode, or None: every row group is read (one at a time),
    with the page checksums the store writes verified (``parquet`` opened so).  The footer alone
    reads fine when a data page is damaged, and the queries then fail without naming the file."""
    try:
        for i in range(parquet.num_row_groups):
            parquet.read_row_group(i)
    except (OSError, ValueError, pa.ArrowException) as exc:
        return " ".join(str(exc).split()) or type(exc).__name__
    return None


def _check_sources(
    sources: list[dict[str, Any]], rows: dict[tuple[str, str], int], findings: list[Finding]
) -> None:
    """The sources and reconcile checks."""
    rows_by_source: dict[str, int] = defaultdict(int)
    for (key, _), n in rows.items():
        rows_by_source[key] += n
    landed = {s["path"] for s in sources if s["status"] in ("landed", "partial")}
    copies: dict[tuple[str, tuple[str, ...]], str] = {}  # (sha256, job ids) -> the first source's key
    for key in rows_by_source:
        if key not in landed:
            findings.append(Finding("error", "sources", key, "data files belong to no landed source"))
    landed_shas = {s["sha256"] for s in sources if s["status"] in ("landed", "partial")}
    for s in sources:
        key, status = s["path"], s["status"]
        if status not in ("landed", "partial"):
            if (s["rows_written"] or 0) != 0:
                findings.append(Finding("error", "reconcile", key, f"{status} source claims {s['rows_written']} rows"))
            if status == "skipped" and (s["error"] or "").startswith(COPY_OF) and s["sha256"] not in landed_shas:
                findings.append(Finding(
                    "warning", "copies", key,
                    f"skipped as a copy ({s['error']}), but no landed source holds its bytes any more: "
                    "its rows are in no table; ingest it again",
                ))  # fmt: skip
            continue
        _check_copy(s, copies, findings)
        if rows_by_source.get(key, 0) != (s["rows_written"] or 0):
            findings.append(
                Finding(
                    "error", "sources", key,
                    f"rows_written={s['rows_written']} but its files hold {rows_by_source.get(key, 0)} rows",
                )
            )
        tables = [t for t in (s["record_tables"] or "events").split(",") if t]
        kept = sum(rows.get((key, t), 0) for t in tables)
        if kept != (s["events_read"] or 0):
            findings.append(
                Finding(
                    "error", "reconcile", key,
                    f"events_read={s['events_read']} but {kept} records kept in {'+'.join(tables)}",
                )
            )


def _check_copy(source: dict[str, Any], copies: dict[tuple[str, tuple[str, ...]], str],
                findings: list[Finding]) -> None:  # fmt: skip
    """The copies check for one landed source (a conf XML named for another job is no copy:
    its job ids differ)."""
    if not source["rows_written"]:
        return
    content = (source["sha256"], tuple(sorted(source["job_ids"] or ())))
    first = copies.setdefault(content, source["path"])
    if first != source["path"]:
        findings.append(Finding(
            "error", "copies", source["path"],
            f"holds the same bytes as {first} (sha256 {content[0][:12]}) for the same jobs: the views count "
            "each of their rows twice; ingest the files into a new store (a copy is skipped there)",
        ))  # fmt: skip


def _check_data(store: Store, manifest: Manifest, findings: list[Finding]) -> None:
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
    """The times check: jobs with attempts that start before the job was submitted, or that
    finish before they start.

    The data is kept as the trace has it (a 0.20 log can have a tracker's clock ahead of the
    JobTracker's); the warning says why a report's first wave, which spans attempts, can then
    last longer than the makespan, which counts from the submit time.  An attempt that ends
    before it starts (mumak's Rumen trace has failed reduces 80 s backwards) has no duration
    in the views: it is left out of every sum of attempt time and every chart.
    """
    import duckdb

    try:
        late = con.execute(load("verify_early_attempts"), {"clock_slack_ms": CLOCK_SLACK_MS}).fetchall()
        backwards = con.execute(load("verify_backwards_attempts")).fetchall()
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


def _check_orphans(store: Store, manifest: Manifest, findings: list[Finding]) -> None:
    live = manifest.referenced()  # retired files are kept for readers of older generations
    for sub in ("data", "meta"):
        base = store.root / sub
        if base.exists():
            for p in base.rglob("*.parquet"):
                rel = p.relative_to(store.root).as_posix()
                if rel not in live:
                    findings.append(Finding("warning", "orphans", rel, "not referenced by the manifest"))


def _rows_per_source(
    path: Path, keys: tuple[str, ...], total: int, sha_of: dict[str, str]
) -> list[tuple[str, int]]:
    """Rows per source key in one file (a compacted file's rows are told apart by source_sha256)."""
    if len(keys) == 1:
        return [(keys[0], total)]
    counts = pq.read_table(path, columns=["source_sha256"]).column("source_sha256").value_counts()
    by_sha = {str(c["values"]): int(c["counts"]) for c in counts.to_pylist()}
    return [(key, by_sha.get(sha_of.get(key, ""), 0)) for key in keys]


def findings_rows(report: VerifyReport) -> list[dict[str, str]]:
    return [
        {"severity": f.severity, "check": f.check, "subject": f.subject, "detail": f.detail}
        for f in report.findings
    ]


__all__ = ["Finding", "VerifyReport", "findings_rows", "verify_store"]

