"""The local engine's run directory (``run.json``).

``phaseline engine run`` (:mod:`platform_model.engine.runner`) writes::

    RUN_DIR/run.json              {"format": "phaseline-engine-run", "version": 1, "job_id", "job_name",
                                   "user", "status", "submit_ms", "launch_ms", "finish_ms",
                                   "wall_start_ms", "wall_end_ms", "hadoop_version", "java_version",
                                   "params": {...}, "settings": {...},
                                   "counters": {group: {counter: value}}, "tasks": [...],
                                   "log": "logs/job.log", "conf": "<job_id>_conf.xml", "jfr": ...,
                                   "maps", "reduces": the map and reduce tasks a user's driver ran
                                   (its conf's counts)}
    RUN_DIR/<job_id>_conf.xml     read by ingest.conf_xml
    RUN_DIR/logs/job.log          read by ingest.tasklog (attempts, events, phases, attempt counters)

Each file is its own source (the pipeline walks the directory), so re-ingesting
one replaces only its rows.  This module reads ``run.json`` into the ``jobs``
row, the job's counters (scope ``job_total``; per-task counters, when the run
has them, at scope ``task``) and one ``events`` row holding the run's
parameters, settings and wall-clock times.

The lines of the run's LocalJobRunner log are attributed to attempts by
:mod:`ingest.runner_threads`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ingest.base import ReadContext, Row, skip_record
from ingest.formats import Format
from ingest.mrcommon import INT64_MAX, INT64_MIN, counter_row, event_row
from ingest.opening import read_text_bounded
from phaseline.errors import TraceParseError
from phaseline.hadoop_names import local_runner_job
from phaseline.schemas import CounterScope, normalize_status

RUN_FORMAT = "phaseline-engine-run"
SUPPORTED_VERSIONS = (1,)
_SNIFF = re.compile(rb'"format"\s*:\s*"phaseline-engine-run"')
_REQUIRED = ("job_id", "version")


def sniff_engine_run(head: bytes, path: Path) -> bool:
    """A JSON object whose ``format`` is ``phaseline-engine-run``."""
    return head.lstrip()[:1] == b"{" and _SNIFF.search(head) is not None


def run_job_id(path: Path, ctx: ReadContext) -> str | None:
    """The job id in the ``run.json`` beside ``path`` (a file of the run directory), else the hint.

    Read leniently, for files that only lie in a run directory (JFR recordings,
    thread dumps): an unreadable ``run.json``, or one without a string
    ``job_id``, gives ``ctx.job_id_hint``.
    """
    run_json = path.with_name("run.json")
    if run_json.is_file():
        try:
            doc = json.loads(run_json.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            doc = {}
        if isinstance(doc, dict) and isinstance(doc.get("job_id"), str):
            return str(doc["job_id"])
    return ctx.job_id_hint


def _str_or_none(doc: dict[str, Any], key: str, path: Path) -> str | None:
    value = doc.get(key)
    if value is not None and not isinstance(value, str):
        raise TraceParseError(path, f"run.json {key!r} must be a string, got {str(value)[:40]!r}")
    return value


def _int_or_none(value: Any, path: Path, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not INT64_MIN <= value <= INT64_MAX:
        raise TraceParseError(path, f"{what} must be a 64-bit integer, got {str(value)[:40]!r}")
    return value


def read_engine_run(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Rows of one engine ``run.json``: ``jobs``, ``counters`` and the run as an ``events`` row."""
    text = read_text_bounded(path)
    try:
        run = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TraceParseError(path, f"run.json is not valid JSON: {exc.msg}", line=exc.lineno) from None
    except (ValueError, RecursionError) as exc:  # a number past 4,300 digits; nesting past the stack
        raise TraceParseError(path, f"run.json is not valid JSON: {type(exc).__name__}: {exc}") from None
    if not isinstance(run, dict) or run.get("format") != RUN_FORMAT:
        raise TraceParseError(path, f"not a {RUN_FORMAT} file (no matching 'format' field)")
    missing = [key for key in _REQUIRED if key not in run]
    if missing:
        raise TraceParseError(path, f"run.json lacks {', '.join(missing)}",
                              hint="re-run `phaseline engine run` to rewrite the run directory")
    if run["version"] not in SUPPORTED_VERSIONS:
        raise TraceParseError(path, f"run.json version {run['version']!r} is not supported "
                              f"(this phaseline reads {SUPPORTED_VERSIONS})", hint="upgrade phaseline")
    job_id = str(run["job_id"])
    params = run.get("params") or {}
    tasks = run.get("tasks") or []
    if not isinstance(params, dict) or not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        raise TraceParseError(path, "run.json 'params' must be an object and 'tasks' a list of objects")
    ctx.job_id_hint = job_id
    ctx.events_read += 1
    yield Row("jobs", {
        "job_id": job_id, "name": _str_or_none(run, "job_name", path), "user": _str_or_none(run, "user", path),
        "status": normalize_status(_str_or_none(run, "status", path)),
        "submit_ms": _int_or_none(run.get("submit_ms"), path, "submit_ms"),
        "launch_ms": _int_or_none(run.get("launch_ms"), path, "launch_ms"),
        "finish_ms": _int_or_none(run.get("finish_ms"), path, "finish_ms"),
        # the job's map tasks where the engine read them from its conf (a user's driver makes its own
        # splits), else the engine's one map an input file
        "total_maps": _int_or_none(run["maps"] if run.get("maps") is not None else params.get("maps"), path,
                                   "maps"),
        # likewise its reduces (a map-only driver sets 0 whatever the engine's option was)
        "total_reduces": _int_or_none(run["reduces"] if run.get("reduces") is not None else params.get("reduces"),
                                      path, "reduces"),
        # the LocalJobRunner never uberizes; on a cluster only the job's history says (JOB_INITED)
        "uberized": False if local_runner_job(job_id) else None,
        "hadoop_version": _str_or_none(run, "hadoop_version", path), "source_format": RUN_FORMAT,
    })
    yield from _counter_rows(job_id, run.get("counters") or {}, CounterScope.JOB_TOTAL.value, None, path, ctx)
    for task in tasks:
        try:
            task_id = _str_or_none(task, "task_id", path)
        except TraceParseError as exc:  # that task's counters are skipped, the others land
            skip_record(ctx, exc)
            continue
        yield from _counter_rows(job_id, task.get("counters") or {}, CounterScope.TASK.value, task_id, path, ctx)
    summary = {k: v for k, v in run.items() if k not in ("counters",)}
    yield event_row(job_id, 0, "engine_run", _int_or_none(run.get("wall_start_ms"), path, "wall_start_ms"), summary)


def _counter_rows(
    job_id: str, groups: Any, scope: str, task_id: str | None, path: Path, ctx: ReadContext
) -> Iterator[Row]:
    """The counters of the job or a task; a group or counter that cannot be read is skipped (``ctx.skipped``)."""
    if not isinstance(groups, dict):
        skip_record(ctx, TraceParseError(path, f"counters must be an object of groups, got {type(groups).__name__}"))
        return
    for group, counters in groups.items():
        if not isinstance(counters, dict):
            skip_record(ctx, TraceParseError(path, f"counter group {group!r} must be an object"))
            continue
        for name, value in counters.items():
            try:
                number = _int_or_none(value, path, f"counter {group}/{name}")
            except TraceParseError as exc:
                skip_record(ctx, exc)
                continue
            if number is not None:
                yield counter_row(job_id, scope, group, name, number, task_id=task_id)


FORMATS: tuple[Format, ...] = (
    Format(RUN_FORMAT, sniff_engine_run, read_engine_run,
           "run.json of `phaseline engine run` (job, counters, parameters); its log and conf are read "
           "as their own files."),
)


# ---- LocalJobRunner: which attempt wrote a line -------------------------------------------------
