"""`phaseline predict` (and whatif, timeline) on the command line: its JSON and table contract, usage errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from predict import core
from tests.predict.doubles import _cli, toy_profile


def _cli_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> Any:
    """:func:`_cli` with ``--format json``, its output parsed."""
    return json.loads(_cli(tmp_path, monkeypatch, *args, "--format", "json"))


def test_cli_predict_json_contract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _cli_json(
        tmp_path,
        monkeypatch,
        "predict",
        "--input-bytes",
        "50G",
        "--reduces",
        "240",
        "--nodes",
        "64",
        "--map-slots-per-node",
        "2",
        "--reduce-slots-per-node",
        "2",
    )
    assert isinstance(rows, list)
    assert {r["model"] for r in rows} == set(core.models())
    for row in rows:
        assert {"model", "seconds", "low_s", "high_s"} <= set(row)
    bounds = next(r for r in rows if r["model"] == "bounds")
    assert bounds["low_s"] <= bounds["seconds"] <= bounds["high_s"]
    assert bounds["dataflow"]["maps"] == 800  # 50 GB in the profile's 64 MB splits
    herodotou = next(r for r in rows if r["model"] == "herodotou")
    assert herodotou["low_s"] is None
    assert herodotou["high_s"] is None


def test_cli_predict_table_and_one_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _cli(tmp_path, monkeypatch, "predict", "--model", "bounds", "--set", "io.sort.mb=200")
    assert "bounds" in out
    assert "herodotou" not in out
    assert "every model:" not in out  # one model: its notes under its name


def test_cli_predict_models_comma_separated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # `--model bounds,herodotou` was refused ('bounds,herodotou' is no model); it means both
    rows = _cli_json(tmp_path, monkeypatch, "predict", "--model", "bounds,herodotou")
    assert [r["model"] for r in rows] == ["bounds", "herodotou"]


def test_cli_predict_table_states_each_assumption_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = _cli(tmp_path, monkeypatch, "predict", "--input-bytes", "50G", "--reduces", "240")
    below = out.split("└", 1)[1].splitlines()[1:]  # the lines under the table
    # first what the times span: the profile's makespans, not `phaseline jobs`' submit-to-finish
    assert (
        below[0] == "  seconds: first task start to last task finish (ARIA's completion time; "
        "`phaseline jobs` counts from submission)"
    )
    # then, in one line, which evidence the profile's per-task costs came from (issue 37)
    assert below[1].startswith("  profile: per-task map cost ")
    # then what the bounds' and the simulation's intervals hold, without --calibration
    assert below[2].startswith("  intervals: low_s-high_s hold the profiled runs' spread")
    below = below[3:]
    notes = [line.strip().split(": ", 1) for line in below if line.startswith("  ") and ": " in line]
    assert len(notes) == len({note for _, note in notes})
    assert any(models == "every model" for models, _ in notes)  # the shared task estimates' notes
    named = {m for models, _ in notes if models != "every model" for m in models.split(", ")}
    assert named <= set(core.models())


def test_cli_whatif(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    figures = _cli_json(tmp_path, monkeypatch, "whatif", "--set", "io.sort.mb=256", "--set", "4 more nodes")
    rows = {r["figure"]: r for r in figures}
    assert rows["spills"]["io.sort.mb=256"] < rows["spills"]["baseline"]
    assert rows["seconds"]["nodes=+4"] < rows["seconds"]["baseline"]
    assert "all edits" in rows["seconds"]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "bogus"], "no model 'bogus'; the models: all, "),
        (["--model", "bounds,bogus"], "no model 'bogus'"),
        (["--input-bytes", "0"], "must be more than 0 bytes"),
        (["--split-bytes", "0"], "must be more than 0 bytes"),
    ],
)
def test_cli_predict_bad_option_values_are_usage_errors(tmp_path: Path, args: list[str], says: str) -> None:
    # exit status 2 with the command's usage, as the README says of a wrong option (it was 1, no usage)
    from phaseline.cli import main

    profile = tmp_path / "profile.json"
    toy_profile().save(profile)
    platform = tmp_path / "platform.json"
    platform.write_text("{}")
    result = CliRunner().invoke(
        main, ["predict", "--profile", str(profile), "--platform", str(platform), *args]
    )
    assert result.exit_code == 2, result.output
    assert says in result.output
    assert "Usage: " in result.output


def test_cli_timeline_to_an_unknown_file_type_is_a_usage_error(tmp_path: Path) -> None:
    from phaseline.cli import main

    result = CliRunner().invoke(
        main, ["timeline", "job_1_0001", "--out", str(tmp_path / "t.pdf"), "--store", str(tmp_path)]
    )
    assert result.exit_code == 2, result.output
    assert "write FILE.png, FILE.svg or FILE.json (Chrome trace), not 't.pdf'" in result.output


def test_cli_predict_refuses_records_that_are_no_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from phaseline.cli import main

    profile = tmp_path / "profile.json"
    toy_profile().save(profile)
    (tmp_path / "platform.json").write_text("{}")
    for records in ("inf", "nan"):  # inf had raised OverflowError; nan had predicted 0 s
        res = CliRunner().invoke(
            main, ["predict", "--profile", str(profile), "--platform", str(tmp_path / "platform.json"),
                   "--input-records", records],
        )  # fmt: skip
        assert res.exit_code == 2
        assert "is not a finite number" in res.output
