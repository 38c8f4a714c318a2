"""Task-log line parser: real LocalJobRunner lines, real container syslogs, bad input.

``RUNNER_EXCERPT`` is real output of Hadoop 3.5.0's LocalJobRunner on this
machine (two map attempts running in parallel in one JVM, ``io.sort.mb`` = 1 so
that each spills twice), with only the output-committer set-up lines and the start of a third attempt left out.
"""

from __future__ import annotations

import gzip
import itertools
import json
import re
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from reader_checks import table

from ingest.base import ReadContext, Row
from ingest.engine_run import read_engine_run
from ingest.formats import detect
from ingest.phases.spans import COVERAGE_TOLERANCE_MS, Lane
from ingest.pipeline import ingest_paths
from ingest.tasklog import read_task_log
from ingest.tasklog_counters import counter_name
from ingest.tasklog_lines import classify, parse_counter_block, parse_records
from ingest.tasklog_patterns import PATTERNS, LogRecord
from phaseline.cli import main
from phaseline.errors import TraceParseError
from phaseline.hadoop_names import TaskLogEventKind
from phaseline.store import Store

RUNNER_EXCERPT = (
    '2026-11-21 13:24:16,109 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.LocalJobRunner: Starting task: attempt_local761895027_0001_m_000000_0',
    '2026-11-21 13:24:16,131 INFO  [Thread-22] [tid:37] org.apache.hadoop.mapred.LocalJobRunner: Waiting for map tasks',
    '2026-11-21 13:24:16,132 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.LocalJobRunner: Starting task: attempt_local761895027_0001_m_000001_0',
    '2026-11-21 13:24:16,333 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Processing split: file:/tmp/tl/input.txt:1000000+1000000',
    '2026-11-21 13:24:16,349 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Processing split: file:/tmp/tl/input.txt:0+1000000',
    '2026-11-21 13:24:16,421 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: (EQUATOR) 0 kvi 262140(1048560)',
    '2026-11-21 13:24:16,422 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: mapreduce.task.io.sort.mb: 1',
    '2026-11-21 13:24:16,423 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: soft limit at 838860',
    '2026-11-21 13:24:16,439 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: bufstart = 0; bufvoid = 1048576',
    '2026-11-21 13:24:16,440 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: kvstart = 262140; length = 65536',
    '2026-11-21 13:24:16,452 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: (EQUATOR) 0 kvi 262140(1048560)',
    '2026-11-21 13:24:16,453 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: mapreduce.task.io.sort.mb: 1',
    '2026-11-21 13:24:16,453 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: soft limit at 838860',
    '2026-11-21 13:24:16,453 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: bufstart = 0; bufvoid = 1048576',
    '2026-11-21 13:24:16,453 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: kvstart = 262140; length = 65536',
    '2026-11-21 13:24:16,475 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Map output collector class = org.apache.hadoop.mapred.MapTask$MapOutputBuffer',
    '2026-11-21 13:24:16,503 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Map output collector class = org.apache.hadoop.mapred.MapTask$MapOutputBuffer',
    '2026-11-21 13:24:16,967 INFO  [main] [tid:1] org.apache.hadoop.mapreduce.Job: Job job_local761895027_0001 running in uber mode : false',
    '2026-11-21 13:24:16,969 INFO  [main] [tid:1] org.apache.hadoop.mapreduce.Job:  map 0% reduce 0%',
    '2026-11-21 13:24:17,192 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Spilling map output',
    '2026-11-21 13:24:17,193 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: bufstart = 0; bufend = 733266; bufvoid = 1048576',
    '2026-11-21 13:24:17,199 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: kvstart = 262140(1048560); kvend = 235720(942880); length = 26421/65536',
    '2026-11-21 13:24:17,199 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: (EQUATOR) 759666 kvi 189912(759648)',
    '2026-11-21 13:24:17,230 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Spilling map output',
    '2026-11-21 13:24:17,230 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: bufstart = 0; bufend = 733266; bufvoid = 1048576',
    '2026-11-21 13:24:17,230 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: kvstart = 262140(1048560); kvend = 235720(942880); length = 26421/65536',
    '2026-11-21 13:24:17,230 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: (EQUATOR) 759666 kvi 189912(759648)',
    '2026-11-21 13:24:17,358 INFO  [SpillThread] [tid:54] org.apache.hadoop.mapred.MapTask: Finished spill 0',
    '2026-11-21 13:24:17,372 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: (RESET) equator 759666 kv 189912(759648) kvi 183324(733296)',
    '2026-11-21 13:24:17,392 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.LocalJobRunner: ',
    '2026-11-21 13:24:17,392 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Starting flush of map output',
    '2026-11-21 13:24:17,393 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Spilling map output',
    '2026-11-21 13:24:17,393 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: bufstart = 759666; bufend = 87935; bufvoid = 1048576',
    '2026-11-21 13:24:17,393 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: kvstart = 189912(759648); kvend = 176336(705344); length = 13577/65536',
    '2026-11-21 13:24:17,394 INFO  [SpillThread] [tid:53] org.apache.hadoop.mapred.MapTask: Finished spill 0',
    '2026-11-21 13:24:17,406 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: (RESET) equator 759666 kv 189912(759648) kvi 183324(733296)',
    '2026-11-21 13:24:17,441 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.LocalJobRunner: ',
    '2026-11-21 13:24:17,441 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Starting flush of map output',
    '2026-11-21 13:24:17,441 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Spilling map output',
    '2026-11-21 13:24:17,442 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: bufstart = 759666; bufend = 87824; bufvoid = 1048576',
    '2026-11-21 13:24:17,442 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: kvstart = 189912(759648); kvend = 176340(705360); length = 13573/65536',
    '2026-11-21 13:24:17,447 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.MapTask: Finished spill 1',
    '2026-11-21 13:24:17,488 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.MapTask: Finished spill 1',
    '2026-11-21 13:24:17,494 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.Merger: Merging 2 sorted segments',
    '2026-11-21 13:24:17,500 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.Merger: Merging 2 sorted segments',
    '2026-11-21 13:24:17,508 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.Merger: Down to the last merge-pass, with 2 segments left of total size: 1130099 bytes',
    '2026-11-21 13:24:17,510 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.Merger: Down to the last merge-pass, with 2 segments left of total size: 1129986 bytes',
    '2026-11-21 13:24:17,644 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.Task: Task:attempt_local761895027_0001_m_000001_0 is done. And is in the process of committing',
    '2026-11-21 13:24:17,649 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.Task: Task:attempt_local761895027_0001_m_000000_0 is done. And is in the process of committing',
    '2026-11-21 13:24:17,654 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.LocalJobRunner: map > sort',
    "2026-11-21 13:24:17,654 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.Task: Task 'attempt_local761895027_0001_m_000001_0' done.",
    '2026-11-21 13:24:17,661 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.LocalJobRunner: map > sort',
    "2026-11-21 13:24:17,661 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.Task: Task 'attempt_local761895027_0001_m_000000_0' done.",
    '2026-11-21 13:24:17,673 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.Task: Final Counters for attempt_local761895027_0001_m_000000_0: Counters: 17',
    '\tFile System Counters',
    '\t\tFILE: Number of bytes read=4276192',
    '\t\tFILE: Number of bytes written=4985264',
    '\t\tFILE: Number of read operations=0',
    '\t\tFILE: Number of large read operations=0',
    '\t\tFILE: Number of write operations=0',
    '\tMap-Reduce Framework',
    '\t\tMap input records=10001',
    '\t\tMap output records=10001',
    '\t\tMap output bytes=1110111',
    '\t\tMap output materialized bytes=1130119',
    '\t\tInput split bytes=87',
    '\t\tCombine input records=0',
    '\t\tSpilled Records=20002',
    '\t\tFailed Shuffles=0',
    '\t\tMerged Map outputs=0',
    '\t\tGC time elapsed (ms)=97',
    '\t\tTotal committed heap usage (bytes)=406847488',
    '\tFile Input Format Counters ',
    '\t\tBytes Read=1085440',
    '2026-11-21 13:24:17,673 INFO  [LocalJobRunner Map Task Executor #0] [tid:47] org.apache.hadoop.mapred.LocalJobRunner: Finishing task: attempt_local761895027_0001_m_000000_0',
    '2026-11-21 13:24:17,679 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.Task: Final Counters for attempt_local761895027_0001_m_000001_0: Counters: 17',
    '\tFile System Counters',
    '\t\tFILE: Number of bytes read=4276192',
    '\t\tFILE: Number of bytes written=4985264',
    '\t\tFILE: Number of read operations=0',
    '\t\tFILE: Number of large read operations=0',
    '\t\tFILE: Number of write operations=0',
    '\tMap-Reduce Framework',
    '\t\tMap input records=10000',
    '\t\tMap output records=10000',
    '\t\tMap output bytes=1110000',
    '\t\tMap output materialized bytes=1130006',
    '\t\tInput split bytes=87',
    '\t\tCombine input records=0',
    '\t\tSpilled Records=20000',
    '\t\tFailed Shuffles=0',
    '\t\tMerged Map outputs=0',
    '\t\tGC time elapsed (ms)=97',
    '\t\tTotal committed heap usage (bytes)=406847488',
    '\tFile Input Format Counters ',
    '\t\tBytes Read=1122304',
    '2026-11-21 13:24:17,679 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] org.apache.hadoop.mapred.LocalJobRunner: Finishing task: attempt_local761895027_0001_m_000001_0',
)

