"""The runs a backtest reads (predict.backtest_runs): input sizes from any Hadoop's counters or splits, names."""

from __future__ import annotations

import gzip
import json
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np
import pytest

from ingest.pipeline import ingest_paths
from phaseline import schemas
from phaseline.errors import DataQualityWarning
from phaseline.hadoop_names import counter_group
from phaseline.store import Store
from platform_model.model import fit_platform
from platform_model.profile import profile_from_arrays
from predict.backtest import backtest
from predict.backtest_runs import load_runs
from tests.predict.doubles import MB


def _tables(con: duckdb.DuckDBPyConnection, counters: Sequence[tuple[str, str, str, int]]) -> None:
    """The store's tables (their declared schemas) with jobs 'j1'.. of one name at 2 MiB steps."""
    jobs = sorted({c[0] for c in counters} | {"job_nothing"})
    for table in ("jobs", "attempts", "counters", "conf"):
        con.register("_empty", schemas.TABLES[table].schema.empty_table())
        con.execute(f"CREATE TABLE {table} AS SELECT * FROM _empty")
        con.unregister("_empty")
    for i, job in enumerate(jobs):
        con.execute("INSERT INTO jobs (job_id, name, total_maps, total_reduces, status, submit_ms) "
                    "VALUES (?, 'word count', 20, 1, 'SUCCEEDED', ?)", [job, i])  # fmt: skip
        con.execute("INSERT INTO attempts (job_id, start_ms, finish_ms, status, task_type) "
                    "VALUES (?, 1000, 5000, 'SUCCEEDED', 'MAP')", [job])  # fmt: skip
    for job, group, name, value in counters:
        con.execute("INSERT INTO counters (job_id, scope, group_name, counter_name, value) "
                    "VALUES (?, 'job_total', ?, ?, ?)", [job, group, name, value])  # fmt: skip


def test_input_bytes_of_1x_counter_groups_and_0_20_map_input_bytes() -> None:
    # Hadoop 1.x names the input counter's group FileInputFormat$Counter (old and new API); 0.20 counts
    # MAP_INPUT_BYTES.  Only 2.x's FileInputFormatCounter had matched: the others' jobs were dropped silently.
    con = duckdb.connect()
    _tables(con, [
        ("job_2x", "org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter", "BYTES_READ", 1 * MB),
        ("job_1x_mapred", "org.apache.hadoop.mapred.FileInputFormat$Counter", "BYTES_READ", 2 * MB),
        ("job_1x_mapreduce", "org.apache.hadoop.mapreduce.lib.input.FileInputFormat$Counter", "BYTES_READ", 3 * MB),
        ("job_0_20", "org.apache.hadoop.mapred.Task$Counter", "MAP_INPUT_BYTES", 4 * MB),
        ("job_hdfs_only", "FileSystemCounters", "HDFS_BYTES_READ", 5 * MB),
    ])  # fmt: skip
    runs = {r.job_id: r.input_bytes for r in load_runs(con)}
    assert runs == {"job_2x": 1 * MB, "job_1x_mapred": 2 * MB, "job_1x_mapreduce": 3 * MB, "job_0_20": 4 * MB}
    skipped: list[str] = []
    assert len(load_runs(con, skipped=skipped)) == len(runs)
    # the jobs left out are counted, not dropped silently
    assert skipped == [
        "2 job(s) without an input size to scale by (no FileInputFormat BYTES_READ or MAP_INPUT_BYTES job "
        "counter, or 0 bytes), e.g. job_hdfs_only: not backtested"
    ]


def test_1x_file_format_counter_groups_get_their_2x_names() -> None:
    # Hadoop 2's mapred.Counters maps these deprecated groups to the 2.x ones, as the store should
    new_in = "org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter"
    new_out = "org.apache.hadoop.mapreduce.lib.output.FileOutputFormatCounter"
    assert counter_group("org.apache.hadoop.mapred.FileInputFormat$Counter") == new_in
    assert counter_group("org.apache.hadoop.mapreduce.lib.input.FileInputFormat$Counter") == new_in
    assert counter_group("org.apache.hadoop.mapred.FileOutputFormat$Counter") == new_out
    assert counter_group("org.apache.hadoop.mapreduce.lib.output.FileOutputFormat$Counter") == new_out


def _v1_history(fixtures_dir: Path, job: str, group: str, input_bytes: int) -> str:
    """The rumen sample's word count (a 1.x job history file) as job ``job``, its job totals counting
    ``input_bytes`` in ``group`` (the sample's own counters name none)."""
    text = gzip.decompress(
        (
            fixtures_dir / "apache-hadoop-mapreduce/rumen-small-trace-test/sample-job-tracker-logs.gz"
        ).read_bytes()
    ).decode()
    section = text.split(
        "!!FILE=cluster-jt1.red.ygrid.megatron.com_1240335959557_job_200904211745_0002_hadoopqa"
    )[1]
    lines = section.split("!!FILE=")[0].splitlines()[1:]
    seq = job.removeprefix("job_200904211745_")
    out = []
    for line in lines:
        line = line.replace("200904211745_0002", f"200904211745_{seq}")
        if line.startswith(f'Job JOBID="{job}" FINISH_TIME'):
            counted = (
                "{(" + group.replace(".", "\\.") + ")(File Input Format Counters )[(BYTES_READ)(Bytes Read)("
            )
            line = line.replace('COUNTERS="', f'COUNTERS="{counted}{input_bytes})]}}', 1)
        out.append(line)
    return "\n".join(out) + "\n"


