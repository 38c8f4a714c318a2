r"""Rumen JSON traces (``LoggedJob`` objects) and Rumen cluster topologies.

A Rumen trace is a *stream* of concatenated JSON objects (not an array), often
gzipped; each object is one job::

    {"jobID": "job_...", "user": ..., "submitTime": ..., "outcome": "SUCCESS",
     "mapTasks": [{"taskID": ..., "taskStatus": ..., "attempts": [{"attemptID": ...,
       "hostName": "/rack/host", "result": ..., "shuffleFinished": ..., "hdfsBytesRead": ...}]}],
     "reduceTasks": [...], "otherTasks": [...], "jobProperties": {...}, ...}

Mapping to the store:

* ``-1`` (Rumen's "unknown") and ``null`` become null; so does a time of ``0``
  (Rumen's value for an attempt that failed before it started).
* Host names keep 1.x escapes (``/192\.30\.63\.192/node\.com``): they are
  unescaped and split into ``host`` and ``rack``; so are job names.
* Statuses are normalized (``SUCCESS`` -> ``SUCCEEDED``).  ``finished_maps`` /
  ``failed_maps`` (and reduces) count the map/reduce tasks whose status is
  SUCCEEDED / FAILED: Rumen keeps no job-level counts.
* Counters Rumen folded into attempt fields (``hdfsBytesRead``,
  ``spilledRecords``, ``resourceUsageMetrics.cumulativeCpuUsage``...) land as
  ``attempt`` counters under Hadoop 2's group and counter names
  (:data:`ATTEMPT_COUNTERS`).  Task-level ``inputBytes``... are Rumen's own
  derivations and stay in events.
* ``jobProperties`` land in ``conf`` (source ``rumen``).
* Events: one ``RumenJob`` per job (the object without its task lists) and one
  ``RumenTask`` per task (with its attempts), so every field is kept.

A topology file (a tree ``{"name": "<root>", "children": [...]}``) lands in the
``topology`` table: one row per leaf host with the path of inner nodes as rack.

Objects are decoded one at a time from a growing buffer, so memory is one job.
A stream that ends inside an object raises :class:`TraceTruncatedError` after
every complete job was yielded, and, when the cut is inside a job's task
lists, that job with its tasks before the cut (:func:`_salvage_cut_job`).
"""

from __future__ import annotations

import json
import re
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from ingest.base import MAX_RECORD_CHARS, ReadContext, Row, open_text, skip_or_raise, skip_record
from ingest.formats import Format
from ingest.mrcommon import (
    INT64_MAX,
    INT64_MIN,
    counter_row,
    event_row,
    unescape_v1,
)
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import (
    FILE_SYSTEM_COUNTER_GROUP,
    TASK_COUNTER_GROUP,
    split_rack_host,
    task_type_lenient,
)
from phaseline.schemas import CounterScope, Status, normalize_status

_CHUNK = 1 << 20
_BLANK = re.compile(r"\s*")
_FS = FILE_SYSTEM_COUNTER_GROUP
_TASK = TASK_COUNTER_GROUP

