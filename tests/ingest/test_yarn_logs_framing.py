"""Sniffing `yarn logs` output, and framing hand-made ones: 2.x LogLength, stray contents, a failed attempt."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from ingest.base import ReadContext
from ingest.yarn_logs import read_yarn_logs, sniff_yarn_logs
from phaseline.errors import TraceParseError
from phaseline.hadoop_names import node_manager_host
from tests.ingest.yarn_logs_helpers import FOLDER, TERAGEN


def test_sniffing_and_host_names(fixtures_dir: Path) -> None:
    with gzip.open(fixtures_dir / FOLDER / TERAGEN, "rb") as fh:
        head = fh.read(8192)
    assert sniff_yarn_logs(head, Path("x"))
    assert not sniff_yarn_logs(b"2025-08-24 17:58:22,408 INFO [main] x.Y: z\n", Path("x"))
    assert node_manager_host("hadoopnode_34573") == "hadoopnode"
    assert node_manager_host("node-1.example.org") == "node-1.example.org"


HADOOP2_STYLE = """\
Container: container_1456_0007_01_000002 on node7_45454
=====================================================
LogType:stderr
Log Upload Time:Mon Jan 04 10:00:00 +0000 2016
LogLength:0
Log Contents:

LogType:syslog
Log Upload Time:Mon Jan 04 10:00:00 +0000 2016
LogLength:{length}
Log Contents:
{syslog}
LogType:stdout
Log Upload Time:Mon Jan 04 10:00:00 +0000 2016
LogLength:0
Log Contents:

"""
SYSLOG = (
    "2016-01-04 10:00:01,000 INFO [main] org.apache.hadoop.mapred.MapTask: Processing split: hdfs://nn/in:0+100\n"
    "2016-01-04 10:00:02,000 INFO [main] org.apache.hadoop.mapred.Task: "
    "Task:attempt_1456_0007_m_000000_0 is done. And is in the process of committing\n"
    "2016-01-04 10:00:02,010 INFO [main] org.apache.hadoop.mapred.Task: Task 'attempt_1456_0007_m_000000_0' done."
)


def test_hadoop2_output_without_end_lines_is_framed_by_log_length(tmp_path: Path) -> None:
    path = tmp_path / "app.txt"
    path.write_text(HADOOP2_STYLE.format(length=len(SYSLOG) + 1, syslog=SYSLOG))
    rows = list(read_yarn_logs(path, ReadContext(path)))
    (attempt,) = [r.values for r in rows if r.table == "attempts"]
    assert attempt["attempt_id"] == "attempt_1456_0007_m_000000_0"
    assert attempt["host"] == "node7"
    assert attempt["finish_ms"] - attempt["start_ms"] == 1010
    logs = [r.values for r in rows if r.table == "events"]
    assert sorted('"log_type":"std' in str(v["payload_json"]) for v in logs) == [True, True]


def test_contents_before_any_header_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "app.txt"
    path.write_text("Container: container_1456_0007_01_000002 on node7_45454\nLogContents:\nhello\n")
    with pytest.raises(TraceParseError, match="before any") as err:
        list(read_yarn_logs(path, ReadContext(path)))
    assert err.value.line == 2


FAILED_ATTEMPT = """\
Container: container_1456_0007_01_000003 on node7_45454
LogAggregationType: AGGREGATED
====================================================================
LogType:launch_container.sh
LogLength:{launch_length}
LogContents:
{launch}
End of LogType:launch_container.sh
****************************************************************

Container: container_1456_0007_01_000003 on node7_45454
LogAggregationType: AGGREGATED
====================================================================
LogType:syslog
LogLength:{syslog_length}
LogContents:
{syslog}
End of LogType:syslog
****************************************************************
"""
LAUNCH = (
    'exec /bin/bash -c "$JAVA_HOME/bin/java -Xmx820m org.apache.hadoop.mapred.YarnChild 10.0.3.4 38703 '
    'attempt_1456_0007_m_000001_0 3 1>stdout 2>stderr "'
)
FAILING_SYSLOG = (
    "2016-01-04 10:00:01,000 INFO [main] org.apache.hadoop.mapred.MapTask: Processing split: hdfs://nn/in:0+100\n"
    "2016-01-04 10:00:01,050 INFO [main] org.apache.hadoop.mapred.MapTask: mapreduce.task.io.sort.mb: 100\n"
    "2016-01-04 10:00:04,000 WARN [main] org.apache.hadoop.mapred.YarnChild: Exception running child : "
    "java.io.IOException: No space left on device\n"
    "\tat org.apache.hadoop.mapred.MapTask$MapOutputBuffer.sortAndSpill(MapTask.java:1605)\n"
    "2016-01-04 10:00:04,010 INFO [main] org.apache.hadoop.mapred.Task: Runnning cleanup for the task"
)


def test_a_failed_attempt_lands_with_its_error_and_whole_span(tmp_path: Path) -> None:
    path = tmp_path / "app.txt"
    path.write_text(
        FAILED_ATTEMPT.format(
            launch_length=len(LAUNCH) + 1,
            launch=LAUNCH,
            syslog_length=len(FAILING_SYSLOG) + 1,
            syslog=FAILING_SYSLOG,
        )
    )
    rows = list(read_yarn_logs(path, ReadContext(path)))
    (attempt,) = [r.values for r in rows if r.table == "attempts"]
    assert attempt["attempt_id"] == "attempt_1456_0007_m_000001_0"  # from the launch script: no line names it
    assert attempt["status"] == "FAILED"
    assert str(attempt["error"]).startswith("java.io.IOException: No space left on device")
    (task,) = [r.values for r in rows if r.table == "tasks"]
    assert (task["status"], task["successful_attempt_id"]) == ("FAILED", None)
    phases = [(r.values["phase"], r.values["dur_ms"]) for r in rows if r.table == "attempt_phases"]
    assert phases == [("setup", 0), ("read+map+collect", 3010)]
