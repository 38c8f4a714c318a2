"""CLI contracts of the platform model: `phaseline fit --from-csv`, `phaseline platform eval`, `phaseline bench`.

``phaseline platform eval MODEL --phase P --bytes N --format json`` prints
``{"dur_ms": ...}``; the CSV columns are ``phase,data_bytes,dur_ms``.  Scripts
depend on both.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from phaseline.cli import main
from phaseline.store import Store
from platform_model.bench import make_plan
from platform_model.bench_plan import BenchPlan

MIB = 1 << 20
#: The CSV's lines: A + B * data with 3 % noise, per phase (ms, ms per MiB).
TRUTH = {"read": (200.0, 30.0), "collect": (50.0, 15.0), "spill": (80.0, 20.0),
         "merge": (30.0, 10.0), "shuffle": (500.0, 12.0), "write": (100.0, 25.0)}


def write_profile_csv(path: Path, *, seed: int = 0, per_phase: int = 120) -> Path:
    rng = np.random.default_rng(seed)
    lines = ["phase,data_bytes,dur_ms,run_id"]
    for phase, (a, b) in TRUTH.items():
        for i in range(per_phase):
            data = int(rng.choice([2, 4, 8, 16, 32, 64]) * MIB)
            dur = (a + b * data / MIB) * rng.normal(1.0, 0.03)
            lines.append(f"{phase},{data},{dur:.1f},run{i % 12}")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_fit_from_csv_then_eval_json_contract(tmp_path: Path) -> None:
    csv_path = write_profile_csv(tmp_path / "profile.csv")
    model = tmp_path / "platform.json"
    runner = CliRunner()
    res = runner.invoke(main, ["fit", "--from-csv", str(csv_path), "--out", str(model), "--report",
                               "--plot", str(tmp_path / "plots"), "--plot-format", "svg", "--cluster", "testbed"])
    assert res.exit_code == 0, res.output
    assert "| read |" in res.output
    assert "held-out" in res.output
    assert (tmp_path / "plots" / "platform-shuffle.svg").read_text().startswith("<?xml")
    assert (tmp_path / "plots" / "platform.svg").exists()
    doc = json.loads(model.read_text())
    assert doc["format"] == "phaseline-platform-model"
    assert doc["version"] == 1
    assert doc["cluster"]["name"] == "testbed"
    for phase, (a, b) in TRUTH.items():
        res = runner.invoke(main, ["platform", "eval", str(model), "--phase", phase, "--bytes", str(32 * MIB),
                                   "--format", "json"])
        assert res.exit_code == 0, res.output
        out = json.loads(res.stdout)
        assert set(out) == {"dur_ms"}
        assert out["dur_ms"] == pytest.approx(a + b * 32, rel=0.03)
    res = runner.invoke(main, ["platform", "eval", str(model), "--phase", "spill", "--bytes", str(32 * MIB)])
    assert res.exit_code == 0
    assert res.output.strip().endswith("ms")
    # sizes as elsewhere (binary units, as Hadoop's settings)
    res = runner.invoke(main, ["platform", "eval", str(model), "--phase", "spill", "--bytes", "32M", "--format", "json"])
    assert json.loads(res.stdout)["dur_ms"] == pytest.approx(TRUTH["spill"][0] + TRUTH["spill"][1] * 32, rel=0.03)
    res = runner.invoke(main, ["platform", "eval", str(model), "--phase", "spill", "--bytes", "32X"])
    assert res.exit_code == 2
    assert "size '32X' is not understood" in res.stderr
    # the fit's table on stdout, what it could not fit (and where the model went) on stderr
    res = runner.invoke(main, ["fit", "--from-csv", str(csv_path), "--out", str(model)], env={"PHASELINE_STORE": "/x"})
    assert res.exit_code == 0
    assert res.stdout.splitlines()[0].split()[:3] == ["phase", "segment", "n"]
    assert res.stderr.splitlines()[0] == f"platform model (tukey norm) -> {model}"
    res = runner.invoke(main, ["fit", "--from-csv", str(csv_path), "--store", str(tmp_path), "--out", str(model)])
    assert res.exit_code == 2
    assert "--from-csv and --store are alternatives" in res.stderr


def test_eval_warns_outside_the_fitted_range_and_rejects_unknown_phases(tmp_path: Path) -> None:
    model = tmp_path / "platform.json"
    runner = CliRunner()
    assert runner.invoke(main, ["fit", "--from-csv", str(write_profile_csv(tmp_path / "p.csv")),
                                "--out", str(model)]).exit_code == 0
    res = runner.invoke(main, ["platform", "eval", str(model), "--phase", "read", "--bytes", str(10 * 1024 * MIB),
                               "--format", "json"])
    assert res.exit_code == 0
    assert "outside the fitted range" in res.stderr
    assert json.loads(res.stdout)["dur_ms"] == pytest.approx(200 + 30 * 10240, rel=0.03)
    res = runner.invoke(main, ["platform", "eval", str(model), "--phase", "mapp", "--bytes", "1"])
    assert res.exit_code == 2  # a usage error
    assert "the model has no submodel 'mapp'" in res.output


def test_fit_from_csv_too_few_points(tmp_path: Path) -> None:
    csv_path = tmp_path / "few.csv"
    csv_path.write_text("phase,data_bytes,dur_ms\nread,1048576,100\nread,2097152,130\nspill,1048576,20\n")
    res = CliRunner().invoke(main, ["fit", "--from-csv", str(csv_path), "--out", str(tmp_path / "m.json")])
    assert res.exit_code != 0
    assert "phase 'read': 2 point(s)" in res.output
    assert "more benchmark run" in res.output


def test_fit_can_leave_what_it_cannot_fit_unfitted(tmp_path: Path) -> None:
    # A phase a line cannot be fitted to stops `fit`; --skip-unfittable keeps the others, as the backtest
    # suite's fit does, and says which phase is left to each job's profile and why.
    rows = ["read,1048576,100", "read,2097152,130"] + [f"spill,{m * MIB},{20 + 5 * m}" for m in (1, 2, 4, 8, 16, 32)]
    csv_path = tmp_path / "few.csv"
    csv_path.write_text("\n".join(["phase,data_bytes,dur_ms", *rows]) + "\n")
    runner = CliRunner()
    refused = runner.invoke(main, ["fit", "--from-csv", str(csv_path), "--out", str(tmp_path / "m.json")])
    assert refused.exit_code == 1
    assert not (tmp_path / "m.json").exists()
    res = runner.invoke(main, ["fit", "--from-csv", str(csv_path), "--out", str(tmp_path / "m.json"), "--skip-unfittable"])
    assert res.exit_code == 0, res.output
    model = json.loads((tmp_path / "m.json").read_text())
    assert set(model["phases"]) == {"spill"}
    assert model["unfitted"]["read"].startswith("not fitted: phase 'read': 2 point(s)")
    assert "warning: not fitted: read: phase 'read': 2 point(s)" in res.stderr
    assert "not fitted: read: not fitted" not in res.stderr
    assert "warning: not fitted: collect: no data (no rows)" in res.stderr


def test_bench_plan_and_script(tmp_path: Path) -> None:
    runner = CliRunner()
    plan_path = tmp_path / "plan.json"
    res = runner.invoke(main, ["bench", "plan", "--scale", "0.01", "--out", str(plan_path)])
    assert res.exit_code == 0, res.output
    assert "45 benchmarks" in res.output
    assert "break from the config" in res.output
    plan = BenchPlan.load(plan_path)
    assert plan == make_plan(0.01)
    kinds = [b.kind.value for b in plan.benchmarks]
    assert kinds.count("grid") == 30
    assert kinds.count("shuffle") == 15
    script = tmp_path / "bench.sh"
    res = runner.invoke(main, ["bench", "script", "--plan", str(plan_path), "--out", str(script)])
    assert res.exit_code == 0, res.output
    text = script.read_text()
    assert text.count("\nrun_bench ") == 45
    for needle in ("hadoop jar", "phaseline.engine.PhaselineBench", "phaseline.engine.TeraRecordGen",
                   "yarn logs -applicationId", "mapred job -history", "hdfs dfs -get", "javac", "jar cf",
                   "mapreduce.reduce.memory.totalbytes=7340032", "class PhaselineBench"):
        assert needle in text, needle
    bash = shutil.which("bash")
    if bash is not None:
        assert subprocess.run([bash, "-n", str(script)], capture_output=True).returncode == 0
    # the HDFS root is written into the script: nothing but a plain absolute path, and never /
    for root in ("/x}; touch /tmp/pwned; #", "", "/", "relative/dir", "/a b"):
        res = runner.invoke(main, ["bench", "script", "--plan", str(plan_path), "--hdfs-root", root])
        assert res.exit_code == 1, root
        assert f"--hdfs-root {root!r}: give an absolute HDFS directory" in res.stderr
    # so is each benchmark's name, which the script deletes as "$HDFS_ROOT/$name": a loaded plan's
    # names are checked like its sizes ('../..' was written and would have removed the HDFS root)
    doc = json.loads(plan_path.read_text())
    for name in ("../..", "..", ".hidden", "a/b", "x y", "", "$(touch /tmp/pwned)"):
        doc["benchmarks"][0]["name"] = name
        evil = tmp_path / "evil.json"
        evil.write_text(json.dumps(doc))
        res = runner.invoke(main, ["bench", "script", "--plan", str(evil), "--out", str(tmp_path / "e.sh")])
        assert res.exit_code == 1, name
        assert f"benchmark name {name!r}" in res.stderr
        assert not (tmp_path / "e.sh").exists()


def test_bench_plan_rejects_a_bad_scale(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["bench", "plan", "--scale", "-1", "--out", str(tmp_path / "p.json")])
    assert res.exit_code == 2  # a usage error
    assert "Invalid value for '--scale': -1.0 is not in the range x>0.0" in res.output
    for option, value, message in (
        ("--inputs-mb", "nan", "Invalid value for --inputs-mb: must be finite numbers, got nan"),
        ("--inputs-mb", "0", "Invalid value for --inputs-mb: must be above 0, got 0"),  # named the benchmark
        ("--inputs-mb", "1e10", "M_inp 1e+10 MB per map"),
        ("--selectivities", "-1", "M_sel -1, N_map"),
        ("--selectivities", "1e4", "M_sel 10000, N_map"),
        ("--shuffle-maps", "-5", "Invalid value for --shuffle-maps: must be above 0, got -5"),
        ("--shuffle-maps", "2e7", "N_map 20000000, N_red"),
        ("--shuffle-maps", "2.5", "Invalid value for --shuffle-maps: must be whole numbers of map tasks"),
        ("--inputs-mb", "1,1", "benchmark names must be unique: grid-inp1mb-sel0p2"),
    ):
        res = CliRunner().invoke(main, ["bench", "plan", f"{option}={value}", "--out", str(tmp_path / "p.json")])
        assert res.exit_code == 2, (option, value)  # a usage error, as the README's exit contract says (it was 1)
        assert message in res.stderr, res.stderr
        if "M_" in message or "N_" in message:  # the plan's own check, the one a loaded plan gets
            assert "need 0 < M_inp <= 1,000,000,000 MB, 0 <= M_sel <= 1,000, 1 <= N_map, N_red <= 10,000,000" in res.stderr
    assert not (tmp_path / "p.json").exists()
    # a selectivity of 0 (maps that emit nothing) is a plan like any other, as in a loaded plan
    res = CliRunner().invoke(main, ["bench", "plan", "--selectivities=0,1", "--scale", "0.01", "--out",
                                    str(tmp_path / "p.json")])  # fmt: skip
    assert res.exit_code == 0, res.output
    # values within bounds name their benchmarks: %g had written 'grid-inp1e+06mb' (a '+' names refuse)
    # and one name for 0.1234561 and 0.1234562
    for option, value in (("--inputs-mb", "1000000"), ("--selectivities", "0.1234561,0.1234562")):
        res = CliRunner().invoke(main, ["bench", "plan", option, value, "--out", str(tmp_path / "n.json")])
        assert res.exit_code == 0, res.output
    names = [b["name"] for b in json.loads((tmp_path / "n.json").read_text())["benchmarks"]]
    assert {"grid-inp16mb-sel0p1234561", "grid-inp16mb-sel0p1234562"} <= set(names)


def test_a_break_on_the_edge_of_the_shuffle_range_is_named_so(tmp_path: Path) -> None:
    # --task-scale 0.5 puts the computed break on the smallest shuffle point: no benchmark below it for
    # the two-segment fit.  The refusal is right; its message said 1280.0 lies "outside [1280.0, ...]".
    res = CliRunner().invoke(main, ["bench", "plan", "--task-scale", "0.5", "--out", str(tmp_path / "p.json")])
    assert res.exit_code == 1
    assert "lies at the edge of its shuffle range [1280.0, 10240.0] MiB" in res.stderr
    assert "needs shuffle benchmarks on both sides of it" in res.stderr
    assert not (tmp_path / "p.json").exists()


def test_fit_without_a_store_says_what_to_do(tmp_path: Path) -> None:
    res = CliRunner().invoke(main, ["fit", "--store", str(tmp_path / "none"), "--out", str(tmp_path / "m.json")])
    assert res.exit_code != 0
    assert "no store at" in res.output
    assert "phaseline bench run" in res.output


TERAGEN_JHIST = (
    "apache-hadoop/mapreduce-client-hs/"
    "job_1416424547277_0002-1416424775281-root-TeraGen-1416424785433-2-0-SUCCEEDED-default-1416424779349.jhist"
)


def test_fit_takes_the_microbenchmark_runs_of_a_mixed_store(tmp_path: Path, fixtures_dir: Path) -> None:
    """A store holds the bundled microbenchmark runs (phaseline-bench) and a real TeraGen history ingested
    beside them, as the README's steps leave the default store.  `fit` reads the microbenchmark runs
    and counts the job it leaves out; it had fitted every job's phases, silently (an audit's mixed store
    moved the shuffle line by +74 %).  The bundled runs alone are too few for a read line, and the
    error shows which attempts each fit looked at."""
    store = tmp_path / "store"
    repo = Path(__file__).resolve().parents[2]
    runner = CliRunner()
    res = runner.invoke(main, ["ingest", "--store", str(store), str(repo / "sample_traces"), str(fixtures_dir / TERAGEN_JHIST)])
    assert res.exit_code == 0, res.output
    connects: list[Path] = []
    real_connect = Store.connect

    def counted(self: Store, *args: object, **kwargs: object) -> object:
        connects.append(self.root)
        return real_connect(self, *args, **kwargs)  # type: ignore[arg-type]

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Store, "connect", counted)
        bench = runner.invoke(main, ["fit", "--store", str(store), "--out", str(tmp_path / "m.json")])
    assert len(connects) == 1  # one connection for choosing the jobs and reading their rows (it had been two)
    assert "fit: 3 job(s) named 'phaseline-bench'; the store's 1 other job(s) left out" in bench.stderr
    assert "only inside the combined span read+map+collect" in bench.stderr
    assert "no phase row in the attempt's log" not in bench.stderr  # TeraGen's maps
    every = runner.invoke(main, ["fit", "--store", str(store), "--out", str(tmp_path / "m.json"), "--all-jobs"])
    assert "left out" not in every.stderr
    assert "no phase row in the attempt's log" in every.stderr
    named = runner.invoke(main, ["fit", "--store", str(store), "--out", str(tmp_path / "m.json"), "--job-name", "TeraGen"])
    assert "fit: 1 job(s) named 'TeraGen'; the store's 3 other job(s) left out" in named.stderr
    for args in (["--all-jobs", "--job-name", "x"], ["--from-csv", str(write_profile_csv(tmp_path / "p.csv")), "--all-jobs"]):
        res = runner.invoke(main, ["fit", "--out", str(tmp_path / "m.json"), *args])
        assert res.exit_code == 2, res.output


def test_run_plan_resumes_after_an_interruption(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The state file drives resumption: finished runs are skipped, failed and half-written ones redone.

    The engine is replaced by a recorder here (the real engine runs in test_platform_e2e.py).
    """
    from platform_model import bench_run
    from platform_model.engine import runner

    plan = make_plan(0.005, inputs_mb=(4.0,), selectivities=(1.0, 1.8), shuffle_maps=(20, 80))
    calls: list[str] = []
    fail_once = {plan.benchmarks[1].name}

    def fake_run_engine(job: runner.EngineJob, out: Path, *, timeout_s: float | None = None) -> object:
        name = Path(out).name
        calls.append(name)
        Path(out).mkdir(parents=True)
        if name in fail_once:
            fail_once.discard(name)
            raise runner.EngineError(f"job of {name} FAILED: simulated\nlog tail")
        (Path(out) / "run.json").write_text("{}")

        class Run:
            job_id = f"job_{name}"
            wall_ms = 5

        return Run()

    monkeypatch.setattr(runner, "run_engine", fake_run_engine)
    first = bench_run.run_plan(plan, tmp_path / "runs")
    assert [r.status for r in first] == ["done", "failed", "done", "done"]
    assert first[1].error == f"job of {plan.benchmarks[1].name} FAILED: simulated"
    state = json.loads((tmp_path / "runs" / bench_run.STATE_FILE).read_text())
    assert state["runs"][plan.benchmarks[1].name]["status"] == "failed"
    # an interruption left a half-written run directory (no run.json) for the last benchmark
    (tmp_path / "runs" / plan.benchmarks[3].name / "run.json").unlink()
    calls.clear()
    second = bench_run.run_plan(plan, tmp_path / "runs")
    assert calls == [plan.benchmarks[1].name, plan.benchmarks[3].name]
    assert [r.status for r in second] == ["skipped", "done", "skipped", "done"]
    # another plan in the same directory, under the same names (other settings, other maps): its runs
    # are made again; they had been skipped and taken for the new plan's
    other = dataclasses.replace(plan, io_sort_mb=plan.io_sort_mb + 1,
                                benchmarks=(dataclasses.replace(plan.benchmarks[0], maps=plan.benchmarks[0].maps + 1),
                                            *plan.benchmarks[1:]))  # fmt: skip
    calls.clear()
    third = bench_run.run_plan(other, tmp_path / "runs")
    assert [r.status for r in third] == ["done"] * 4
    assert calls == [b.name for b in plan.benchmarks]
    calls.clear()
    assert [r.status for r in bench_run.run_plan(other, tmp_path / "runs")] == ["skipped"] * 4
    assert calls == []



