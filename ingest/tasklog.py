"""Task-attempt logs: log4j lines -> records -> classified events -> attempts.

Two real sources write the same MapTask/ReduceTask messages (the table is in
:mod:`ingest.tasklog_patterns`) under different line prefixes:

* YARN container logs (``syslog``, ``syslog.shuffle`` of one attempt, alone or
  inside ``yarn logs -applicationId`` output, see :mod:`ingest.yarn_logs`):
  ``2025-08-24 17:58:22,408 INFO [main] org.apache.hadoop.mapred.MapTask: ...``;
  one container runs one attempt, so every line belongs to it.
* LocalJobRunner job logs (``phaseline engine run``'s ``logs/job.log``):
  ``2026-11-21 13:23:05,473 INFO  [LocalJobRunner Map Task Executor #0] [tid:48] ...``;
  one JVM runs every task, so lines are attributed to attempts by thread
  (:func:`ingest.runner_threads.attribute_threads`).  When the run directory holds a
  JFR recording (``run.json`` names it), it is read too, to split the combined
  map and reduce spans by stack samples (:func:`sample_counts`); the split is
  taken at ingest, so re-ingest the log after replacing the recording.

Timestamps carry no zone; they are read as UTC (the engine's log is written in
UTC; a cluster's container logs are in its JVMs' zone, which the logs do not say:
:func:`ingest.yarn_logs.log_zone_offset` finds it from the AM's log where it can).  Every
unknown line is kept (kind ``other``) and counted in ``ctx.unknown``.  Lines
without a prefix continue the previous record (multi-line messages, the
tab-indented ``Final Counters`` blocks).

Bad input: a record no reader can take (a line that starts like a timestamp
but is not one, a number past 64 bits, a counter line that is no
``name=integer``) is skipped and remembered in ``ctx.skipped`` with its line
(:func:`~ingest.base.skip_record`: the file lands as partial, every other
record kept; past 100 such records the file is given up with
:class:`~phaseline.errors.TraceParseError`).  A skipped record's continuation
lines go with it; a skipped counter line leaves the rest of its block.
"""

from __future__ import annotations

import itertools
import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

from ingest.base import NotATraceError, ReadContext, Row, skip_record
from ingest.formats import Format
from ingest.jfr import read_jfr
from ingest.mrcommon import check_int64, counter_row, event_row
from ingest.opening import read_head
from ingest.phases import derive_phases
from ingest.phases.spans import REDUCE_WRITE, Lane, Overhead
from ingest.phases.splits import map_stack_phase, reduce_stack_phase
from ingest.runner_threads import attribute_threads, overlapping
from ingest.tasklog_lines import LINE_RE, MAX_DETAIL_CHARS, classify, parse_counter_block, read_records
from ingest.tasklog_patterns import (
    HELPER_NAMING_KINDS,
    AttemptLog,
    LogRecord,
    TaskEvent,
    am_logger,
    attempt_named,
)
from phaseline.errors import PhaselineError, TraceParseError
from phaseline.hadoop_names import TaskLogEventKind, attempt_job_id, attempt_task_id, attempt_task_type
from phaseline.schemas import CounterScope, Phase, Status


def is_runner_log(events: Iterable[TaskEvent]) -> bool:
    """Whether the log comes from LocalJobRunner (tasks announced by 'Starting task' lines)."""
    return any(ev.kind is TaskLogEventKind.TASK_START for ev in events)


def attempt_status(log: AttemptLog) -> tuple[str | None, str | None]:
    """``(status, error)`` of an attempt from its lines: done -> SUCCEEDED, a child exception -> FAILED."""
    error = next((ev.field("error") or ev.message for ev in log.events if ev.kind is TaskLogEventKind.ERROR), None)
    if any(ev.kind is TaskLogEventKind.DONE for ev in log.events):
        return Status.SUCCEEDED.value, error
    if error is not None:
        return Status.FAILED.value, error
    return None, None


