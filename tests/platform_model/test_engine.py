"""The local Hadoop engine: real LocalJobRunner runs of the microbenchmark and of a user's jar.

The slow tests start real JVMs (about 4-6 s per run on this machine); the rest
check validation and the missing-Java message without a JVM.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import tempfile
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from click.testing import CliRunner

from phaseline.cli import main
from phaseline.errors import DataQualityWarning, EngineError
from phaseline.java import compile_java, java_tool
from platform_model.engine import EngineJob, EngineRun, load_run, run_engine
from platform_model.engine.job import LOCAL_BLOCK_BYTES, derived_settings, effective, split_count

TASK = "org.apache.hadoop.mapreduce.TaskCounter"
#: One log4j2 line of logs/job.log: ms timestamp, level, [thread name], [tid:N], logger: message.
LOG_LINE = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) (INFO |WARN |ERROR|DEBUG|TRACE) \[(.+?)\] \[tid:(\d+)\] ([\w.$]+): "
)
#: Fractional selectivity: each record is emitted once more with probability frac; the
#: output count is binomial.  Accept 5 standard deviations.
SIGMAS = 5.0
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

WORDCOUNT = textwrap.dedent(
    """
    package phaselinetest;

    import java.io.IOException;
    import java.util.StringTokenizer;
    import org.apache.hadoop.conf.Configuration;
    import org.apache.hadoop.fs.Path;
    import org.apache.hadoop.io.IntWritable;
    import org.apache.hadoop.io.Text;
    import org.apache.hadoop.mapreduce.Job;
    import org.apache.hadoop.mapreduce.Mapper;
    import org.apache.hadoop.mapreduce.Reducer;
    import org.apache.hadoop.mapreduce.lib.input.FileInputFormat;
    import org.apache.hadoop.mapreduce.lib.output.FileOutputFormat;

    public class WordCount {
      public static class Tokens extends Mapper<Object, Text, Text, IntWritable> {
        private final IntWritable one = new IntWritable(1);
        private final Text word = new Text();
        @Override
        public void map(Object key, Text value, Context ctx) throws IOException, InterruptedException {
          StringTokenizer it = new StringTokenizer(value.toString());
          while (it.hasMoreTokens()) { word.set(it.nextToken()); ctx.write(word, one); }
        }
      }
      public static class Sum extends Reducer<Text, IntWritable, Text, IntWritable> {
        @Override
        public void reduce(Text key, Iterable<IntWritable> values, Context ctx)
            throws IOException, InterruptedException {
          int sum = 0;
          for (IntWritable v : values) { sum += v.get(); }
          ctx.write(key, new IntWritable(sum));
        }
      }
      public static void main(String[] args) throws Exception {
        Job job = Job.getInstance(new Configuration(), "phaseline word count");
        job.setJarByClass(WordCount.class);
        job.setMapperClass(Tokens.class);
        job.setCombinerClass(Sum.class);
        job.setReducerClass(Sum.class);
        job.setOutputKeyClass(Text.class);
        job.setOutputValueClass(IntWritable.class);
        FileInputFormat.addInputPath(job, new Path(args[0]));
        FileOutputFormat.setOutputPath(job, new Path(args[1]));
        System.exit(job.waitForCompletion(true) ? 0 : 1);
      }
    }
    """
)


def _log_lines(run: EngineRun) -> list[str]:
    return run.log_path.read_text().splitlines()


def _ratio_tolerance(selectivity: float, records: int) -> float:
    frac = selectivity - math.floor(selectivity)
    return SIGMAS * math.sqrt(frac * (1 - frac) / records)


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


@pytest.mark.slow
def test_user_jar_with_main_and_system_exit(tmp_path: Path) -> None:
    src = tmp_path / "WordCount.java"
    src.write_text(WORDCOUNT)
    classes = compile_java("phaseline-test-wordcount", [src], make_jar=True)
    jar = classes.parent / "phaseline-test-wordcount.jar"
    run = run_engine(
        EngineJob(
            input_mb=1,
            selectivity=1.0,
            maps=2,
            reduces=1,
            jar=jar,
            main_class="phaselinetest.WordCount",
            args=("{input}", "{output}"),
        ),
        tmp_path / "run",
    )
    assert run.status == "SUCCEEDED"
    assert run.job_name == "phaseline word count"
    assert run.params["app"] == "phaselinetest.WordCount"
    assert run.params["selectivity"] is None
    assert run.counter(TASK, "MAP_INPUT_RECORDS") == run.params["input_records"]  # one line per record
    assert run.counter(TASK, "COMBINE_INPUT_RECORDS") > 0
    assert run.counter(TASK, "REDUCE_OUTPUT_RECORDS") > 0
    assert run.conf_path.exists()


@pytest.mark.slow
def test_warm_up_job_runs_first_in_the_same_jvm_and_stays_out_of_the_run(tmp_path: Path) -> None:
    """The warm-up job runs before the measured one in the same JVM and leaves no trace in the run."""
    run = run_engine(
        EngineJob(input_mb=2, selectivity=1.0, maps=2, reduces=1, io_sort_mb=1, warmup_mb=1, jfr=True,
                  keep_data=True, seed=5),
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
        EngineJob(input_mb=1, selectivity=1.0, maps=2, reduces=1, io_sort_mb=1, warmup_mb=1,
                  warmup_app=True, jar=app_jar(), main_class=app.main_class,
                  args=("{input}", "{output}", "1"), keep_data=True),
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
def test_failed_job_raises_with_log_tail_and_keeps_run_json(tmp_path: Path) -> None:
    # A spill threshold MapTask refuses ("Invalid mapreduce.map.sort.spill.percent") fails the job in the
    # JVM.  (A raw setting that shadows an option, such as a negative selectivity, is refused before.)
    with pytest.raises(EngineError, match=r"FAILED(.|\n)*job\.log"):
        run_engine(
            EngineJob(
                input_mb=0.1,
                selectivity=1.0,
                maps=1,
                reduces=1,
                hadoop_conf={"mapreduce.map.sort.spill.percent": "2.0"},
            ),
            tmp_path / "bad",
        )
    doc = json.loads((tmp_path / "bad" / "run.json").read_text())
    assert doc["status"] == "FAILED"
    with pytest.raises(EngineError, match=r"selectivity must be a number >= 0, got -1.0"):
        run_engine(EngineJob(input_mb=0.1, selectivity=1.0, maps=1, reduces=1,
                             hadoop_conf={"phaseline.bench.selectivity": "-1"}), tmp_path / "refused")  # fmt: skip


def test_missing_java_says_what_to_install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setenv("PHASELINE_CACHE", str(tmp_path / "cache"))
    with pytest.raises(EngineError, match=r"not found on PATH; install a JDK"):
        run_engine(EngineJob(input_mb=1, selectivity=1.0, maps=1, reduces=1), tmp_path / "run")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"input_mb": 0}, "input_mb"),
        ({"selectivity": -0.5}, "selectivity"),
        ({"maps": 0}, "maps"),
        ({"reduces": -1}, "reduces"),
        ({"sort_factor": 1}, "sort_factor"),
        ({"main_class": "x.Y"}, "jar and main_class"),
        ({"warmup_mb": -1.0}, "warmup_mb"),
        ({"warmup_mb": 1.0, "warmup_app": True}, "warmup_app needs a user's job"),
        ({"input_files": 2}, "input_files must be 1 to maps"),
        ({"input_files": 0}, "input_files must be 1 to maps"),
    ],
)
def test_invalid_jobs_are_refused(kwargs: dict[str, object], message: str) -> None:
    base: dict[str, object] = {"input_mb": 1.0, "selectivity": 1.0, "maps": 1, "reduces": 1}
    with pytest.raises(EngineError, match=message):
        EngineJob(**{**base, **kwargs})  # type: ignore[arg-type]


def test_run_dir_must_be_new(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    with pytest.raises(EngineError, match="not empty"):
        run_engine(EngineJob(input_mb=1, selectivity=1.0, maps=1, reduces=1), tmp_path / "busy")


def test_cli_rejects_args_without_jar(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["engine", "run", "--out", str(tmp_path / "r"), "--", "x"])
    assert res.exit_code != 0
    assert "--jar" in res.output


def test_cli_rejects_malformed_define(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["engine", "run", "--out", str(tmp_path / "r"), "-D", "no-equals-sign"])
    assert res.exit_code == 2  # a usage error (it had been exit 1)
    assert "Invalid value for -D: expects KEY=VALUE" in res.output
    assert not (tmp_path / "r").exists()


def test_cli_rejects_app_warm_up_without_a_jar(tmp_path: Path) -> None:
    res = CliRunner().invoke(
        main, ["engine", "run", "--out", str(tmp_path / "r"), "--warmup-mb", "1", "--warmup-app"]
    )
    assert res.exit_code == 2  # a usage error, naming the options
    assert "--warmup-app needs a user's job (--jar JAR --class MAIN)" in res.output
    assert not (tmp_path / "r").exists()


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
    assert subprocess.run([java_tool("java"), option, "-version"], capture_output=True, check=False).returncode == 0


def test_a_run_records_its_jit_compiles_in_one_recording(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
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


def test_a_file_where_a_run_directory_goes_is_an_engine_error(tmp_path: Path) -> None:
    # a file in its place had escaped as NotADirectoryError and stopped a whole plan's runs
    (tmp_path / "run").write_text("not a directory")
    with pytest.raises(EngineError, match=r"run is not a directory; give --out a new directory"):
        run_engine(EngineJob(input_mb=1, selectivity=1.0, maps=1, reduces=0), tmp_path / "run")


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
    assert effective(job, {**settings, "mapred.max.split.size": str(10**9)}).maps == 16  # a block (32 MiB) each


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
    fetched = re.findall(r"about to shuffle output of map \S+ decomp: (\d+) len: (\d+)", run.log_path.read_text())
    assert len(fetched) == 1
    raw, stored = map(int, fetched[0])
    assert stored < raw / 2  # the records' filler and hex numbers compress well
    assert run.counter(TASK, "REDUCE_INPUT_RECORDS") == run.params["input_records"]


@pytest.mark.slow
@pytest.mark.parametrize(("reduces", "warm_reduces"), [(0, 0), (3, 2)])
def test_the_warm_up_runs_the_jobs_kind_of_map_output(tmp_path: Path, reduces: int, warm_reduces: int) -> None:
    # a warm-up of one reduce left a job of more reduces' maps to run the hashed partitioner and the spills of
    # several partitions cold: 2 reduces' maps took 0.96-1.48 s where 1 reduce's took 0.61-0.81 s (32 MiB)
    run = run_engine(EngineJob(input_mb=1, selectivity=1.0, maps=2, reduces=reduces, warmup_mb=1, keep_data=True,
                               seed=6), tmp_path / "warm")  # fmt: skip
    warm_log = (run.run_dir / "tmp" / ".warmup" / "job.log").read_text()
    assert len(set(re.findall(r"Starting task: (attempt_\w+_r_\d+_\d+)", warm_log))) == warm_reduces
    assert len(set(re.findall(r"Starting task: (attempt_\w+_r_\d+_\d+)", run.log_path.read_text()))) == reduces


@pytest.mark.slow
def test_a_drivers_own_splits_are_the_jobs_maps(tmp_path: Path) -> None:
    """A user's driver makes its own splits: CombinedSplits packs the engine's 4 input files of 2 MiB into
    2 splits, so the job ran 2 maps; run.json says so and the store's job has 2 maps, not 4 (the input
    files the engine wrote)."""
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store
    from predict.backtest_suite import app_jar

    run = run_engine(
        EngineJob(input_mb=8, selectivity=1.0, maps=4, reduces=1, jar=app_jar(),
                  main_class="phaseline.apps.CombinedSplits", args=("{input}", "{output}", "1")),
        tmp_path / "combined",
    )
    doc = json.loads((run.run_dir / "run.json").read_text())
    assert doc["params"]["maps"] == 4  # the input files the engine wrote
    assert doc["maps"] == 2  # the maps that ran
    store = Store(tmp_path / "store")
    ingest_paths([run.run_dir], store)
    con = store.connect()
    assert con.execute("SELECT total_maps FROM jobs").fetchall() == [(2,)]
    assert con.execute("SELECT count(*) FROM tasks WHERE task_type = 'MAP'").fetchone() == (2,)


def test_submitted_maps_reads_the_conf_jobsubmitter_wrote(tmp_path: Path) -> None:
    from platform_model.engine.run_dir import submitted_maps

    conf = tmp_path / "job_conf.xml"
    conf.write_text("<configuration><property><name>mapreduce.job.maps</name><value>7</value></property>"
                    "</configuration>")  # fmt: skip
    assert submitted_maps(conf) == 7
    conf.write_text("<configuration><property><name>mapreduce.job.reduces</name><value>2</value></property>"
                    "</configuration>")  # fmt: skip
    assert submitted_maps(conf) is None
    conf.write_text("<configuration><property>")  # cut short: no answer, no error
    assert submitted_maps(conf) is None
    assert submitted_maps(tmp_path / "missing.xml") is None


def test_a_drivers_run_records_its_submitted_tasks_on_either_engine(tmp_path: Path) -> None:
    """Both runners give a user's driver's run.json the conf's map and reduce counts
    (record_submitted_tasks); the benchmark's run keeps its parameters' counts, and a run without a conf
    says nothing."""
    from platform_model.engine.run_dir import record_submitted_tasks

    (tmp_path / "job_conf.xml").write_text(
        "<configuration><property><name>mapreduce.job.maps</name><value>5</value></property>"
        "<property><name>mapreduce.job.reduces</name><value>0</value></property></configuration>"
    )
    driver = EngineJob(input_mb=24, selectivity=1.0, maps=12, reduces=2, jar=tmp_path / "apps.jar", main_class="phaseline.apps.X",
                       args=("{input}", "{output}", "2"))  # fmt: skip
    doc: dict[str, object] = {"conf": "job_conf.xml", "params": {"maps": 12, "reduces": 2}}
    record_submitted_tasks(doc, tmp_path, driver)
    assert doc["maps"] == 5  # the splits the driver made, not the 12 files the engine wrote
    assert doc["reduces"] == 0  # a map-only driver, whatever the engine's --reduces
    bench: dict[str, object] = {"conf": "job_conf.xml", "params": {"maps": 12}}
    record_submitted_tasks(bench, tmp_path, EngineJob(input_mb=24, selectivity=1.0, maps=12, reduces=2))
    assert "maps" not in bench
    assert "reduces" not in bench
    unsaid: dict[str, object] = {"conf": None, "params": {"maps": 12}}
    record_submitted_tasks(unsaid, tmp_path, driver)
    assert "maps" not in unsaid


@pytest.mark.slow
def test_a_map_only_driver_is_map_only_whatever_the_engines_reduces(tmp_path: Path) -> None:
    """`engine run --jar` keeps its --reduces default of 1 where a map-only driver sets 0: the job's run
    reads as map-only (its conf's count) and is profiled, not refused for a reduce that never ran."""
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store
    from predict.backtest_suite import app_jar
    from profiles.extract import extract_profile

    run = run_engine(
        EngineJob(input_mb=2, selectivity=1.0, maps=2, reduces=1, jar=app_jar(),
                  main_class="phaseline.apps.MapOnlyFilter", args=("{input}", "{output}", "0")),
        tmp_path / "maponly",
    )
    doc = json.loads((run.run_dir / "run.json").read_text())
    assert doc["params"]["reduces"] == 1  # the engine's option
    assert doc["reduces"] == 0  # what the driver ran
    store = Store(tmp_path / "store")
    ingest_paths([run.run_dir], store)
    con = store.connect()
    assert con.execute("SELECT total_reduces FROM jobs").fetchall() == [(0,)]
    with pytest.warns(DataQualityWarning, match="later waves"):  # two maps on one slot: thin, and said
        profile = extract_profile(con, doc["job_id"])
    assert profile.num_reduces == 0
    assert profile.map_size_sel == pytest.approx(0.5, rel=0.1)  # it keeps half the records
