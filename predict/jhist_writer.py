"""Write a simulated run as a ``.jhist`` file in Hadoop's own Avro-JSON format.

The file is what Hadoop 2.x/3.x's ``EventWriter`` writes: the line
``Avro-Json``, the writer's schema (``Event.SCHEMA$`` of Hadoop 3.5, kept in
``sim_jhist_schema.json`` beside this module, as printed by the Hadoop jar),
then one JSON-encoded ``Event`` per line, followed by an empty line.  Records
carry every field in schema order; union values are wrapped with their
branch name (``{"string": "NODE_LOCAL"}``), as Avro's JSON encoding requires.
Hadoop's ``JobHistoryParser`` reads the result (tests/predict/test_jhist_writer.py checks
it with the oracle) and so does phaseline's :func:`ingest.jhist.read_jhist`.

This is how phaseline makes arbitrarily large, realistic traces for its
benchmarks: simulate a job (:mod:`predict.simulate`), then write it here.
"""

from __future__ import annotations

import importlib.resources
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote_plus

import orjson

from phaseline.errors import PredictionError
from phaseline.hadoop_names import (
    FILE_INPUT_FORMAT_COUNTER_GROUP,
    FILE_OUTPUT_FORMAT_COUNTER_GROUP,
    TASK_COUNTER_GROUP,
    local_runner_job,
)
from predict.simulate import Attempt, SimRun

__all__ = ["SimTrace", "jhist_filename", "write_jhist"]

_NS = "org.apache.hadoop.mapreduce.jobhistory"
_COUNTERS = f"{_NS}.JhCounters"
#: Hadoop's display names for the task counters the writer may carry.
_DISPLAY = {
    "MAP_INPUT_RECORDS": "Map input records",
    "MAP_OUTPUT_RECORDS": "Map output records",
    "MAP_OUTPUT_BYTES": "Map output bytes",
    "MAP_OUTPUT_MATERIALIZED_BYTES": "Map output materialized bytes",
    "SPILLED_RECORDS": "Spilled Records",
    "REDUCE_SHUFFLE_BYTES": "Reduce shuffle bytes",
    "REDUCE_INPUT_GROUPS": "Reduce input groups",
    "REDUCE_INPUT_RECORDS": "Reduce input records",
    "REDUCE_OUTPUT_RECORDS": "Reduce output records",
    "CPU_MILLISECONDS": "CPU time spent (ms)",
}
#: Order of events that share a millisecond: starts before finishes, tasks around their attempts.
_RANK = {"TASK_STARTED": 0, "ATTEMPT_STARTED": 1, "ATTEMPT_DONE": 2, "TASK_FINISHED": 3}


def schema_text() -> str:
    """The writer's schema line (Hadoop 3.5's ``Event.SCHEMA$``)."""
    return importlib.resources.files("predict").joinpath("sim_jhist_schema.json").read_text("utf-8").strip()


@dataclass(frozen=True, slots=True)
class SimTrace:
    """Identity and counters of a simulated job, to name it in the history file.

    ``map_counters``/``reduce_counters`` are per-task ``TaskCounter`` values
    (e.g. ``{"MAP_INPUT_RECORDS": 1000}``), the same for every task of a type;
    ``map_input_bytes`` is each map's ``FileInputFormatCounter`` ``BYTES_READ``;
    ``map_output_file_bytes`` each map's ``FileOutputFormatCounter`` ``BYTES_WRITTEN``
    (a map-only job's output).
    """

    cluster_ts: int = 1_700_000_000_000
    sequence: int = 1
    job_name: str = "phaseline simulated job"
    user: str = "phaseline"
    queue: str = "default"
    submit_ms: int = 1_700_000_100_000
    setup_ms: int = 1_000  # submission to launch
    map_counters: Mapping[str, int] = field(default_factory=dict)
    reduce_counters: Mapping[str, int] = field(default_factory=dict)
    map_input_bytes: int | None = None
    map_output_file_bytes: int | None = None
    #: the job tracker's identifier in the ids where it is not ``cluster_ts``: LocalJobRunner's is
    #: ``local`` and a number (``job_local42_0001``)
    tracker: str | None = None

    @property
    def job_id(self) -> str:
        return f"job_{self.tracker or self.cluster_ts}_{self.sequence:04d}"

    def task_id(self, kind: str, index: int) -> str:
        return f"task_{self.tracker or self.cluster_ts}_{self.sequence:04d}_{kind}_{index:06d}"


