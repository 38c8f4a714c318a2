"""attempt_phases from attempt events: timelines, edge cases, invariants, and a real engine run."""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ingest.base import ReadContext
from ingest.phases import derive_phases
from ingest.phases.spans import COVERAGE_TOLERANCE_MS, Lane, PhaseSpan
from ingest.phases.splits import (
    MIN_SPLIT_SAMPLES,
    PHASE_NANOS,
    map_stack_phase,
    reduce_stack_phase,
    split_by_samples,
)
from ingest.pipeline import ingest_paths
from ingest.tasklog import read_task_log
from ingest.tasklog_patterns import TaskEvent
from phaseline.hadoop_names import TaskLogEventKind
from phaseline.schemas import Phase
from phaseline.store import Store

TASK = "org.apache.hadoop.mapreduce.TaskCounter"
_line = itertools.count(1)


def ev(ts: int, kind: TaskLogEventKind, thread: str = "main", *, nbytes: int | None = None, records: int | None = None,
       **fields: str) -> TaskEvent:
    return TaskEvent(next(_line), ts, thread, None, kind, kind.value, tuple(sorted(fields.items())), "",
                     nbytes, records)


def main_lane(spans: list[PhaseSpan]) -> list[tuple[str, int, int]]:
    return [(p.phase, p.start_ms, p.end_ms) for p in spans if p.lane is Lane.MAIN]


def test_map_with_a_background_spill_a_final_spill_and_a_merge() -> None:
    """
    main:        setup |split  read+map+collect      |flush spill |merge      |commit |done other|
    time:        0      10                            60     70    80          95     98         100
    SpillThread:              |spill 0 (30..50)|
    """
    events = [
        ev(0, TaskLogEventKind.TASK_START), ev(10, TaskLogEventKind.SPLIT, nbytes=1000),
        ev(11, TaskLogEventKind.SORT_BUFFER),
        ev(30, TaskLogEventKind.SPILL_START), ev(30, TaskLogEventKind.SPILL_BYTES, nbytes=600),
        ev(30, TaskLogEventKind.SPILL_RECORDS, records=6),
        ev(50, TaskLogEventKind.SPILL_FINISH, "SpillThread", index="0"),
        ev(60, TaskLogEventKind.FLUSH), ev(60, TaskLogEventKind.SPILL_START), ev(60, TaskLogEventKind.SPILL_BYTES, nbytes=400),
        ev(60, TaskLogEventKind.SPILL_RECORDS, records=4), ev(70, TaskLogEventKind.SPILL_FINISH, index="1"),
        ev(72, TaskLogEventKind.MERGE_PASS), ev(75, TaskLogEventKind.MERGE_LAST_PASS, nbytes=1010),
        ev(80, TaskLogEventKind.COMMIT_PENDING), ev(95, TaskLogEventKind.DONE), ev(100, TaskLogEventKind.TASK_FINISH),
    ]
    counters = {(TASK, "MAP_INPUT_RECORDS"): 10}
    spans = derive_phases("attempt_1_0001_m_000000_0", "MAP", events, counters, start_ms=0, finish_ms=100)
    assert main_lane(spans) == [
        ("setup", 0, 10), ("read+map+collect", 10, 60), ("spill", 60, 70), ("merge", 70, 80),
        ("commit", 80, 95), ("other", 95, 100)]
    by = {(p.phase, p.lane): p for p in spans}
    assert (by[("read+map+collect", Lane.MAIN)].data_bytes, by[("read+map+collect", Lane.MAIN)].data_records) == (
        1000, 10)
    assert (by[("spill", Lane.MAIN)].data_bytes, by[("spill", Lane.MAIN)].data_records) == (400, 4)
    background = by[("spill", Lane.BACKGROUND)]
    assert (background.start_ms, background.end_ms, background.dur_ms) == (30, 50, 20)
    assert (background.data_bytes, background.data_records) == (600, 6)
    assert by[("merge", Lane.MAIN)].data_bytes == 1010
    assert by[("merge", Lane.MAIN)].data_records == 10


def test_the_map_merge_holds_every_reduce_partition() -> None:
    """MapTask.mergeParts merges each reduce's partition of the spills, one last pass each: the merge's
    data is their sum (it had been the last partition's alone, a 1/R of the records' bytes)."""
    events = [
        ev(0, TaskLogEventKind.TASK_START), ev(10, TaskLogEventKind.SPLIT, nbytes=1000), ev(11, TaskLogEventKind.SORT_BUFFER),
        ev(30, TaskLogEventKind.SPILL_START), ev(30, TaskLogEventKind.SPILL_BYTES, nbytes=600),
        ev(30, TaskLogEventKind.SPILL_RECORDS, records=6), ev(50, TaskLogEventKind.SPILL_FINISH, "SpillThread", index="0"),
        ev(60, TaskLogEventKind.FLUSH), ev(60, TaskLogEventKind.SPILL_START), ev(60, TaskLogEventKind.SPILL_BYTES, nbytes=400),
        ev(60, TaskLogEventKind.SPILL_RECORDS, records=4), ev(70, TaskLogEventKind.SPILL_FINISH, index="1"),
        ev(72, TaskLogEventKind.MERGE_PASS), ev(73, TaskLogEventKind.MERGE_LAST_PASS, nbytes=560),
        ev(74, TaskLogEventKind.MERGE_PASS), ev(75, TaskLogEventKind.MERGE_LAST_PASS, nbytes=450),
        ev(80, TaskLogEventKind.COMMIT_PENDING), ev(95, TaskLogEventKind.DONE), ev(100, TaskLogEventKind.TASK_FINISH),
    ]
    spans = derive_phases("attempt_1_0001_m_000000_0", "MAP", events, {}, start_ms=0, finish_ms=100)
    merge = next(p for p in spans if (p.phase, p.lane) == ("merge", Lane.MAIN))
    assert (merge.data_bytes, merge.data_records) == (1010, 10)


