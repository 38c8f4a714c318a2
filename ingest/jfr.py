"""JDK Flight Recorder recordings (``.jfr``) of task JVMs -> thread samples.

A small Java program, ``ingest/java/JfrDump.java`` (compiled once with
:func:`phaseline.java.compile_java`), reads the recording with the public
``jdk.jfr.consumer.RecordingFile`` API one event at a time and streams compact
TSV lines to this reader:

``K <id> <frame> <frame> ...``
    a distinct stack (method-level frames ``pkg.Class$Inner.method``, innermost
    first; a last frame ``...`` marks a stack JFR truncated), written once
    before the first event that uses it;
``E <event type> <start_ms> <duration_us> <java thread id> <thread name> <state> <timeout> <stack>``
    a thread event: ``jdk.ExecutionSample`` (running Java code) and
    ``jdk.NativeMethodSample`` (in native code) are point samples; ``jdk.ThreadPark``,
    ``jdk.JavaMonitorWait``, ``jdk.JavaMonitorEnter``, ``jdk.ThreadSleep`` are waits
    with durations; ``jdk.FileRead``/``FileWrite``/``SocketRead``/``SocketWrite`` are
    I/O with durations.  ``timeout`` is a park's or wait's time limit, positive for a
    timed one (``TIMED_WAITING``); a ``parkUntil``, which JFR records with no timeout
    (``Long.MIN_VALUE``) and its deadline in ``until``, is given the time from the
    park to its deadline (at least 1);
``C <ts_ms> <jvmUser> <jvmSystem> <machineTotal>``
    ``jdk.CPULoad`` (fractions of the machine);
``T <jdk.ThreadStart|jdk.ThreadEnd> <ts_ms> <java thread id> <thread name>``
    thread lifetimes (kept in ``events``);
``J <start_ms> <duration_us> <compile level>``
    ``jdk.Compilation``: one method compiled by the JIT, kept in ``system_samples`` as
    :data:`JIT_COMPILE_METRIC` (its length in ms; ``interval_ms`` the same, whole; ``device`` the
    tier).  The local engine records them in every run (``jit.jfr``): it compiles in the thread
    that needs the code, so a compile is time that thread's task stood still
    (:mod:`profiles.jit_clock`).

Why not ``jfr print --json``: it writes every event with its full stack
(``~40 KB`` per sample at useful depth) and must be parsed whole; JfrDump writes
each distinct stack once (``benchmarks/bench_samples.py`` measures both).

Thread ids are Java thread ids, the same numbers as log4j's ``%tid`` in the
task logs, which is how samples are joined to attempts (``attempt_id`` stays
empty here; :mod:`profiles.dataflow.reconstruct` joins).  The job id comes from
``run.json`` beside the recording (``phaseline engine run --jfr`` writes both)
or from the ingest's job id hint.
"""

from __future__ import annotations

import struct
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import orjson

from ingest.base import ReadContext, Row
from ingest.engine_run import run_job_id
from ingest.formats import Format
from ingest.samples_hitune import MalformedRecord, StackTable, malformed_row, normalize_state, sample_row
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.java import compile_java, java_command
from phaseline.schemas import ThreadState

JFR_MAGIC = b"FLR\x00"
#: The start of a chunk's header: magic, major and minor version, the chunk's size in bytes (big-endian).
_CHUNK_HEAD = struct.Struct(">4sHHq")
#: A chunk header's length, and where in it a version 2 header keeps its state byte: 0 once the
#: JVM finished the chunk, non-zero while it writes it (``jdk.jfr.internal.consumer.ChunkHeader``'s
#: ``FILE_STATE_POSITION``; JDK 11's headers keep 0 there).
_CHUNK_HEADER_SIZE = 68
_FILE_STATE_POSITION = 64
SOURCE = "jfr"
DUMPER = Path(__file__).with_name("java") / "JfrDump.java"
HEADER = "#jfrdump\t1"