#: Rumen ``LoggedTaskAttempt`` fields -> (counter group, counter name) they were folded from.
ATTEMPT_COUNTERS: dict[str, tuple[str, str]] = {
    "hdfsBytesRead": (_FS, "HDFS_BYTES_READ"),
    "hdfsBytesWritten": (_FS, "HDFS_BYTES_WRITTEN"),
    "fileBytesRead": (_FS, "FILE_BYTES_READ"),
    "fileBytesWritten": (_FS, "FILE_BYTES_WRITTEN"),
    "mapInputRecords": (_TASK, "MAP_INPUT_RECORDS"),
    "mapInputBytes": (_TASK, "MAP_INPUT_BYTES"),
    "mapOutputBytes": (_TASK, "MAP_OUTPUT_BYTES"),
    "mapOutputRecords": (_TASK, "MAP_OUTPUT_RECORDS"),
    "combineInputRecords": (_TASK, "COMBINE_INPUT_RECORDS"),
    "reduceInputGroups": (_TASK, "REDUCE_INPUT_GROUPS"),
    "reduceInputRecords": (_TASK, "REDUCE_INPUT_RECORDS"),
    "reduceShuffleBytes": (_TASK, "REDUCE_SHUFFLE_BYTES"),
    "reduceOutputRecords": (_TASK, "REDUCE_OUTPUT_RECORDS"),
    "spilledRecords": (_TASK, "SPILLED_RECORDS"),
}
#: ``resourceUsageMetrics`` fields -> TaskCounter names.
RESOURCE_COUNTERS: dict[str, str] = {
    "cumulativeCpuUsage": "CPU_MILLISECONDS",
    "virtualMemoryUsage": "VIRTUAL_MEMORY_BYTES",
    "physicalMemoryUsage": "PHYSICAL_MEMORY_BYTES",
    "heapUsage": "COMMITTED_HEAP_BYTES",
}
_TASK_LISTS = ("mapTasks", "reduceTasks", "otherTasks")
_SNIFF_JOB = re.compile(rb'^\s*\{\s*"(priority|jobID|user|jobName|submitTime)"\s*:')
_SNIFF_TOPO = re.compile(rb'^\s*\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"children"\s*:')


#: Where a top-level value may start again after a malformed one: a line whose first non-blank is ``{``.
_LINE_OBJECT = re.compile(r"\n[ \t]*\{")
#: Characters a value cut at the buffer's end can still need before the decoder sees the cut
#: (it names a bad literal or number by its start: ``tru``, ``-1.5e``).
_DECODE_SLACK = 64


def iter_json_objects(
    fh: IO[str], path: Path, ctx: ReadContext | None = None, top: Callable[[Any], bool] | None = None,
    salvage: Callable[[str], Any] | None = None,
) -> Iterator[tuple[int, Any]]:
    """Yield ``(line, value)`` for each top-level JSON value of a concatenated stream.

    With ``ctx`` and ``top`` (which top-level values the format expects), a
    malformed value is skipped (:func:`~ingest.base.skip_record`) and reading
    resumes at the next line starting with ``{`` whose value ``top`` accepts
    (values that fail to decode there, or that ``top`` refuses, e.g. the nested
    objects of a pretty-printed value, are passed over silently).  Where the
    stream ends inside a value, ``salvage`` may make a value of its text (or
    None): it is yielded before the :class:`TraceTruncatedError`.

    Raises
    ------
    TraceTruncatedError
        The stream ends inside a value.
    TraceParseError
        Malformed JSON (with the line where the decoder stopped), without ``ctx``.
    """
    decoder = json.JSONDecoder()

    def read(n: int) -> str:
        try:
            return fh.read(n)
        except (EOFError, OSError, zlib.error) as exc:
            raise TraceTruncatedError(path, f"the compressed stream is corrupt or cut short: {exc}") from exc

    skipping = ctx if top is not None else None  # where a malformed value is skipped (None: it raises)
    buf = ""
    pos = 0  # where the next value starts in buf (no slicing per value: buffers hold many small jobs)
    line = 1  # line number of buf[pos]
    eof = False
    resyncing = False  # after a malformed value: looking for the next top-level value
    while True:
        if resyncing and not buf.startswith("{", pos):  # (at "{": a candidate waiting for more text)
            found = _LINE_OBJECT.search(buf, pos)
            if found is None:
                if eof:
                    return
                line += buf.count("\n", pos)
                keep = buf.rfind("\n")  # the last partial line may start the next value
                more = read(_CHUNK)
                eof = not more
                buf, pos = (buf[keep:] if keep >= pos else "") + more, 0
                line -= buf.count("\n", 0, len(buf) - len(more))
                continue
            line += buf.count("\n", pos, found.end() - 1)
            pos = found.end() - 1
        blank_end = _BLANK.match(buf, pos).end()  # type: ignore[union-attr]  # matches the empty string
        line += buf.count("\n", pos, blank_end)
        pos = blank_end
        if pos >= len(buf):
            if eof:
                return
            first = not buf and line == 1
            buf, pos = read(_CHUNK), 0
            if first and buf.startswith("\ufeff"):
                pos = 1  # a byte-order mark
            eof = not buf
            continue
        try:
            value, end = decoder.raw_decode(buf, pos)
        except json.JSONDecodeError as exc:
            # Where the decoder stopped well before the buffer's end (not in a string, which it names
            # by its start), more text cannot mend the value: it is malformed, whatever follows.
            inside = exc.pos < len(buf) - _DECODE_SLACK and not exc.msg.startswith("Unterminated string")
            if not eof and not inside:
                if len(buf) - pos > MAX_RECORD_CHARS:
                    raise TraceParseError(
                        path, f"a JSON value starting at line {line} is larger than {MAX_RECORD_CHARS >> 20} Mi "
                        "characters", line=line,
                    ) from None  # fmt: skip
                more = read(max(_CHUNK, len(buf) - pos))
                eof = not more
                buf, pos = buf[pos:] + more, 0
                continue
            at = line + buf.count("\n", pos, exc.pos)
            if resyncing:
                pos += 1  # not a value here either: look further
                continue
            if not inside and (exc.pos >= len(buf.rstrip()) or exc.msg.startswith("Unterminated string")):
                kept = salvage(buf[pos:]) if salvage is not None else None
                if kept is not None:
                    yield line, kept
                raise TraceTruncatedError(
                    path, f"the JSON stream ends inside a value that starts at line {line}", line=at,
                    hint="the trace was cut short; every complete object before it landed"
                    + (", and the complete parts of the one it cut" if kept is not None else ""),
                ) from exc  # fmt: skip
            skip_or_raise(skipping, TraceParseError(path, f"malformed JSON: {exc.msg}", line=at))
            pos, resyncing = pos + 1, True
            continue
        except RecursionError:
            if resyncing:
                pos += 1
                continue
            skip_or_raise(skipping, TraceParseError(
                path, f"a JSON value nested deeper than {sys.getrecursionlimit()} levels", line=line,
                hint="no Hadoop writer nests so deep; the values after it are read",
            ))  # fmt: skip
            pos, resyncing = pos + 1, True
            continue
        except ValueError as exc:  # not a JSONDecodeError: a number past Python's 4,300-digit limit
            if resyncing:
                pos += 1
                continue
            skip_or_raise(skipping, TraceParseError(path, f"malformed JSON: {exc}", line=line))
            pos, resyncing = pos + 1, True
            continue
        if resyncing and (top is None or not top(value)):
            pos += 1  # a nested value of the malformed one: look further
            continue
        resyncing = False
        yield line, value
        line += buf.count("\n", pos, end)
        pos = end