def attempt_rows(
    log: AttemptLog, path: Path, ctx: ReadContext, *, parallel: bool = False,
    samples: Mapping[Phase, int] | None = None,
) -> Iterator[Row]:
    """Rows of one attempt: ``attempts``, ``attempt_events``, ``counters`` (scope attempt), ``attempt_phases``."""
    attempt_id = log.attempt_id
    job_id, task_id, task_type = attempt_job_id(attempt_id), attempt_task_id(attempt_id), attempt_task_type(attempt_id)
    counters: dict[tuple[str, str], int] = {}
    for rec, ev in zip(log.records, log.events, strict=True):
        if ev.kind is TaskLogEventKind.COUNTERS and ev.field("attempt") == attempt_id:
            for group, name, value in parse_counter_block(rec, path, ctx):
                counters[(group, name)] = value
                yield counter_row(job_id, CounterScope.ATTEMPT.value, group, name, value,
                                  task_id=task_id, attempt_id=attempt_id)
        yield Row("attempt_events", {
            "job_id": job_id, "attempt_id": attempt_id, "thread_id": ev.thread_id, "thread_name": ev.thread_name,
            "ts_ms": ev.ts_ms, "kind": ev.kind.value, "bytes": ev.bytes, "records": ev.records,
            "segments": ev.segments, "line_no": ev.line_no,
            "detail": ev.message if ev.kind is TaskLogEventKind.OTHER else
            " ".join(f"{k}={v}" for k, v in ev.fields) or None,
        })
    start, finish = log.start_ms, log.finish_ms
    phases = derive_phases(attempt_id, task_type, log.events, counters, start_ms=start, finish_ms=finish,
                           parallel=parallel, samples=samples)
    for span in phases:
        yield Row("attempt_phases", {
            "job_id": job_id, "attempt_id": attempt_id, "task_type": task_type, "phase": span.phase,
            "lane": span.lane.value, "start_ms": span.start_ms, "end_ms": span.end_ms, "dur_ms": span.dur_ms,
            "data_bytes": span.data_bytes, "data_records": span.data_records, "dur_us": span.dur_us,
        })
    status, error = attempt_status(log)
    marks = {p.phase: p for p in phases if p.lane is Lane.MAIN}
    map_done = marks.get(Phase.SPILL.value) or marks.get(Phase.MERGE.value) or marks.get(Overhead.COMMIT.value)
    reduce_start = marks.get(REDUCE_WRITE) or marks.get(Phase.REDUCE.value)
    yield Row("attempts", {
        "job_id": job_id, "task_id": task_id, "attempt_id": attempt_id, "task_type": task_type,
        "status": status, "start_ms": start, "finish_ms": finish,
        "map_finish_ms": map_done.start_ms if task_type == "MAP" and map_done else None,
        "shuffle_finish_ms": marks[Phase.SORT.value].start_ms if Phase.SORT.value in marks else None,
        "sort_finish_ms": reduce_start.start_ms if reduce_start else None,
        "host": log.host, "container_id": log.container_id, "error": error,
    })


def task_rows(logs: Iterable[AttemptLog]) -> Iterator[Row]:
    """One ``tasks`` row per task seen in the attempts' logs (successful attempt, span)."""
    by_task: dict[str, list[AttemptLog]] = {}
    for log in logs:
        by_task.setdefault(attempt_task_id(log.attempt_id), []).append(log)
    for task_id, logs_of_task in sorted(by_task.items()):
        winners = [log for log in logs_of_task if attempt_status(log)[0] == Status.SUCCEEDED.value]
        statuses = {attempt_status(log)[0] for log in logs_of_task}
        status = (Status.SUCCEEDED.value if winners else Status.FAILED.value if Status.FAILED.value in statuses
                  else None)
        yield Row("tasks", {
            "job_id": attempt_job_id(logs_of_task[0].attempt_id), "task_id": task_id,
            "task_type": attempt_task_type(logs_of_task[0].attempt_id), "status": status,
            "start_ms": min(log.start_ms for log in logs_of_task),
            "finish_ms": max(log.finish_ms for log in (winners or logs_of_task)),
            "successful_attempt_id": winners[0].attempt_id if winners else None,
            "error": next((attempt_status(log)[1] for log in logs_of_task if attempt_status(log)[1]), None),
        })