def _name_field(text: str) -> str:
    """One field of a done-file name as Hadoop's ``FileNameIndexUtils`` writes it: ``-`` (the
    delimiter) as ``%2D``, the rest as ``URLEncoder`` encodes it (a blank ``+``; ``/``, ``+``, ``%``
    and every other character but letters, digits and ``.*_`` as ``%XX`` of its UTF-8 bytes).

    >>> _name_field("grep a/b-c+d")
    'grep+a%2Fb%2Dc%2Bd'
    """
    return "%2D".join(quote_plus(part, safe="*").replace("~", "%7E") for part in text.split("-"))


def jhist_filename(trace: SimTrace, run: SimRun, n_maps: int, n_reduces: int) -> str:
    """Hadoop's done-file name: ``job_..-submit-user-name-finish-maps-reduces-SUCCEEDED-queue-launch.jhist``.

    The user, job and queue names are encoded as Hadoop encodes them (:func:`_name_field`): written
    raw, a ``/`` in a job name made a path, a ``-`` in a user or queue name split the fields.
    """
    launch = trace.submit_ms + trace.setup_ms
    finish = launch + round(run.makespan_ms)
    user, name, queue = (_name_field(v) for v in (trace.user, trace.job_name, trace.queue))
    return (
        f"{trace.job_id}-{trace.submit_ms}-{user}-{name}-{finish}-{n_maps}-{n_reduces}"
        f"-SUCCEEDED-{queue}-{launch}.jhist"
    )


def _counters(
    name: str, values: Mapping[str, int], input_bytes: int | None = None, output_bytes: int | None = None
) -> dict[str, Any]:
    counts = [{"name": k, "displayName": _DISPLAY.get(k, k), "value": int(v)} for k, v in values.items()]
    groups = (
        [{"name": TASK_COUNTER_GROUP, "displayName": "Map-Reduce Framework", "counts": counts}]
        if counts
        else []
    )
    if input_bytes is not None:
        read = [{"name": "BYTES_READ", "displayName": "Bytes Read", "value": int(input_bytes)}]
        groups.append(
            {"name": FILE_INPUT_FORMAT_COUNTER_GROUP, "displayName": "File Input Format Counters ", "counts": read}
        )
    if output_bytes is not None:
        written = [{"name": "BYTES_WRITTEN", "displayName": "Bytes Written", "value": int(output_bytes)}]
        groups.append(
            {"name": FILE_OUTPUT_FORMAT_COUNTER_GROUP, "displayName": "File Output Format Counters ", "counts": written}
        )
    return {"name": name, "groups": groups}


def _event(kind: str, record: str, payload: dict[str, Any]) -> bytes:
    return orjson.dumps({"type": kind, "event": {f"{_NS}.{record}": payload}})


def _host(node: int) -> str:
    return f"sim-node-{node:04d}"


