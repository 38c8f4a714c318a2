"""Benchmark plans for measuring on the local engine: task_scale, JFR and warm-up in the plan."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from phaseline.cli import main
from phaseline.errors import PlatformModelError
from platform_model.bench import DEFAULT_WARMUP_MB, PAPER_INPUTS_MB, PAPER_SHUFFLE_MAPS, make_plan
from platform_model.bench_plan import BenchKind, BenchPlan

MIB = float(1 << 20)


def test_task_scale_moves_the_shrinking_from_the_data_per_task_to_the_task_counts() -> None:
    plain = make_plan(0.0125)
    split = make_plan(0.0125, task_scale=0.1)
    grid = [b for b in split.benchmarks if b.kind is BenchKind.GRID]
    shuffle = [b for b in split.benchmarks if b.kind is BenchKind.SHUFFLE]
    # data per task: scale / task_scale = 1/8 of the paper's (0.25..8 MiB instead of 0.025..0.8)
    assert sorted({b.input_mb_per_map for b in grid}) == pytest.approx([v / 8 for v in PAPER_INPUTS_MB])
    assert max(b.input_mb_per_map for b in plain.benchmarks) == pytest.approx(0.8)
    assert split.io_sort_mb == round(100 / 8)
    # task counts: 40 x 0.1 in the grid; the shuffle range's N_map 20..160 x 0.1
    assert {(b.maps, b.reduces) for b in grid} == {(4, 4)}
    assert [b.maps for b in shuffle] == [round(n * 0.1) for n in PAPER_SHUFFLE_MAPS]
    assert {b.input_mb_per_map for b in shuffle} == {8.0}
    # the total data (and so the reduce memory) shrinks by the same scale either way
    assert split.reduce_memory_mb == plain.reduce_memory_mb == round(700 * 0.0125)
    # the break computed from the configuration lies inside the shuffle range: each 8 MiB map
    # output per reduce task exceeds the single-shuffle limit and lands on disk, so the extra
    # merge pass starts after sort_factor = 10 of them
    lo, hi = split.shuffle_range_bytes()
    brk = split.thresholds().break_for_map_output(8 * MIB)
    assert brk == pytest.approx(10 * 8 * MIB)
    assert lo < brk < hi
    # the per-map share of the sort buffer (spills per map task) is the paper's
    paper = make_plan(1.0)
    ratio = [b.input_mb_per_map * b.selectivity / split.io_sort_mb for b in split.benchmarks]
    paper_ratio = [b.input_mb_per_map * b.selectivity / paper.io_sort_mb for b in paper.benchmarks]
    assert ratio[: len(grid)] == pytest.approx(paper_ratio[: len(grid)], rel=0.05)


def test_shuffle_points_thin_the_scaled_range() -> None:
    plan = make_plan(0.0125, task_scale=0.1, shuffle_points=4)
    assert [b.maps for b in plan.benchmarks if b.kind is BenchKind.SHUFFLE] == [2, 7, 11, 16]


def test_plans_run_locally_with_a_warm_up_and_without_jfr_by_default(tmp_path: Path) -> None:
    # The benchmark job times its own read, collect and write: no JFR recording is needed to split them,
    # and on two cores the sampler's own cost lands in the runs it measures; `--jfr` asks for one.
    plan = make_plan(0.0125, task_scale=0.1)
    assert not plan.jfr
    assert plan.warmup_mb == DEFAULT_WARMUP_MB
    loaded = BenchPlan.load(plan.save(tmp_path / "plan.json"))
    assert loaded == plan
    doc = json.loads((tmp_path / "plan.json").read_text())
    assert (doc["jfr"], doc["warmup_mb"], doc["task_scale"]) == (False, DEFAULT_WARMUP_MB, 0.1)
    recorded = make_plan(0.01, jfr=True, warmup_mb=0)
    assert BenchPlan.load(recorded.save(tmp_path / "jfr.json")) == recorded
    runner = CliRunner()
    for flags, jfr in (([], False), (["--jfr"], True), (["--no-jfr"], False)):
        res = runner.invoke(main, ["bench", "plan", "--scale", "0.01", *flags, "--out", str(tmp_path / "c.json")])
        assert res.exit_code == 0, res.output
        assert BenchPlan.load(tmp_path / "c.json").jfr is jfr


def test_a_plan_written_before_these_fields_loads_without_them(tmp_path: Path) -> None:
    doc = make_plan(0.01).to_json()
    for key in ("jfr", "warmup_mb", "task_scale"):
        del doc[key]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    old = BenchPlan.load(path)
    assert (old.jfr, old.warmup_mb, old.task_scale) == (False, 0.0, None)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"task_scale": 0.0}, "task_scale must be in (0, 1]"), ({"task_scale": 1.5}, "task_scale must be in (0, 1]"),
     ({"warmup_mb": -1.0}, "warmup_mb must be >= 0")],
)
def test_bad_plan_options_are_refused(kwargs: dict[str, float], message: str) -> None:
    with pytest.raises(PlatformModelError, match=message.replace("(", r"\(").replace("]", r"\]")):
        make_plan(0.01, **kwargs)  # type: ignore[arg-type]


def test_a_task_scale_that_cannot_cross_the_break_is_refused() -> None:
    # N_map 20..160 x 0.05 = 1..8 map outputs per reduce task never reach sort_factor = 10
    with pytest.raises(PlatformModelError, match="lies outside its shuffle range"):
        make_plan(0.0125, task_scale=0.05)


def test_a_loaded_plan_gets_the_same_checks_as_a_made_one(tmp_path: Path) -> None:
    """A benchmark's bounds live in one place (Benchmark): make_plan, the CLI and a loaded plan share them."""
    with pytest.raises(PlatformModelError, match=r"benchmark grid-inp\S+-sel-1: .*M_sel -1, .*need 0 < M_inp"):
        make_plan(0.01, selectivities=(-1.0,))
    doc = make_plan(0.01).to_json()
    path = tmp_path / "plan.json"
    for key, value, message in (("selectivity", -0.5, "M_sel -0.5"), ("maps", 0, "N_map 0"),
                                ("input_mb_per_map", float("nan"), "M_inp nan MB")):  # fmt: skip
        bad = json.loads(json.dumps(doc))
        bad["benchmarks"][3][key] = value
        path.write_text(json.dumps(bad))
        with pytest.raises(PlatformModelError) as info:
            BenchPlan.load(path)
        text = str(info.value)
        assert text.startswith(f"{path}: benchmark {doc['benchmarks'][3]['name']}: "), text
        assert message in text
        assert "need 0 < M_inp" in text
    twice = json.loads(json.dumps(doc))
    twice["benchmarks"][1]["name"] = twice["benchmarks"][0]["name"]
    path.write_text(json.dumps(twice))
    with pytest.raises(PlatformModelError, match="benchmark names must be unique"):
        BenchPlan.load(path)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"hadoop_conf": []}, "hadoop_conf must be an object of settings, got []"),  # had raised AttributeError
        ({"hadoop_conf": {"mapreduce.task.io.sort.factor": "abc"}}, "hadoop_conf: a shuffle setting"),
        ({"reduce_memory_mb": -44}, "reduce_memory_mb must be at least 1, got -44"),  # a break of -203 MiB
        ({"io_sort_mb": 0}, "io_sort_mb must be at least 1, got 0"),
        ({"sort_factor": 1}, "sort_factor must be at least 2, got 1"),
        ({"scale": float("nan")}, "scale must be a positive number, got nan"),
        ({"io_sort_mb": 6.5}, "io_sort_mb must be a whole number, got 6.5"),
        ({"maps": 2.7}, "maps must be a whole number, got 2.7"),  # had become 2 maps
        ({"benchmarks": []}, "the plan holds no benchmarks"),  # bench run had 'ingested' into no store
    ],
)
def test_a_loaded_plans_settings_are_checked(tmp_path: Path, change: dict[str, object], message: str) -> None:
    """A plan file edited by hand: the values `bench run` would hand to Hadoop are refused by name."""
    doc = make_plan(0.01).to_json()
    for key, value in change.items():
        if key == "maps":
            doc["benchmarks"][0][key] = value
        else:
            doc[key] = value
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(PlatformModelError) as info:
        BenchPlan.load(path)
    assert str(info.value).startswith(f"{path}: "), info.value
    assert message in str(info.value)


