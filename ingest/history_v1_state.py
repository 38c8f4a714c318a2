"""What the records of a 0.18-1.x history mean: :class:`V1Reader` merges each job's records and
writes its ``jobs``, ``tasks``, ``attempts``, ``counters`` and ``conf`` rows when its section ends
(memory is one job, not one file).  :mod:`ingest.history_v1` has the format and its rules.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ingest.base import ReadContext, Row, RowBlock, skip_record
from ingest.conf_xml import conf_job_id, conf_rows, parse_conf
from ingest.counters_v1 import parse_counters
from ingest.history_v1_records import Record
from ingest.mrcommon import (
    counter_block,
    event_row,
    int64_text,
)
from phaseline.errors import TraceParseError
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
KNOWN_TYPES = frozenset({"Meta", "Job", "Task", "MapAttempt", "ReduceAttempt"})
_INT_KEYS = frozenset(
    {
        "SUBMIT_TIME", "LAUNCH_TIME", "START_TIME", "FINISH_TIME", "TOTAL_MAPS", "TOTAL_REDUCES",
        "FINISHED_MAPS", "FINISHED_REDUCES", "FAILED_MAPS", "FAILED_REDUCES", "SHUFFLE_FINISHED",
        "SORT_FINISHED", "MAP_FINISHED", "HTTP_PORT",
    }
)  # fmt: skip
_TS_KEYS = ("FINISH_TIME", "START_TIME", "LAUNCH_TIME", "SUBMIT_TIME")


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


def _int(fields: dict[str, str], key: str, path: Path, line: int) -> int | None:
    raw = fields.get(key)
    if raw is None or raw.strip() == "":
        return None
    return int64_text(raw.strip(), path, key, line)


def _check_ints(rec: Record, path: Path) -> dict[str, int | None]:
    return {k: _int(rec.fields, k, path, rec.line) for k in rec.fields if k in _INT_KEYS}


def _job_status(raw: str | None) -> str | None:
    status = normalize_status(raw)
    if status in ("PREP", "INITED", "NEW"):
        return Status.RUNNING.value  # the job never reached a final state in this file
    return status


class V1Reader:
    """Streams one (possibly concatenated) 1.x history file."""

    def __init__(self, path: Path, ctx: ReadContext) -> None:
        self.path = path
        self.ctx = ctx
        self.seq = 0
        self.jobs: dict[str, _Job] = {}
        self.section = path.name
        self.junk_noted = 0
        self.version = "0.20/1.x"  # the section's: "0.18" where its records do not end in ' .'
        # the lines of the section's embedded job conf (XML), from line conf_start; None: not in one
        self.conf_lines: list[str] | None = None
        self.conf_start = 0

    # -- records -----------------------------------------------------------
    def _job_id_of(self, rec: Record) -> str | None:
        f = rec.fields
        return (
            f.get("JOBID")
            or job_of_task(f.get("TASKID"))
            or job_of_attempt(f.get("TASK_ATTEMPT_ID"))
            or (next(iter(self.jobs)) if len(self.jobs) == 1 else None)
        )

    def _job_for(self, rec: Record) -> _Job:
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
        rec: Record,
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

    def handle(self, rec: Record) -> Iterator[Row]:
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

    def _require(self, rec: Record, key: str) -> str:
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

    def end_section(self) -> Iterator[Row | RowBlock]:
        """The rows of a section that ends (a ``!!FILE=`` line, the end of the file): its embedded
        conf (:attr:`conf_lines`), then its jobs."""
        if self.conf_lines is not None:
            yield from self.conf_section(self.conf_lines, self.conf_start)
            self.conf_lines = None
        yield from self.flush()

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
