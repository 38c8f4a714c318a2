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
(:class:`_Frames`); output that ends before its last file's ``LogLength`` bytes
was cut (``ctx.cut``: partial).  Output written twice into one file is read
once: a container's file met again is noted, not counted again.  Task-log
lines are checked as :mod:`ingest.tasklog` does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ingest.base import ReadContext, Row, iter_lines, skip_record
from ingest.formats import Format
from ingest.mrcommon import DONE_FILE_NAME, done_file_fields, event_row, parse_int64
from ingest.tasklog import LOG_RECORD_TABLES, log_line_row, rows_of_records, task_rows
from ingest.tasklog_lines import LINE_RE, parse_records, parse_timestamp
from ingest.tasklog_patterns import AttemptLog, LogRecord
from phaseline.errors import PhaselineError, TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import node_manager_host
from phaseline.schemas import normalize_status

FORMAT_NAME = "yarn-aggregated-logs"
MAX_SECTION_CHARS = 65536
_CONTAINER = re.compile(r"^Container: (?P<id>container_(?:e\d+_)?(?P<cluster>\d+)_(?P<app>\d+)_\d+_\d+) on (?P<host>\S+)\s*$")
_LOGTYPE = re.compile(r"^LogType:\s?(?P<name>.+?)\s*$")
_LENGTH = re.compile(r"^LogLength:\s?(?P<n>\d+)\s*$")
_CONTENTS = re.compile(r"^Log ?Contents:\s*$")
_END = re.compile(r"^End of LogType:\s?(?P<name>.+?)\s*$")
_RULE = re.compile(r"^={10,}\s*$")  # under a 'Container:' line
_AGGREGATION = re.compile(r"^LogAggregationType:")
_ATTRIBUTE = re.compile(r"^(?:LogAggregationType|LogLastModifiedTime|Log Upload Time):")
_YARN_CHILD = re.compile(r"org\.apache\.hadoop\.mapred\.YarnChild \S+ \d+ (?P<attempt>attempt_[A-Za-z0-9]+_\d+_[mr]_\d+_\d+) \d+")
_SUBMIT = re.compile(r'^export APP_SUBMIT_TIME_ENV="(?P<ms>\d+)"')
_USER = re.compile(r'^export USER="(?P<user>[^"]*)"')
_JAR_VERSION = re.compile(r"hadoop-mapreduce-client-core-(?P<version>\d+\.\d+\.\d+[\w.-]*?)\.jar")
_TRANSITION = re.compile(r"^(?P<job>job_\S+?)Job Transitioned from (?P<src>\w+) to (?P<dst>\w+)$")
_SPLITS = re.compile(r"^Input size for job (?P<job>job_\S+) = \d+\. Number of splits = (?P<n>\d+)$")
_REDUCES = re.compile(r"^Number of reduces for job (?P<job>job_\S+) = (?P<n>\d+)$")
_FINAL_JOB_STATES = ("SUCCEEDED", "FAILED", "KILLED", "ERROR")


def _task_log(name: str) -> bool:
    return name == "syslog" or name.startswith("syslog.")


@dataclass(slots=True)
class _Container:
    """The files of one container read so far."""

    container_id: str
    host: str | None
    line_no: int  # of its first 'Container:' header
    logs: dict[str, list[tuple[int, str]]] = field(default_factory=dict)  # syslog* lines, numbered
    other: list[tuple[str, int, list[str]]] = field(default_factory=list)  # (log type, first line, text)
    repeats: list[tuple[str, int, int]] = field(default_factory=list)  # (log type, contents line, first copy's)
    attempt_hint: str | None = None
    is_am: bool = False
    submit_ms: int | None = None
    user: str | None = None


def sniff_yarn_logs(head: bytes, path: Path) -> bool:
    """Text whose first line is a ``Container: container_... on ...`` header followed by ``LogType:``."""
    lines = [line for line in head.decode("utf-8", "replace").splitlines() if line.strip()]
    return bool(lines) and _CONTAINER.match(lines[0]) is not None and any(
        _LOGTYPE.match(line) for line in lines[1:6])


def _sections(path: Path, ctx: ReadContext) -> Iterator[_Container]:
    """Containers in file order, each with its files (a container's files are contiguous).

    A file's contents end at ``End of LogType:<name>``; output without end lines
    (Hadoop 2.x) ends a file at the next ``LogType:``/``Container:`` line once
    ``LogLength`` bytes were read, or at a ``LogLength:`` line or a container's
    ``=====`` rule, whose frame lines above it are then unreadable (:class:`_Frames`).
    """
    frames = _Frames(path, ctx)
    for line_no, text in iter_lines(path, ctx):
        yield from frames.line(line_no, text)
    yield from frames.finish()