def test_the_plans_break_is_its_shuffle_ranges(tmp_path: Path) -> None:
    """With --task-scale each shuffle benchmark's map output passes the single-shuffle limit, so the break
    is sort_factor of them (160 MiB here): what make_plan checks, and now what the CLI and the script
    print (they had printed the configuration's 203.3 MiB)."""
    from click.testing import CliRunner

    from phaseline.cli import main

    plan = make_plan(0.0625, task_scale=0.25)
    assert plan.shuffle_break_bytes() == pytest.approx(160 * MIB)
    assert plan.thresholds().break_bytes == pytest.approx(203.3 * MIB, abs=0.05 * MIB)
    res = CliRunner().invoke(main, ["bench", "plan", "--scale", "0.0625", "--task-scale", "0.25", "--out", str(tmp_path / "p.json")])
    assert "break from the config 160.0 MiB" in res.output
    res = CliRunner().invoke(main, ["bench", "script", "--plan", str(tmp_path / "p.json"), "--out", str(tmp_path / "s.sh")])
    assert res.exit_code == 0, res.output
    assert "shuffle break from the config: 160.0 MiB per reduce task" in (tmp_path / "s.sh").read_text()
    # a selectivity past its bound is named as such, not as the name it would give its benchmark
    with pytest.raises(PlatformModelError, match=r"M_sel 1e\+09, .*0 <= M_sel <= 1,000"):
        make_plan(0.01, selectivities=(1e9,))


def test_a_state_file_entry_that_is_no_run_is_refused(tmp_path: Path) -> None:
    from platform_model.bench_run import STATE_FILE, _load_state

    (tmp_path / STATE_FILE).write_text(json.dumps({"runs": {"grid-a": "done"}}))
    with pytest.raises(PlatformModelError, match="run 'grid-a' is no record of a run; delete the file"):
        _load_state(tmp_path / STATE_FILE)  # had raised AttributeError out of bench run

