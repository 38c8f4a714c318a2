"""attempt_phases from synthetic attempt events: map and reduce timelines and their edge cases."""

from __future__ import annotations

import dataclasses

import pytest

from ingest.phases import derive_phases
from ingest.phases.spans import Lane
from ingest.tasklog_patterns import TaskEvent
from phaseline.hadoop_names import TaskLogEventKind
from tests.ingest.phase_helpers import TASK, ev, main_lane


def _spilled_twice(*merge: TaskEvent) -> list[TaskEvent]:
    """A map of 1000 bytes that spilled 600 bytes in the background (30-50) and 400 at its flush (60-70),
    then ``merge``'s events, its commit (80-95) and its end (100)."""
    return [
        ev(0, TaskLogEventKind.TASK_START),
        ev(10, TaskLogEventKind.SPLIT, nbytes=1000),
        ev(11, TaskLogEventKind.SORT_BUFFER),
        ev(30, TaskLogEventKind.SPILL_START),
        ev(30, TaskLogEventKind.SPILL_BYTES, nbytes=600),
        ev(30, TaskLogEventKind.SPILL_RECORDS, records=6),
        ev(50, TaskLogEventKind.SPILL_FINISH, "SpillThread", index="0"),
        ev(60, TaskLogEventKind.FLUSH),
        ev(60, TaskLogEventKind.SPILL_START),
        ev(60, TaskLogEventKind.SPILL_BYTES, nbytes=400),
        ev(60, TaskLogEventKind.SPILL_RECORDS, records=4),
        ev(70, TaskLogEventKind.SPILL_FINISH, index="1"),
        *merge,
        ev(80, TaskLogEventKind.COMMIT_PENDING),
        ev(95, TaskLogEventKind.DONE),
        ev(100, TaskLogEventKind.TASK_FINISH),
    ]


def test_map_with_a_background_spill_a_final_spill_and_a_merge() -> None:
    """
    main:        setup |split  read+map+collect      |flush spill |merge      |commit |done other|
    time:        0      10                            60     70    80          95     98         100
    SpillThread:              |spill 0 (30..50)|
    """
    events = _spilled_twice(
        ev(72, TaskLogEventKind.MERGE_PASS),
        ev(75, TaskLogEventKind.MERGE_LAST_PASS, nbytes=1010),
    )
    counters = {(TASK, "MAP_INPUT_RECORDS"): 10}
    spans = derive_phases("attempt_1_0001_m_000000_0", "MAP", events, counters, start_ms=0, finish_ms=100)
    assert main_lane(spans) == [
        ("setup", 0, 10),
        ("read+map+collect", 10, 60),
        ("spill", 60, 70),
        ("merge", 70, 80),
        ("commit", 80, 95),
        ("other", 95, 100),
    ]
    by = {(p.phase, p.lane): p for p in spans}
    assert (
        by[("read+map+collect", Lane.MAIN)].data_bytes,
        by[("read+map+collect", Lane.MAIN)].data_records,
    ) == (1000, 10)
    assert (by[("spill", Lane.MAIN)].data_bytes, by[("spill", Lane.MAIN)].data_records) == (400, 4)
    background = by[("spill", Lane.BACKGROUND)]
    assert (background.start_ms, background.end_ms, background.dur_ms) == (30, 50, 20)
    assert (background.data_bytes, background.data_records) == (600, 6)
    assert by[("merge", Lane.MAIN)].data_bytes == 1010
    assert by[("merge", Lane.MAIN)].data_records == 10


def test_the_map_merge_holds_every_reduce_partition() -> None:
    """MapTask.mergeParts merges each reduce's partition of the spills, one last pass each: the merge's
    data is their sum (it had been the last partition's alone, a 1/R of the records' bytes)."""
    events = _spilled_twice(
        ev(72, TaskLogEventKind.MERGE_PASS),
        ev(73, TaskLogEventKind.MERGE_LAST_PASS, nbytes=560),
        ev(74, TaskLogEventKind.MERGE_PASS),
        ev(75, TaskLogEventKind.MERGE_LAST_PASS, nbytes=450),
    )
    spans = derive_phases("attempt_1_0001_m_000000_0", "MAP", events, {}, start_ms=0, finish_ms=100)
    merge = next(p for p in spans if (p.phase, p.lane) == ("merge", Lane.MAIN))
    assert (merge.data_bytes, merge.data_records) == (1010, 10)


