"""The local engine's run directory: run.json, the job's conf, its log, counters and kept data.

One real LocalJobRunner run (``spill_run``: a JVM, about 4-6 s on this machine, so slow) serves the
module's tests of it; a path with a space runs a job of its own.
"""

from __future__ import annotations

import json
import re
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from phaseline.cli import main
from platform_model.engine import EngineJob, EngineRun, run_engine
from tests.platform_model.platform_doubles import TASK

#: One log4j2 line of logs/job.log: ms timestamp, level, [thread name], [tid:N], logger: message.
LOG_LINE = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (INFO |WARN |ERROR|DEBUG|TRACE) \[(.+?)\] \[tid:(\d+)\] ([\w.$]+): "
)


RUN_KEYS = {
    "format",
    "version",
    "job_id",
    "job_name",
    "user",
    "status",
    "submit_ms",
    "launch_ms",
    "finish_ms",
    "wall_start_ms",
    "wall_end_ms",
    "hadoop_version",
    "java_version",
    "params",
    "settings",
    "counters",
    "tasks",
    "log",
    "conf",
    "jfr",
}
PARAM_KEYS = {
    "input_mb",
    "input_bytes",
    "input_records",
    "selectivity",
    "maps",
    "reduces",
    "map_parallelism",
    "reduce_parallelism",
    "io_sort_mb",
    "sort_factor",
    "seed",
    "app",
}


def _log_lines(run: EngineRun) -> list[str]:
    return run.log_path.read_text().splitlines()


@pytest.fixture(scope="module")
def spill_run(tmp_path_factory: pytest.TempPathFactory) -> EngineRun:
    """3 MiB, 2 maps, 2 reduces, io.sort.mb=1: every map spills several times and merges."""
    out = tmp_path_factory.mktemp("engine") / "spill-run"
    return run_engine(
        EngineJob(input_mb=3, selectivity=1.0, maps=2, reduces=2, io_sort_mb=1, seed=3, keep_data=True), out
    )


@pytest.mark.slow
def test_run_directory_contract(spill_run: EngineRun) -> None:
    doc = json.loads((spill_run.run_dir / "run.json").read_text())
    assert set(doc) >= RUN_KEYS
    assert set(doc["params"]) >= PARAM_KEYS
    assert doc["format"] == "phaseline-engine-run"
    assert doc["version"] == 1
    assert re.fullmatch(r"job_local\d+_0001", doc["job_id"])
    assert doc["status"] == "SUCCEEDED"
    assert doc["hadoop_version"].startswith("3.")
    assert doc["java_version"].split(".")[0] == "17"
    assert doc["params"]["app"] == "phaseline-bench"
    assert doc["params"]["input_records"] == round(3 * 1024 * 1024 / 100)
    assert doc["params"]["input_bytes"] == doc["params"]["input_records"] * 100
    assert (
        doc["wall_start_ms"] <= doc["submit_ms"] <= doc["launch_ms"] <= doc["finish_ms"] <= doc["wall_end_ms"]
    )
    assert doc["settings"]["mapreduce.task.io.sort.mb"] == "1"
    assert doc["tasks"] == []  # LocalJobRunner.getTaskReports returns no reports
    assert doc["jfr"] is None
    assert spill_run.conf_path.name == f"{doc['job_id']}_conf.xml"
    assert spill_run.run_dir.joinpath("logs/job.log") == spill_run.log_path


@pytest.mark.slow
def test_conf_xml_is_the_submitted_job_conf(spill_run: EngineRun) -> None:
    props = {
        p.findtext("name"): p.findtext("value")
        for p in ET.parse(spill_run.conf_path).getroot().iter("property")
    }
    assert props["mapreduce.job.id"] == spill_run.job_id
    assert props["mapreduce.job.reduces"] == "2"
    assert props["mapreduce.task.io.sort.mb"] == "1"
    assert props["mapreduce.job.map.class"] == "phaseline.engine.SelectivityMapper"
    assert props["mapreduce.job.reduce.class"] == "phaseline.engine.IdentityReducer"
    assert str(props["mapreduce.jobtracker.staging.root.dir"]).startswith(str(spill_run.run_dir))


