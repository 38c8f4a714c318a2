"""The warm clock (profiles.jit_clock): a run of one JVM read without the JIT's compiles, and the
compile time added back once by every model (predict.jit_one_time)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from phaseline import schemas
from predict import core
from predict.core import Cluster, Dataset, JobSettings
from profiles.jit_clock import merged_stalls, warm_clock
from profiles.merge_runs import merge_profiles
from tests.predict.doubles import LinearPlatform
from tests.profiles.first_reduces_helpers import SPLIT
from tests.profiles.first_reduces_helpers import local_sort_profile as first_reduce_profile
from tests.profiles.profiles_doubles import make_con

JOB = "job_local1_0001"
RUN_DIR = "/runs/sort-4mb"


def _store_like(
    attempts: list[tuple[str, int, int]], compiles: list[tuple[int, float]], warmup_mb: float = 0.0
) -> duckdb.DuckDBPyConnection:
    """A connection whose main schema holds the store's tables (as a Store's does), with one job's
    attempts ``(attempt_id, start_ms, finish_ms)``, a phase per attempt and the compiles of its run."""
    con = duckdb.connect()
    rows: dict[str, list[dict[str, object]]] = {name: [] for name in schemas.TABLES}
    rows["jobs"].append({"job_id": JOB, "finish_ms": max(f for _, _, f in attempts) + 10})
    for attempt, start, finish in attempts:
        rows["tasks"].append({"job_id": JOB, "task_id": attempt, "start_ms": start, "finish_ms": finish})
        rows["attempts"].append({"job_id": JOB, "attempt_id": attempt, "status": "SUCCEEDED", "start_ms": start,
                                 "finish_ms": finish})  # fmt: skip
        rows["attempt_phases"].append({"job_id": JOB, "attempt_id": attempt, "phase": "map", "start_ms": start,
                                       "end_ms": finish, "dur_ms": finish - start, "dur_us": 1000 * (finish - start)})  # fmt: skip
    rows["sources"] += [{"path": f"{RUN_DIR}/run.json", "sha256": "r", "format": "phaseline-engine-run", "job_ids": [JOB]},
                        {"path": f"{RUN_DIR}/jit.jfr", "sha256": "j", "format": "jfr", "job_ids": []}]  # fmt: skip
    rows["events"].append({"job_id": JOB, "seq": 0, "event_type": "engine_run",
                           "payload_json": json.dumps({"params": {"warmup_mb": warmup_mb}})})  # fmt: skip
    rows["system_samples"] += [{"ts_ms": s, "metric": "jit_compile_ms", "value": d, "source_sha256": "j"}
                               for s, d in compiles]  # fmt: skip
    for name, spec in schemas.TABLES.items():
        schema = spec.schema
        for extra in ("source_sha256", "job_ids"):
            if extra not in schema.names and any(extra in r for r in rows[name]):
                schema = schema.append(pa.field(extra, pa.list_(pa.string()) if extra == "job_ids" else pa.string()))
        con.register(f"_{name}", pa.Table.from_pylist(rows[name], schema=schema))
        con.execute(f'CREATE TABLE main."{name}" AS SELECT * FROM "_{name}"')
    return con


def test_merged_stalls_count_overlapping_compiles_once() -> None:
    assert merged_stalls([(10, 20), (15, 20), (100, 5)]) == [(10, 35), (100, 105)]


def test_a_run_of_one_task_at_a_time_reads_without_its_compiles() -> None:
    # two tasks, 0-100 and 100-200 ms; compiles of 20 ms at 10 and 5 ms at 150, one outside the tasks
    con = _store_like([("a1", 0, 100), ("a2", 100, 200)], [(10, 20.0), (150, 5.0), (500, 40.0)])
    warm = warm_clock(con, JOB)
    assert warm is not None
    assert warm.compile_ms == pytest.approx(25.0)
    assert warm.compiles == 2
    attempts = warm.con.execute("SELECT attempt_id, start_ms, finish_ms FROM attempts ORDER BY 1").fetchall()
    assert attempts == [("a1", 0, 80), ("a2", 80, 175)]
    phases = warm.con.execute("SELECT attempt_id, dur_ms, dur_us FROM attempt_phases ORDER BY 1").fetchall()
    assert phases == [("a1", 80, 80_000), ("a2", 95, 95_000)]
    (finish,) = warm.con.execute("SELECT finish_ms FROM jobs").fetchall()
    assert finish == (185,)
    # the store's own connection still reads the run as it was
    assert con.execute("SELECT max(finish_ms) FROM attempts").fetchall() == [(200,)]


def test_a_run_after_a_warm_up_is_read_as_it_ran() -> None:
    # its job's code compiled before it: the few long compiles left did not all stall its tasks
    con = _store_like([("a1", 0, 100), ("a2", 100, 200)], [(10, 20.0)], warmup_mb=2.0)
    assert warm_clock(con, JOB) is None


def test_tasks_side_by_side_are_read_as_they_ran() -> None:
    con = _store_like([("a1", 0, 100), ("a2", 50, 150)], [(10, 20.0)])
    assert warm_clock(con, JOB) is None


def test_a_run_without_compiles_is_read_as_it_ran() -> None:
    con = _store_like([("a1", 0, 100)], [])
    assert warm_clock(con, JOB) is None


def test_registered_frames_have_no_warm_clock() -> None:
    assert warm_clock(make_con({}), JOB) is None


@pytest.mark.parametrize("model", core.models())
def test_every_model_adds_the_compiles_once(tmp_path: Path, model: str) -> None:
    profile = dataclasses.replace(first_reduce_profile(tmp_path), jit_one_time_ms=400.0)
    platform = LinearPlatform(
        coef={"read": (2.0, 2e-6), "collect": (1.0, 1e-6), "spill": (1.0, 1e-6), "merge": (1.0, 1e-6),
              "shuffle": (5.0, 1e-6), "write": (2.0, 2e-6)}
    )  # fmt: skip
    data, settings = Dataset(32 * SPLIT, splits=32), JobSettings(reduces=4)
    with_term = core.get(model).predict(profile, platform, Cluster(1, 1, 1), data, settings)
    without = core.get(model).predict(dataclasses.replace(profile, jit_one_time_ms=None), platform, Cluster(1, 1, 1),
                                      data, settings)  # fmt: skip
    # between the bounds of what one size says: the geometric mean of 1x and k x the profiled compiles
    k = data.input_bytes / profile.input.total_bytes
    assert k == pytest.approx(8.0)
    assert with_term.stages["job.jit_compiles"] == pytest.approx(0.4 * math.sqrt(8.0))
    assert "job.jit_compiles" not in without.stages
    assert with_term.seconds - without.seconds == pytest.approx(0.4 * math.sqrt(8.0))
    assert any("JIT's compiles" in a and "400 ms in the profiled run's tasks" in a for a in with_term.assumptions)
    same = core.get(model).predict(profile, platform, Cluster(1, 1, 1), Dataset(profile.input.total_bytes), settings)
    assert same.stages["job.jit_compiles"] == pytest.approx(0.4)  # at the profiled size, as measured


def test_merged_runs_average_their_compiles(tmp_path: Path) -> None:
    profile = dataclasses.replace(first_reduce_profile(tmp_path), jit_one_time_ms=300.0)
    other = dataclasses.replace(profile, source=dataclasses.replace(profile.source, job_ids=("job_local43_0001",)),
                                jit_one_time_ms=500.0)  # fmt: skip
    assert merge_profiles([profile, other]).jit_one_time_ms == pytest.approx(400.0)


@pytest.mark.slow
# 4 maps on one slot may or may not leave thin evidence for the first-wave split (said, not tested here)
@pytest.mark.filterwarnings("ignore::phaseline.errors.DataQualityWarning")
def test_a_real_run_records_its_compiles_and_profiles_without_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`engine run` records every run's JIT compiles (jit.jfr); ingest keeps them, and the profile reads
    the run without them: its completion time is the measured one less the compiles in the tasks, and
    a prediction at the profiled size adds them back once."""
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store
    from platform_model.engine import EngineJob, run_engine
    from predict.backtest_suite import app_jar
    from profiles.extract import extract_profile

    monkeypatch.setenv("PHASELINE_JIT_RECORDING", "1")  # as a user's runs (the suite's are turned off)
    run = run_engine(EngineJob(input_mb=4, selectivity=1.0, maps=4, reduces=2, jar=app_jar(),
                               main_class="phaseline.apps.Sort", args=("{input}", "{output}", "2")),
                     tmp_path / "sort")  # fmt: skip
    assert (run.run_dir / "jit.jfr").is_file()
    store = Store(tmp_path / "store")
    ingest_paths([run.run_dir], store)
    con = store.connect()
    ((compiles, compile_ms),) = con.execute(
        "SELECT count(*), sum(value) FROM system_samples WHERE metric = 'jit_compile_ms'"
    ).fetchall()
    assert compiles > 100  # the JVM's start, Hadoop's and the job's code
    ((job_id, measured),) = con.execute(
        "SELECT job_id, max(finish_ms) - min(start_ms) FROM attempts GROUP BY job_id"
    ).fetchall()
    profile = extract_profile(con, job_id)
    assert profile.jit_one_time_ms is not None
    assert 0 < profile.jit_one_time_ms < min(compile_ms, measured)
    assert profile.makespans_ms[0] == pytest.approx(measured - profile.jit_one_time_ms, abs=2)  # whole ms
    assert "the JIT's compiles set apart" in (profile.cost_evidence or "")
    assert con.execute("SELECT max(finish_ms) - min(start_ms) FROM attempts").fetchall() == [(measured,)]