def log_line_row(job_id: str | None, seq: int, rec: LogRecord, event_type: str = "log_line") -> Row:
    """A job-level line (client, job thread, application master) as an ``events`` row."""
    return event_row(job_id, seq, event_type, rec.ts_ms, {
        "line_no": rec.line_no, "level": rec.level, "thread": rec.thread, "tid": rec.tid, "logger": rec.logger,
        "message": rec.message[:MAX_DETAIL_CHARS], "extra": [text for _, text in rec.extra][:200],
    })


def _single_attempt(records: list[LogRecord], events: list[TaskEvent], hint: str | None) -> str | None:
    named = attempt_named(events)
    if named is None:
        named = attempt_named(events, HELPER_NAMING_KINDS)
    return hint or named


def _readable(records: list[LogRecord], path: Path, ctx: ReadContext) -> tuple[list[LogRecord], list[TaskEvent]]:
    """The records whose numbers fit 64-bit columns, and their events; any other is skipped (``ctx.skipped``)."""
    kept: list[LogRecord] = []
    events: list[TaskEvent] = []
    for rec in records:
        try:
            ev = classify(rec)
            for number in (ev.bytes, ev.records, ev.segments, ev.thread_id):
                if number is not None:
                    check_int64(number, path, f"a number in a {ev.kind.value} line", ev.line_no)
        except ValueError as exc:  # a TraceParseError, or int()'s past 4,300 digits
            skip_record(ctx, exc if isinstance(exc, TraceParseError) else TraceParseError(
                path, f"a number in the line cannot be read: {exc}", line=rec.line_no))  # fmt: skip
            ctx.events_read -= 1  # counted as read when its lines were grouped (read_records)
            continue
        kept.append(rec)
        events.append(ev)
    return kept, events


def rows_of_records(
    records: list[LogRecord], path: Path, ctx: ReadContext, seq: Iterator[int], *,
    attempt_hint: str | None = None, host: str | None = None, container_id: str | None = None,
    collect: list[AttemptLog] | None = None, recording: Path | None = None,
) -> Iterator[Row]:
    """Rows of one task log already split into records.

    A LocalJobRunner log (tasks announced by ``Starting task``) is attributed
    by thread; any other log is one attempt's (``attempt_hint`` or the attempt
    its commit/done/counters lines name).  Lines of no attempt land as
    ``events`` rows numbered by ``seq``.  ``tasks`` rows are written here unless
    ``collect`` is given: then the attempts are appended to it and the caller
    writes the tasks of all its logs at once (:func:`task_rows`).  With a JFR
    ``recording`` of the same JVM, read+map+collect and reduce+write spans are
    split by their task thread's stack samples (:func:`sample_counts`).
    """
    records, events = _readable(records, path, ctx)
    for ev in events:
        if ev.kind is TaskLogEventKind.OTHER:
            ctx.unknown["task_log_line"] += 1
    job_level: list[int]
    if is_runner_log(events):
        attempts, job_level = attribute_threads(records, events, ctx)
        parallel = overlapping(attempts.values())
        if parallel:
            ctx.notes.append(
                f"{len(parallel)} attempts overlapped in one LocalJobRunner JVM: their file-system and "
                "input/output-format byte counters are shared, phases use log-line bytes and record counters")
    else:
        attempt_id = _single_attempt(records, events, attempt_hint)
        am = any(am_logger(rec.logger) for rec in records)
        if attempt_id is None or am or not records:
            attempts, job_level = {}, list(range(len(records)))
        else:
            attempts = {attempt_id: AttemptLog(attempt_id, list(records), events, host=host,
                                               container_id=container_id)}
            job_level = []
        parallel = set()
    job_id = ctx.job_id_hint
    if attempts:
        job_id = attempt_job_id(next(iter(attempts)))
    counts = sample_counts(recording, attempts, ctx) if recording is not None else {}
    for i in job_level:
        yield log_line_row(job_id, next(seq), records[i])
    for attempt_id in sorted(attempts):
        yield from attempt_rows(attempts[attempt_id], path, ctx, parallel=attempt_id in parallel,
                                samples=counts.get(attempt_id))
    if collect is None:
        yield from task_rows(attempts.values())
    else:
        collect.extend(attempts.values())


