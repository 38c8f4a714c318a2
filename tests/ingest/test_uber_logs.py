"""An uberized job (ingest.uber_subtasks): its tasks' lines in the ApplicationMaster's log.

The real run (tests/data/yarn/README.md): word count on 4 MiB in 4 maps and 1 reduce, uberized by
Hadoop 3.5.0 on phaseline's mini YARN cluster.  Its history says so (``JOB_INITED``), every
attempt's phases come from the AM's log, and its profile is one of tasks in one JVM.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from ingest.pipeline import ingest_paths
from ingest.tasklog_patterns import LogRecord
from ingest.uber_subtasks import UBER_THREAD, uber_attempts
from phaseline.store import Store
from profiles.extract import extract_profile
from profiles.profile import evidence_line

UBER_RUN = Path(__file__).resolve().parents[1] / "data" / "yarn" / "uber-wordcount-4mb"
JOB = "job_1796187806333_0001"
ATTEMPTS = {f"attempt_1796187806333_0001_m_00000{i}_0" for i in range(4)} | {"attempt_1796187806333_0001_r_000000_0"}


def _rec(ts: int, thread: str, logger: str, message: str) -> LogRecord:
    return LogRecord(ts, ts, "INFO", thread, None, f"org.apache.hadoop.{logger}", message)


def test_each_subtask_line_goes_to_the_next_attempt_its_thread_names() -> None:
    a, b = "attempt_1_0001_m_000000_0", "attempt_1_0001_r_000000_0"
    records = [
        _rec(1, "main", "mapreduce.v2.app.MRAppMaster", "Created MRAppMaster"),
        _rec(2, UBER_THREAD, "mapred.LocalContainerLauncher", "mapreduce.cluster.local.dir for uber task: /x"),
        _rec(3, UBER_THREAD, "mapred.MapTask", "Processing split: file:/in/part-0:0+100"),
        _rec(4, "SpillThread", "mapred.MapTask", "Finished spill 0"),  # a helper, while the map runs
        _rec(5, UBER_THREAD, "mapred.Task", f"Task:{a} is done. And is in the process of committing"),
        _rec(6, UBER_THREAD, "mapreduce.v2.app.job.impl.TaskImpl", "an AM class on the subtask thread"),
        _rec(7, UBER_THREAD, "mapred.ReduceTask", "Using ShuffleConsumerPlugin"),
        _rec(8, "localfetcher#1", "mapreduce.task.reduce.LocalFetcher", "localfetcher#1 about to shuffle"),
        _rec(9, "AsyncDispatcher event handler", "mapreduce.v2.app.job.impl.TaskAttemptImpl", f"{b} RUNNING"),
        _rec(10, UBER_THREAD, "mapred.Task", f"Task '{b}' done."),
        _rec(11, UBER_THREAD, "mapred.LocalContainerLauncher", "a trailing line naming no attempt"),
    ]
    tasks, am = uber_attempts(records)
    assert tasks == {a: [1, 2, 3, 4], b: [6, 7, 9]}
    assert am == [0, 5, 8, 10]
    # an ordinary AM's log: no subtask thread, every line the AM's
    assert uber_attempts(records[:1]) == ({}, [0])


def test_an_uberized_runs_attempts_get_their_phases_from_the_am_log(store_dir: Path) -> None:
    store = Store(store_dir)
    ingest_paths([UBER_RUN], store)
    con = store.connect()
    uberized = con.execute("SELECT DISTINCT uberized FROM raw.jobs WHERE job_id = ? AND uberized IS NOT NULL",
                           [JOB]).fetchall()  # fmt: skip
    assert uberized == [(True,)]  # the history's word; the logs' job record says nothing either way
    phased = dict(con.execute(
        "SELECT attempt_id, string_agg(phase, ',' ORDER BY start_ms) FROM attempt_phases WHERE job_id = ? "
        "GROUP BY attempt_id", [JOB]).fetchall())  # fmt: skip
    assert set(phased) == ATTEMPTS
    for attempt, phases in phased.items():
        if "_m_" in attempt:
            assert phases.startswith("setup,read+map+collect,spill")
        else:
            assert "shuffle,sort,reduce+write" in phases
    # every attempt ran in the AM's container, one after another
    rows = con.execute("SELECT container_id, start_ms, finish_ms FROM attempts WHERE job_id = ? ORDER BY start_ms",
                       [JOB]).fetchall()  # fmt: skip
    assert {c for c, _, _ in rows} == {"container_1796187806333_0001_01_000001"}
    assert all(prev[2] <= nxt[1] for prev, nxt in itertools.pairwise(rows))


def test_the_profile_of_an_uberized_run_is_one_of_one_jvm(store_dir: Path) -> None:
    store = Store(store_dir)
    ingest_paths([UBER_RUN], store)
    profile = extract_profile(store.connect(), JOB)
    assert profile.source.uberized
    assert profile.source.one_jvm
    assert profile.map_slots == 1
    assert "one JVM" in evidence_line(profile)
    assert profile.source.config["mapreduce.job.ubertask.enable"] == "true"