def _map_merging_in_two_passes(last_pass_bytes: int) -> list[TaskEvent]:
    """Three spills merged at sort factor 2: an intermediate pass, then the last one (as logged by a real
    LocalJobRunner map with ``mapreduce.map.output.compress=true``: the last pass's size was negative)."""
    return [
        ev(0, TaskLogEventKind.TASK_START), ev(10, TaskLogEventKind.SPLIT, nbytes=2097100), ev(11, TaskLogEventKind.SORT_BUFFER),
        ev(20, TaskLogEventKind.SPILL_START), ev(20, TaskLogEventKind.SPILL_BYTES, nbytes=725118),
        ev(30, TaskLogEventKind.SPILL_FINISH, "SpillThread", index="0"),
        ev(40, TaskLogEventKind.SPILL_START), ev(40, TaskLogEventKind.SPILL_BYTES, nbytes=725118),
        ev(50, TaskLogEventKind.SPILL_FINISH, "SpillThread", index="1"),
        ev(60, TaskLogEventKind.FLUSH), ev(60, TaskLogEventKind.SPILL_START), ev(60, TaskLogEventKind.SPILL_BYTES, nbytes=688806),
        ev(65, TaskLogEventKind.SPILL_FINISH, index="2"),
        ev(66, TaskLogEventKind.MERGE_PASS, segments="3"), ev(67, TaskLogEventKind.MERGE_PASS, segments="2", total="3"),
        ev(75, TaskLogEventKind.MERGE_LAST_PASS, nbytes=last_pass_bytes),
        ev(80, TaskLogEventKind.COMMIT_PENDING), ev(95, TaskLogEventKind.DONE), ev(100, TaskLogEventKind.TASK_FINISH),
    ]


def test_after_an_intermediate_pass_the_merge_holds_the_bytes_it_wrote() -> None:
    # Merger logs the last pass's "total size" as segment lengths (compressed on disk) less the
    # uncompressed bytes the intermediate pass read: -2,173,356 bytes, the merge's data had been negative
    compressed = _map_merging_in_two_passes(-2173356)
    counters = {(TASK, "MAP_OUTPUT_MATERIALIZED_BYTES"): 309291}
    merge = next(p for p in derive_phases("m", "MAP", compressed, counters, start_ms=0, finish_ms=100)
                 if p.phase == "merge")
    assert merge.data_bytes == 309291
    # uncompressed, the same counter (the logged size would agree with it but for IFile's framing)
    plain = _map_merging_in_two_passes(2139000)
    merge = next(p for p in derive_phases("m", "MAP", plain, {(TASK, "MAP_OUTPUT_MATERIALIZED_BYTES"): 2139150},
                                          start_ms=0, finish_ms=100) if p.phase == "merge")
    assert merge.data_bytes == 2139150
    # no counter: the logged size when it can be one, else unknown (never a negative size)
    for logged, expected in ((2139000, 2139000), (-2173356, None)):
        merge = next(p for p in derive_phases("m", "MAP", _map_merging_in_two_passes(logged), {},
                                              start_ms=0, finish_ms=100) if p.phase == "merge")
        assert merge.data_bytes == expected


def test_a_compressed_final_merge_counts_memory_and_disk_in_one_unit() -> None:
    # Fetched 306,167 bytes that decompress to 2,180,986 (x7.1); at the final merge one map output is
    # on disk (its compressed length) and one in memory (its records' bytes): the latter is counted
    # at the fetch ratio, so the sort's bytes are the shuffle's unit, not a mix of the two.
    events = [
        ev(5, TaskLogEventKind.SHUFFLE_INIT),
        ev(8, TaskLogEventKind.FETCH_START, "fetcher#1", nbytes=2180986, len="306167"),
        ev(9, TaskLogEventKind.FETCH_START, "fetcher#1", nbytes=2181090, len="305904"),
        ev(40, TaskLogEventKind.FINAL_MERGE), ev(41, TaskLogEventKind.FINAL_MERGE_DISK, nbytes=305904),
        ev(42, TaskLogEventKind.FINAL_MERGE_MEMORY, nbytes=2180986), ev(50, TaskLogEventKind.MERGE_LAST_PASS, nbytes=4362050),
        ev(60, TaskLogEventKind.COMMIT_PENDING), ev(70, TaskLogEventKind.DONE),
    ]
    sort = next(p for p in derive_phases("r", "REDUCE", events, {}, start_ms=0, finish_ms=75) if p.phase == "sort")
    assert sort.data_bytes == 305904 + round(2180986 * (306167 + 305904) / (2180986 + 2181090))
    assert sort.data_bytes == pytest.approx(306167 + 305904, rel=1e-3)


