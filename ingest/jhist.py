"""Hadoop 0.23 / 2.x / 3.x job history (``.jhist``, Avro-JSON) -> phaseline rows.
(Hadoop 3's ``Avro-Binary`` flavour reaches it as the JSON flavour's lines: :mod:`ingest.jhist_binary`.)

A ``.jhist`` file is ``Avro-Json`` on line 1, the writer's Avro schema on
line 2, then one event per line (``{"type": "TASK_STARTED", "event":
{"org.apache.hadoop.mapreduce.jobhistory.TaskStarted": {...}}}``), sometimes
with a leading space or blank lines between.  The reader is schema-driven: it
learns from line 2 which fields of which record are Avro unions and unwraps
their type-wrapped values (``{"string": "x"}``, ``{"long": 3}``,
``{"org...JhCounters": {...}}``); bare values are accepted everywhere too, and
fields that a version lacks are simply absent (NULL in the tables).

Lines of the common event types are decoded by msgspec into only the fields
the rules read (:mod:`ingest.jhist_typed`, with less work than orjson's full
decode); any other line, and any line of those types that is not plainly typed,
is decoded by orjson.  Both go through the same steps after, and give the same
rows (``typed=False`` reads every line with orjson, for that comparison).

Rows
----
``events``: one per event line, in file order (``seq`` = the event's 1-based
line number, ``payload_json`` = the line's raw JSON text, ``ts_ms`` = the
event's own time where it has one), as blocks of a row group each (the
table's flush size, or fewer rows once their text passes 256 KiB) once the job
id is known; unknown event types land here too and are counted in
``ctx.unknown``.  ``counters``: job_total / job_map /
job_reduce from JOB_FINISHED, task scope from TASK_FINISHED / TASK_FAILED,
attempt scope from the attempt completion events (``group_name`` and
``counter_name`` are the raw Avro ``name`` s), the rows of consecutive
JhCounters records as :class:`~ingest.base.RowBlock` s of up to 4,096 rows.
``jobs``, ``tasks`` and ``attempts``: one row each (tasks and attempts in
blocks of up to 8,192), written when the file ends (or at a cut).  Which
event's value wins for each column is documented in :mod:`ingest.jhist_state`
(as Hadoop's ``JobHistoryParser`` decides, with the noted exceptions).

A large plain file may be read in byte ranges (``span``), each in its own process,
and merged into the same rows: :mod:`ingest.jhist_split`, :mod:`ingest.jhist_merge`.

Bad input
---------
A line that is not JSON, or not a history event, is skipped and remembered in
``ctx.skipped`` with its line and byte offset (:func:`~ingest.base.skip_record`:
the file lands as partial, every other event kept; past 100 such lines the
file is given up with :class:`~phaseline.errors.TraceParseError`), unless it
is the last non-blank line: then the writer was cut off, every row before the
cut is yielded and :class:`~phaseline.errors.TraceTruncatedError` is raised.
So is it at a second ``Avro-Json`` line, where another history begins (files
concatenated): the first is read, and its events are never mixed with the
other job's.
An event whose fields a reader cannot take (:class:`BadEvent`: a wrong type,
a missing id) is skipped the same way; what its handler had set before the
bad field stays.  A line 2 that is no usable Avro schema is named the same
way, and the events are read without it.  A file
whose job never reached JOB_FINISHED/FAILED/KILLED also ends with
TraceTruncatedError (after all its rows).
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple

from ingest.base import ReadContext, Row, RowBlock, skip_record
from ingest.counters_map import EVENT_SPECS
from ingest.formats import Format
from ingest.gc_pacing import paced
from ingest.jhist_binary import BinaryHistoryEnd
from ingest.jhist_lines import BLANK, MAX_LINE_BYTES, AnotherHistory, JhistLines, jhist_error, sniff_history
from ingest.jhist_lines import sniff_jhist as sniff_jhist  # (defined with the framing)
from ingest.jhist_schema import BadEvent, UnionFields, WriterSchema, fallback_time, opt_int
from ingest.jhist_state import HistoryState
from ingest.jhist_typed import Envelope, decode_event
from ingest.jhist_untyped import decode_untyped
from ingest.opening import open_binary
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import HistoryEventKind
from phaseline.schemas import EVENTS
from phaseline.utf8_text import Utf8Text

#: ``events`` rows per block: at most the table's flush size ...
_EVENT_BLOCK_ROWS = EVENTS.flush_rows
#: ... or fewer, once their text passes this size: events that carry counters run to kilobytes,
#: and a block's text is copied twice on its way to Arrow (peak memory stays flat with file size).
#: Small, so that the rows not yet yielded stay in a core's cache beside the decoding (the store
#: gathers blocks into row groups itself): 2 MiB -> 256 KiB, with the counters' smaller blocks,
#: read_jhist ~8-20 % less CPU on the 50 MB file.
_EVENT_BLOCK_BYTES = 256 << 10


class _EventPlan(NamedTuple):
    """What applying an event of one type (carried by ``record``) does: found once per type, not per event."""

    record: str
    unknown: bool  # a type phaseline does not know: only counted, and kept in events
    handler: Callable[[dict[str, Any]], None] | None  # HistoryState's handler; None: the event alone
    time_field: str | None
    wrapped: UnionFields  # the record's union fields, by the writer's schema
    in_schema: bool  # the type is one of the writer's schema's symbols


class _TypedPlan(NamedTuple):
    """:class:`_EventPlan` for a typed line (:mod:`ingest.jhist_typed`) of one class: a known type with a handler."""

    etype: str
    handler: Callable[[dict[str, Any]], None]
    time_field: str | None
    wrapped: UnionFields  # the union fields the typed payload may hold a dict in


class _JhistReader:
    """The state of one file being read; :meth:`run` is the generator behind :func:`read_jhist`."""

    def __init__(
        self, path: Path, ctx: ReadContext, *, typed: bool = True, span: tuple[int, int, int] | None = None
    ) -> None:
        self.path = path
        self.typed = typed  # False: every line the dict way (the typed path's equivalence tests)
        self.ctx = ctx
        # A byte range of the file (start, end, lines before start), :mod:`ingest.jhist_split`; None: all of it
        self.span = span
        self.schema: WriterSchema | None = None
        self.state = self._state(ctx)
        # ``events`` rows not yet yielded, by column (seq, event_type, ts_ms, payload_json as the line's
        # UTF-8 bytes): they leave as one block of up to _EVENT_BLOCK_ROWS (or _EVENT_BLOCK_BYTES) once
        # the job id is known.
        self.event_columns: tuple[list[int], list[str], list[int | None], list[bytes]] = ([], [], [], [])
        self.frame = JhistLines(path, ctx)  # the header, the writer's schema, the lines
        self.lines: Iterator[bytes] = iter(())
        self.line_no = self.offset = 0
        self._reached = (0, 0, 0)  # where :meth:`_read_lines` got to: line, offset, last line not blank
        self.bad_json: tuple[int, int, str] | None = None  # the last line skipped as not JSON: line, offset, why
        self._plans: dict[str, _EventPlan] = {}  # by event type: what applying one does (:meth:`_plan`)
        self._typed_plans: dict[type, _TypedPlan] = {}  # the same for a typed line, by its class (:meth:`_typed_plan`)

    # ------------------------------------------------------------------ reading
    def run(self) -> Iterator[Row | RowBlock]:
        """All rows of the file; the body of :func:`read_jhist` (its lines in :meth:`_read_lines`)."""
        try:
            fh = open_binary(self.path)
        except OSError as exc:
            raise TraceParseError(self.path, f"cannot open: {exc}") from None
        with fh:
            try:
                line_no, offset = self.frame.header(fh)
                self.schema = self.frame.schema
                line_no, offset, limit = self.frame.seek(fh, self.span, line_no, offset)
                self._reached = (line_no, offset, 0)
                yield from self._read_lines(fh, limit, line_no, offset)
            except AnotherHistory as exc:  # files concatenated
                self.line_no, self.offset = exc.line_no, exc.start
                yield from self._finish()
                raise TraceTruncatedError(
                    self.path, "another history begins here (a second 'Avro-Json' line: files "
                    "concatenated); only the first is read", line=exc.line_no, offset=exc.start,
                    hint="split the file at this line and ingest each part",
                ) from None  # fmt: skip
            except EOFError as exc:  # a compressed (or binary) history cut short: keep what came before
                line_no, offset, _ = self._reached
                self.line_no, self.offset = line_no, offset - self.frame.unterminated
                yield from self._finish()
                what = "binary history" if isinstance(exc, BinaryHistoryEnd) else "compressed stream"
                raise TraceTruncatedError(self.path, f"{what} ends early: {exc}", line=self.line_no,
                                          offset=self.offset) from None  # fmt: skip
            except (zlib.error, OSError) as exc:
                line_no, offset, _ = self._reached
                raise self._error(f"reading stopped: {exc}", line_no, offset) from None
        line_no, offset, last_text = self._reached
        self.line_no, self.offset = line_no, offset - self.frame.unterminated
        yield from self._end(last_text)

    def _read_lines(self, fh: IO[bytes], limit: int | None, line_no: int, offset: int) -> Iterator[Row | RowBlock]:
        """The rows of the event lines after ``line_no`` (at ``offset``) up to ``limit``: one loop, its
        names local (it runs once a line).  Where it got to, however it ends, is left in :attr:`_reached`
        (line, offset, the last line that was not blank)."""
        last_text = 0
        try:
            out, ctx, state, job, apply = self.state.out, self.ctx, self.state, self.state.job, self._apply
            seqs, types, times, payloads = self.event_columns
            fast, typed_plans, unwrap = self.typed, self._typed_plans, WriterSchema.unwrap
            lines = self.lines = self.frame.lines(fh, limit)
            block_bytes = 0
            max_bytes, max_rows = _EVENT_BLOCK_BYTES, _EVENT_BLOCK_ROWS
            for raw in lines:
                line_no += 1
                if not raw:  # (Hadoop writes a blank line after each event)
                    offset += 1
                    continue
                start = offset
                n = len(raw)
                offset += n + 1
                if n >= MAX_LINE_BYTES:
                    raise self._error(f"a line longer than {MAX_LINE_BYTES >> 20} MiB", line_no, start)
                text = raw.strip(BLANK)
                if not text:
                    continue
                last_text = line_no
                # The common events typed (ingest.jhist_typed), once the job id is known; others with orjson.
                ev = decode_event(text) if fast and job.job_id is not None else None
                if ev is None:
                    if (split := self._decode_line(text, line_no, start)) is None:
                        continue  # skipped (ctx.skipped)
                    etype, record, payload, payload_json = split
                else:  # (what _apply does, with what its type's plan already knows)
                    etype, handler, time_field, wrapped = typed_plans.get(ev.__class__) or self._typed_plan(ev, line_no)
                    payload_json = text
                ctx.events_read += 1
                try:
                    if ev is None:
                        ts = apply(etype, record, payload, line_no)
                    else:
                        payload = ev.event.record
                        if wrapped:
                            unwrap(payload, wrapped)
                        ts = payload.get(time_field)  # (an int or None: checked as decoded)
                        handler(payload)
                except BadEvent as exc:  # fields no reader can take: skipped like a corrupt line
                    ctx.events_read -= 1
                    skip_record(ctx, self._error(f"{etype}: {exc}", line_no, start))
                    continue
                if state.pending is not None:  # a range's event left to the merge, its row too
                    self._defer(line_no, start, etype, ts, payload_json)
                    continue
                seqs.append(line_no)
                types.append(etype)
                times.append(ts)
                payloads.append(payload_json)
                block_bytes += len(text)
                if (block_bytes >= max_bytes or len(seqs) >= max_rows) and job.job_id is not None:
                    yield self._event_block()
                    seqs, types, times, payloads = self.event_columns
                    block_bytes = 0
                if out:
                    yield from out
                    out.clear()
        finally:
            self._reached = (line_no, offset, last_text)

    def _state(self, ctx: ReadContext) -> HistoryState:
        return HistoryState(ctx.notes)

    def _defer(self, line_no: int, start: int, etype: str, ts: int | None, payload_json: bytes) -> None:
        raise NotImplementedError  # (only a range's state defers events: ingest.jhist_split)

    def _apply(self, etype: str, record: str, payload: dict[str, Any] | None, line_no: int) -> int | None:
        """Apply one event to the state (:class:`HistoryState`'s handler of its kind); its time.

        Raises :class:`BadEvent` where its fields are none a reader can take.
        """
        plan = self._plans.get(etype)
        if plan is None or plan.record != record:
            plan = self._plans[etype] = self._plan(etype, record)
        state = self.state
        if plan.unknown:
            self.ctx.unknown[etype] += 1
            if payload is None:
                return None
            ts = fallback_time(payload)
            if state.job.job_id is None:
                state.learn_job_id(payload)
            return ts
        handler = plan.handler
        if payload is None:
            if handler is not None:
                raise BadEvent("the event carries no record")
            return None
        if plan.wrapped:
            WriterSchema.unwrap(payload, plan.wrapped)
        if not plan.in_schema:
            self._note_once(f"event type {etype} is not in the file's own schema (line {line_no})")
        time_field = plan.time_field
        ts = opt_int(payload.get(time_field), time_field) if time_field is not None else None
        if state.job.job_id is None:
            state.learn_job_id(payload)
        if handler is not None:
            handler(payload)
        return ts

    def _plan(self, etype: str, record: str) -> _EventPlan:
        """What :meth:`_apply` does with events of type ``etype`` carried by ``record`` (found once per type)."""
        spec = EVENT_SPECS.get(etype)
        schema = self.schema
        assert schema is not None
        if spec is None:
            return _EventPlan(record, True, None, None, (), True)
        handler = None if spec.kind is HistoryEventKind.EVENT_ONLY else self.state.handlers[spec.kind]
        return _EventPlan(record, False, handler, spec.time_field, schema.unions.get(record, ()),
                          etype in schema.symbols)  # fmt: skip

    def _typed_plan(self, ev: Envelope, line_no: int) -> _TypedPlan:
        """What applying a typed line of ``ev``'s class does (:meth:`_plan`'s, found once per class): the
        writer's union fields only where the payload may hold a dict, the time field read as it stands."""
        etype = ev.etype
        plan = self._plan(etype, ev.record)
        assert plan.handler is not None  # (every type of TYPED_EVENTS has a handler ...)
        assert plan.time_field is None or plan.time_field in ev.fields  # (... and decodes its time field)
        if not plan.in_schema:
            self._note_once(f"event type {etype} is not in the file's own schema (line {line_no})")
        wrapped = tuple((name, branches) for name, branches in plan.wrapped if name in ev.dict_fields)
        typed = self._typed_plans[ev.__class__] = _TypedPlan(etype, plan.handler, plan.time_field, wrapped)
        return typed

    def _end(self, last_text: int) -> Iterator[Row | RowBlock]:
        """The rows not yet yielded once the lines end; then why the file is cut short, if it is:
        its last event line cut mid-line (``last_text``: the last line that was not blank), or
        no end of the job."""
        if self.bad_json is not None and self.bad_json[0] == last_text:  # the last event line was cut short
            self.ctx.skipped.pop()
            yield from self._finish()
            bad_line, bad_start, why = self.bad_json
            raise TraceTruncatedError(
                self.path,
                f"the last event is cut short ({why}); the writer stopped mid-line",
                line=bad_line,
                offset=bad_start,
                hint="every event before this line was kept",
            )
        yield from self._finish()
        if not self.state.job.ended:
            raise TraceTruncatedError(
                self.path,
                "the history ends before JOB_FINISHED/JOB_FAILED/JOB_KILLED: the job was still "
                "running or its ApplicationMaster died",
                line=self.line_no,
                offset=self.offset,
                hint="every event before the end was kept",
            )

    def _decode_line(
        self, text: bytes, line_no: int, start: int
    ) -> tuple[str, str, dict[str, Any] | None, bytes] | None:
        """An event line read with orjson (:func:`~ingest.jhist_untyped.decode_untyped`); None: skipped."""
        split, bad = decode_untyped(self.path, self.ctx, text, line_no, start)
        if bad is not None:
            self.bad_json = bad
        return split

    def _event_block(self) -> RowBlock:
        """The ``events`` rows gathered so far, as one block (the gathering lists start again)."""
        seqs, types, times, payloads = self.event_columns
        self.event_columns = ([], [], [], [])
        return RowBlock(
            "events",
            len(seqs),
            {"seq": seqs, "event_type": types, "ts_ms": times, "payload_json": Utf8Text(payloads)},
            {"job_id": self.state.job.job_id},
        )

    def _error(self, message: str, line_no: int, offset: int) -> TraceParseError:
        return jhist_error(self.path, message, line_no, offset)

    def _note_once(self, note: str) -> None:
        key = note.split(" (line", 1)[0]
        if not any(n.startswith(key) for n in self.ctx.notes):
            self.ctx.notes.append(note)

    def _finish(self) -> Iterator[Row | RowBlock]:
        """Every row not yet yielded (called at the end or at a cut)."""
        job = self.state.job
        if job.job_id is None:
            job.job_id = self.ctx.job_id_hint
        if self.event_columns[0]:
            yield self._event_block()
        yield from self.state.rows()


