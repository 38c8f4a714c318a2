"""The Spark engine against the local one: the same inputs ingested both ways give the same
tables, every profiles concept gives the same rows on Spark SQL as on DuckDB, and a driver
killed mid-ingest leaves a store that verifies and, re-run, holds each file once.

Slow (a JVM and Spark on ``local[2]``): one Spark session serves the module.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from ingest.partitioning import PARTITION_KEYS, PartitionedIngest, ingest_partitioned
from ingest.pipeline import IngestSummary, ingest_paths
from ingest.spark_ingest import ingest_paths_spark
from phaseline import schemas
from phaseline.cli import main as cli
from phaseline.errors import QueryError, StoreError
from phaseline.schemas import SourceStatus
from phaseline.spark import spark_session
from phaseline.spark_query import read_only_statements
from phaseline.spark_views import RAW_PREFIX, register_store
from phaseline.store import Store, partitions
from phaseline.verify import verify_store
from profiles import queries, spark_sql
from tests.partitioned_traces import CLUSTERS, DAYS, JOBS_PER_PARTITION, write_traces
from tests.phaseline.engine_rows import assert_same_rows, sorted_rows

pytest.importorskip("pyspark")
pytestmark = [pytest.mark.slow, pytest.mark.timeout(1800)]  # (a JVM per session, on a loaded machine)

REPO = Path(__file__).resolve().parents[2]
#: Columns whose values differ between two ingests of the same bytes by their nature.
DIFFERS_BY_INGEST = {"sources": {"ingested_at"}}
SEED_JOB = "1526555215992_0001"

# A file read as a .jhist whose header is unusable (quarantined) and one cut inside its
# schema line (lands partial): the bad-input paths of both engines, side by side.
BAD_FILES = {
    "job_1_0001-bad.jhist": 'Avro-Json\n{"type":"record","name":"Event","fields":[]}\n\n'
    '{"type":"JOB_SUBMITTED","event":{"org.apache.hadoop.mapreduce.jobhistory.JobSubmitted":{"jobid":',
    "job_1_0002-cut.jhist": "Avro-Json\nnot json at all\n",
}


@pytest.fixture(scope="module")
def spark() -> Iterator[Any]:
    with spark_session("local[2]") as session:
        yield session


@pytest.fixture(scope="module")
def inputs(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Real traces of several formats (histories of 0.20 to 2.x, Rumen, confs, task logs), a run
    directory, and two bad files."""
    bad = tmp_path_factory.mktemp("bad")
    for name, text in BAD_FILES.items():
        (bad / name).write_text(text)
    return [
        fixtures_dir / "apache-hadoop",
        fixtures_dir / "linkedin-dr-elephant",
        REPO / "sample_traces" / "bench-8mb-sel1.0",
        bad,
    ]


