"""Periodic Java thread dumps (``jstack PID`` / ``jcmd PID Thread.print``) -> thread samples.

A sampler in the spirit of HiTune's task execution sampler (Dai et al. 2011,
section 5.1) can be as simple as ``while sleep 0.1; do jcmd $PID Thread.print; done
>> dumps.txt``.  Each dump starts with the JVM's wall-clock time and a banner::

    12345:                                     (jcmd only: the process id)
    2026-11-21 13:33:03                        (or with .mmm, if the sampler prints it)
    Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6 mixed mode, sharing):

    "main" #1 prio=5 os_prio=0 cpu=123.45ms elapsed=1.23s tid=0x... nid=0x1 waiting on condition  [0x...]
       java.lang.Thread.State: TIMED_WAITING (sleeping)
            at java.lang.Thread.sleep(java.base@17.0.15/Native Method)
            at Foo.main(Foo.java:5)

Every Java thread of every dump (a header with ``#<id>``: the Java thread id, the
same number as log4j's ``%tid``) becomes one ``samples`` row (``sample_type``
``jstack``, its ``java.lang.Thread.State``, its frames as method names, innermost
first).  JVM-internal threads (GC, compiler: no ``#id``, no Java stack) are not
samples and are skipped.  The dump time is read as UTC (like the task logs).
The job id comes from ``run.json`` beside the file, or the ingest's job id hint.

A thread header without a parsable id (or one past 64 bits), a state line
naming no known state, or a dump time that is no date (its dump's threads are
then untimed, malformed too) is kept in ``events`` as ``malformed`` (file and
line in the notes); a file that ends inside a thread's block yields that
thread as it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from ingest.base import ReadContext, Row
from ingest.engine_run import run_job_id
from ingest.formats import Format
from ingest.mrcommon import int64
from ingest.opening import iter_lines
from ingest.samples_hitune import MalformedRecord, StackTable, malformed_row, normalize_state, sample_row
from phaseline.schemas import ThreadState

SOURCE = "jstack"
_BANNER = "Full thread dump "
_TIME_RE = re.compile(r"^(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:[.,](\d{1,3}))?\s*$")
_HEADER_RE = re.compile(r'^"(?P<name>.*)" (?:#(?P<tid>\d+) )?')
_STATE_RE = re.compile(r"^\s+java\.lang\.Thread\.State: (?P<state>[A-Z_]+)")
_INTERNAL = -1  # thread id placeholder of JVM-internal threads (not samples)
_FRAME_RE = re.compile(r"^\s+at (?P<method>[^\s(]+)\(")


@dataclass(slots=True)
class _Thread:
    line_no: int
    name: str
    tid: int
    state: str = ThreadState.UNKNOWN.value
    frames: list[str] = field(default_factory=list)


def _epoch_ms(stamp: str, fraction: str | None) -> int:
    dt = datetime.strptime(stamp, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
    return int(dt.timestamp() * 1000) + (int(fraction.ljust(3, "0")) if fraction else 0)


def read_jstack(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Read concatenated thread dumps (see the module docstring)."""
    job_id = run_job_id(path, ctx)
    stacks = StackTable()
    ts: int | None = None
    pending_ts: int | None = None
    current: _Thread | None = None

    def emit(thread: _Thread) -> Iterator[Row]:
        sid: int | None = None
        if thread.frames:
            sid, new = stacks.intern(thread.frames)
            if new is not None:
                yield new
        yield sample_row(job_id, None, None, thread.tid, thread.name, ts, SOURCE, thread.state, sid, 0.0, SOURCE)

    for line_no, line in iter_lines(path, ctx):
        if current is not None and current.tid == _INTERNAL and line.startswith(('"', _BANNER)):
            current = None
        m = _TIME_RE.match(line)
        if m:
            try:
                pending_ts = _epoch_ms(m.group(1), m.group(2))
            except ValueError as exc:  # a date that does not exist (month 13): the dump it heads is untimed
                pending_ts = None
                ctx.events_read += 1
                yield malformed_row(ctx, line_no, f"dump time: {exc}", line, job_id)
            continue
        if line.startswith(_BANNER):
            if current is not None:
                yield from emit(current)
                current = None
            ts, pending_ts = pending_ts, None
            continue
        if line.startswith('"'):
            if current is not None:
                yield from emit(current)
                current = None
            h = _HEADER_RE.match(line)
            if ts is None or h is None:
                ctx.events_read += 1
                yield malformed_row(ctx, line_no, "thread header before any dump time and banner", line, job_id)
                continue
            if h.group("tid") is None:
                # a JVM-internal thread (GC, VM) has no Java id and no Java state or stack;
                # one that has them is a damaged header (checked on its next line)
                current = _Thread(line_no, h.group("name"), _INTERNAL)
                continue
            ctx.events_read += 1
            try:
                current = _Thread(line_no, h.group("name"), int64(int(h.group("tid")), "thread id"))
            except ValueError as exc:
                yield malformed_row(ctx, line_no, str(exc), line, job_id)
            continue
        if current is None:
            continue
        if current.tid == _INTERNAL:
            if _STATE_RE.match(line) or _FRAME_RE.match(line):
                ctx.events_read += 1
                yield malformed_row(ctx, current.line_no, "thread header without '#id'", line, job_id)
                current = None
            continue
        s = _STATE_RE.match(line)
        if s:
            try:
                current.state = normalize_state(s.group("state"))
            except MalformedRecord as exc:
                yield malformed_row(ctx, current.line_no, str(exc), line, job_id)
                current = None
            continue
        f = _FRAME_RE.match(line)
        if f:
            current.frames.append(f.group("method"))
    if current is not None and current.tid != _INTERNAL:
        yield from emit(current)


def _sniff(head: bytes, path: Path) -> bool:
    return _BANNER.encode() in head[:1024]


FORMATS = (
    Format(
        "jstack",
        _sniff,
        read_jstack,
        "Java thread dumps (jstack / jcmd Thread.print), taken periodically",
        record_tables=("samples", "events"),
    ),
)
