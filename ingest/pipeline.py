"""Walk paths, detect formats, run readers, commit rows to the store.

Each file lands whole or not at all (see :mod:`phaseline.store`): a reader
error quarantines the file (its ``sources`` row says where and what), a
truncated file lands what came before the cut, and the other files of the same
ingest land regardless.  Per file the pipeline counts events read and rows
written, so nothing is dropped silently.
"""

from __future__ import annotations

import glob
import hashlib
import os
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ingest.base import ReadContext, read_head
from ingest.formats import Format, detect
from phaseline.errors import PhaselineError, SchemaError, TraceParseError, TraceTruncatedError
from phaseline.schemas import SourceStatus
from phaseline.store import SourceRecord, Store, Transaction

COMMIT_EVERY_FILES = 500
COMMIT_EVERY_S = 30.0
_SKIP_NAMES = {"MANIFEST.json", ".lock"}
_HASH_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class FileResult:
    """What became of one file."""

    path: str
    sha256: str
    format: str | None
    status: str  # a SourceStatus value, or "unchanged"
    error: str | None
    events_read: int
    rows: dict[str, int]
    rows_quarantined: int = 0
    unknown: dict[str, int] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def rows_written(self) -> int:
        return sum(self.rows.values())


@dataclass(frozen=True, slots=True)
class IngestSummary:
    """Per-file results of one ingest and their totals."""

    results: tuple[FileResult, ...]

    def count(self, status: str) -> int:
        return sum(1 for r in self.results if r.status == status)

    @property
    def quarantined(self) -> int:
        return self.count(SourceStatus.QUARANTINED)

    def rows_per_table(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for r in self.results:
            total.update(r.rows)
        return dict(sorted(total.items()))


def iter_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Files under the given paths: directories are walked, globs expanded, order is stable.

    Hidden files and directories (``.name``) inside walked directories are skipped,
    and so is a phaseline store met on the way.
    """
    seen: set[Path] = set()
    for raw in paths:
        text = str(raw)
        matches = [Path(m) for m in sorted(glob.glob(text, recursive=True))] if glob.has_magic(text) else [Path(text)]
        if not matches:
            raise PhaselineError(f"{text}: no such file or directory")
        for path in matches:
            if path.is_dir():
                for root, dirs, files in os.walk(path):
                    if (Path(root) / "MANIFEST.json").exists() and (Path(root) / "data").is_dir():
                        dirs[:] = []
                        continue  # a phaseline store, not traces
                    dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                    for name in sorted(files):
                        if name.startswith(".") or name in _SKIP_NAMES:
                            continue
                        f = Path(root) / name
                        if f not in seen:
                            seen.add(f)
                            yield f
            elif path.exists():
                if path not in seen:
                    seen.add(path)
                    yield path
            else:
                raise PhaselineError(f"{path}: no such file or directory")


def sha256_file(path: Path) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(_HASH_CHUNK):
            digest.update(chunk)
            size += len(chunk)
    return digest.hexdigest(), size


def _ingest_one(txn: Transaction, path: Path, key: str, sha: str, size: int) -> FileResult:
    """Read one file into the transaction's staging area."""
    ctx = ReadContext(path=path, sha256=sha)
    try:
        head = read_head(path)
        fmt: Format | None = detect(path, head)
    except OSError as exc:
        staged = txn.stage(key, sha, size, None)
        rec = staged.discard(SourceStatus.QUARANTINED, f"{path}: cannot read: {exc}")
        return _result(rec, ctx, {})
    if fmt is None:
        staged = txn.stage(key, sha, size, None)
        rec = staged.discard(SourceStatus.SKIPPED, f"{path}: format not recognised (no reader claims it)")
        return _result(rec, ctx, {})
    staged = txn.stage(key, sha, size, fmt.name)
    if not fmt.landed:
        rec = staged.discard(SourceStatus.SKIPPED, f"{path}: {fmt.doc}")
        return _result(rec, ctx, {})
    error: str | None = None
    status = SourceStatus.LANDED
    try:
        for row in fmt.read(path, ctx):
            staged.add(row.table, row.values)
    except TraceTruncatedError as exc:
        status, error = SourceStatus.PARTIAL, str(exc)
    except (PhaselineError, RecursionError, MemoryError, UnicodeError) as exc:
        rows = staged.rows_by_table()
        msg = str(exc) if isinstance(exc, TraceParseError) else f"{path}: {type(exc).__name__}: {exc}"
        if isinstance(exc, SchemaError):
            msg = f"{path}: {exc}"
        rec = staged.discard(
            SourceStatus.QUARANTINED,
            msg,
            events_read=ctx.events_read,
            rows_quarantined=sum(rows.values()),
        )
        return _result(rec, ctx, {})
    try:
        rows = staged.rows_by_table()
        rec = staged.finish(status, error=error, events_read=ctx.events_read)
    except SchemaError as exc:
        rows = staged.rows_by_table()
        rec = staged.discard(
            SourceStatus.QUARANTINED,
            f"{path}: {exc}",
            events_read=ctx.events_read,
            rows_quarantined=sum(rows.values()),
        )
        return _result(rec, ctx, {})
    return _result(rec, ctx, rows)


def _result(rec: SourceRecord, ctx: ReadContext, rows: dict[str, int]) -> FileResult:
    return FileResult(
        rec.path,
        rec.sha256,
        rec.format,
        rec.status,
        rec.error,
        ctx.events_read,
        rows,
        rec.rows_quarantined,
        dict(ctx.unknown),
        tuple(ctx.notes),
    )


ProgressFn = Callable[[Path, FileResult], None]


def ingest_paths(
    paths: Sequence[str | Path],
    store: Store,
    *,
    on_file: ProgressFn | None = None,
    commit_every_files: int = COMMIT_EVERY_FILES,
    commit_every_s: float = COMMIT_EVERY_S,
) -> IngestSummary:
    """Ingest files and directories into a store.

    Parameters
    ----------
    paths
        Files, directories (walked) or glob patterns.
    store
        The target store (created if missing).
    on_file
        Called after each file with its result (progress reporting).
    commit_every_files, commit_every_s
        Long ingests commit in batches so an interruption keeps finished work.

    Returns
    -------
    IngestSummary
        One :class:`FileResult` per file, unchanged files included.
    """
    files = list(iter_files(paths))
    manifest = store.manifest()
    sources = store.sources(manifest)
    live = dict(zip(sources.column("path").to_pylist(), sources.column("sha256").to_pylist(), strict=True))
    live_status = dict(
        zip(sources.column("path").to_pylist(), sources.column("status").to_pylist(), strict=True)
    )
    path_of_sha = {
        sha: p
        for p, sha in live.items()
        if live_status.get(p) in (SourceStatus.LANDED, SourceStatus.PARTIAL)
    }
    results: list[FileResult] = []
    with store.begin() as txn:
        last_commit = time.monotonic()
        for path in files:
            key = str(path.resolve())
            try:
                sha, size = sha256_file(path)
            except OSError as exc:
                staged = txn.stage(key, "", 0, None)
                rec = staged.discard(SourceStatus.QUARANTINED, f"{path}: cannot read: {exc}")
                result = _result(rec, ReadContext(path=path), {})
            else:
                twin = path_of_sha.get(sha)
                if live.get(key) == sha and live_status.get(key) != SourceStatus.QUARANTINED:
                    result = FileResult(key, sha, None, "unchanged", None, 0, {})
                elif twin is not None and twin != key:
                    staged = txn.stage(key, sha, size, None)
                    rec = staged.discard(SourceStatus.SKIPPED, f"same content as {twin} (already in the store)")
                    result = _result(rec, ReadContext(path=path), {})
                else:
                    result = _ingest_one(txn, path, key, sha, size)
                    if result.status != SourceStatus.QUARANTINED:
                        path_of_sha.setdefault(sha, key)
            results.append(result)
            if on_file is not None:
                on_file(path, result)
            if txn.pending >= commit_every_files or (
                txn.pending and time.monotonic() - last_commit > commit_every_s
            ):
                txn.commit()
                last_commit = time.monotonic()
        txn.commit()
    return IngestSummary(tuple(results))