SAMPLE_TYPES = {
    "jdk.ExecutionSample": "execution",
    "jdk.NativeMethodSample": "native",
    "jdk.ThreadPark": "park",
    "jdk.JavaMonitorWait": "monitor_wait",
    "jdk.JavaMonitorEnter": "monitor_enter",
    "jdk.ThreadSleep": "sleep",
    "jdk.FileRead": "io",
    "jdk.FileWrite": "io",
    "jdk.SocketRead": "io",
    "jdk.SocketWrite": "io",
}
CPU_METRICS = ("jvm_cpu_user", "jvm_cpu_system", "machine_cpu_total")
#: ``system_samples.metric`` of one JIT compile (its length, ms).
JIT_COMPILE_METRIC = "jit_compile_ms"


@cache
def dumper_classes() -> Path:
    """The compiled JfrDump classes (compiled on first use, then cached on disk)."""
    return compile_java("jfrdump", [DUMPER])


def dump_command(path: Path) -> list[str]:
    """The command that streams a recording as JfrDump TSV."""
    return [*java_command("JfrDump", [dumper_classes()], jvm_args=("-Xss4m", "-XX:TieredStopAtLevel=1")), str(path)]


def _state(kind: str, raw_state: str, timeout: int) -> str:
    if kind in ("execution", "native"):
        return normalize_state(raw_state) if raw_state else ThreadState.RUNNABLE.value
    if kind == "monitor_enter":
        return ThreadState.BLOCKED.value
    if kind == "sleep":
        return ThreadState.TIMED_WAITING.value
    if kind in ("park", "monitor_wait"):
        return (ThreadState.TIMED_WAITING if timeout > 0 else ThreadState.WAITING).value
    return ThreadState.RUNNABLE.value  # io: the thread is running (in a read or write)


def parse_dump(lines: Iterator[str], ctx: ReadContext, job_id: str | None) -> Iterator[Row]:
    """Rows from JfrDump's TSV lines (separate from the process for tests and benchmarks)."""
    stacks = StackTable()
    ids: dict[int, int] = {}  # JfrDump's stack number -> stable stack id
    ended = False
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\n")
        if not line or line == HEADER:
            continue
        if line == "#end":
            ended = True
            continue
        if line.startswith("#error\t"):
            raise TraceTruncatedError(ctx.path, f"JDK Flight Recorder stopped reading: {line[7:]}")
        f = line.split("\t")
        try:
            if f[0] == "K":
                sid, new = stacks.intern(f[2:])
                ids[int(f[1])] = sid
                if new is not None:
                    yield new
            elif f[0] == "E":
                ctx.events_read += 1
                _, etype, start, dur_us, tid, name, raw_state, timeout, stack = f
                kind = SAMPLE_TYPES[etype]
                yield sample_row(
                    job_id, None, None, int(tid), name, int(start), kind, _state(kind, raw_state, int(timeout)),
                    ids[int(stack)] if stack != "-1" else None, int(dur_us) / 1000.0, SOURCE,
                )
            elif f[0] == "C":
                ctx.events_read += 1
                ts = int(f[1])
                values = [float(v) * 100.0 for v in f[2:5]]
                if len(values) != len(CPU_METRICS):
                    raise IndexError(f"jdk.CPULoad needs {len(CPU_METRICS)} values")
                ctx.events_read += len(values) - 1  # one row per metric: events_read = rows kept
                for metric, value in zip(CPU_METRICS, values, strict=True):
                    yield Row(
                        "system_samples",
                        {
                            "host": None, "ts_ms": ts, "interval_ms": None, "metric": metric,
                            "device": "jvm" if metric.startswith("jvm") else "all", "value": value,
                            "source": SOURCE,
                        },
                    )
            elif f[0] == "J":
                ctx.events_read += 1
                _, start, dur_us, level = f
                ms = int(dur_us) / 1000.0
                yield Row(
                    "system_samples",
                    {
                        "host": None, "ts_ms": int(start), "interval_ms": round(ms), "metric": JIT_COMPILE_METRIC,
                        "device": f"tier{level}" if level else None, "value": ms, "source": SOURCE,
                    },
                )
            elif f[0] == "T":
                ctx.events_read += 1
                payload = orjson.dumps({"thread_id": int(f[3]), "thread_name": f[4]}).decode()
                yield Row(
                    "events",
                    {"job_id": job_id, "seq": line_no, "event_type": f[1], "ts_ms": int(f[2]), "payload_json": payload},
                )
            else:
                raise MalformedRecord(f"unknown JfrDump line kind {f[0]!r}")
        except (ValueError, KeyError, IndexError) as exc:
            if f[0] not in ("E", "C", "T", "J"):
                ctx.events_read += 1
            yield malformed_row(ctx, line_no, f"bad JfrDump line: {exc}", line, job_id)
    if not ended:
        raise TraceTruncatedError(ctx.path, "the recording ends before JfrDump finished reading it")


