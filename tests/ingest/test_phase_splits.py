"""Splitting read+map+collect and reduce+write into parts: by stack samples and by the job's own timers."""

from __future__ import annotations

from pathlib import Path

from ingest.base import ReadContext
from ingest.phases import derive_phases
from ingest.phases.spans import Lane, PhaseSpan
from ingest.phases.splits import (
    MIN_SPLIT_SAMPLES,
    PHASE_NANOS,
    map_stack_phase,
    reduce_stack_phase,
    split_by_samples,
)
from ingest.tasklog import read_task_log
from phaseline.hadoop_names import TaskLogEventKind
from phaseline.schemas import Phase
from tests.ingest.phase_helpers import ev, main_lane

# Stacks of JFR samples of a map task thread in a real engine run (innermost frame first, cut short).
READ_STACK = [
    "org.apache.hadoop.fs.FSInputChecker.read",
    "java.io.DataInputStream.read",
    "org.apache.hadoop.mapreduce.lib.input.FixedLengthRecordReader.nextKeyValue",
    "org.apache.hadoop.mapred.MapTask$NewTrackingRecordReader.nextKeyValue",
    "org.apache.hadoop.mapreduce.task.MapContextImpl.nextKeyValue",
    "org.apache.hadoop.mapreduce.lib.map.WrappedMapper$Context.nextKeyValue",
    "org.apache.hadoop.mapreduce.Mapper.run",
]
COLLECT_STACK = [
    "org.apache.hadoop.mapred.MapTask$MapOutputBuffer$Buffer.write",
    "java.io.DataOutputStream.write",
    "org.apache.hadoop.io.Text.write",
    "org.apache.hadoop.io.serializer.WritableSerialization$WritableSerializer.serialize",
    "org.apache.hadoop.mapred.MapTask$MapOutputBuffer.collect",
    "org.apache.hadoop.mapred.MapTask$NewOutputCollector.write",
    "org.apache.hadoop.mapreduce.task.TaskInputOutputContextImpl.write",
    "org.apache.hadoop.mapreduce.lib.map.WrappedMapper$Context.write",
    "phaseline.engine.SelectivityMapper.map",
    "org.apache.hadoop.mapreduce.Mapper.run",
]
MAP_STACK = [
    "org.apache.hadoop.io.Text.set",
    "phaseline.engine.SelectivityMapper.map",
    "org.apache.hadoop.mapreduce.Mapper.run",
    "org.apache.hadoop.mapred.MapTask.runNewMapper",
]
OTHER_STACK = [
    "org.apache.logging.log4j.core.layout.PatternLayout.encode",
    "org.apache.hadoop.mapred.MapTask.runNewMapper",
]


def test_stack_samples_are_read_map_or_collect_by_their_innermost_hadoop_frame() -> None:
    assert map_stack_phase(READ_STACK) is Phase.READ
    assert map_stack_phase(COLLECT_STACK) is Phase.COLLECT  # although the user's map() is further out
    assert map_stack_phase(MAP_STACK) is Phase.MAP
    assert map_stack_phase(OTHER_STACK) is None
    assert map_stack_phase(READ_STACK[:3]) is Phase.READ  # JFR cut the stack short: still the reader
    waiting = [
        "jdk.internal.misc.Unsafe.park",
        "java.util.concurrent.locks.LockSupport.park",
        "org.apache.hadoop.mapred.MapTask$MapOutputBuffer$Buffer.write",
    ]
    assert map_stack_phase(waiting) is Phase.COLLECT  # waiting for buffer space is collect time


