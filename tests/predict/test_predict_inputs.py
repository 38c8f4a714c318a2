"""`phaseline predict`'s inputs: one run's profile given twice, and a split count beside a split size."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from phaseline.cli import main
from phaseline.errors import ProfileError
from predict.core import Dataset, JobSettings
from predict.tasks import resolve_input
from profiles.merge_runs import merge_profiles
from profiles.profile import ProfileSource
from tests.predict.doubles import MB, toy_files, toy_profile

PROPORTIONAL = "splits of the profiled run's average size"


def _predict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str, profiles: int = 1) -> Result:
    profile, platform = toy_files(tmp_path, monkeypatch)
    given = [a for _ in range(profiles) for a in ("--profile", str(profile))]
    return CliRunner().invoke(main, ["predict", *given, "--platform", str(platform), *args])


def test_merging_a_run_twice_is_refused() -> None:
    # `--profile A --profile A` had merged A with itself: one run counted as two (its makespans twice,
    # its counters doubled), the interval narrowed as if by a second run
    one = toy_profile()
    other = toy_profile(source=replace(one.source, job_ids=("job_1_0002",)))
    with pytest.raises(
        ProfileError, match=r"run job_1_0001 is in profiles 1 and 2; merged, it would count twice"
    ):
        merge_profiles([one, one])
    both = merge_profiles([one, other])
    with pytest.raises(
        ProfileError, match=r"run job_1_0002 is in profiles 1 and 2"
    ):  # a merged one's run too
        merge_profiles([both, other])
    assert both.source.job_ids == ("job_1_0001", "job_1_0002")
    assert both.runs == 2


def test_predict_refuses_one_profile_given_twice_or_copied(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    res = _predict(tmp_path, monkeypatch, profiles=2)
    assert res.exit_code == 1
    assert (
        f"{tmp_path / 'profile.json'}: run job_1_0001 is given twice; merged, it would count twice"
        in res.stderr
    )
    shutil.copy(tmp_path / "profile.json", tmp_path / "copy.json")
    res = _predict(tmp_path, monkeypatch, "--profile", str(tmp_path / "copy.json"))
    assert res.exit_code == 1
    assert f"{tmp_path / 'copy.json'}: run job_1_0001 is in {tmp_path / 'profile.json'} too" in res.stderr
    # another run's profile merges
    toy_profile(
        source=ProfileSource(job_ids=("job_1_0002",), job_name="wordcount", config={"io.sort.mb": "100"})
    ).save(tmp_path / "other.json")
    res = _predict(tmp_path, monkeypatch, "--profile", str(tmp_path / "other.json"), "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)


@pytest.mark.parametrize(
    "args",
    [
        ["--splits", "10", "--set", "split_bytes=1M"],
        ["--splits", "10", "--set", "dfs.blocksize=256M"],
        ["--splits", "10", "--set", "mapreduce.input.fileinputformat.split.maxsize=32M"],
        ["--split-bytes", "32M", "--set", "splits=10"],
        ["--set", "splits=10", "--set", "split-bytes=32M"],
    ],
)
def test_a_split_count_and_a_split_size_given_by_set_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    # --splits 10 --set split_bytes=1M predicted 10 splits and ignored the size (--split-bytes was refused)
    res = _predict(tmp_path, monkeypatch, "--input-bytes", "2G", *args)
    assert res.exit_code == 2, res.output
    assert "give the split count (--splits, or --set splits=N) or the split size" in res.output
    assert "not both" in res.output


def test_a_split_size_after_a_new_input_size_is_no_conflict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a new input size drops the split count, so the split size set after it cuts the input
    args = ("--splits", "10", "--set", "input_bytes=2G", "--set", "split_bytes=256M", "--format", "json")
    res = _predict(tmp_path, monkeypatch, *args)
    assert res.exit_code == 0, res.output
    assert {r["dataflow"]["maps"] for r in json.loads(res.stdout) if r.get("dataflow")} == {8}
    res = _predict(tmp_path, monkeypatch, "--splits", "10", "--set", "io.sort.mb=200", "--format", "json")
    assert res.exit_code == 0, res.output


def test_the_proportional_split_note_only_without_a_split_count() -> None:
    # "splits of the profiled run's average size: their count grows with the input" was said of 7
    # splits given by --splits, whose count does not grow
    profile = toy_profile()
    settings = JobSettings.from_config(profile.source.config, reduces=4)
    given = resolve_input(profile, Dataset(40 * 64 * MB, splits=7), settings)
    assert given.splits == 7
    assert not any(PROPORTIONAL in note for note in given.assumptions)
    derived = resolve_input(profile, Dataset(40 * 64 * MB), settings)
    assert derived.splits == 40
    assert any(PROPORTIONAL in note for note in derived.assumptions)


def test_every_json_row_has_the_same_keys_when_a_model_cannot_predict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A model that could not predict (a million maps is past the critical path's task graph) had
    # given a row of five keys, the others eight and no `error`: scripts reading rows alike broke.
    result = _predict(tmp_path, monkeypatch, "--splits", "1000000", "--format", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert len({tuple(sorted(r)) for r in rows}) == 1
    failed = [r for r in rows if r["error"] is not None]
    assert failed
    assert all(r["seconds"] is None and r["stages"] == {} and r["assumptions"] == [] for r in failed)
    assert any(r["error"] is None and r["seconds"] is not None for r in rows)


def test_calibration_widens_every_model_by_its_backtested_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a backtest in which herodotou was 10-28 % slow on 19 cases, and the bounds 5 % past their upper end
    rows = [{"model": "herodotou", "predicted_s": 1.0 + i / 100, "measured_s": 0.9} for i in range(1, 20)]
    rows += [{"model": "bounds", "predicted_s": 1.0, "low_s": 0.8, "high_s": 1.2, "measured_s": 1.26}] * 10
    bt = tmp_path / "bt.json"
    bt.write_text(json.dumps(rows))
    plain = {r["model"]: r for r in json.loads(_predict(tmp_path, monkeypatch, "--format", "json").stdout)}
    result = _predict(tmp_path, monkeypatch, "--calibration", str(bt), "--format", "json")
    assert result.exit_code == 0, result.output
    got = {r["model"]: r for r in json.loads(result.stdout)}
    hero, bounds = got["herodotou"], got["bounds"]
    q = max(abs(math.log((1.0 + i / 100) / 0.9)) for i in range(1, 19))  # rank 18 of 19
    assert hero["calibrated_low_s"] == pytest.approx(hero["seconds"] * math.exp(-q))
    assert hero["calibrated_high_s"] == pytest.approx(hero["seconds"] * math.exp(q))
    assert bounds["calibrated_low_s"] == pytest.approx(bounds["low_s"] / 1.05)
    assert bounds["calibrated_high_s"] == pytest.approx(bounds["high_s"] * 1.05)
    assert got["vianna"]["calibrated_low_s"] is None  # not in the backtest: no promise
    assert got["vianna"]["calibrated_promise"] is None
    assert hero["calibrated_promise"] == 0.9  # rows without a job: 19 applications of one case each
    assert got["vianna"]["backtest_cases"] is None
    assert hero["backtest_cases"] == 19
    errors = sorted((1.0 + i / 100) / 0.9 - 1 for i in range(1, 20))
    assert hero["backtest_median_error"] == pytest.approx(errors[9])
    assert hero["backtest_worst_error"] == pytest.approx(errors[-1])
    assert bounds["backtest_median_error"] == bounds["backtest_worst_error"] == pytest.approx(1 - 1.0 / 1.26)
    assert {m: r["seconds"] for m, r in got.items()} == {m: r["seconds"] for m, r in plain.items()}
    table = _predict(tmp_path, monkeypatch, "--calibration", str(bt))
    assert "calibrated_low_s" in table.output
    assert f"{errors[9]:.1%} (worst {errors[-1]:.1%}), 19 cases" in table.output
    assert "not in the backtest" in table.output
    assert "intervals: low_s-high_s hold the profiled runs' spread" not in table.output
    assert "intervals: low_s-high_s hold the profiled runs' spread" in _predict(tmp_path, monkeypatch).output
    assert "calibrated: 90% intervals widened by each model's errors on 29 backtest rows of bt.json" in table.output


def test_a_calibration_that_is_no_backtest_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bt = tmp_path / "notes.json"
    bt.write_text('{"summary": []}')
    result = _predict(tmp_path, monkeypatch, "--calibration", str(bt))
    assert result.exit_code != 0
    assert "notes.json: no backtest rows" in result.output


def test_splits_larger_than_a_one_size_profile_saw_are_said() -> None:
    """A map's cost at a larger split is the platform's per-byte cost when the profile has one size
    (BACKTEST.md, 'splits that grow': over-predicted on YARN); a fit over two sizes knows it."""
    said = "from a profile of one input size"
    grown = resolve_input(toy_profile(), Dataset(20 * 256 * MB, splits=20), JobSettings(reduces=4))
    note = next(a for a in grown.assumptions if said in a)
    assert note.startswith(f"splits of {256 * MB:,} B, 4x the profiled average")
    more = resolve_input(toy_profile(), Dataset(80 * 64 * MB), JobSettings(reduces=4))  # more splits, same size
    assert not any(said in a for a in more.assumptions)
    fitted = resolve_input(toy_profile(map_cost_sizes=2), Dataset(20 * 256 * MB, splits=20), JobSettings(reduces=4))
    assert not any(said in a for a in fitted.assumptions)
