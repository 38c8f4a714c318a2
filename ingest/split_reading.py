"""A large ``.jhist`` read by several processes: each range staged by a worker (:func:`read_range_work`),
then joined in the ingest process into one source (:func:`land_split`).

The ranges and the merge are :mod:`ingest.jhist_split` and :mod:`ingest.jhist_merge`; this module
stages them.  A worker writes its range's ``events`` and ``counters`` rows to its own staged Parquet
files (the bulk of the file: its event lines and counters) and hands back what the merge needs
(:class:`~ingest.jhist_split.RangeResult`); at its end, in files of their own, it writes its held task
counters and its finished tasks and attempts, which the merge may replace.  The ingest process merges,
stages the merge's rows (the job, the tasks and attempts still running at their range's end or taken
up by a later event, the events and counters it applied), drops the rows it replaced from the ranges'
files of them (a file written again without those rows, when a later event re-opened a finished task
or replaced a task's held counters) and lands one source whose
rows are spread over every range's files, with the status, error and counts of the whole read
(:class:`~ingest.file_reading._FileRead`, the same steps).  Files of ranges the whole read would not
reach (after another history begins) are left out; when the rules cannot join the ranges
(:class:`~ingest.jhist_merge.CannotMerge`) the file is read whole here instead.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow.compute as pc
import pyarrow.parquet as pq

from ingest.base import ReadContext, Row, RowBlock
from ingest.file_reading import FileResult, Work, _FileRead, _FileTimeout, time_limit
from ingest.formats import Format
from ingest.gc_pacing import rarer_collections
from ingest.jhist import read_jhist
from ingest.jhist_merge import CannotMerge, merge_ranges
from ingest.jhist_range_rows import DROP_KEYS
from ingest.jhist_split import RangeResult, Span, read_range
from phaseline import schemas
from phaseline.arrow import column
from phaseline.errors import PhaselineError, SchemaError
from phaseline.schemas import SourceStatus
from phaseline.staged_batch import StagedBatch, StagedGroup
from phaseline.staging import StagedFile, StagedSource


@dataclass(frozen=True, slots=True)
class RangeOutcome:
    """One range as a worker staged it: what the merge needs, its files, and those of the rows the merge may
    replace (its held task counters, its tasks and attempts)."""

    result: RangeResult | None  # None: the range's rows could not be staged (``failure`` says why)
    files: tuple[StagedFile, ...]
    held_files: tuple[StagedFile, ...]
    failure: str | None = None


def _sink(staged: StagedSource) -> object:
    def add(item: Row | RowBlock) -> None:
        if isinstance(item, RowBlock):
            staged.add_columns(item.table, item.n, item.columns, item.constants)
        else:
            staged.add(item.table, item.values)

    return add


def read_range_work(
    work: Work, spans: tuple[Span, ...], index: int, staging: Path, timeout_s: float | None = None
) -> RangeOutcome:
    """Read and stage range ``index`` of a split file (in a worker); never raises for bad content.

    A range that takes longer than ``timeout_s`` fails (the file is quarantined, as one read whole).
    """
    staged = StagedSource(staging, work.key, work.sha256, work.size, "jhist")
    held = StagedSource(staging, work.key, work.sha256, work.size, "jhist")
    try:
        # (rarer collections as read_chunk reads: records that die young, held ones walked less often)
        with time_limit(timeout_s), rarer_collections():
            result = read_range(work.path, list(spans), index, _sink(staged), _sink(held))  # type: ignore[arg-type]
            _, files = staged.finish(SourceStatus.LANDED)
            _, held_files = held.finish(SourceStatus.LANDED)
    except (PhaselineError, RecursionError, MemoryError, UnicodeError, OverflowError) as exc:
        staged.discard(SourceStatus.QUARANTINED, str(exc))
        held.discard(SourceStatus.QUARANTINED, str(exc))
        why = f"{exc} ({timeout_s:g} s), range {index + 1} of {len(spans)}" if isinstance(exc, _FileTimeout) else (
            f"{type(exc).__name__}: {exc}")  # fmt: skip
        return RangeOutcome(None, (), (), f"{work.path}: {why}")
    return RangeOutcome(result, files, held_files)


def _without(files: tuple[StagedFile, ...], drops: dict[str, set[str]]) -> tuple[StagedFile, ...]:
    """A range's files of rows the merge may replace, those of a table with rows it replaced (``drops``: by
    table, the ids in :data:`~ingest.jhist_range_rows.DROP_KEYS`' column) written again without them."""
    kept = []
    for f in files:
        dropped = drops.get(f.table)
        if not dropped:
            kept.append(f)
            continue
        table = pq.ParquetFile(f.path).read()  # (not pq.read_table: it imports pyarrow.dataset and pandas, 0.6 s)
        ids = column(sorted(dropped), table.schema.field(DROP_KEYS[f.table]).type)  # (pa.array imports pandas)
        table = table.filter(pc.invert(pc.is_in(table.column(DROP_KEYS[f.table]), value_set=ids)))
        if table.num_rows:
            pq.write_table(table, f.path, **schemas.table(f.table).parquet_options())
            kept.append(StagedFile(f.table, f.path, table.num_rows))
        else:
            f.path.unlink(missing_ok=True)
    return tuple(kept)