def test_reduce_samples_are_reduce_or_write() -> None:
    write = [
        "org.apache.hadoop.fs.FSOutputSummer.write",
        "org.apache.hadoop.fs.FSDataOutputStream$PositionCache.write",
        "phaseline.engine.RecordOutputFormat$1.write",
        "org.apache.hadoop.mapred.ReduceTask$NewTrackingRecordWriter.write",
        "org.apache.hadoop.mapreduce.task.TaskInputOutputContextImpl.write",
        "org.apache.hadoop.mapreduce.lib.reduce.WrappedReducer$Context.write",
        "org.apache.hadoop.mapreduce.lib.reduce.IdentityReducer.reduce",
        "org.apache.hadoop.mapreduce.Reducer.run",
    ]
    merged_input = [
        "org.apache.hadoop.mapred.IFile$Reader.nextRawValue",
        "org.apache.hadoop.mapred.Merger$MergeQueue.next",
        "org.apache.hadoop.mapreduce.task.ReduceContextImpl.nextKey",
        "org.apache.hadoop.mapreduce.Reducer.run",
        "org.apache.hadoop.mapred.ReduceTask.runNewReducer",
    ]
    final_merge = [
        "org.apache.hadoop.mapred.Merger$MergeQueue.merge",
        "org.apache.hadoop.mapreduce.task.reduce.MergeManagerImpl.finalMerge",
        "org.apache.hadoop.mapred.ReduceTask.run",
    ]
    assert reduce_stack_phase(write) is Phase.WRITE
    assert reduce_stack_phase(merged_input) is Phase.REDUCE
    assert reduce_stack_phase(final_merge) is None


def test_split_by_samples_lays_the_parts_out_in_proportion() -> None:
    span = PhaseSpan("read+map+collect", Lane.MAIN, 100, 200, 100, 1000, 10)
    parts = split_by_samples(
        span,
        {Phase.READ: 1, Phase.MAP: 1, Phase.COLLECT: 4},
        {Phase.READ: (1000, 10), Phase.COLLECT: (2000, 10)},
    )
    assert [(p.phase, p.start_ms, p.end_ms, p.dur_ms, p.data_bytes) for p in parts] == [
        ("read", 100, 117, 17, 1000),
        ("map", 117, 133, 16, None),
        ("collect", 133, 200, 67, 2000),
    ]
    few = {Phase.READ: MIN_SPLIT_SAMPLES - 1}
    assert split_by_samples(span, few, {}) == [span]


def _timed_map(timers: dict[str, int], samples: dict[Phase, int]) -> list[tuple[str, int, int]]:
    """A map whose read+map+collect span is [10, 110) ms."""
    events = [
        ev(0, TaskLogEventKind.TASK_START),
        ev(10, TaskLogEventKind.SPLIT, nbytes=1000),
        ev(11, TaskLogEventKind.SORT_BUFFER),
        ev(110, TaskLogEventKind.FLUSH),
        ev(110, TaskLogEventKind.SPILL_START),
        ev(120, TaskLogEventKind.SPILL_FINISH, index="0"),
        ev(125, TaskLogEventKind.COMMIT_PENDING),
        ev(128, TaskLogEventKind.DONE),
    ]
    counters = {(PHASE_NANOS, name): nanos for name, nanos in timers.items()}
    spans = derive_phases(
        "attempt_1_0001_m_000000_0", "MAP", events, counters, start_ms=0, finish_ms=130, samples=samples
    )
    return [(p, b, e) for p, b, e in main_lane(spans) if b >= 10 and e <= 110]


def test_the_jobs_own_timers_split_a_map_before_its_stack_samples() -> None:
    """
    span:    |split      read+map+collect (100 ms)       |flush
    timers:   READ 12 ms, COLLECT 30 ms; samples say all read
    rows:    |read 12|map 58                 |collect 30  |
    """
    many_reads = {Phase.READ: 50}
    assert _timed_map({"READ": 12_000_000, "COLLECT": 30_000_000}, many_reads) == [
        ("read", 10, 22),
        ("map", 22, 80),
        ("collect", 80, 110),
    ]
    # timers adding up to more than the span (ms-resolution log times): no map, read and collect in proportion
    assert _timed_map({"READ": 50_000_000, "COLLECT": 150_000_000}, {}) == [
        ("read", 10, 35),
        ("map", 35, 35),
        ("collect", 35, 110),
    ]
    # without the collect timer the stack samples split it, as before
    assert _timed_map({"READ": 12_000_000}, many_reads) == [
        ("read", 10, 110),
        ("map", 110, 110),
        ("collect", 110, 110),
    ]
    assert _timed_map({}, {}) == [("read+map+collect", 10, 110)]


