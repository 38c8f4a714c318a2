"""JFR recordings and jstack dumps -> samples: the stream parser, bad input, and real JVMs."""

from __future__ import annotations

import json
import re
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from ingest.base import ReadContext, Row
from ingest.formats import detect
from ingest.jfr import SAMPLE_TYPES, parse_dump, read_jfr
from ingest.jstack import read_jstack
from ingest.pipeline import ingest_paths
from phaseline import schemas
from phaseline.errors import TraceParseError, TraceTruncatedError
from phaseline.java import compile_java, java_command, java_tool
from phaseline.store import Store
from tests.conftest import REPO


def vals(row: Row) -> dict[str, Any]:
    """A row's values by column name (samples rows come as tuples, the store's fast path)."""
    if isinstance(row.values, dict):
        return row.values
    return dict(zip(schemas.table(row.table).row_columns, row.values, strict=True))


RECORDING = REPO / "sample_traces" / "bench-8mb-sel0.6-jfr" / "recording.jfr"


def _test_jvm(name: str) -> Path:
    """The classes of the test program ``tests/java/<name>.java``, compiled once."""
    return compile_java(f"phaseline-test-{name.lower()}", [REPO / "tests" / "java" / f"{name}.java"])


def _dump_lines() -> list[str]:
    return [
        "#jfrdump\t1",
        "K\t0\ta.B.c\torg.apache.hadoop.mapred.MapTask.run",
        "E\tjdk.ExecutionSample\t1000\t0\t69\tLocalJobRunner Map Task Executor #0\tSTATE_RUNNABLE\t0\t0",
        "E\tjdk.ThreadPark\t1010\t25000\t73\tSpillThread\t\t0\t0",
        "E\tjdk.JavaMonitorWait\t1020\t5000\t73\tSpillThread\t\t100\t-1",
        "C\t1000\t0.25\t0.05\t0.5",
        "T\tjdk.ThreadStart\t990\t73\tSpillThread",
        "E\tjdk.ExecutionSample\tnot-a-time\t0\t69\tx\tSTATE_RUNNABLE\t0\t0",
    ]


def test_jfrdump_lines_become_samples_stacks_and_cpu() -> None:
    ctx = ReadContext(Path("r.jfr"))
    rows = list(parse_dump(iter([*_dump_lines(), "#end"]), ctx, "job_1_0001"))
    samples = [vals(r) for r in rows if r.table == "samples"]
    assert [(s["thread_id"], s["sample_type"], s["state"], s["duration_ms"]) for s in samples] == [
        (69, "execution", "RUNNABLE", 0.0), (73, "park", "WAITING", 25.0), (73, "monitor_wait", "TIMED_WAITING", 5.0),
    ]
    assert samples[0]["stack_id"] == samples[1]["stack_id"]
    assert samples[2]["stack_id"] is None
    (stack,) = [vals(r) for r in rows if r.table == "stacks"]
    assert stack["frames"] == ["a.B.c", "org.apache.hadoop.mapred.MapTask.run"]
    assert stack["top_frame"] == "a.B.c"
    cpu = {vals(r)["metric"]: vals(r)["value"] for r in rows if r.table == "system_samples"}
    assert cpu == {"jvm_cpu_user": 25.0, "jvm_cpu_system": 5.0, "machine_cpu_total": 50.0}
    events = Counter(vals(r)["event_type"] for r in rows if r.table == "events")
    assert events == {"jdk.ThreadStart": 1, "malformed": 1}
    # reconciliation: every record read is kept once (samples + cpu rows + events)
    assert ctx.events_read == 3 + 3 + 2
    assert any(":8: bad JfrDump line" in n for n in ctx.notes)


def test_a_dump_without_its_end_marker_is_truncated_after_its_rows() -> None:
    ctx = ReadContext(Path("r.jfr"))
    rows: list[Row] = []
    with pytest.raises(TraceTruncatedError):
        rows.extend(parse_dump(iter(_dump_lines()[:3]), ctx, None))
    assert [r.table for r in rows] == ["stacks", "samples"]