class _Frames:
    """The frame (container, then file) each line of the output is in.

    Every frame starts afresh: its file's type is its own ``LogType:`` line, and
    its container its own ``Container:`` line (the line above the ``=====`` rule
    that opens a container in both layouts; in 2.9+/3.x, which write
    ``LogAggregationType:`` under it, each file has its own).  A file whose
    ``LogType:`` line, or whose frame's ``Container:`` line, is unreadable is
    skipped and named, and the files around it land: carried over from the
    frame before, its lines would land as another file, or as another
    container's (an attempt read as the AM).  Where no file at all is readable,
    the output is not one this reader knows, and that raises.  A container's
    file met again (output written twice) is read from its first copy: counted
    twice, its attempts, counters and lines would double.  Only the same text is a
    copy: rolling log aggregation uploads one log in parts under one name, each read.
    """

    def __init__(self, path: Path, ctx: ReadContext) -> None:
        self.path, self.ctx = path, ctx
        self.current: _Container | None = None  # the container whose files are being read
        self.owner: _Container | None = None  # the frame's container: None where its header is unreadable
        self.headed = False  # a 'Container:' line was read since the last '=====' rule
        self.per_file = False
        self.log_type: str | None = None
        self.log_length: int | None = None
        self.expect_contents = False  # the line after 'LogLength:' is the contents marker
        self.body: list[tuple[int, str]] | None = None  # the lines of the file being read
        self.contents_line = 0
        self.consumed = 0
        self.replaced = 0  # U+FFFD in the body: 3 bytes in `consumed`, maybe 1 undecodable byte in the file
        self.within = 0  # body lines that begin inside its LogLength bytes
        # (container, log type, its text) -> the contents line it was read from; a file of another
        # text under the same name (rolling log aggregation uploads a log in parts) is read too
        self.read: dict[tuple[str, str, bytes], int] = {}
        self.held: list[tuple[int, str]] | None = []  # unreadable files (line, what) before any file was read

    def line(self, line_no: int, text: str) -> Iterator[_Container]:
        if self.body is not None:
            if _END.match(text) is not None:
                self._end_file(len(self.body))
                return
            header = self.consumed >= (self.log_length or 0) and (_CONTAINER.match(text) or _LOGTYPE.match(text))
            beyond = self.log_length is not None and self.consumed - 2 * self.replaced >= self.log_length
            damaged_frame = beyond and (_RULE.match(text) or _LENGTH.match(text))
            if not header and not damaged_frame:
                if not beyond:
                    self.within = len(self.body) + 1
                self.body.append((line_no, text))
                self.consumed += len(text.encode("utf-8", "replace")) + 1
                self.replaced += text.count("\ufffd")
                return
            if damaged_frame:  # the lines from the frame's top on are read again, as frame lines
                keep = self._frame_top(_CONTAINER if _RULE.match(text) else _LOGTYPE)
                again = [*self.body[keep:], (line_no, text)]
                self._end_file(keep)
                for again_no, again_text in again:
                    yield from self.line(again_no, again_text)
                return
            self._end_file(len(self.body))
        expecting, self.expect_contents = self.expect_contents, False
        if (header_line := _CONTAINER.match(text)) is not None:
            if self.current is None or self.current.container_id != header_line["id"]:
                if self.current is not None:
                    yield self._done(self.current)
                self.current = _Container(header_line["id"], node_manager_host(header_line["host"]), line_no)
            self.owner, self.headed, self.log_type = self.current, True, None
            return
        if _AGGREGATION.match(text) is not None:
            self.per_file = True
            return
        if _RULE.match(text) is not None:
            if not self.headed:
                self.owner = None
            self.headed, self.log_type = False, None
            return
        if (found := _LOGTYPE.match(text)) is not None:
            self.log_type, self.log_length = found["name"], None
            return
        if (length := _LENGTH.match(text)) is not None:
            self.log_length = parse_int64(length["n"])  # (None: no 64-bit size, unknown)
            self.expect_contents = True
            return
        contents = _CONTENTS.match(text) is not None
        damaged = expecting and not contents and text.strip() != ""
        if damaged:
            skip_record(self.ctx, TraceParseError(
                self.path, f"a damaged 'LogContents:' line {text[:60]!r} after 'LogLength:': read as one",
                line=line_no,
            ))  # fmt: skip
        if damaged or contents:
            self.body, self.contents_line = [], line_no
            self.consumed = self.replaced = self.within = 0

    def _frame_top(self, header: re.Pattern[str]) -> int:
        """Where the file being read ends, at a frame line past its ``LogLength`` bytes.

        The frame's header (``header``, then attributes) is above it: read as the
        file's lines where ``LogLength`` overstated the file; else unreadable, and
        the lines past ``LogLength`` are the frame's damaged ones.
        """
        assert self.body is not None
        top = len(self.body)
        while top > self.within and _ATTRIBUTE.match(self.body[top - 1][1]):
            top -= 1
        if top > 0 and header.match(self.body[top - 1][1]):
            return top - 1
        return self.within

    def finish(self) -> Iterator[_Container]:
        if self.body is not None:
            name, consumed, log_length = self.log_type or "of no readable type", self.consumed, self.log_length
            self._end_file(len(self.body))
            if log_length is not None and consumed < log_length and self.ctx.cut is None:
                self.ctx.cut = TraceTruncatedError(
                    self.path, f"the last file ({name}) ends after {consumed} of its {log_length} bytes",
                    hint="the output was cut short; every line before the cut landed",
                )  # fmt: skip
        if self.held:
            line, what = self.held[0]
            raise TraceParseError(self.path, f"{what}; no file of the output is readable", line=line,
                                  hint="is this the complete output of `yarn logs`?")
        if self.current is not None:
            yield self._done(self.current)

    def _end_file(self, keep: int) -> None:
        """The file being read ends with the first ``keep`` lines of its body (the rest is its next frame's)."""
        assert self.body is not None
        body, owner, log_type = self.body[:keep], self.owner, self.log_type
        self.body, self.log_type, self.log_length = None, None, None
        if self.per_file:
            self.owner = None
        if owner is None or log_type is None:
            unread = " and ".join(name for name, known in (("'Container:'", owner), ("'LogType:'", log_type))
                                  if known is None)
            last = body[-1][0] if body else self.contents_line
            what = f"log contents (lines {self.contents_line}-{last}) before any readable {unread} line of their frame"
            if self.held is None:
                self._skip(self.contents_line, what)
            else:
                self.held.append((self.contents_line, what))
            return
        digest = hashlib.blake2b("\n".join(t for _, t in body).encode("utf-8", "replace"), digest_size=16).digest()
        first = self.read.setdefault((owner.container_id, log_type, digest), self.contents_line)
        if first != self.contents_line:
            owner.repeats.append((log_type, self.contents_line, first))
            return
        for line, what in self.held or ():
            self._skip(line, what)
        self.held = None
        _store(owner, log_type, body)

    def _skip(self, line: int, what: str) -> None:
        skip_record(self.ctx, TraceParseError(self.path, f"{what}: skipped", line=line,
                                              hint="a damaged frame header; the files around it are read"))

    def _done(self, container: _Container) -> _Container:
        if container.repeats:
            log_type, line, first = container.repeats[0]
            names = ", ".join(name for name, _, _ in container.repeats)
            self.ctx.notes.append(
                f"{container.container_id}'s {names} written again from line {line} ({log_type} was read from "
                f"line {first}): each read once, from its first copy"
            )
        return container


