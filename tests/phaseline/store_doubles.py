"""Shared by the store tests: a toy trace format, so the store's and the pipeline's mechanics are tested alone.

Toy format: a file whose first line is ``TOY``; each further line ``job_id,name``
becomes a ``jobs`` row and an ``events`` row; ``BAD`` raises a parse error,
``CUT`` ends the file as truncated.  A test module that imports ``_toy_format``
(an autouse fixture) reads only the toy format.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ingest import formats
from ingest.base import ReadContext, Row
from ingest.formats import Format
from ingest.opening import iter_lines
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.hadoop_names import job_id_from_name
from phaseline.store import Store


def read_toy(path: Path, ctx: ReadContext) -> Iterator[Row]:
    for line_no, line in iter_lines(path, ctx):
        if line_no == 1 or not line:
            continue
        ctx.events_read += 1
        if line == "BAD":
            raise TraceParseError(path, "toy record is BAD", line=line_no)
        if line == "CUT":
            raise TraceTruncatedError(path, "file ends mid-record", line=line_no)
        if line == "TYPO":
            yield Row("jobs", {"job_id": "j", "nmae": "typo"})
        job_id, name = line.split(",")
        if job_id == "?":  # the job named by the file's name (as a conf XML without mapreduce.job.id)
            job_id = job_id_from_name(path.name) or "?"
        yield Row("jobs", {"job_id": job_id, "name": name})
        yield Row("events", {"job_id": job_id, "seq": line_no, "event_type": "TOY", "payload_json": line})


TOY = Format("toy", lambda head, path: head.startswith(b"TOY"), read_toy, "toy format")


def detect_among(*formats: Format) -> Callable[..., Format | None]:
    """A stand-in for ``ingest.formats.detect`` that knows only ``formats`` (each by its own sniff)."""

    def detect(path: Path, head: bytes | None = None) -> Format | None:
        if head is None:
            head = path.read_bytes()[:4096]
        return next((f for f in formats if f.sniff(head, path)), None)

    return detect


@pytest.fixture(autouse=True)
def _toy_format(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats, "detect", detect_among(TOY))


def write(path: Path, *lines: str) -> Path:
    path.write_text("\n".join(["TOY", *lines]) + "\n")
    return path


def job_ids(store: Store) -> list[str]:
    return [r[0] for r in store.connect().execute("SELECT job_id FROM jobs ORDER BY job_id").fetchall()]
