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
* ``times`` (warnings): jobs with attempts that start before the job was submitted or
  before their task was started (a tracker's clock behind the JobTracker's), or that
  finish before they start.
* ``counts`` (warnings): jobs with more successful map (or reduce) tasks than the
  job's own total, or than it says finished: a file edited by hand, or two runs'
  tasks under one job id.
* ``orphans``: Parquet files on disk that the manifest does not reference
  (left by a crash; the next commit removes them).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from phaseline.errors import StoreError
from phaseline.store import Store
from phaseline.verify.data import check_data, other_runs
from phaseline.verify.files import check_files, check_orphans, check_sources
from phaseline.verify.findings import Finding, VerifyReport, findings_rows

__all__ = ["Finding", "VerifyReport", "findings_rows", "other_runs", "verify_store"]


def verify_store(store: Store) -> VerifyReport:
    """Check a store's consistency; never modifies it.

    A partitioned store's root (:mod:`phaseline.store.partitioned`): every partition store
    (of the store's ``where``) is checked on its own, each finding's subject led by its
    partition (``day=2026-11-28/...: ``).
    """
    if store.is_root():
        findings: list[Finding] = []
        files = sources = 0
        for _, part in store.partitions():
            report = verify_store(part)
            where = part.root.relative_to(store.root).as_posix()
            findings += [replace(f, subject=f"{where}: {f.subject}") for f in report.findings]
            files, sources = files + report.files_checked, sources + report.sources_checked
        return VerifyReport(tuple(findings), files, sources)
    return _verify_one(store)


def _verify_one(store: Store) -> VerifyReport:
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
        check_files(store, manifest, {}, findings)
        sources = []
    else:
        rows = check_files(store, manifest, {s["path"]: s["sha256"] for s in sources}, findings)
        check_sources(sources, rows, findings)
        if not any(f.severity == "error" for f in findings):
            check_data(store, manifest, findings)
    check_orphans(store, manifest, findings)
    return VerifyReport(tuple(findings), len(manifest.files), len(sources))