M0 = "attempt_local761895027_0001_m_000000_0"
M1 = "attempt_local761895027_0001_m_000001_0"
TERASORT = "splitlog-yarn-logs/application_1756057717712_0002.yarn-logs.txt.gz"
REDUCE_CONTAINER = "container_1756057717712_0002_01_000032"


def _read(path: Path) -> tuple[list[Row], ReadContext]:
    ctx = ReadContext(path)
    return list(read_task_log(path, ctx)), ctx


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
    counters = {(c["attempt_id"], c["counter_name"]): c["value"] for c in table(rows, "counters")
                if c["group_name"] == "org.apache.hadoop.mapreduce.TaskCounter"}
    for attempt in (M0, M1):
        spilled_bytes = sum(int(str(e["bytes"])) for e in events
                            if e["attempt_id"] == attempt and e["kind"] == "spill_bytes")
        spilled_records = sum(int(str(e["records"])) for e in events
                              if e["attempt_id"] == attempt and e["kind"] == "spill_records")
        assert spilled_bytes == counters[(attempt, "MAP_OUTPUT_BYTES")]
        assert spilled_records == counters[(attempt, "MAP_OUTPUT_RECORDS")]


def test_runner_phases_cover_each_attempt_and_spill_data_adds_up(runner_log: Path) -> None:
    rows, _ = _read(runner_log)
    attempts = {a["attempt_id"]: a for a in table(rows, "attempts")}
    phases = table(rows, "attempt_phases")
    for attempt, row in attempts.items():
        main = sorted((p for p in phases if p["attempt_id"] == attempt and p["lane"] == Lane.MAIN.value),
                      key=lambda p: int(str(p["start_ms"])))
        assert [p["phase"] for p in main] == ["setup", "read+map+collect", "spill", "merge", "commit", "other"]
        assert main[0]["start_ms"] == row["start_ms"]
        assert main[-1]["end_ms"] == row["finish_ms"]
        for before, after in itertools.pairwise(main):
            assert before["end_ms"] == after["start_ms"]
        covered = sum(int(str(p["dur_ms"])) for p in main)
        assert abs(covered - (int(str(row["finish_ms"])) - int(str(row["start_ms"])))) <= COVERAGE_TOLERANCE_MS
        spill_bytes = sum(int(str(p["data_bytes"])) for p in phases if p["attempt_id"] == attempt
                          and p["phase"] == "spill")
        counter = next(c["value"] for c in table(rows, "counters")
                       if c["attempt_id"] == attempt and c["counter_name"] == "MAP_OUTPUT_BYTES")
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
    unknown = ("2026-11-21 13:24:16,276 INFO  [LocalJobRunner Map Task Executor #1] [tid:48] "
               "org.apache.hadoop.mapred.Task:  Using ResourceCalculatorProcessTree : [ ]")  # real, left out above
    path = tmp_path / "job.log"
    path.write_text("\n".join([*RUNNER_EXCERPT[:at], unknown, *RUNNER_EXCERPT[at:]]) + "\n")
    rows, ctx = _read(path)
    others = [e for e in table(rows, "attempt_events") if e["kind"] == "other"]
    assert [(e["attempt_id"], e["detail"]) for e in others] == [(M1, " Using ResourceCalculatorProcessTree : [ ]")]
    job_level = sum(1 for r in rows if r.table == "events")
    assert ctx.unknown["task_log_line"] == len(others) + job_level


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("2025-13-45 17:58:22,408 INFO [main] org.apache.hadoop.mapred.MapTask: Finished spill 0", "malformed timestamp"),
        ("2025-08-24 17:58:22,408 Finished spill 0", "malformed log line"),
        ("2025-08-24 17:58:22 INFO [main] org.apache.hadoop.mapred.MapTask: Finished spill 0", "malformed log line"),
    ],
)
def test_a_malformed_line_is_skipped_and_named(fixtures_dir: Path, tmp_path: Path, line: str, message: str) -> None:
    # A real reduce container's syslog (TeraSort on YARN) with one bad line, and a continuation of it, in the
    # middle: every other line gives the rows it gives without them, and the bad line is named.
    lines = _container_files(fixtures_dir, REDUCE_CONTAINER)["syslog"].splitlines()
    at = next(i for i in range(len(lines) // 2, 0, -1) if lines[i][:4].isdigit())  # a record's first line
    pristine_dir, bad_dir = tmp_path / "pristine" / REDUCE_CONTAINER, tmp_path / "bad" / REDUCE_CONTAINER
    for where, text in ((pristine_dir, lines), (bad_dir, [*lines[:at], line, "\tat its continuation", *lines[at:]])):
        where.mkdir(parents=True)
        (where / "syslog").write_text("\n".join(text) + "\n")
    pristine, pristine_ctx = _read(pristine_dir / "syslog")
    rows, ctx = _read(bad_dir / "syslog")
    (error,) = ctx.skipped
    assert isinstance(error, TraceParseError)
    assert message in error.message
    assert (error.line, error.path) == (at + 1, str(bad_dir / "syslog"))
    assert ctx.events_read == pristine_ctx.events_read
    assert ctx.unknown == pristine_ctx.unknown  # the continuation went with its record, not to orphan lines

    def shifted(r: Row) -> tuple[str, dict[str, object]]:
        values = dict(r.values)
        if r.table == "attempt_events" and values["line_no"] > at:
            values["line_no"] -= 2
        return r.table, values

    assert [shifted(r) for r in rows] == [(r.table, r.values) for r in pristine]
    result = ingest_paths([bad_dir / "syslog"], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert f"1 unreadable record skipped (line {at + 1})" in (result.error or "")
    assert result.rows == ingest_paths([pristine_dir / "syslog"], Store(tmp_path / "store0")).results[0].rows


def test_a_log_of_mostly_malformed_lines_is_given_up(tmp_path: Path) -> None:
    path = tmp_path / "syslog"
    path.write_text("\n".join([RUNNER_EXCERPT[0], *(f"2025-08-24 17:58:{i % 60:02d} bad" for i in range(101))]) + "\n")
    with pytest.raises(TraceParseError, match="more than 100 unreadable records; the first: malformed log line") as err:
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
    at = next(i for i in range(start, len(RUNNER_EXCERPT)) if RUNNER_EXCERPT[i].startswith("\t\tMap input records="))
    path = tmp_path / "syslog"
    path.write_text("\n".join([*RUNNER_EXCERPT[:at], counter, *RUNNER_EXCERPT[at + 1:]]) + "\n")
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
    path.write_text("\n".join([*RUNNER_EXCERPT[:at], huge, *RUNNER_EXCERPT[at + 1:]]) + "\n")
    rows, ctx = _read(path)
    (error,) = ctx.skipped
    assert "does not fit in 64 bits" in error.message
    assert error.line == at + 1
    events = table(rows, "attempt_events")
    assert at + 1 not in {e["line_no"] for e in events}
    assert len(events) == len(table(_read(runner_log)[0], "attempt_events")) - 1
    assert ctx.events_read == len(events) + sum(1 for r in rows if r.table == "events")


def test_spill_sizes_follow_the_sort_buffer_arithmetic() -> None:
    """Spill 1 of TeraSort's map 0 wraps around the end of the 100 MiB buffer."""
    def event(message: str) -> tuple[int | None, int | None]:
        rec = LogRecord(1, 0, "INFO", "main", None, "org.apache.hadoop.mapred.MapTask", message)
        ev = classify(rec)
        return ev.bytes, ev.records

    assert event("bufstart = 75355282; bufend = 34888140; bufvoid = 104857600") == (64390458, None)
    assert event("bufstart = 0; bufend = 72511698; bufvoid = 104857600") == (72511698, None)
    # length counts metadata ints: (length - 1) / 4 + 1 records
    assert event("kvstart = 18838816(75355264); kvend = 16313704(65254816); length = 2525113/6553600") == (
        None, 631279)
    assert event("kvstart = 26214396(104857584); kvend = 23370804(93483216); length = 2843593/6553600") == (
        None, 710899)  # 710899 + 631279 = 1342178 = the map's output records


def test_a_combined_split_reads_the_sum_of_its_files() -> None:
    """CombineFileSplit.toString: "Paths:" then each file's path:offset+length, comma separated, and
    " Locations:...; " where it has hosts.  The map read the sum (a plain split's regex took the last)."""
    def split_bytes(message: str) -> int | None:
        ev = classify(LogRecord(1, 0, "INFO", "main", None, "org.apache.hadoop.mapred.MapTask", message))
        assert ev.kind is TaskLogEventKind.SPLIT
        return ev.bytes

    # as this machine's LocalJobRunner wrote it for CombineTextInputFormat over three 2 MiB files
    assert split_bytes("Processing split: Paths:/tmp/in/part-m-00001:0+2097200,/tmp/in/part-m-00002:0+2097100,"
                       "/tmp/in/part-m-00000:0+2097200") == 6_291_500  # fmt: skip
    assert split_bytes("Processing split: Paths:/user/a/x.txt:0+134217728,/user/a/y.txt:134217728+1000 "
                       "Locations:dn1:dn2:; ") == 134_218_728  # fmt: skip
    assert split_bytes("Processing split: Paths:/only/one:5+10") == 10
    assert split_bytes("Processing split: hdfs://nn/in:0+64") == 64  # a plain FileSplit as before
    assert split_bytes("Processing split: Paths:") is None  # nothing legible: unknown, not 0


def test_counter_block_and_display_names() -> None:
    extra = ((2, "\tMap-Reduce Framework"), (3, "\t\tShuffled Maps =76"), (4, "\tFile Input Format Counters "),
             (5, "\t\tBytes Read=134217800"), (6, "\torg.apache.hadoop.examples.terasort.TeraGen$Counters"),
             (7, "\t\tCHECKSUM=107387891658806101"))
    rec = LogRecord(1, 0, "INFO", "main", None, "org.apache.hadoop.mapred.Task",
                    "Final Counters for attempt_1_0001_m_000000_0: Counters: 3", extra)
    assert parse_counter_block(rec, Path("syslog"), ReadContext(Path("syslog"))) == [
        ("org.apache.hadoop.mapreduce.TaskCounter", "SHUFFLED_MAPS", 76),
        ("org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter", "BYTES_READ", 134217800),
        ("org.apache.hadoop.examples.terasort.TeraGen$Counters", "CHECKSUM", 107387891658806101),
    ]
    assert counter_name("File System Counters", "HDFS: Number of bytes read erasure-coded") == (
        "org.apache.hadoop.mapreduce.FileSystemCounter", "HDFS_BYTES_READ_EC")


def test_the_pattern_table_names_every_kind_with_versions() -> None:
    assert len({p.name for p in PATTERNS}) == len(PATTERNS)
    assert all(p.versions for p in PATTERNS)
    covered = {p.kind for p in PATTERNS}
    assert covered == set(TaskLogEventKind) - {TaskLogEventKind.OTHER}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(blacklist_characters="\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"),
                        max_size=60), max_size=30))
