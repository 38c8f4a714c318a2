"""HiTune's history CSVs (``MapAttempt``, ``ReduceAttempt``, ``MapTask``, ``ReduceTask``, ``job``):
Hadoop 0.20's job history records as ``attempts``, ``tasks``, ``jobs`` and their ``counters``
(:func:`history_rows`); :mod:`ingest.hitune_csv` has the format.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import orjson

from ingest.base import ReadContext, Row
from ingest.hitune_fields import (
    SOURCE,
    data_rows,
    field_int,
    host_of_tracker,
    job_of,
    required_job_of,
    time_or_none,
)
from ingest.mrcommon import counter_row
from ingest.samples_hitune import malformed_row
from phaseline.hadoop_names import task_type
from phaseline.schemas import CounterScope, TaskType, normalize_status

_TASK_COUNTER = "org.apache.hadoop.mapred.Task$Counter"
_FS = "FileSystemCounters"
#: HiTune's counter columns (Hadoop 0.20 display names) -> (0.20 group, counter name); the store
#: maps the groups to 2.x names (:func:`phaseline.hadoop_names.counter_group`).
COUNTERS: dict[str, tuple[str, str]] = {
    "Map input records": (_TASK_COUNTER, "MAP_INPUT_RECORDS"),
    "Map input bytes": (_TASK_COUNTER, "MAP_INPUT_BYTES"),
    "Map output records": (_TASK_COUNTER, "MAP_OUTPUT_RECORDS"),
    "Map output bytes": (_TASK_COUNTER, "MAP_OUTPUT_BYTES"),
    "Combine input records": (_TASK_COUNTER, "COMBINE_INPUT_RECORDS"),
    "Combine output records": (_TASK_COUNTER, "COMBINE_OUTPUT_RECORDS"),
    "Reduce input groups": (_TASK_COUNTER, "REDUCE_INPUT_GROUPS"),
    "Reduce input records": (_TASK_COUNTER, "REDUCE_INPUT_RECORDS"),
    "Reduce output records": (_TASK_COUNTER, "REDUCE_OUTPUT_RECORDS"),
    "Reduce shuffle bytes": (_TASK_COUNTER, "REDUCE_SHUFFLE_BYTES"),
    "Spilled Records": (_TASK_COUNTER, "SPILLED_RECORDS"),
    "HDFS bytes read": (_FS, "HDFS_BYTES_READ"),
    "HDFS bytes written": (_FS, "HDFS_BYTES_WRITTEN"),
    "Local bytes read": (_FS, "FILE_BYTES_READ"),
    "Local bytes written": (_FS, "FILE_BYTES_WRITTEN"),
}
#: job.csv's job-total counter columns: the FileSystemCounters above, under the store's names.
_JOB_BYTE_COUNTERS = tuple(name for group, name in COUNTERS.values() if group == _FS)
#: A 0.20 setup/cleanup attempt's STATE_STRING -> its task type.
_STATE_TASK_TYPE = {"setup": TaskType.SETUP.value, "cleanup": TaskType.CLEANUP.value}


def history_rows(path: Path, ctx: ReadContext, header: list[str]) -> Iterator[Row]:
    def records(line_no: int, line: str, f: list[str]) -> Iterator[Row]:
        rec = dict(zip(header, f, strict=True))
        try:
            if "TASKID" in rec and "TRACKER_NAME" in rec:  # MapAttempt / ReduceAttempt
                attempt = rec["id"]
                job_id = required_job_of(attempt)
                is_map = "_m_" in attempt
                kind = _STATE_TASK_TYPE.get(rec.get("STATE_STRING", "").lower())
                counters = list(_counter_rows(rec, "attempt", rec["TASKID"], attempt))  # all or none
                row = Row(
                    "attempts",
                    {
                        "job_id": job_id, "task_id": rec["TASKID"], "attempt_id": attempt,
                        "task_type": kind or (TaskType.MAP if is_map else TaskType.REDUCE).value,
                        "status": normalize_status(rec.get("TASK_STATUS")),
                        "start_ms": field_int(rec["START_TIME"]), "finish_ms": field_int(rec["FINISH_TIME"]),
                        "shuffle_finish_ms": field_int(rec.get("SHUFFLE_FINISHED", "")),
                        "sort_finish_ms": field_int(rec.get("SORT_FINISHED", "")),
                        "host": host_of_tracker(rec["TRACKER_NAME"]),
                    },
                )
                yield from counters
                yield row
                return
            if "TOTAL_MAPS" in rec and "JOB_STATUS" in rec:  # job.csv
                totals = [
                    counter_row(rec["id"], CounterScope.JOB_TOTAL.value, _FS, name, value)
                    for name in _JOB_BYTE_COUNTERS
                    if (value := field_int(rec.get(name, ""))) is not None
                ]  # all or none, with the job
                yield from totals
                yield Row(
                    "jobs",
                    {
                        "job_id": rec["id"], "status": normalize_status(rec["JOB_STATUS"]),
                        "submit_ms": field_int(rec["SUBMIT_TIME"]), "launch_ms": field_int(rec["LAUNCH_TIME"]),
                        "finish_ms": field_int(rec["FINISH_TIME"]), "total_maps": field_int(rec["TOTAL_MAPS"]),
                        "total_reduces": field_int(rec["TOTAL_REDUCES"]), "finished_maps": field_int(rec["FINISHED_MAPS"]),
                        "finished_reduces": field_int(rec["FINISHED_REDUCES"]), "hadoop_version": "0.20",
                        "source_format": SOURCE,
                    },
                )
                return
        except (KeyError, ValueError) as exc:
            yield malformed_row(ctx, line_no, f"bad value: {exc}", line)
            return
        ident = rec.get("id", "")
        start = rec.get("START_TIME", "")
        if "TASK_TYPE" in rec and ident.startswith("task_"):  # MapTask / ReduceTask: also a task
            try:
                task = list(_task_rows(rec, ident))  # all or none: a bad value leaves only the event
            except ValueError as exc:
                yield malformed_row(ctx, line_no, f"bad value: {exc}", line)
                return
            yield from task
        yield Row(
            "events",
            {
                "job_id": job_of(ident), "seq": line_no, "event_type": f"hitune:{path.stem}",
                "ts_ms": time_or_none(start), "payload_json": orjson.dumps(rec).decode(),
            },
        )

    yield from data_rows(path, ctx, header, records)


def _counter_rows(rec: dict[str, str], scope: str, task_id: str, attempt_id: str | None) -> Iterator[Row]:
    """The counters among a record's columns (:data:`COUNTERS`; empty ones have no row)."""
    job_id = job_of(task_id)
    if job_id is None:
        return
    for column, (group, name) in COUNTERS.items():
        value = field_int(rec.get(column, ""))
        if value is not None:
            yield counter_row(job_id, scope, group, name, value, task_id=task_id, attempt_id=attempt_id)


def _task_rows(rec: dict[str, str], task_id: str) -> Iterator[Row]:
    """A ``MapTask``/``ReduceTask`` record's ``tasks`` row and task counters."""
    yield from _counter_rows(rec, "task", task_id, None)
    splits = ",".join(s for s in rec.get("SPLITS", "").split(";") if s)
    yield Row(
        "tasks",
        {
            "job_id": required_job_of(task_id), "task_id": task_id, "task_type": task_type(rec["TASK_TYPE"]),
            "status": normalize_status(rec.get("TASK_STATUS")), "start_ms": field_int(rec.get("START_TIME", "")),
            "finish_ms": field_int(rec.get("FINISH_TIME", "")), "splits": splits or None,
        },
    )  # fmt: skip
