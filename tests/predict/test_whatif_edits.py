"""What-if edits read as written: an arrow's OLD is checked, JVM options are values, every edit
keeps its own column, records are counted, and the bounds model's interval is shown."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from phaseline.errors import PredictionError
from predict.core import Cluster, Dataset, JobSettings
from predict.edits import Edit, Scenario, apply_edits, parse_edit
from predict.whatif import WhatIfRow, whatif, whatif_table
from profiles.profile import JobProfile
from tests.predict.doubles import GB, LinearPlatform, _cli, toy_profile


def _profile(**config: str) -> JobProfile:
    profile = toy_profile()
    return replace(profile, source=replace(profile.source, config={**profile.source.config, **config}))


def _base(profile: JobProfile | None = None) -> Scenario:
    return Scenario.for_profile(profile or toy_profile(), Cluster(4, 2, 2))  # 4 reduces, 1.25G, 20 splits


# --- defect 3: KEY OLD -> NEW ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "baseline"),
    [
        ("reduces 20 -> 2", r"the baseline's reduces is 4, not 20"),  # `reduces 20 -> 2` had set 2
        ("io.sort.mb 200 -> 256", r"io.sort.mb \(io_sort_mb\) is 100, not 200"),
        ("nodes 3 -> 8", r"nodes is 4, not 3"),
        ("mapred.tasktracker.map.tasks.maximum 4 -> 8", r"maximum \(map_slots_per_node\) is 2, not 4"),
        ("input_bytes 1G -> 2G", r"input_bytes is 1342177280 \(1.2G\), not 1G"),
        ("input_bytes 1.4G -> 2G", r"input_bytes is 1342177280 \(1.2G\), not 1.4G"),
        ("splits 10 -> 40", r"splits is 20, not 10"),  # derived from the input: the job's own 20
        ("input_records 1 -> 2", r"input_records is 12800000, not 1"),
        ("compress_map_output true -> false", r"compress_map_output is false, not true"),
        ("mapred.child.java.opts -Xmx300m -> -Xmx1g", r"opts \(reduce_task_heap_mb\) is 200 MB, not -Xmx300m"),
        ("io.sort.mb lots -> 256", r"io_sort_mb\) is 100, not lots \(setting 'io.sort.mb': cannot read"),
    ],
)
def test_an_arrow_edit_whose_old_value_is_not_the_baseline_s_is_refused(text: str, baseline: str) -> None:
    profile = _profile(**{"mapred.child.java.opts": "-Xmx200m"})
    edit = parse_edit(text)
    with pytest.raises(PredictionError, match=baseline) as caught:
        apply_edits(_base(profile), [edit], profile)
    assert f"write {edit.key}={edit.value} to set it" in str(caught.value)
    with pytest.raises(PredictionError, match=baseline):
        whatif(profile, LinearPlatform(), _base(profile), [parse_edit("nodes=+1"), edit])


def test_an_arrow_edit_whose_old_value_is_the_baseline_s_applies() -> None:
    profile = _profile(**{"mapred.child.java.opts": "-Xmx200m"})
    base = _base(profile)
    s = apply_edits(
        base,
        [
            parse_edit("reduces 4 -> 2"),
            parse_edit("io.sort.mb 100.0000000001 -> 256"),  # float noise
            parse_edit("nodes 4 -> 8"),
            parse_edit("input_bytes 1.25G -> 2G"),
            parse_edit("splits 20 -> 40"),
            parse_edit("compress_map_output false -> true"),
            parse_edit("mapred.child.java.opts -Xmx200m -> -Xmx1g"),
        ],
        profile,
    )
    assert (s.settings.reduces, s.settings.io_sort_mb, s.cluster.nodes) == (2, 256.0, 8)
    assert (s.dataset.input_bytes, s.dataset.splits) == (2 * GB, 40)
    assert (s.settings.compress_map_output, s.settings.reduce_task_heap_mb) == (True, 1024.0)
    # a size is read to the digits it is written with, as the table rounds it (1280M shows as 1.2G)
    for old in ("1280M", "1.2G", "1.3G", "1.25G"):
        assert apply_edits(base, [parse_edit(f"input_bytes {old} -> 2G")], profile).dataset.input_bytes == 2 * GB
    # each OLD is the baseline's, not what the edits before it made
    edits = [parse_edit("reduces 4 -> 8"), parse_edit("reduces 4 -> 2")]
    rows = whatif(profile, LinearPlatform(), base, edits, model="bounds")
    assert rows[-1].prediction.dataflow["reduces"] == 2
    with pytest.raises(PredictionError, match="reduces is 4, not 8"):
        apply_edits(base, [parse_edit("reduces 4 -> 8"), parse_edit("reduces 8 -> 2")], profile)
    # a derived value with no profile to derive it from cannot be checked
    with pytest.raises(PredictionError, match="splits is derived from the input and no profile"):
        apply_edits(base, [parse_edit("splits 20 -> 40")])


# --- defect 4: input_records > 0 ---------------------------------------------------------------------


@pytest.mark.parametrize("records", [0.0, -1.0, float("nan"), float("inf")])
def test_a_dataset_s_records_must_be_a_finite_number_above_zero(records: float) -> None:
    with pytest.raises(PredictionError, match="input records must be a finite number > 0"):
        Dataset(GB, input_records=records)


def test_an_edit_to_no_input_records_is_refused() -> None:
    # `--set input_records=0` had predicted 2 MB of map output with 0 spills
    for text in ("input_records=0", "input_records=-12800000"):
        with pytest.raises(PredictionError, match=r"input records must be a finite number > 0, got 0\.0"):
            apply_edits(_base(), [parse_edit(text)], toy_profile())
    assert apply_edits(_base(), [parse_edit("input_records=10")]).dataset.input_records == 10


# --- defect 5: one column per edit -------------------------------------------------------------------


def test_an_edit_given_twice_keeps_a_column_of_its_own() -> None:
    profile = toy_profile()
    for edits in (["nodes=+1", "nodes=+1"], ["4 more nodes", "nodes=+4"]):
        rows = whatif(profile, LinearPlatform(), _base(), [parse_edit(e) for e in edits], model="bounds")
        label = parse_edit(edits[1]).label
        assert [r.label for r in rows] == ["baseline", label, f"{label} (2)", "all edits"]
        table = whatif_table(rows)
        assert all(list(row) == ["figure", "baseline", label, f"{label} (2)", "all edits"] for row in table)
        by = {row["figure"]: row for row in table}
        assert by["seconds"][label] == by["seconds"][f"{label} (2)"]
        nodes = by["relative edits"][label]
        assert by["relative edits"][f"{label} (2)"] == nodes != by["relative edits"]["all edits"]
    # rows built by hand with one label each keep their columns too
    row = WhatIfRow("nodes=+1", rows[0].prediction)
    assert list(whatif_table([row, row, row])[0]) == ["figure", "nodes=+1", "nodes=+1 (2)", "nodes=+1 (3)"]


def test_cli_whatif_gives_an_edit_given_twice_its_own_column(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = ("whatif", "--set", "nodes=+1", "--set", "nodes=+1", "--model", "bounds")
    columns = ["baseline", "nodes=+1", "nodes=+1 (2)", "all edits"]
    rows = json.loads(_cli(tmp_path, monkeypatch, *args, "--format", "json"))
    assert all(list(r) == ["figure", *columns] for r in rows)
    seconds = next(r for r in rows if r["figure"] == "seconds")
    assert seconds["nodes=+1"] == seconds["nodes=+1 (2)"] > seconds["all edits"]
    header = next(csv.reader(io.StringIO(_cli(tmp_path, monkeypatch, *args, "--format", "csv"))))
    assert header == ["figure", *columns]
    assert "nodes=+1 (2)" in _cli(tmp_path, monkeypatch, *args)


# --- defect 6: JVM options are values ----------------------------------------------------------------


def test_jvm_options_are_values_not_relative_edits() -> None:
    text = "mapreduce.reduce.java.opts=-XX:+UseG1GC -Xmx1m"  # had been "not understood"
    assert parse_edit(text) == Edit("mapreduce.reduce.java.opts", "-XX:+UseG1GC -Xmx1m")
    assert parse_edit(" mapred.child.java.opts = -server  -Xmx2g ") == Edit("mapred.child.java.opts", "-server  -Xmx2g")
    assert parse_edit("mapred.child.java.opts -Xmx200m -> -XX:+UseG1GC -Xmx1g") == Edit(
        "mapred.child.java.opts", "-XX:+UseG1GC -Xmx1g", old="-Xmx200m"
    )
    assert apply_edits(_base(), [parse_edit(text)]).settings.reduce_task_heap_mb == 1.0
    rows = whatif(toy_profile(), LinearPlatform(), _base(), [parse_edit("mapred.child.java.opts=-Xmx1m"),
                                                             parse_edit(text)], model="bounds")  # fmt: skip
    assert [r.resolved for r in rows] == ["", "", "", ""]  # had read "mapred.child.java.opts = 1"
    assert "relative edits" not in [row["figure"] for row in whatif_table(rows)]
    with pytest.raises(PredictionError, match="not understood"):
        parse_edit("io.sort.mb=100 -> 256")  # an arrow in a value is no value


def test_a_relative_edit_is_read_alike_where_applied_and_where_shown() -> None:
    # `+.1` had been read as 0.1 (its second character is no digit) but shown as relative
    rows = whatif(toy_profile(), LinearPlatform(), _base(), [parse_edit("slowstart=+.1")], model="bounds")
    assert rows[-1].resolved == "slowstart = 0.15"
    assert apply_edits(_base(), [parse_edit("slowstart=+.1")]).settings.slowstart == pytest.approx(0.15)
    # a setting with no number in the baseline has nothing to count from (had become 0.01 itself)
    assert JobSettings(reduces=1).sort_record_percent is None
    with pytest.raises(PredictionError, match=r"io\.sort\.record\.percent is unset, no number to count from"):
        apply_edits(_base(), [parse_edit("io.sort.record.percent=+0.01")])


# --- defect 8: the bounds model's interval -----------------------------------------------------------


def test_whatif_shows_the_job_s_interval_where_the_model_gives_one() -> None:
    rows = whatif(toy_profile(), LinearPlatform(), _base(), [parse_edit("4 more nodes")], model="bounds")
    table = whatif_table(rows)
    assert [row["figure"] for row in table[:3]] == ["seconds", "low_s", "high_s"]
    for r in rows:
        assert r.prediction.low_s is not None
        assert r.prediction.high_s is not None
        assert table[1][r.label] == round(r.prediction.low_s, 3)
        assert table[2][r.label] == round(r.prediction.high_s, 3)
        assert table[1][r.label] <= table[0][r.label] <= table[2][r.label]  # type: ignore[operator]
    assert "map.low_s" in [row["figure"] for row in table]  # the stages' rows stay
    herodotou = whatif(toy_profile(), LinearPlatform(), _base(), [parse_edit("4 more nodes")])
    assert herodotou[0].prediction.low_s is None
    assert not {"low_s", "high_s"} & {row["figure"] for row in whatif_table(herodotou)}


def test_cli_whatif_bounds_shows_the_interval(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _cli(tmp_path, monkeypatch, "whatif", "--set", "nodes=+1", "--model", "bounds", "--format", "json")
    by = {row["figure"]: row for row in json.loads(out)}
    assert by["low_s"]["baseline"] <= by["seconds"]["baseline"] <= by["high_s"]["baseline"]
    assert by["low_s"]["nodes=+1"] < by["high_s"]["nodes=+1"]
    assert "low_s" in _cli(tmp_path, monkeypatch, "whatif", "--set", "nodes=+1", "--model", "bounds")