def chunk_fault(path: Path) -> tuple[str, int] | None:
    """Where a recording's chunks stop adding up, as ``(what, byte offset)``; ``None`` when each
    chunk header is intact and the chunks fill the file (damage, if any, is inside a chunk).

    A recording is a sequence of chunks, each starting with a header that gives its size;
    a JVM killed mid-recording leaves its last chunk unfinished (no size, or since JDK 14 the
    size of its last flush and a state byte that is not 0) or cut short.
    """
    try:
        size = path.stat().st_size
        with open(path, "rb") as fh:
            offset, number = 0, 1
            while offset < size:
                fh.seek(offset)
                head = fh.read(_CHUNK_HEADER_SIZE)
                if len(head) < _CHUNK_HEAD.size or head[:4] != JFR_MAGIC:
                    if number == 1:
                        return "the file does not start with a chunk header", 0
                    return f"the {size - offset:,} bytes after chunk {number - 1} are no chunk (no chunk header)", offset
                _, major, _, chunk = _CHUNK_HEAD.unpack_from(head)
                if chunk <= 0:
                    return (f"chunk {number}, from byte {offset:,}, was never finished: its header gives no size "
                            "(the JVM stopped while recording it)", offset)  # fmt: skip
                state = head[_FILE_STATE_POSITION] if major == 2 and len(head) == _CHUNK_HEADER_SIZE else 0
                if state != 0:
                    return (f"chunk {number}, from byte {offset:,}, was never finished: its header's state byte is "
                            f"{state}, not 0 (the JVM stopped while recording it)", offset)  # fmt: skip
                if chunk > size - offset:
                    return (f"chunk {number}, from byte {offset:,}, is cut short: its header gives {chunk:,} bytes, "
                            f"the file holds {size - offset:,} of them", offset)  # fmt: skip
                offset += chunk
                number += 1
    except OSError:
        return None
    return None


def read_jfr(path: Path, ctx: ReadContext) -> Iterator[Row]:
    """Read a ``.jfr`` recording's thread samples, waits, I/O and CPU load.

    JFR reads a chunk the JVM never finished (killed mid-recording) up to its last flush
    without a word; :func:`chunk_fault` tells, and every event read is kept before the
    :class:`~phaseline.errors.TraceTruncatedError` that says so.
    """
    job_id = run_job_id(path, ctx)
    proc = subprocess.Popen(
        dump_command(path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8",
        errors="replace",
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    produced = 0
    try:
        try:
            for row in parse_dump(iter(proc.stdout), ctx, job_id):
                produced += 1
                yield row
        except TraceTruncatedError as exc:
            err = proc.stderr.read().strip()
            proc.wait()
            why = exc.message if "stopped reading" in exc.message else f"JfrDump failed: {err[-300:]}"
            fault = chunk_fault(path)
            where = None
            if fault is not None:
                why, where = f"{why}; {fault[0]}", fault[1]
            elif path.is_file():
                why += "; every chunk header is intact, so the damage is inside a chunk"
            if produced == 0:
                raise TraceParseError(
                    path, why, offset=where,
                    hint="is this a complete .jfr file? a JVM killed mid-recording may leave only a partial chunk",
                ) from None
            raise TraceTruncatedError(
                path, f"recording cut short after {ctx.events_read} events: {why}", offset=where
            ) from None
        proc.wait()
        fault = chunk_fault(path)
        if fault is not None:
            raise TraceTruncatedError(
                path, f"recording cut short after {ctx.events_read} events, all it holds: {fault[0]}",
                offset=fault[1],
            )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def _sniff(head: bytes, path: Path) -> bool:
    return head.startswith(JFR_MAGIC)


FORMATS = (
    Format(
        "jfr",
        _sniff,
        read_jfr,
        "JDK Flight Recorder recording: execution samples, waits, I/O, CPU load, JIT compiles",
        record_tables=("samples", "system_samples", "events"),
    ),
)
