"""Helpers shared by the task-log tests: a task log read into rows, a real container's files cut out by hand."""

from __future__ import annotations

import gzip
from pathlib import Path

from ingest.base import ReadContext, Row
from ingest.tasklog import read_task_log

TERASORT = "splitlog-yarn-logs/application_1756057717712_0002.yarn-logs.txt.gz"


def _read(path: Path) -> tuple[list[Row], ReadContext]:
    ctx = ReadContext(path)
    return list(read_task_log(path, ctx)), ctx


def _container_files(fixtures_dir: Path, container: str) -> dict[str, str]:
    """The files of one container in a `yarn logs` output, cut out by hand (no phaseline code)."""
    files: dict[str, list[str]] = {}
    current: str | None = None
    name: str | None = None
    body: list[str] | None = None
    with gzip.open(fixtures_dir / TERASORT, "rt", encoding="utf-8") as fh:
        for line in fh:
            text = line.rstrip("\n")
            if text.startswith("Container: "):
                current = text.split()[1]
            elif text.startswith("LogType:"):
                name = text[len("LogType:") :]
            elif text == "LogContents:":
                body = []
            elif text.startswith("End of LogType:"):
                if current == container and name is not None and body is not None:
                    files[name] = body[:-1] if body and body[-1] == "" else body
                body = None
            elif body is not None:
                body.append(text)
    return {k: "\n".join(v) + "\n" for k, v in files.items()}