# ---- the reader ------------------------------------------------------------------------------
SHUFFLE_LOG = "syslog.shuffle"  # reduce attempts log their shuffle here (YARN's shuffleCLA appender)
_TASK_LOGGERS = re.compile(r"(?:\]|[A-Z]) +(?:\[tid:\d+\] +)?org\.apache\.hadoop\.(?:mapred|mapreduce)\.")


def sniff_task_log(head: bytes, path: Path) -> bool:
    """A log4j log with Hadoop MapReduce loggers (a container ``syslog`` or a LocalJobRunner job log)."""
    text = head.decode("utf-8", "replace")
    first = next((line for line in text.splitlines() if line.strip()), "")
    return LINE_RE.match(first) is not None and _TASK_LOGGERS.search(text) is not None


def _sibling_syslog(path: Path) -> Path | None:
    sibling = path.with_name("syslog")
    return sibling if path.name == SHUFFLE_LOG and sibling.is_file() else None


def sniff_shuffle_part(head: bytes, path: Path) -> bool:
    """A ``syslog.shuffle`` next to its ``syslog``: read together with that file."""
    return _sibling_syslog(path) is not None and sniff_task_log(head, path)


def read_task_log(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Read one task log: a LocalJobRunner job log or one container's ``syslog``.

    A container's ``syslog.shuffle`` beside the ``syslog`` is read with it (its
    lines are the same attempt's shuffle); the attempt id comes from the lines
    (commit, done, counters).
    """
    records = read_records(path, ctx)
    _check_is_a_task_log(records, path)
    shuffle = path.with_name(SHUFFLE_LOG)
    if path.name == "syslog" and shuffle.is_file() and sniff_task_log(read_head(shuffle), shuffle):
        records.extend(read_records(shuffle, ctx))
        records.sort(key=lambda r: r.ts_ms)
    container = path.parent.name if path.parent.name.startswith("container_") else None
    yield from rows_of_records(records, path, ctx, itertools.count(), container_id=container,
                               recording=engine_recording(path, ctx))


def _check_is_a_task_log(records: list[LogRecord], path: Path) -> None:
    """Refuse a log4j log with MapReduce loggers of which no line is a task's (a TaskTracker's
    ``clienttrace`` of shuffle transfers, a JobTracker's log): :class:`NotATraceError`, naming its loggers."""
    for rec in records:
        try:
            if classify(rec).kind is not TaskLogEventKind.OTHER:
                return
        except ValueError:  # a number that does not fit: a task's line all the same (the reader skips it)
            return
    loggers = Counter(rec.logger for rec in records).most_common(3)
    named = ", ".join(f"{name} ({n:,} lines)" for name, n in loggers) or "no log4j lines"
    raise NotATraceError(path, f"a log of {len(records):,} lines, none of them a MapReduce task's; "
                               f"its loggers: {named}")  # fmt: skip


def engine_recording(path: Path, ctx: ReadContext) -> Path | None:
    """The JFR recording of an engine run whose log this is (``RUN_DIR/run.json`` names it), if any."""
    run_json = path.parent.parent / "run.json"
    if path.parent.name != "logs" or not run_json.is_file():
        return None
    try:
        run = json.loads(run_json.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        ctx.notes.append(f"{run_json} unreadable ({exc}): no JFR split of read+map+collect")
        return None
    name = run.get("jfr") if isinstance(run, dict) else None
    if not isinstance(name, str) or not (path.parent.parent / name).is_file():
        return None
    return path.parent.parent / name


def sample_counts(
    recording: Path, attempts: Mapping[str, AttemptLog], ctx: ReadContext
) -> dict[str, dict[Phase, int]]:
    """Per attempt, its task thread's JFR stack samples in its combined span, by phase.

    Maps: the thread that logged ``Processing split`` (JFR's thread id is log4j's
    ``%tid``), from that line to ``Starting flush of map output``, by
    :func:`~ingest.phases.splits.map_stack_phase`.  Reduces: the thread that logged
    ``finalMerge called``, from that line to ``is in the process of committing``,
    by :func:`~ingest.phases.splits.reduce_stack_phase` (samples of the final merge itself
    fall in neither part).  A recording that cannot be read leaves the spans
    combined (noted).
    """
    windows: dict[str, tuple[int, int, int, Callable[[Sequence[str]], Phase | None]]] = {}
    for attempt_id, log in attempts.items():
        classify_stack: Callable[[Sequence[str]], Phase | None]
        if attempt_task_type(attempt_id) == "MAP":
            first = next((e for e in log.events if e.kind is TaskLogEventKind.SPLIT), None)
            last = next((e for e in log.events if e.kind is TaskLogEventKind.FLUSH), None)
            classify_stack = map_stack_phase
        else:
            first = next((e for e in log.events if e.kind is TaskLogEventKind.FINAL_MERGE), None)
            last = next((e for e in log.events if e.kind is TaskLogEventKind.COMMIT_PENDING), None)
            classify_stack = reduce_stack_phase
        if first is not None and last is not None and first.thread_id is not None:
            windows[attempt_id] = (first.thread_id, first.ts_ms, last.ts_ms, classify_stack)
    if not windows:
        return {}
    stacks: dict[int, list[str]] = {}
    samples: list[tuple[int, int, int]] = []
    try:
        for row in read_jfr(recording, ReadContext(recording, job_id_hint=ctx.job_id_hint)):
            values = row.as_dict()
            if row.table == "stacks":
                stacks[int(values["stack_id"])] = list(values["frames"])
            elif row.table == "samples" and values.get("stack_id") is not None:
                samples.append((int(values["thread_id"]), int(values["ts_ms"]), int(values["stack_id"])))
    except (PhaselineError, OSError) as exc:
        ctx.notes.append(f"JFR recording {recording} not read ({exc}): read+map+collect kept combined")
        return {}
    counts: dict[str, dict[Phase, int]] = {}
    for attempt_id, (tid, t0, t1, classify_stack) in windows.items():
        mine = counts.setdefault(attempt_id, {})
        for thread_id, ts_ms, stack_id in samples:
            if thread_id == tid and t0 <= ts_ms <= t1:
                phase = classify_stack(stacks.get(stack_id, []))
                if phase is not None:
                    mine[phase] = mine.get(phase, 0) + 1
    return counts


def read_shuffle_part(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Nothing: the lines land with the sibling ``syslog`` (status 'skipped' says so)."""
    ctx.notes.append(f"read together with {_sibling_syslog(path)}")
    yield from ()


#: Every log line read is kept once: phase-marking lines in attempt_events, the rest in events.
LOG_RECORD_TABLES = ("attempt_events", "events")

FORMATS: tuple[Format, ...] = (
    Format("hadoop-task-log-shuffle-part", sniff_shuffle_part, read_shuffle_part,
           "A container's syslog.shuffle; its lines land with the sibling syslog.", landed=False),
    Format("hadoop-task-log", sniff_task_log, read_task_log,
           "Hadoop task-attempt log4j logs: a YARN container syslog or a LocalJobRunner job log.",
           record_tables=LOG_RECORD_TABLES),
)
