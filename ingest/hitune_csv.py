"""HiTune's processed CSV reports (Intel HiTune ``visual_report`` input files).

One real run ships in ``fixtures/intel-hitune/visual_report_example`` (``sorter``,
640 maps / 32 reduces on 8 hosts).  Each CSV has a header line; fields are
*unquoted* even when they contain quotes (``"main"``, `` cluster="chukwa"``) and
keep Hadoop 1.x history escapes (``\\.``, ``\\$``), so lines are split on commas
without CSV quoting and values are unescaped and stripped here.

What lands where:

* ``instruments_map.csv`` / ``instruments_red.csv``: HiTune's own dataflow
  breakdown, one row per (attempt, vertex, thread, breakdown item) with the
  vertex instance's ``phase_start``/``phase_end``/``phase_count`` and a
  ``breakdown_count`` by function (hotspot method) or by thread state.  Each row
  lands in ``vertex_breakdown`` (an exact duplicate row, which the files contain,
  in ``events`` as ``duplicate``); each (attempt, vertex, thread) also gives one
  ``vertex_instances`` row: samples = ``phase_count``, busy = its RUNNABLE
  count, idle = its BLOCKED + WAITING + TIME_WAITING counts.  HiTune's phase
  names become the vertex ids of ``specs/hadoop-2.spec`` (:data:`VERTEX_OF`).
* ``cpu.csv`` (``sar -u``) and the Hadoop metrics files (``jvmmetrics``,
  ``tasktrackermetric``, ``jobtrackermetric``, ``namenodemetric``): one
  ``system_samples`` row per numeric field.
* ``MapAttempt.csv`` / ``ReduceAttempt.csv``: ``attempts`` (a setup or cleanup attempt,
  which HiTune files with the maps, by its ``STATE_STRING``: these files lost 0.20's
  ``TASK_TYPE``) and their counter columns as attempt ``counters`` (HiTune keeps
  Hadoop 0.20's display names: :data:`COUNTERS` gives the store's names); ``job.csv``: ``jobs``
  and its byte counters (``HDFS_BYTES_READ``...) as ``job_total`` ``counters``.
* ``MapTask.csv`` / ``ReduceTask.csv``: ``events``, one per row, and from each row a
  ``tasks`` row (its ``TASK_TYPE``) and task ``counters``.
* Anything else with a HiTune/Chukwa header: ``events``, one per row.

A row with the wrong number of fields, a non-numeric count, a metric that is
no finite number (``nan``, ``inf``, ``1e999``: no measurement) or an attempt or
task id that names no job (every row of those tables belongs to one) is kept in
``events`` as ``malformed`` and named (file and line) in the ingest notes; the
rest of the file lands.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from ingest.base import ReadContext, Row, iter_lines
from ingest.formats import Format
from ingest.mrcommon import INT64_MAX, counter_row, int64
from ingest.samples_hitune import malformed_row, normalize_state
from phaseline.hadoop_names import task_type
from phaseline.schemas import CounterScope, TaskType, ThreadState, normalize_status

SOURCE = "hitune_csv"
VERTEX_OF = {
    "Mapphase": "map",
    "SpillThread": "spill",
    "Copier": "copier",
    "MemMerge": "inmem_merge",
    "FSMerge": "ondisk_merge",
    "Shuffle": "shuffle",
    "Sort": "sort",
    "Reduce": "reduce",
}
INSTRUMENT_HEADER = "phase_end,host,phase_count,breakdown_count,phase_start,phase_name"
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
METRIC_CATEGORIES = {"cpu": "sar"}
_ESCAPE = re.compile(r"\\(.)")
_SAR_INTERVAL = re.compile(r"sar\s+-\w+\s+(\d{1,9})\b")
_IDLE_STATES = frozenset({ThreadState.BLOCKED, ThreadState.WAITING, ThreadState.TIMED_WAITING})
_SKIP_METRIC_FIELDS = frozenset({"Timestamp", "capp", "category", "csource", "ctags", "hostName", "processName"})


def clean(value: str) -> str:
    """Strip spaces and surrounding quotes and undo Hadoop 1.x escapes.

    >>> clean(' "main"')
    'main'
    >>> clean('org.apache.hadoop.mapred.ReduceTask\\\\$ReduceCopier')
    'org.apache.hadoop.mapred.ReduceTask$ReduceCopier'
    """
    text = value.strip()
    if len(text) >= 2 and text[0] == text[-1] == '"':
        text = text[1:-1]
    return _ESCAPE.sub(r"\1", text)


@dataclass(slots=True)
class _Instance:
    job_id: str
    attempt_id: str
    host: str
    thread_id: int
    thread_name: str
    vertex: str
    start_ms: int
    end_ms: int
    samples: int
    states: dict[str, int] = field(default_factory=dict)


_RowsOf = Callable[[int, str, list[str]], Iterator[Row]]  # (line number, line, cleaned fields) -> rows


def _int(text: str) -> int | None:
    """An integer field (empty: None); ``ValueError`` for one that is no integer or past 64 bits."""
    t = clean(text)
    return int64(int(t), repr(t[:40])) if t else None


def _required_int(text: str) -> int:
    """A field that must hold an integer that fits 64 bits (``ValueError`` otherwise)."""
    return int64(int(text), repr(text[:40]))


def _time_or_none(text: str) -> int | None:
    """A record's time for its event row, or None when it is none (empty, not digits, past 64 bits)."""
    try:
        return _int(text)
    except ValueError:
        return None


