"""A real LocalJobRunner log read line by line: each line to its attempt, and damaged lines skipped.

``RUNNER_EXCERPT`` is real output of Hadoop 3.5.0's LocalJobRunner on this
machine (two map attempts running in parallel in one JVM, ``io.sort.mb`` = 1 so
that each spills twice), with only the output-committer set-up lines and the start of a third attempt left out.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reader_checks import table

from ingest.base import ReadContext
from ingest.phases.spans import COVERAGE_TOLERANCE_MS, Lane
from ingest.tasklog_lines import parse_records
from phaseline.errors import TraceParseError
from tests.ingest.tasklog_helpers import _read

RUNNER_EXCERPT = (
    "2026-11-21 13:24:16,109 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.LocalJobRunner: Starting task: attempt_local761895027_0001_m_000000_0",
    "2026-11-21 13:24:16,131 INFO  [Thread-22] [tid:37] org.apache.hadoop.mapred.LocalJobRunner: Waiting for map tasks",
    "2026-11-21 13:24:16,132 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.LocalJobRunner: Starting task: attempt_local761895027_0001_m_000001_0",
    "2026-11-21 13:24:16,333 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Processing split: file:/tmp/tl/input.txt:1000000+1000000",
    "2026-11-21 13:24:16,349 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Processing split: file:/tmp/tl/input.txt:0+1000000",
    "2026-11-21 13:24:16,421 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: (EQUATOR) 0 kvi 262140(1048560)",
    "2026-11-21 13:24:16,422 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: mapreduce.task.io.sort.mb: 1",
    "2026-11-21 13:24:16,423 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: soft limit at 838860",
    "2026-11-21 13:24:16,439 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: bufstart = 0; bufvoid = 1048576",
    "2026-11-21 13:24:16,440 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: kvstart = 262140; length = 65536",
    "2026-11-21 13:24:16,452 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: (EQUATOR) 0 kvi 262140(1048560)",
    "2026-11-21 13:24:16,453 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: mapreduce.task.io.sort.mb: 1",
    "2026-11-21 13:24:16,453 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: soft limit at 838860",
    "2026-11-21 13:24:16,453 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: bufstart = 0; bufvoid = 1048576",
    "2026-11-21 13:24:16,453 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: kvstart = 262140; length = 65536",
    "2026-11-21 13:24:16,475 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Map output collector class = org.apache.hadoop.mapred.MapTask$MapOutputBuffer",
    "2026-11-21 13:24:16,503 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Map output collector class = org.apache.hadoop.mapred.MapTask$MapOutputBuffer",
    "2026-11-21 13:24:16,967 INFO  [main] [tid:1] org.apache.hadoop.mapreduce.Job: Job job_local761895027_0001 running in uber mode : false",
    "2026-11-21 13:24:16,969 INFO  [main] [tid:1] org.apache.hadoop.mapreduce.Job:  map 0% reduce 0%",
    "2026-11-21 13:24:17,192 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Spilling map output",
    "2026-11-21 13:24:17,193 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: bufstart = 0; bufend = 733266; bufvoid = 1048576",
    "2026-11-21 13:24:17,199 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: kvstart = 262140(1048560); kvend = 235720(942880); length = 26421/65536",
    "2026-11-21 13:24:17,199 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: (EQUATOR) 759666 kvi 189912(759648)",
    "2026-11-21 13:24:17,230 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Spilling map output",
    "2026-11-21 13:24:17,230 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: bufstart = 0; bufend = 733266; bufvoid = 1048576",
    "2026-11-21 13:24:17,230 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: kvstart = 262140(1048560); kvend = 235720(942880); length = 26421/65536",
    "2026-11-21 13:24:17,230 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: (EQUATOR) 759666 kvi 189912(759648)",
    "2026-11-21 13:24:17,358 INFO  [SpillThread] [tid:54] org.apache.hadoop.mapred.MapTask: Finished spill 0",
    "2026-11-21 13:24:17,372 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: (RESET) equator 759666 kv 189912(759648) kvi 183324(733296)",
    "2026-11-21 13:24:17,392 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.LocalJobRunner: ",
    "2026-11-21 13:24:17,392 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Starting flush of map output",
    "2026-11-21 13:24:17,393 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Spilling map output",
    "2026-11-21 13:24:17,393 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: bufstart = 759666; bufend = 87935; bufvoid = 1048576",
    "2026-11-21 13:24:17,393 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: kvstart = 189912(759648); kvend = 176336(705344); length = 13577/65536",
    "2026-11-21 13:24:17,394 INFO  [SpillThread] [tid:53] org.apache.hadoop.mapred.MapTask: Finished spill 0",
    "2026-11-21 13:24:17,406 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: (RESET) equator 759666 kv 189912(759648) kvi 183324(733296)",
    "2026-11-21 13:24:17,441 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.LocalJobRunner: ",
    "2026-11-21 13:24:17,441 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Starting flush of map output",
    "2026-11-21 13:24:17,441 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Spilling map output",
    "2026-11-21 13:24:17,442 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: bufstart = 759666; bufend = 87824; bufvoid = 1048576",
    "2026-11-21 13:24:17,442 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: kvstart = 189912(759648); kvend = 176340(705360); length = 13573/65536",
    "2026-11-21 13:24:17,447 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Finished spill 1",
    "2026-11-21 13:24:17,488 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Finished spill 1",
    "2026-11-21 13:24:17,494 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.Merger: Merging 2 sorted segments",
    "2026-11-21 13:24:17,500 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.Merger: Merging 2 sorted segments",
    "2026-11-21 13:24:17,508 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.Merger: Down to the last merge-pass, with 2 segments left of total size: 1130099 bytes",
    "2026-11-21 13:24:17,510 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.Merger: Down to the last merge-pass, with 2 segments left of total size: 1129986 bytes",
    "2026-11-21 13:24:17,644 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.Task: Task:attempt_local761895027_0001_m_000001_0 is done. And is in the process of committing",
    "2026-11-21 13:24:17,649 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.Task: Task:attempt_local761895027_0001_m_000000_0 is done. And is in the process of committing",
    "2026-11-21 13:24:17,654 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.LocalJobRunner: map > sort",
    "2026-11-21 13:24:17,654 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.Task: Task 'attempt_local761895027_0001_m_000001_0' done.",
    "2026-11-21 13:24:17,661 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.LocalJobRunner: map > sort",
    "2026-11-21 13:24:17,661 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.Task: Task 'attempt_local761895027_0001_m_000000_0' done.",
    "2026-11-21 13:24:17,673 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.Task: Final Counters for attempt_local761895027_0001_m_000000_0: Counters: 17",
    "\tFile System Counters",
    "\t\tFILE: Number of bytes read=4276192",
    "\t\tFILE: Number of bytes written=4985264",
    "\t\tFILE: Number of read operations=0",
    "\t\tFILE: Number of large read operations=0",
    "\t\tFILE: Number of write operations=0",
    "\tMap-Reduce Framework",
    "\t\tMap input records=10001",
    "\t\tMap output records=10001",
    "\t\tMap output bytes=1110111",
    "\t\tMap output materialized bytes=1130119",
    "\t\tInput split bytes=87",
    "\t\tCombine input records=0",
    "\t\tSpilled Records=20002",
    "\t\tFailed Shuffles=0",
    "\t\tMerged Map outputs=0",
    "\t\tGC time elapsed (ms)=97",
    "\t\tTotal committed heap usage (bytes)=406847488",
    "\tFile Input Format Counters ",
    "\t\tBytes Read=1085440",
    "2026-11-21 13:24:17,673 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.LocalJobRunner: Finishing task: attempt_local761895027_0001_m_000000_0",
    "2026-11-21 13:24:17,679 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.Task: Final Counters for attempt_local761895027_0001_m_000001_0: Counters: 17",
    "\tFile System Counters",
    "\t\tFILE: Number of bytes read=4276192",
    "\t\tFILE: Number of bytes written=4985264",
    "\t\tFILE: Number of read operations=0",
    "\t\tFILE: Number of large read operations=0",
    "\t\tFILE: Number of write operations=0",
    "\tMap-Reduce Framework",
    "\t\tMap input records=10000",
    "\t\tMap output records=10000",
    "\t\tMap output bytes=1110000",
    "\t\tMap output materialized bytes=1130006",
    "\t\tInput split bytes=87",
    "\t\tCombine input records=0",
    "\t\tSpilled Records=20000",
    "\t\tFailed Shuffles=0",
    "\t\tMerged Map outputs=0",
    "\t\tGC time elapsed (ms)=97",
    "\t\tTotal committed heap usage (bytes)=406847488",
    "\tFile Input Format Counters ",
    "\t\tBytes Read=1122304",
    "2026-11-21 13:24:17,679 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.LocalJobRunner: Finishing task: attempt_local761895027_0001_m_000001_0",
)

M0 = "attempt_local761895027_0001_m_000000_0"
M1 = "attempt_local761895027_0001_m_000001_0"


@pytest.fixture
def runner_log(tmp_path: Path) -> Path:
    path = tmp_path / "job.log"
    path.write_text("\n".join(RUNNER_EXCERPT) + "\n")
    return path


def test_runner_log_lines_go_to_the_attempt_whose_thread_wrote_them(runner_log: Path) -> None:
    rows, ctx = _read(runner_log)
    attempts = {a["attempt_id"]: a for a in table(rows, "attempts")}
    assert set(attempts) == {M0, M1}
    assert {a["status"] for a in attempts.values()} == {"SUCCEEDED"}
    events = table(rows, "attempt_events")
    for attempt in (M0, M1):
        mine = [e for e in events if e["attempt_id"] == attempt]
        finished = sorted(str(e["detail"]) for e in mine if e["kind"] == "spill_finish")
        assert finished == ["index=0", "index=1"]
        # the executor thread's own lines: one executor per attempt
        executors = {e["thread_id"] for e in mine if e["kind"] in ("split", "flush", "commit_pending")}
        assert len(executors) == 1
    # job-level lines (client thread, LocalJobRunner job thread) land as events
    job_lines = table(rows, "events")
    assert any("running in uber mode" in str(v["payload_json"]) for v in job_lines)
    assert any("overlapped" in note for note in ctx.notes)


def test_parallel_spill_threads_are_matched_consistently_with_the_reset_lines(runner_log: Path) -> None:
    """A map's task thread logs '(RESET)' only after its spill thread finished the spill.

    So each attempt's background 'Finished spill 0' must come no later than that
    attempt's first RESET line: an independent check of the thread attribution.
    """
    rows, _ = _read(runner_log)
    events = table(rows, "attempt_events")
    spill_tids = set()
    for attempt in (M0, M1):
        mine = [e for e in events if e["attempt_id"] == attempt]
        background = [e for e in mine if e["kind"] == "spill_finish" and e["thread_name"] == "SpillThread"]
        resets = [e for e in mine if e["kind"] == "spill_reset"]
        assert len(background) == 1
        assert len(resets) == 1
        assert background[0]["ts_ms"] <= resets[0]["ts_ms"]
        spill_tids.add(background[0]["thread_id"])
    assert len(spill_tids) == 2


def test_spill_lines_account_for_every_map_output_byte_and_record(runner_log: Path) -> None:
    rows, _ = _read(runner_log)
    events = table(rows, "attempt_events")
    counters = {
        (c["attempt_id"], c["counter_name"]): c["value"]
        for c in table(rows, "counters")
        if c["group_name"] == "org.apache.hadoop.mapreduce.TaskCounter"
    }
    for attempt in (M0, M1):
        spilled_bytes = sum(
            int(str(e["bytes"])) for e in events if e["attempt_id"] == attempt and e["kind"] == "spill_bytes"
        )
        spilled_records = sum(
            int(str(e["records"]))
            for e in events
            if e["attempt_id"] == attempt and e["kind"] == "spill_records"
        )
        assert spilled_bytes == counters[(attempt, "MAP_OUTPUT_BYTES")]
        assert spilled_records == counters[(attempt, "MAP_OUTPUT_RECORDS")]


def test_runner_phases_cover_each_attempt_and_spill_data_adds_up(runner_log: Path) -> None:
    rows, _ = _read(runner_log)
    attempts = {a["attempt_id"]: a for a in table(rows, "attempts")}
    phases = table(rows, "attempt_phases")
    for attempt, row in attempts.items():
        main = sorted(
            (p for p in phases if p["attempt_id"] == attempt and p["lane"] == Lane.MAIN.value),
            key=lambda p: int(str(p["start_ms"])),
        )
        assert [p["phase"] for p in main] == [
            "setup",
            "read+map+collect",
            "spill",
            "merge",
            "commit",
            "other",
        ]
        assert main[0]["start_ms"] == row["start_ms"]
        assert main[-1]["end_ms"] == row["finish_ms"]
        for before, after in itertools.pairwise(main):
            assert before["end_ms"] == after["start_ms"]
        covered = sum(int(str(p["dur_ms"])) for p in main)
        assert (
            abs(covered - (int(str(row["finish_ms"])) - int(str(row["start_ms"])))) <= COVERAGE_TOLERANCE_MS
        )
        spill_bytes = sum(
            int(str(p["data_bytes"])) for p in phases if p["attempt_id"] == attempt and p["phase"] == "spill"
        )
        counter = next(
            c["value"]
            for c in table(rows, "counters")
            if c["attempt_id"] == attempt and c["counter_name"] == "MAP_OUTPUT_BYTES"
        )
        assert spill_bytes == counter
        split_bytes = next(p["data_bytes"] for p in main if p["phase"] == "read+map+collect")
        assert split_bytes == 1_000_000  # 'Processing split: file:...:N+1000000'


def test_attempt_counters_use_hadoops_internal_names(runner_log: Path) -> None:
    rows, _ = _read(runner_log)
    counters = table(rows, "counters")
    assert {c["scope"] for c in counters} == {"attempt"}
    names = {(c["group_name"], c["counter_name"]) for c in counters if c["attempt_id"] == M0}
    assert ("org.apache.hadoop.mapreduce.FileSystemCounter", "FILE_BYTES_READ") in names
    assert ("org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter", "BYTES_READ") in names
    assert ("org.apache.hadoop.mapreduce.TaskCounter", "SPILLED_RECORDS") in names


def test_unknown_lines_are_kept_and_counted(tmp_path: Path) -> None:
    known = "org.apache.hadoop.mapred.MapTask: Processing split"
    at = next(i for i, x in enumerate(RUNNER_EXCERPT) if "Executor #1" in x and known in x)
    unknown = (
        "2026-11-21 13:24:16,276 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] "
        "org.apache.hadoop.mapred.Task:  Using ResourceCalculatorProcessTree : [ ]"
    )  # real, left out above
    path = tmp_path / "job.log"
    path.write_text("\n".join([*RUNNER_EXCERPT[:at], unknown, *RUNNER_EXCERPT[at:]]) + "\n")
    rows, ctx = _read(path)
    others = [e for e in table(rows, "attempt_events") if e["kind"] == "other"]
    assert [(e["attempt_id"], e["detail"]) for e in others] == [
        (M1, " Using ResourceCalculatorProcessTree : [ ]")
    ]
    job_level = sum(1 for r in rows if r.table == "events")
    assert ctx.unknown["task_log_line"] == len(others) + job_level


def test_a_log_of_mostly_malformed_lines_is_given_up(tmp_path: Path) -> None:
    path = tmp_path / "syslog"
    path.write_text(
        "\n".join([RUNNER_EXCERPT[0], *(f"2025-08-24 17:58:{i % 60:02d} bad" for i in range(101))]) + "\n"
    )
    with pytest.raises(
        TraceParseError, match="more than 100 unreadable records; the first: malformed log line"
    ) as err:
        _read(path)
    assert err.value.line == 2


@pytest.mark.parametrize(
    ("counter", "message"),
    [
        ("\t\tMap input records=lots", "not an integer"),
        ("\t\tMap input records=99999999999999999999", "64 bits"),
        ("\t\tMap input records=1_000", "not an integer"),  # Python's int() takes it; Long.parseLong does not
    ],
)
def test_an_unreadable_counter_line_is_skipped_and_its_block_kept(
    runner_log: Path, tmp_path: Path, counter: str, message: str
) -> None:
    start = RUNNER_EXCERPT.index(next(x for x in RUNNER_EXCERPT if "Final Counters for " + M1 in x))
    at = next(
        i for i in range(start, len(RUNNER_EXCERPT)) if RUNNER_EXCERPT[i].startswith("\t\tMap input records=")
    )
    path = tmp_path / "syslog"
    path.write_text("\n".join([*RUNNER_EXCERPT[:at], counter, *RUNNER_EXCERPT[at + 1 :]]) + "\n")
    rows, ctx = _read(path)
    (error,) = ctx.skipped
    assert message in error.message
    assert error.line == at + 1
    pristine = table(_read(runner_log)[0], "counters")
    expected = [c for c in pristine if (c["attempt_id"], c["counter_name"]) != (M1, "MAP_INPUT_RECORDS")]
    assert len(expected) == len(pristine) - 1
    assert table(rows, "counters") == expected


def test_a_number_past_64_bits_skips_its_line(runner_log: Path, tmp_path: Path) -> None:
    at = next(i for i, x in enumerate(RUNNER_EXCERPT) if "length = 26421/65536" in x)
    huge = RUNNER_EXCERPT[at].replace("length = 26421/", "length = 99999999999999999999999/")
    path = tmp_path / "huge" / "job.log"
    path.parent.mkdir()
    path.write_text("\n".join([*RUNNER_EXCERPT[:at], huge, *RUNNER_EXCERPT[at + 1 :]]) + "\n")
    rows, ctx = _read(path)
    (error,) = ctx.skipped
    assert "does not fit in 64 bits" in error.message
    assert error.line == at + 1
    events = table(rows, "attempt_events")
    assert at + 1 not in {e["line_no"] for e in events}
    assert len(events) == len(table(_read(runner_log)[0], "attempt_events")) - 1
    assert ctx.events_read == len(events) + sum(1 for r in rows if r.table == "events")


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.text(
            alphabet=st.characters(blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
            max_size=60,
        ),
        max_size=30,
    )
)
def test_lines_without_a_timestamp_never_fail_and_are_all_accounted(lines: list[str]) -> None:
    """Unprefixed text continues a record or is counted as orphan; nothing raises."""
    lines = [x for x in lines if not x[:4].isdigit()]
    head = RUNNER_EXCERPT[0]
    ctx = ReadContext(Path("x"))
    records = list(parse_records(enumerate([head, *lines], start=1), Path("x"), ctx))
    assert len(records) == 1
    assert len(records[0].extra) == len(lines)