def test_a_single_spill_is_renamed_so_the_merge_processes_no_data() -> None:
    """One spill: MapTask.mergeParts renames the spill file (numSpills == 1); the merge span has no data."""
    events = [
        ev(0, TaskLogEventKind.TASK_START), ev(10, TaskLogEventKind.SPLIT, nbytes=1000), ev(11, TaskLogEventKind.SORT_BUFFER),
        ev(60, TaskLogEventKind.FLUSH), ev(60, TaskLogEventKind.SPILL_START), ev(60, TaskLogEventKind.SPILL_BYTES, nbytes=900),
        ev(60, TaskLogEventKind.SPILL_RECORDS, records=9), ev(70, TaskLogEventKind.SPILL_FINISH, index="0"),
        ev(72, TaskLogEventKind.COMMIT_PENDING), ev(80, TaskLogEventKind.DONE), ev(81, TaskLogEventKind.TASK_FINISH),
    ]
    counters = {(TASK, "MAP_INPUT_RECORDS"): 9, (TASK, "MAP_OUTPUT_MATERIALIZED_BYTES"): 950}
    spans = derive_phases("attempt_1_0001_m_000000_0", "MAP", events, counters, start_ms=0, finish_ms=81)
    by = {(p.phase, p.lane): p for p in spans}
    merge = by[("merge", Lane.MAIN)]
    assert (merge.start_ms, merge.end_ms) == (70, 72)
    assert (merge.data_bytes, merge.data_records) == (0, 0)
    assert (by[("spill", Lane.MAIN)].data_bytes, by[("spill", Lane.MAIN)].data_records) == (900, 9)


def test_a_background_spill_still_running_at_the_flush_is_clipped_there() -> None:
    """The task thread waits for it after the flush: that wait is the main lane's spill."""
    events = [
        ev(0, TaskLogEventKind.SPLIT), ev(1, TaskLogEventKind.SORT_BUFFER), ev(20, TaskLogEventKind.SPILL_START),
        ev(30, TaskLogEventKind.FLUSH), ev(40, TaskLogEventKind.SPILL_FINISH, "SpillThread", index="0"),
        ev(41, TaskLogEventKind.SPILL_START), ev(50, TaskLogEventKind.SPILL_FINISH, index="1"), ev(60, TaskLogEventKind.DONE),
    ]
    spans = derive_phases("a", "MAP", events, {}, start_ms=0, finish_ms=60)
    by = {(p.phase, p.lane): p for p in spans}
    assert (by[("spill", Lane.BACKGROUND)].dur_ms, by[("spill", Lane.BACKGROUND)].end_ms) == (10, 30)
    assert (by[("spill", Lane.MAIN)].start_ms, by[("spill", Lane.MAIN)].end_ms) == (30, 50)


def test_map_only_job_reads_maps_and_writes_in_one_span() -> None:
    events = [ev(5, TaskLogEventKind.SPLIT), ev(50, TaskLogEventKind.COMMIT_PENDING), ev(55, TaskLogEventKind.DONE)]
    spans = derive_phases("a", "MAP", events, {(TASK, "MAP_INPUT_RECORDS"): 7}, start_ms=0, finish_ms=60)
    assert main_lane(spans) == [("setup", 0, 5), ("read+map+write", 5, 50), ("commit", 50, 55), ("other", 55, 60)]


def test_reduce_phases_and_background_merges() -> None:
    """
    main:    setup |init wait |fetch   shuffle              |finalMerge sort |reduce+write |commit| other
    time:    0      5          8                             40          50   60           70     75
    merger:                       |in-memory merge 20..30|
    """
    events = [
        ev(5, TaskLogEventKind.SHUFFLE_INIT), ev(8, TaskLogEventKind.FETCH_START, "fetcher#1", nbytes=90, len="100"),
        ev(20, TaskLogEventKind.INMEM_MERGE_START, "InMemoryMerger"),
        ev(25, TaskLogEventKind.FETCH_START, "fetcher#1", nbytes=90, len="100"),
        ev(30, TaskLogEventKind.INMEM_MERGE_DONE, "InMemoryMerger", nbytes=180),
        ev(40, TaskLogEventKind.FINAL_MERGE), ev(41, TaskLogEventKind.FINAL_MERGE_DISK, nbytes=180),
        ev(42, TaskLogEventKind.FINAL_MERGE_MEMORY, nbytes=0), ev(43, TaskLogEventKind.MERGE_PASS),
        ev(50, TaskLogEventKind.MERGE_LAST_PASS, nbytes=170),
        ev(60, TaskLogEventKind.COMMIT_PENDING), ev(70, TaskLogEventKind.DONE),
    ]
    counters = {(TASK, "REDUCE_INPUT_RECORDS"): 2, (TASK, "REDUCE_OUTPUT_RECORDS"): 2}
    spans = derive_phases("a", "REDUCE", events, counters, start_ms=0, finish_ms=75)
    assert main_lane(spans) == [
        ("setup", 0, 5), ("wait", 5, 8), ("shuffle", 8, 40), ("sort", 40, 50), ("reduce+write", 50, 60),
        ("commit", 60, 70), ("other", 70, 75)]
    by = {(p.phase, p.lane): p for p in spans}
    assert by[("shuffle", Lane.MAIN)].data_bytes == 200  # no counter: the fetched lengths
    assert by[("sort", Lane.MAIN)].data_bytes == 180
    assert by[("reduce+write", Lane.MAIN)].data_records == 2
    merge = by[("merge", Lane.BACKGROUND)]
    assert (merge.start_ms, merge.end_ms, merge.dur_ms, merge.data_bytes) == (20, 30, 10, 180)