def _map_merging_in_two_passes(last_pass_bytes: int) -> list[TaskEvent]:
    """Three spills merged at sort factor 2: an intermediate pass, then the last one (as logged by a real
    LocalJobRunner map with ``mapreduce.map.output.compress=true``: the last pass's size was negative)."""
    return [
        ev(0, TaskLogEventKind.TASK_START),
        ev(10, TaskLogEventKind.SPLIT, nbytes=2097100),
        ev(11, TaskLogEventKind.SORT_BUFFER),
        ev(20, TaskLogEventKind.SPILL_START),
        ev(20, TaskLogEventKind.SPILL_BYTES, nbytes=725118),
        ev(30, TaskLogEventKind.SPILL_FINISH, "SpillThread", index="0"),
        ev(40, TaskLogEventKind.SPILL_START),
        ev(40, TaskLogEventKind.SPILL_BYTES, nbytes=725118),
        ev(50, TaskLogEventKind.SPILL_FINISH, "SpillThread", index="1"),
        ev(60, TaskLogEventKind.FLUSH),
        ev(60, TaskLogEventKind.SPILL_START),
        ev(60, TaskLogEventKind.SPILL_BYTES, nbytes=688806),
        ev(65, TaskLogEventKind.SPILL_FINISH, index="2"),
        ev(66, TaskLogEventKind.MERGE_PASS, segments="3"),
        ev(67, TaskLogEventKind.MERGE_PASS, segments="2", total="3"),
        ev(75, TaskLogEventKind.MERGE_LAST_PASS, nbytes=last_pass_bytes),
        ev(80, TaskLogEventKind.COMMIT_PENDING),
        ev(95, TaskLogEventKind.DONE),
        ev(100, TaskLogEventKind.TASK_FINISH),
    ]


def test_after_an_intermediate_pass_the_merge_holds_the_bytes_it_wrote() -> None:
    # Merger logs the last pass's "total size" as segment lengths (compressed on disk) less the
    # uncompressed bytes the intermediate pass read: -2,173,356 bytes, the merge's data had been negative
    compressed = _map_merging_in_two_passes(-2173356)
    counters = {(TASK, "MAP_OUTPUT_MATERIALIZED_BYTES"): 309291}
    merge = next(
        p
        for p in derive_phases("m", "MAP", compressed, counters, start_ms=0, finish_ms=100)
        if p.phase == "merge"
    )
    assert merge.data_bytes == 309291
    # uncompressed, the same counter (the logged size would agree with it but for IFile's framing)
    plain = _map_merging_in_two_passes(2139000)
    merge = next(
        p
        for p in derive_phases(
            "m", "MAP", plain, {(TASK, "MAP_OUTPUT_MATERIALIZED_BYTES"): 2139150}, start_ms=0, finish_ms=100
        )
        if p.phase == "merge"
    )
    assert merge.data_bytes == 2139150
    # no counter: the logged size when it can be one, else unknown (never a negative size)
    for logged, expected in ((2139000, 2139000), (-2173356, None)):
        merge = next(
            p
            for p in derive_phases(
                "m", "MAP", _map_merging_in_two_passes(logged), {}, start_ms=0, finish_ms=100
            )
            if p.phase == "merge"
        )
        assert merge.data_bytes == expected


