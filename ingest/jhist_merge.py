"""The ranges of one split ``.jhist`` (:mod:`ingest.jhist_split`) joined into the whole file's rows.

:func:`merge_ranges` walks the ranges in file order with one :class:`MergeState`
(a :class:`~ingest.jhist_state.HistoryState`, so Hadoop's rules are applied by
the same handlers): range 0's job is the job so far; each range's tasks and
attempts are adopted as the range left them (held as field tuples, made
objects only when an event touches them again), then the events the range
left to the merge are applied in file order: the job events (the last
JOB_FINISHED's counters are the job's), and the events of tasks and attempts
started before the range.  So an attempt started in one range and finished
in another gets its counters at its first completion that carries any; a
``*_ATTEMPT_FAILED``/``KILLED`` of an attempt that never started is dropped
(Hadoop's ``handleTaskAttemptFailedEvent``), and of one that started is
applied; a late KILLED of the attempt that made a map task succeed re-opens the
task, and the task's counters are those of its last TASK_FINISHED (the
successful attempt's), as when the file is read whole.  The rows a range wrote at
its end and the merge replaces are dropped (:attr:`MergeOutcome.drops`): a map
task's counters a later event replaced, the finished tasks and attempts an event
took up here (the merge writes their rows, and those of the tasks and attempts
still running at their range's end; the others' are the ranges').  An event left to the merge whose fields no
reader can take is skipped here, with its true line, as the whole read skips it.

Then the file's end as :meth:`~ingest.jhist._JhistReader._end` tells it: its last
event line cut short, or no end of the job, or another history starting in a
range (the ranges after it are not used); a fatal error in a range counts only
if the whole read would have reached it.  Skipped records are counted over the
file (past 100 the file is given up, naming its first).

A file the rules cannot join exactly is read whole instead (:class:`CannotMerge`):
one whose head names no job id (a range could not know it), whose JOB_INITED
comes after the first megabyte with another number of reduces, or where one
task or attempt is *started* in two ranges (Hadoop never writes that).
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.base import MAX_SKIPPED_RECORDS, ReadContext, Row, RowBlock
from ingest.jhist import read_jhist
from ingest.jhist_lines import jhist_error
from ingest.jhist_packed import Packed
from ingest.jhist_range_rows import DROP_KEYS, record_blocks, select, settled
from ingest.jhist_records import AttemptRecord, JobRecord, TaskRecord
from ingest.jhist_schema import BadEvent
from ingest.jhist_split import RangeResult, Span, raise_again, read_range
from ingest.jhist_state import HistoryState
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.utf8_text import Utf8Text


class CannotMerge(Exception):
    """The ranges of a file cannot be joined exactly (why, in the message): read it whole."""


class _Adopted(Packed[Any]):
    """The tasks or attempts the ranges left, as the ranges' columns; :meth:`take` makes one an object.

    The rows of those finished at their range's end are the range's own (the workers write them,
    :func:`~ingest.jhist_range_rows.settled`), without those of the records taken (:attr:`taken`); the merge
    writes the others' (:meth:`open_blocks`) and those of the records taken.
    """

    def __init__(self, table: str, make: Callable[[int, tuple[Any, ...]], Any]) -> None:
        super().__init__(lambda r: r[0], lambda r: r, lambda v: v)
        self.table, self.make = table, make
        self.parts: list[tuple[int, list[list[Any]], list[bool]]] = []  # range, its columns, which are settled
        self.starts: list[int] = []  # the number of each part's first record over the parts
        self.by_id: dict[str, int] = {}  # id -> its record's number over the parts
        self.taken: dict[int, set[str]] = {}  # range -> the ids of its settled records taken
        self.open_taken: set[int] = set()  # the numbers of the open records taken

    def add(self, index: int, columns: list[list[Any]], live: dict[str, Any], what: str) -> None:
        """A range's records; :class:`CannotMerge` for one already known (started in two ranges)."""
        ids = columns[0]
        start = self.starts[-1] + len(self.parts[-1][1][0]) if self.parts else 0
        known = len(self.by_id)
        self.by_id.update(zip(ids, range(start, start + len(ids)), strict=True))
        if len(self.by_id) != known + len(ids) or not live.keys().isdisjoint(ids):
            seen = {i for _, c, _ in self.parts for i in c[0]}
            again = next(i for i in ids if i in seen or i in live)
            raise CannotMerge(f"{what} {again} is started in two ranges")
        self.parts.append((index, columns, settled(self.table, columns)))
        self.starts.append(start)

    def take(self, key: str) -> Any:
        number = self.by_id.pop(key, None)
        if number is None:
            return None
        part = bisect_right(self.starts, number) - 1
        index, columns, done = self.parts[part]
        row = number - self.starts[part]
        if done[row]:
            self.taken.setdefault(index, set()).add(key)
        else:
            self.open_taken.add(number)
        return self.make(index, tuple(c[row] for c in columns))

    def records(self) -> Iterator[Any]:
        return iter(())  # the others' rows are the ranges' own or open_blocks'

    def open_blocks(self, job_id: str | None) -> Iterator[RowBlock]:
        """The rows of the records open at their range's end and not taken (their range did not write them)."""
        for (_, columns, done), start in zip(self.parts, self.starts, strict=True):
            keep = [not d and start + i not in self.open_taken for i, d in enumerate(done)]
            if any(keep):
                yield from record_blocks(self.table, select(columns, keep), job_id)