def _remove(files: tuple[StagedFile, ...]) -> None:
    for f in files:
        with contextlib.suppress(OSError):
            f.path.unlink()


class _SplitRead(_FileRead):
    """The steps of :class:`_FileRead` for a file its ranges' workers read: the reader is the merge."""

    def __init__(self, work: Work, batch: StagedBatch, timeout_s: float | None, ranges: list[RangeOutcome]) -> None:
        super().__init__(work, batch, timeout_s)
        self.ranges = ranges
        self.range_files: tuple[StagedFile, ...] = ()  # the files of the ranges used, once merged

    def run(self) -> FileResult:
        failed = next((r.failure for r in self.ranges if r.failure is not None), None)
        if failed is not None:
            self._drop_ranges(())
            return self.discard(SourceStatus.QUARANTINED, failed)
        return super().run()

    def read_rows(self, fmt: Format) -> tuple[str, str | None] | FileResult:
        return super().read_rows(dataclasses.replace(fmt, read=self._merged))

    def _merged(self, path: Path, ctx: ReadContext) -> Iterator[Row | RowBlock]:
        """The merge's rows; the error the whole read ends with.  The ranges' files are kept aside."""
        results = [r.result for r in self.ranges if r.result is not None]
        try:
            outcome = merge_ranges(path, ctx, results)
        except CannotMerge as exc:
            self._drop_ranges(())
            ctx.notes.append(f"read whole, not split: {exc}")
            yield from read_jhist(path, ctx)
            return
        used = self.ranges[: outcome.ranges_used]
        files: list[StagedFile] = []
        for index, r in enumerate(used):
            files += r.files
            drops = outcome.drops.get(index)
            files += _without(r.held_files, drops) if drops else r.held_files
        self._drop_ranges(tuple(files))
        yield from outcome.items
        if outcome.error is not None:
            raise outcome.error

    def _drop_ranges(self, keep: tuple[StagedFile, ...]) -> None:
        """Keep ``keep`` as the ranges' files of this source; delete the others."""
        kept = {f.path for f in keep}
        _remove(tuple(f for r in self.ranges for f in (*r.files, *r.held_files) if f.path not in kept))
        self.range_files = keep

    def discard(self, status: str, error: str, rows: dict[str, int] | None = None) -> FileResult:
        _remove(self.range_files)
        self.range_files = ()
        return super().discard(status, error, rows)

    def land(self, fmt: Format, status: str, error: str | None) -> FileResult:
        """As :meth:`_FileRead.land`, with the ranges' files (and rows) in the source."""
        ctx, staged = self.ctx, self.staged
        rows = staged.rows_by_table()
        for f in self.range_files:
            rows[f.table] = rows.get(f.table, 0) + f.rows
        kept = sum(rows.get(t, 0) for t in fmt.record_tables)
        if kept != ctx.events_read:
            ctx.notes.append(
                f"reconciliation: {ctx.events_read} records read, {kept} kept in {'+'.join(fmt.record_tables)}"
            )
        try:
            rec, files = staged.finish(status, error=error, events_read=ctx.events_read)
        except SchemaError as exc:
            return self.discard(SourceStatus.QUARANTINED, f"{self.work.path}: {exc}", rows)
        rec = dataclasses.replace(rec, rows_written=sum(rows.values()))
        self.batch.add(rec, (*files, *self.range_files))
        return self.result(rec, rows)


def land_split(
    work: Work, ranges: list[RangeOutcome], staging: Path, timeout_s: float | None
) -> tuple[list[FileResult], StagedGroup]:
    """Merge a split file's staged ranges into one source (in the ingest process): its result and files."""
    batch = StagedBatch(staging)
    result = _SplitRead(work, batch, timeout_s, ranges).run()
    return [result], batch.close()