def _attempt_events(a: Attempt, trace: SimTrace, t0: int, container: int) -> Iterator[tuple[int, int, bytes]]:
    kind = "m" if a.task_type == "MAP" else "r"
    prefix = "MAP" if a.task_type == "MAP" else "REDUCE"
    task = trace.task_id(kind, a.task)
    attempt = f"attempt_{task[5:]}_{a.attempt}"
    start, end = t0 + round(a.start_ms), t0 + round(a.end_ms)
    yield (
        start,
        _RANK["ATTEMPT_STARTED"],
        _event(
            f"{prefix}_ATTEMPT_STARTED",
            "TaskAttemptStarted",
            {
                "taskid": task,
                "taskType": a.task_type,
                "attemptId": attempt,
                "startTime": start,
                "trackerName": _host(a.node),
                "httpPort": 8042,
                "shufflePort": 13562,
                "containerId": f"container_{trace.cluster_ts}_{trace.sequence:04d}_01_{container:06d}",
                "locality": {"string": "NODE_LOCAL" if a.task_type == "MAP" else "OFF_SWITCH"},
                "avataar": {"string": "VIRGIN"},
            },
        ),
    )
    counters = trace.map_counters if a.task_type == "MAP" else trace.reduce_counters
    in_bytes = trace.map_input_bytes if a.task_type == "MAP" else None
    out_bytes = trace.map_output_file_bytes if a.task_type == "MAP" else None
    usage: dict[str, Any] = {"clockSplits": [], "cpuUsages": [], "vMemKbytes": [], "physMemKbytes": []}
    common = {"hostname": _host(a.node), "port": 45454, "rackname": "/default-rack"}
    if not a.succeeded:
        body = {"taskid": task, "taskType": a.task_type, "attemptId": attempt, "finishTime": end, **common}
        body |= {"status": "FAILED", "error": "simulated attempt failure", "counters": None, **usage}
        yield (
            end,
            _RANK["ATTEMPT_DONE"],
            _event(f"{prefix}_ATTEMPT_FAILED", "TaskAttemptUnsuccessfulCompletion", body),
        )
        return
    head = {"taskid": task, "attemptId": attempt, "taskType": a.task_type, "taskStatus": "SUCCEEDED"}
    if a.task_type == "MAP":
        times = {"mapFinishTime": end, "finishTime": end}
        record, state = "MapAttemptFinished", "map"
    else:
        shuffle = t0 + round(a.shuffle_end_ms if a.shuffle_end_ms is not None else a.start_ms)
        times = {"shuffleFinishTime": shuffle, "sortFinishTime": shuffle, "finishTime": end}
        record, state = "ReduceAttemptFinished", "reduce > reduce"
    body = {
        **head,
        **times,
        **common,
        "state": state,
        "counters": _counters("COUNTERS", counters, in_bytes, out_bytes),
        **usage,
    }
    yield end, _RANK["ATTEMPT_DONE"], _event(f"{prefix}_ATTEMPT_FINISHED", record, body)
    yield (
        end,
        _RANK["TASK_FINISHED"],
        _event(
            "TASK_FINISHED",
            "TaskFinished",
            {
                "taskid": task,
                "taskType": a.task_type,
                "finishTime": end,
                "status": "SUCCEEDED",
                "counters": _counters("COUNTERS", counters, in_bytes, out_bytes),
                "successfulAttemptId": {"string": attempt},
            },
        ),
    )


def write_jhist(
    run: SimRun, path: str | Path, *, n_maps: int, n_reduces: int, trace: SimTrace | None = None
) -> Path:
    """Write the recorded attempts of ``run`` (``simulate_once(..., record=True)``) as a ``.jhist``.

    ``path`` may be a directory: the file then gets Hadoop's done-file name
    (:func:`jhist_filename`).  Returns the file written.
    """
    trace = trace or SimTrace()
    if not run.attempts:
        raise PredictionError("the simulated run recorded no attempts; simulate with record=True")
    done = {(a.task_type, a.task) for a in run.attempts if a.succeeded}
    if len(done) != n_maps + n_reduces:
        raise PredictionError(
            f"the run finished {len(done)} tasks, expected {n_maps} maps + {n_reduces} reduces"
        )
    out = Path(path)
    if out.is_dir():
        out = out / jhist_filename(trace, run, n_maps, n_reduces)
    t0 = trace.submit_ms + trace.setup_ms
    with out.open("wb") as f:
        f.write(b"Avro-Json\n" + schema_text().encode() + b"\n")
        head = _job_head(trace, t0, n_maps, n_reduces)
        for line in (*head, *_task_events(run, trace, t0), _job_finished(run, trace, t0, done)):
            f.write(line + b"\n")
    return out


def _task_events(run: SimRun, trace: SimTrace, t0: int) -> list[bytes]:
    """Every task's start and every attempt's events, in time order."""
    timed: list[tuple[int, int, bytes]] = []
    first_start: dict[tuple[str, int], float] = {}
    for a in run.attempts:
        key = (a.task_type, a.task)
        first_start[key] = min(first_start.get(key, a.start_ms), a.start_ms)
    for (kind, index), start in first_start.items():
        tid = trace.task_id("m" if kind == "MAP" else "r", index)
        timed.append(
            (
                t0 + round(start),
                _RANK["TASK_STARTED"],
                _event(
                    "TASK_STARTED",
                    "TaskStarted",
                    {"taskid": tid, "taskType": kind, "startTime": t0 + round(start), "splitLocations": ""},
                ),
            )
        )
    for i, a in enumerate(run.attempts):
        timed.extend(_attempt_events(a, trace, t0, i + 2))
    timed.sort(key=lambda e: (e[0], e[1]))
    return [e[2] for e in timed]


