"""Helpers shared by the .jhist tests: Hadoop's JobHistoryParser as an oracle, and phaseline's rows.

:func:`hadoop_parse` compiles ``tests/oracles/JhistDump.java`` against the
Hadoop client jars (once, cached by :func:`phaseline.java.compile_java`) and
runs it on many files in ONE JVM; :func:`phaseline_rows` reads a file with
:func:`ingest.jhist.read_jhist` and groups its rows by table; :func:`killed_attempt_line`
writes the event of an attempt killed after it finished (its map output lost).
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
from phaseline.errors import TraceTruncatedError
from phaseline.java import compile_java, java_command

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