def test_the_sort_begins_where_the_event_fetcher_is_stopped() -> None:
    """
    main:    setup |wait |fetch  shuffle      |fetcher stopped  sort            |reduce+write |commit
    time:    0      5     8                    32                40 finalMerge   50            60
    merger:                  |in-memory merge 30..38|  (MergeManager.close waits for it: Hadoop's sort)
    A stop line before the first fetch (a helper line given to the wrong attempt) is not the boundary.
    """
    stop = dataclasses.replace(ev(32, TaskLogEventKind.EVENTS_FETCHED, "EventFetcher"), pattern="event_fetcher_stop")
    early = dataclasses.replace(ev(6, TaskLogEventKind.EVENTS_FETCHED, "EventFetcher"), pattern="event_fetcher_stop")
    events = [
        ev(5, TaskLogEventKind.SHUFFLE_INIT), early, ev(8, TaskLogEventKind.FETCH_START, "fetcher#1", nbytes=90, len="100"),
        ev(30, TaskLogEventKind.INMEM_MERGE_START, "InMemoryMerger"), stop,
        ev(38, TaskLogEventKind.INMEM_MERGE_DONE, "InMemoryMerger", nbytes=90),
        ev(40, TaskLogEventKind.FINAL_MERGE), ev(50, TaskLogEventKind.MERGE_LAST_PASS, nbytes=90),
        ev(60, TaskLogEventKind.COMMIT_PENDING), ev(70, TaskLogEventKind.DONE),
    ]
    spans = derive_phases("a", "REDUCE", events, {}, start_ms=0, finish_ms=70)
    assert main_lane(spans)[:5] == [
        ("setup", 0, 5), ("wait", 5, 8), ("shuffle", 8, 32), ("sort", 32, 50), ("reduce+write", 50, 60)]
    # without the fetcher's line (it may see the stop flag before the interrupt), finalMerge
    spans = derive_phases("a", "REDUCE", [e for e in events if e is not stop], {}, start_ms=0, finish_ms=70)
    assert main_lane(spans)[2:4] == [("shuffle", 8, 40), ("sort", 40, 50)]


def test_a_failed_attempt_keeps_its_whole_span() -> None:
    events = [ev(3, TaskLogEventKind.SPLIT), ev(4, TaskLogEventKind.SORT_BUFFER), ev(9, TaskLogEventKind.ERROR)]
    spans = derive_phases("a", "MAP", events, {}, start_ms=0, finish_ms=9)
    assert main_lane(spans) == [("setup", 0, 3), ("read+map+collect", 3, 9)]


def test_markers_out_of_order_are_clamped_not_negative() -> None:
    """A helper thread's line can be stamped before the task thread's: boundaries stay monotonic."""
    events = [ev(10, TaskLogEventKind.SHUFFLE_INIT), ev(5, TaskLogEventKind.FETCH_START, "fetcher#1", len="1"),
              ev(30, TaskLogEventKind.FINAL_MERGE), ev(20, TaskLogEventKind.COMMIT_PENDING)]
    spans = derive_phases("a", "REDUCE", events, {}, start_ms=0, finish_ms=40)
    assert all(p.dur_ms >= 0 for p in spans)
    assert sum(p.dur_ms for p in spans if p.lane is Lane.MAIN) == 40


# Stacks of JFR samples of a map task thread in a real engine run (innermost frame first, cut short).
READ_STACK = ["org.apache.hadoop.fs.FSInputChecker.read", "java.io.DataInputStream.read",
              "org.apache.hadoop.mapreduce.lib.input.FixedLengthRecordReader.nextKeyValue",
              "org.apache.hadoop.mapred.MapTask$NewTrackingRecordReader.nextKeyValue",
              "org.apache.hadoop.mapreduce.task.MapContextImpl.nextKeyValue",
              "org.apache.hadoop.mapreduce.lib.map.WrappedMapper$Context.nextKeyValue",
              "org.apache.hadoop.mapreduce.Mapper.run"]
