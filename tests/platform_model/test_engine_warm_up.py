"""The local engine's warm-up: jobs run first in the measured run's JVM, which stay out of the run (slow)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from phaseline.java import java_tool
from platform_model.engine import EngineJob, run_engine


@pytest.mark.slow
def test_warm_up_job_runs_first_in_the_same_jvm_and_stays_out_of_the_run(tmp_path: Path) -> None:
    """The warm-up job runs before the measured one in the same JVM and leaves no trace in the run."""
    run = run_engine(
        EngineJob(
            input_mb=2,
            selectivity=1.0,
            maps=2,
            reduces=1,
            io_sort_mb=1,
            warmup_mb=1,
            jfr=True,
            keep_data=True,
            seed=5,
        ),
        tmp_path / "warm",
    )
    doc = json.loads((run.run_dir / "run.json").read_text())
    assert run.params["warmup_mb"] == 1.0
    # LocalJobRunner numbers the jobs of one JVM: the warm-up was job 1, the measured job is 2.
    assert re.fullmatch(r"job_local\d+_0002", run.job_id)
    assert "all_job_ids" not in doc  # the report lists the measured job only
    assert [p.name for p in run.run_dir.glob("*_conf.xml")] == [f"{run.job_id}_conf.xml"]
    log = run.log_path.read_text()
    assert set(re.findall(r"job_local\d+_\d{4}", log)) == {run.job_id}
    assert log.count("Final Counters for attempt_") == 2 + 1
    assert "Log of the measured job starts here" in log.splitlines()[0]
    # its own log (kept with keep_data) sits in a hidden directory that ingest does not walk
    warm_log = run.run_dir / "tmp" / ".warmup" / "job.log"
    warm_ids = set(re.findall(r"job_local\d+_\d{4}", warm_log.read_text()))
    assert len(warm_ids) == 1
    assert warm_ids.pop().endswith("_0001")
    assert "Warm-up job of" in warm_log.read_text()
    # a throwaway recording ran through the warm-up (JFR's I/O instrumentation paid there); the
    # run's own started after it, and only the run's is written
    assert "JFR recording for the warm-up started" in warm_log.read_text()
    assert "JFR recording of the run started" in log
    assert [p.name for p in run.run_dir.glob("*.jfr")] == ["recording.jfr"]
    assert not (run.run_dir / "tmp" / ".warmup" / "data").exists()
    # the recording starts after the warm-up: it has samples, but none from before the log switch
    assert run.jfr_path is not None
    summary = subprocess.run(
        [java_tool("jfr"), "summary", str(run.jfr_path)], capture_output=True, text=True, check=True
    ).stdout
    assert int(dict(re.findall(r"^\s*(jdk\.\w+)\s+(\d+)", summary, re.MULTILINE))["jdk.ExecutionSample"]) > 0
    start = re.search(r"Start:\s+(\S+ \S+)", summary)
    assert start is not None
    first_line_ts = log.splitlines()[0][:23].replace(",", ".")
    assert start.group(1).replace("T", " ")[:19] >= first_line_ts[:19]


@pytest.mark.slow
def test_app_warm_up_runs_the_measured_driver_first(tmp_path: Path) -> None:
    """warmup_app: benchmark warm-up, then the application's own driver, then the measured run."""
    from predict.backtest_suite import app_jar
    from predict.suite import APPS

    app = APPS[0]
    run = run_engine(
        EngineJob(
            input_mb=1,
            selectivity=1.0,
            maps=2,
            reduces=1,
            io_sort_mb=1,
            warmup_mb=1,
            warmup_app=True,
            jar=app_jar(),
            main_class=app.main_class,
            args=("{input}", "{output}", "1"),
            keep_data=True,
        ),
        tmp_path / "warm-app",
    )
    assert run.status == "SUCCEEDED"
    assert run.params["warmup_app"] is True
    # job 1: the benchmark warm-up; job 2: the application's warm-up; job 3: measured
    assert re.fullmatch(r"job_local\d+_0003", run.job_id)
    assert set(re.findall(r"job_local\d+_\d{4}", run.log_path.read_text())) == {run.job_id}
    warm_log = (run.run_dir / "tmp" / ".warmup" / "job.log").read_text()
    assert {i[-4:] for i in re.findall(r"job_local\d+_\d{4}", warm_log)} == {"0001", "0002"}
    assert f"benchmark and {app.main_class}" in warm_log
    assert not (run.run_dir / "tmp" / ".warmup" / "data").exists()


@pytest.mark.slow
@pytest.mark.parametrize(("reduces", "warm_reduces"), [(0, 0), (3, 2)])
def test_the_warm_up_runs_the_jobs_kind_of_map_output(
    tmp_path: Path, reduces: int, warm_reduces: int
) -> None:
    # a warm-up of one reduce left a job of more reduces' maps to run the hashed partitioner and the spills of
    # several partitions cold: 2 reduces' maps took 0.96-1.48 s where 1 reduce's took 0.61-0.81 s (32 MiB)
    run = run_engine(EngineJob(input_mb=1, selectivity=1.0, maps=2, reduces=reduces, warmup_mb=1, keep_data=True,
                               seed=6), tmp_path / "warm")  # fmt: skip
    warm_log = (run.run_dir / "tmp" / ".warmup" / "job.log").read_text()
    assert len(set(re.findall(r"Starting task: (attempt_\w+_r_\d+_\d+)", warm_log))) == warm_reduces
    assert (
        len(set(re.findall(r"Starting task: (attempt_\w+_r_\d+_\d+)", run.log_path.read_text()))) == reduces
    )
