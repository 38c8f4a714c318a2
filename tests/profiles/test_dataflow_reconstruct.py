"""Reconstruction of vertex instances from tiny hand-made sample traces (HiTune section 5.3)."""

from __future__ import annotations

from pathlib import Path

from ingest.pipeline import ingest_paths
from phaseline.store import Store
from profiles.dataflow.reconstruct import dataflow_query, reconstruct, store_instances
from profiles.dataflow.spec import MatchStatus, shipped_spec
from tests.hitune_samples import A0, COPIER, JOB, MAP, R0, REDUCER, SPILL, write_samples
from tests.profiles.profiles_doubles import make_con


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


def test_io_events_count_as_idle_periods() -> None:
    # JFR records a file or socket read/write (jdk.FileRead...) as sample_type 'io', state
    # RUNNABLE, with its duration: a wait like a park (HiTune section 7.3 reads the time a
    # reduce spends writing to a slow disk as idle).  It had counted as neither busy (only
    # point samples are) nor idle (only waiting states were).
    #   thread 1 of A0: RUNNABLE samples at 0, 10, 20; at 30 a 50 ms read (= 5 periods of 10 ms)
    def sample(ts: int, kind: str, state: str, duration: float) -> dict[str, object]:
        return {"job_id": JOB, "attempt_id": A0, "host": "h1", "thread_id": 1, "thread_name": "main", "ts_ms": ts,
                "sample_type": kind, "state": state, "stack_id": 1, "duration_ms": duration, "source": "jfr"}

    con = make_con({
        "samples": [sample(t, "execution", "RUNNABLE", 0.0) for t in (0, 10, 20)] + [sample(30, "io", "RUNNABLE", 50.0)],
        "stacks": [{"stack_id": 1, "frames": ["java.io.FileInputStream.readBytes", MAP], "top_frame": "java.io.FileInputStream.readBytes",
                 "depth": 2}],
    })
    (inst,) = reconstruct(con, JOB, shipped_spec("hadoop-0.20"), period_ms=10).instances.to_pylist()
    assert (inst["vertex"], inst["start_ms"], inst["end_ms"]) == ("map", 0, 80)
    assert (inst["busy_samples"], inst["idle_samples"], inst["samples"]) == (3, 5, 8)


def test_the_sampling_period_is_estimated_per_attempt_not_per_host_thread_id(tmp_path: Path, store_dir: Path) -> None:
    # Two map JVMs on one host: both main threads are Java thread 1.  Each is sampled every
    # 20 ms, the second 10 ms after the first, and each waits 200 ms once.  Merged into one
    # trace per (host, thread id), their samples were 10 ms apart: the period came out 10 ms
    # and each wait counted 20 idle samples instead of 10.
    a1 = A0.replace("m_000000", "m_000001")
    extra = []
    for attempt, offset in ((A0, 0), (a1, 10)):
        extra += [f"{1000 + offset + 20 * i}\tstack\th1|{attempt}|1|main\tRUNNABLE|X.map;{MAP}" for i in range(20)]
        extra.append(f"{1000 + offset + 400}\tstack\th1|{attempt}|1|main\tWAITING|java.lang.Object.wait;{MAP}|200")
    samples = tmp_path / "s.tsv"
    samples.write_text("#hitune-samples 1\n" + "\n".join(extra) + "\n")
    store = Store(store_dir)
    ingest_paths([samples], store)
    result = reconstruct(store.connect(), JOB, shipped_spec("hadoop-0.20"))
    assert result.period_ms == 20
    got = sorted((r["attempt_id"], r["busy_samples"], r["idle_samples"]) for r in result.instances.to_pylist())
    assert got == [(A0, 20, 10), (a1, 20, 10)]


def test_a_thread_group_pool_gives_one_instance_per_attempt(tmp_path: Path, store_dir: Path) -> None:
    # Figure 8's Thread Group Pool (copy) (1, 20) {copier}: a reduce's copier threads run in
    # concert, and its program location is "multiple ranges each in a different thread"
    # (section 5.3): one copier instance per reduce (2*M + 4*R instances, section 6.2), as in
    # HiTune's own reports.  Three MapOutputCopier threads had given three instances.
    #   threads 24, 25, 26 of R0: 4 samples each, 10 ms apart, from 1000, 1005, 1010; 25's last waits
    #   thread 1 of R0: the reducer, its own (Thread Pool) instance
    lines = [f"{1000 + 5 * k + 10 * i}\tstack\th2|{R0}|{24 + k}|MapOutputCopier {R0}.{k}\t"
             f"{'WAITING' if (k, i) == (1, 3) else 'RUNNABLE'}|Z.copy;{COPIER}" for k in range(3) for i in range(4)]
    lines.append(f"1100\tstack\th2|{R0}|1|main\tRUNNABLE|W.reduce;{REDUCER}")
    samples = tmp_path / "s.tsv"
    samples.write_text("#hitune-samples 1\n" + "\n".join(lines) + "\n")
    store = Store(store_dir)
    ingest_paths([samples], store)
    spec = shipped_spec("hadoop-0.20")
    result = reconstruct(store.connect(), JOB, spec, period_ms=10)
    got = sorted((r["vertex"], r["thread_id"], r["thread_name"], r["start_ms"], r["end_ms"], r["samples"],
                  r["busy_samples"], r["idle_samples"]) for r in result.instances.to_pylist())
    assert got == [
        ("copier", 24, f"MapOutputCopier {R0}.0", 1000, 1040, 12, 11, 1),
        ("reduce", 1, "main", 1100, 1100, 1, 1, 0),
    ]
    assert [(r["thread_id"], r["kind"], r["samples"]) for r in result.group_threads.to_pylist()] == [
        (24, "thread", 4), (25, "thread", 4), (26, "thread", 4)]
    store_instances(store, result, spec)
    con = store.connect()
    busy = {r["vertex"]: (r["instances"], r["samples"]) for r in dataflow_query(con, "busy_idle", job_id=JOB)}
    assert busy == {"copier": (1, 12), "reduce": (1, 1)}
    hot = {(r["vertex"], r["method"], r["state"]): r["samples"] for r in dataflow_query(con, "hotspots", job_id=JOB, top=5)}
    assert hot == {("copier", "Z.copy", "RUNNABLE"): 11, ("copier", "Z.copy", "WAITING"): 1,
                   ("reduce", "W.reduce", "RUNNABLE"): 1}
    assert spec.group_vertices() == ("copier", "merge")
    assert shipped_spec("hadoop-2").group_vertices() == ("copier",)