def _task_of(values: tuple[Any, ...]) -> TaskRecord:
    task_id, task_type, status, start, finish, successful, splits, error, emitted = values[:9]
    return TaskRecord(task_id, task_type, status, start, finish, successful, splits, error, counters_emitted=emitted)


class MergeState(HistoryState):
    """One job's state over the ranges: the ranges' tasks and attempts adopted, their logged events applied."""

    def __init__(self, notes: list[str]) -> None:
        super().__init__(notes)
        self._pack_at = sys.maxsize  # nothing is packed: the adopted records stay tuples until touched
        self.spec_held: dict[str, int] = {}  # task -> the range that wrote its held counters (taken tasks)
        self.counters_replaced: dict[int, set[str]] = {}  # range -> tasks whose held counters are replaced
        self.packed_tasks = _Adopted("tasks", self._take_task)
        self.packed_attempts = _Adopted("attempts", lambda index, v: AttemptRecord(*v))

    def _take_task(self, index: int, values: tuple[Any, ...]) -> TaskRecord:
        if values[9]:
            self.spec_held[values[0]] = index
        return _task_of(values)

    def adopt(self, result: RangeResult) -> None:
        """Take a range's tasks and attempts; raise :class:`CannotMerge` for one already known (started twice)."""
        assert isinstance(self.packed_tasks, _Adopted)
        assert isinstance(self.packed_attempts, _Adopted)
        self.packed_tasks.add(result.index, result.tasks, self.tasks, "task")
        self.packed_attempts.add(result.index, result.attempts, self.attempts, "attempt")

    def rows(self) -> Iterator[Row | RowBlock]:
        """:meth:`HistoryState.rows` for the job and the tasks and attempts an event took up here; then those
        of the tasks and attempts open at their range's end (the ranges wrote the others')."""
        yield from super().rows()
        for adopted in (self.packed_tasks, self.packed_attempts):
            assert isinstance(adopted, _Adopted)
            yield from adopted.open_blocks(self.job.job_id)

    def drops(self) -> dict[int, dict[str, set[str]]]:
        """The rows of each range the merge replaces (by table, :data:`~ingest.jhist_range_rows.DROP_KEYS`): its
        tasks and attempts an event took up, its held task counters a later event replaced."""
        assert isinstance(self.packed_tasks, _Adopted)
        assert isinstance(self.packed_attempts, _Adopted)
        drops: dict[int, dict[str, set[str]]] = {}
        for table, by_range in (("counters", self.counters_replaced), ("tasks", self.packed_tasks.taken),
                                ("attempts", self.packed_attempts.taken)):  # fmt: skip
            for index, ids in by_range.items():
                drops.setdefault(index, {})[table] = ids
        return drops

    def _hold_task_counters(self, task: TaskRecord, counters: Any) -> None:
        index = self.spec_held.pop(task.task_id, None)
        if index is not None:  # the counters a range wrote at its end are replaced
            self.counters_replaced.setdefault(index, set()).add(task.task_id)
        super()._hold_task_counters(task, counters)


