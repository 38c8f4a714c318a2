"""The backtest: cases, medians and the JSON contract on simulated traces; the quick local suite for real (slow)."""

from __future__ import annotations

import csv
import io
import itertools
import json
import math
import re
import statistics
import warnings
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ingest.pipeline import ingest_paths
from phaseline.cli import main
from phaseline.errors import DataQualityWarning
from phaseline.store import Store
from platform_model.model import PlatformModel, fit_platform
from platform_model.profile import profile_from_arrays, profile_from_connection
from predict import core
from predict.backtest import BacktestRow, backtest
from predict.backtest_runs import load_runs
from predict.backtest_scores import error_table, summarize
from predict.simulate import SimJob, StageDist, simulate_once
from predict.suite import QUICK, Suite
from tests.conftest import REPO
from tests.predict.sim_traces import write_sim_run
from tests.predict.test_predict_core import LinearPlatform

MB = 2**20
#: The JSON fields `phaseline backtest --format json` promises (issue 9).
CONTRACT = {"job", "case", "model", "predicted_s", "measured_s", "error"}
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
    rows = backtest(con, LinearPlatform(), models=("bounds", "critical_path", "simulation"), cluster=SIM_CLUSTER)
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


@pytest.mark.filterwarnings("ignore::phaseline.errors.DataQualityWarning")  # thin first waves: not the subject
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
        main, ["backtest", "--store", str(store.root), "--platform", str(platform_path), "--out", str(store.root / "x")]
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


def _suites_run(monkeypatch: pytest.MonkeyPatch) -> list[Suite]:
    """Every suite ``backtest --suite`` asks to run, in place of running it (each backtests one row)."""
    import predict.backtest_suite as suite_mod

    ran: list[Suite] = []

    def fake_run_suite(suite: Suite, out_dir: Path, **_: object) -> suite_mod.SuiteResult:
        ran.append(suite)
        return suite_mod.SuiteResult((_noisy_row("c", (1.0,), (1.0,)),), (), Path(out_dir))

    monkeypatch.setattr(suite_mod, "run_suite", fake_run_suite)
    return ran


def test_suite_sizes_option_reaches_the_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from predict.suite import FULL

    ran = _suites_run(monkeypatch)
    out = ["--out", str(tmp_path / "suite"), "--format", "json"]
    for args, sizes in (([], FULL.sizes_mb), (["--sizes", "4,8,16"], (4.0, 8.0, 16.0))):
        res = CliRunner().invoke(main, ["backtest", "--suite", "local", *args, *out])
        assert res.exit_code == 0, res.output
        assert ran[-1].sizes_mb == sizes
        assert ran[-1].apps == FULL.apps
    res = CliRunner().invoke(main, ["backtest", "--suite", "local", "--quick", "--sizes", "1,3", *out])
    assert res.exit_code == 0, res.output
    assert (ran[-1].apps, ran[-1].sizes_mb) == (QUICK.apps, (1.0, 3.0))
    assert ran[-1].repeats == QUICK.repeats
    res = CliRunner().invoke(main, ["backtest", "--suite", "local", "--repeats", "4", *out])
    assert res.exit_code == 0, res.output
    assert (ran[-1].repeats, ran[-1].sizes_mb) == (4, FULL.sizes_mb)
    for bad in (["--suite", "local", "--repeats", "0"], ["--repeats", "5", "--platform", __file__]):
        res = CliRunner().invoke(main, ["backtest", *bad, *out])
        assert res.exit_code == 2
        assert "--repeats" in res.output