def _int(value: Any, path: Path, what: str, line: int) -> int | None:
    """Rumen's numbers: ``-1``/null mean unknown; anything else must be an integer that fits int64."""
    if value is None or isinstance(value, bool):
        return None
    written = value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, int):
        raise TraceParseError(path, f"{what} = {str(value)[:40]!r} is not an integer", line=line)
    if value < INT64_MIN or value > INT64_MAX:
        raise TraceParseError(path, f"{what} = {str(written)[:40]} does not fit in 64 bits", line=line)
    return None if value == -1 else value


def _time(value: Any, path: Path, what: str, line: int) -> int | None:
    """A Rumen timestamp: as :func:`_int`, and ``0`` is unknown too.

    Rumen writes 0 where the history it read had no time, e.g. for an attempt
    that failed before it started (the mumak trace has six); kept as epoch 0
    it put a wave 39 years long into the report.
    """
    value = _int(value, path, what, line)
    return None if value == 0 else value


def _str(value: Any) -> str | None:
    if value is None:
        return None
    return unescape_v1(str(value))


def _dict(value: Any, path: Path, what: str, line: int) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TraceParseError(path, f"{what} is a JSON {type(value).__name__}, not an object", line=line)
    return value


def _list(value: Any, path: Path, what: str, line: int) -> list[Any]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise TraceParseError(path, f"{what} is a JSON {type(value).__name__}, not an array", line=line)
    return value


def _splits(locations: list[Any]) -> str | None:
    parts = []
    for loc in locations:
        layers = loc.get("layers") if isinstance(loc, dict) else None
        if isinstance(layers, list) and layers:
            parts.append("/" + "/".join(unescape_v1(str(x)) for x in layers))
    return ",".join(parts) or None


