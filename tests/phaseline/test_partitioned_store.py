"""A partitioned store on DuckDB: ``phaseline ingest --partition-by`` routes each file to the store
of its day and cluster, and ``Store.connect`` on the root reads the partitions as one store, the
keys as columns, a one-day query scanning only that day's files.

The traces (``tests/partitioned_traces.py``): copies of a real history of two days and two
clusters, a quarantined file and a file with no job.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from click.testing import CliRunner

from ingest.partitioning import DayFrom, file_keys, ingest_partitioned, parse_partition_by, route
from ingest.pipeline import ingest_paths
from phaseline import schemas
from phaseline.cli import main as cli
from phaseline.errors import StoreError
from phaseline.hadoop_names import cluster_of
from phaseline.schemas import SourceStatus
from phaseline.store import Store, connect_partitions, find_partitions, partitions
from phaseline.verify import verify_store
from profiles import queries
from profiles.spark_sql import spark_concepts
from tests.partitioned_traces import (
    BAD_NAME,
    CLUSTERS,
    CUT_JOB,
    CUT_NAME,
    DAYS,
    JOBS_PER_PARTITION,
    NOT_A_TRACE,
    job_ids,
    write_traces,
)

KEYS = ("day", "cluster")
#: Columns whose values differ between two ingests of the same bytes by their nature.
DIFFERS_BY_INGEST = {"sources": {"ingested_at"}}


@pytest.fixture(scope="module")
def traces(fixtures_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_traces(fixtures_dir, tmp_path_factory.mktemp("traces"))


@pytest.fixture(scope="module")
def stores(traces: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Store]:
    """The traces ingested by the CLI with ``--partition-by day,cluster``, and into one store."""
    base = tmp_path_factory.mktemp("stores")
    root, one = base / "warehouse", Store(base / "one")
    args = ["ingest", "--partition-by", "day,cluster", "--store", str(root), "-q", str(traces)]
    out = CliRunner().invoke(cli, args)
    assert out.exit_code == 3, out.output  # the bad file is quarantined
    ingest_paths([traces], one)
    return root, one


def _rows(con: Any, sql: str, drop: set[str]) -> list[tuple[Any, ...]]:
    return _table_rows(con.sql(sql).to_arrow_table(), drop)


def _table_rows(table: pa.Table, drop: set[str]) -> list[tuple[Any, ...]]:
    names = [n for n in table.column_names if n not in drop]
    rows = zip(*(table.column(n).to_pylist() for n in names), strict=True) if names else []
    return sorted((tuple(r) for r in rows), key=repr)


# -- routing -----------------------------------------------------------------------------------


def test_each_file_keyed_by_its_directory_name_or_head(traces: Path) -> None:
    done = next((traces / "done").rglob("*.jhist"))
    assert file_keys(done).day == DAYS[0]
    assert file_keys(done).day_from is DayFrom.DIRECTORY
    flat = traces / "flat" / f"job_{CLUSTERS[1]}_0003.jhist"
    assert (file_keys(flat).job_id, file_keys(flat).day, file_keys(flat).day_from) == (
        f"job_{CLUSTERS[1]}_0003", DAYS[1], DayFrom.SUBMIT,
    )  # fmt: skip
    conf = traces / "flat" / f"job_{CLUSTERS[1]}_0003_conf.xml"
    assert file_keys(conf).day is None, "a conf says no time: its day is its job's history's"
    routed = route(sorted(traces.rglob("*.*")), KEYS)
    assert conf in routed[(("day", DAYS[1]), ("cluster", CLUSTERS[1]))]
    assert routed[(("day", "unknown"), ("cluster", "unknown"))] == [traces / "flat" / NOT_A_TRACE]
    assert routed[(("day", "unknown"), ("cluster", CLUSTERS[0]))] == [traces / "flat" / BAD_NAME]
    assert (traces / "flat" / CUT_NAME) in routed[(("day", DAYS[1]), ("cluster", CLUSTERS[1]))]
    assert sum(map(len, routed.values())) == 2 * len(job_ids()) + 3


def test_partition_by_names_known_keys() -> None:
    assert parse_partition_by("cluster") == ("cluster",)
    with pytest.raises(ValueError, match="named once"):
        parse_partition_by("day,day")


# -- ingest --------------------------------------------------------------------------------------


def test_one_store_per_day_and_cluster(stores: tuple[Path, Store]) -> None:
    root, _ = stores
    specs = [dict(spec) for spec, _ in find_partitions(root)]
    good = [{"day": d, "cluster": c} for d in DAYS for c in CLUSTERS]
    unknown = [{"day": "unknown", "cluster": CLUSTERS[0]}, {"day": "unknown", "cluster": "unknown"}]
    assert specs == sorted([*good, *unknown], key=lambda s: (s["day"], s["cluster"]))
    # quarantine is the partition's own: the bad file's source row, with its reason, and no rows
    bad = Store(root / "day=unknown" / f"cluster={CLUSTERS[0]}").sources().to_pylist()
    assert [(Path(s["path"]).name, s["status"]) for s in bad] == [(BAD_NAME, SourceStatus.QUARANTINED)]
    assert "writer's schema is unusable" in bad[0]["error"]


def test_every_partition_verifies(stores: tuple[Path, Store]) -> None:
    root, _ = stores
    report = verify_store(Store(root))
    assert report.ok, [f for f in report.findings if f.severity == "error"]
    assert report.sources_checked == 2 * len(job_ids()) + 3
    for _, part in find_partitions(root):
        assert verify_store(part).ok


def test_rerun_is_idempotent(stores: tuple[Path, Store], traces: Path) -> None:
    """The same ingest again: every file to the same partition, unchanged (a quarantined file is
    read again, as in an unpartitioned store, and quarantined again in place)."""
    root, _ = stores

    def held() -> dict[Any, list[tuple[str, str, str]]]:
        return {
            spec: sorted((s["path"], s["status"], s["sha256"]) for s in part.sources().to_pylist())
            for spec, part in find_partitions(root)
        }

    before = held()
    again = ingest_partitioned([traces], root, KEYS)
    statuses = {Path(r.path).name: r.status for r in again.summary.results}
    assert statuses.pop(BAD_NAME) == SourceStatus.QUARANTINED
    assert set(statuses.values()) == {"unchanged"}
    assert held() == before


@pytest.mark.parametrize("table", list(schemas.TABLES))
def test_same_rows_as_one_store_plus_keys(stores: tuple[Path, Store], table: str) -> None:
    """Every table, raw and viewed, holds the one store's rows; the keys are VARCHAR columns after them."""
    root, one = stores
    drop = DIFFERS_BY_INGEST.get(table, set())
    whole, single = Store(root).connect(), one.connect()
    try:
        for view in (f'raw."{table}"', f'"{table}"'):
            keyed = _rows(whole, f"SELECT * EXCLUDE (day, cluster) FROM {view}", drop)
            assert keyed == _rows(single, f"SELECT * FROM {view}", drop)
        described = whole.sql(f'DESCRIBE "{table}"').fetchall()
    finally:
        whole.close()
        single.close()
    assert [(c[0], c[1]) for c in described[-2:]] == [("day", "VARCHAR"), ("cluster", "VARCHAR")]
    assert [c[0] for c in described[:-2]] == schemas.table(table).schema.names


