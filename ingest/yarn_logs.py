"""``yarn logs -applicationId <app>`` output: every container's log files, concatenated.

Each file of each container is framed as (Hadoop 2.9+/3.x; 2.x writes
``Log Contents:`` and may omit the end line)::

    Container: container_1756057717712_0002_01_000032 on hadoopnode_34573
    LogAggregationType: AGGREGATED
    ====================================================================
    LogType:syslog.shuffle
    LogLastModifiedTime:Sun Aug 24 18:01:21 +0000 2025
    LogLength:86458
    LogContents:
    2025-08-24 17:58:57,447 INFO [main] org.apache...MergeManagerImpl: MergerManager: ...
    ...
    End of LogType:syslog.shuffle
    ********************************************************************

A task container runs one attempt: its ``syslog`` and ``syslog.shuffle``
(the reduce's shuffle lines) are read together by :mod:`ingest.tasklog`; the
attempt id comes from ``launch_container.sh`` (``YarnChild <host> <port>
<attempt> <n>``) or from the log's own commit/done/counters lines; the host
from the ``Container: ... on <host>_<port>`` header.  The application master's
container (``MRAppMaster``) gives the ``jobs`` row (status and times from
``JobImpl`` transitions, maps and reduces, the submit time from
``APP_SUBMIT_TIME_ENV``; where it logs the history file's done name, that
name's submit, launch and finish times, status and finished maps and reduces,
which are the history's own values, exact where log lines are a few ms off)
and its lines land as ``events``.  Log times, local time without a zone, are
moved to UTC by the zone the AM's logged job end and the done name's epoch
finish time give (:func:`log_zone_offset`).  Every other file
(stderr, stdout, prelaunch.*, launch_container.sh, directory.info) lands as one
``events`` row with its text (first :data:`MAX_SECTION_CHARS` characters).

Bad input: a container of another application than the file's first (a
damaged header, or outputs of two applications concatenated) is skipped and
named (:func:`~ingest.base.skip_record`; the file lands as partial, split the
output per application to read both); a damaged ``LogContents:`` line (the line
after ``LogLength:``) is named and read as one, so that its file's lines are
kept; a file whose ``LogType:`` line, or whose frame's ``Container:`` line, is
damaged is named and skipped, not read as the file or container before it
(:class:`ingest.yarn_log_sections._Frames`); output that ends before its last file's ``LogLength`` bytes
was cut (``ctx.cut``: partial).  Output written twice into one file is read
once: a container's file met again is noted, not counted again.  Task-log
lines are checked as :mod:`ingest.tasklog` does.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ingest.base import ReadContext, Row, skip_record
from ingest.formats import Format
from ingest.mrcommon import DONE_FILE_NAME, done_file_fields, event_row, parse_int64
from ingest.opening import iter_lines, uploaded_logs
from ingest.tasklog import LOG_RECORD_TABLES, log_line_row, rows_of_records, task_rows
from ingest.tasklog_lines import LINE_RE, parse_records, parse_timestamp
from ingest.tasklog_patterns import AttemptLog, LogRecord, am_logger
from ingest.uber_subtasks import uber_attempts
from ingest.yarn_log_sections import CONTAINER, LOGTYPE, sections
from phaseline.errors import PhaselineError, TraceParseError
from phaseline.schemas import normalize_status

FORMAT_NAME = "yarn-aggregated-logs"
MAX_SECTION_CHARS = 65536
_JAR_VERSION = re.compile(r"hadoop-mapreduce-client-core-(?P<version>\d+\.\d+\.\d+[\w.-]*?)\.jar")
_TRANSITION = re.compile(r"^(?P<job>job_\S+?)Job Transitioned from (?P<src>\w+) to (?P<dst>\w+)$")
_SPLITS = re.compile(r"^Input size for job (?P<job>job_\S+) = \d+\. Number of splits = (?P<n>\d+)$")
_REDUCES = re.compile(r"^Number of reduces for job (?P<job>job_\S+) = (?P<n>\d+)$")
_FINAL_JOB_STATES = ("SUCCEEDED", "FAILED", "KILLED", "ERROR")


def sniff_yarn_logs(head: bytes, path: Path) -> bool:
    """Text whose first line is a ``Container: container_... on ...`` header followed by ``LogType:``."""
    lines = [line for line in head.decode("utf-8", "replace").splitlines() if line.strip()]
    return bool(lines) and CONTAINER.match(lines[0]) is not None and any(
        LOGTYPE.match(line) for line in lines[1:6])


@dataclass(slots=True)
class _Job:
    job_id: str | None = None
    status: str | None = None
    launch_ms: int | None = None
    finish_ms: int | None = None
    maps: int | None = None
    reduces: int | None = None
    submit_ms: int | None = None
    user: str | None = None
    name: str | None = None
    queue: str | None = None
    hadoop_version: str | None = None
    done: dict[str, Any] | None = None  # the history file's done name (done_file_fields)


def _read_am(records: list[LogRecord], job: _Job) -> None:
    for rec in records:
        if (moved := _TRANSITION.match(rec.message)) is not None:
            job.job_id = moved["job"]
            if moved["src"] == "INITED" and moved["dst"] == "SETUP":
                job.launch_ms = rec.ts_ms
            if moved["dst"] in _FINAL_JOB_STATES:
                job.status, job.finish_ms = moved["dst"], rec.ts_ms
        elif (splits := _SPLITS.match(rec.message)) is not None:
            job.maps = parse_int64(splits["n"])
        elif (reduces := _REDUCES.match(rec.message)) is not None:
            job.reduces = parse_int64(reduces["n"])
        elif (done := DONE_FILE_NAME.search(rec.message)) is not None and (
            fields := done_file_fields(done.group(0))
        ) is not None:  # the history file's done name: the job's name and queue, which no other line has
            job.name, job.queue = fields["name"], fields["queue"]
            job.user = job.user or fields["user"]
            if fields["job_id"] == job.job_id:  # the history's own times and counts, exact to the ms
                job.done = fields


#: Time zones are whole quarter hours off UTC; the AM logs the job's end within this of its history's.
_ZONE_STEP_MS = 15 * 60_000
_ZONE_SLACK_MS = 2 * 60_000
_MAX_ZONE_MS = 14 * 3_600_000


def log_zone_offset(path: Path) -> int:
    """How far the output's log times, read as UTC, run ahead of the epoch: the zone the cluster logged in.

    log4j's default pattern writes local time and no zone, and :func:`~ingest.tasklog_lines.parse_timestamp`
    reads it as UTC; the history file's done name, which the AM logs, holds the job's finish as epoch
    milliseconds (``JobFinished``), and the AM logs the job's move to its final state within
    milliseconds of it.  Their difference, where it is a whole number of quarter hours (within
    :data:`_ZONE_SLACK_MS`, at most 14 h), is the zone's offset; else 0 (UTC, or no done name or
    final transition logged: the times stay as written).  A cluster in UTC-7 put every attempt
    7 h before the job it ran in.  One pass over the lines before the reading (no row is held back).
    """
    done: dict[str, int] = {}
    moved: dict[str, int] = {}
    try:
        for _, text in iter_lines(path, ReadContext(path)):
            if ".jhist" in text and (name := DONE_FILE_NAME.search(text)) is not None:
                fields = done_file_fields(name.group(0))
                if fields is not None and fields["finish_ms"] is not None:
                    done[fields["job_id"]] = fields["finish_ms"]
            elif "Job Transitioned from" in text and (line := LINE_RE.match(text)) is not None:
                state = _TRANSITION.match(line["msg"])
                if state is not None and state["dst"] in _FINAL_JOB_STATES:
                    moved[state["job"]] = parse_timestamp(line["ts"])
    except PhaselineError:  # damage the reading itself reports
        pass
    for job_id, finish in done.items():
        if job_id in moved:
            ahead = moved[job_id] - finish
            zone = round(ahead / _ZONE_STEP_MS) * _ZONE_STEP_MS
            if zone and abs(zone) <= _MAX_ZONE_MS and abs(ahead - zone) <= _ZONE_SLACK_MS:
                return zone
    return 0


def _zone_name(offset_ms: int) -> str:
    """``UTC-07:00`` for a log zone ``offset_ms`` ahead of UTC (-7 h)."""
    minutes = abs(offset_ms) // 60_000
    return f"UTC{'-' if offset_ms < 0 else '+'}{minutes // 60:02d}:{minutes % 60:02d}"


def read_yarn_logs(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Rows of one ``yarn logs`` output: jobs, tasks, attempts, attempt counters, events, phases.

    Log times are moved to the epoch by the zone :func:`log_zone_offset` finds (noted).
    """
    seq = itertools.count()
    job = _Job()
    zone = log_zone_offset(path)
    if zone:
        ctx.notes.append(f"{path}: the logs are in local time, {_zone_name(zone)} (the job's logged end against "
                         "its history's done name): their times are moved to UTC")  # fmt: skip
    attempts: list[AttemptLog] = []
    job_ids: set[str] = set()
    for container in sections(path, ctx):
        if not container.logs and not container.other:
            continue  # each of its files was read before (or was unreadable)
        header = CONTAINER.match(f"Container: {container.container_id} on x")
        assert header is not None
        app_job = f"job_{header['cluster']}_{header['app']}"
        if job_ids and app_job not in job_ids:
            skip_record(ctx, TraceParseError(
                path, f"container {container.container_id} is of another application than {min(job_ids)}'s "
                "containers before it", line=container.line_no, hint="split the output per application",
            ))  # fmt: skip
            continue
        job_ids.add(app_job)
        ctx.job_id_hint = app_job
        records: list[LogRecord] = []
        for lines in container.logs.values():
            parsed = parse_records(lines, path, ctx)
            if zone:
                parsed = (dataclasses.replace(r, ts_ms=r.ts_ms - zone) for r in parsed)
            records.extend(parsed)
            if job.hadoop_version is None:
                job.hadoop_version = next((m["version"] for _, text in lines
                                           if (m := _JAR_VERSION.search(text)) is not None), None)
        records.sort(key=lambda r: r.ts_ms)
        ctx.events_read += len(records) + len(container.other)
        am = container.is_am or any(am_logger(rec.logger) for rec in records)
        if am:
            _read_am(records, job)
            job.submit_ms, job.user = container.submit_ms or job.submit_ms, container.user or job.user
            uber, am_lines = uber_attempts(records)  # an uberized job's tasks ran in the AM's JVM
            for i in am_lines:
                yield log_line_row(app_job, next(seq), records[i], "am_log")
            for attempt_id, idxs in uber.items():
                yield from rows_of_records([records[i] for i in idxs], path, ctx, seq, attempt_hint=attempt_id,
                                           host=container.host, container_id=container.container_id,
                                           collect=attempts)
        else:
            yield from rows_of_records(records, path, ctx, seq, attempt_hint=container.attempt_hint,
                                       host=container.host, container_id=container.container_id,
                                       collect=attempts)
        for log_type, first_line, text_lines in container.other:
            text = "\n".join(text_lines)
            yield event_row(app_job, next(seq), "container_log", None, {
                "container_id": container.container_id, "host": container.host, "log_type": log_type,
                "line_no": first_line, "chars": len(text), "text": text[:MAX_SECTION_CHARS],
                "truncated": len(text) > MAX_SECTION_CHARS,
            })
    yield from task_rows(attempts)
    if job_ids:
        job_id = job.job_id or next(iter(job_ids))
        done = job.done or {}
        yield Row("jobs", {
            "job_id": job_id, "name": job.name, "user": job.user, "queue": job.queue,
            "status": normalize_status(done.get("status") or job.status),
            "submit_ms": done.get("submit_ms") or job.submit_ms,
            "launch_ms": done.get("start_ms") or job.launch_ms,
            "finish_ms": done.get("finish_ms") or job.finish_ms,
            "total_maps": job.maps, "total_reduces": job.reduces,
            "finished_maps": done.get("maps"), "finished_reduces": done.get("reduces"),
            "hadoop_version": job.hadoop_version, "source_format": FORMAT_NAME,
        })