class _RumenJob:
    """Turns one ``LoggedJob`` object into rows."""

    def __init__(self, obj: dict[str, Any], path: Path, line: int, ctx: ReadContext, seq: int) -> None:
        self.obj, self.path, self.line, self.ctx, self.seq = obj, path, line, ctx, seq
        job_id = obj.get("jobID")
        if not isinstance(job_id, str) or not job_id:
            raise TraceParseError(path, "a Rumen job object without a jobID", line=line)
        self.job_id = job_id

    def _event(self, kind: str, ts: int | None, payload: Any) -> Row:
        row = event_row(self.job_id, self.seq, kind, ts, payload)
        self.seq += 1
        self.ctx.events_read += 1
        return row

    def repeated(self) -> Row:
        """The object of a job this file described before, kept whole as an event only (see :func:`read_rumen`)."""
        submit = _time(self.obj.get("submitTime"), self.path, "submitTime", self.line)
        return self._event("RumenJob", submit, self.obj)

    def rows(self) -> Iterator[Row]:
        """The job's rows; a task or attempt whose fields cannot be read is skipped (``ctx.skipped``).

        The job's own fields are read first, so that a job that cannot be read counts no event.
        """
        o, p, ln = self.obj, self.path, self.line
        submit = _time(o.get("submitTime"), p, "submitTime", ln)
        job = {
            "job_id": self.job_id,
            "name": _str(o.get("jobName")),
            "user": _str(o.get("user")),
            "queue": _str(o.get("queue")),
            "status": normalize_status(_str(o.get("outcome"))),
            "submit_ms": submit,
            "launch_ms": _time(o.get("launchTime"), p, "launchTime", ln),
            "finish_ms": _time(o.get("finishTime"), p, "finishTime", ln),
            "total_maps": _int(o.get("totalMaps"), p, "totalMaps", ln),
            "total_reduces": _int(o.get("totalReduces"), p, "totalReduces", ln),
            "killed_maps": None,
            "killed_reduces": None,
            "uberized": None,
            "diagnostics": None,
            "hadoop_version": None,
            "source_format": "rumen",
        }
        lists = [(name, _list(o.get(name), p, f"{self.job_id}.{name}", ln)) for name in _TASK_LISTS]
        counts = {"MAP": [0, 0], "REDUCE": [0, 0]}
        task_rows: list[Row] = []
        for list_name, tasks in lists:
            for raw in tasks:
                try:
                    rows = list(self._task_rows(_dict(raw, p, f"a task of {self.job_id}", ln), list_name))
                except TraceParseError as exc:
                    skip_record(self.ctx, exc)
                    continue
                for row in rows:
                    if row.table == "tasks":
                        values = row.as_dict()
                        kind, status = values["task_type"], values["status"]
                        if kind in counts and status in (Status.SUCCEEDED.value, Status.FAILED.value):
                            counts[kind][status == Status.FAILED.value] += 1
                task_rows.extend(rows)
        job_payload = {k: v for k, v in o.items() if k not in _TASK_LISTS}
        yield self._event("RumenJob", submit, job_payload)
        yield Row("jobs", {
            **job,
            "finished_maps": counts["MAP"][0],
            "finished_reduces": counts["REDUCE"][0],
            "failed_maps": counts["MAP"][1],
            "failed_reduces": counts["REDUCE"][1],
        })
        yield from task_rows
        props = o.get("jobProperties")
        if isinstance(props, dict):
            for key, value in props.items():
                yield Row("conf", {"job_id": self.job_id, "key": str(key),
                                   "value": None if value is None else str(value), "source": "rumen"})  # fmt: skip

    def _task_rows(self, task: dict[str, Any], list_name: str) -> Iterator[Row]:
        """A task's rows: its attempts (one that cannot be read is skipped), the task, its event."""
        p, ln = self.path, self.line
        task_id = task.get("taskID")
        if not isinstance(task_id, str) or not task_id:
            raise TraceParseError(p, f"a task of {self.job_id} ({list_name}) has no taskID", line=ln)
        kind = task_type_lenient(_str(task.get("taskType")))
        start = _time(task.get("startTime"), p, f"{task_id}.startTime", ln)
        task_row = {
            "job_id": self.job_id,
            "task_id": task_id,
            "task_type": kind,
            "status": normalize_status(_str(task.get("taskStatus"))),
            "start_ms": start,
            "finish_ms": _time(task.get("finishTime"), p, f"{task_id}.finishTime", ln),
            "splits": _splits(_list(task.get("preferredLocations"), p, f"{task_id}.preferredLocations", ln)),
            "error": None,
        }
        successful = None
        for raw in _list(task.get("attempts"), p, f"{task_id}.attempts", ln):
            try:
                row = self._attempt_row(_dict(raw, p, f"an attempt of {task_id}", ln), task_id, kind)
                values = row.as_dict()
                counters = list(self._attempt_counters(raw, task_id, values["attempt_id"]))
            except TraceParseError as exc:
                skip_record(self.ctx, exc)
                continue
            if values["status"] == Status.SUCCEEDED.value:
                successful = values["attempt_id"]
            yield row
            yield from counters
        yield Row("tasks", {**task_row, "successful_attempt_id": successful})
        yield self._event("RumenTask", start, task)

    def _attempt_row(self, a: dict[str, Any], task_id: str, kind: str | None) -> Row:
        p, ln = self.path, self.line
        attempt_id = a.get("attemptID")
        if not isinstance(attempt_id, str) or not attempt_id:
            raise TraceParseError(p, f"an attempt of {task_id} has no attemptID", line=ln)
        host, rack = split_rack_host(_str(a.get("hostName")))
        if host is None:
            layers = (a.get("location") or {}).get("layers") if isinstance(a.get("location"), dict) else None
            if isinstance(layers, list) and layers:
                host, rack = split_rack_host("/" + "/".join(unescape_v1(str(x)) for x in layers))
        return Row(
            "attempts",
            {
                "job_id": self.job_id,
                "task_id": task_id,
                "attempt_id": attempt_id,
                "task_type": kind,
                "status": normalize_status(_str(a.get("result"))),
                "start_ms": _time(a.get("startTime"), p, f"{attempt_id}.startTime", ln),
                "finish_ms": _time(a.get("finishTime"), p, f"{attempt_id}.finishTime", ln),
                "map_finish_ms": None,
                "shuffle_finish_ms": _time(a.get("shuffleFinished"), p, f"{attempt_id}.shuffleFinished", ln),
                "sort_finish_ms": _time(a.get("sortFinished"), p, f"{attempt_id}.sortFinished", ln),
                "host": host,
                "rack": rack,
                "container_id": None,
                "error": None,
                "locality": None,
                "http_port": None,
            },
        )

    def _attempt_counters(self, a: dict[str, Any], task_id: str, attempt_id: str) -> Iterator[Row]:
        p, ln = self.path, self.line
        scope = CounterScope.ATTEMPT.value
        for field_name, (group, name) in ATTEMPT_COUNTERS.items():
            value = _int(a.get(field_name), p, f"{attempt_id}.{field_name}", ln)
            if value is not None:
                yield counter_row(
                    self.job_id, scope, group, name, value, task_id=task_id, attempt_id=attempt_id
                )
        usage = a.get("resourceUsageMetrics")
        if isinstance(usage, dict):
            for field_name, name in RESOURCE_COUNTERS.items():
                value = _int(usage.get(field_name), p, f"{attempt_id}.{field_name}", ln)
                if value is not None and value != 0:
                    yield counter_row(
                        self.job_id, scope, _TASK, name, value, task_id=task_id, attempt_id=attempt_id
                    )