@pytest.fixture(scope="module")
def both(
    spark: Any, inputs: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[tuple[Store, IngestSummary], tuple[Store, IngestSummary]]:
    """The inputs ingested locally (2 worker processes) and by Spark tasks, each into its own store."""
    base = tmp_path_factory.mktemp("stores")
    local = Store(base / "local")
    on_spark = Store(base / "spark")
    local_summary = ingest_paths(inputs, local, workers=2)
    spark_summary = ingest_paths_spark(inputs, on_spark, spark=spark)
    return (local, local_summary), (on_spark, spark_summary)


# -- ingest ---------------------------------------------------------------------------------


def test_same_files_same_outcome(both: Any) -> None:
    (_, local), (_, on_spark) = both
    outcome = {r.path: (r.status, r.format, r.error, r.events_read, r.rows) for r in local.results}
    assert {r.path: (r.status, r.format, r.error, r.events_read, r.rows) for r in on_spark.results} == outcome
    statuses = {r.status for r in local.results}
    assert {SourceStatus.LANDED, SourceStatus.PARTIAL, SourceStatus.QUARANTINED} <= statuses
    quarantined = [r for r in on_spark.results if r.status == SourceStatus.QUARANTINED]
    assert [Path(r.path).name for r in quarantined] == ["job_1_0001-bad.jhist"]
    assert "writer's schema is unusable" in (quarantined[0].error or "")


@pytest.mark.parametrize("table", list(schemas.TABLES))
def test_same_tables(both: Any, table: str) -> None:
    """Every table of the store (raw: every source's rows), sorted, the same both ways."""
    (local, _), (on_spark, _) = both
    drop = DIFFERS_BY_INGEST.get(table, set())
    rows = []
    for store in (local, on_spark):
        con = store.connect()
        try:
            rows.append(sorted_rows(con.sql(f'SELECT * FROM raw."{table}"').to_arrow_table(), drop))
        finally:
            con.close()
    assert_same_rows(rows[0], rows[1], table)
    if table in ("jobs", "attempts", "counters", "sources"):
        assert rows[0], f"{table}: the inputs should give rows"


def test_spark_store_verifies(both: Any) -> None:
    """Reconciliation and the store's checks pass on the store Spark wrote (the quarantined file
    recorded with its reason, nothing of it landed)."""
    (_, _), (on_spark, _) = both
    report = verify_store(on_spark)
    assert report.ok, [f for f in report.findings if f.severity == "error"]
    assert report.sources_checked >= 20


# -- queries -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spark_views(spark: Any, both: Any) -> Store:
    """Spark's temporary views over the store Spark ingested (the other store: DuckDB's side)."""
    (_, _), (on_spark, _) = both
    register_store(spark, on_spark)
    return on_spark


@pytest.fixture(scope="module")
def job_id(both: Any) -> str:
    """The job with the most attempts (its phases, skew and waves all have rows)."""
    (local, _), _ = both
    con = local.connect()
    try:
        row = con.sql(
            "SELECT job_id FROM attempts GROUP BY job_id ORDER BY count(*) DESC, job_id LIMIT 1"
        ).fetchall()[0]
    finally:
        con.close()
    assert row is not None
    return str(row[0])


def test_overlapping_jobs_kept_once_on_spark(spark: Any, spark_views: Store) -> None:
    """The inputs hold a job described twice (a history and Rumen's parse of it, or a cut and a
    whole copy): Spark's views keep the one account DuckDB's keep."""
    con = spark_views.connect()
    try:
        overlaps = con.sql("SELECT count(*) FROM overlapping_sources").fetchall()[0]
        duck = sorted_rows(con.sql("SELECT * FROM attempts").to_arrow_table())
    finally:
        con.close()
    assert overlaps is not None
    assert overlaps[0] > 0, "the inputs should hold a job two sources describe"
    on_spark = sorted_rows(spark.table("attempts").toArrow())
    assert_same_rows(duck, on_spark, "attempts (one account)")
    raw = spark.table("raw_attempts").count()
    assert raw > len(on_spark)


@pytest.mark.parametrize("concept", spark_sql.spark_concepts())
def test_concept_same_rows_on_both_engines(spark: Any, spark_views: Store, job_id: str, concept: str) -> None:
    """Each profiles .sql file that runs on Spark (translated by sqlglot): the same rows as DuckDB's."""
    params: dict[str, Any] = {}
    spec = queries.sql_file(concept)
    if "job_id" in spec.params:
        params["job_id"] = job_id
    if "k" in spec.params:
        params["k"] = queries.DEFAULT_STRAGGLER_K
    con = spark_views.connect()
    try:
        duck = queries.relation(con, concept, **params).to_arrow_table()
    finally:
        con.close()
    on_spark = spark_sql.relation(spark, concept, **params).toArrow()
    assert on_spark.column_names == duck.column_names
    assert_same_rows(sorted_rows(duck), sorted_rows(on_spark), concept)


def test_dataflow_files_are_named_duckdb_only() -> None:
    """Every profiles .sql file either runs on Spark or says why not."""
    from importlib import resources

    names = {f.name[:-4] for f in resources.files("profiles.sql").iterdir() if f.name.endswith(".sql")}
    assert names == set(spark_sql.spark_concepts()) | set(spark_sql.DUCKDB_ONLY)
    with pytest.raises(QueryError, match="table macros"):
        spark_sql.spark_sql_file("dataflow_job_instances")


def test_query_refuses_writes() -> None:
    with pytest.raises(QueryError, match="refused"):
        read_only_statements("SELECT 1; CREATE TABLE t USING parquet LOCATION '/tmp/t' AS SELECT 1")
    assert read_only_statements("WITH a AS (SELECT 1 AS x) SELECT x FROM a") == [
        "WITH a AS (SELECT 1 AS x) SELECT x FROM a"
    ]


def test_cli_query_on_spark(spark_views: Store) -> None:
    """``phaseline query --engine spark`` over the store: the jobs table's count, as DuckDB's."""
    con = spark_views.connect()
    try:
        expected = con.sql("SELECT count(*) FROM jobs").fetchall()[0]
    finally:
        con.close()
    out = subprocess.run(
        [sys.executable, "-m", "phaseline", "query", "--engine", "spark", "--store", str(spark_views.root),
         "--format", "json", "SELECT count(*) AS n FROM jobs"],
        capture_output=True, text=True, cwd=REPO, timeout=900, check=True,
    )  # fmt: skip
    assert expected is not None
    assert f'"n": {expected[0]}' in out.stdout.replace('"n":{', '"n": {')


def test_partitioned_store_reads_one_day_alone(spark: Any, fixtures_dir: Path, tmp_path: Path) -> None:
    """One store per day under a root (``day=...`` directories): Spark's views are their union with
    the day as a column, and a query of one day reads only that day's files."""
    seed = next(fixtures_dir.rglob(f"job_{SEED_JOB}-*.jhist"))
    root = tmp_path / "warehouse"
    for day, first, count in (("2026-11-27", 0, 3), ("2026-11-28", 3, 2)):
        traces = tmp_path / day
        traces.mkdir()
        _write_jobs(seed, traces, count, first)
        ingest_paths([traces], Store(root / f"day={day}"))
    assert [dict(spec) for spec, _ in partitions(root)] == [{"day": "2026-11-27"}, {"day": "2026-11-28"}]
    assert register_store(spark, root) == 2
    per_day = spark.sql("SELECT day, count(*) AS n FROM jobs GROUP BY day").collect()
    assert {r["day"]: r["n"] for r in per_day} == {"2026-11-27": 3, "2026-11-28": 2}
    one_day = spark.sql("SELECT * FROM attempts WHERE day = '2026-11-28'")
    assert one_day.count() == 2 * 2  # the seed job's 2 attempts, 2 jobs
    files = one_day.inputFiles()
    assert files
    assert all("day=2026-11-28" in f for f in files), files
    with pytest.raises(StoreError, match="no store there"):
        partitions(tmp_path / "2026-11-27")


def test_partitioned_ingest_same_on_both_engines(spark: Any, fixtures_dir: Path, tmp_path: Path) -> None:
    """``--partition-by day,cluster`` through Spark tasks gives the partitions and the outcome of a
    local ingest; the root's views hold identical rows, keys included, on Spark SQL and DuckDB."""
    traces = write_traces(fixtures_dir, tmp_path / "traces")
    local = ingest_partitioned([traces], tmp_path / "local", PARTITION_KEYS, workers=2)
    on_spark = ingest_partitioned([traces], tmp_path / "spark", PARTITION_KEYS, engine="spark", spark=spark)
    assert [spec for spec, _, _ in on_spark.parts] == [spec for spec, _, _ in local.parts]
    assert len(local.parts) == len(DAYS) * len(CLUSTERS) + 2  # and day=unknown: the bad file, the note

    def outcome(parted: PartitionedIngest) -> dict[str, Any]:
        return {r.path: (r.status, r.error, r.events_read, r.rows) for r in parted.summary.results}

    assert outcome(on_spark) == outcome(local)
    assert register_store(spark, on_spark.root) == len(on_spark.parts)
    duck_local, duck_spark = Store(local.root).connect(), Store(on_spark.root).connect()
    try:
        for table in schemas.TABLES:
            drop = DIFFERS_BY_INGEST.get(table, set())
            for view in (table, RAW_PREFIX + table):
                duck = duck_spark.sql(f"SELECT * FROM {view.replace(RAW_PREFIX, 'raw.')}").to_arrow_table()
                assert duck.column_names[-2:] == list(PARTITION_KEYS)
                rows = sorted_rows(duck, drop)
                assert_same_rows(sorted_rows(spark.table(view).toArrow(), drop), rows, f"{view} (Spark SQL)")
                other = duck_local.sql(f"SELECT * FROM {view.replace(RAW_PREFIX, 'raw.')}").to_arrow_table()
                assert_same_rows(sorted_rows(other, drop), rows, f"{view} (ingested locally)")
    finally:
        duck_local.close()
        duck_spark.close()
    one_day = spark.sql(f"SELECT * FROM attempts WHERE day = '{DAYS[1]}'")
    assert one_day.count() == len(CLUSTERS) * JOBS_PER_PARTITION * 2
    assert all(f"day={DAYS[1]}" in f for f in one_day.inputFiles())


def test_cli_partitioned_ingest_and_partition_on_spark(spark: Any, fixtures_dir: Path, tmp_path: Path) -> None:
    """``phaseline ingest --engine spark --partition-by day`` and ``query --engine spark --partition``
    through the CLI, on the module's session (an active session is used, not stopped): one day read
    while another day's data files are damaged; the whole root's read fails; a store of its own
    has no partitions to choose."""
    traces = write_traces(fixtures_dir, tmp_path / "traces")
    root = tmp_path / "warehouse"
    out = CliRunner().invoke(
        cli, ["ingest", "--engine", "spark", "--partition-by", "day", "-q", "--store", str(root), str(traces)]
    )
    assert out.exit_code == 3, out.output  # the bad file is quarantined (in day=unknown)
    assert [dict(spec) for spec, _ in partitions(root)] == [{"day": d} for d in (*DAYS, "unknown")]
    damaged = sorted(str(p) for p in (root / f"day={DAYS[0]}").rglob("data/**/*.parquet"))
    assert damaged
    for path in damaged:
        Path(path).write_bytes(b"not parquet at all")

    def query(*args: str) -> Any:
        return CliRunner().invoke(cli, ["query", "--engine", "spark", "--format", "json", *args])

    sql = "SELECT day, count(*) AS n FROM attempts GROUP BY day"
    one_day = query("--store", str(root), "--partition", f"day={DAYS[1]}", sql)
    assert one_day.exit_code == 0, one_day.output
    assert json.loads(one_day.stdout) == [{"day": DAYS[1], "n": len(CLUSTERS) * JOBS_PER_PARTITION * 2}]
    whole = query("--store", str(root), sql)
    assert whole.exit_code == 1, whole.output
    assert "query failed" in whole.output
    assert any(path.removeprefix("/") in whole.output for path in damaged), whole.output  # (Spark: file:/...)
    plain = query("--store", str(root / f"day={DAYS[1]}"), "--partition", f"day={DAYS[1]}", sql)
    assert plain.exit_code == 1
    assert "is a store, not a partitioned one" in plain.output
    unknown = query("--store", str(root), "--partition", "cluster=1", sql)
    assert unknown.exit_code == 1
    assert "their keys are day" in unknown.output
    assert spark.sql("SELECT 1 AS one").collect()[0]["one"] == 1  # the module's session still runs


# -- a driver killed mid-ingest ----------------------------------------------------------------


def _write_jobs(seed: Path, directory: Path, count: int, first: int = 0) -> list[Path]:
    """``count`` copies of a real history, each under its own job id (file name and every id inside)."""
    text = seed.read_text()
    paths = []
    for i in range(first, first + count):
        job = f"{1_600_000_000_000 + i}_{i % 9999 + 1:04d}"
        path = directory / seed.name.replace(SEED_JOB, job)
        path.write_text(text.replace(SEED_JOB, job))
        paths.append(path)
    return paths


def test_driver_killed_mid_ingest(spark: Any, fixtures_dir: Path, tmp_path: Path) -> None:
    """SIGKILL the CLI driving a Spark ingest after its first commit: the store verifies as it was
    committed; re-run, it holds every file once (no file twice, none lost)."""
    seed = next(fixtures_dir.rglob(f"job_{SEED_JOB}-*.jhist"))
    traces = tmp_path / "traces"
    traces.mkdir()
    files = _write_jobs(seed, traces, 240)
    store = Store(tmp_path / "store")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])),
    }
    driver = subprocess.Popen(
        [sys.executable, "-m", "phaseline", "ingest", "--engine", "spark", "--master", "local[2]",
         "--store", str(store.root), "--commit-every", "16", "--quiet", str(traces)],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 900
        while store.manifest().generation < 1:  # one commit landed, more to come
            assert driver.poll() is None, "the ingest ended before it was killed: give it more files"
            assert time.monotonic() < deadline, "no commit within the time limit"
            time.sleep(0.2)
        driver.send_signal(signal.SIGKILL)
        driver.wait(timeout=60)
    finally:
        if driver.poll() is None:
            driver.kill()
        # the JVM the driver started, and its Python workers: the driver's process group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(driver.pid, signal.SIGKILL)
    committed = store.sources()
    assert 0 < committed.num_rows < len(files), "killed between its first and its last commit"
    assert verify_store(store).ok
    assert (store.root / ".tmp").exists()  # the killed ingest's staged files, never published

    summary = ingest_paths_spark([traces], store, spark=spark)
    by_status: dict[str, int] = {}
    for r in summary.results:
        by_status[r.status] = by_status.get(r.status, 0) + 1
    assert by_status == {
        "unchanged": committed.num_rows,
        SourceStatus.LANDED: len(files) - committed.num_rows,
    }
    report = verify_store(store)
    assert report.ok, [f for f in report.findings if f.severity == "error"]
    con = store.connect()
    try:
        sources = con.sql("SELECT count(*), count(DISTINCT path) FROM raw.sources").fetchall()[0]
        jobs = con.sql("SELECT count(*), count(DISTINCT job_id) FROM raw.jobs").fetchall()[0]
    finally:
        con.close()
    assert sources == (len(files), len(files))
    assert jobs == (len(files), len(files))
    assert not any((store.root / ".tmp").iterdir()), (
        "the killed ingest's staging is removed by the re-run's commit"
    )