def _job_head(trace: SimTrace, t0: int, n_maps: int, n_reduces: int) -> list[bytes]:
    """The job's events before its tasks': the AM's start (none in LocalJobRunner's, which has no AM),
    submission, initialisation, launch time."""
    jid = trace.job_id
    head = [
        _event(
            "AM_STARTED",
            "AMStarted",
            {
                "applicationAttemptId": f"appattempt_{trace.cluster_ts}_{trace.sequence:04d}_000001",
                "startTime": trace.submit_ms + 1,
                "containerId": f"container_{trace.cluster_ts}_{trace.sequence:04d}_01_000001",
                "nodeManagerHost": _host(0),
                "nodeManagerPort": 45454,
                "nodeManagerHttpPort": 8042,
            },
        ),
        _event(
            "JOB_SUBMITTED",
            "JobSubmitted",
            {
                "jobid": jid,
                "jobName": trace.job_name,
                "userName": trace.user,
                "submitTime": trace.submit_ms,
                "jobConfPath": f"file:/tmp/phaseline-sim/{jid}/job.xml",
                "acls": {},
                "jobQueueName": trace.queue,
                **{k: {"string": ""} for k in ("workflowId", "workflowName", "workflowNodeName")},
                **{k: {"string": ""} for k in ("workflowAdjacencies", "workflowTags")},
            },
        ),
        _event(
            "JOB_INITED",
            "JobInited",
            {
                "jobid": jid,
                "launchTime": t0,
                "totalMaps": n_maps,
                "totalReduces": n_reduces,
                "jobStatus": "INITED",
                "uberized": False,
            },
        ),
        _event(
            "JOB_INFO_CHANGED",
            "JobInfoChange",
            {"jobid": jid, "submitTime": trace.submit_ms, "launchTime": t0},
        ),
    ]
    return head[1:] if local_runner_job(jid) else head


def _job_finished(run: SimRun, trace: SimTrace, t0: int, done: set[tuple[str, int]]) -> bytes:
    """The JOB_FINISHED event: finished and failed tasks, and the job's counters (its maps' and reduces')."""
    maps_ok = sum(1 for k, _ in done if k == "MAP")
    failed = [a for a in run.attempts if not a.succeeded]
    total = {k: v * maps_ok for k, v in trace.map_counters.items()}  # the job's: its maps' plus its reduces'
    for k, v in trace.reduce_counters.items():
        total[k] = total.get(k, 0) + v * (len(done) - maps_ok)
    # Hadoop's JobFinished counts failed tasks (JobImpl.taskFailed), not failed attempts
    failed_tasks = {(a.task_type, a.task) for a in failed} - done
    job_in = trace.map_input_bytes * maps_ok if trace.map_input_bytes is not None else None
    job_out = trace.map_output_file_bytes * maps_ok if trace.map_output_file_bytes is not None else None
    return _event(
        "JOB_FINISHED",
        "JobFinished",
        {
            "jobid": trace.job_id,
            "finishTime": t0 + round(run.makespan_ms),
            "finishedMaps": maps_ok,
            "finishedReduces": len(done) - maps_ok,
            "failedMaps": sum(1 for kind, _ in failed_tasks if kind == "MAP"),
            "failedReduces": sum(1 for kind, _ in failed_tasks if kind == "REDUCE"),
            "totalCounters": _counters("TOTAL_COUNTERS", total, job_in, job_out),
            "mapCounters": _counters(
                "MAP_COUNTERS", {k: v * maps_ok for k, v in trace.map_counters.items()}, job_in, job_out
            ),
            "reduceCounters": _counters(
                "REDUCE_COUNTERS", {k: v * (len(done) - maps_ok) for k, v in trace.reduce_counters.items()}
            ),
            "killedMaps": 0,
            "killedReduces": 0,
        },
    )
