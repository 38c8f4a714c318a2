"""The checks of a store's files and sources (``manifest``, ``schema``, ``rows``, ``sources``,
``reconcile``, ``copies``, ``orphans``): they read the Parquet footers and the ``sources`` table,
not the data."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from phaseline import schemas
from phaseline.store import COPY_OF, Manifest, Store
from phaseline.verify.findings import Finding


def check_files(
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


def check_sources(
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


def check_orphans(store: Store, manifest: Manifest, findings: list[Finding]) -> None:
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