def _float(text: str) -> float | None:
    """A metric field's number, or None for a field that holds none (empty, text); ``ValueError``
    for one that is not finite (``nan``, ``inf``, ``1e999``): no measurement, so a corrupt row."""
    t = clean(text)
    try:
        number = float(t) if t else None
    except ValueError:
        return None
    if number is not None and not math.isfinite(number):
        raise ValueError(f"{t[:40]!r} is not a finite number")
    return number


def _host_of_tracker(tracker: str) -> str | None:
    # tracker_sr216:localhost.localdomain/127.0.0.1:43445 -> sr216
    name = clean(tracker)
    return name.removeprefix("tracker_").split(":")[0] or None


def _data_rows(path: Path, ctx: ReadContext, header: list[str], rows_of: _RowsOf) -> Iterator[Row]:
    """The rows ``rows_of`` makes of each data line's cleaned fields (lines after the header).

    A line with another number of fields than the header is kept as ``malformed``.
    """
    for line_no, line in iter_lines(path, ctx):
        if line_no == 1 or not line.strip():
            continue
        ctx.events_read += 1
        f = line.split(",")
        if len(f) != len(header):
            yield malformed_row(ctx, line_no, f"expected {len(header)} fields, found {len(f)}", line)
            continue
        yield from rows_of(line_no, line, [clean(x) for x in f])


def _instruments(path: Path, ctx: ReadContext, header: list[str]) -> Iterator[Row]:
    idx = {name: i for i, name in enumerate(header)}
    groups: dict[tuple[str, str, int], _Instance] = {}
    seen: set[tuple[str, ...]] = set()

    def breakdown(line_no: int, line: str, f: list[str]) -> Iterator[Row]:
        try:
            attempt = f[idx["attempt_id"]]
            phase = f[idx["phase_name"]]
            vertex = VERTEX_OF.get(phase, phase.lower())
            thread_id = _required_int(f[idx["thread_id"]])
            count = _required_int(f[idx["breakdown_count"]])
            inst = _Instance(
                f[idx["job_id"]], attempt, f[idx["host"]], thread_id, f[idx["thread_name"]], vertex,
                _required_int(f[idx["phase_start"]]), _required_int(f[idx["phase_end"]]),
                _required_int(f[idx["phase_count"]]),
            )
            kind = f[idx["breakdown_type"]]
            name = f[idx["breakdown_name"]]
            if kind == "state":
                name = normalize_state(name)
        except (ValueError, KeyError) as exc:  # (KeyError: the header lacks the column)
            yield malformed_row(ctx, line_no, f"bad value: {exc}" if isinstance(exc, ValueError)
                                else f"no column {exc} in the header", line)  # fmt: skip
            return
        key = tuple(f)
        if key in seen:
            ctx.unknown["duplicate"] += 1
            payload = orjson.dumps({"line": line_no, "text": line}).decode()
            yield Row("events", {"job_id": inst.job_id, "seq": line_no, "event_type": "duplicate", "ts_ms": None, "payload_json": payload})
            return
        seen.add(key)
        group = groups.setdefault((attempt, vertex, thread_id), inst)
        if kind == "state":
            group.states[name] = group.states.get(name, 0) + count
        yield Row(
            "vertex_breakdown",
            {
                "job_id": inst.job_id, "attempt_id": attempt, "host": inst.host, "thread_id": thread_id,
                "vertex": vertex, "kind": kind, "name": name, "samples": count, "source": SOURCE,
            },
        )

    yield from _data_rows(path, ctx, header, breakdown)
    for g in groups.values():
        busy = min(g.states.get(ThreadState.RUNNABLE.value, 0), INT64_MAX)  # (a sum of checked counts)
        idle = min(sum(n for s, n in g.states.items() if s in _IDLE_STATES), INT64_MAX)
        yield Row(
            "vertex_instances",
            {
                "job_id": g.job_id, "attempt_id": g.attempt_id, "host": g.host, "thread_id": g.thread_id,
                "thread_name": g.thread_name, "vertex": g.vertex, "start_ms": g.start_ms, "end_ms": g.end_ms,
                "samples": g.samples, "busy_samples": busy, "idle_samples": idle, "source": SOURCE,
            },
        )