@dataclass
class MergeOutcome:
    """The merged rows, how many ranges are used (from the first), which of each range's rows to drop (by table,
    the ids in :data:`~ingest.jhist_range_rows.DROP_KEYS`' column: the merge replaced them), the file's error."""

    items: list[Row | RowBlock]
    ranges_used: int
    drops: dict[int, dict[str, set[str]]] = field(default_factory=dict)
    error: TraceParseError | None = None


def _file_end(path: Path, results: list[RangeResult], ended: bool) -> tuple[TraceTruncatedError | None, int | None]:
    """Why the file is cut short, if it is (every range read): its last event line cut mid-line (and that
    line), or no end of the job (as :meth:`ingest.jhist._JhistReader._end` tells a whole file)."""
    last_text = max(r.last_text for r in results)
    bad = next((r.bad_json for r in reversed(results) if r.bad_json is not None), None)
    if bad is not None and bad[0] == last_text:  # the last event line was cut short
        return TraceTruncatedError(path, f"the last event is cut short ({bad[2]}); the writer stopped mid-line",
                                   line=bad[0], offset=bad[1], hint="every event before this line was kept"), bad[0]  # fmt: skip
    if not ended:
        return TraceTruncatedError(
            path, "the history ends before JOB_FINISHED/JOB_FAILED/JOB_KILLED: the job was still running or "
            "its ApplicationMaster died", line=results[-1].line_no, offset=results[-1].offset,
            hint="every event before the end was kept",
        ), None  # fmt: skip
    return None, None


def _note_key(note: str) -> str:
    return note.split(" (line", 1)[0]  # (a note said once per kind names the first line: ingest.jhist._note_once)