def test_timed_parts_keep_their_measured_microseconds() -> None:
    # laid out in whole ms like the log lines, a 4.6 ms read is 5 ms; dur_us keeps what the timer measured,
    # and map gets the rest of the 100 ms span to the microsecond
    events = [
        ev(0, TaskLogEventKind.TASK_START),
        ev(10, TaskLogEventKind.SPLIT, nbytes=1000),
        ev(110, TaskLogEventKind.FLUSH),
        ev(110, TaskLogEventKind.SPILL_START),
        ev(120, TaskLogEventKind.SPILL_FINISH, index="0"),
        ev(128, TaskLogEventKind.DONE),
    ]
    timers = {(PHASE_NANOS, "READ"): 4_600_400, (PHASE_NANOS, "COLLECT"): 30_200_000}
    spans = derive_phases("attempt_1_0001_m_000000_0", "MAP", events, timers, start_ms=0, finish_ms=130)
    timed = {s.phase: (s.dur_ms, s.dur_us) for s in spans if s.phase in ("read", "map", "collect")}
    assert timed == {"read": (5, 4_600), "map": (65, 65_200), "collect": (30, 30_200)}
    # phases no timer measured have none
    assert {s.dur_us for s in spans if s.phase not in timed} == {None}
    # split by stack samples: no timer, no microseconds
    sampled = derive_phases(
        "attempt_1_0001_m_000000_0",
        "MAP",
        events,
        {},
        start_ms=0,
        finish_ms=130,
        samples={Phase.READ: 10, Phase.MAP: 10, Phase.COLLECT: 10},
    )
    assert {s.phase for s in sampled} >= {"read", "map", "collect"}
    assert {s.dur_us for s in sampled} == {None}


def test_the_jobs_own_write_timer_splits_a_reduce() -> None:
    events = [
        ev(0, TaskLogEventKind.TASK_START),
        ev(5, TaskLogEventKind.SHUFFLE_INIT),
        ev(10, TaskLogEventKind.FETCH_START),
        ev(40, TaskLogEventKind.FINAL_MERGE),
        ev(50, TaskLogEventKind.MERGE_LAST_PASS),
        ev(100, TaskLogEventKind.COMMIT_PENDING),
        ev(104, TaskLogEventKind.DONE),
    ]
    spans = derive_phases(
        "attempt_1_0001_r_000000_0",
        "REDUCE",
        events,
        {(PHASE_NANOS, "WRITE"): 20_400_000},
        start_ms=0,
        finish_ms=105,
        samples={Phase.WRITE: 40, Phase.REDUCE: 10},
    )
    assert [(p, b, e) for p, b, e in main_lane(spans) if p in ("reduce", "write")] == [
        ("reduce", 50, 80),
        ("write", 80, 100),
    ]


def test_a_recorded_run_without_the_timers_is_split_by_its_stack_samples() -> None:
    # The bundled JFR run was made before the benchmark job timed itself: no timer counters, and its maps
    # and reduces are split by the task threads' JFR samples alone.
    path = Path(__file__).parents[2] / "sample_traces" / "bench-8mb-sel0.6-jfr" / "logs" / "job.log"
    rows = [r.as_dict() | {"table": r.table} for r in read_task_log(path, ReadContext(path))]
    assert not [r for r in rows if r["table"] == "counters" and r["group_name"] == PHASE_NANOS]
    parts: dict[str, list[str]] = {}
    for r in rows:
        if r["table"] == "attempt_phases" and r["lane"] == "main":
            parts.setdefault(r["attempt_id"][-11:], []).append(r["phase"])
    split = {
        a: [p for p in ps if p in ("read", "map", "collect", "reduce", "write")] for a, ps in parts.items()
    }
    assert split == {f"_m_00000{i}_0": ["read", "map", "collect"] for i in range(4)} | {
        f"_r_00000{i}_0": ["reduce", "write"] for i in range(2)
    }