COLLECT_STACK = ["org.apache.hadoop.mapred.MapTask$MapOutputBuffer$Buffer.write", "java.io.DataOutputStream.write",
                 "org.apache.hadoop.io.Text.write",
                 "org.apache.hadoop.io.serializer.WritableSerialization$WritableSerializer.serialize",
                 "org.apache.hadoop.mapred.MapTask$MapOutputBuffer.collect",
                 "org.apache.hadoop.mapred.MapTask$NewOutputCollector.write",
                 "org.apache.hadoop.mapreduce.task.TaskInputOutputContextImpl.write",
                 "org.apache.hadoop.mapreduce.lib.map.WrappedMapper$Context.write",
                 "phaseline.engine.SelectivityMapper.map", "org.apache.hadoop.mapreduce.Mapper.run"]
MAP_STACK = ["org.apache.hadoop.io.Text.set", "phaseline.engine.SelectivityMapper.map",
             "org.apache.hadoop.mapreduce.Mapper.run", "org.apache.hadoop.mapred.MapTask.runNewMapper"]
OTHER_STACK = ["org.apache.logging.log4j.core.layout.PatternLayout.encode",
               "org.apache.hadoop.mapred.MapTask.runNewMapper"]


def test_stack_samples_are_read_map_or_collect_by_their_innermost_hadoop_frame() -> None:
    assert map_stack_phase(READ_STACK) is Phase.READ
    assert map_stack_phase(COLLECT_STACK) is Phase.COLLECT  # although the user's map() is further out
    assert map_stack_phase(MAP_STACK) is Phase.MAP
    assert map_stack_phase(OTHER_STACK) is None
    assert map_stack_phase(READ_STACK[:3]) is Phase.READ  # JFR cut the stack short: still the reader
    waiting = ["jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park",
               "org.apache.hadoop.mapred.MapTask$MapOutputBuffer$Buffer.write"]
    assert map_stack_phase(waiting) is Phase.COLLECT  # waiting for buffer space is collect time


def test_reduce_samples_are_reduce_or_write() -> None:
    write = ["org.apache.hadoop.fs.FSOutputSummer.write", "org.apache.hadoop.fs.FSDataOutputStream$PositionCache.write",
             "phaseline.engine.RecordOutputFormat$1.write",
             "org.apache.hadoop.mapred.ReduceTask$NewTrackingRecordWriter.write",
             "org.apache.hadoop.mapreduce.task.TaskInputOutputContextImpl.write",
             "org.apache.hadoop.mapreduce.lib.reduce.WrappedReducer$Context.write",
             "org.apache.hadoop.mapreduce.lib.reduce.IdentityReducer.reduce", "org.apache.hadoop.mapreduce.Reducer.run"]
    merged_input = ["org.apache.hadoop.mapred.IFile$Reader.nextRawValue", "org.apache.hadoop.mapred.Merger$MergeQueue.next",
                    "org.apache.hadoop.mapreduce.task.ReduceContextImpl.nextKey",
                    "org.apache.hadoop.mapreduce.Reducer.run", "org.apache.hadoop.mapred.ReduceTask.runNewReducer"]
    final_merge = ["org.apache.hadoop.mapred.Merger$MergeQueue.merge",
                   "org.apache.hadoop.mapreduce.task.reduce.MergeManagerImpl.finalMerge",
                   "org.apache.hadoop.mapred.ReduceTask.run"]
    assert reduce_stack_phase(write) is Phase.WRITE
    assert reduce_stack_phase(merged_input) is Phase.REDUCE
    assert reduce_stack_phase(final_merge) is None


def test_split_by_samples_lays_the_parts_out_in_proportion() -> None:
    span = PhaseSpan("read+map+collect", Lane.MAIN, 100, 200, 100, 1000, 10)
    parts = split_by_samples(span, {Phase.READ: 1, Phase.MAP: 1, Phase.COLLECT: 4},
                             {Phase.READ: (1000, 10), Phase.COLLECT: (2000, 10)})
    assert [(p.phase, p.start_ms, p.end_ms, p.dur_ms, p.data_bytes) for p in parts] == [
        ("read", 100, 117, 17, 1000), ("map", 117, 133, 16, None), ("collect", 133, 200, 67, 2000)]
    few = {Phase.READ: MIN_SPLIT_SAMPLES - 1}
    assert split_by_samples(span, few, {}) == [span]


def _timed_map(timers: dict[str, int], samples: dict[Phase, int]) -> list[tuple[str, int, int]]:
    """A map whose read+map+collect span is [10, 110) ms."""
    events = [ev(0, TaskLogEventKind.TASK_START), ev(10, TaskLogEventKind.SPLIT, nbytes=1000), ev(11, TaskLogEventKind.SORT_BUFFER),
              ev(110, TaskLogEventKind.FLUSH), ev(110, TaskLogEventKind.SPILL_START), ev(120, TaskLogEventKind.SPILL_FINISH, index="0"),
              ev(125, TaskLogEventKind.COMMIT_PENDING), ev(128, TaskLogEventKind.DONE)]
    counters = {(PHASE_NANOS, name): nanos for name, nanos in timers.items()}
    spans = derive_phases("attempt_1_0001_m_000000_0", "MAP", events, counters, start_ms=0, finish_ms=130,
                          samples=samples)
    return [(p, b, e) for p, b, e in main_lane(spans) if b >= 10 and e <= 110]


