"""Files that are no trace at all are skipped with "not a trace: ...", never landed or quarantined.

The logs are made here, line for line as the daemons write them: a Hadoop 1.x
TaskTracker's ``clienttrace`` (one line per map output served to a reduce:
``org.apache.hadoop.mapred.TaskTracker.clienttrace: src: ..., op: MAPRED_SHUFFLE``),
a DataNode's ``clienttrace`` (``op: HDFS_READ``), a JobTracker's log and a
syslog-style text log.  The MapReduce loggers of the first two made the task-log
reader claim them, and they landed as task logs whose every line was unknown.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from phaseline.verify import verify_store

TT_CLIENTTRACE = (
    "2011-03-08 10:00:{s:02d},123 INFO org.apache.hadoop.mapred.TaskTracker.clienttrace: src: 10.0.0.1:50060, "
    "dest: 10.0.0.2:{port}, bytes: 65536, op: MAPRED_SHUFFLE, cliID: attempt_201103080000_0001_m_0000{s:02d}_0, "
    "duration: 1234567"
)
DN_CLIENTTRACE = (
    "2016-03-08 10:00:{s:02d},123 INFO org.apache.hadoop.hdfs.server.datanode.DataNode.clienttrace: "
    "src: /10.0.0.1:50010, dest: /10.0.0.2:{port}, bytes: 65536, op: HDFS_READ, cliID: DFSClient_NONMAPREDUCE_1_1, "
    "offset: 0, srvID: 7f1c2d3e, blockid: BP-1-10.0.0.1-1457000000000:blk_10737418{s:02d}_1001, duration: 1234567"
)
JOBTRACKER = (
    "2011-03-08 10:00:{s:02d},000 INFO org.apache.hadoop.mapred.JobTracker: Adding tracker "
    "tracker_host{s}:localhost/127.0.0.1:{port} to host host{s}"
)
SYSLOG = "Nov 28 10:00:{s:02d} host1 sshd[{port}]: Accepted publickey for hadoop from 10.0.0.{s} port 22"


@pytest.mark.parametrize(
    ("template", "why"),
    [
        (TT_CLIENTTRACE, "none of them a MapReduce task's; its loggers: org.apache.hadoop.mapred.TaskTracker.clienttrace"),
        (JOBTRACKER, "none of them a MapReduce task's; its loggers: org.apache.hadoop.mapred.JobTracker (40 lines)"),
        (DN_CLIENTTRACE, "format not recognised"),
        (SYSLOG, "format not recognised"),
    ],
    ids=["tasktracker-clienttrace", "jobtracker", "datanode-clienttrace", "syslog"],
)  # fmt: skip
def test_a_log_that_is_no_trace_is_skipped(template: str, why: str, tmp_path: Path) -> None:
    log = tmp_path / "daemon.log"
    log.write_text("".join(template.format(s=i, port=40000 + i) + "\n" for i in range(40)))
    store = Store(tmp_path / "store")
    (result,) = ingest_paths([log], store).results
    assert result.status == "skipped"
    assert f"{log}: not a trace: " in (result.error or "")
    assert why in (result.error or "")
    assert result.rows == {}
    assert verify_store(store).ok


def test_a_real_task_log_still_lands(tmp_path: Path) -> None:
    job_log = Path(__file__).parents[2] / "sample_traces" / "bench-8mb-sel1.0" / "logs" / "job.log"
    (result,) = ingest_paths([job_log], Store(tmp_path / "store")).results
    assert (result.format, result.status) == ("hadoop-task-log", "landed")
    assert result.rows.get("attempts", 0) >= 2