def _topology_rows(node: Any, racks: tuple[str, ...], path: Path, line: int) -> Iterator[Row]:
    node = _dict(node, path, "a topology node", line)
    name = _str(node.get("name"))
    children = _list(node.get("children"), path, f"children of {name}", line)
    if not children:
        if name and racks:
            yield Row(
                "topology", {"host": name, "rack": "/" + "/".join(racks[1:]) if len(racks) > 1 else None}
            )
        return
    for child in children:
        yield from _topology_rows(child, (*racks, name or ""), path, line)


def read_rumen(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Read a Rumen job trace (or a Rumen topology) into the store's tables.

    Raises
    ------
    TraceParseError
        Malformed JSON, a top-level value that is not a job object, a job/task/
        attempt without its id, a non-integer time.
    TraceTruncatedError
        The stream ends inside an object (complete jobs before it are yielded).

    A job whose id an earlier object of the same file had (Rumen output written
    twice into one trace, as gridmix's ``wordcount2.json``) is read from its first
    object only: a later one is kept whole in ``events`` and noted, so the job's
    tasks, attempts and counters are not counted twice.
    """
    seq = 0
    described: dict[str, int] = {}  # job id -> line of the object it was read from
    with open_text(path, ctx) as fh:  # a gzip stream cut short ends at the cut (ctx.cut)

        def salvage(text: str) -> dict[str, Any] | None:
            job = _salvage_cut_job(text)
            if job is not None:
                ctx.notes.append(f"{job['jobID']} was cut short inside its task lists: its tasks before the cut "
                                 "are kept; its fields written after the cut are unknown")  # fmt: skip
            return job

        for line, obj in iter_json_objects(fh, path, ctx, _is_top_level, salvage):
            if not isinstance(obj, dict):
                skip_record(ctx, TraceParseError(path, f"a top-level JSON {type(obj).__name__}, not an object",
                                                 line=line))
                continue
            if "jobID" not in obj and "children" in obj:
                try:
                    rows = list(_topology_rows(obj, (), path, line))
                except RecursionError as exc:
                    raise TraceParseError(path, "topology tree nested too deeply", line=line) from exc
                ctx.events_read += len(rows)
                yield from rows
                continue
            try:
                job = _RumenJob(obj, path, line, ctx, seq)
                first = described.get(job.job_id)
                job_rows = list(job.rows()) if first is None else [job.repeated()]
            except TraceParseError as exc:
                skip_record(ctx, exc)
                continue
            yield from job_rows
            if first is None:
                described[job.job_id] = line
            else:
                ctx.notes.append(
                    f"{job.job_id} is described again at line {line}; it is read from its object at line "
                    f"{first} (the later one is kept in events only)"
                )
            seq = job.seq


def _salvage_cut_job(text: str) -> dict[str, Any] | None:
    """A job object the stream cut inside one of its task lists, closed after its last complete task.

    Tasks after the cut, and every field written after it (task lists, and job fields such as
    ``outcome`` that Rumen may write after ``mapTasks``), are absent: unknown.  None when the
    cut is not inside a task list.
    """
    ends: list[int] = []  # where a task object (inside a list inside the job) closes
    depth: list[str] = []
    in_string = escaped = False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "{[":
            depth.append(ch)
        elif ch in "}]":
            if not depth:
                return None
            depth.pop()
            if ch == "}" and depth == ["{", "["]:
                ends.append(i)
    for end in reversed(ends[-64:]):  # the last task that closes into a well-formed job
        try:
            job = json.loads(text[: end + 1] + "]}")
        except (ValueError, RecursionError):
            continue
        return job if isinstance(job, dict) and "jobID" in job else None
    return None


def _is_top_level(value: Any) -> bool:
    """A value that can start a Rumen file's top level: a job object or a topology's root."""
    return isinstance(value, dict) and ("jobID" in value or "children" in value)


def sniff_rumen(head: bytes, path: Path) -> bool:
    """A Rumen job trace starts ``{ "priority"|"jobID"|... :``; a topology ``{"name": ..., "children":``."""
    head = head.removeprefix(b"\xef\xbb\xbf")
    return bool(_SNIFF_JOB.match(head) or _SNIFF_TOPO.match(head))


FORMATS: tuple[Format, ...] = (
    Format(
        name="rumen",
        sniff=sniff_rumen,
        read=read_rumen,
        doc="Rumen JSON job traces (concatenated LoggedJob objects) and Rumen topologies",
        record_tables=("events", "topology"),  # a job's objects are events; a topology's hosts are rows
    ),
)
