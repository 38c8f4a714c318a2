"""A user's jar on the local engine: its main and System.exit, its driver's own splits, map-only drivers.

The slow tests start real JVMs (about 4-6 s per run on this machine); the rest read a conf without one.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from phaseline.errors import DataQualityWarning
from phaseline.java import compile_java
from platform_model.engine import EngineJob, run_engine
from tests.platform_model.platform_doubles import TASK

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
def test_a_drivers_own_splits_are_the_jobs_maps(tmp_path: Path) -> None:
    """A user's driver makes its own splits: CombinedSplits packs the engine's 4 input files of 2 MiB into
    2 splits, so the job ran 2 maps; run.json says so and the store's job has 2 maps, not 4 (the input
    files the engine wrote)."""
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store
    from predict.backtest_suite import app_jar

    run = run_engine(
        EngineJob(
            input_mb=8,
            selectivity=1.0,
            maps=4,
            reduces=1,
            jar=app_jar(),
            main_class="phaseline.apps.CombinedSplits",
            args=("{input}", "{output}", "1"),
        ),
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
        EngineJob(
            input_mb=2,
            selectivity=1.0,
            maps=2,
            reduces=1,
            jar=app_jar(),
            main_class="phaseline.apps.MapOnlyFilter",
            args=("{input}", "{output}", "0"),
        ),
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