def test_show_gives_each_segment_its_own_range_and_eval_takes_any_case(tmp_path: Path) -> None:
    # show printed the whole phase's range on both segment rows (spill 53448-21391440 twice, where
    # the model holds 53448-4278186 and 7692534-21391440); eval --phase READ was "no submodel".
    rng = np.random.default_rng(1)
    lines = ["phase,data_bytes,dur_ms,run_id"]
    for i in range(120):
        mib = float(rng.choice([2, 4, 6, 8, 12, 20, 40, 70]))
        dur = (10 + 2 * mib if mib < 10 else 10 * mib - 70) * rng.normal(1.0, 0.01)  # a break at 10 MiB
        lines.append(f"shuffle,{int(mib * MIB)},{dur:.2f},run{i % 12}")
    (tmp_path / "p.csv").write_text("\n".join(lines) + "\n")
    model = tmp_path / "platform.json"
    runner = CliRunner()
    assert runner.invoke(main, ["fit", "--from-csv", str(tmp_path / "p.csv"), "--out", str(model)]).exit_code == 0
    res = runner.invoke(main, ["platform", "show", str(model), "--format", "json"])
    assert res.exit_code == 0, res.output
    low, high = json.loads(res.stdout)
    assert (low["segment"], high["segment"]) == (1, 2)
    assert low["data_max_bytes"] == 8 * MIB
    assert high["data_min_bytes"] == 12 * MIB
    assert low["data_max_bytes"] < low["break_bytes"] < high["data_min_bytes"]
    upper = runner.invoke(main, ["platform", "eval", str(model), "--phase", "SHUFFLE", "--bytes", "2M"])
    assert upper.exit_code == 0, upper.output
    assert upper.stdout == runner.invoke(main, ["platform", "eval", str(model), "--phase", "shuffle", "--bytes", "2M"]).stdout