def test_lines_without_a_timestamp_never_fail_and_are_all_accounted(lines: list[str]) -> None:
    """Unprefixed text continues a record or is counted as orphan; nothing raises."""
    lines = [x for x in lines if not x[:4].isdigit()]
    head = RUNNER_EXCERPT[0]
    ctx = ReadContext(Path("x"))
    records = list(parse_records(enumerate([head, *lines], start=1), Path("x"), ctx))
    assert len(records) == 1
    assert len(records[0].extra) == len(lines)


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
                name = text[len("LogType:"):]
            elif text == "LogContents:":
                body = []
            elif text.startswith("End of LogType:"):
                if current == container and name is not None and body is not None:
                    files[name] = body[:-1] if body and body[-1] == "" else body
                body = None
            elif body is not None:
                body.append(text)
    return {k: "\n".join(v) + "\n" for k, v in files.items()}


def test_a_container_directory_reads_syslog_with_its_shuffle_log(fixtures_dir: Path, tmp_path: Path) -> None:
    files = _container_files(fixtures_dir, REDUCE_CONTAINER)
    where = tmp_path / "application_1756057717712_0002" / REDUCE_CONTAINER
    where.mkdir(parents=True)
    for name in ("syslog", "syslog.shuffle"):
        (where / name).write_text(files[name])
    part = detect(where / "syslog.shuffle")
    assert part is not None
    assert not part.landed
    fmt = detect(where / "syslog")
    assert fmt is not None
    assert fmt.name == "hadoop-task-log"
    rows, _ = _read(where / "syslog")
    (attempt,) = table(rows, "attempts")
    assert attempt["attempt_id"] == "attempt_1756057717712_0002_r_000000_0"
    assert attempt["container_id"] == REDUCE_CONTAINER
    kinds = [e["kind"] for e in table(rows, "attempt_events")]
    assert kinds.count("fetch_start") == 76
    assert kinds.count("inmem_merge_done") == 15
    assert kinds.count("final_merge") == 1
    main = [p["phase"] for p in table(rows, "attempt_phases") if p["lane"] == "main"]
    assert main == ["setup", "wait", "shuffle", "sort", "reduce+write", "commit", "other"]