def test_a_1x_history_runs_input_is_read(fixtures_dir: Path, tmp_path: Path) -> None:
    # the audit's case: two 1.x runs of word count, both dropped for want of an input size
    (tmp_path / "h").mkdir()
    for job, group, size in (
        ("job_200904211745_0102", "org.apache.hadoop.mapred.FileInputFormat$Counter", 2019250),
        ("job_200904211745_0103", "org.apache.hadoop.mapreduce.lib.input.FileInputFormat$Counter", 4038500),
    ):
        (tmp_path / "h" / f"{job}.log").write_text(_v1_history(fixtures_dir, job, group, size))
    store = Store(tmp_path / "store")
    ingest_paths([tmp_path / "h"], store)
    con = store.connect()
    runs = load_runs(con)
    assert sorted((r.job_id, r.input_bytes) for r in runs) == [
        ("job_200904211745_0102", 2019250.0), ("job_200904211745_0103", 4038500.0)]  # fmt: skip
    skipped: list[str] = []
    load_runs(con, skipped=skipped)
    assert skipped == []
    groups = con.execute("SELECT DISTINCT group_name FROM counters WHERE counter_name = 'BYTES_READ' "
                         "AND scope = 'job_total' AND group_name LIKE '%Input%'").fetchall()  # fmt: skip
    assert groups == [("org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter",)]


def test_runs_named_alike_with_other_selectivities_are_warned_of(tmp_path: Path) -> None:
    # The bundled sample: three microbenchmark runs under one name at selectivities 0.6, 1.0 and 1.8.
    # `profile` warned of mixing them; `backtest` compared them as one job at two sizes, silently.
    repo = Path(__file__).resolve().parents[2]
    store = Store(tmp_path / "store")
    ingest_paths([repo / "sample_traces"], store)
    x = np.array([1, 2, 4, 8, 16, 64, 256, 1024, 4096] * 6, dtype=float) * MB
    phases = np.repeat(["read", "collect", "spill", "merge", "shuffle", "write"], 9)
    platform = fit_platform(profile_from_arrays(phases, x, 50 + x / 2e5), split=False)
    sels = sorted(r.map_selectivity for r in load_runs(store.connect()) if r.map_selectivity is not None)
    assert len(sels) == 3
    assert sels[-1] > 1.25 * sels[0]
    with pytest.warns(DataQualityWarning, match="differ in map selectivity") as caught:
        rows = backtest(store.connect(), platform, models=["bounds"])
    assert rows
    mixed = [str(w.message) for w in caught if "differ in map selectivity" in str(w.message)]
    assert mixed == [f"runs named 'phaseline-bench' differ in map selectivity ({sels[0]:.3g} to {sels[-1]:.3g}, "
                     "more than x1.25): other data or other code under one name, so their errors measure that, "
                     "not the models"]  # fmt: skip


def test_a_local_run_on_two_slots_is_sized_by_its_splits_not_its_shared_read_counter(tmp_path: Path) -> None:
    # maps beside each other in LocalJobRunner's one JVM count each other's reads (the counter is a
    # delta of the JVM's file-system statistics): the job's BYTES_READ overstates its input
    run_dir = Path(__file__).parents[1] / "data" / "engine-runs" / "maponly-8mb-r0-p2-0"
    params = json.loads((run_dir / "run.json").read_text())
    store = Store(tmp_path / "store")
    ingest_paths([run_dir], store)
    (run,) = load_runs(store.connect())
    assert run.map_slots == 2
    counted = params["counters"]["org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter"]["BYTES_READ"]
    assert counted > params["params"]["input_bytes"]
    assert run.input_bytes == params["params"]["input_bytes"]


@pytest.mark.parametrize(
    ("run_dir", "local"), [("engine-runs/join-8mb-r2-0", True), ("yarn/join-8mb-r2-0", False)]
)
def test_a_run_of_several_input_formats_is_sized_by_its_splits(
    run_dir: str, local: bool, tmp_path: Path
) -> None:
    # MultipleInputs (a reduce-side join of two inputs) counts 0 FileInputFormat BYTES_READ, on LocalJobRunner
    # and on YARN alike: the run had been left out of the backtest as one "without an input size"; the
    # maps' task logs name their splits
    path = Path(__file__).parents[1] / "data" / run_dir
    params = json.loads((path / "run.json").read_text())
    assert (
        params["counters"]["org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter"]["BYTES_READ"] == 0
    )
    store = Store(tmp_path / "store")
    ingest_paths([path], store)
    skipped: list[str] = []
    (run,) = load_runs(store.connect(), skipped=skipped)
    assert skipped == []
    assert run.local is local
    assert run.input_bytes == params["params"]["input_bytes"]
