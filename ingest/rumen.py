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
  (:data:`ingest.rumen_rows.ATTEMPT_COUNTERS`).  Task-level ``inputBytes``... are Rumen's own
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
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingest.base import ReadContext, Row, skip_record
from ingest.formats import Format
from ingest.json_stream import iter_json_objects
from ingest.opening import open_text
from ingest.rumen_rows import RumenJob, topology_rows
from phaseline.errors import TraceParseError

_SNIFF_JOB = re.compile(rb'^\s*\{\s*"(priority|jobID|user|jobName|submitTime)"\s*:')
_SNIFF_TOPO = re.compile(rb'^\s*\{\s*"name"\s*:\s*"[^"]*"\s*,\s*"children"\s*:')


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
                    rows = list(topology_rows(obj, (), path, line))
                except RecursionError as exc:
                    raise TraceParseError(path, "topology tree nested too deeply", line=line) from exc
                ctx.events_read += len(rows)
                yield from rows
                continue
            try:
                job = RumenJob(obj, path, line, ctx, seq)
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