def test_a_job_known_only_from_a_task_log_is_listed_by_jobs(fixtures_dir: Path, tmp_path: Path) -> None:
    # `analyze`, `phases` and `report` know such a job (from its attempts); `phaseline jobs`, which
    # the "not in the store" errors point to, read only the jobs table and listed nothing.
    from click.testing import CliRunner

    from phaseline.cli import main

    files = _container_files(fixtures_dir, REDUCE_CONTAINER)
    (tmp_path / "syslog").write_text(files["syslog"])
    store = str(tmp_path / "s")
    assert CliRunner().invoke(main, ["ingest", str(tmp_path / "syslog"), "--store", store]).exit_code == 0
    res = CliRunner().invoke(main, ["jobs", "--store", store, "--format", "json"])
    assert res.exit_code == 0, res.output
    (job,) = json.loads(res.stdout)
    assert job["job_id"] == "job_1756057717712_0002"
    assert job["source_format"] == "hadoop-task-log"
    assert job["status"] is None  # no history: nothing the job record would say is made up


def test_child_logs_without_a_thread_field_parse(tmp_path: Path) -> None:
    """Hadoop 1.x child logs print no thread: the line still parses and sniffs."""
    lines = [
        "2013-05-02 10:00:00,120 INFO org.apache.hadoop.mapred.MapTask: Processing split: hdfs://nn/in:0+64",
        "2013-05-02 10:00:03,500 INFO org.apache.hadoop.mapred.Task: "  # 1.x Task.done's own spelling
        "Task:attempt_201305020900_0001_m_000000_0 is done. And is in the process of commiting",
        "2013-05-02 10:00:03,600 INFO org.apache.hadoop.mapred.Task: Task 'attempt_201305020900_0001_m_000000_0' done.",
    ]
    path = tmp_path / "syslog"
    path.write_text("\n".join(lines) + "\n")
    fmt = detect(path)
    assert fmt is not None
    assert fmt.name == "hadoop-task-log"
    rows, _ = _read(path)
    (attempt,) = table(rows, "attempts")
    assert (attempt["attempt_id"], attempt["status"]) == ("attempt_201305020900_0001_m_000000_0", "SUCCEEDED")
    assert {e["thread_name"] for e in table(rows, "attempt_events")} == {None}
    assert [e["kind"] for e in table(rows, "attempt_events")] == ["split", "commit_pending", "done"]


