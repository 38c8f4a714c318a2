"""The local backtest suite: applications, sizes, run order, command-line options, a quick run (slow)."""

from __future__ import annotations

import itertools
import json
import math
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner

from phaseline.cli import main
from phaseline.errors import DataQualityWarning
from phaseline.store import Store
from predict.suite import QUICK, Suite
from tests.predict.doubles import CONTRACT, _noisy_row, _platform_file


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


def test_suite_apps_option_runs_only_the_named_applications(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
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


def test_platform_with_the_suite_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # --platform was accepted and ignored: the suite fits its own platform model
    import predict.backtest_suite as suite_mod

    ran: list[object] = []
    monkeypatch.setattr(suite_mod, "run_suite", lambda *a, **k: ran.append(a) or pytest.fail("the suite ran"))
    platform = _platform_file(tmp_path)
    out = ["--out", str(tmp_path / "suite")]
    res = CliRunner().invoke(
        main, ["backtest", "--suite", "local", "--quick", "--platform", str(platform), *out]
    )
    assert res.exit_code == 2, res.output
    assert "--platform goes without --suite" in res.output
    res = CliRunner().invoke(main, ["backtest", "--suite", "local", "--nodes", "4", *out])
    assert res.exit_code == 2, res.output
    assert "--nodes goes without --suite" in res.output
    assert ran == []


def test_a_suite_of_fixed_maps_grows_its_splits() -> None:
    from predict.suite import MB_PER_MAP, local_suite

    grown = local_suite(sizes_mb=(4, 12, 32), maps=4, apps=("maponly",))
    assert [grown.maps_of(s) for s in grown.sizes_mb] == [4, 4, 4]  # 1, 3 and 8 MiB a split
    default = local_suite(sizes_mb=(4, 12, 32), apps=("maponly",))
    assert [default.maps_of(s) for s in default.sizes_mb] == [math.ceil(s / MB_PER_MAP) for s in (4, 12, 32)]
    res = CliRunner().invoke(main, ["backtest", "--maps", "4"])
    assert res.exit_code == 2
    assert "--maps goes with --suite local" in res.output
    res = CliRunner().invoke(main, ["backtest", "--suite", "local", "--maps", "0"])
    assert res.exit_code == 2
