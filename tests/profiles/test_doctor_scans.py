"""The doctor's heuristics read one job's counters only: DuckDB pushes the job filter through the
heuristics' views (grouped and partitioned by job_id) into the scan of counters.parquet."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from phaseline import schemas
from profiles.doctor import Heuristic, heuristic_rows, install
from tests.profiles.doctor_jobs import CONFIG, JOB, MB, MIN, MiB, Task, make_con, maps_of


def _counter_rows_read(con: duckdb.DuckDBPyConnection, run: Callable[[], object], profile: Path) -> int:
    """Rows the scans of counters.parquet hand up while ``run`` runs (DuckDB's JSON profile, as
    test_profiles_sql reads it)."""
    con.execute("PRAGMA enable_profiling = 'json'")
    con.execute(f"PRAGMA profiling_output = '{profile}'")
    try:
        run()
    finally:
        con.execute("PRAGMA disable_profiling")

    def walk(node: Mapping[str, Any]) -> int:
        info = node.get("extra_info") or {}
        own = (
            node.get("intermediate_rows", 0) if "counters.parquet" in str(info.get("Filename(s)", "")) else 0
        )
        return int(own) + sum(walk(child) for child in node.get("children", ()))

    return sum(walk(node) for node in json.loads(profile.read_text())["operator"])


@pytest.fixture(scope="module")
def thirty_jobs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    """30 copies of one job as Parquet files, and the counter rows of one copy."""
    one = make_con(
        maps_of(3, 1, BYTES_READ=MB, GC_TIME_MILLIS=1, CPU_MILLISECONDS=9, SPILLED_RECORDS=2, MAP_OUTPUT_RECORDS=1,
                PHYSICAL_MEMORY_BYTES=MiB),
        [Task(0, MIN, {"REDUCE_SHUFFLE_BYTES": MB})],
    )  # fmt: skip
    root = tmp_path_factory.mktemp("thirty")
    for name in schemas.TABLES:
        table = one.sql(f'SELECT * FROM "{name}"').to_arrow_table()
        rows = [{**r, "job_id": f"job_1_{i:04d}"} for i in range(1, 31) for r in table.to_pylist()]
        pq.write_table(
            pa.Table.from_pylist(rows, schema=table.schema) if rows else table, root / f"{name}.parquet"
        )
    return root, int(one.execute("SELECT count(*) FROM counters").fetchone()[0])  # type: ignore[index]


@pytest.mark.parametrize("heuristic", list(Heuristic))
def test_a_one_job_diagnosis_reads_only_that_jobs_counters(
    heuristic: Heuristic, thirty_jobs: tuple[Path, int], tmp_path: Path
) -> None:
    # a heuristic for one job must not scan the other jobs' counters (the largest table of a store):
    # DuckDB pushes the job filter through views grouped and partitioned by job_id
    root, per_job = thirty_jobs
    con = duckdb.connect()
    for name in schemas.TABLES:
        con.execute(f"CREATE VIEW \"{name}\" AS SELECT * FROM read_parquet('{root / name}.parquet')")
    everything = _counter_rows_read(
        con, lambda: con.execute("SELECT * FROM counters").fetchall(), tmp_path / "a.json"
    )
    assert everything == 30 * per_job  # (the profile counts what it should)
    install(con, heuristic)
    read = _counter_rows_read(con, lambda: heuristic_rows(con, heuristic, JOB, CONFIG), tmp_path / "p.json")
    assert read <= 3 * per_job, f"{heuristic} read {read} counter rows of {30 * per_job}"