def test_suite_apps_option_runs_only_the_named_applications(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from predict.suite import FRESH_HELD_OUT, FULL

    ran = _suites_run(monkeypatch)
    out = ["--out", str(tmp_path / "suite"), "--format", "json"]
    named = ",".join(sorted(FRESH_HELD_OUT))
    res = CliRunner().invoke(main, ["backtest", "--suite", "local", "--apps", f"{named}, ngrams", *out])
    assert res.exit_code == 0, res.output
    assert [app.name for app in ran[-1].apps] == sorted(FRESH_HELD_OUT)  # in the order named, once each
    assert ran[-1].sizes_mb == FULL.sizes_mb
    res = CliRunner().invoke(main, ["backtest", "--suite", "local", "--apps", "ngrams,nosuch", *out])
    assert res.exit_code == 1, res.output
    assert "no suite application 'nosuch': choose from" in res.stderr
    assert len(ran) == 1  # refused before anything ran
    res = CliRunner().invoke(main, ["backtest", "--apps", "ngrams", "--platform", __file__, *out[2:]])
    assert res.exit_code == 2
    assert "--apps goes with --suite local" in res.output

@pytest.mark.slow
def test_quick_local_suite_for_real(tmp_path: Path) -> None:
    # Real LocalJobRunner runs: a 4-run microbenchmark plan for the platform model,
    # then word count and grep at 2 and 4 MiB; the 4 MiB runs are predicted.
    res = CliRunner().invoke(
        main,
        ["backtest", "--suite", "local", "--quick", "--out", str(tmp_path / "suite"), "--format", "json"],
    )
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert {r["job"] for r in rows} == {"phaseline app wordcount", "phaseline app grep"}
    assert {"bounds", "critical_path", "simulation"} <= {r["model"] for r in rows}
    for r in rows:
        assert set(r) >= CONTRACT
        assert r["measured_s"] > 0
        assert r["predicted_s"] > 0
        assert math.isfinite(r["error"])
    saved = json.loads((tmp_path / "suite" / "backtest.json").read_text())
    assert {s["model"] for s in saved["summary"]} >= {"bounds", "simulation"}
    # Every application run warmed its JVM first (the suite's warm-up, kept out of the run).
    run_files = sorted((tmp_path / "suite" / "runs").glob("*/run.json"))
    assert len(run_files) == 4
    assert all(json.loads(p.read_text())["params"]["warmup_mb"] == QUICK.warmup_mb > 0 for p in run_files)
    # The reduce's memory the runs had reaches the models: the merge manager's total bytes, not a default heap.
    from predict.settings import JobSettings
    from profiles.extract import extract_profile

    con = Store(tmp_path / "suite" / "store").connect()
    (job_id,) = con.execute("SELECT job_id FROM jobs ORDER BY job_id LIMIT 1").fetchone()
    with warnings.catch_warnings():  # (a run of one or two maps says its one-time cost is uncertain:
        warnings.simplefilter("ignore", DataQualityWarning)  # the job ids' order picks which run this is)
        config = extract_profile(con, job_id).source.config
    plan = json.loads((tmp_path / "suite" / "plan.json").read_text())
    assert config["mapreduce.reduce.memory.totalbytes"] == str(plan["reduce_memory_mb"] * 2**20)
    assert JobSettings.from_config(config).reduce_task_heap_mb == plan["reduce_memory_mb"]


def test_suite_runs_round_by_round_never_a_case_back_to_back() -> None:
    from predict.suite import FULL, run_order

    order = run_order(FULL)
    cases = {(a.name, s, r, p) for a, s, r, p, _ in order}
    assert len(order) == len(cases) * FULL.repeats == len(set(order))
    per_round = len(cases)
    for rep in range(FULL.repeats):
        this_round = order[rep * per_round : (rep + 1) * per_round]
        assert {x[4] for x in this_round} == {rep}
        assert {(a.name, s, r, p) for a, s, r, p, _ in this_round} == cases
    assert all(x[:4] != y[:4] for x, y in itertools.pairwise(order))
    assert order == run_order(FULL)  # seeded: a resumed suite makes the same runs
    first = [(a.name, s, r, p) for a, s, r, p, _ in order[:per_round]]
    assert first != sorted(first)  # shuffled, not the nested-loop order


def test_suite_has_ten_shapes_a_held_out_set_and_both_parallelisms() -> None:
    """Issue 37: >= 10 applications of distinct shapes, >= 4 held out, map slots 1 and 2, up to 8x."""
    from predict.suite import APPS, FULL, HELD_OUT, app_set, app_shape, cases

    assert len(FULL.apps) >= 10
    assert len({a.shape for a in FULL.apps}) == len(FULL.apps)
    assert len(HELD_OUT) >= 4
    assert {a.name for a in APPS} >= HELD_OUT
    assert len([a for a in FULL.apps if a.name not in HELD_OUT]) >= 4
    assert FULL.map_parallelism == (1, 2)
    assert max(FULL.sizes_mb) / min(FULL.sizes_mb) == 8
    assert app_set("phaseline app skewkey") == "held-out"
    assert app_set("phaseline app wordcount") == "tuning"
    assert app_set("some other job") == "other"
    assert app_shape("phaseline app maponly") == "map-only filter"
    assert {r for a, _s, r, _p in cases(FULL) if a.name == "maponly"} == {0}


def _noisy_row(case: str, runs: tuple[float, ...], profile: tuple[float, ...], job: str = "j") -> BacktestRow:
    return BacktestRow(job, case, "m", 1.0, statistics.median(runs), 0.0, None, None, len(runs), "p",
                       measured_runs_s=runs, profile_runs_s=profile)  # fmt: skip


def test_noise_floor_of_one_run_each_is_the_ratio_of_two_lognormals() -> None:
    """n_p = n_c = 1: error = exp(Y) - 1, Y ~ N(0, 2 sigma^2); its median |error| x solves
    Phi(log(1 + x) / s) - Phi(log(1 - x) / s) = 1/2 with s = sqrt(2) sigma."""
    from scipy.optimize import brentq
    from scipy.stats import norm

    from predict.backtest_scores import noise_floor

    sigma = 0.1
    s = math.sqrt(2) * sigma
    exact = brentq(lambda x: norm.cdf(math.log1p(x) / s) - norm.cdf(math.log1p(-x) / s) - 0.5, 1e-9, 0.99)
    floor = noise_floor([_noisy_row("c", (1.0,), (1.0,))], sigma=sigma, replications=100_000)
    assert floor is not None
    assert floor.median_abs_error == floor.worst_abs_error == pytest.approx(exact, rel=0.02)
    assert noise_floor([_noisy_row("c", (1.0,), (1.0,))]) is None  # one run each: no noise to measure


def test_noise_floor_pools_the_log_spread_of_cases_and_profiles() -> None:
    from predict.backtest_scores import noise_floor

    e = math.exp
    rows = [_noisy_row("a", (e(0.1), e(-0.1)), (e(0.2), 1.0, e(-0.2))), _noisy_row("b", (1.0, 1.0), (1.0,), job="k")]
    floor = noise_floor(rows)
    assert floor is not None
    # squared log deviations 0.01 + 0.01 (a) + 0 (b) + 0.04 + 0 + 0.04 (profile), dof 1 + 1 + 2
    assert floor.sigma == pytest.approx(math.sqrt(0.10 / 4))


def test_noise_floor_grows_with_noise_and_shrinks_with_more_runs() -> None:
    from predict.backtest_scores import noise_floor

    def floor(sigma: float, n: int) -> float:
        runs = tuple(math.exp(sigma * z) for z in np.linspace(-1.5, 1.5, n))
        rows = [_noisy_row(f"c{i}", runs, runs, job=f"j{i % 4}") for i in range(20)]
        result = noise_floor(rows, seed=3)
        assert result is not None
        return result.worst_abs_error

    assert floor(0.05, 3) < floor(0.1, 3) < floor(0.2, 3)
    assert floor(0.1, 9) < floor(0.1, 3)
    assert noise_floor([_noisy_row("c", (1.0, 1.0), (1.0, 1.0))]) == noise_floor(
        [_noisy_row("c", (1.0, 1.0), (1.0, 1.0))]
    )


def test_summary_reports_the_noise_floor_beside_each_model() -> None:
    rows = [_noisy_row(f"c{i}", (0.9, 1.0, 1.1), (0.45, 0.5, 0.55)) for i in range(5)]
    (summary,) = summarize(rows)
    assert summary.floor_median_abs_error is not None
    assert summary.floor_worst_abs_error is not None
    assert 0 < summary.floor_median_abs_error < summary.floor_worst_abs_error < 1
    assert {"floor_median_abs_error", "floor_worst_abs_error"} <= set(summary.to_dict())


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
        main, ["backtest", "--store", str(store.root), "--platform", str(tmp_path / "p.json"), "--format", "json"]
    )
    assert json.loads(given.stdout) == rows
    assert len(profile_from_connection(con, job_name="phaseline-bench").frame) == len(
        profile_from_connection(con).frame
    )  # the sample holds benchmark runs only
    assert profile_from_connection(con, job_name="no such job").frame.empty
    assert set(PlatformModel.load(tmp_path / "p.json").unfitted) == {"read", "collect", "write"}


