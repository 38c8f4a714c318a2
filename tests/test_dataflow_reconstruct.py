"""Reconstruction of vertex instances from tiny hand-made sample traces (HiTune section 5.3)."""

from __future__ import annotations

from pathlib import Path

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from profiles.dataflow.reconstruct import dataflow_query, reconstruct, store_instances
from profiles.dataflow.spec import MatchStatus, shipped_spec

A0 = "attempt_201106081729_0001_m_000000_0"
R0 = "attempt_201106081729_0001_r_000000_0"
JOB = "job_201106081729_0001"
MAP = "org.apache.hadoop.mapred.MapTask.run"
SPILL = "org.apache.hadoop.mapred.MapTask$MapOutputBuffer$SpillThread.run"
REDUCER = "org.apache.hadoop.mapred.ReduceTask.runNewReducer"
COPIER = "org.apache.hadoop.mapred.ReduceTask$ReduceCopier$MapOutputCopier.run"

# Timeline (ms after 1000; one char = 10 ms), hadoop-0.20 spec:
#
#   thread 1 "main"   of A0:  M M M . . M        map: 1000..1050, 4 samples (3 busy, 1 waiting)
#   thread 24 "Spill" of A0:    S S S            spill: 1010..1030 (2 busy + 1 waiting)
#   thread 1 "main"   of R0:              R R    reduce: 1060..1070
#   thread 30 copier  of R0:            C        copier: 1050 (one sample, start = end)
#   thread 1 "main"   of A0:        ?            unmapped (LocalJobRunner code), kept and counted
LINES = [
    (1000, "h1", A0, 1, "main", "RUNNABLE", ["X.map", MAP]),
    (1010, "h1", A0, 1, "main", "RUNNABLE", ["Y.collect", MAP]),
    (1010, "h1", A0, 24, "SpillThread", "RUNNABLE", ["Q.sort", SPILL]),
    (1020, "h1", A0, 1, "main", "WAITING", ["java.lang.Object.wait", MAP]),
    (1020, "h1", A0, 24, "SpillThread", "WAITING", ["java.lang.Object.wait", SPILL]),
    (1030, "h1", A0, 24, "SpillThread", "RUNNABLE", ["Q.sort", SPILL]),
    (1040, "h1", A0, 1, "main", "RUNNABLE", ["org.apache.hadoop.mapred.LocalJobRunner$Job.run"]),
    (1050, "h1", A0, 1, "main", "RUNNABLE", ["X.map", MAP]),
    (1050, "h2", R0, 30, "MapOutputCopier r0.0", "TIMED_WAITING", ["Z.reserve", COPIER]),
    (1060, "h2", R0, 1, "main", "RUNNABLE", ["W.reduce", REDUCER]),
    (1070, "h2", R0, 1, "main", "BLOCKED", ["W.write", REDUCER]),
]


def write_samples(path: Path, extra: tuple[str, ...] = ()) -> Path:
    rows = ["#hitune-samples 1"]
    for ts, host, attempt, tid, name, state, frames in LINES:
        rows.append(f"{ts}\tstack\t{host}|{attempt}|{tid}|{name}\t{state}|{';'.join(frames)}")
    rows.extend(extra)
    path.write_text("\n".join(rows) + "\n")
    return path