def _store(container: _Container, log_type: str, body: list[tuple[int, str]]) -> None:
    while body and body[-1][1] == "":
        body = body[:-1]  # the writer's blank line(s) before 'End of LogType' / the next file
    if _task_log(log_type):
        container.logs.setdefault(log_type, []).extend(body)
        return
    if log_type == "launch_container.sh":
        for _, text in body:
            if (child := _YARN_CHILD.search(text)) is not None:
                container.attempt_hint = child["attempt"]
            if "org.apache.hadoop.mapreduce.v2.app.MRAppMaster" in text:
                container.is_am = True
            if (submit := _SUBMIT.match(text)) is not None:
                container.submit_ms = parse_int64(submit["ms"])
            if (user := _USER.match(text)) is not None:
                container.user = user["user"]
    container.other.append((log_type, body[0][0] if body else 0, [text for _, text in body]))


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
    for container in _sections(path, ctx):
        if not container.logs and not container.other:
            continue  # each of its files was read before (or was unreadable)
        header = _CONTAINER.match(f"Container: {container.container_id} on x")
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
        am = container.is_am or any(".v2.app." in rec.logger for rec in records)
        if am:
            _read_am(records, job)
            job.submit_ms, job.user = container.submit_ms or job.submit_ms, container.user or job.user
            for rec in records:
                yield log_line_row(app_job, next(seq), rec, "am_log")
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


FORMATS: tuple[Format, ...] = (
    Format(FORMAT_NAME, sniff_yarn_logs, read_yarn_logs,
           "`yarn logs -applicationId` output: every container's syslog, syslog.shuffle, stderr, ...",
           record_tables=LOG_RECORD_TABLES),
)