@pytest.mark.slow
def test_log_has_thread_ids_spills_merges_and_fetches(spill_run: EngineRun) -> None:
    lines = _log_lines(spill_run)
    parsed = [m for m in map(LOG_LINE.match, lines) if m]
    assert len(parsed) > 50
    assert all(int(m.group(4)) > 0 for m in parsed)
    messages = [line for line in lines if LOG_LINE.match(line)]
    spills = [line for line in messages if "MapTask: Finished spill" in line]
    maps = spill_run.params["maps"]
    # 1.5 MiB of map output per map through a 1 MiB buffer (soft limit 80%): >= 2 spills per map.
    assert len(spills) >= 2 * maps
    assert any("[SpillThread]" in line for line in spills)  # background spills, their own thread
    assert sum("Merger: Merging" in line and "sorted segments" in line for line in messages) >= maps
    fetches = [
        line for line in messages if "LocalFetcher" in line and "about to shuffle output of map" in line
    ]
    assert len(fetches) == maps * spill_run.params["reduces"]
    assert any("MergeManagerImpl: finalMerge called" in line for line in messages)
    assert sum("Final Counters for attempt_" in line for line in messages) == maps + 2
    # LocalJobRunner: every reduce starts after the last map has finished.
    starts = [
        (m.group(1), line) for line in messages if (m := LOG_LINE.match(line)) and "Starting task" in line
    ]
    last_map_done = max(
        m.group(1)
        for line in messages
        if (m := LOG_LINE.match(line)) and "Finishing task: attempt_" in line and "_m_" in line
    )
    assert all(ts >= last_map_done for ts, line in starts if "_r_" in line)


@pytest.mark.slow
def test_the_jvm_ran_with_the_measuring_flags(spill_run: EngineRun) -> None:
    # The serial collector and JIT compilation in the running thread halve the run-to-run noise
    # (platform_model.engine.job.MEASURING_JVM_FLAGS); run.json says what the JVM itself took.
    from platform_model.engine.job import MEASURING_JVM_FLAGS

    flags = json.loads((spill_run.run_dir / "run.json").read_text())["jvm_flags"]
    assert set(MEASURING_JVM_FLAGS) <= set(flags)
    assert any(f.startswith("-Xmx") for f in flags)


@pytest.mark.slow
def test_selectivity_one_copies_every_record(spill_run: EngineRun) -> None:
    assert spill_run.counter(TASK, "MAP_INPUT_RECORDS") == spill_run.params["input_records"]
    assert spill_run.counter(TASK, "MAP_OUTPUT_RECORDS") == spill_run.params["input_records"]
    assert spill_run.counter(TASK, "REDUCE_OUTPUT_RECORDS") == spill_run.params["input_records"]
    # Spilled records: each spill plus the merged map output, plus the reduce side.
    assert spill_run.counter(TASK, "SPILLED_RECORDS") > spill_run.counter(TASK, "MAP_OUTPUT_RECORDS")
    out_bytes = spill_run.counter(
        "org.apache.hadoop.mapreduce.lib.output.FileOutputFormatCounter", "BYTES_WRITTEN"
    )
    assert out_bytes >= spill_run.params["input_bytes"]


@pytest.mark.slow
def test_input_is_teragen_like_and_kept_with_keep_data(spill_run: EngineRun) -> None:
    files = sorted((spill_run.run_dir / "input").glob("part-m-*"))
    assert [f.name for f in files] == ["part-m-00000", "part-m-00001"]
    data = files[0].read_bytes()
    assert len(data) % 100 == 0
    records = [data[i : i + 100] for i in range(0, 1000, 100)]
    assert all(r.endswith(b"\r\n") and all(32 <= b < 127 for b in r[:10]) for r in records)
    assert int(records[1][11:43], 16) == 1  # global record number
    outputs = list((spill_run.run_dir / "output").glob("part-r-*"))
    assert len(outputs) == 2
    assert sum(p.stat().st_size for p in outputs) == spill_run.params["input_bytes"]


@pytest.mark.slow
def test_a_run_directory_whose_path_has_a_space(tmp_path: Path) -> None:
    # Hadoop's local job runner looked for map output under '.../run%20a/tmp/local/...' and failed the job
    out = tmp_path / "run a"
    run = run_engine(EngineJob(input_mb=0.2, selectivity=1.0, maps=1, reduces=1), out)
    assert run.status == "SUCCEEDED"
    assert run.counter(TASK, "REDUCE_INPUT_RECORDS") == run.params["input_records"]
    assert not list(Path(tempfile.gettempdir()).glob("phaseline-engine-*/local"))  # its scratch is gone
    result = CliRunner().invoke(main, ["ingest", str(out), "--store", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