JSTACK = """\
4242:
2026-11-21 13:56:31.500
Full thread dump OpenJDK 64-Bit Server VM (17.0.15+6 mixed mode, sharing):

"main" #1 prio=5 os_prio=0 cpu=53.31ms elapsed=2.82s tid=0x1 nid=0x1d9e waiting on condition  [0x2]
   java.lang.Thread.State: TIMED_WAITING (sleeping)
\tat java.lang.Thread.sleep(java.base@17.0.15/Native Method)
\tat Sleeper.main(Sleeper.java:1)

"GC Thread#0" os_prio=0 cpu=0.10ms elapsed=2.83s tid=0x3 nid=0x1da0 runnable

"broken" prio=5 os_prio=0 tid=0x4 nid=0x5 runnable
   java.lang.Thread.State: RUNNABLE

"busy worker" #12 daemon prio=5 os_prio=0 cpu=2000ms elapsed=2.0s tid=0x5 nid=0x6 runnable  [0x7]
   java.lang.Thread.State: RUNNABLE
\tat Sleeper.lambda$main$0(Sleeper.java:1)
\t- locked <0x000000069ec02f40> (a java.lang.Object)
\tat java.lang.Thread.run(java.base@17.0.15/Thread.java:840)
"""


def test_jstack_dump_threads_become_samples(tmp_path: Path) -> None:
    path = tmp_path / "dumps.txt"
    path.write_text(JSTACK)
    fmt = detect(path)
    assert fmt is not None
    assert fmt.name == "jstack"
    ctx = ReadContext(path)
    rows = list(read_jstack(path, ctx))
    samples = [vals(r) for r in rows if r.table == "samples"]
    assert [(s["thread_id"], s["thread_name"], s["state"], s["ts_ms"] % 60000) for s in samples] == [
        (1, "main", "TIMED_WAITING", 31500), (12, "busy worker", "RUNNABLE", 31500),
    ]
    frames = {vals(r)["top_frame"]: vals(r)["frames"] for r in rows if r.table == "stacks"}
    assert frames["Sleeper.lambda$main$0"] == ["Sleeper.lambda$main$0", "java.lang.Thread.run"]
    (bad,) = [vals(r) for r in rows if r.table == "events"]
    assert bad["event_type"] == "malformed"
    assert ctx.events_read == 3
    assert any(f"{path}:12:" in n and "without '#id'" in n for n in ctx.notes)


def test_a_dump_time_that_is_no_date_keeps_its_dump_as_malformed_and_the_others(tmp_path: Path) -> None:
    # Month 13 raised a ValueError out of the reader: the whole ingest stopped, other files' rows lost
    good = tmp_path / "good.txt"
    good.write_text(JSTACK)
    bad = tmp_path / "bad.txt"
    bad.write_text(JSTACK + "\n" + JSTACK.replace("2026-11-21 13:56:31.500", "2026-13-21 13:56:32.500"))
    ctx = ReadContext(bad)
    rows = list(read_jstack(bad, ctx))
    samples = [vals(r) for r in rows if r.table == "samples"]
    assert [s["thread_id"] for s in samples] == [1, 12]  # the first dump's
    events = [json.loads(vals(r)["payload_json"]) for r in rows if r.table == "events"]
    assert [(e["line"], e["error"].split(":")[0]) for e in events] == [
        (12, "thread header without '#id'"),
        (22, "dump time"),
        *((line, "thread header before any dump time and banner") for line in (25, 30, 32, 35)),  # untimed
    ]
    assert ctx.events_read == len(samples) + len(events)
    results = ingest_paths([good, bad], Store(tmp_path / "store")).results
    assert [r.status for r in results] == ["landed", "landed"]


def test_a_thread_id_past_64_bits_is_malformed(tmp_path: Path) -> None:
    path = tmp_path / "dumps.txt"
    path.write_text(JSTACK.replace('"busy worker" #12 ', '"busy worker" #99999999999999999999 '))
    ctx = ReadContext(path)
    rows = list(read_jstack(path, ctx))
    assert [vals(r)["thread_id"] for r in rows if r.table == "samples"] == [1]
    assert any(f"{path}:15:" in n and "thread id 99999999999999999999 does not fit in 64 bits" in n
               for n in ctx.notes)  # fmt: skip
    assert ingest_paths([path], Store(tmp_path / "store")).results[0].status == "landed"