def test_keys_are_the_jobs_day_and_cluster(stores: tuple[Path, Store]) -> None:
    root, _ = stores
    con = Store(root).connect()
    try:
        jobs = con.sql("SELECT job_id, submit_ms, day, cluster FROM jobs").fetchall()
    finally:
        con.close()
    assert {j: (d, c) for j, _, d, c in jobs} == job_ids()
    for job, submit_ms, day, cluster in jobs:
        assert day == datetime.fromtimestamp(submit_ms / 1000, UTC).date().isoformat()
        assert cluster == cluster_of(job)


def test_a_job_two_sources_describe_is_kept_once(stores: tuple[Path, Store]) -> None:
    """The cut copy and the whole history land in one partition, whose own account of the job
    (the whole copy's rows) is the root's, as in the one store."""
    root, one = stores
    whole, single = Store(root).connect(), one.connect()
    try:
        sql = "SELECT job_id, path, preference, day, cluster FROM overlapping_sources"
        overlaps = _rows(whole, sql, set())
        assert {(j, d, c) for j, _, _, d, c in overlaps} == {(CUT_JOB, DAYS[1], CLUSTERS[1])}
        expected = _rows(single, "SELECT job_id, path, preference FROM overlapping_sources", set())
        assert [r[:3] for r in overlaps] == expected
        sql = f"SELECT count(*) FROM {{}} WHERE job_id = '{CUT_JOB}'"
        kept, raw = whole.sql(sql.format("tasks")).fetchall(), whole.sql(sql.format("raw.tasks")).fetchall()
    finally:
        whole.close()
        single.close()
    assert kept[0][0] < raw[0][0], "the cut copy's rows of the job are set aside"


