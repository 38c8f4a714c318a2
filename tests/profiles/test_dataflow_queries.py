"""Golden tests of the dataflow_*.sql analyses on tiny inline vertex instances."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from profiles.dataflow.reconstruct import dataflow_query
from tests.profiles.profiles_doubles import make_con

JOB = "job_1_0001"


def vi(attempt: str, host: str, vertex: str, start: int, end: int, busy: int, idle: int, tid: int = 1) -> dict[str, Any]:
    return {"job_id": JOB, "attempt_id": attempt, "host": host, "thread_id": tid, "thread_name": "main",
            "vertex": vertex, "start_ms": start, "end_ms": end, "samples": busy + idle, "busy_samples": busy,
            "idle_samples": idle, "source": "reconstruct"}


# Figure 20 in miniature: three reduces; the one on h2 takes 50% longer with the same busy
# time and three times the idle time (the paper's slow-disk signature).
#   h1 r0: |-----|          100 ms, 8 busy 2 idle
#   h1 r1: |-----|          100 ms, 8 busy 2 idle
#   h2 r2: |--------|       150 ms, 8 busy 6 idle
REDUCES = [vi("a_r_0", "h1", "reduce", 0, 100, 8, 2), vi("a_r_1", "h1", "reduce", 0, 100, 8, 2),
           vi("a_r_2", "h2", "reduce", 0, 150, 8, 6)]


def test_by_host_normalizes_by_the_mean_instance() -> None:
    rows = dataflow_query(make_con({"vertex_instances": REDUCES}), "by_host", job_id=JOB, vertex="reduce")
    mean_ms, mean_samples = 350 / 3, 34 / 3
    got = {r["host"]: (r["instances"], r["norm_time"], r["norm_busy"], r["norm_idle"]) for r in rows}
    assert got["h1"] == (2, round(100 / mean_ms, 4), round(8 / mean_samples, 4), round(2 / mean_samples, 4))
    assert got["h2"] == (1, round(150 / mean_ms, 4), round(8 / mean_samples, 4), round(6 / mean_samples, 4))


def test_by_host_of_an_unknown_vertex_is_empty() -> None:
    assert dataflow_query(make_con({"vertex_instances": REDUCES}), "by_host", job_id=JOB, vertex="nope") == []


def test_shuffle_gap_from_the_last_map_to_each_shuffle_end() -> None:
    #   map   m0 |----|            0..40
    #   map   m1   |------|       10..60   <- last map end 60
    #   r0 copier   |--------|    20..90   gap 30
    #   r1 shuffle  |---------------| 20..120, its in-memory merger ends 130: gap 70
    rows = dataflow_query(make_con({"vertex_instances": [
        vi("m0", "h", "map", 0, 40, 1, 0), vi("m1", "h", "map", 10, 60, 1, 0),
        vi("r0", "h", "copier", 20, 90, 1, 0), vi("r1", "h", "shuffle", 20, 120, 1, 0),
        vi("r1", "h", "inmem_merge", 25, 130, 1, 0, tid=2), vi("r1", "h", "reduce", 130, 200, 1, 0),
    ]}), "shuffle_gap", job_id=JOB)
    assert [(r["attempt_id"], r["gap_ms"], r["gap_pct"]) for r in rows] == [("r0", 30, 15.0), ("r1", 70, 35.0)]


def test_chart_has_bootstrap_vertices_and_idle_per_attempt() -> None:
    #   attempt m0 starts at 0 (log), map 5..40, job's last instance ends 100
    con = make_con({
        "vertex_instances": [vi("m0", "h", "map", 5, 40, 1, 0), vi("r0", "h", "reduce", 50, 100, 1, 0)],
        "attempts": [{"job_id": JOB, "attempt_id": "m0", "task_type": "MAP", "start_ms": 0, "host": "h"},
                  {"job_id": JOB, "attempt_id": "r0", "task_type": "REDUCE", "start_ms": 45, "host": "h"}],
    })
    got = [(r["line"], r["attempt_id"], r["segment"], r["start_ms"], r["end_ms"]) for r in dataflow_query(con, "chart", job_id=JOB)]
    assert got == [(0, "m0", "bootstrap", 0, 5), (0, "m0", "map", 5, 40), (0, "m0", "idle", 40, 100),
                   (1, "r0", "bootstrap", 45, 50), (1, "r0", "reduce", 50, 100)]


def test_hotspots_count_samples_under_their_innermost_frame() -> None:
    con = make_con({
        "vertex_instances": [vi("m0", "h", "map", 0, 100, 3, 1)],
        "samples": [{"job_id": JOB, "host": "h", "thread_id": 1, "ts_ms": t, "stack_id": s, "state": st,
                  "sample_type": "execution", "duration_ms": 0.0, "source": "jfr"}
                 for t, s, st in [(0, 1, "RUNNABLE"), (10, 1, "RUNNABLE"), (20, 2, "WAITING"), (30, 1, "RUNNABLE"),
                                  (200, 1, "RUNNABLE")]],  # t=200 lies outside the instance
        "stacks": [{"stack_id": 1, "frames": ["a.B.sort", "MapTask.run"], "top_frame": "a.B.sort", "depth": 2},
                {"stack_id": 2, "frames": ["java.lang.Object.wait", "MapTask.run"], "top_frame": "java.lang.Object.wait",
                 "depth": 2}],
    })
    rows = dataflow_query(con, "hotspots", job_id=JOB, top=5)
    assert [(r["method"], r["state"], r["samples"], r["pct"], r["rank"]) for r in rows] == [
        ("a.B.sort", "RUNNABLE", 3, 75.0, 1), ("java.lang.Object.wait", "WAITING", 1, 25.0, 2),
    ]


def test_system_samples_and_log_records_attach_to_overlapping_instances() -> None:
    con = make_con({
        "vertex_instances": [vi("m0", "h", "map", 0, 100, 1, 0), vi("m1", "g", "map", 0, 100, 1, 0)],
        "system_samples": [{"host": "h", "ts_ms": t, "metric": "cpu_user_pct", "device": "all", "value": v}
                        for t, v in [(50, 40.0), (90, 60.0), (150, 99.0)]]
        + [{"host": "g", "ts_ms": 50, "metric": "cpu_user_pct", "device": "all", "value": 5.0}],
        "attempt_events": [{"job_id": JOB, "attempt_id": "m0", "thread_id": 1, "ts_ms": t, "kind": k}
                        for t, k in [(10, "spill_start"), (60, "spill_start"), (300, "task_finish")]],
    })
    sysrows = {(r["attempt_id"], r["metric"]): (r["samples"], r["mean_value"])
               for r in dataflow_query(con, "vertex_system", job_id=JOB)}
    assert sysrows == {("m0", "cpu_user_pct"): (2, 50.0), ("m1", "cpu_user_pct"): (1, 5.0)}
    logs = dataflow_query(con, "vertex_logs", job_id=JOB)
    assert [(r["attempt_id"], r["kind"], r["records"], r["first_ms"], r["last_ms"]) for r in logs] == [
        ("m0", "spill_start", 2, 10, 60)
    ]


@pytest.mark.parametrize("query", ["busy_idle", "hotspots", "chart", "shuffle_gap", "vertex_system", "vertex_logs"])
def test_empty_input_gives_no_rows(query: str) -> None:
    params: dict[str, Any] = {"job_id": JOB}
    if query == "hotspots":
        params["top"] = 3
    assert dataflow_query(make_con({}), query, **params) == []


def test_charts_draw_names_from_traces_as_text_not_mathtext(tmp_path: Path) -> None:
    # A host (or a spec's vertex) named "sr$\frac{$214" is mathtext to matplotlib by default:
    # `hotspots --by-host --out` ended in a ParseFatalException traceback.
    from profiles.dataflow.plots import write_busy_idle, write_chart

    odd = "sr$\\frac{$214"
    hosts = [{"host": odd, "norm_busy": 0.8, "norm_idle": 0.2}, {"host": "sr215", "norm_busy": 1.0, "norm_idle": 0.1}]
    out = write_busy_idle(hosts, tmp_path / "hosts.png", by="host", title=f"job on {odd}")
    assert out.stat().st_size > 1000
    chart = [{"start_ms": 0, "end_ms": 500, "line": 0, "segment": odd}, {"start_ms": 100, "end_ms": 900, "line": 1, "segment": "map"}]
    assert write_chart(chart, tmp_path / "chart.svg", title=odd).read_text().startswith("<?xml")


def test_a_job_with_reconstructed_and_hitune_instances_counts_one_source() -> None:
    # The HiTune CSVs give a job's instances (source hitune_csv); `phaseline dataflow` on raw
    # samples of the same job stores its own (reconstruct): the two accounts of the same
    # attempts were added together (a 660-map job had 661 map instances).  The
    # reconstruction is preferred; HiTune's instances count where the job has none.
    def hitune(row: dict[str, Any]) -> dict[str, Any]:
        return {**row, "source": "hitune_csv"}

    csv = [hitune(vi("m0", "h", "map", 0, 100, 9, 1)), hitune(vi("m1", "h", "map", 0, 50, 5, 5)),
           hitune(vi("r0", "h", "copier", 20, 150, 2, 8, tid=24)), hitune(vi("r0", "h", "reduce", 150, 300, 9, 1))]
    rebuilt = [vi("m0", "h", "map", 10, 90, 3, 1)]
    breakdown = [{"job_id": JOB, "attempt_id": "m0", "host": "h", "thread_id": 1, "vertex": "map", "kind": k,
                  "name": n, "samples": c, "source": "hitune_csv"}
                 for k, n, c in [("function", "X.csv", 10), ("state", "RUNNABLE", 10)]]
    both = make_con({
        "vertex_instances": csv + rebuilt, "vertex_breakdown": breakdown,
        "samples": [{"job_id": JOB, "host": "h", "thread_id": 1, "ts_ms": t, "stack_id": 1, "state": "RUNNABLE",
                  "sample_type": "execution", "duration_ms": 0.0, "source": "jfr"} for t in (10, 50, 90)],
        "stacks": [{"stack_id": 1, "frames": ["a.B.raw", "MapTask.run"], "top_frame": "a.B.raw", "depth": 2}],
        "system_samples": [{"host": "h", "ts_ms": 95, "metric": "cpu_user_pct", "device": "all", "value": 1.0}],
        "attempt_events": [{"job_id": JOB, "attempt_id": "m0", "thread_id": 1, "ts_ms": 95, "kind": "spill_start"}],
    })
    rows = dataflow_query(both, "busy_idle", job_id=JOB)
    assert [(r["vertex"], r["instances"], r["samples"], r["busy_samples"]) for r in rows] == [("map", 1, 4, 3)]
    by_host = dataflow_query(both, "by_host", job_id=JOB, vertex="map")
    assert [(r["host"], r["instances"], r["avg_ms"]) for r in by_host] == [("h", 1, 80.0)]
    chart = dataflow_query(both, "chart", job_id=JOB)
    assert [(r["attempt_id"], r["segment"], r["start_ms"], r["end_ms"]) for r in chart] == [("m0", "map", 10, 90)]
    assert dataflow_query(both, "shuffle_gap", job_id=JOB) == []  # the reconstruction has no reduce
    hot = dataflow_query(both, "hotspots", job_id=JOB, top=5)
    assert [(r["method"], r["samples"], r["pct"]) for r in hot] == [("a.B.raw", 3, 100.0)]
    assert dataflow_query(both, "vertex_system", job_id=JOB) == []  # t=95 lies outside the rebuilt 10..90
    assert dataflow_query(both, "vertex_logs", job_id=JOB) == []
    # HiTune's own instances alone are counted as they are
    only_csv = make_con({"vertex_instances": csv, "vertex_breakdown": breakdown})
    rows = dataflow_query(only_csv, "busy_idle", job_id=JOB)
    assert [(r["vertex"], r["instances"], r["samples"]) for r in rows] == [
        ("map", 2, 20), ("copier", 1, 10), ("reduce", 1, 10)]
    assert [(r["attempt_id"], r["gap_ms"]) for r in dataflow_query(only_csv, "shuffle_gap", job_id=JOB)] == [("r0", 50)]
    hot = dataflow_query(only_csv, "hotspots", job_id=JOB, top=5)
    assert [(r["method"], r["samples"], r["pct"]) for r in hot] == [("X.csv", 10, 100.0)]


def test_a_thread_group_instance_takes_the_samples_and_log_lines_of_all_its_threads() -> None:
    # A thread group instance (one per reduce, HiTune section 5.3) is stored under its first
    # thread; its other threads are listed in vertex_breakdown (kind 'thread').  Their samples
    # and log lines are the instance's too; a thread outside the group (27) is not.
    con = make_con({
        "vertex_instances": [vi("r0", "h", "copier", 0, 100, 3, 0, tid=24)],
        "vertex_breakdown": [{"job_id": JOB, "attempt_id": "r0", "host": "h", "thread_id": t, "vertex": "copier",
                           "kind": "thread", "name": f"MapOutputCopier r0.{t - 24}", "samples": 1,
                           "source": "reconstruct"} for t in (24, 25, 26)],
        "samples": [{"job_id": JOB, "attempt_id": "r0", "host": "h", "thread_id": t, "ts_ms": 50, "stack_id": 1,
                  "state": "RUNNABLE", "sample_type": "stack", "duration_ms": 0.0, "source": "hitune"}
                 for t in (24, 25, 26, 27)],
        "stacks": [{"stack_id": 1, "frames": ["a.B.copy", "MapOutputCopier.run"], "top_frame": "a.B.copy", "depth": 2}],
        "attempt_events": [{"job_id": JOB, "attempt_id": "r0", "thread_id": t, "ts_ms": 60, "kind": "fetch"}
                        for t in (25, 27)],
    })
    hot = dataflow_query(con, "hotspots", job_id=JOB, top=5)
    assert [(r["vertex"], r["method"], r["samples"]) for r in hot] == [("copier", "a.B.copy", 3)]
    logs = dataflow_query(con, "vertex_logs", job_id=JOB)
    assert [(r["attempt_id"], r["thread_id"], r["vertex"], r["records"]) for r in logs] == [("r0", 24, "copier", 1)]
