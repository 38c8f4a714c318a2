"""The lines of a Hadoop task log (a container's ``syslog`` or a LocalJobRunner job log) as records
(:func:`parse_records`: a line with its continuation lines, its time, thread and logger), each
classified as an event (:func:`classify`), and a ``Final Counters`` block's counters
(:func:`parse_counter_block`).  :mod:`ingest.tasklog` turns them into rows.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path

from ingest.base import ReadContext, skip_record
from ingest.mrcommon import int64_text, parse_int64
from ingest.opening import iter_lines
from ingest.tasklog_counters import counter_name
from ingest.tasklog_patterns import (
    LogRecord,
    TaskEvent,
    match,
)
from phaseline.errors import TraceParseError
from phaseline.hadoop_names import TaskLogEventKind

LINE_RE = re.compile(
    r"^(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2},\d{3})\s+(?P<level>[A-Z]+)\s+"
    r"(?:\[(?P<thread>.*?)\]\s+)?(?:\[tid:(?P<tid>\d+)\]\s+)?(?P<logger>[\w.$-]+):\s?(?P<msg>.*)$",
    re.ASCII,
)
_LOOKS_TIMESTAMPED = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}", re.ASCII)
MAX_DETAIL_CHARS = 4000
NMETA = 4  # ints of sort-buffer metadata per record (MapTask.MapOutputBuffer.NMETA)


@lru_cache(maxsize=8192)
def _epoch_ms_of_second(prefix: str) -> int:
    return int(datetime.strptime(prefix, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC).timestamp()) * 1000


def parse_timestamp(text: str) -> int:
    """Epoch milliseconds of ``yyyy-MM-dd HH:mm:ss,SSS`` read as UTC.

    >>> parse_timestamp("2025-08-24 17:58:22,408")
    1756058302408
    """
    return _epoch_ms_of_second(text[:19]) + int(text[20:23])


def parse_records(lines: Iterable[tuple[int, str]], path: Path, ctx: ReadContext) -> Iterator[LogRecord]:
    """Group numbered lines into :class:`LogRecord` s.

    Unprefixed lines before the first record are counted in
    ``ctx.unknown['orphan_line']`` and dropped from the records (the callers
    keep the raw section text elsewhere).  A malformed record is skipped
    (``ctx.skipped``), with its continuation lines.
    """
    head: re.Match[str] | None = None
    head_no = 0
    extra: list[tuple[int, str]] = []
    skipping = False  # continuation lines of a skipped record are dropped with it

    def finish() -> LogRecord | None:
        assert head is not None
        try:
            ts_ms = parse_timestamp(head["ts"])
        except ValueError as exc:
            skip_record(ctx, TraceParseError(
                path, f"malformed timestamp {head['ts']!r}: {exc}", line=head_no,
                hint="task-log lines must start with yyyy-MM-dd HH:mm:ss,SSS",
            ))
            return None
        tid = head["tid"]
        thread_id = parse_int64(tid) if tid else None
        if tid and thread_id is None:
            skip_record(ctx, TraceParseError(path, f"thread id {tid[:40]} does not fit in 64 bits", line=head_no))
            return None
        return LogRecord(head_no, ts_ms, head["level"], head["thread"], thread_id, head["logger"], head["msg"], tuple(extra))

    for line_no, text in lines:
        found = LINE_RE.match(text)
        if found is None and _LOOKS_TIMESTAMPED.match(text):
            skip_record(ctx, TraceParseError(
                path, f"malformed log line (timestamp without a level/logger prefix): {text[:120]!r}",
                line=line_no, hint="expected 'yyyy-MM-dd HH:mm:ss,SSS LEVEL [thread] class: message'",
            ))
            if head is not None and (rec := finish()) is not None:
                yield rec
            head, skipping = None, True
        elif found is not None:
            if head is not None and (rec := finish()) is not None:
                yield rec
            head, head_no, extra, skipping = found, line_no, [], False
        elif head is not None:
            extra.append((line_no, text))
        elif text.strip() and not skipping:
            ctx.unknown["orphan_line"] += 1
    if head is not None and (rec := finish()) is not None:
        yield rec


def _int(groups: dict[str, str], key: str) -> int | None:
    value = groups.get(key)
    return int(value) if value is not None else None


_COLUMN_GROUPS = frozenset({"bytes", "records", "segments"})
#: One file's ``offset+length`` in a CombineFileSplit's ``Paths:`` list (CombineFileSplit.toString).
_COMBINED_LENGTH = re.compile(r":\d+\+(\d+)(?=,|$)")


def classify(rec: LogRecord) -> TaskEvent:
    """The :class:`TaskEvent` of one record: its kind and the numbers its message carries.

    Spill lines carry sizes in sort-buffer coordinates: ``bufstart``/``bufend``
    wrap at ``bufvoid`` (bytes = (bufend - bufstart) mod bufvoid), and ``length``
    counts metadata ints (records = (length - 1) / NMETA + 1), as in
    ``MapTask.MapOutputBuffer.startSpill``; 1.x's ``kvstart = N; kvend = N; length = N``
    are record indices into a ring of ``length`` slots.
    """
    found = match(rec.logger, rec.message)
    if found is None:
        return TaskEvent(rec.line_no, rec.ts_ms, rec.thread, rec.tid, TaskLogEventKind.OTHER, None, (),
                         rec.message[:MAX_DETAIL_CHARS])
    pat, groups = found
    n_bytes, n_records, n_segments = _int(groups, "bytes"), _int(groups, "records"), _int(groups, "segments")
    if pat.kind is TaskLogEventKind.SPILL_BYTES:
        start, end, void = int(groups["bufstart"]), int(groups["bufend"]), int(groups["bufvoid"])
        n_bytes = (end - start) % void if void else end - start
    elif pat.kind is TaskLogEventKind.SPILL_RECORDS and "kvstart" in groups and "kvend" in groups:
        # 1.x: record indices into a ring of `length` slots (MapTask.sortAndSpill's
        # endPosition = kvend > kvstart ? kvend : kvoffsets.length + kvend)
        start, end = int(groups["kvstart"]), int(groups["kvend"])
        n_records = (end if end > start else int(groups["length"]) + end) - start
    elif pat.kind is TaskLogEventKind.SPILL_RECORDS:
        n_records = (int(groups["length"]) - 1) // NMETA + 1
    elif pat.name == "combined_split":  # the files' lengths, summed (none legible: unknown)
        lengths = _COMBINED_LENGTH.findall(groups["split"])
        n_bytes = sum(int(n) for n in lengths) if lengths else None
    return TaskEvent(
        rec.line_no, rec.ts_ms, rec.thread, rec.tid, pat.kind, pat.name,
        tuple(sorted((k, v) for k, v in groups.items() if k not in _COLUMN_GROUPS)),
        rec.message[:MAX_DETAIL_CHARS], n_bytes, n_records, n_segments,
    )


def parse_counter_block(rec: LogRecord, path: Path, ctx: ReadContext) -> list[tuple[str, str, int]]:
    """``(group, counter, value)`` of a ``Counters: N`` record's tab-indented continuation lines.

    Names are Hadoop's internal ones (:func:`ingest.tasklog_counters.counter_name`).  A counter
    line that cannot be read is skipped (``ctx.skipped``); the block's other counters stay.
    """
    rows: list[tuple[str, str, int]] = []
    group: str | None = None
    for line_no, text in rec.extra:
        if text.startswith("\t\t"):
            try:
                rows.append(_counter_entry(group, text, path, line_no))
            except TraceParseError as exc:
                skip_record(ctx, exc)
        elif text.startswith("\t"):
            group = text[1:]
    return rows


def _counter_entry(group: str | None, text: str, path: Path, line_no: int) -> tuple[str, str, int]:
    """One ``\t\tname=value`` line of a counter block as ``(group, counter, value)``, or a TraceParseError."""
    name, sep, value = text.strip("\t").rpartition("=")
    if not sep or group is None:
        raise TraceParseError(path, f"counter line outside a group: {text.strip()!r}", line=line_no)
    return (*counter_name(group, name), int64_text(value, path, f"counter {name!r}", line_no))


def read_records(path: Path, ctx: ReadContext) -> list[LogRecord]:
    """All records of a plain log file (a LocalJobRunner job log or one container's ``syslog``)."""
    records = list(parse_records(iter_lines(path, ctx), path, ctx))
    ctx.events_read += len(records)
    return records
