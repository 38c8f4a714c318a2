"""Rumen's values as the store's rows: a ``LoggedJob`` object (:class:`RumenJob`: the job, its tasks,
attempts, counters, conf and events) and a topology tree (:func:`topology_rows`).  How Rumen's fields
map to the store is in :mod:`ingest.rumen`'s docstring.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingest.base import ReadContext, Row, skip_record
from ingest.mrcommon import (
    INT64_MAX,
    INT64_MIN,
    counter_row,
    event_row,
    unescape_v1,
)
from phaseline.errors import TraceParseError
from phaseline.hadoop_names import (
    FILE_SYSTEM_COUNTER_GROUP,
    TASK_COUNTER_GROUP,
    split_rack_host,
    task_type_lenient,
)
from phaseline.schemas import CounterScope, Status, normalize_status

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
TASK_LISTS = ("mapTasks", "reduceTasks", "otherTasks")


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


class RumenJob:
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
        lists = [(name, _list(o.get(name), p, f"{self.job_id}.{name}", ln)) for name in TASK_LISTS]
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
        job_payload = {k: v for k, v in o.items() if k not in TASK_LISTS}
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


def topology_rows(node: Any, racks: tuple[str, ...], path: Path, line: int) -> Iterator[Row]:
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
        yield from topology_rows(child, (*racks, name or ""), path, line)
