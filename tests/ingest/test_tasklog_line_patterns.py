"""Task-log lines one at a time: sort-buffer arithmetic, splits, counter names, the pattern table, 1.x lines."""

from __future__ import annotations

from pathlib import Path

from reader_checks import table

from ingest.base import ReadContext
from ingest.formats import detect
from ingest.tasklog_counters import counter_name
from ingest.tasklog_lines import classify, parse_counter_block
from ingest.tasklog_patterns import PATTERNS, LogRecord
from phaseline.hadoop_names import TaskLogEventKind
from tests.ingest.tasklog_helpers import _read


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
        None,
        631279,
    )
    assert event("kvstart = 26214396(104857584); kvend = 23370804(93483216); length = 2843593/6553600") == (
        None,
        710899,
    )  # 710899 + 631279 = 1342178 = the map's output records


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
    extra = (
        (2, "\tMap-Reduce Framework"),
        (3, "\t\tShuffled Maps =76"),
        (4, "\tFile Input Format Counters "),
        (5, "\t\tBytes Read=134217800"),
        (6, "\torg.apache.hadoop.examples.terasort.TeraGen$Counters"),
        (7, "\t\tCHECKSUM=107387891658806101"),
    )
    rec = LogRecord(
        1,
        0,
        "INFO",
        "main",
        None,
        "org.apache.hadoop.mapred.Task",
        "Final Counters for attempt_1_0001_m_000000_0: Counters: 3",
        extra,
    )
    assert parse_counter_block(rec, Path("syslog"), ReadContext(Path("syslog"))) == [
        ("org.apache.hadoop.mapreduce.TaskCounter", "SHUFFLED_MAPS", 76),
        ("org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter", "BYTES_READ", 134217800),
        ("org.apache.hadoop.examples.terasort.TeraGen$Counters", "CHECKSUM", 107387891658806101),
    ]
    assert counter_name("File System Counters", "HDFS: Number of bytes read erasure-coded") == (
        "org.apache.hadoop.mapreduce.FileSystemCounter",
        "HDFS_BYTES_READ_EC",
    )


def test_the_pattern_table_names_every_kind_with_versions() -> None:
    assert len({p.name for p in PATTERNS}) == len(PATTERNS)
    assert all(p.versions for p in PATTERNS)
    covered = {p.kind for p in PATTERNS}
    assert covered == set(TaskLogEventKind) - {TaskLogEventKind.OTHER}


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