def _job_of(attempt_or_task: str) -> str | None:
    parts = attempt_or_task.split("_")
    return f"job_{parts[1]}_{parts[2]}" if len(parts) >= 3 else None


def _required_job_of(attempt_or_task: str) -> str:
    """The job of an attempt or task row; ``ValueError`` for an id that names none (the row needs one)."""
    job_id = _job_of(attempt_or_task)
    if job_id is None:
        raise ValueError(f"id {attempt_or_task[:60]!r} names no job")
    return job_id


def _metrics(path: Path, ctx: ReadContext, header: list[str]) -> Iterator[Row]:
    def samples(line_no: int, line: str, f: list[str]) -> Iterator[Row]:
        rec = dict(zip(header, f, strict=True))
        try:
            ts = _int(rec["Timestamp"])
            if ts is not None:
                int64(ts * 1000)
        except ValueError:
            ts = None
        if ts is None:
            yield malformed_row(ctx, line_no, f"Timestamp {rec['Timestamp']!r} is not epoch seconds", line)
            return
        category = rec.get("category") or "cpu"
        m = _SAR_INTERVAL.search(rec.get("capp", ""))
        interval = int(m.group(1)) * 1000 if m else None  # (at most 9 digits: no 64-bit overflow)
        host = rec.get("hostName") or rec.get("csource") or None
        device = rec.get("processName") or "all"
        rows = []
        for name, value in rec.items():
            if name in _SKIP_METRIC_FIELDS:
                continue
            try:
                number = _float(value)
            except ValueError as exc:
                yield malformed_row(ctx, line_no, f"metric {name!r}: {exc}", line)
                return
            if number is None:
                continue
            metric = f"cpu_{name.lstrip('%')}_pct" if category == "cpu" else f"{category}.{name}"
            rows.append(
                Row(
                    "system_samples",
                    {
                        "host": host, "ts_ms": ts * 1000, "interval_ms": interval, "metric": metric,
                        "device": device, "value": number, "source": METRIC_CATEGORIES.get(category, "hadoop_metrics"),
                    },
                )
            )
        if not rows:
            yield malformed_row(ctx, line_no, "no numeric metric in the row", line)
            return
        ctx.events_read += len(rows) - 1  # one row per metric: keep events_read = rows kept
        yield from rows

    yield from _data_rows(path, ctx, header, samples)