def test_tiny_trace_gives_one_instance_per_thread_and_vertex(tmp_path: Path, store_dir: Path) -> None:
    store = Store(store_dir)
    ingest_paths([write_samples(tmp_path / "s.tsv")], store)
    result = reconstruct(store.connect(), JOB, shipped_spec("hadoop-0.20"), period_ms=10)
    got = sorted(
        (r["attempt_id"], r["host"], r["thread_id"], r["vertex"], r["start_ms"], r["end_ms"], r["samples"],
         r["busy_samples"], r["idle_samples"])
        for r in result.instances.to_pylist()
    )
    assert got == [
        (A0, "h1", 1, "map", 1000, 1050, 4, 3, 1),
        (A0, "h1", 24, "spill", 1010, 1030, 3, 2, 1),
        (R0, "h2", 1, "reduce", 1060, 1070, 2, 1, 1),
        (R0, "h2", 30, "copier", 1050, 1050, 1, 0, 1),
    ]
    assert (result.samples, result.mapped, result.unmapped, result.ambiguous) == (11, 10, 1, 0)
    (pos,) = result.unmapped_positions
    assert pos.status is MatchStatus.UNMAPPED
    assert pos.thread_name == "main"
    assert pos.samples == 1

    store_instances(store, result, shipped_spec("hadoop-0.20"))
    con = store.connect()
    busy = {r["vertex"]: (r["busy_pct"], r["idle_pct"]) for r in dataflow_query(con, "busy_idle", job_id=JOB)}
    assert busy["map"] == (75.0, 25.0)
    assert busy["copier"] == (0.0, 100.0)
    chart = dataflow_query(con, "chart", job_id=JOB)
    assert {(r["attempt_id"], r["segment"]) for r in chart} >= {(A0, "map"), (A0, "spill"), (R0, "reduce")}
    assert next(r for r in chart if r["segment"] == "idle" and r["attempt_id"] == A0)["start_ms"] == 1050


def test_waits_count_as_idle_periods_and_logs_bind_threads(tmp_path: Path, store_dir: Path) -> None:
    # A JFR-like trace without targets: the attempt comes from the task log's thread ids.
    #   thread 69 (executor): m_0 from its "Starting task" line at t=0, m_1 from t=1000
    #   at t=300 it parks 0.1 s inside MapTask.run (= 10 idle periods of 10 ms)
    #   thread 73 never logs: bound to no attempt, its samples are unattributed
    log = tmp_path / "job.log"
    log.write_text(
        "2026-11-21 13:33:00,000 INFO  [LocalJobRunner Map Task Executor #0] [tid:69] "
        "org.apache.hadoop.mapred.LocalJobRunner: Starting task: attempt_local1_0001_m_000000_0\n"
        "2026-11-21 13:33:01,000 INFO  [LocalJobRunner Map Task Executor #0] [tid:69] "
        "org.apache.hadoop.mapred.LocalJobRunner: Starting task: attempt_local1_0001_m_000001_0\n"
    )
    t0 = 1795267980000
    recs = [
        (t0 + 100, 69, "LocalJobRunner Map Task Executor #0", "RUNNABLE", MAP, ""),
        (t0 + 300, 69, "LocalJobRunner Map Task Executor #0", "WAITING", MAP, "|100"),
        (t0 + 350, 73, "SpillThread", "RUNNABLE", SPILL, ""),
        (t0 + 500, 69, "LocalJobRunner Map Task Executor #0", "RUNNABLE", MAP, ""),
        (t0 + 1100, 69, "LocalJobRunner Map Task Executor #0", "RUNNABLE", MAP, ""),
    ]
    samples = tmp_path / "s.tsv"
    samples.write_text(
        "#hitune-samples 1\n"
        + "".join(f"{ts}\tstack\tlocalhost||{tid}|{name}\t{st}|{fr}{dur}\n" for ts, tid, name, st, fr, dur in recs)
    )
    store = Store(store_dir)
    ingest_paths([log, samples], store)
    con = store.connect()
    con.execute("CREATE TEMP TABLE s2 AS SELECT * REPLACE ('job_local1_0001' AS job_id) FROM samples")
    con.execute("CREATE OR REPLACE TEMP VIEW samples AS SELECT * FROM s2")
    result = reconstruct(con, "job_local1_0001", shipped_spec("hadoop-2"), period_ms=10)
    got = sorted((r["attempt_id"][-10:], r["vertex"], r["start_ms"] - t0, r["end_ms"] - t0, r["busy_samples"],
                  r["idle_samples"]) for r in result.instances.to_pylist())
    assert got == [
        ("m_000000_0", "map", 100, 500, 2, 10),
        ("m_000001_0", "map", 1100, 1100, 1, 0),
    ]
    assert result.unattributed == 1
