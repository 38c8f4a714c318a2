"""A profile extracted from task-log phases: per-record and per-byte costs only where they were measured."""

from __future__ import annotations

from typing import Any

import pytest

from phaseline.errors import DataQualityWarning
from tests.profiles.profiles_doubles import (
    FIC,
    JOB,
    TC,
    _a,
    attempt,
    counter,
    make_con,
)


def test_extract_profile_from_task_log_phases() -> None:
    """Per-record and per-byte costs come only from task-log phases that measured them.

    m0_0  0 |read 0-10|map 10-40|collect 40-50|  (60 ms span; 10 ms no phase covers)
    m1_0  0 |read 0-20|map 20-60|collect 60-70|  (80 ms span)
    r0_0 50 |shuffle 50-90|sort 90-95|reduce 95-115|write 115-125|
    """
    from profiles.extract import extract_profile

    m0, m1, r0 = _a("m_000000", 0), _a("m_000001", 0), _a("r_000000", 0)

    def ph(aid: str, ttype: str, phase: str, s: int, e: int, b: int | None, r: int | None) -> dict[str, Any]:
        return {"job_id": JOB, "attempt_id": aid, "task_type": ttype, "phase": phase, "start_ms": s,
                "end_ms": e, "dur_ms": e - s, "data_bytes": b, "data_records": r}  # fmt: skip

    log = [
        ph(m0, "MAP", "read", 0, 10, 1000, 100), ph(m0, "MAP", "map", 10, 40, None, 100),
        ph(m0, "MAP", "collect", 40, 50, None, 50),
        ph(m1, "MAP", "read", 0, 20, 3000, 300), ph(m1, "MAP", "map", 20, 60, None, 300),
        ph(m1, "MAP", "collect", 60, 70, None, 150),
        ph(r0, "REDUCE", "shuffle", 50, 90, 4000, None), ph(r0, "REDUCE", "sort", 90, 95, None, 200),
        ph(r0, "REDUCE", "reduce", 95, 115, None, 200), ph(r0, "REDUCE", "write", 115, 125, 500, 20),
    ]  # fmt: skip
    cnt = []
    for task, values in (
        ("m_000000", {"MAP_INPUT_RECORDS": 100, "MAP_OUTPUT_RECORDS": 50, "MAP_OUTPUT_BYTES": 400,
                      "MAP_OUTPUT_MATERIALIZED_BYTES": 200, "COMBINE_INPUT_RECORDS": 50,
                      "COMBINE_OUTPUT_RECORDS": 25}),
        ("m_000001", {"MAP_INPUT_RECORDS": 300, "MAP_OUTPUT_RECORDS": 150, "MAP_OUTPUT_BYTES": 1200,
                      "MAP_OUTPUT_MATERIALIZED_BYTES": 600, "COMBINE_INPUT_RECORDS": 150,
                      "COMBINE_OUTPUT_RECORDS": 75}),
        ("r_000000", {"REDUCE_SHUFFLE_BYTES": 800, "REDUCE_INPUT_RECORDS": 100, "REDUCE_INPUT_GROUPS": 20,
                      "REDUCE_OUTPUT_RECORDS": 20}),
    ):  # fmt: skip
        cnt += [counter("task", k, v, task=task, group=TC) for k, v in values.items()]
    cnt.append(counter("task", "BYTES_READ", 1000, task="m_000000", group=FIC))
    cnt.append(counter("task", "BYTES_READ", 3000, task="m_000001", group=FIC))
    cnt.append(counter("task", "BYTES_WRITTEN", 500, task="r_000000", group="FileOutputFormatCounter"))
    con = make_con(
        {
            "jobs": [{"job_id": JOB, "name": "agg", "submit_ms": 0, "finish_ms": 130, "total_reduces": 1}],
            "attempts": [
                attempt("m_000000", 0, "SUCCEEDED", 0, 60, "h1", map_finish_ms=50),
                attempt("m_000001", 0, "SUCCEEDED", 0, 80, "h2", map_finish_ms=70),
                attempt("r_000000", 0, "SUCCEEDED", 50, 125, "h1", shuffle_finish_ms=90, sort_finish_ms=95),
            ],
            "attempt_phases": log,
            "counters": cnt,
            "conf": [{"job_id": JOB, "key": "mapreduce.map.output.compress", "value": "false"}],
        }
    )
    # two maps on two slots: one wave, which the profile says cannot tell one-time from per-task cost
    with pytest.warns(DataQualityWarning, match="one wave on 2 slot"):
        p = extract_profile(con, JOB)
    assert (p.num_maps, p.num_reduces) == (2, 1)
    assert (p.input.splits, p.input.avg_split_bytes, p.input.max_split_bytes) == (2, 2000.0, 3000.0)
    assert p.map_size_sel == pytest.approx(1600 / 4000)
    assert p.map_recs_sel == pytest.approx(200 / 400)
    assert p.combine_recs_sel == pytest.approx(100 / 200)
    assert p.combine_size_sel == pytest.approx(800 / 1600)
    assert p.dataflow.interm_compress_ratio is None  # a combiner ran: size ratio is not compression
    assert p.reduce_recs_sel == pytest.approx(20 / 100)
    assert p.reduce_size_sel == pytest.approx(500 / 800)
    assert p.dataflow.recs_per_red_group == pytest.approx(100 / 20)
    assert p.map_ms_per_record == pytest.approx((30 + 40) / (100 + 300))
    assert p.reduce_ms_per_record == pytest.approx(20 / 200)
    assert p.costs.hdfs_read == pytest.approx((10 + 20) / 4000)
    assert p.costs.hdfs_write == pytest.approx(10 / 500)
    assert p.costs.network is None  # the only shuffle started before the last map ended
    assert p.map_task_overhead_ms == pytest.approx((10 + 10) / 2)
    assert p.reduce_task_overhead_ms == pytest.approx(0.0)
    assert p.phases["map"].avg_ms == pytest.approx(35.0)
    assert p.phases["map"].max_ms == 40.0
    assert p.stages["first_shuffle"].avg_ms == pytest.approx(90 - 80)
    assert p.stages["reduce_phase"].avg_ms == pytest.approx(125 - 90)
    assert p.source.config == {"mapreduce.map.output.compress": "false"}
