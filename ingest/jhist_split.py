"""One large ``.jhist`` read as byte ranges, each in its own process; :mod:`ingest.jhist_merge` joins them.

How a file is split
-------------------
:class:`LineCuts` cuts an uncompressed file (a gzipped one stays whole: a
stream has no place to start in the middle) into ranges of about
``range_bytes``, each ending just after a ``\\n`` (never inside the header:
line 1 ``Avro-Json`` and the writer's schema), and counts the lines before each
cut, so that every range numbers its lines (``events.seq``, the line of a
skipped record) and its byte offsets as the whole file would.  It is fed the
blocks the ingest reads anyway to hash the file, so the cut costs no read.

How a range is read
-------------------
:func:`read_range` reads one range with the ``.jhist`` reader itself
(:class:`~ingest.jhist._JhistReader`, the same lines, decoders and rules) into a
:class:`RangeState`.  Range 0 is the start of the file: its state *is* the whole
read's state at its end, and it applies every event.  A later range starts
from a state the reader cannot see, so it applies an event only when nothing
before the range can change what the event does, and leaves the others to the
merge (:attr:`RangeResult.log`, with their ``events`` rows).  Hadoop's rules
(``JobHistoryParser``'s, as :mod:`ingest.jhist_state` keeps them) say what that is:

* A task's events are applied where its TASK_STARTED is in the range; an
  attempt's where its ``*_ATTEMPT_STARTED`` is (of a task started in the
  range).  An event of a task or attempt started before the range (an attempt
  started in one range and finished in another; TASK_FINISHED naming the
  successful attempt, whose counters are the task's; TASK_FAILED; a
  ``*_ATTEMPT_FAILED``/``KILLED`` of an attempt that may or may not have
  started, which Hadoop's ``handleTaskAttemptFailedEvent`` drops if it did
  not; a late KILLED of the attempt that made a map task succeed, which re-opens
  it) is left to the merge, and so is every later event of that task and attempt
  in the range.  Such events are those of the tasks running across a cut: a few
  per cut.
* Job events (JOB_SUBMITTED, JOB_INITED, JOB_INFO_CHANGED, JOB_QUEUE_CHANGED,
  JOB_FINISHED and the unsuccessful ends) are applied in the range *and*
  logged: the merge builds the job from them in file order (the last
  JOB_FINISHED's counters are the job's).  A range starts with the job id and
  total reduces (which decide whether a map task's counters wait for the end)
  that the lines before it set, read up to a megabyte (:func:`_probe`); the merge
  checks them.
* Events that change no state (AM_STARTED and the other event-only types,
  unknown types) are only ``events`` rows, read where they are.

A range writes its ``events`` rows and the ``counters`` its state emits (an
attempt's at its first completion with counters, a task's at its end); at its
end, the counters of map tasks that wait for the end of the file
(:attr:`RangeResult.held_tasks`) and the rows of its finished tasks and
attempts (:mod:`ingest.jhist_range_rows`), which the merge leaves out where a
later event changed them: most of a file's tasks and attempts are
written by the workers, not the merge.  The job and the tasks and attempts
(their fields: the merge writes the rows of those still running at the
range's end, and of those a later event takes up) are handed to the merge too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any

import numpy as np

from ingest.base import ReadContext, Row, RowBlock
from ingest.jhist import _JhistReader
from ingest.jhist_lines import BLANK, JhistLines
from ingest.jhist_packed import held
from ingest.jhist_range_rows import TASK_FIELDS, record_blocks, select, settled
from ingest.jhist_records import AttemptRecord, JobRecord
from ingest.jhist_state import HistoryState
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import HistoryEventKind as EventKind
from phaseline.hadoop_names import task_id_of

#: The file's head a later range reads first to learn the job id and its reduces (:func:`_probe`).
PROBE_BYTES = 1 << 20
_JOB_KINDS = frozenset({EventKind.JOB_SUBMITTED, EventKind.JOB_INITED, EventKind.JOB_INFO_CHANGED,
                        EventKind.JOB_QUEUE_CHANGED, EventKind.JOB_FINISHED, EventKind.JOB_UNSUCCESSFUL})  # fmt: skip
_TASK_KINDS = frozenset({EventKind.TASK_STARTED, EventKind.TASK_FINISHED, EventKind.TASK_FAILED,
                         EventKind.TASK_UPDATED})  # fmt: skip
_ATTEMPT_KINDS = frozenset({EventKind.ATTEMPT_STARTED, EventKind.ATTEMPT_FINISHED, EventKind.ATTEMPT_UNSUCCESSFUL})
_attempt_values = attrgetter(*AttemptRecord.__slots__)


def _columns(records: list[tuple[Any, ...]], width: int) -> list[list[Any]]:
    return [list(c) for c in zip(*records, strict=True)] if records else [[] for _ in range(width)]
_job_values = attrgetter(*JobRecord.__slots__)


@dataclass(frozen=True, slots=True)
class Span:
    """A byte range of a file, ``[start, end)``, and the lines before it (its first line is ``lines_before + 1``)."""

    start: int
    end: int
    lines_before: int


class LineCuts:
    """Cuts at line ends about every ``range_bytes``, from the blocks of a file fed in order (:meth:`feed`).

    >>> cuts = LineCuts(10)
    >>> cuts.feed(b"Avro-Json\\n{}\\nabc\\ndefghijk\\nl\\nmnopqrstuvw\\n")
    >>> cuts.spans()
    [Span(start=0, end=17, lines_before=0), Span(start=17, end=28, lines_before=3), Span(start=28, end=40, lines_before=5)]
    """

    def __init__(self, range_bytes: int) -> None:
        self.range_bytes = range_bytes
        self.size = 0
        self.newlines = 0
        self.cuts: list[tuple[int, int]] = []  # (byte, lines before it)
        self._next: int | None = None  # the byte from which the next cut is looked for; None: the header first
        self._head = b""  # the file's first bytes, until the header's end is found

    def feed(self, block: bytes) -> None:
        """The next block of the file."""
        pos = self.size
        if self._next is None:
            self._head += block[: 1 << 20]
            header_end = _header_end(self._head)
            if header_end is not None:
                self._next = max(self.range_bytes, header_end)
            elif len(self._head) >= 1 << 20:
                self._next = -1  # no header in the first MiB: not cut (the reader says what is wrong)
        nxt = self._next
        while nxt is not None and nxt >= 0 and nxt < pos + len(block):
            i = block.find(b"\n", max(0, nxt - pos))
            if i < 0:
                break  # the line runs on into the next block
            cut = pos + i + 1
            self.cuts.append((cut, self.newlines + _newlines(block, i + 1)))
            nxt = self._next = cut + self.range_bytes
        self.newlines += _newlines(block, len(block))
        self.size = pos + len(block)

    def spans(self) -> list[Span]:
        """The ranges: one (the whole file) when the file is no longer than a range."""
        cuts = [(c, n) for c, n in self.cuts if c < self.size]
        bounds = [(0, 0), *cuts]
        return [Span(start, end, before) for (start, before), (end, _) in
                zip(bounds, [*cuts, (self.size, 0)], strict=True)]  # fmt: skip


def _newlines(block: bytes, end: int) -> int:
    """The line ends in ``block[:end]`` (numpy counts them 2.5x faster than ``bytes.count``)."""
    return int(np.count_nonzero(np.frombuffer(block, np.uint8, end) == _NL))


_NL = ord("\n")


def _header_end(head: bytes) -> int | None:
    """The byte after line 1 and the next line that is not blank (the writer's schema), if ``head`` holds them."""
    end = head.find(b"\n")
    while end >= 0:
        nxt = head.find(b"\n", end + 1)
        if nxt < 0:
            return None
        if head[end + 1 : nxt].strip(BLANK):
            return nxt + 1
        end = nxt
    return None


def line_cuts(path: Path, range_bytes: int) -> list[Span]:
    """The spans of ``path`` (read for it; an ingest feeds :class:`LineCuts` the blocks it hashes)."""
    cuts = LineCuts(range_bytes)
    with open(path, "rb") as fh:
        while block := fh.read(1 << 20):
            cuts.feed(block)
    return cuts.spans()


# ---------------------------------------------------------------------- a range's state
#: A logged event: its kind, its payload, and for an event left to the merge its ``events`` row
#: (line, byte offset, type, time, the line as UTF-8); None for a job event the range applied too.
LogEntry = tuple[EventKind, dict[str, Any], tuple[int, int, str, int | None, bytes] | None]


class RangeState(HistoryState):
    """:class:`HistoryState` of one range after the first: applies what the range alone decides, logs the rest."""

    def __init__(self, notes: list[str], job_id: str | None, total_reduces: int | None) -> None:
        super().__init__(notes)
        self.job.job_id, self.job.total_reduces = job_id, total_reduces
        self.preset = (job_id, total_reduces)
        self.log: list[LogEntry] = []
        self.local_tasks: set[str] = set()  # started in this range
        self.local_attempts: dict[str, str] = {}  # started in this range: attempt -> task
        self.foreign: set[str] = set()  # tasks and attempts whose events are the merge's from here on
        for kind, handler in list(self.handlers.items()):
            if kind in _JOB_KINDS:
                self.handlers[kind] = self._job_event(kind, handler)
            elif kind in _TASK_KINDS:
                self.handlers[kind] = self._task_event(kind, handler)
            elif kind in _ATTEMPT_KINDS:
                self.handlers[kind] = self._attempt_event(kind, handler)

    def _decline(self, kind: EventKind, p: dict[str, Any], *ids: Any) -> None:
        self.foreign.update(i for i in ids if type(i) is str)
        self.pending = (kind, p)

    def _job_event(self, kind: EventKind, handler: Callable[[dict[str, Any]], None]) -> Callable[..., None]:
        def apply(p: dict[str, Any]) -> None:
            self.log.append((kind, p, None))
            handler(p)  # (a bad field raises BadEvent here, as in the merge, which ignores it there)

        return apply

    def _task_event(self, kind: EventKind, handler: Callable[[dict[str, Any]], None]) -> Callable[..., None]:
        started = kind is EventKind.TASK_STARTED

        def apply(p: dict[str, Any]) -> None:
            tid = p.get("taskid")
            if type(tid) is not str or not tid or tid in self.foreign or not (started or tid in self.local_tasks):
                self._decline(kind, p, tid)
                return
            self.local_tasks.add(tid)
            handler(p)

        return apply

    def _attempt_event(self, kind: EventKind, handler: Callable[[dict[str, Any]], None]) -> Callable[..., None]:
        started = kind is EventKind.ATTEMPT_STARTED

        def apply(p: dict[str, Any]) -> None:
            aid = p.get("attemptId")
            if type(aid) is not str or not aid or aid in self.foreign:
                self._decline(kind, p, aid)
                return
            tid = self.local_attempts.get(aid)
            if tid is None:  # as HistoryState._attempt finds the task of a new attempt
                given = p.get("taskid")
                tid = task_id_of(aid) if given is None or given == "" else given
                if not started or type(tid) is not str or tid not in self.local_tasks:
                    self._decline(kind, p, aid, tid)
                    return
                self.local_attempts[aid] = tid
            if tid in self.foreign:
                self._decline(kind, p, aid)
                return
            handler(p)

        return apply


# ---------------------------------------------------------------------- reading a range
#: An error a range stopped at: (its class's name, message, line, offset, hint): exceptions are not
#: all picklable, and the merge raises it again only if the whole read would have reached it.
StopError = tuple[str, str, int | None, int | None, str | None]


@dataclass(frozen=True, slots=True)
class RangeResult:
    """What one range hands to the merge (picklable: it travels from a worker process)."""

    index: int
    events_read: int
    unknown: dict[str, int]
    notes: list[str]
    skipped: list[StopError]
    last_text: int  # the last line that was not blank (0: none)
    bad_json: tuple[int, int, str] | None  # the last line skipped as not JSON: line, offset, why
    line_no: int
    offset: int
    stop: StopError | None  # a fatal error or another history's start (TraceTruncatedError), if it stopped there
    preset: tuple[str | None, int | None]  # the job id and total reduces it started with
    job: tuple[Any, ...]  # range 0: the job as it stands at the end of the range (JobRecord's fields)
    job_counters: dict[str, tuple[list[str], list[int], list[str], list[int]]]  # range 0: the last JOB_FINISHED's
    log: list[LogEntry]
    #: The range's tasks by field (:data:`TASK_FIELDS`) and its attempts (AttemptRecord's fields): columns,
    #: so that the merge writes the rows of those no later event touches without handling them one by one.
    tasks: list[list[Any]]
    attempts: list[list[Any]]
    held_tasks: frozenset[str]  # tasks whose held counters this range wrote at its end


def stop_error(exc: TraceParseError) -> StopError:
    return (type(exc).__name__, exc.message, exc.line, exc.offset, exc.hint)


def raise_again(path: Path, stop: StopError) -> TraceParseError:
    """The error a :data:`StopError` describes."""
    cls = TraceTruncatedError if stop[0] == TraceTruncatedError.__name__ else TraceParseError
    return cls(path, stop[1], line=stop[2], offset=stop[3], hint=stop[4])


class _RangeReader(_JhistReader):
    """The reader of one range: no end-of-file checks (the merge's), and what the state could not decide logged."""

    def __init__(self, path: Path, ctx: ReadContext, span: Span, first: bool,
                 preset: tuple[str | None, int | None]) -> None:  # fmt: skip
        self.first, self.preset = first, preset
        super().__init__(path, ctx, span=(span.start, span.end, span.lines_before))
        if not first:  # (what is wrong with the header is range 0's to say)
            self.frame = JhistLines(path, ReadContext(path))
        self.held_tasks: set[str] = set()
        self.last_text = 0

    def _state(self, ctx: ReadContext) -> HistoryState:
        return HistoryState(ctx.notes) if self.first else RangeState(ctx.notes, *self.preset)

    def _defer(self, line_no: int, start: int, etype: str, ts: int | None, payload_json: bytes) -> None:
        state = self.state
        assert isinstance(state, RangeState)
        assert state.pending is not None
        kind, payload = state.pending
        state.pending = None
        state.log.append((kind, payload, (line_no, start, etype, ts, payload_json)))

    def _end(self, last_text: int) -> Iterator[Row | RowBlock]:
        self.last_text = last_text
        yield from self._finish()

    def _finish(self) -> Iterator[Row | RowBlock]:
        """The range's rows not yet yielded: its events, the counters its state emitted and held."""
        if self.event_columns[0] and self.state.job.job_id is not None:
            yield self._event_block()
        state = self.state
        state.flush_counters()
        yield from state.out
        state.out.clear()

    def held_counters(self) -> Iterator[RowBlock]:
        """The counters the range's finished map tasks hold (written now; the merge may drop some)."""
        state = self.state
        jid = state.job.job_id
        for t in held(state.packed_tasks, state.tasks):
            if t.counter_values:
                groups, sizes, names = t.counter_layout
                state._counter_blocks.add(jid, "task", t.task_id, None, groups, sizes, names, t.counter_values.tolist())
                self.held_tasks.add(t.task_id)
                yield from state.out  # type: ignore[misc]  # (only counters blocks)
                state.out.clear()
        state.flush_counters()
        yield from state.out  # type: ignore[misc]
        state.out.clear()

    def result(self, index: int, stop: TraceParseError | None) -> RangeResult:
        state, ctx = self.state, self.ctx
        tasks = _columns([(t.task_id, t.task_type, t.status, t.start_ms, t.finish_ms, t.successful_attempt_id,
                           t.splits, t.error, t.counters_emitted, t.task_id in self.held_tasks)
                          for t in held(state.packed_tasks, state.tasks)], len(TASK_FIELDS))  # fmt: skip
        attempts = _columns(list(map(_attempt_values, held(state.packed_attempts, state.attempts))),
                            len(AttemptRecord.__slots__))  # fmt: skip
        return RangeResult(
            index, ctx.events_read, dict(ctx.unknown), list(ctx.notes), [stop_error(e) for e in ctx.skipped],
            self.last_text, self.bad_json, self.line_no, self.offset, None if stop is None else stop_error(stop),
            self.preset, _job_values(state.job), state._job_counters,
            state.log if isinstance(state, RangeState) else [], tasks, attempts, frozenset(self.held_tasks),
        )  # fmt: skip


def _probe(path: Path, start: int) -> tuple[str | None, int | None]:
    """The job id and total reduces as the file's head sets them: the lines before ``start``, at most
    :data:`PROBE_BYTES` of them (the merge checks them against the job as the ranges before set it)."""
    reader = _RangeReader(path, ReadContext(path), Span(0, min(start, PROBE_BYTES), 0), True, (None, None))
    try:
        for _ in reader.run():
            pass
    except TraceParseError:
        pass
    return reader.state.job.job_id, reader.state.job.total_reduces


def read_range(
    path: Path, spans: list[Span], index: int, sink: Callable[[Row | RowBlock], None],
    held_sink: Callable[[RowBlock], None],
) -> RangeResult:  # fmt: skip
    """Read range ``index`` of ``spans``: its rows to ``sink``, those the merge may leave out (:data:`DROP_KEYS`:
    its held task counters, its tasks and attempts) to ``held_sink``; what the merge needs back.  Never
    raises for bad content (the error is in :attr:`RangeResult.stop`)."""
    first = index == 0
    preset = (None, None) if first else _probe(path, spans[index].start)
    reader = _RangeReader(path, ReadContext(path), spans[index], first, preset)
    stop: TraceParseError | None = None
    try:
        for item in reader.run():
            sink(item)
    except TraceParseError as exc:  # (a TraceTruncatedError: another history begins in the range)
        stop = exc
    if not isinstance(stop, TraceTruncatedError) and stop is not None:
        return reader.result(index, stop)  # fatal: nothing of the file lands
    for block in reader.held_counters():
        held_sink(block)
    result = reader.result(index, stop)
    for table, columns in (("tasks", result.tasks), ("attempts", result.attempts)):
        for block in record_blocks(table, select(columns, settled(table, columns)), reader.state.job.job_id):
            held_sink(block)
    return result