RUN_JSON = {
    "format": "phaseline-engine-run", "version": 1, "job_id": "job_local1_0001", "job_name": "phaseline-bench",
    "user": "root", "status": "SUCCEEDED", "submit_ms": 1000, "launch_ms": None, "finish_ms": 9000,
    "wall_start_ms": 500, "wall_end_ms": 9500, "hadoop_version": "3.5.0", "java_version": "17.0.15",
    "params": {"input_mb": 4.0, "maps": 2, "reduces": 1, "selectivity": 0.5},
    "settings": {"mapreduce.task.io.sort.mb": "1"},
    "counters": {"org.apache.hadoop.mapreduce.TaskCounter": {"MAP_INPUT_RECORDS": 41943}},
    "tasks": [], "log": "logs/job.log", "conf": "job_local1_0001_conf.xml", "jfr": None,
}


def test_engine_run_json_lands_job_counters_and_parameters(tmp_path: Path) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps(RUN_JSON, indent=1))
    fmt = detect(path)
    assert fmt is not None
    assert fmt.name == "phaseline-engine-run"
    rows = list(fmt.read(path, ReadContext(path)))
    (job,) = table(rows, "jobs")
    assert (job["job_id"], job["status"], job["total_maps"], job["total_reduces"]) == (
        "job_local1_0001", "SUCCEEDED", 2, 1)
    (counter,) = table(rows, "counters")
    assert (counter["scope"], counter["counter_name"], counter["value"]) == ("job_total", "MAP_INPUT_RECORDS", 41943)
    (event,) = table(rows, "events")
    assert '"selectivity":0.5' in str(event["payload_json"])


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "phaseline-engine-run",\n "version": 1,\n "job_id": }', "not valid JSON"),
        ('{"format": "phaseline-engine-run", "version": 7, "job_id": "job_local1_0001"}', "version 7"),
        ('{"format": "phaseline-engine-run", "version": 1, "job_id": "j", "submit_ms": "x"}',
         "submit_ms must be a 64-bit integer"),
    ],
)
def test_a_bad_run_json_is_a_parse_error(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "run.json"
    path.write_text(text)
    fmt = detect(path)
    assert fmt is not None
    with pytest.raises(TraceParseError, match=message):
        list(fmt.read(path, ReadContext(path)))


@pytest.mark.parametrize("bad", ["n/a", 2**64])
def test_an_unreadable_run_json_counter_is_skipped_and_named(tmp_path: Path, bad: object) -> None:
    # The bundled sample's real run.json with one counter made unreadable: the others land
    src = Path(__file__).parents[2] / "sample_traces" / "bench-8mb-sel1.0" / "run.json"
    doc = json.loads(src.read_text())
    group = doc["counters"]["org.apache.hadoop.mapreduce.TaskCounter"]
    name = next(iter(group))
    group[name] = bad
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc, indent=1))
    ctx = ReadContext(path)
    rows = list(read_engine_run(path, ctx))
    (error,) = ctx.skipped
    assert f"counter org.apache.hadoop.mapreduce.TaskCounter/{name} must be a 64-bit integer" in error.message
    pristine = [r.values for r in read_engine_run(src, ReadContext(src)) if r.table == "counters"]
    assert [r.values for r in rows if r.table == "counters"] == [c for c in pristine if c["counter_name"] != name]
    result = ingest_paths([path], Store(tmp_path / "store")).results[0]
    assert result.status == "partial"
    assert "1 unreadable record skipped, " in (result.error or "")