@pytest.mark.slow
def test_real_jcmd_dumps_of_a_running_jvm(tmp_path: Path) -> None:
    proc = subprocess.Popen([*java_command("BusyWorker", [_test_jvm("BusyWorker")]), "8000"])
    try:
        time.sleep(1.0)
        dumps = tmp_path / "dumps.txt"
        with open(dumps, "w") as out:
            for i in range(2):
                if i:
                    time.sleep(1.1)  # dump timestamps have one-second resolution, like a periodic sampler's
                subprocess.run([java_tool("jcmd"), str(proc.pid), "Thread.print"], stdout=out, check=True, timeout=60)
                out.flush()
    finally:
        proc.kill()
        proc.wait()
    ctx = ReadContext(dumps)
    rows = list(read_jstack(dumps, ctx))
    samples = [vals(r) for r in rows if r.table == "samples"]
    by_name = {(s["thread_name"], s["state"]) for s in samples}
    assert ("main", "TIMED_WAITING") in by_name
    assert ("busy worker", "RUNNABLE") in by_name
    assert len({s["ts_ms"] for s in samples}) == 2  # two dumps
    assert not [r for r in rows if r.table == "events"]
    assert ctx.events_read == len(samples)


@pytest.mark.slow
def test_recording_matches_jfr_summary_counts() -> None:
    # oracle: the JDK's own `jfr summary` counts events by type
    summary = subprocess.run([java_tool("jfr"), "summary", str(RECORDING)], capture_output=True, text=True, check=True)
    expected = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(jdk\.\w+)\s+(\d+)\s+\d+\s*$", summary.stdout, re.M)}
    ctx = ReadContext(RECORDING)
    rows = list(read_jfr(RECORDING, ctx))
    kinds = Counter(vals(r)["sample_type"] for r in rows if r.table == "samples")
    want: Counter[str] = Counter()
    for event, kind in SAMPLE_TYPES.items():
        want[kind] += expected.get(event, 0)
    assert kinds == +want
    cpu_rows = sum(1 for r in rows if r.table == "system_samples")
    assert cpu_rows == 3 * expected["jdk.CPULoad"]
    assert sum(1 for r in rows if r.table == "events") == expected["jdk.ThreadStart"] + expected["jdk.ThreadEnd"]
    assert ctx.events_read == sum(1 for r in rows if r.table != "stacks")
    assert {vals(r)["job_id"] for r in rows if r.table == "samples"} == {"job_local1827494099_0001"}


def test_chunk_fault_finds_where_a_recordings_chunks_stop_adding_up(tmp_path: Path) -> None:
    from ingest.jfr import chunk_fault

    data = RECORDING.read_bytes()
    whole = tmp_path / "whole.jfr"
    whole.write_bytes(data + data)  # two chunks back to back: a recording JFR rotated once
    assert chunk_fault(whole) is None
    unfinished = tmp_path / "unfinished.jfr"
    unfinished.write_bytes(data + data[:8] + bytes(8) + data[16:5000])  # a chunk the JVM never closed
    assert chunk_fault(unfinished) == (
        f"chunk 2, from byte {len(data):,}, was never finished: its header gives no size "
        "(the JVM stopped while recording it)",
        len(data),
    )
    other = tmp_path / "other.jfr"
    other.write_bytes(b"not a recording at all")
    assert chunk_fault(other) == ("the file does not start with a chunk header", 0)