@pytest.mark.parametrize("concept", spark_concepts())
def test_profiles_queries_over_the_root(stores: tuple[Path, Store], concept: str) -> None:
    """Each profiles query (those Spark runs too) gives the one store's rows over the root."""
    root, one = stores
    spec = queries.sql_file(concept)
    params: dict[str, Any] = {}
    if "job_id" in spec.params:
        params["job_id"] = f"job_{CLUSTERS[1]}_0003"
    if "k" in spec.params:
        params["k"] = queries.DEFAULT_STRAGGLER_K
    got = []
    for store in (Store(root), one):
        con = store.connect()
        try:
            table = queries.relation(con, concept, **params).to_arrow_table()
            got.append((table.column_names, _table_rows(table, set())))
        finally:
            con.close()
    assert got[0] == got[1]


# -- one day alone -------------------------------------------------------------------------------


def _files_scanned(con: Any, sql: str) -> list[str]:
    """The Parquet files DuckDB scans for ``sql`` (EXPLAIN ANALYZE's table scans)."""
    (_, plan), *_ = con.sql(f"EXPLAIN (ANALYZE, FORMAT json) {sql}").fetchall()
    found: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        info = node.get("extra_info") or {}
        if info.get("Function") == "READ_PARQUET":
            names = info.get("Filename(s)", "")
            files = [n for n in (names if isinstance(names, list) else names.split(",")) if n.strip()]
            assert int(info["Total Files Read"]) == len(files), "every file read is named"
            found.extend(files)
        for child in node.get("children", []):
            walk(child)

    for op in json.loads(plan)["operator"]:
        walk(op)
    return [f.strip() for f in found]


def test_one_day_query_scans_only_that_days_files(stores: tuple[Path, Store]) -> None:
    root, _ = stores
    con = Store(root).connect()
    try:
        one_day = _files_scanned(con, f"SELECT count(*) FROM attempts WHERE day = '{DAYS[1]}'")
        every_day = _files_scanned(con, "SELECT count(*) FROM attempts")
        # a table whose view sets a job's rows aside (the cut copy's, in the second day) prunes as well
        tasks = _files_scanned(con, f"SELECT count(*) FROM tasks WHERE day = '{DAYS[0]}'")
        ((n,),) = con.sql(f"SELECT count(*) FROM attempts WHERE day = '{DAYS[1]}'").fetchall()
    finally:
        con.close()
    assert one_day
    assert all(f"/day={DAYS[1]}/" in f for f in one_day), one_day
    assert {f for f in every_day if f"/day={DAYS[1]}/" in f} == set(one_day)
    assert any(f"/day={DAYS[0]}/" in f for f in every_day)
    assert tasks
    assert all(f"/day={DAYS[0]}/" in f for f in tasks), tasks
    assert n == len(CLUSTERS) * JOBS_PER_PARTITION * 2  # the seed job has 2 attempts


def test_where_leaves_the_other_partitions_unopened(stores: tuple[Path, Store], tmp_path: Path) -> None:
    """``connect_partitions(where=...)``: the other days' files are not even looked up (moved away here)."""
    root, _ = stores
    away = tmp_path / "away"
    shutil.move(root / f"day={DAYS[0]}", away)
    try:
        parts = find_partitions(root)
        con = connect_partitions(root, parts, where={"day": DAYS[1]})
        try:
            assert con.sql("SELECT DISTINCT day FROM jobs").fetchall() == [(DAYS[1],)]
        finally:
            con.close()
    finally:
        shutil.move(away, root / f"day={DAYS[0]}")


def test_cli_query_on_the_root(stores: tuple[Path, Store]) -> None:
    root, _ = stores
    sql = f"SELECT cluster, count(*) AS n FROM jobs WHERE day = '{DAYS[0]}' GROUP BY cluster ORDER BY cluster"
    out = CliRunner().invoke(cli, ["query", "--store", str(root), "--format", "json", sql])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout) == [{"cluster": c, "n": JOBS_PER_PARTITION} for c in CLUSTERS]


# -- refusals --------------------------------------------------------------------------------------


def test_a_root_is_not_a_store_nor_the_reverse(stores: tuple[Path, Store], traces: Path) -> None:
    root, one = stores
    with pytest.raises(StoreError, match="is a store"):
        ingest_partitioned([traces], one.root, KEYS)
    with pytest.raises(StoreError, match="not by day"):
        ingest_partitioned([traces], root, ("day",))
    out = CliRunner().invoke(cli, ["ingest", "--store", str(root), str(traces)])
    assert out.exit_code == 1
    assert "--partition-by" in out.output
    assert [dict(s) for s, _ in partitions(one.root)] == [{}]