def _parallel_reduces_log(lens: list[int], owner: list[int]) -> str:
    """A LocalJobRunner log of two reduces running at once, their local fetchers' threads named by no
    reduce: fetcher k shuffles ``lens[k]`` bytes for reduce ``owner[k]`` (what the matching must find)."""
    head = "2026-11-21 13:23:{s:02d},{ms:03d} INFO  [{thread}] [tid:{tid}] org.apache.hadoop."
    out = [head.format(s=0, ms=0, thread=f"pool-1-thread-{r + 1}", tid=10 + r)
           + f"mapred.LocalJobRunner: Starting task: attempt_local1_0001_r_00000{r}_0" for r in (0, 1)]
    for k, n in enumerate(lens):
        out.append(head.format(s=1 + k // 1000, ms=k % 1000, thread=f"localfetcher#{k}", tid=1000 + k)
                   + f"mapreduce.task.reduce.LocalFetcher: localfetcher#{k} about to shuffle output of map "
                   f"attempt_local1_0001_m_{k:06d}_0 decomp: {n} len: {n} to MEMORY")
    for r in (0, 1):
        total = sum(n for n, o in zip(lens, owner, strict=True) if o == r)
        out += [head.format(s=59, ms=0, thread=f"pool-1-thread-{r + 1}", tid=10 + r)
                + f"mapred.Task: Final Counters for attempt_local1_0001_r_00000{r}_0: Counters: 1",
                "\tMap-Reduce Framework", f"\t\tReduce shuffle bytes={total}"]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize(
    ("lens", "owner"),
    [
        ([100, 50, 20, 9, 3, 1], [0, 1, 0, 1, 0, 1]),  # one assignment: 100 + 20 + 3 and 50 + 9 + 1
        ([10] * 1200, [k % 2 for k in range(1200)]),  # 1,200 fetchers: a recursion 1,200 deep had overflowed
    ],
)
def test_fetchers_of_parallel_reduces_are_matched_by_bytes(tmp_path: Path, lens: list[int], owner: list[int]) -> None:
    path = tmp_path / "job.log"
    path.write_text(_parallel_reduces_log(lens, owner))
    rows, ctx = _read(path)
    assert f"{len(lens)} fetcher threads matched to parallel reduces by shuffled bytes" in ctx.notes
    fetched = Counter()
    for e in table(rows, "attempt_events"):
        if e["kind"] == "fetch_start":
            fetched[e["attempt_id"]] += e["bytes"]
    for r in (0, 1):
        assert fetched[f"attempt_local1_0001_r_00000{r}_0"] == sum(
            n for n, o in zip(lens, owner, strict=True) if o == r)


@pytest.mark.parametrize(("key", "value"), [("status", 5), ("job_name", {"a": 1}), ("user", [1])])
def test_a_run_json_field_of_the_wrong_type_is_named(tmp_path: Path, key: str, value: object) -> None:
    # An int status raised AttributeError ('int' object has no attribute 'strip') out of the reader
    src = Path(__file__).parents[2] / "sample_traces" / "bench-8mb-sel1.0" / "run.json"
    doc = json.loads(src.read_text())
    doc[key] = value
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(TraceParseError, match=f"run.json '{key}' must be a string"):
        list(read_engine_run(path, ReadContext(path)))


def test_a_run_json_task_id_of_the_wrong_type_skips_that_tasks_counters(tmp_path: Path) -> None:
    src = Path(__file__).parents[2] / "sample_traces" / "bench-8mb-sel1.0" / "run.json"
    doc = json.loads(src.read_text())
    group = "org.apache.hadoop.mapreduce.TaskCounter"
    doc["tasks"] = [{"task_id": 5, "counters": {group: {"MAP_INPUT_RECORDS": 1}}},
                    {"task_id": "task_local1_0001_m_000001", "counters": {group: {"MAP_INPUT_RECORDS": 2}}}]
    path = tmp_path / "run.json"
    path.write_text(json.dumps(doc))
    ctx = ReadContext(path)
    rows = list(read_engine_run(path, ctx))
    assert [e.message for e in ctx.skipped] == ["run.json 'task_id' must be a string, got '5'"]
    tasks = [c for c in table(rows, "counters") if c["scope"] == "task"]
    assert [(c["task_id"], c["value"]) for c in tasks] == [("task_local1_0001_m_000001", 2)]


def test_numbers_no_column_holds_in_a_shuffle_log_cost_only_their_line(fixtures_dir: Path, tmp_path: Path) -> None:
    # TeraSort's real reduce container: a merge line's byte count of 5,000 digits (int() refuses it: a
    # ValueError had escaped the reader) is skipped and named; a fetch 'len' of 5,000 digits (kept as text
    # in the line's fields) and fetches whose lens sum past 64 bits leave the shuffle's size unknown.
    files = _container_files(fixtures_dir, REDUCE_CONTAINER)
    shuffle = files["syslog.shuffle"].splitlines()
    at = next(i for i, ln in enumerate(shuffle) if re.search(r"Merging \d+ files, \d+ bytes from disk", ln))
    shuffle[at] = re.sub(r"files, \d+ bytes", "files, " + "7" * 5000 + " bytes", shuffle[at])
    fetches = [i for i, ln in enumerate(shuffle) if "about to shuffle output" in ln]
    shuffle[fetches[0]] = re.sub(r"len: \d+", "len: " + "9" * 5000, shuffle[fetches[0]])
    for i in fetches[1:3]:
        shuffle[i] = re.sub(r"len: \d+", f"len: {2**63 - 1}", shuffle[i])
    syslog = files["syslog"].splitlines()
    where = tmp_path / REDUCE_CONTAINER
    where.mkdir()
    (where / "syslog").write_text("\n".join(syslog) + "\n")
    (where / "syslog.shuffle").write_text("\n".join(shuffle) + "\n")
    (result,) = ingest_paths([where / "syslog"], Store(tmp_path / "s")).results
    assert result.status == "partial"
    assert f"1 unreadable record skipped (line {at + 1})" in (result.error or "")
    assert "a number in the line cannot be read: Exceeds the limit (4300 digits)" in (result.error or "")


@pytest.mark.parametrize("run", ["bench-8mb-sel1.8-merges", "bench-8mb-sel1.0", "bench-8mb-sel0.6-jfr"])
def test_every_spill_a_spill_thread_finishes_is_one_its_map_had_pending(run: str) -> None:
    # Two maps run at once in the bundled samples.  Their spill threads had been bound by their
    # first 'Finished spill' line alone: in bench-8mb-sel1.8-merges the two swapped, and one map's
    # spill 1 finished 80 ms after that map had logged its (RESET) for it (MapOutputBuffer logs
    # it only once the spill thread is done).
    path = Path(__file__).parents[2] / "sample_traces" / run / "logs" / "job.log"
    rows = list(read_task_log(path, ReadContext(path)))
    events = table(rows, "attempt_events")
    checked = 0
    for attempt in {e["attempt_id"] for e in events if "_m_" in (e["attempt_id"] or "")}:
        own = sorted((e for e in events if e["attempt_id"] == attempt), key=lambda e: e["line_no"])
        starts = [e for e in own if e["kind"] == "spill_start"]
        for fin in (e for e in own if e["kind"] == "spill_finish" and e["thread_name"] == "SpillThread"):
            k = int(fin["detail"].removeprefix("index="))
            reset = next((e for e in own if e["kind"] == "spill_reset" and e["line_no"] > starts[k]["line_no"]), None)
            assert starts[k]["ts_ms"] <= fin["ts_ms"], (attempt, k)
            assert reset is None or fin["ts_ms"] <= reset["ts_ms"], (attempt, k, fin, reset)
            checked += 1
    assert checked


def _attribution(path: Path) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]], tuple[str, ...]]:
    ctx = ReadContext(path)
    rows = list(read_task_log(path, ctx))
    events = sorted((e["attempt_id"], e["line_no"], e["kind"]) for e in table(rows, "attempt_events"))
    phases = sorted((p["attempt_id"], p["phase"], p["lane"], p["start_ms"], p["end_ms"], p["data_bytes"])
                    for p in table(rows, "attempt_phases"))  # fmt: skip
    return events, phases, tuple(ctx.notes)