def test_the_jobs_own_timers_split_a_map_before_its_stack_samples() -> None:
    """
    span:    |split      read+map+collect (100 ms)       |flush
    timers:   READ 12 ms, COLLECT 30 ms; samples say all read
    rows:    |read 12|map 58                 |collect 30  |
    """
    many_reads = {Phase.READ: 50}
    assert _timed_map({"READ": 12_000_000, "COLLECT": 30_000_000}, many_reads) == [
        ("read", 10, 22), ("map", 22, 80), ("collect", 80, 110)]
    # timers adding up to more than the span (ms-resolution log times): no map, read and collect in proportion
    assert _timed_map({"READ": 50_000_000, "COLLECT": 150_000_000}, {}) == [
        ("read", 10, 35), ("map", 35, 35), ("collect", 35, 110)]
    # without the collect timer the stack samples split it, as before
    assert _timed_map({"READ": 12_000_000}, many_reads) == [("read", 10, 110), ("map", 110, 110),
                                                           ("collect", 110, 110)]
    assert _timed_map({}, {}) == [("read+map+collect", 10, 110)]


def test_timed_parts_keep_their_measured_microseconds() -> None:
    # laid out in whole ms like the log lines, a 4.6 ms read is 5 ms; dur_us keeps what the timer measured,
    # and map gets the rest of the 100 ms span to the microsecond
    events = [ev(0, TaskLogEventKind.TASK_START), ev(10, TaskLogEventKind.SPLIT, nbytes=1000), ev(110, TaskLogEventKind.FLUSH),
              ev(110, TaskLogEventKind.SPILL_START), ev(120, TaskLogEventKind.SPILL_FINISH, index="0"), ev(128, TaskLogEventKind.DONE)]
    timers = {(PHASE_NANOS, "READ"): 4_600_400, (PHASE_NANOS, "COLLECT"): 30_200_000}
    spans = derive_phases("attempt_1_0001_m_000000_0", "MAP", events, timers, start_ms=0, finish_ms=130)
    timed = {s.phase: (s.dur_ms, s.dur_us) for s in spans if s.phase in ("read", "map", "collect")}
    assert timed == {"read": (5, 4_600), "map": (65, 65_200), "collect": (30, 30_200)}
    # phases no timer measured have none
    assert {s.dur_us for s in spans if s.phase not in timed} == {None}
    # split by stack samples: no timer, no microseconds
    sampled = derive_phases("attempt_1_0001_m_000000_0", "MAP", events, {}, start_ms=0, finish_ms=130,
                            samples={Phase.READ: 10, Phase.MAP: 10, Phase.COLLECT: 10})
    assert {s.phase for s in sampled} >= {"read", "map", "collect"}
    assert {s.dur_us for s in sampled} == {None}


def test_the_jobs_own_write_timer_splits_a_reduce() -> None:
    events = [ev(0, TaskLogEventKind.TASK_START), ev(5, TaskLogEventKind.SHUFFLE_INIT), ev(10, TaskLogEventKind.FETCH_START),
              ev(40, TaskLogEventKind.FINAL_MERGE), ev(50, TaskLogEventKind.MERGE_LAST_PASS), ev(100, TaskLogEventKind.COMMIT_PENDING),
              ev(104, TaskLogEventKind.DONE)]
    spans = derive_phases("attempt_1_0001_r_000000_0", "REDUCE", events, {(PHASE_NANOS, "WRITE"): 20_400_000},
                          start_ms=0, finish_ms=105, samples={Phase.WRITE: 40, Phase.REDUCE: 10})
    assert [(p, b, e) for p, b, e in main_lane(spans) if p in ("reduce", "write")] == [
        ("reduce", 50, 80), ("write", 80, 100)]


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
    split = {a: [p for p in ps if p in ("read", "map", "collect", "reduce", "write")] for a, ps in parts.items()}
    assert split == {f"_m_00000{i}_0": ["read", "map", "collect"] for i in range(4)} | {
        f"_r_00000{i}_0": ["reduce", "write"] for i in range(2)}


_MARKERS = (TaskLogEventKind.SPLIT, TaskLogEventKind.SORT_BUFFER, TaskLogEventKind.SPILL_START, TaskLogEventKind.SPILL_FINISH, TaskLogEventKind.FLUSH,
            TaskLogEventKind.MERGE_PASS, TaskLogEventKind.COMMIT_PENDING, TaskLogEventKind.DONE, TaskLogEventKind.SHUFFLE_INIT,
            TaskLogEventKind.FETCH_START, TaskLogEventKind.FINAL_MERGE, TaskLogEventKind.MERGE_LAST_PASS, TaskLogEventKind.INMEM_MERGE_START,
            TaskLogEventKind.INMEM_MERGE_DONE)


