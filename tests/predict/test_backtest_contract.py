"""The backtest's contract: cases and medians of simulated runs, one measured span, its JSON/CSV/table output."""

from __future__ import annotations

import csv
import io
import json
import math
import re
import statistics
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ingest.pipeline import ingest_paths
from phaseline.cli import main
from phaseline.store import Store
from platform_model.model import PlatformModel, fit_platform
from platform_model.profile import profile_from_arrays, profile_from_connection
from predict import core
from predict.backtest import backtest
from predict.backtest_runs import load_runs
from predict.backtest_scores import error_table, summarize
from predict.simulate import SimJob, StageDist, simulate_once
from tests.conftest import REPO
from tests.predict.doubles import CONTRACT, MB, LinearPlatform
from tests.predict.sim_traces import write_sim_run

#: (maps, reduces) of the simulated runs; two repeats of each.
CASES = ((4, 2), (8, 2), (16, 2), (8, 4))
#: The cluster the runs are simulated on, as `phaseline backtest` takes it.
SIM_CLUSTER = core.Cluster(1, 2, 2)
SIM_CLUSTER_ARGS = ("--nodes", "1", "--map-slots-per-node", "2", "--reduce-slots-per-node", "2")


def _store(tmp_path: Path) -> tuple[Store, dict[tuple[int, int], list[float]]]:
    """Simulated runs of one job ('sim sort': 64 MiB per map) written as .jhist and ingested."""
    spans: dict[tuple[int, int], list[float]] = {}
    paths = []
    seq = 1
    for maps, reduces in CASES:
        for seed in (1, 2):
            job = SimJob(
                map_means_ms=(2000.0,) * maps,
                map_cv=0.2,
                n_reduces=reduces,
                first_shuffle=StageDist(400.0, 0.2),
                shuffle=StageDist(1500.0, 0.2),
                reduce=StageDist(1000.0, 0.2),
                nodes=1,
                map_slots_per_node=2,
                reduce_slots_per_node=2,
            )
            run = simulate_once(job, np.random.default_rng(seed), record=True)
            paths.append(write_sim_run(run, tmp_path / "traces" / f"{seq}", seq=seq, name="sim sort", maps=maps,
                                       reduces=reduces, map_bytes=64 * MB, map_records=640_000,
                                       reduce_records=640_000 * maps // reduces))  # fmt: skip
            first = min(a.start_ms for a in run.attempts)
            spans.setdefault((maps, reduces), []).append((run.makespan_ms - first) / 1000)
            seq += 1
    store = Store(tmp_path / "store")
    ingest_paths(paths, store)
    return store, spans


def test_backtest_cases_medians_and_profile_from_the_smallest_run(tmp_path: Path) -> None:
    store, spans = _store(tmp_path)
    con = store.connect()
    runs = load_runs(con)
    assert len(runs) == 2 * len(CASES)
    # the runs' own cluster (simulated runs are no LocalJobRunner's: without it they are skipped)
    rows = backtest(
        con, LinearPlatform(), models=("bounds", "critical_path", "simulation"), cluster=SIM_CLUSTER
    )
    # the profile comes from the smallest case's median run by measured span (lower median of two)
    first = min(runs, key=lambda r: (r.input_bytes, r.reduces))
    case = sorted(
        (r for r in runs if r.input_bytes == first.input_bytes and r.reduces == first.reduces),
        key=lambda r: (r.span_ms, r.job_id),
    )
    assert len(case) == 2
    assert {r.profile_job for r in rows} == {case[0].job_id}
    # Every case but the profiled one (4 maps, 2 reduces), by every model asked for.
    assert {r.case for r in rows} == {
        "input=512.0MiB maps=8 reduces=2",
        "input=1024.0MiB maps=16 reduces=2",
        "input=512.0MiB maps=8 reduces=4",
    }
    assert len(rows) == 3 * 3
    for r in rows:
        maps = int(r.case.split("maps=")[1].split()[0])
        reduces = int(r.case.split("reduces=")[1])
        assert r.runs == 2
        assert math.isclose(r.measured_s, statistics.median(spans[(maps, reduces)]), abs_tol=2e-3)
        assert math.isclose(r.error, (r.predicted_s - r.measured_s) / r.measured_s)
        # the case's fastest and slowest runs bound it; their spread is the noise floor
        assert r.measured_min_s is not None
        assert r.measured_max_s is not None
        assert math.isclose(r.measured_min_s, min(spans[(maps, reduces)]), abs_tol=2e-3)
        assert math.isclose(r.measured_max_s, max(spans[(maps, reduces)]), abs_tol=2e-3)
        assert r.spread is not None
        assert math.isclose(r.spread, (r.measured_max_s - r.measured_min_s) / r.measured_s)
        assert r.within_runs == (r.measured_min_s <= r.predicted_s <= r.measured_max_s)
        assert r.to_dict()["spread"] == r.spread
    summary = {s.model: s for s in summarize(rows)}
    sim_rows = [r for r in rows if r.model == "simulation"]
    assert summary["simulation"].median_spread == statistics.median(r.spread for r in sim_rows)
    assert summary["simulation"].within_runs == sum(bool(r.within_runs) for r in sim_rows) / len(sim_rows)
    assert summary["bounds"].coverage is not None
    assert summary["critical_path"].coverage is None
    # the width the coverage took: (high - low) / measured, by model; none without intervals
    assert summary["simulation"].median_width == statistics.median(
        (r.high_s - r.low_s) / r.measured_s for r in sim_rows if r.low_s is not None and r.high_s is not None
    )
    assert summary["simulation"].median_width > 0
    assert summary["critical_path"].median_width is None
    assert summary["bounds"].to_dict()["median_width"] == summary["bounds"].median_width
    assert summary["simulation"].worst_abs_error >= summary["simulation"].median_abs_error
    table = error_table(rows)
    assert len(table) == 3
    assert {"bounds_s", "bounds_err", "simulation_err"} <= set(table[0])


@pytest.mark.filterwarnings(
    "ignore::phaseline.errors.DataQualityWarning"
)  # thin first waves: not the subject
def test_the_measured_span_is_defined_once_and_read_alike(tmp_path: Path) -> None:
    """ARIA's completion time has one definition (job_summary.sql's task_span_ms): the backtest's
    measured span and the profile's makespan read it, and both are the simulated run's own span."""
    from profiles import queries
    from profiles.extract import extract_profile

    store, spans = _store(tmp_path)
    con = store.connect()
    runs = load_runs(con)
    assert len(runs) == 2 * len(CASES)
    for run in runs:
        summary_span = float(queries.job_summary(con, run.job_id).iloc[0]["task_span_ms"])
        assert extract_profile(con, run.job_id).makespans_ms == (summary_span,) == (run.span_ms,)
    assert sorted(r.span_ms / 1000 for r in runs) == pytest.approx(
        sorted(s for case in spans.values() for s in case), abs=2e-3
    )


def test_backtest_cli_json_contract(tmp_path: Path) -> None:
    store, _ = _store(tmp_path)
    # the fitted range covers every phase's data in the stored runs (no extrapolation warning)
    x = np.array([1, 2, 4, 8, 16, 64, 256, 1024, 4096] * 6, dtype=float) * MB
    phases = np.repeat(["read", "collect", "spill", "merge", "shuffle", "write"], 9)
    platform = fit_platform(profile_from_arrays(phases, x, 50 + x / 2e5), split=False)
    platform_path = platform.save(tmp_path / "platform.json")
    res = CliRunner().invoke(
        main,
        ["backtest", "--store", str(store.root), "--platform", str(platform_path), "--format", "json",
         *SIM_CLUSTER_ARGS],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert rows
    assert all(set(r) >= CONTRACT for r in rows)
    assert {r["model"] for r in rows} <= set(core.models())
    assert {"bounds", "critical_path", "simulation"} <= {r["model"] for r in rows}
    # the side-by-side table: CSV keeps each error as a share (it had been the table's "+3.5%" text),
    # the table prints it as a signed percentage
    by_case = {(r["case"], r["model"]): r["error"] for r in rows}
    args = ["backtest", "--store", str(store.root), "--platform", str(platform_path), *SIM_CLUSTER_ARGS]
    res = CliRunner().invoke(main, [*args, "--format", "csv"])
    assert res.exit_code == 0, res.output
    lines = list(csv.DictReader(io.StringIO(res.stdout)))
    assert lines
    for line in lines:
        assert float(line["bounds_err"]) == pytest.approx(by_case[(line["case"], "bounds")], abs=1e-4)
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert re.search(r"[+-]\d+\.\d%", res.stdout)
    res = CliRunner().invoke(main, ["backtest", "--store", str(store.root)])
    assert res.exit_code == 2
    assert "no --platform given and the store holds no microbenchmark runs" in res.output
    res = CliRunner().invoke(
        main, ["backtest", "--store", str(store.root), "--platform", str(platform_path), "--sizes", "8,16"]
    )
    assert res.exit_code == 2
    assert "--sizes goes with --suite local" in res.output
    res = CliRunner().invoke(  # --out had been ignored without a word: nothing is written there
        main,
        [
            "backtest",
            "--store",
            str(store.root),
            "--platform",
            str(platform_path),
            "--out",
            str(store.root / "x"),
        ],
    )
    assert res.exit_code == 2
    assert "--out goes with --suite local" in res.output
    res = CliRunner().invoke(main, ["backtest", "--suite", "local", "--store", str(store.root)])
    assert res.exit_code == 2  # it was ignored: the suite's store is under --out
    assert "--store goes without --suite" in res.output
    for bad in ("8,x", "8,0", "8,-1", "nan"):
        res = CliRunner().invoke(main, ["backtest", "--suite", "local", "--sizes", bad])
        assert res.exit_code == 2, bad
        assert "--sizes" in res.output


def test_backtest_as_its_contract_writes_it_fits_the_platform_from_the_store(tmp_path: Path) -> None:
    # `phaseline backtest [--store DIR] [--format table|json]`: no --platform in the contract (it was
    # required); the model comes from the store's microbenchmark runs, as `phaseline fit` would fit them
    store = Store(tmp_path / "store")
    ingest_paths([REPO / "sample_traces"], store)
    res = CliRunner().invoke(main, ["backtest", "--store", str(store.root), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert "fitted from the store's 3 microbenchmark run(s) (phaseline-bench)" in res.stderr
    rows = json.loads(res.stdout)
    assert rows
    assert all(set(r) >= CONTRACT for r in rows)
    # the sample's runs give 'read' 4 points (a line needs 5), as 'collect'; 'write' 2: said, and priced from the profile
    assert "platform model: read not fitted: phase 'read': 4 point(s) from 1 run(s)" in res.stderr
    # the same rows as with that model fitted from the benchmark runs, saved, and passed as --platform
    con = store.connect()
    model = fit_platform(profile_from_connection(con, job_name="phaseline-bench"), skip_unfittable=True)
    model.save(tmp_path / "p.json")
    given = CliRunner().invoke(
        main,
        ["backtest", "--store", str(store.root), "--platform", str(tmp_path / "p.json"), "--format", "json"],
    )
    assert json.loads(given.stdout) == rows
    assert len(profile_from_connection(con, job_name="phaseline-bench").frame) == len(
        profile_from_connection(con).frame
    )  # the sample holds benchmark runs only
    assert profile_from_connection(con, job_name="no such job").frame.empty
    assert set(PlatformModel.load(tmp_path / "p.json").unfitted) == {"read", "collect", "write"}