@pytest.mark.slow
def test_damaged_recordings_name_the_file_and_keep_what_was_read(tmp_path: Path) -> None:
    data = RECORDING.read_bytes()
    cut = tmp_path / "cut.jfr"
    cut.write_bytes(data[: len(data) // 2])  # a JVM killed mid-recording
    with pytest.raises(TraceParseError) as err:
        list(read_jfr(cut, ReadContext(cut)))
    assert str(cut) in str(err.value)
    assert "stopped reading" in str(err.value)
    # the place: the recording's one chunk (its header says how long it is) ends early
    assert err.value.offset == 0
    assert f"chunk 1, from byte 0, is cut short: its header gives {len(data):,} bytes" in str(err.value)
    tail = tmp_path / "tail.jfr"
    tail.write_bytes(data + b"garbage after the last chunk")
    ctx = ReadContext(tail)
    rows: list[Row] = []
    with pytest.raises(TraceTruncatedError) as cut_err:
        rows.extend(read_jfr(tail, ctx))
    assert sum(1 for r in rows if r.table == "samples") == 733  # every event before the damage
    assert cut_err.value.offset == len(data)
    assert "the 28 bytes after chunk 1 are no chunk" in str(cut_err.value)
    # bytes zeroed inside the chunk: its header still adds up, so the damage is inside it
    inside = tmp_path / "inside.jfr"
    inside.write_bytes(data[:200_000] + bytes(1000) + data[201_000:])
    with pytest.raises(TraceParseError) as in_err:
        list(read_jfr(inside, ReadContext(inside)))
    assert "every chunk header is intact, so the damage is inside a chunk" in str(in_err.value)


@pytest.mark.slow
def test_a_park_until_a_deadline_is_timed_waiting(tmp_path: Path) -> None:
    # LockSupport.parkUntil: JFR records no timeout (Long.MIN_VALUE, as an untimed park) and the deadline
    # in `until`; read by the timeout alone, its parks were WAITING, the state of a park with no limit
    classes = _test_jvm("Parks")
    recording = tmp_path / "parks.jfr"
    jfr = f"-XX:StartFlightRecording:filename={recording}"
    subprocess.run(java_command("Parks", [classes], jvm_args=(jfr,)), capture_output=True, check=True, timeout=120)
    ctx = ReadContext(recording)
    parks = {(s["thread_name"], s["state"]) for r in read_jfr(recording, ctx) if r.table == "samples"
             if (s := vals(r))["sample_type"] == "park"}  # fmt: skip
    assert sorted(p for p in parks if p[0].startswith("park")) == [
        ("park", "WAITING"), ("park nanos", "TIMED_WAITING"), ("park until", "TIMED_WAITING"),
    ]


def test_chunk_fault_reads_the_state_byte_of_a_chunk_the_jvm_never_finished(tmp_path: Path) -> None:
    # Since JDK 14 the JVM writes a chunk's size at each flush and marks the chunk finished (state byte 0)
    # only when it closes it: a JVM killed after a flush leaves a chunk whose size adds up
    from ingest.jfr import chunk_fault

    data = bytearray(RECORDING.read_bytes())
    assert data[64] == 0
    data[64] = 7  # what `kill -9` left in a real repository chunk after seven flushes
    unfinished = tmp_path / "unfinished.jfr"
    unfinished.write_bytes(bytes(data))
    assert chunk_fault(unfinished) == (
        "chunk 1, from byte 0, was never finished: its header's state byte is 7, not 0 "
        "(the JVM stopped while recording it)",
        0,
    )


@pytest.mark.slow
def test_a_recording_of_a_jvm_killed_mid_recording_lands_partial_with_every_event(tmp_path: Path) -> None:
    # The chunk a JVM killed with SIGKILL left in its repository: JFR reads it to its last flush without
    # a word, and it had landed as a complete recording
    repository = tmp_path / "repository"
    options = (f"-XX:FlightRecorderOptions:repository={repository}", "-XX:StartFlightRecording")
    proc = subprocess.Popen(java_command("BusyWorker", [_test_jvm("BusyWorker")], jvm_args=options),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    chunk = None
    try:
        deadline = time.monotonic() + 60
        while chunk is None and time.monotonic() < deadline:
            time.sleep(0.2)
            for path in repository.rglob("*.jfr"):
                head = path.read_bytes()[:68]
                if len(head) == 68 and int.from_bytes(head[24:32], "big") and path.stat().st_size > 20_000:
                    chunk = path  # flushed once at least: it holds its metadata and events
    finally:
        proc.kill()  # SIGKILL
        proc.wait()
    assert chunk is not None, "the JVM flushed no chunk to its repository"
    assert chunk.read_bytes()[64] != 0
    summary = subprocess.run([java_tool("jfr"), "summary", str(chunk)], capture_output=True, text=True, check=True)
    expected = {m.group(1): int(m.group(2)) for m in re.finditer(r"^\s*(jdk\.\w+)\s+(\d+)\s+\d+\s*$", summary.stdout, re.M)}
    want = sum(n for event, n in expected.items() if event in SAMPLE_TYPES)
    assert want > 0
    (result,) = ingest_paths([chunk], Store(tmp_path / "store")).results
    assert result.status == "partial"
    assert result.error is not None
    assert "chunk 1, from byte 0, was never finished: its header's state byte is" in result.error
    assert result.rows["samples"] == want  # every sample the chunk holds
