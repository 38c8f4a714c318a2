"""A job's options on the local engine: selectivity, -D settings, splits, map output compression, JFR and JIT.

The slow tests start real JVMs (about 4-6 s per run on this machine); the rest check the JVM's command
and the split arithmetic without a run.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from phaseline.cli import main
from phaseline.errors import EngineError
from phaseline.java import java_tool
from platform_model.engine import EngineJob, load_run, run_engine
from platform_model.engine.job import LOCAL_BLOCK_BYTES, derived_settings, effective, split_count
from tests.platform_model.platform_doubles import TASK

#: Fractional selectivity: each record is emitted once more with probability frac; the
#: output count is binomial.  Accept 5 standard deviations.
SIGMAS = 5.0


def _ratio_tolerance(selectivity: float, records: int) -> float:
    frac = selectivity - math.floor(selectivity)
    return SIGMAS * math.sqrt(frac * (1 - frac) / records)


@pytest.mark.slow
def test_fractional_selectivity_via_cli_is_seeded(tmp_path: Path) -> None:
    selectivity, seed = 0.6, 11
    results = []
    for name in ("a", "b"):
        out = tmp_path / name
        res = CliRunner().invoke(
            main,
            [
                "engine",
                "run",
                "--out",
                str(out),
                "--input-mb",
                "2",
                "--selectivity",
                str(selectivity),
                "--maps",
                "2",
                "--reduces",
                "1",
                "--seed",
                str(seed),
                "--format",
                "json",
            ]
            + (["--jfr"] if name == "b" else []),
        )
        assert res.exit_code == 0, res.output
        assert json.loads(res.stdout)[0]["status"] == "SUCCEEDED"
        results.append(load_run(out))
    a, b = results
    records = a.counter(TASK, "MAP_INPUT_RECORDS")
    ratio = a.counter(TASK, "MAP_OUTPUT_RECORDS") / records
    assert abs(ratio - selectivity) <= _ratio_tolerance(selectivity, records)
    assert ratio != selectivity  # really sampled, not rounded
    assert b.counter(TASK, "MAP_OUTPUT_RECORDS") == a.counter(TASK, "MAP_OUTPUT_RECORDS")  # same seed
    assert not (a.run_dir / "input").exists()
    assert not (a.run_dir / "tmp").exists()
    # The --jfr run has a recording that the JDK's `jfr` tool reads, with execution samples.
    assert b.jfr_path is not None
    assert b.jfr_path.stat().st_size < 2_000_000
    summary = subprocess.run(
        [java_tool("jfr"), "summary", str(b.jfr_path)], capture_output=True, text=True, check=True
    ).stdout
    counts = dict(re.findall(r"^\s*(jdk\.\w+)\s+(\d+)", summary, re.MULTILINE))
    assert int(counts["jdk.ExecutionSample"]) > 0
    assert "jdk.ThreadPark" in counts
    assert "jdk.JavaMonitorWait" in counts


def test_a_jfr_run_records_stacks_deeper_than_jfrs_default(tmp_path: Path) -> None:
    # JFR keeps 64 frames by default: a spill's sort recursion ran deeper, its samples lost their
    # SpillThread.run root and mapped to no vertex (a dataflow test failed on such a run).
    from platform_model.engine.runner import JFR_STACK_DEPTH, _jvm_command

    def command(jfr: bool) -> list[str]:
        job = EngineJob(input_mb=1, selectivity=1.0, maps=1, reduces=1, jfr=jfr)
        return _jvm_command(job, tmp_path, tmp_path / "engine.jar", tmp_path / "in")

    option = f"-XX:FlightRecorderOptions:stackdepth={JFR_STACK_DEPTH}"
    assert JFR_STACK_DEPTH > 64
    assert option in command(True)
    assert option not in command(False)
    assert (
        subprocess.run([java_tool("java"), option, "-version"], capture_output=True, check=False).returncode
        == 0
    )


def test_a_run_records_its_jit_compiles_in_one_recording(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every run records its compiles (jit.jfr) unless told not to; a --jfr run's own recording holds
    # them (recordings that run at once share their events: two would count each compile twice)
    from platform_model.engine.jvmconf import JFR_EVENTS
    from platform_model.engine.runner import (
        JIT_RECORDING,
        JIT_RECORDING_ENV,
        _jvm_command,
        jit_recording_flags,
    )

    def command(jfr: bool) -> list[str]:
        job = EngineJob(input_mb=1, selectivity=1.0, maps=1, reduces=1, jfr=jfr)
        return _jvm_command(job, tmp_path, tmp_path / "engine.jar", tmp_path / "in")

    flags = jit_recording_flags(tmp_path / JIT_RECORDING)
    monkeypatch.setenv(JIT_RECORDING_ENV, "1")
    assert set(flags) <= set(command(False))
    assert not set(flags) & set(command(True))
    assert JFR_EVENTS["jdk.Compilation"]["threshold"] == "0 ms"
    monkeypatch.setenv(JIT_RECORDING_ENV, "0")
    assert not set(flags) & set(command(False))
    probe = [java_tool("java"), *jit_recording_flags(tmp_path / "probe.jfr"), "-version"]
    assert subprocess.run(probe, capture_output=True, check=False).returncode == 0


@pytest.mark.slow
def test_a_setting_that_shadows_an_option_runs_and_is_recorded(tmp_path: Path) -> None:
    # An old key name written to core-site.xml lost to the derived new-name value in mapred-site.xml
    # (mapred.reduce.tasks=3 ran 1 reduce, silently); a new-name -D ran, but run.json, and the store's
    # total_reduces, said the option's value; and a -D sort buffer got a heap sized for the option's
    # default (600 MB of sort buffer in 512 MB: OutOfMemoryError)
    run = run_engine(
        EngineJob(input_mb=1, selectivity=1.0, maps=1, reduces=1, seed=1,
                  hadoop_conf={"mapred.reduce.tasks": "3", "mapreduce.task.io.sort.mb": "600"}),
        tmp_path / "run",
    )  # fmt: skip
    doc = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (doc["params"]["reduces"], doc["params"]["io_sort_mb"]) == (3, 600)
    log = (tmp_path / "run" / "logs" / "job.log").read_text()
    assert len(set(re.findall(r"Starting task: (attempt_\w+_r_\d+_\d+)", log))) == 3
    assert "mapreduce.task.io.sort.mb: 600" in log
    assert run.job_id == doc["job_id"]


MAXSIZE = "mapreduce.input.fileinputformat.split.maxsize"
MINSIZE = "mapreduce.input.fileinputformat.split.minsize"


def test_input_files_cut_into_splits_by_the_max_size(tmp_path: Path) -> None:
    # 1024 maps over 16 files: each file (20,972 or 20,971 records) cut into 64 splits of 328 records
    job = EngineJob(input_mb=32, selectivity=1.0, maps=1024, reduces=1, input_files=16)
    settings = derived_settings(job, tmp_path)
    assert (settings[MAXSIZE], MINSIZE in settings) == (str(328 * 100), False)
    assert effective(job, settings) == job  # as asked: 1024 maps
    bigger = {**settings, MAXSIZE: str(328 * 100 * 16)}  # a -D of 16 times the split size: 4 splits a file
    assert effective(job, bigger).maps == 64
    assert (
        effective(job, {**settings, "mapred.max.split.size": str(10**9)}).maps == 16
    )  # a block (32 MiB) each


def test_split_count_follows_file_input_formats_slop() -> None:
    # FileInputFormat.getSplits: splits of the split size while more than 1.1 of them remain, then the rest
    job = EngineJob(input_mb=1000 * 100 / 2**20, selectivity=1.0, maps=3, reduces=1, input_files=1)
    assert job.input_records == 1000
    assert split_count(job, {MAXSIZE: "40000"}) == 3  # 40,000 + 40,000 + 20,000 bytes
    assert split_count(job, {MAXSIZE: "47620"}) == 2  # 52,380 left after one: 1.1 splits, not cut
    assert split_count(job, {MAXSIZE: "47619"}) == 3  # 52,381 left: cut
    assert split_count(job, {MAXSIZE: "1000", MINSIZE: "50000"}) == 2  # the min size wins
    assert split_count(job, {}) == 1  # one block (32 MiB) holds the file
    assert LOCAL_BLOCK_BYTES == 32 * 2**20


def test_input_files_is_for_generated_input(tmp_path: Path) -> None:
    with pytest.raises(EngineError, match="input_files is for generated input"):
        EngineJob(input_mb=1, selectivity=1.0, maps=2, reduces=1, input_files=1, jar=tmp_path / "a.jar",
                  main_class="a.B", input_path=tmp_path)  # fmt: skip


@pytest.mark.slow
def test_a_split_size_setting_changes_the_maps_of_cut_files(tmp_path: Path) -> None:
    # the doctor recommends a split size for too many short maps: the engine must run the maps it cuts
    job = EngineJob(input_mb=0.4, selectivity=1.0, maps=4, reduces=1, input_files=1, seed=2)
    four = run_engine(job, tmp_path / "four")
    per_split = int(derived_settings(job, tmp_path)[MAXSIZE])
    two = run_engine(EngineJob(input_mb=0.4, selectivity=1.0, maps=4, reduces=1, input_files=1, seed=2,
                               hadoop_conf={MAXSIZE: str(2 * per_split)}), tmp_path / "two")  # fmt: skip
    for run, maps in ((four, 4), (two, 2)):
        log = run.log_path.read_text()
        assert len(set(re.findall(r"Starting task: (attempt_\w+_m_\d+_\d+)", log))) == maps
        assert len(set(re.findall(r"Processing split: (file:\S+)", log))) == maps
        assert run.params["maps"] == maps
        assert run.counter(TASK, "MAP_INPUT_RECORDS") == job.input_records  # every record once, none twice


@pytest.mark.slow
def test_map_output_compressed_with_lz4_runs(tmp_path: Path) -> None:
    # Hadoop 3.3+'s Lz4Codec calls lz4-java, which hadoop-client-runtime does not shade: without it on the
    # classpath the first spill fails (NoClassDefFoundError net/jpountz/lz4/LZ4Factory)
    run = run_engine(EngineJob(input_mb=1, selectivity=1.0, maps=1, reduces=1, seed=4, hadoop_conf={
        "mapreduce.map.output.compress": "true",
        "mapreduce.map.output.compress.codec": "org.apache.hadoop.io.compress.Lz4Codec"}), tmp_path / "lz4")  # fmt: skip
    assert run.status == "SUCCEEDED"
    fetched = re.findall(
        r"about to shuffle output of map \S+ decomp: (\d+) len: (\d+)", run.log_path.read_text()
    )
    assert len(fetched) == 1
    raw, stored = map(int, fetched[0])
    assert stored < raw / 2  # the records' filler and hex numbers compress well
    assert run.counter(TASK, "REDUCE_INPUT_RECORDS") == run.params["input_records"]