def test_a_compressed_final_merge_counts_memory_and_disk_in_one_unit() -> None:
    # Fetched 306,167 bytes that decompress to 2,180,986 (x7.1); at the final merge one map output is
    # on disk (its compressed length) and one in memory (its records' bytes): the latter is counted
    # at the fetch ratio, so the sort's bytes are the shuffle's unit, not a mix of the two.
    events = [
        ev(5, TaskLogEventKind.SHUFFLE_INIT),
        ev(8, TaskLogEventKind.FETCH_START, "fetcher#1", nbytes=2180986, len="306167"),
        ev(9, TaskLogEventKind.FETCH_START, "fetcher#1", nbytes=2181090, len="305904"),
        ev(40, TaskLogEventKind.FINAL_MERGE),
        ev(41, TaskLogEventKind.FINAL_MERGE_DISK, nbytes=305904),
        ev(42, TaskLogEventKind.FINAL_MERGE_MEMORY, nbytes=2180986),
        ev(50, TaskLogEventKind.MERGE_LAST_PASS, nbytes=4362050),
        ev(60, TaskLogEventKind.COMMIT_PENDING),
        ev(70, TaskLogEventKind.DONE),
    ]
    sort = next(
        p for p in derive_phases("r", "REDUCE", events, {}, start_ms=0, finish_ms=75) if p.phase == "sort"
    )
    assert sort.data_bytes == 305904 + round(2180986 * (306167 + 305904) / (2180986 + 2181090))
    assert sort.data_bytes == pytest.approx(306167 + 305904, rel=1e-3)


def test_a_single_spill_is_renamed_so_the_merge_processes_no_data() -> None:
    """One spill: MapTask.mergeParts renames the spill file (numSpills == 1); the merge span has no data."""
    events = [
        ev(0, TaskLogEventKind.TASK_START),
        ev(10, TaskLogEventKind.SPLIT, nbytes=1000),
        ev(11, TaskLogEventKind.SORT_BUFFER),
        ev(60, TaskLogEventKind.FLUSH),
        ev(60, TaskLogEventKind.SPILL_START),
        ev(60, TaskLogEventKind.SPILL_BYTES, nbytes=900),
        ev(60, TaskLogEventKind.SPILL_RECORDS, records=9),
        ev(70, TaskLogEventKind.SPILL_FINISH, index="0"),
        ev(72, TaskLogEventKind.COMMIT_PENDING),
        ev(80, TaskLogEventKind.DONE),
        ev(81, TaskLogEventKind.TASK_FINISH),
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
        ev(0, TaskLogEventKind.SPLIT),
        ev(1, TaskLogEventKind.SORT_BUFFER),
        ev(20, TaskLogEventKind.SPILL_START),
        ev(30, TaskLogEventKind.FLUSH),
        ev(40, TaskLogEventKind.SPILL_FINISH, "SpillThread", index="0"),
        ev(41, TaskLogEventKind.SPILL_START),
        ev(50, TaskLogEventKind.SPILL_FINISH, index="1"),
        ev(60, TaskLogEventKind.DONE),
    ]
    spans = derive_phases("a", "MAP", events, {}, start_ms=0, finish_ms=60)
    by = {(p.phase, p.lane): p for p in spans}
    assert (by[("spill", Lane.BACKGROUND)].dur_ms, by[("spill", Lane.BACKGROUND)].end_ms) == (10, 30)
    assert (by[("spill", Lane.MAIN)].start_ms, by[("spill", Lane.MAIN)].end_ms) == (30, 50)


def test_map_only_job_reads_maps_and_writes_in_one_span() -> None:
    events = [
        ev(5, TaskLogEventKind.SPLIT),
        ev(50, TaskLogEventKind.COMMIT_PENDING),
        ev(55, TaskLogEventKind.DONE),
    ]
    spans = derive_phases("a", "MAP", events, {(TASK, "MAP_INPUT_RECORDS"): 7}, start_ms=0, finish_ms=60)
    assert main_lane(spans) == [
        ("setup", 0, 5),
        ("read+map+write", 5, 50),
        ("commit", 50, 55),
        ("other", 55, 60),
    ]


