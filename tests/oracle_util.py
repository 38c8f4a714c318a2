"""Helpers shared by the .jhist tests: Hadoop's JobHistoryParser as an oracle, and phaseline's rows.

:func:`hadoop_parse` compiles ``tests/oracles/JhistDump.java`` against the
Hadoop client jars (once, cached by :func:`phaseline.java.compile_java`) and
runs it on many files in ONE JVM; :func:`phaseline_rows` reads a file with
:func:`ingest.jhist.read_jhist` and groups its rows by table; :func:`killed_attempt_line`
writes the event of an attempt killed after it finished (its map output lost);
:func:`compare_with_hadoop` asserts a file's rows equal Hadoop's parse of it, where they differ only
in the documented ways (``tests/ingest/test_jhist_oracle.py``'s docstring lists them).
"""

from __future__ import annotations

import json
import subprocess
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import orjson

from ingest.base import ReadContext, iter_rows
from ingest.jhist import read_jhist
from ingest.opening import open_binary
from phaseline.errors import TraceTruncatedError
from phaseline.hadoop_names import split_host, task_type
from phaseline.java import compile_java, java_command
from phaseline.schemas import normalize_status

DUMPER_SOURCE = Path(__file__).resolve().parent / "oracles" / "JhistDump.java"
JVM_ARGS = ("-Xss4m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Dlog4j2.level=ERROR")


def dumper_command(*, summary: bool = False, jvm_args: Sequence[str] = JVM_ARGS) -> list[str]:
    """``java ... JhistDump [--summary]``, ready for file arguments (compiles on first use)."""
    classes = compile_java("jhistdump", [DUMPER_SOURCE])
    return [*java_command("JhistDump", [classes], jvm_args=jvm_args), *(["--summary"] if summary else [])]


def hadoop_parse(paths: Sequence[Path], *, summary: bool = False) -> dict[str, dict[str, Any]]:
    """Hadoop's JobHistoryParser view of each file, keyed by ``str(path)`` (one JVM for all)."""
    proc = subprocess.run(
        [*dumper_command(summary=summary), *(str(p) for p in paths)],
        capture_output=True,
        check=False,
        timeout=300,
    )
    if proc.returncode != 0:
        raise AssertionError(f"JhistDump failed ({proc.returncode}): {proc.stderr.decode()[-2000:]}")
    results = [orjson.loads(line) for line in proc.stdout.splitlines() if line.strip()]
    return {r["path"]: r for r in results}


def phaseline_rows(
    path: Path,
) -> tuple[dict[str, list[dict[str, Any]]], TraceTruncatedError | None, ReadContext]:
    """Every row :func:`read_jhist` yields for a file, by table, and the truncation it ended with."""
    ctx = ReadContext(path)
    tables: dict[str, list[dict[str, Any]]] = defaultdict(list)
    cut: TraceTruncatedError | None = None
    try:
        for row in iter_rows(read_jhist(path, ctx)):
            tables[row.table].append(row.as_dict())
    except TraceTruncatedError as exc:
        cut = exc
    return dict(tables), cut, ctx


def killed_attempt_line(done: dict[str, Any], task_type: str, finish_ms: int, error: str) -> str:
    """A ``<TYPE>_ATTEMPT_KILLED`` event line (with its line end) for the attempt whose finished
    event's record is ``done``: killed at ``finish_ms`` with ``error``, as the AM writes one."""
    kill = {
        "type": f"{task_type}_ATTEMPT_KILLED",
        "event": {
            "org.apache.hadoop.mapreduce.jobhistory.TaskAttemptUnsuccessfulCompletion": {
                "taskid": done["taskid"], "taskType": task_type, "attemptId": done["attemptId"],
                "finishTime": finish_ms, "hostname": done["hostname"], "port": done["port"],
                "rackname": done["rackname"], "status": "KILLED", "error": error, "counters": None,
                "clockSplits": [], "cpuUsages": [], "vMemKbytes": [], "physMemKbytes": [],
            }
        },
    }  # fmt: skip
    return json.dumps(kill) + "\n"


TIME_COLUMNS = ("start_ms", "finish_ms")
PHASE_COLUMNS = ("map_finish_ms", "shuffle_finish_ms", "sort_finish_ms")
JOB_COLUMNS = (
    "job_id", "name", "user", "queue", "status", "submit_ms", "launch_ms", "finish_ms",
    "total_maps", "total_reduces", "finished_maps", "finished_reduces",
    "failed_maps", "failed_reduces", "killed_maps", "killed_reduces", "uberized",
)  # fmt: skip


def _null(v: Any) -> Any:
    return None if v == -1 or v == "" else v


def _raw_events(path: Path) -> list[dict[str, Any]]:
    """The file's events decoded with the standard library (independent of the reader; a binary
    history's as the JSON lines ``open_binary`` renders it as)."""
    events = []
    with open_binary(path) as fh:
        text = fh.read().decode("utf-8")
    for line in text.splitlines()[2:]:
        try:
            events.append(json.loads(line))
        except ValueError:
            continue  # blank, or the cut line of a truncated copy
    return events


def _killed_task_ids(path: Path) -> set[str]:
    killed = set()
    for ev in _raw_events(path):
        if ev["type"] == "TASK_FAILED":
            (payload,) = ev["event"].values()
            if payload.get("status") == "KILLED":
                killed.add(payload["taskid"])
    return killed