@settings(max_examples=300, deadline=None)
@given(
    task_type=st.sampled_from(["MAP", "REDUCE"]),
    marks=st.lists(st.tuples(st.integers(0, 1000), st.sampled_from(_MARKERS), st.sampled_from(["main", "T2"])),
                   max_size=25),
    start=st.integers(0, 500),
    length=st.integers(0, 1000),
    samples=st.dictionaries(st.sampled_from([Phase.READ, Phase.MAP, Phase.COLLECT, Phase.REDUCE, Phase.WRITE]),
                            st.integers(0, 50)),
    timers=st.dictionaries(st.sampled_from(["READ", "COLLECT", "WRITE"]), st.integers(0, 2_000_000_000)),
)
def test_main_lane_always_partitions_the_span(task_type: str, marks: list[tuple[int, TaskLogEventKind, str]],
                                              start: int, length: int, samples: dict[Phase, int],
                                              timers: dict[str, int]) -> None:
    finish = start + length
    events = sorted((ev(ts, kind, thread, index="0", len="5") for ts, kind, thread in marks),
                    key=lambda e: (e.ts_ms, e.line_no))
    counters = {(PHASE_NANOS, name): nanos for name, nanos in timers.items()}
    spans = derive_phases("a", task_type, events, counters, start_ms=start, finish_ms=finish, samples=samples)
    main = [p for p in spans if p.lane is Lane.MAIN]
    assert main
    assert main[0].start_ms == start
    assert main[-1].end_ms == finish
    assert all(p.dur_ms >= 0 and p.dur_ms == p.end_ms - p.start_ms for p in main)
    assert all(a.end_ms == b.start_ms for a, b in itertools.pairwise(main))
    assert all(p.dur_ms >= 0 for p in spans)
    # timed parts: their microseconds are the timers', and the rest gets what is left of the span (if any)
    timed = [p for p in spans if p.dur_us is not None]
    assert all(p.dur_us is not None and p.dur_us >= 0 for p in timed)
    for p in timed:
        nanos = timers.get(p.phase.upper())
        if nanos is not None:
            assert p.dur_us == round(nanos / 1000)
    if timed and all(p.phase.upper() in timers or p.dur_us > 0 for p in timed):
        span_us = 1000 * sum(p.dur_ms for p in timed)
        assert abs(sum(p.dur_us for p in timed) - span_us) <= len(timed)


# ---- a real run of the local engine -------------------------------------------------------------
SELECTIVITY_TOLERANCE = 0.02  # fractional selectivity is a seeded coin per record: ~0.3% sd at 40k records


def _engine(out: Path, *args: str, input_mb: int = 4) -> Path:
    cmd = [sys.executable, "-m", "phaseline", "engine", "run", "--out", str(out), "--input-mb", str(input_mb),
           "--maps", "2", "--io-sort-mb", "1", *args]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def engine_runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("engine")
    runs = {
        # 16 MiB: at 4 the task thread of a 2 MiB map ran Java code for 1-7 of JFR's 2 ms samples (it
        # waits on its spills, in I/O and class loading, where no execution sample is taken), under the
        # 5 a split needs: 2 of 6 runs were split on 2026-11-27, against 6 of 6 at 16 MiB
        "serial": _engine(root / "serial", "--reduces", "1", "--jfr", input_mb=16),
        # two maps and two reduces at a time in one JVM: helper threads must still find their attempt
        "parallel": _engine(root / "parallel", "--reduces", "2", "--map-parallelism", "2",
                            "--reduce-parallelism", "2", "--selectivity", "0.5"),
        # compressed map output, merged in two passes (sort factor 2), kept in the reduce's memory
        "compressed": _engine(root / "compressed", "--reduces", "1", "--sort-factor", "2",
                              "--reduce-memory-mb", "32", "-D", "mapreduce.map.output.compress=true",
                              "-D", "mapreduce.reduce.input.buffer.percent=0.7"),
    }
    store = Store(root / "store")
    summary = ingest_paths(list(runs.values()), store)
    assert summary.quarantined == 0
    return {"dirs": runs, "con": store.connect()}


def _job_id(run_dir: Path) -> str:
    return str(json.loads((run_dir / "run.json").read_text())["job_id"])


def _rows(con: Any, sql: str, *params: object) -> list[tuple[Any, ...]]:
    return [tuple(r) for r in con.execute(sql, list(params)).fetchall()]