def _history(path: Path, ctx: ReadContext, header: list[str]) -> Iterator[Row]:
    def records(line_no: int, line: str, f: list[str]) -> Iterator[Row]:
        rec = dict(zip(header, f, strict=True))
        try:
            if "TASKID" in rec and "TRACKER_NAME" in rec:  # MapAttempt / ReduceAttempt
                attempt = rec["id"]
                job_id = _required_job_of(attempt)
                is_map = "_m_" in attempt
                kind = _STATE_TASK_TYPE.get(rec.get("STATE_STRING", "").lower())
                counters = list(_counter_rows(rec, "attempt", rec["TASKID"], attempt))  # all or none
                row = Row(
                    "attempts",
                    {
                        "job_id": job_id, "task_id": rec["TASKID"], "attempt_id": attempt,
                        "task_type": kind or (TaskType.MAP if is_map else TaskType.REDUCE).value,
                        "status": normalize_status(rec.get("TASK_STATUS")),
                        "start_ms": _int(rec["START_TIME"]), "finish_ms": _int(rec["FINISH_TIME"]),
                        "shuffle_finish_ms": _int(rec.get("SHUFFLE_FINISHED", "")),
                        "sort_finish_ms": _int(rec.get("SORT_FINISHED", "")),
                        "host": _host_of_tracker(rec["TRACKER_NAME"]),
                    },
                )
                yield from counters
                yield row
                return
            if "TOTAL_MAPS" in rec and "JOB_STATUS" in rec:  # job.csv
                totals = [
                    counter_row(rec["id"], CounterScope.JOB_TOTAL.value, _FS, name, value)
                    for name in _JOB_BYTE_COUNTERS
                    if (value := _int(rec.get(name, ""))) is not None
                ]  # all or none, with the job
                yield from totals
                yield Row(
                    "jobs",
                    {
                        "job_id": rec["id"], "status": normalize_status(rec["JOB_STATUS"]),
                        "submit_ms": _int(rec["SUBMIT_TIME"]), "launch_ms": _int(rec["LAUNCH_TIME"]),
                        "finish_ms": _int(rec["FINISH_TIME"]), "total_maps": _int(rec["TOTAL_MAPS"]),
                        "total_reduces": _int(rec["TOTAL_REDUCES"]), "finished_maps": _int(rec["FINISHED_MAPS"]),
                        "finished_reduces": _int(rec["FINISHED_REDUCES"]), "hadoop_version": "0.20",
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
                "job_id": _job_of(ident), "seq": line_no, "event_type": f"hitune:{path.stem}",
                "ts_ms": _time_or_none(start), "payload_json": orjson.dumps(rec).decode(),
            },
        )

    yield from _data_rows(path, ctx, header, records)


def _counter_rows(rec: dict[str, str], scope: str, task_id: str, attempt_id: str | None) -> Iterator[Row]:
    """The counters among a record's columns (:data:`COUNTERS`; empty ones have no row)."""
    job_id = _job_of(task_id)
    if job_id is None:
        return
    for column, (group, name) in COUNTERS.items():
        value = _int(rec.get(column, ""))
        if value is not None:
            yield counter_row(job_id, scope, group, name, value, task_id=task_id, attempt_id=attempt_id)


def _task_rows(rec: dict[str, str], task_id: str) -> Iterator[Row]:
    """A ``MapTask``/``ReduceTask`` record's ``tasks`` row and task counters."""
    yield from _counter_rows(rec, "task", task_id, None)
    splits = ",".join(s for s in rec.get("SPLITS", "").split(";") if s)
    yield Row(
        "tasks",
        {
            "job_id": _required_job_of(task_id), "task_id": task_id, "task_type": task_type(rec["TASK_TYPE"]),
            "status": normalize_status(rec.get("TASK_STATUS")), "start_ms": _int(rec.get("START_TIME", "")),
            "finish_ms": _int(rec.get("FINISH_TIME", "")), "splits": splits or None,
        },
    )  # fmt: skip


def read_hitune_csv(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Read one HiTune report CSV (see the module docstring for what lands where)."""
    first = next(iter_lines(path, ctx), (0, ""))[1]
    header = [clean(h) for h in first.split(",")]
    if first.startswith(INSTRUMENT_HEADER):
        yield from _instruments(path, ctx, header)
    elif header[0] == "Timestamp":
        yield from _metrics(path, ctx, header)
    else:
        yield from _history(path, ctx, header)


def _sniff(head: bytes, path: Path) -> bool:
    first = head.split(b"\n", 1)[0].rstrip(b"\r")
    if first.startswith(INSTRUMENT_HEADER.encode()):
        return True
    # Chukwa-demuxed records: every HiTune CSV carries the csource/capp/ctags columns
    cols = set(first.split(b","))
    return {b"csource", b"capp", b"ctags"} <= cols


FORMATS = (
    Format(
        "hitune-csv",
        _sniff,
        read_hitune_csv,
        "HiTune report CSVs: dataflow breakdowns by vertex, sar CPU, Hadoop metrics, attempts",
        record_tables=("vertex_breakdown", "system_samples", "attempts", "jobs", "events"),
    ),
)
