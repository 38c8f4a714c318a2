"""predict.backtest_engines: two engines' backtests scored over the cases both ran."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from phaseline.errors import PhaselineError
from predict.backtest import BacktestRow
from predict.backtest_engines import load_rows, side_by_side


def _row(app: str, scale: float, model: str, error: float, case: str = "c") -> BacktestRow:
    measured = 10.0
    return BacktestRow(
        job=f"phaseline app {app}", case=case, model=model, predicted_s=measured * (1 + error),
        measured_s=measured, error=error, low_s=None, high_s=None, runs=1, profile_job="p", scale=scale,
    )  # fmt: skip


def test_each_engine_is_scored_over_the_cases_both_ran_held_out_first() -> None:
    local = [
        _row("wordcount", 3.0, "bounds", 0.10, "slots=1"),
        _row("wordcount", 3.0, "bounds", -0.30, "slots=2"),  # a second local case, same app and scale
        _row("wordcount", 8.0, "bounds", 0.90),  # YARN did not run 8x: left out
        _row("join", 3.0, "bounds", 0.05),
    ]
    yarn = [_row("wordcount", 3.0, "bounds", 0.20), _row("join", 3.0, "bounds", -0.40)]
    got = side_by_side({"local-hadoop": local, "yarn": yarn})
    table = {(s.group, s.engine): s.summary for s in got}
    assert [s.group for s in got] == ["held-out"] * 2 + ["tuning"] * 2 + ["all"] * 2
    assert table["held-out", "local-hadoop"].worst_abs_error == pytest.approx(0.05)
    assert table["held-out", "yarn"].worst_abs_error == pytest.approx(0.40)
    assert table["tuning", "local-hadoop"].cases == 2
    assert table["tuning", "local-hadoop"].worst_abs_error == pytest.approx(0.30)  # not the 8x case's 0.90
    assert table["all", "yarn"].median_abs_error == pytest.approx(0.30)
    assert got[0].to_dict()["engine"] == "local-hadoop"


def test_no_common_case_or_one_engine_is_a_clear_error() -> None:
    with pytest.raises(PhaselineError, match="share no case"):
        side_by_side({"a": [_row("grep", 3.0, "bounds", 0.1)], "b": [_row("grep", 8.0, "bounds", 0.1)]})
    with pytest.raises(PhaselineError, match="two engines"):
        side_by_side({"a": [_row("grep", 3.0, "bounds", 0.1)]})


def test_rows_load_back_from_a_backtest_json_and_a_bad_file_is_named(tmp_path: Path) -> None:
    row = _row("sort", 3.0, "simulation", 0.12)
    good = tmp_path / "backtest.json"
    good.write_text(json.dumps({"rows": [row.to_dict()]}))
    assert load_rows(good) == [row]
    bad = tmp_path / "other.json"
    bad.write_text(json.dumps({"summary": []}))
    with pytest.raises(PhaselineError, match=r"other\.json: not a backtest\.json"):
        load_rows(bad)


def test_cli_side_by_side_reads_each_engines_file_and_names_a_bad_pair(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from phaseline.cli import main

    files = {}
    for engine, error in (("local-hadoop", 0.1), ("yarn", -0.3)):
        files[engine] = tmp_path / f"{engine}.json"
        files[engine].write_text(json.dumps({"rows": [_row("join", 3.0, "bounds", error).to_dict()]}))
    args = ["backtest", "--format", "json"]
    for engine, path in files.items():
        args += ["--side-by-side", f"{engine}={path}"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    got = json.loads(result.output)
    assert [(r["group"], r["engine"]) for r in got][:2] == [("held-out", "local-hadoop"), ("held-out", "yarn")]
    assert got[1]["worst_abs_error"] == pytest.approx(0.3)
    bad = CliRunner().invoke(main, ["backtest", "--side-by-side", str(files["yarn"])])
    assert bad.exit_code == 2
    assert "is not ENGINE=FILE" in bad.output