def merge_ranges(path: Path, ctx: ReadContext, results: list[RangeResult]) -> MergeOutcome:
    """Join the ranges' results (in file order) into the rows the merge adds and the file's end.

    ``ctx`` is updated (events read, unknown, notes, skipped) as the whole read would
    leave it; only on success (:class:`CannotMerge`: read the file whole).
    """
    state = MergeState([])
    seqs: list[int] = []  # the events rows of the events applied here
    types: list[str] = []
    times: list[int | None] = []
    payloads: list[bytes] = []
    skipped: list[TraceParseError] = []
    items: list[Row | RowBlock] = []
    events_read = 0
    unknown: Counter[str] = Counter()
    notes: list[str] = []
    stop: TraceParseError | None = None
    used = 0
    for result in results:
        used += 1
        if result.index == 0:
            state.job = JobRecord(*result.job)
            state._job_counters = dict(result.job_counters)
            if state.job.job_id is None:
                raise CannotMerge("no job id in the file's first range")
        elif result.preset != (state.job.job_id, state.job.total_reduces) or result.job[0] != state.job.job_id:
            raise CannotMerge(f"range {result.index} started as job {result.preset} and ended as {result.job[0]}, "
                              f"the file says {(state.job.job_id, state.job.total_reduces)}")  # fmt: skip
        state.adopt(result)
        events_read += result.events_read
        unknown.update(result.unknown)
        notes += result.notes
        skipped += [raise_again(path, s) for s in result.skipped]
        for kind, payload, row in result.log:
            try:
                state.handlers[kind](payload)
            except BadEvent as exc:
                if row is not None:  # (a job event's row was decided in its range)
                    events_read -= 1
                    skipped.append(jhist_error(path, f"{row[2]}: {exc}", row[0], row[1]))
                continue
            if row is not None:
                line_no, _, etype, ts, payload_json = row
                seqs.append(line_no)
                types.append(etype)
                times.append(ts)
                payloads.append(payload_json)
            if state.out:
                items += state.out
                state.out.clear()
        if result.stop is not None:
            stop = raise_again(path, result.stop)
            break
    skipped.sort(key=lambda e: e.line or 0)
    if len(skipped) > MAX_SKIPPED_RECORDS:  # as skip_record gives the file up, naming its first
        first = skipped[0]
        return MergeOutcome([], used, error=TraceParseError(
            path, f"more than {MAX_SKIPPED_RECORDS} unreadable records; the first: {first.message}",
            line=first.line, offset=first.offset, hint="not a trace of this format, or too corrupt to trust"))  # fmt: skip
    if stop is not None and not isinstance(stop, TraceTruncatedError):
        return MergeOutcome([], used, error=stop)
    error = stop
    if stop is None:
        error, cut_line = _file_end(path, results, state.job.ended)
        if cut_line is not None:  # the cut is not a skipped line
            skipped = [e for e in skipped if e.line != cut_line]
    if seqs:
        items.append(RowBlock("events", len(seqs), {"seq": seqs, "event_type": types, "ts_ms": times,
                                                    "payload_json": Utf8Text(payloads)}, {"job_id": state.job.job_id}))  # fmt: skip
    items += state.rows()
    seen: set[str] = set()
    ctx.notes += [n for n in [*notes, *state.notes] if _note_key(n) not in seen and not seen.add(_note_key(n))]  # type: ignore[func-returns-value]
    ctx.events_read += events_read
    ctx.unknown.update(unknown)
    ctx.skipped += skipped
    return MergeOutcome(items, used, state.drops(), error)


def without(block: RowBlock, drops: dict[str, set[str]]) -> RowBlock | None:
    """A block a range wrote for the merge to drop some of, without the rows the merge replaced
    (``drops``: by table, the ids in :data:`~ingest.jhist_range_rows.DROP_KEYS`' column; None: no row left)."""
    dropped = drops.get(block.table)
    if not dropped:
        return block
    keep = [i for i, t in enumerate(block.columns[DROP_KEYS[block.table]]) if t not in dropped]
    if len(keep) == block.n:
        return block
    if not keep:
        return None
    columns = {name: [values[i] for i in keep] for name, values in block.columns.items()}
    return RowBlock(block.table, len(keep), columns, block.constants)


def read_jhist_split(path: Path, ctx: ReadContext, spans: list[Span]) -> Iterator[Row | RowBlock]:
    """The rows of ``path`` read range by range in this process and merged: the same rows as
    :func:`~ingest.jhist.read_jhist` (as a multiset; tests and a single process use it, workers
    read the ranges of a large file in parallel, :mod:`ingest.split_reading`)."""
    parts: list[list[Row | RowBlock]] = []
    held: list[list[RowBlock]] = []
    results = []
    for index in range(len(spans)):
        parts.append([])
        held.append([])
        results.append(read_range(path, spans, index, parts[-1].append, held[-1].append))
    try:
        outcome = merge_ranges(path, ctx, results)
    except CannotMerge as exc:
        ctx.notes.append(f"read whole, not split: {exc}")
        yield from read_jhist(path, ctx)
        return
    if outcome.error is not None and not isinstance(outcome.error, TraceTruncatedError):
        raise outcome.error
    for index in range(outcome.ranges_used):
        yield from parts[index]
        drops = outcome.drops.get(index, {})
        for block in held[index]:
            kept = without(block, drops)
            if kept is not None:
                yield kept
    yield from outcome.items
    if outcome.error is not None:
        raise outcome.error