def read_unreadable_upload(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """A NodeManager's uploaded file of aggregated logs (:mod:`ingest.yarn_tfile`, :mod:`ingest.yarn_ifile`)
    whose head cannot be rendered (a readable one is detected by its rendered text): raises the
    reason, naming the file."""
    with open(path, "rb") as raw:
        opened = uploaded_logs(path, raw.read(64))  # (the file's own bytes: read_head gives what it renders)
    try:
        if opened is not None:
            with opened(path) as fh:
                while fh.read(1 << 20):  # (its head did not render: the error is somewhere in it)
                    pass
    except (OSError, EOFError, UnicodeError) as exc:
        raise TraceParseError(path, f"YARN aggregated logs as a NodeManager uploads them, that cannot be read: {exc}",
                              hint="run `yarn logs -applicationId <app>` and ingest its output") from None  # fmt: skip
    yield from ()  # (a reader is a generator)
    raise TraceParseError(path, "uploaded aggregated logs that changed while they were read: ingest them again")


FORMATS: tuple[Format, ...] = (
    Format(FORMAT_NAME, sniff_yarn_logs, read_yarn_logs,
           "`yarn logs -applicationId` output: every container's syslog, syslog.shuffle, stderr, ...; "
           "also the NodeManagers' uploaded files (TFile, indexed format), read as that output",
           record_tables=LOG_RECORD_TABLES),
    Format("yarn-uploaded-logs", lambda head, path: uploaded_logs(path, head) is not None, read_unreadable_upload,
           "a NodeManager's uploaded file of aggregated logs (TFile, indexed format) that cannot be read: "
           "its reason", record_tables=LOG_RECORD_TABLES),
)