def test_reduce_phases_and_background_merges() -> None:
    """
    main:    setup |init wait |fetch   shuffle              |finalMerge sort |reduce+write |commit| other
    time:    0      5          8                             40          50   60           70     75
    merger:                       |in-memory merge 20..30|
    """
    events = [
        ev(5, TaskLogEventKind.SHUFFLE_INIT),
        ev(8, TaskLogEventKind.FETCH_START, "fetcher#1", nbytes=90, len="100"),
        ev(20, TaskLogEventKind.INMEM_MERGE_START, "InMemoryMerger"),
        ev(25, TaskLogEventKind.FETCH_START, "fetcher#1", nbytes=90, len="100"),
        ev(30, TaskLogEventKind.INMEM_MERGE_DONE, "InMemoryMerger", nbytes=180),
        ev(40, TaskLogEventKind.FINAL_MERGE),
        ev(41, TaskLogEventKind.FINAL_MERGE_DISK, nbytes=180),
        ev(42, TaskLogEventKind.FINAL_MERGE_MEMORY, nbytes=0),
        ev(43, TaskLogEventKind.MERGE_PASS),
        ev(50, TaskLogEventKind.MERGE_LAST_PASS, nbytes=170),
        ev(60, TaskLogEventKind.COMMIT_PENDING),
        ev(70, TaskLogEventKind.DONE),
    ]
    counters = {(TASK, "REDUCE_INPUT_RECORDS"): 2, (TASK, "REDUCE_OUTPUT_RECORDS"): 2}
    spans = derive_phases("a", "REDUCE", events, counters, start_ms=0, finish_ms=75)
    assert main_lane(spans) == [
        ("setup", 0, 5),
        ("wait", 5, 8),
        ("shuffle", 8, 40),
        ("sort", 40, 50),
        ("reduce+write", 50, 60),
        ("commit", 60, 70),
        ("other", 70, 75),
    ]
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
    stop = dataclasses.replace(
        ev(32, TaskLogEventKind.EVENTS_FETCHED, "EventFetcher"), pattern="event_fetcher_stop"
    )
    early = dataclasses.replace(
        ev(6, TaskLogEventKind.EVENTS_FETCHED, "EventFetcher"), pattern="event_fetcher_stop"
    )
    events = [
        ev(5, TaskLogEventKind.SHUFFLE_INIT),
        early,
        ev(8, TaskLogEventKind.FETCH_START, "fetcher#1", nbytes=90, len="100"),
        ev(30, TaskLogEventKind.INMEM_MERGE_START, "InMemoryMerger"),
        stop,
        ev(38, TaskLogEventKind.INMEM_MERGE_DONE, "InMemoryMerger", nbytes=90),
        ev(40, TaskLogEventKind.FINAL_MERGE),
        ev(50, TaskLogEventKind.MERGE_LAST_PASS, nbytes=90),
        ev(60, TaskLogEventKind.COMMIT_PENDING),
        ev(70, TaskLogEventKind.DONE),
    ]
    spans = derive_phases("a", "REDUCE", events, {}, start_ms=0, finish_ms=70)
    assert main_lane(spans)[:5] == [
        ("setup", 0, 5),
        ("wait", 5, 8),
        ("shuffle", 8, 32),
        ("sort", 32, 50),
        ("reduce+write", 50, 60),
    ]
    # without the fetcher's line (it may see the stop flag before the interrupt), finalMerge
    spans = derive_phases("a", "REDUCE", [e for e in events if e is not stop], {}, start_ms=0, finish_ms=70)
    assert main_lane(spans)[2:4] == [("shuffle", 8, 40), ("sort", 40, 50)]


def test_a_failed_attempt_keeps_its_whole_span() -> None:
    events = [
        ev(3, TaskLogEventKind.SPLIT),
        ev(4, TaskLogEventKind.SORT_BUFFER),
        ev(9, TaskLogEventKind.ERROR),
    ]
    spans = derive_phases("a", "MAP", events, {}, start_ms=0, finish_ms=9)
    assert main_lane(spans) == [("setup", 0, 3), ("read+map+collect", 3, 9)]


def test_markers_out_of_order_are_clamped_not_negative() -> None:
    """A helper thread's line can be stamped before the task thread's: boundaries stay monotonic."""
    events = [
        ev(10, TaskLogEventKind.SHUFFLE_INIT),
        ev(5, TaskLogEventKind.FETCH_START, "fetcher#1", len="1"),
        ev(30, TaskLogEventKind.FINAL_MERGE),
        ev(20, TaskLogEventKind.COMMIT_PENDING),
    ]
    spans = derive_phases("a", "REDUCE", events, {}, start_ms=0, finish_ms=40)
    assert all(p.dur_ms >= 0 for p in spans)
    assert sum(p.dur_ms for p in spans if p.lane is Lane.MAIN) == 40