def read_jhist(path: Path, ctx: ReadContext) -> Iterator[Row | RowBlock]:
    """Stream the rows of one ``.jhist`` file (plain or gzipped).

    Parameters
    ----------
    path
        The history file.
    ctx
        Per-file context; ``events_read``, ``unknown`` and ``notes`` are updated.

    Returns
    -------
    Iterator[Row | RowBlock]
        A generator of ``events`` and ``counters`` rows as the file is read, then
        ``jobs``, ``tasks``, ``attempts`` and task-scope ``counters`` rows at its end;
        events, counters, tasks and attempts come as :class:`~ingest.base.RowBlock` s
        (:func:`~ingest.base.iter_rows` expands them).
        While iterated it raises :class:`~phaseline.errors.TraceTruncatedError` after
        every row before a cut (the file was cut short), or
        :class:`~phaseline.errors.TraceParseError` when the file is malformed before
        its end or cannot be read (nothing it yielded should land).
    """
    return paced(_JhistReader(path, ctx).run())  # (fewer collections of the held tasks and attempts)


FORMATS = (
    Format(
        name="jhist",
        sniff=sniff_history,
        read=read_jhist,
        doc="Hadoop 0.23/2.x/3.x job history (.jhist: Avro-JSON, or Avro-Binary as its JSON lines), plain or compressed",
    ),
)