@pytest.mark.parametrize(("run", "parallel"), [("bench-8mb-sel1.0", False), ("bench-8mb-sel1.8-merges", True)])
def test_a_log_without_thread_ids_keeps_helpers_of_successive_attempts_apart(
    tmp_path: Path, run: str, parallel: bool
) -> None:
    # A LocalJobRunner layout without %tid names every attempt's helpers alike: each reduce's
    # 'localfetcher#1', each map's 'SpillThread'.  Keyed by name alone they had been one thread, bound to
    # one attempt: a 4-map, 2-reduce word count without its ids gave 42 and 38 events to its reduces
    # (40 and 40 with them).  Now attempts that ran one after the other are attributed as with the ids;
    # where attempts ran in parallel the reader says it may have mixed some up.
    src = Path(__file__).parents[2] / "sample_traces" / run / "logs" / "job.log"
    stripped = tmp_path / "job.log"
    stripped.write_text(re.sub(r" \[tid:\d+\]", "", src.read_text()))
    assert "[tid:" not in stripped.read_text()
    with_ids, without = _attribution(src), _attribution(stripped)
    assert any("no thread ids" in n for n in without[2]) == parallel
    assert not any("no thread ids" in n for n in with_ids[2])
    if not parallel:
        assert without[0] == with_ids[0]
        assert without[1] == with_ids[1]
    else:
        moved = len(set(without[0]) ^ set(with_ids[0])) // 2
        assert moved < len(with_ids[0]) // 20  # a few helper lines of two maps at once, not whole threads
        # `phaseline ingest` prints a file's notes under its line (they had reached no output at all)
        res = CliRunner().invoke(main, ["ingest", "--store", str(tmp_path / "store"), str(stripped)])
        assert res.exit_code == 0, res.output
        assert "note: this LocalJobRunner log has no thread ids" in res.stderr
