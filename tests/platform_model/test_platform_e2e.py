"""End to end on the real local engine: a scaled benchmark plan -> runs -> store -> platform model -> Table 1.

Slow (real Hadoop LocalJobRunner JVMs): five small benchmarks, a couple of
minutes on a 2-core machine.  Each runs after a warm-up job in its JVM; the
benchmark job times its own read, collect and write, so all six phases get data
from every task (read/collect/write split out of the combined log spans by those
timers, without a JFR recording).  The within-15 % shares it measures are
printed (run with ``-s``) and written to ``platform-e2e-table1.json`` under the
test's temporary directory; the issue's target (>= 85 % per phase with enough
data) is measured by ``benchmarks/bench_platform_accuracy.py`` on a larger plan.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from phaseline.cli import main
from platform_model.accuracy import accuracy_report, render_markdown
from platform_model.bench import make_plan
from platform_model.bench_plan import BenchKind, BenchPlan
from platform_model.bench_run import run_plan
from platform_model.model import PlatformModel, fit_platform
from platform_model.profile import GENERIC, profile_from_store

pytestmark = pytest.mark.slow


#: The paper's plan at 1/200 scale, thinned: two grid benchmarks and a three-point shuffle
#: range.  With 1 MiB of reduce memory each 0.32 MiB map output is shuffled straight to disk
#: (above the 0.25 x 0.7 MiB single-shuffle limit), so the break computed from the
#: configuration is 10 files x 0.32 MiB = 3.2 MiB per reduce task, inside the 1.3-3.8 MiB range.
PLAN_ARGS = ["--scale", "0.005", "--inputs-mb", "4,64", "--selectivities", "1.0", "--grid-maps", "4",
             "--grid-reduces", "2", "--shuffle-maps", "4,8,12", "--reduce-memory-mb", "1"]
#: The plan that runs: the paper's data / 500, task counts / 10, so data per task / 50 (grid
#: M_inp 1.28 and 10.24 MiB; the shuffle range 4, 8, 12 maps of 1.28 MiB, 6.4 MiB of map output
#: each).  The two grid sizes give read and collect a second data size (while JFR samples split
#: them, the grid's maps had to run long enough to be sampled: at 2.56 MiB a map got about 5 JFR
#: samples on two busy cores, and on 2026-11-27 neither was split in one CI run).  With 1 MiB of
#: reduce memory each 1.28 MiB map output per reduce task lands on disk,
#: so the break computed from the configuration is 10 x 1.28 MiB, inside the 5.1-15.4 MiB range.
RUN_PLAN = {"scale": 0.002, "task_scale": 0.1, "inputs_mb": (64.0, 512.0), "selectivities": (1.0,), "grid_maps": 2,
            "grid_reduces": 2, "shuffle_maps": (40, 80, 120), "warmup_mb": 4.0}


def test_scaled_plan_on_the_local_engine(tmp_path: Path) -> None:
    runner = CliRunner()
    plan_path, out, store = tmp_path / "plan.json", tmp_path / "runs", tmp_path / "store"
    res = runner.invoke(main, ["bench", "plan", *PLAN_ARGS, "--out", str(plan_path)])
    assert res.exit_code == 0, res.output
    plan = BenchPlan.load(plan_path)
    assert plan == make_plan(0.005, inputs_mb=(4.0, 64.0), selectivities=(1.0,), grid_maps=4, grid_reduces=2,
                             shuffle_maps=(4, 8, 12), reduce_memory_mb=1)
    assert [b.kind for b in plan.benchmarks].count(BenchKind.SHUFFLE) == 3
    assert not plan.jfr  # the job's own timers split its spans: no JFR unless asked for (--jfr)
    plan = make_plan(RUN_PLAN.pop("scale"), **RUN_PLAN)  # type: ignore[arg-type]
    assert [b.maps for b in plan.benchmarks if b.kind is BenchKind.SHUFFLE] == [4, 8, 12]
    plan.save(plan_path)
    res = runner.invoke(main, ["bench", "run", "--engine", "local-hadoop", "--plan", str(plan_path),
                               "--out", str(out), "--store", str(store)])
    assert res.exit_code == 0, res.output
    assert f"{len(plan.benchmarks)}/{len(plan.benchmarks)} benchmarks finished" in res.output
    # resumable: a second run skips what is finished (and re-ingests nothing new)
    again = run_plan(plan, out, store=store)
    assert [r.status for r in again] == ["skipped"] * len(plan.benchmarks)
    results = again

    profile = profile_from_store(store)
    assert set(profile.frame["run_id"]) == {r.job_id for r in results}
    res = runner.invoke(main, ["fit", "--store", str(store), "--out", str(tmp_path / "cli-platform.json"),
                               "--report", "--plot", str(tmp_path / "plots")])
    assert res.exit_code == 0, res.output
    for phase in GENERIC:
        assert f"| {phase} |" in res.output
    assert (tmp_path / "plots" / "platform-shuffle.png").stat().st_size > 1000
    model = fit_platform(profile)
    # The logs cut spill, merge and shuffle(+sort); the job's timers split read/collect out of
    # read+map+collect and write out of reduce+write, in every task however short.
    assert set(model.phases) == set(GENERIC)
    for phase in ("read", "collect", "write"):
        assert profile.runs_missing(phase) == ()
    assert model.hadoop_settings["mapreduce.reduce.memory.totalbytes"] == str(1 << 20)
    assert model.shuffle_thresholds is not None
    mib = float(1 << 20)
    assert model.shuffle_thresholds.break_for_map_output(1.28 * mib) == pytest.approx(12.8 * mib, rel=0.01)
    for sub in model.phases.values():
        assert all(s.converged for s in sub.segments)
        assert sub.runs == len(plan.benchmarks)

    path = model.save(tmp_path / "platform.json")
    loaded = PlatformModel.load(path)
    mid = 0.5 * (loaded.phases["shuffle"].data_min_bytes + loaded.phases["shuffle"].data_max_bytes)
    assert loaded.duration_ms("shuffle", mid) > 0

    report = accuracy_report(model, profile, folds=5)
    assert report.folds == 5
    for row in report.in_sample:
        assert row.n > 0
        assert 0.0 <= row.within[0] <= row.within[1] <= row.within[2] <= 1.0
    assert {r.phase for r in report.held_out} == set(model.phases)
    table = render_markdown(report, model)
    print("\n" + table)
    (tmp_path / "platform-e2e-table1.json").write_text(json.dumps(report.to_json(), indent=1))
