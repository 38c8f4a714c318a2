"""Reading one file into staged rows (:func:`read_file`), and a chunk of files (:func:`read_chunk`,
what a worker process or a Spark task runs): never raises for bad content.

A reader error quarantines the file (its ``sources`` row says where and what), a truncated file
lands what came before the cut, unreadable records amid good ones make it ``partial``, and a
per-file time limit turns a reader that hangs on hostile input into a quarantined file.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from ingest import formats
from ingest.base import NotATraceError, ReadContext, RowBlock
from ingest.formats import Format
from ingest.gc_pacing import rarer_collections
from ingest.opening import read_head
from phaseline.errors import PhaselineError, SchemaError, TraceParseError, TraceTruncatedError
from phaseline.schemas import SourceStatus
from phaseline.staged_batch import StagedBatch, StagedGroup
from phaseline.staging import SourceRecord, StagedSource

if TYPE_CHECKING:
    from ingest.jhist_split import Span


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
class Work:
    """One file to read: its store key, where its bytes are, and their hash; a large ``.jhist`` read
    in ranges by several workers, its ranges (:mod:`ingest.split_reading`)."""

    key: str
    path: Path
    sha256: str
    size: int
    spans: tuple[Span, ...] = ()


class _FileTimeout(PhaselineError, TimeoutError):
    pass


def _on_alarm(signum: int, frame: FrameType | None) -> None:
    raise _FileTimeout("reading took longer than the per-file time limit")


@contextmanager
def time_limit(timeout_s: float | None) -> Iterator[None]:
    """Raise :class:`_FileTimeout` in the block once it has run ``timeout_s`` seconds (a SIGALRM
    timer, so in the main thread only; no limit with ``None`` or where the platform lacks timers)."""
    if timeout_s is None or not hasattr(signal, "setitimer"):
        yield
        return
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    try:
        signal.setitimer(signal.ITIMER_REAL, timeout_s)
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _by_key(message: str, work: Work) -> str:
    """``message`` naming the file by its store key: an archive member is read from a temporary
    copy whose path means nothing once the ingest is over (``archive.zip!member`` does)."""
    where = str(work.path)
    if where == work.key or work.key in message:  # (already by key: a relative path is inside its key)
        return message
    return message.replace(where, work.key)


class _FileRead:
    """One file read into a batch, step by step: its format, its rows, its status, its landing."""

    def __init__(self, work: Work, batch: StagedBatch, timeout_s: float | None) -> None:
        self.work = work
        self.batch = batch
        self.timeout_s = timeout_s
        self.ctx = ReadContext(path=work.path, sha256=work.sha256)
        self.staged = StagedSource(batch.staging, work.key, work.sha256, work.size, None)

    def result(self, rec: SourceRecord, rows: dict[str, int]) -> FileResult:
        ctx = self.ctx
        return FileResult(
            rec.path, rec.sha256, rec.format, rec.status, rec.error, ctx.events_read, rows,
            rec.rows_quarantined, dict(ctx.unknown), tuple(ctx.notes),
        )  # fmt: skip

    def discard(self, status: str, error: str, rows: dict[str, int] | None = None) -> FileResult:
        error = _by_key(error, self.work)
        quarantined = sum(rows.values()) if rows else 0
        rec, _ = self.staged.discard(status, error, events_read=self.ctx.events_read, rows_quarantined=quarantined)
        self.batch.add(rec, ())
        return self.result(rec, {})

    def run(self) -> FileResult:
        path = self.work.path
        try:
            head = read_head(path)
            fmt: Format | None = formats.detect(path, head)
        except OSError as exc:
            return self.discard(SourceStatus.QUARANTINED, f"{path}: cannot read: {exc}")
        if fmt is None:
            return self.discard(SourceStatus.SKIPPED, f"{path}: not a trace: format not recognised (no reader claims it)")
        self.staged.format = fmt.name
        self.staged.record_tables = fmt.record_tables
        if not fmt.landed:
            return self.discard(SourceStatus.SKIPPED, f"{path}: {fmt.doc}")
        read = self.read_rows(fmt)
        if isinstance(read, FileResult):
            return read
        status, error = read
        if self.ctx.skipped:  # unreadable records amid good ones: the rest lands, the file is partial
            if self.ctx.events_read == 0:
                return self.discard(SourceStatus.QUARANTINED, str(self.ctx.skipped[0]), self.staged.rows_by_table())
            skipped = self.skipped_records()
            status, error = SourceStatus.PARTIAL, skipped if error is None else f"{error}; {skipped}"
        return self.land(fmt, status, error)

    def read_rows(self, fmt: Format) -> tuple[str, str | None] | FileResult:
        """Stage the reader's rows: the status and error so far, or the file's result if it is discarded."""
        work, ctx, staged, timeout_s = self.work, self.ctx, self.staged, self.timeout_s
        status, error = SourceStatus.LANDED, None
        try:
            with time_limit(timeout_s):
                for item in fmt.read(work.path, ctx):
                    if isinstance(item, RowBlock):  # n rows by column: appended whole, counted n
                        staged.add_columns(item.table, item.n, item.columns, item.constants)
                    else:
                        staged.add(item.table, item.values)
                if ctx.cut is not None:  # a gzip stream cut short: the reader read up to the cut as the whole file
                    raise ctx.cut
        except TraceTruncatedError as exc:
            status, error = SourceStatus.PARTIAL, _by_key(str(exc), work)
        except NotATraceError as exc:
            return self.discard(SourceStatus.SKIPPED, f"{work.path}: not a trace: {exc.why}")
        except (PhaselineError, RecursionError, MemoryError, UnicodeError, OverflowError) as exc:
            if isinstance(exc, TraceParseError):
                msg = str(exc)
            elif isinstance(exc, _FileTimeout):
                msg = f"{work.path}: {exc} ({timeout_s:g} s) after {ctx.events_read} events"
            else:
                msg = f"{work.path}: {type(exc).__name__}: {exc}"
            return self.discard(SourceStatus.QUARANTINED, msg, staged.rows_by_table())
        except Exception as exc:  # a reader's bug: this file is lost, not the whole batch
            if isinstance(exc, OSError):
                raise  # the machine's trouble (a disk error, a full disk), not the file's: stop
            msg = (f"{work.path}: internal error while reading it ({type(exc).__name__}: {exc}); a phaseline bug: "
                   "please report it with this file")  # fmt: skip
            return self.discard(SourceStatus.QUARANTINED, msg, staged.rows_by_table())
        return status, error

    def skipped_records(self) -> str:
        """What ``sources.error`` says of the records skipped amid good ones."""
        ctx = self.ctx
        first = ctx.skipped[0]
        n = len(ctx.skipped)
        known = [e.line for e in ctx.skipped if e.line is not None]  # (a JSON document's records have none)
        where = (
            f" (line{'s' if len(known) > 1 else ''} {', '.join(map(str, known[:5]))}{', ...' if len(known) > 5 else ''})"
            if known else ""
        )
        return _by_key(
            f"{n} unreadable record{'s' if n > 1 else ''} skipped{where}, {ctx.events_read} read; the first: {first}",
            self.work,
        )

    def land(self, fmt: Format, status: str, error: str | None) -> FileResult:
        """Reconcile the records read with those kept, and hand the staged rows to the batch."""
        ctx, staged = self.ctx, self.staged
        rows = staged.rows_by_table()
        kept = sum(rows.get(t, 0) for t in fmt.record_tables)
        if kept != ctx.events_read:
            ctx.notes.append(
                f"reconciliation: {ctx.events_read} records read, {kept} kept in {'+'.join(fmt.record_tables)}"
            )
        try:
            rec = self.batch.take(staged, status, error=error, events_read=ctx.events_read)
            if rec is None:  # streamed to its own files, or a second source with these bytes in the batch
                rec, files = staged.finish(status, error=error, events_read=ctx.events_read)
                self.batch.add(rec, files)
        except SchemaError as exc:
            return self.discard(SourceStatus.QUARANTINED, f"{self.work.path}: {exc}", rows)
        return self.result(rec, rows)


def read_file(work: Work, batch: StagedBatch, timeout_s: float | None) -> FileResult:
    """Read one file into ``batch`` (rows and ``sources`` row); never raises for bad content."""
    return _FileRead(work, batch, timeout_s).run()


def read_chunk(chunk: Sequence[Work], staging: Path, timeout_s: float | None) -> tuple[list[FileResult], StagedGroup]:
    """Read a chunk of files (in a worker or in the parent): one result per file, and their staged rows."""
    batch = StagedBatch(staging)
    with rarer_collections():  # (records that die young, held ones walked less often)
        results = [read_file(work, batch, timeout_s) for work in chunk]
    return results, batch.close()
