r"""Hadoop 0.18-1.x job-tracker history (``Type KEY="value" ... .``) -> jobs, tasks, attempts, counters.

Format (Hadoop 1.x ``JobHistory``, history ``VERSION="1"``)::

    Meta VERSION="1" .
    Job JOBID="job_200904211745_0002" JOBNAME="word count" USER="hadoopqa" SUBMIT_TIME="1240335962848" .
    Task TASKID="task_..._m_000010" TASK_TYPE="MAP" START_TIME="1240336753705" SPLITS="/rack/host,..." .
    MapAttempt TASK_TYPE="MAP" TASKID="..." TASK_ATTEMPT_ID="attempt_..._0" START_TIME="..." TRACKER_NAME="..." .
    MapAttempt ... TASK_STATUS="SUCCESS" FINISH_TIME="..." HOSTNAME="/192\.30\.63\.192/host" COUNTERS="{...}" .

* Values escape ``.``, ``=``, ``"`` and ``\`` with a backslash; a value may
  span lines (stack traces), so a record ends at the first line that ends in
  ``.`` outside a quoted value.
* Counters are ``{(group-id)(group name)[(counter-id)(counter name)(value)]...}``
  with a second escaping layer for ``(){}[]`` (:mod:`ingest.counters_v1`).
* A history file may be a concatenation of several files, each after a
  ``!!FILE=name!!`` line (Rumen's test inputs); a section whose first line is
  XML is a job conf and lands in ``conf``.  Each job is its own ``jobs`` row.

A line that is not a history record, or a record with a field no reader can
take (a time that is no integer, an attempt without its id), is skipped and
remembered in ``ctx.skipped`` (:func:`~ingest.base.skip_record`: the file lands
as partial, every other record kept; what the record had set before its bad
field stays).  A counter whose value is no integer is skipped the same way, its
record and the record's other counters kept (counters text that breaks off
keeps the counters before the break); an embedded job conf keeps what
:mod:`ingest.conf_xml` can keep of it, or is skipped whole.  Like Hadoop's own parser, text between ``KEY="value"`` pairs that is not a pair
(a record cut mid-key, as in Rumen's ``truncated-job-tracker-log``) is skipped;
it is kept in the record's event and noted.  A record whose type is unknown
lands only in ``events``.  A file that ends inside a quoted value was cut
short: everything before the cut lands and :class:`TraceTruncatedError` says where.

Hadoop 0.18 and before wrote the same records without ``Meta VERSION="1" .``
and without the closing ``' .'``: their parser ended a record at the first
line that ends in ``"``, and so does this reader in a section whose first
record line ends so (``hadoop_version`` "0.18"); their counters are the
compact ``group.counter:value,...``.

Rows per job are built when its section ends (memory is one job, not one file);
every record is an ``events`` row with its fields unescaped but otherwise raw
(``TASK_STATUS="SUCCESS"`` stays ``SUCCESS`` there, and is ``SUCCEEDED`` in
``attempts``).  1.x has no map-finish time: ``map_finish_ms`` stays null.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ingest.base import ReadContext, Row, RowBlock, iter_lines, skip_record
from ingest.conf_xml import conf_job_id, conf_rows, parse_conf
from ingest.counters_v1 import parse_counters
from ingest.formats import Format
from ingest.mrcommon import (
    counter_block,
    event_row,
    int64_text,
    unescape_v1,
)
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import (
    job_id_from_name,
    job_of_attempt,
    job_of_task,
    split_rack_host,
    task_of_attempt,
    task_type_lenient,
)
from phaseline.schemas import CounterScope, Status, normalize_status

SOURCE_FORMAT = "history_v1"
MAX_RECORD_LINES = 20_000  # a stack trace in ERROR= is long, never this long
KNOWN_TYPES = frozenset({"Meta", "Job", "Task", "MapAttempt", "ReduceAttempt"})
_INT_KEYS = frozenset(
    {
        "SUBMIT_TIME", "LAUNCH_TIME", "START_TIME", "FINISH_TIME", "TOTAL_MAPS", "TOTAL_REDUCES",
        "FINISHED_MAPS", "FINISHED_REDUCES", "FAILED_MAPS", "FAILED_REDUCES", "SHUFFLE_FINISHED",
        "SORT_FINISHED", "MAP_FINISHED", "HTTP_PORT",
    }
)  # fmt: skip
_TS_KEYS = ("FINISH_TIME", "START_TIME", "LAUNCH_TIME", "SUBMIT_TIME")
#: A key starts only where a word does: tried inside a long run of word characters that is no pair,
#: every start would scan to the run's end (a 100 kB word took a minute).
_PAIR = re.compile(r'(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)="([^"\\]*(?:\\.[^"\\]*)*)"', re.S)
_TYPE = re.compile(r"([A-Za-z][A-Za-z0-9_]*)(?=\s)")
_ESCAPED = re.compile(r"\\.", re.S)
_CLOSES = re.compile(r'"\s*\.\s*$')
_FILE_MARK = re.compile(r"^\f?!!FILE=(.*)!!\s*$")  # Rumen writes a form feed first
_SNIFF_RECORD = re.compile(rb'^(Meta|Job|Task|MapAttempt|ReduceAttempt) [A-Z_]+="', re.M)


@dataclass(slots=True)
class _Job:
    """Fields of one job merged over its records, in first-seen order."""

    job_id: str
    fields: dict[str, str] = field(default_factory=dict)
    tasks: dict[str, dict[str, str]] = field(default_factory=dict)
    attempts: dict[str, dict[str, str]] = field(default_factory=dict)
    # one block per counters value, by (scope, task, attempt): a record written again (a job
    # tracker that retried its write) replaces the counters it had, as Hadoop's map of values does
    counter_rows: dict[tuple[str, str | None, str | None], RowBlock] = field(default_factory=dict)
    line: int = 0


@dataclass(slots=True)
class _Record:
    kind: str
    fields: dict[str, str]
    junk: str
    line: int


def _unescaped(line: str) -> str:
    """``line`` without its backslash escapes: what is left of ``"`` opens or closes a value.

    Escapes never span lines, so a record's quote parity is the XOR of its lines'.  A 1.x value
    escapes its quotes and dots, so no line inside a value ends in an unescaped ``" .``
    (:data:`_CLOSES`): such a line ends its record whatever the parity.
    """
    return _ESCAPED.sub("", line) if "\\" in line else line


def _parse_record(text: str, line: int, path: Path, *, delimited: bool = True) -> _Record:
    m = _TYPE.match(text)
    if m is None:
        raise TraceParseError(
            path,
            f"not a history record (expected 'Type KEY=\"value\" ... .'): {text[:80]!r}",
            line=line,
        )
    end = len(text.rstrip())
    body = text[m.end() : end - 1 if delimited else end]  # drop the type and the final '.' (0.20+)
    fields: dict[str, str] = {}
    junk: list[str] = []
    pos = 0
    for pm in _PAIR.finditer(body):
        start, end = pm.span()
        if start - pos > 1:  # more than the one separating blank: maybe text that is not a pair
            gap = body[pos:start].strip()
            if gap:
                junk.append(gap)
        key, value = pm.groups()
        fields[key] = unescape_v1(value) if "\\" in value else value
        pos = end
    tail = body[pos:].strip()
    if tail:
        junk.append(tail)
    if not fields:
        raise TraceParseError(path, f'{m.group(1)} record without any KEY="value" pair', line=line)
    return _Record(m.group(1), fields, " ".join(junk), line)


def _int(fields: dict[str, str], key: str, path: Path, line: int) -> int | None:
    raw = fields.get(key)
    if raw is None or raw.strip() == "":
        return None
    return int64_text(raw.strip(), path, key, line)


def _check_ints(rec: _Record, path: Path) -> dict[str, int | None]:
    return {k: _int(rec.fields, k, path, rec.line) for k in rec.fields if k in _INT_KEYS}


def _job_status(raw: str | None) -> str | None:
    status = normalize_status(raw)
    if status in ("PREP", "INITED", "NEW"):
        return Status.RUNNING.value  # the job never reached a final state in this file
    return status


class _V1Reader:
    """Streams one (possibly concatenated) 1.x history file."""

    def __init__(self, path: Path, ctx: ReadContext) -> None:
        self.path = path
        self.ctx = ctx
        self.seq = 0
        self.jobs: dict[str, _Job] = {}
        self.section = path.name
        self.junk_noted = 0
        self.version = "0.20/1.x"  # the section's: "0.18" where its records do not end in ' .'

    # -- records -----------------------------------------------------------
    def _job_id_of(self, rec: _Record) -> str | None:
        f = rec.fields
        return (
            f.get("JOBID")
            or job_of_task(f.get("TASKID"))
            or job_of_attempt(f.get("TASK_ATTEMPT_ID"))
            or (next(iter(self.jobs)) if len(self.jobs) == 1 else None)
        )

    def _job_for(self, rec: _Record) -> _Job:
        job_id = self._job_id_of(rec)
        if not job_id:
            raise TraceParseError(
                self.path, f"{rec.kind} record names no job (no JOBID/TASKID/TASK_ATTEMPT_ID)", line=rec.line
            )
        job = self.jobs.get(job_id)
        if job is None:
            job = self.jobs[job_id] = _Job(job_id, line=rec.line)
        return job

    def _counters(
        self,
        job: _Job,
        rec: _Record,
        key: str,
        scope: CounterScope,
        task_id: str | None = None,
        attempt_id: str | None = None,
    ) -> None:
        raw = rec.fields.get(key)
        if not raw:
            return
        counters = parse_counters(raw, self.path, rec.line, key, self.ctx)  # a bad counter: skipped, named
        entries = ((group, name, value) for group, _group_name, name, _display, value in counters)
        block = counter_block(job.job_id, scope.value, entries, task_id=task_id, attempt_id=attempt_id)
        if block is not None:
            job.counter_rows[scope.value, task_id, attempt_id] = block

    def handle(self, rec: _Record) -> Iterator[Row]:
        ints = _check_ints(rec, self.path)
        self.ctx.events_read += 1
        f = rec.fields
        job: _Job | None = None
        unknown_job: str | None = None
        if rec.kind == "Meta":
            pass
        elif rec.kind == "Job":
            job = self._job_for(rec)
            job.fields.update(f)
            self._counters(job, rec, "COUNTERS", CounterScope.JOB_TOTAL)
            self._counters(job, rec, "MAP_COUNTERS", CounterScope.JOB_MAP)
            self._counters(job, rec, "REDUCE_COUNTERS", CounterScope.JOB_REDUCE)
        elif rec.kind == "Task":
            job = self._job_for(rec)
            task_id = self._require(rec, "TASKID")
            job.tasks.setdefault(task_id, {}).update(f)
            self._counters(job, rec, "COUNTERS", CounterScope.TASK, task_id=task_id)
        elif rec.kind in ("MapAttempt", "ReduceAttempt"):
            job = self._job_for(rec)
            attempt_id = self._require(rec, "TASK_ATTEMPT_ID")
            merged = job.attempts.setdefault(attempt_id, {"_kind": rec.kind})
            merged.update(f)
            owner = f.get("TASKID") or task_of_attempt(attempt_id)
            self._counters(job, rec, "COUNTERS", CounterScope.ATTEMPT, task_id=owner, attempt_id=attempt_id)
        else:
            self.ctx.unknown[rec.kind] += 1
            unknown_job = self._job_id_of(rec)  # kept in events only: never an error
        if rec.junk:
            self.junk_noted += 1
            if self.junk_noted <= 3:
                self.ctx.notes.append(
                    f"{self.path}:{rec.line}: skipped text {rec.junk[:60]!r} in a {rec.kind} record "
                    "(as Hadoop's parser does); kept in events"
                )
        ts = next((ints[k] for k in _TS_KEYS if ints.get(k) is not None), None)
        payload: dict[str, object] = {"line": rec.line, "file": self.section, "fields": f}
        if rec.junk:
            payload["unparsed"] = rec.junk
        yield event_row(job.job_id if job else unknown_job, self.seq, rec.kind, ts, payload)
        self.seq += 1

    def _require(self, rec: _Record, key: str) -> str:
        value = rec.fields.get(key)
        if not value:
            raise TraceParseError(self.path, f"{rec.kind} record without {key}", line=rec.line)
        return value

    def cut_record(self, lines: list[str], start: int) -> Row:
        """A record a file boundary cut short: kept whole, as raw text, in ``events``."""
        self.ctx.events_read += 1
        self.ctx.unknown["cut record"] += 1
        self.ctx.notes.append(
            f"{self.path}:{start}: a record in {self.section!r} never ended before the next !!FILE= "
            "(the concatenated file was cut); its text is kept in events"
        )
        row = event_row(
            None, self.seq, "CutRecord", None, {"line": start, "file": self.section, "raw": "\n".join(lines)}
        )
        self.seq += 1
        return row

    # -- conf sections -----------------------------------------------------
    def conf_section(self, lines: list[str], first_line: int) -> Iterator[Row]:
        """An embedded job conf: what can be kept of a damaged one is kept (:mod:`ingest.conf_xml`),
        one that cannot be read at all is skipped and named."""
        try:
            props = parse_conf([("\n".join(lines) + "\n").encode()], self.path, first_line=first_line, ctx=self.ctx)
            job_id = conf_job_id(props) or job_id_from_name(self.section) or self.ctx.job_id_hint
            if job_id is None:
                raise TraceParseError(self.path, f"embedded job conf {self.section!r} names no job", line=first_line)
        except TraceParseError as exc:
            skip_record(self.ctx, exc)
            return
        self.ctx.events_read += 1  # one embedded file: its JobConf event (the properties are in conf)
        yield from conf_rows(job_id, props)
        yield event_row(job_id, self.seq, "JobConf", None, {"line": first_line, "file": self.section,
                                                           "properties": len(props)})  # fmt: skip
        self.seq += 1

    # -- flushing jobs -----------------------------------------------------
    def flush(self) -> Iterator[Row | RowBlock]:
        for job in self.jobs.values():
            yield from self._job_rows(job)
        self.jobs = {}

    def _job_rows(self, job: _Job) -> Iterator[Row | RowBlock]:
        p, ln = self.path, job.line
        f = job.fields
        yield Row(
            "jobs",
            {
                "job_id": job.job_id,
                "name": f.get("JOBNAME"),
                "user": f.get("USER"),
                "queue": f.get("JOB_QUEUE"),
                "status": _job_status(f.get("JOB_STATUS")),
                "submit_ms": _int(f, "SUBMIT_TIME", p, ln),
                "launch_ms": _int(f, "LAUNCH_TIME", p, ln),
                "finish_ms": _int(f, "FINISH_TIME", p, ln),
                "total_maps": _int(f, "TOTAL_MAPS", p, ln),
                "total_reduces": _int(f, "TOTAL_REDUCES", p, ln),
                "finished_maps": _int(f, "FINISHED_MAPS", p, ln),
                "finished_reduces": _int(f, "FINISHED_REDUCES", p, ln),
                "failed_maps": _int(f, "FAILED_MAPS", p, ln),
                "failed_reduces": _int(f, "FAILED_REDUCES", p, ln),
                "killed_maps": None,
                "killed_reduces": None,
                "uberized": None,
                "diagnostics": f.get("FAIL_REASON") or None,
                "hadoop_version": self.version,
                "source_format": SOURCE_FORMAT,
            },
        )
        succeeded: dict[str, str] = {}
        for attempt_id, a in job.attempts.items():
            status = normalize_status(a.get("TASK_STATUS"))
            task_id = a.get("TASKID") or task_of_attempt(attempt_id) or ""
            if status == Status.SUCCEEDED.value:
                succeeded[task_id] = attempt_id
            host, rack = split_rack_host(a.get("HOSTNAME"))
            if host is None:
                host = _tracker_host(a.get("TRACKER_NAME"))
            yield Row(
                "attempts",
                {
                    "job_id": job.job_id,
                    "task_id": task_id or None,
                    "attempt_id": attempt_id,
                    "task_type": task_type_lenient(a.get("TASK_TYPE"))
                    or ("REDUCE" if a["_kind"] == "ReduceAttempt" else "MAP"),
                    "status": status,
                    "start_ms": _int(a, "START_TIME", p, ln),
                    "finish_ms": _int(a, "FINISH_TIME", p, ln),
                    "map_finish_ms": _int(a, "MAP_FINISHED", p, ln),
                    "shuffle_finish_ms": _int(a, "SHUFFLE_FINISHED", p, ln),
                    "sort_finish_ms": _int(a, "SORT_FINISHED", p, ln),
                    "host": host,
                    "rack": rack,
                    "container_id": None,
                    "error": a.get("ERROR") or None,
                    "locality": None,
                    "http_port": _int(a, "HTTP_PORT", p, ln),
                },
            )
        for task_id, t in job.tasks.items():
            yield Row(
                "tasks",
                {
                    "job_id": job.job_id,
                    "task_id": task_id,
                    "task_type": task_type_lenient(t.get("TASK_TYPE")),
                    "status": normalize_status(t.get("TASK_STATUS")),
                    "start_ms": _int(t, "START_TIME", p, ln),
                    "finish_ms": _int(t, "FINISH_TIME", p, ln),
                    "successful_attempt_id": succeeded.get(task_id),
                    "splits": t.get("SPLITS") or None,
                    "error": t.get("ERROR") or None,
                },
            )
        yield from job.counter_rows.values()


def _tracker_host(tracker: str | None) -> str | None:
    """``tracker_<host>:localhost/127.0.0.1:port`` -> ``<host>`` (for attempts that never reported one)."""
    if not tracker:
        return None
    name = tracker.removeprefix("tracker_").split(":", 1)[0]
    return name or None


def read_history_v1(path: Path, ctx: ReadContext) -> Iterator[Row | RowBlock]:
    """Read a Hadoop 0.20/1.x history file (plain, gzipped, or ``!!FILE=`` concatenated).

    Yields
    ------
    Row | RowBlock
        ``events`` rows as records stream by; ``jobs``, ``attempts``, ``tasks``,
        ``counters`` (one :class:`~ingest.base.RowBlock` per counters value) and
        ``conf`` (for embedded confs) when each section ends.

    Raises
    ------
    TraceParseError
        A line that is not a record, a record without pairs or ids, a
        non-integer time/count, malformed counters, a malformed embedded conf.
    TraceTruncatedError
        The file ends inside a record (after every complete job was yielded).
    """
    reader = _V1Reader(path, ctx)
    buf: list[str] = []
    open_quote = 0  # parity of unescaped quotes in buf: 1 while inside a value
    start = 0
    xml: list[str] | None = None
    xml_start = 0
    delimited: bool | None = None  # records end in ' .' (0.20+); None until a section's first record
    for line_no, line in iter_lines(path, ctx):
        mark = _FILE_MARK.match(line) if line.startswith(("!", "\f")) else None
        if mark:  # a file boundary ends whatever came before, even a record cut short
            if buf:
                yield reader.cut_record(buf, start)
                buf, open_quote = [], 0
            if xml is not None:
                yield from reader.conf_section(xml, xml_start)
                xml = None
            yield from reader.flush()
            reader.section = mark.group(1)
            delimited = None
            continue
        if not buf:
            if xml is not None:
                xml.append(line)
                continue
            stripped = line.strip()
            if not stripped:
                continue
            if stripped.startswith("<"):
                xml, xml_start = [line], line_no
                continue
            start = line_no
            if delimited is None:
                delimited = _delimited(stripped)
                reader.version = "0.20/1.x" if delimited else "0.18"
        buf.append(line)
        if len(buf) > MAX_RECORD_LINES:
            raise TraceParseError(
                path,
                f"the record starting at line {start} runs past {MAX_RECORD_LINES} lines without ending in '\" .'",
                line=start,
                hint="is this a job history file? (a value may span lines, a record may not)",
            )
        plain = _unescaped(line)
        open_quote ^= plain.count('"') & 1
        if not delimited:  # 0.18 and before: a record ends at a line that ends in '"' (as their parser reads)
            if open_quote or not line.rstrip().endswith('"'):
                continue
        elif open_quote and _CLOSES.search(plain) is None:
            continue  # inside a value that spans lines
        if open_quote:  # ends here with a stray quote (as Hadoop's parser, which ends a record at its
            # line delimiter, would): only this record is lost, not all after it
            bad: TraceParseError | None = TraceParseError(
                path, f"the record of lines {start}-{line_no} holds an unescaped quote (an odd number of '\"')",
                line=start, hint="1.x history escapes quotes in values as \\\"; the file was damaged or hand-edited",
            )  # fmt: skip
        elif delimited and not line.rstrip().endswith("."):
            bad = TraceParseError(
                path, f"a record line that does not end in ' .' outside a quoted value: {line[:80]!r}",
                line=line_no, hint="records end with ' .'; only quoted values may span lines",
            )  # fmt: skip
        else:
            bad = None
        if bad is not None:
            skip_record(ctx, bad)
            buf, open_quote = [], 0
            continue
        text = ("\n".join(buf) if len(buf) > 1 else line).strip()
        buf = []
        read_before = ctx.events_read
        try:
            rows = list(reader.handle(_parse_record(text, start, path, delimited=delimited is not False)))
        except TraceParseError as exc:  # no record, or fields no reader can take: skipped, named
            ctx.events_read = read_before
            skip_record(ctx, exc)
            continue
        yield from rows
    if xml is not None:
        yield from reader.conf_section(xml, xml_start)
    yield from reader.flush()
    if buf:
        raise TraceTruncatedError(
            path,
            f"file ends inside a record that starts at line {start} ({len(buf)} lines, no closing '\" .')",
            line=start,
            hint="the writer was cut off; everything before that record landed",
        )


def _delimited(first: str) -> bool:
    """Whether the records of a section whose first record line is ``first`` end in ``' .'``.

    Hadoop 0.20+ writes ``Meta VERSION="1" .`` first and ends every record with
    ``' .'``; 0.18 and before wrote no Meta record and ended a record with its
    last value's ``"`` (``Job JOBID="job_..." ... JOBCONF="..." ``).
    """
    return first.startswith("Meta ") or not first.rstrip().endswith('"')


def sniff_history_v1(head: bytes, path: Path) -> bool:
    """A 1.x history: ``!!FILE=`` concatenation, or a first record ``Meta|Job|Task... KEY="``."""
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n\f")
    if text.startswith(b"!!FILE="):
        return True
    first = text.split(b"\n", 1)[0]
    return _SNIFF_RECORD.match(first) is not None


FORMATS: tuple[Format, ...] = (
    Format(
        name="history_v1",
        sniff=sniff_history_v1,
        read=read_history_v1,
        doc='Hadoop 0.18-1.x job-tracker history (Type KEY="value" records; !!FILE= concatenations)',
    ),
)