@pytest.mark.slow
@pytest.mark.parametrize("run", ["serial", "parallel"])
def test_engine_run_phases_cover_attempts_and_match_the_log(engine_runs: dict[str, Any], run: str) -> None:
    con, run_dir = engine_runs["con"], engine_runs["dirs"][run]
    job = _job_id(run_dir)
    reduces = 1 if run == "serial" else 2
    jobs = _rows(con, "SELECT status, total_maps, total_reduces, source_format FROM jobs WHERE job_id = ?", job)
    assert jobs == [("SUCCEEDED", 2, reduces, "phaseline-engine-run")]
    attempts = _rows(con, "SELECT attempt_id, start_ms, finish_ms, task_type FROM attempts WHERE job_id = ?", job)
    assert sorted(a[3] for a in attempts) == ["MAP", "MAP"] + ["REDUCE"] * reduces
    for attempt_id, start, finish, _ in attempts:
        main = _rows(con, "SELECT phase, start_ms, end_ms, dur_ms FROM attempt_phases "
                          "WHERE attempt_id = ? AND lane = 'main' ORDER BY start_ms, end_ms", attempt_id)
        assert all(p[3] >= 0 for p in main)
        assert main[0][1] == start
        assert main[-1][2] == finish
        assert abs(sum(p[3] for p in main) - (finish - start)) <= COVERAGE_TOLERANCE_MS
        assert all(a[2] == b[1] for a, b in itertools.pairwise(main))
    # every 'Finished spill' line of the raw log is one spill_finish event of some attempt
    raw = (run_dir / "logs" / "job.log").read_text()
    spills = _rows(con, "SELECT count(*) FROM attempt_events WHERE job_id = ? AND kind = 'spill_finish'", job)
    assert spills[0][0] == len(re.findall(r"MapTask: Finished spill \d+$", raw, re.M)) > 2
    # the benchmark job times its reader, collect and writer: every map and reduce span is split by those
    # timers, with or without a JFR recording (the serial run has one), in parallel too
    timed = _rows(con, """
        SELECT p.phase, p.dur_ms, p.dur_us, c.value FROM attempt_phases p JOIN counters c ON c.attempt_id = p.attempt_id
        WHERE p.job_id = ? AND p.lane = 'main' AND c.scope = 'attempt' AND c.group_name = ?
          AND c.counter_name = upper(p.phase)""", job, PHASE_NANOS)
    assert sorted(p for p, *_ in timed) == ["collect"] * 2 + ["read"] * 2 + ["write"] * reduces
    assert all(abs(dur - nanos / 1e6) <= 1 for _, dur, _us, nanos in timed), timed
    assert all(us == round(nanos / 1000) for _, _dur, us, nanos in timed), timed
    names = _rows(con, "SELECT phase, count(*) FROM attempt_phases WHERE job_id = ? AND lane = 'main' "
                       "AND phase IN ('map', 'reduce', 'read+map+collect', 'reduce+write') GROUP BY 1", job)
    assert sorted(names) == [("map", 2), ("reduce", reduces)]
    # LocalJobRunner gives each reduce one local fetcher thread, which fetches every map's output once
    fetchers = _rows(con, "SELECT attempt_id, count(DISTINCT thread_id), count(*) FROM attempt_events "
                          "WHERE job_id = ? AND kind = 'fetch_start' GROUP BY 1", job)
    assert sorted(f[1:] for f in fetchers) == [(1, 2)] * reduces


@pytest.mark.slow
def test_engine_run_with_compressed_map_output_has_byte_counts_in_one_unit(engine_runs: dict[str, Any]) -> None:
    con, run_dir = engine_runs["con"], engine_runs["dirs"]["compressed"]
    job = _job_id(run_dir)
    raw = (run_dir / "logs" / "job.log").read_text()
    assert "intermediate segments" in raw  # each map merged in two passes
    # Hadoop's own last-pass sizes of these maps are negative (its arithmetic mixes the two units)
    assert min(int(b) for b in re.findall(r"left of total size: (-?\d+) bytes", raw)) < 0
    merges = _rows(con, """
        SELECT p.data_bytes, c.value FROM attempt_phases p JOIN counters c ON c.attempt_id = p.attempt_id
        WHERE p.job_id = ? AND p.phase = 'merge' AND p.task_type = 'MAP' AND p.lane = 'main'
          AND c.scope = 'attempt' AND c.counter_name = 'MAP_OUTPUT_MATERIALIZED_BYTES'""", job)
    assert len(merges) == 2
    assert all(merged == materialized > 0 for merged, materialized in merges)
    # the final merge held both map outputs in memory (uncompressed bytes in its log line): counted in the
    # shuffle's compressed unit, the sort's bytes are the fetched bytes, not 7x more
    (shuffle, sort), = _rows(con, """
        SELECT max(data_bytes) FILTER (WHERE phase = 'shuffle'), max(data_bytes) FILTER (WHERE phase = 'sort')
        FROM attempt_phases WHERE job_id = ? AND task_type = 'REDUCE'""", job)
    assert "bytes from memory into reduce" in raw
    assert sort == pytest.approx(shuffle, rel=0.01)


@pytest.mark.slow
@pytest.mark.parametrize(("run", "asked"), [("serial", 1.0), ("parallel", 0.5)])
def test_engine_run_selectivity_from_attempt_counters(engine_runs: dict[str, Any], run: str, asked: float) -> None:
    con, run_dir = engine_runs["con"], engine_runs["dirs"][run]
    (row,) = _rows(con, """
        SELECT sum(value) FILTER (WHERE counter_name = 'MAP_OUTPUT_RECORDS'),
               sum(value) FILTER (WHERE counter_name = 'MAP_INPUT_RECORDS')
        FROM counters WHERE job_id = ? AND scope = 'attempt' AND group_name = ?""", _job_id(run_dir), TASK)
    assert abs(row[0] / row[1] - asked) <= SELECTIVITY_TOLERANCE
    # the spill phases' data are exactly the map output bytes of the attempt counters
    (spilled, output) = _rows(con, """
        SELECT (SELECT sum(data_bytes) FROM attempt_phases WHERE job_id = ? AND phase = 'spill'),
               (SELECT sum(value) FROM counters WHERE job_id = ? AND scope = 'attempt'
                AND counter_name = 'MAP_OUTPUT_BYTES')""", _job_id(run_dir), _job_id(run_dir))[0]
    assert spilled == output