def _finished_then_killed(path: Path) -> dict[str, dict[str, Any]]:
    """Attempts that failed or were killed after they finished -> their *_FINISHED payload."""
    finished: dict[str, dict[str, Any]] = {}
    lost = {}
    for ev in _raw_events(path):
        (payload,) = ev["event"].values()
        if ev["type"].endswith("_ATTEMPT_FINISHED"):
            finished[payload["attemptId"]] = payload
        elif ev["type"].endswith(("_ATTEMPT_KILLED", "_ATTEMPT_FAILED")) and payload["attemptId"] in finished:
            lost[payload["attemptId"]] = finished[payload["attemptId"]]
    return lost


def expected_from_hadoop(path: Path, h: dict[str, Any]) -> dict[str, Any]:
    """Hadoop's JobInfo, in phaseline's columns, with the documented differences applied."""
    job = h["job"]
    killed = _killed_task_ids(path)
    lost = _finished_then_killed(path)
    jobs = {c: _null(job[c]) for c in JOB_COLUMNS}
    jobs["status"] = normalize_status(jobs["status"])
    jobs["diagnostics"] = _null(job["error_info"])
    if jobs["status"] is None:  # no JOB_FINISHED/FAILED/KILLED: Hadoop's 0s are its defaults
        jobs |= {c: None for c in JOB_COLUMNS if c.startswith(("finished_", "failed_", "killed_"))}
    counters = set()
    for scope, key in (
        ("job_total", "total_counters"),
        ("job_map", "map_counters"),
        ("job_reduce", "reduce_counters"),
    ):
        counters |= {(scope, None, None, g, n, v) for g, n, v in job[key] or ()}
    tasks, attempts = {}, {}
    for t in h["tasks"]:
        tid = t["task_id"]
        status = normalize_status(t["status"])
        if status == "FAILED" and tid in killed:
            status = "KILLED"
        tasks[tid] = {
            "task_type": task_type(t["task_type"]),
            "status": status,
            "start_ms": _null(t["start_ms"]),
            "finish_ms": _null(t["finish_ms"]),
            "successful_attempt_id": t["successful_attempt_id"],
            "splits": _null(t["splits"]),
            "error": _null(t["error"]),
        }
        counters |= {("task", tid, None, g, n, v) for g, n, v in t["counters"] or ()}
        for a in t["attempts"]:
            aid = a["attempt_id"]
            status = normalize_status(_null(a["status"]))
            unsuccessful = status in ("FAILED", "KILLED")
            host = _null(a["hostname"]) or _null(a["tracker_name"])
            attempts[aid] = {
                "task_id": tid,
                "task_type": task_type(a["task_type"]),
                "status": status,
                "start_ms": _null(a["start_ms"]),
                "finish_ms": _null(a["finish_ms"]),
                **{c: None if unsuccessful else _null(a[c]) for c in PHASE_COLUMNS},
                "host": split_host(host)[0] if host else None,
                "rack": _null(a["rackname"]),
                "container_id": a["container_id"],
                "error": _null(a["error"]),
            }
            if aid in lost:  # phase times and counters stay those of its *_FINISHED event
                done = lost[aid]
                attempts[aid]["map_finish_ms"] = done.get("mapFinishTime")
                attempts[aid]["shuffle_finish_ms"] = done.get("shuffleFinishTime")
                attempts[aid]["sort_finish_ms"] = done.get("sortFinishTime")
                for g in done["counters"]["groups"]:
                    counters |= {("attempt", tid, aid, g["name"], c["name"], c["value"]) for c in g["counts"]}
            else:
                counters |= {("attempt", tid, aid, g, n, v) for g, n, v in a["counters"] or ()}
    return {"jobs": jobs, "tasks": tasks, "attempts": attempts, "counters": counters, "lost": lost}


def actual_from_phaseline(tables: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    """phaseline's rows in the shape :func:`expected_from_hadoop` gives Hadoop's."""
    (job,) = tables["jobs"]
    jobs = {c: job[c] for c in (*JOB_COLUMNS, "diagnostics")}
    tasks = {
        t["task_id"]: {k: v for k, v in t.items() if k not in ("job_id", "task_id")}
        for t in tables.get("tasks", [])
    }
    keep = (
        "task_id",
        "task_type",
        "status",
        *TIME_COLUMNS,
        *PHASE_COLUMNS,
        "host",
        "rack",
        "container_id",
        "error",
    )
    attempts = {a["attempt_id"]: {k: a[k] for k in keep} for a in tables.get("attempts", [])}
    counters = {
        (c["scope"], c["task_id"], c["attempt_id"], c["group_name"], c["counter_name"], c["value"])
        for c in tables.get("counters", [])
    }
    return {"jobs": jobs, "tasks": tasks, "attempts": attempts, "counters": counters}


def compare_with_hadoop(path: Path, h: dict[str, Any]) -> None:
    """Assert phaseline's rows of ``path`` equal Hadoop's parse ``h`` of it (the documented differences applied)."""
    assert h.get("fatal") is None, f"Hadoop refused {path}: {h.get('fatal')}"
    tables, _cut, _ctx = phaseline_rows(path)
    expected = expected_from_hadoop(path, h)
    actual = actual_from_phaseline(tables)
    assert actual["jobs"] == expected["jobs"], path.name
    assert actual["tasks"] == expected["tasks"], path.name
    assert actual["attempts"] == expected["attempts"], path.name
    keys = [
        (c["scope"], c["task_id"], c["attempt_id"], c["group_name"], c["counter_name"])
        for c in tables.get("counters", [])
    ]
    assert len(keys) == len(set(keys)), f"{path.name}: a counter is written twice"
    missing = expected["counters"] - actual["counters"]
    extra = actual["counters"] - expected["counters"]
    assert not missing, f"{path.name}: Hadoop has counters phaseline lacks: {sorted(missing)[:5]}"
    assert not extra, f"{path.name}: phaseline has counters Hadoop lacks: {sorted(extra)[:5]}"
