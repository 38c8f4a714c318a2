"""The simulator's .jhist writer (predict.jhist_writer) against two parsers: phaseline's and Hadoop's (slow)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from predict.jhist_writer import SimTrace, write_jhist
from predict.simulate import SimRun, simulate_once
from tests.predict.doubles import _job


def _written(tmp_path: Path, failure_rate: float = 0.3) -> tuple[Path, SimRun]:
    run = simulate_once(_job(failure_rate=failure_rate), np.random.default_rng(2), record=True)
    trace = SimTrace(
        job_name="sim wordcount",
        map_counters={"MAP_INPUT_RECORDS": 1000, "MAP_OUTPUT_RECORDS": 2500},
        reduce_counters={"REDUCE_INPUT_RECORDS": 10_000},
    )
    return write_jhist(run, tmp_path, n_maps=24, n_reduces=6, trace=trace), run


def test_jhist_round_trips_through_phaselines_reader(tmp_path: Path) -> None:
    from oracle_util import phaseline_rows

    path, run = _written(tmp_path)
    assert path.name.startswith("job_1700000000000_0001-")
    assert path.name.endswith("-SUCCEEDED-default-1700000101000.jhist")
    rows, cut, _ = phaseline_rows(path)
    assert cut is None
    assert len(rows["tasks"]) == 30
    attempts = rows["attempts"]
    assert len(attempts) == len(run.attempts)
    t0 = 1_700_000_101_000
    sim = sorted((round(a.start_ms) + t0, round(a.end_ms) + t0) for a in run.attempts)
    got = sorted((a["start_ms"], a["finish_ms"]) for a in attempts)
    assert got == sim
    (job,) = rows["jobs"]
    assert job["finish_ms"] - job["launch_ms"] == round(run.makespan_ms)
    # JobFinished counts failed tasks, as Hadoop's JobImpl does: every task here succeeded in the end
    assert any(not a.succeeded for a in run.attempts)
    assert (job["failed_maps"], job["failed_reduces"]) == (0, 0)


def test_a_counter_of_maps_and_reduces_adds_up_in_the_jobs_total(tmp_path: Path) -> None:
    # the reduces' value had replaced the maps' (CPU_MILLISECONDS 42 for a job of 2,442)
    from oracle_util import phaseline_rows

    run = simulate_once(_job(), np.random.default_rng(2), record=True)
    trace = SimTrace(map_counters={"CPU_MILLISECONDS": 100}, reduce_counters={"CPU_MILLISECONDS": 7})
    rows, _, _ = phaseline_rows(write_jhist(run, tmp_path, n_maps=24, n_reduces=6, trace=trace))
    total = {c["counter_name"]: c["value"] for c in rows["counters"] if c["scope"] == "job_total"}
    assert total["CPU_MILLISECONDS"] == 24 * 100 + 6 * 7


def test_names_in_the_done_file_name_are_encoded_as_hadoop_encodes_them(tmp_path: Path) -> None:
    # a '/' in the job name had made a path (FileNotFoundError), a '-' in the user or queue name
    # split the name's fields, a '+' read back as a blank
    from ingest.mrcommon import done_file_fields

    run = simulate_once(_job(), np.random.default_rng(2), record=True)
    trace = SimTrace(job_name="grep a/b-c+d 100%", user="svc-etl", queue="root.ad-hoc")
    path = write_jhist(run, tmp_path, n_maps=24, n_reduces=6, trace=trace)
    assert path.parent == tmp_path
    fields = done_file_fields(path.name)
    assert fields is not None
    assert (fields["name"], fields["user"], fields["queue"]) == (
        "grep a/b-c+d 100%",
        "svc-etl",
        "root.ad-hoc",
    )


@pytest.mark.slow
def test_jhist_is_read_by_hadoops_job_history_parser(tmp_path: Path) -> None:
    from oracle_util import hadoop_parse

    path, run = _written(tmp_path)
    parsed = hadoop_parse([path])[str(path)]
    assert parsed.get("fatal") is None
    assert parsed.get("parse_exception") is None
    job = parsed["job"]
    assert job["name"] == "sim wordcount"
    assert job["status"] == "SUCCEEDED"
    assert job["finished_maps"] == 24
    assert job["finished_reduces"] == 6
    assert (job["failed_maps"], job["failed_reduces"]) == (
        0,
        0,
    )  # failed tasks; attempts failed and were retried
    assert any(not a.succeeded for a in run.attempts)
    assert job["finish_ms"] - job["launch_ms"] == round(run.makespan_ms)
    assert ["org.apache.hadoop.mapreduce.TaskCounter", "MAP_INPUT_RECORDS", 24_000] in job["total_counters"]
    assert len(parsed["tasks"]) == 30
    assert all(t["status"] == "SUCCEEDED" for t in parsed["tasks"])
    n_attempts = sum(len(t["attempts"]) for t in parsed["tasks"])
    assert n_attempts == len(run.attempts)