def test_rows_know_their_extent_and_summaries_split_by_set_extent_and_shape() -> None:
    """Issue 37: held-out apart from tuning, interpolation apart from extrapolation, per shape, each
    with its own noise floor."""
    from predict.backtest_suite import summarize_groups

    def row(job: str, case: str, scale: float, err: float) -> BacktestRow:
        return replace(
            _noisy_row(case, (0.9, 1.0, 1.1), (0.45, 0.5, 0.55), job=job), error=err, scale=scale
        )

    rows = [
        row("phaseline app skewkey", "a", 3.0, 0.10),
        row("phaseline app skewkey", "b", 1.0, 0.02),
        row("phaseline app wordcount", "a", 8.0, -0.04),
        row("phaseline app wordcount", "b", 1.0, 0.01),
    ]
    assert [r.extent for r in rows] == ["extrapolation", "interpolation"] * 2
    assert rows[0].to_dict()["extent"] == "extrapolation"
    assert _noisy_row("c", (1.0,), (1.0,)).extent is None
    groups = summarize_groups(rows, ("set", "extent", "shape"))
    by_group = dict(groups)
    assert [g for g, _ in groups][:3] == ["all", "set=held-out", "set=tuning"]
    assert by_group["set=held-out"].median_abs_error == pytest.approx(0.06)
    assert by_group["extent=extrapolation"].worst_abs_error == pytest.approx(0.10)
    assert by_group["shape=skewed key: one reduce gets most data"].cases == 2
    assert all(s.floor_median_abs_error is not None for _, s in groups)


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


@pytest.mark.parametrize(("run_dir", "local"), [("engine-runs/join-8mb-r2-0", True), ("yarn/join-8mb-r2-0", False)])
def test_a_run_of_several_input_formats_is_sized_by_its_splits(run_dir: str, local: bool, tmp_path: Path) -> None:
    # MultipleInputs (a reduce-side join of two inputs) counts 0 FileInputFormat BYTES_READ, on LocalJobRunner
    # and on YARN alike: the run had been left out of the backtest as one "without an input size"; the
    # maps' task logs name their splits
    path = Path(__file__).parents[1] / "data" / run_dir
    params = json.loads((path / "run.json").read_text())
    assert params["counters"]["org.apache.hadoop.mapreduce.lib.input.FileInputFormatCounter"]["BYTES_READ"] == 0
    store = Store(tmp_path / "store")
    ingest_paths([path], store)
    skipped: list[str] = []
    (run,) = load_runs(store.connect(), skipped=skipped)
    assert skipped == []
    assert run.local is local
    assert run.input_bytes == params["params"]["input_bytes"]
