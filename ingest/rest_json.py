"""MapReduce History Server REST responses (``/ws/v1/history/mapreduce/...``, JSON) -> the store.

Each response is one JSON object with a single root key (Hadoop's
``HistoryServerRest`` documentation):

=============================  ==========================================  ==========
root                           body                                        lands in
=============================  ==========================================  ==========
``job``                        one job object                              jobs
``jobs``                       ``{"job": [job, ...]}`` (a subset of fields) jobs
``task`` / ``tasks``           a task / ``{"task": [...]}``                tasks
``taskAttempt`` / ``taskAttempts``  an attempt / ``{"taskAttempt": [...]}`` attempts
``jobCounters``                ``{"id", "counterGroup": [{"counterGroupName", "counter": [{"name",
                               "totalCounterValue", "mapCounterValue", "reduceCounterValue"}]}]}``
                                                                           counters (job_total/map/reduce)
``jobTaskCounters``            ``{"id", "taskCounterGroup": [... {"name", "value"}]}``  counters (task)
``jobTaskAttemptCounters``     ``{"id", "taskAttemptCounterGroup": [...]}`` counters (attempt)
``conf``                       ``{"path", "property": [{"name", "value", "source": [...]}]}``  conf
``jobAttempts``                AM attempts (no table of their own)         events only
=============================  ==========================================  ==========

Times are ms since the epoch; ``0`` and ``-1`` (never started / not finished)
become null.  Task and attempt responses do not carry the job id: it comes
from the task/attempt id (``task_<cluster>_<seq>_m_<n>`` -> ``job_<cluster>_<seq>``),
else ``ctx.job_id_hint``.  Attempt hosts come from ``nodeHttpAddress``
(``host:port``); ``mergeFinishTime`` (the reduce's merge = 1.x's sort phase)
lands in ``sort_finish_ms``.  Several responses concatenated in one file are read
one after another.  Every response is also one ``events`` row.

Bad input: a response that cannot be read (malformed JSON, an unknown root, a
job that cannot be told), and inside a response a job, task, attempt, counter
or conf property whose fields cannot be read (no id, a time or value that is no
64-bit integer), is skipped and remembered in ``ctx.skipped`` with the
response's line (:func:`~ingest.base.skip_record`): the file lands as partial,
everything else in it kept.  After malformed JSON, reading resumes at the next
line that starts a response.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from ingest.base import ReadContext, Row, skip_record
from ingest.formats import Format
from ingest.json_stream import iter_json_objects
from ingest.mrcommon import INT64_MAX, INT64_MIN, counter_row, event_row, parse_int64
from ingest.opening import open_text
from phaseline.errors import TraceParseError
from phaseline.hadoop_names import job_of_attempt, job_of_task, task_of_attempt, task_type_lenient
from phaseline.schemas import CounterScope, normalize_status

ROOTS = (
    "job", "jobs", "task", "tasks", "taskAttempt", "taskAttempts", "jobCounters",
    "jobTaskCounters", "jobTaskAttemptCounters", "conf", "jobAttempts",
)  # fmt: skip
_T = TypeVar("_T")
_SNIFF = re.compile(rb'^\s*\{\s*"(' + b"|".join(r.encode() for r in ROOTS) + rb')"\s*:\s*[\{\[n]')


class _Response:
    """One decoded response and where it came from (for error messages)."""

    def __init__(self, path: Path, line: int, ctx: ReadContext) -> None:
        self.path, self.line, self.ctx = path, line, ctx

    def fail(self, what: str) -> TraceParseError:
        return TraceParseError(self.path, what, line=self.line)

    def each(self, items: Iterable[_T], read: Callable[[_T], Iterable[Row]]) -> Iterator[Row]:
        """The rows ``read`` makes of each item; an item it cannot read is skipped (``ctx.skipped``)."""
        for item in items:
            try:
                rows = list(read(item))
            except TraceParseError as exc:
                skip_record(self.ctx, exc)
                continue
            yield from rows

    def obj(self, value: Any, what: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(f"{what} is a JSON {type(value).__name__}, not an object")
        return value

    def items(self, value: Any, key: str, what: str) -> list[Any]:
        """``{key: [..]}`` or ``{key: {..}}`` (one element) or null -> a list."""
        if value is None:
            return []
        inner = self.obj(value, what).get(key)
        if inner is None:
            return []
        if isinstance(inner, dict):
            return [inner]
        if not isinstance(inner, list):
            raise self.fail(f"{what}.{key} is a JSON {type(inner).__name__}, not an array")
        return inner

    def time(self, value: Any, what: str) -> int | None:
        ms = self.int(value, what)
        return None if ms is None or ms <= 0 else ms

    def int(self, value: Any, what: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool):
            raise self.fail(f"{what} is a boolean, not a number")
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, str) and (number := parse_int64(value.strip())) is not None:
            value = number
        if not isinstance(value, int) or not INT64_MIN <= value <= INT64_MAX:
            raise self.fail(f"{what} = {str(value)[:40]!r} is not a 64-bit integer")
        return value

    def id(self, value: Any, what: str) -> str:
        if not isinstance(value, str) or not value.strip():
            raise self.fail(f"{what} has no id")
        return value.strip()

    def job_for(self, job_id: str | None, what: str) -> str:
        found = job_id or self.ctx.job_id_hint
        if not found:
            raise self.fail(
                f"cannot tell the job of {what}: its id has no job part and no job id hint was given"
            )
        return found


def _str(value: Any) -> str | None:
    if value is None:
        return None
    text = str(value)
    return text or None


def _job(r: _Response, j: Any) -> Row:
    j = r.obj(j, "job")
    job_id = r.id(j.get("id"), "a job")
    uber = j.get("uberized")
    return Row(
        "jobs",
        {
            "job_id": job_id,
            "name": _str(j.get("name")),
            "user": _str(j.get("user")),
            "queue": _str(j.get("queue")),
            "status": normalize_status(_str(j.get("state"))),
            "submit_ms": r.time(j.get("submitTime"), f"{job_id}.submitTime"),
            "launch_ms": r.time(j.get("startTime"), f"{job_id}.startTime"),
            "finish_ms": r.time(j.get("finishTime"), f"{job_id}.finishTime"),
            "total_maps": r.int(j.get("mapsTotal"), f"{job_id}.mapsTotal"),
            "total_reduces": r.int(j.get("reducesTotal"), f"{job_id}.reducesTotal"),
            "finished_maps": r.int(j.get("mapsCompleted"), f"{job_id}.mapsCompleted"),
            "finished_reduces": r.int(j.get("reducesCompleted"), f"{job_id}.reducesCompleted"),
            "failed_maps": None,  # REST reports failed *attempts*; they stay in events
            "failed_reduces": None,
            "killed_maps": None,
            "killed_reduces": None,
            "uberized": uber if isinstance(uber, bool) else None,
            "diagnostics": _str(j.get("diagnostics")),
            "hadoop_version": None,
            "source_format": "rest_json",
        },
    )


def _task(r: _Response, t: Any) -> Row:
    t = r.obj(t, "task")
    task_id = r.id(t.get("id"), "a task")
    return Row(
        "tasks",
        {
            "job_id": r.job_for(job_of_task(task_id), task_id),
            "task_id": task_id,
            "task_type": task_type_lenient(_str(t.get("type"))),
            "status": normalize_status(_str(t.get("state"))),
            "start_ms": r.time(t.get("startTime"), f"{task_id}.startTime"),
            "finish_ms": r.time(t.get("finishTime"), f"{task_id}.finishTime"),
            "successful_attempt_id": _str(t.get("successfulAttempt")),
            "splits": None,
            "error": None,
        },
    )


def _attempt(r: _Response, a: Any) -> Row:
    a = r.obj(a, "taskAttempt")
    attempt_id = r.id(a.get("id"), "a task attempt")
    node = _str(a.get("nodeHttpAddress"))
    host, port = None, None
    if node:
        host, _, port_text = node.rpartition(":") if ":" in node else (node, "", "")
        port = r.int(port_text, f"{attempt_id}.nodeHttpAddress port") if port_text else None
    return Row(
        "attempts",
        {
            "job_id": r.job_for(job_of_attempt(attempt_id), attempt_id),
            "task_id": task_of_attempt(attempt_id),
            "attempt_id": attempt_id,
            "task_type": task_type_lenient(_str(a.get("type"))),
            "status": normalize_status(_str(a.get("state"))),
            "start_ms": r.time(a.get("startTime"), f"{attempt_id}.startTime"),
            "finish_ms": r.time(a.get("finishTime"), f"{attempt_id}.finishTime"),
            "map_finish_ms": None,
            "shuffle_finish_ms": r.time(a.get("shuffleFinishTime"), f"{attempt_id}.shuffleFinishTime"),
            "sort_finish_ms": r.time(a.get("mergeFinishTime"), f"{attempt_id}.mergeFinishTime"),
            "host": host or None,
            "rack": _str(a.get("rack")),
            "container_id": _str(a.get("assignedContainerId")),
            "error": _str(a.get("diagnostics")),
            "locality": None,
            "http_port": port,
        },
    )


def _counter_groups(
    r: _Response, body: dict[str, Any], group_key: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    groups = body.get(group_key)
    if groups is None:  # the docs spell it taskcounterGroup in a table and taskCounterGroup in examples
        groups = next((v for k, v in body.items() if k.lower() == group_key.lower()), None)
    if groups is None:
        return
    for g in groups if isinstance(groups, list) else [groups]:
        name = g.get("counterGroupName") if isinstance(g, dict) else None
        if not isinstance(name, str):
            skip_record(r.ctx, r.fail(f"a {group_key} has no counterGroupName"))
            continue
        counters = g.get("counter") or []
        for c in counters if isinstance(counters, list) else [counters]:
            if not isinstance(c, dict) or not isinstance(c.get("name"), str):
                skip_record(r.ctx, r.fail(f"a counter of {name} has no name"))
                continue
            yield name, c


def _counter_values(r: _Response, body: dict[str, Any], group_key: str) -> Iterator[tuple[str, dict[str, Any], int]]:
    """``(group, counter, value)`` of a task's or attempt's counters; one whose value cannot be read is skipped."""
    for group, c in _counter_groups(r, body, group_key):
        try:
            value = r.int(c.get("value"), f"{group}.{c['name']}")
        except TraceParseError as exc:
            skip_record(r.ctx, exc)
            continue
        if value is not None:
            yield group, c, value


def _job_counters(r: _Response, body: Any) -> Iterator[Row]:
    body = r.obj(body, "jobCounters")
    job_id = r.job_for(_str(body.get("id")), "jobCounters")
    scopes = (
        ("totalCounterValue", CounterScope.JOB_TOTAL),
        ("mapCounterValue", CounterScope.JOB_MAP),
        ("reduceCounterValue", CounterScope.JOB_REDUCE),
    )

    def rows(entry: tuple[str, dict[str, Any]]) -> Iterator[Row]:
        group, c = entry
        for key, scope in scopes:
            value = r.int(c.get(key), f"{group}.{c['name']}.{key}")
            if value is not None:
                yield counter_row(job_id, scope.value, group, c["name"], value)

    yield from r.each(_counter_groups(r, body, "counterGroup"), rows)


def _task_counters(r: _Response, body: Any) -> Iterator[Row]:
    body = r.obj(body, "jobTaskCounters")
    task_id = r.id(body.get("id"), "jobTaskCounters")
    job_id = r.job_for(job_of_task(task_id), task_id)
    for group, c, value in _counter_values(r, body, "taskCounterGroup"):
        yield counter_row(job_id, CounterScope.TASK.value, group, c["name"], value, task_id=task_id)


def _attempt_counters(r: _Response, body: Any) -> Iterator[Row]:
    body = r.obj(body, "jobTaskAttemptCounters")
    attempt_id = r.id(body.get("id"), "jobTaskAttemptCounters (the response needs its attempt id)")
    job_id = r.job_for(job_of_attempt(attempt_id), attempt_id)
    task_id = task_of_attempt(attempt_id)
    for group, c, value in _counter_values(r, body, "taskAttemptCounterGroup"):
        yield counter_row(
            job_id, CounterScope.ATTEMPT.value, group, c["name"], value, task_id=task_id, attempt_id=attempt_id
        )


_JOB_IN_PATH = re.compile(r"job_\d+_\d+")


def _conf(r: _Response, body: Any) -> Iterator[Row]:
    body = r.obj(body, "conf")
    conf_path = _str(body.get("path")) or ""
    m = _JOB_IN_PATH.search(conf_path)
    job_id = r.job_for(m.group(0) if m else None, "a conf response (its path names no job)")

    def row(p: Any) -> Iterator[Row]:
        p = r.obj(p, "conf.property")
        name = p.get("name")
        if not isinstance(name, str) or not name:
            raise r.fail("a conf property has no name")
        source = p.get("source")
        if isinstance(source, list):
            source = ", ".join(str(s) for s in source)
        yield Row("conf", {"job_id": job_id, "key": name, "value": _str(p.get("value")), "source": _str(source)})

    yield from r.each(r.items(body, "property", "conf"), row)


def _rows(r: _Response, root: str, body: Any) -> Iterator[Row]:
    single: dict[str, Callable[[_Response, Any], Row]] = {"job": _job, "task": _task, "taskAttempt": _attempt}
    many = {"jobs": ("job", _job), "tasks": ("task", _task), "taskAttempts": ("taskAttempt", _attempt)}
    if root in single:
        yield single[root](r, body)
    elif root in many:
        key, make = many[root]
        yield from r.each(r.items(body, key, root), lambda item: [make(r, item)])
    elif root == "jobCounters":
        yield from _job_counters(r, body)
    elif root == "jobTaskCounters":
        yield from _task_counters(r, body)
    elif root == "jobTaskAttemptCounters":
        yield from _attempt_counters(r, body)
    elif root == "conf":
        yield from _conf(r, body)


def read_rest_json(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Read History Server REST JSON responses (one or several concatenated) into the store.

    What cannot be read is skipped (module docstring); past 100 such records the
    file is given up.

    Raises
    ------
    TraceParseError
        More than 100 unreadable records (the first named).
    TraceTruncatedError
        The file ends inside a response.
    """
    seq = 0
    with open_text(path, ctx) as fh:  # a gzip stream cut short ends at the cut (ctx.cut)
        for line, doc in iter_json_objects(fh, path, ctx, _is_response):
            r = _Response(path, line, ctx)
            try:
                if not _is_response(doc):
                    keys = sorted(doc)[:5] if isinstance(doc, dict) else f"none (a JSON {type(doc).__name__})"
                    raise r.fail(f"not a History Server response: root keys {keys}, expected one of {ROOTS}")
                ((root, body),) = doc.items()
                rows = list(_rows(r, root, body))
            except TraceParseError as exc:
                skip_record(ctx, exc)
                continue
            job_ids = {row.as_dict()["job_id"] for row in rows}
            ctx.events_read += 1
            yield from rows
            yield event_row(
                job_ids.pop() if len(job_ids) == 1 else None,
                seq,
                f"rest:{root}",
                None,
                {"line": line, root: body},
            )
            seq += 1


def _is_response(value: Any) -> bool:
    """``{"<known root>": ...}``: a History Server response."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in ROOTS


def sniff_rest_json(head: bytes, path: Path) -> bool:
    """A JSON object whose first key is a History Server response root (``job``, ``tasks``...)."""
    return _SNIFF.match(head) is not None  # (read_head reads past a byte-order mark)


FORMATS: tuple[Format, ...] = (
    Format(
        name="rest_json",
        sniff=sniff_rest_json,
        read=read_rest_json,
        doc="MapReduce History Server REST API JSON responses (job, jobs, tasks, attempts, counters, conf)",
    ),
)
