"""What-if questions: edits parse, apply, and move time and dataflow the way Hadoop would."""

from __future__ import annotations

import pytest

from phaseline.errors import PredictionError
from predict.core import Cluster
from predict.edits import Edit, Scenario, apply_edits, parse_edit
from predict.whatif import format_figure, sweep, whatif, whatif_table
from tests.predict.doubles import GB, LinearPlatform, toy_profile

BASE = Scenario.for_profile(toy_profile(), Cluster(16, 2, 2), input_bytes=50 * GB, reduces=20)


@pytest.mark.parametrize(
    ("text", "edit"),
    [
        ("io.sort.mb=256", Edit("io.sort.mb", "256")),
        ("io.sort.mb 100 -> 256", Edit("io.sort.mb", "256", old="100")),
        ("reduces 20 -> 240", Edit("reduces", "240", old="20")),
        ("compress map output", Edit("compress_map_output", "true")),
        ("4 more nodes", Edit("nodes", "+4")),
        ("2 fewer nodes", Edit("nodes", "-2")),
        ("input-bytes=1T", Edit("input-bytes", "1T")),
        ("map-slots-per-node=4", Edit("map-slots-per-node", "4")),
    ],
)
def test_parse_edit(text: str, edit: Edit) -> None:
    assert parse_edit(text) == edit


def test_parse_edit_rejects_prose() -> None:
    with pytest.raises(PredictionError, match="not understood"):
        parse_edit("make it faster")


def test_apply_edits_to_cluster_dataset_and_settings() -> None:
    s = apply_edits(
        BASE,
        [
            parse_edit("4 more nodes"),
            parse_edit("reduces 20 -> 240"),
            parse_edit("io.sort.mb=256"),
            parse_edit("compress map output"),
            parse_edit("input_bytes=100G"),
            parse_edit("map_slots_per_node=3"),
            parse_edit("mapreduce.task.io.sort.factor=+5"),
        ],
    )
    assert (s.cluster.nodes, s.cluster.map_slots_per_node) == (20, 3)
    assert (s.settings.reduces, s.settings.io_sort_mb, s.settings.compress_map_output) == (240, 256.0, True)
    assert s.settings.sort_factor == 15
    assert s.dataset.input_bytes == 100 * GB
    assert s.dataset.input_records is None
    assert BASE.cluster.nodes == 16  # the base scenario is untouched
    # relative edits keep fractions (slowstart 0.05 + 0.1), absolute ones too; non-finite values are refused
    s = apply_edits(BASE, [parse_edit("mapreduce.job.reduce.slowstart.completedmaps=+0.1"),
                           parse_edit("io.sort.spill.percent=0.9")])
    assert (s.settings.slowstart, s.settings.sort_spill_percent) == pytest.approx((0.15, 0.9))
    for bad in ("nan", "inf", "+inf"):
        with pytest.raises(PredictionError, match=r"finite|not a number"):
            apply_edits(BASE, [Edit("io.sort.mb", bad)])
    with pytest.raises(PredictionError, match="unknown setting"):
        apply_edits(BASE, [Edit("io.sort.megabytes", "3")])
    with pytest.raises(PredictionError, match="not a number"):
        apply_edits(BASE, [Edit("nodes", "+many")])


def test_a_relative_edit_of_derived_splits_or_records_counts_from_the_job_s_own() -> None:
    # The input's splits and records are derived (None in the scenario): splits=+2 had counted from
    # 0, so the toy's 20 maps became 2; now 22.  Without the profile there is nothing to count from.
    profile = toy_profile()
    base = Scenario.for_profile(profile, Cluster(4, 2, 2))
    assert base.dataset.splits is None
    s = apply_edits(base, [parse_edit("splits=+2")], profile)
    assert s.dataset.splits == 22
    s = apply_edits(base, [parse_edit("input_records=+2")], profile)
    assert s.dataset.input_records == pytest.approx(profile.input.total_records + 2)
    with pytest.raises(PredictionError, match="splits is derived from the input; give it as a number"):
        apply_edits(base, [parse_edit("splits=+2")])
    assert apply_edits(base, [parse_edit("splits=7")]).dataset.splits == 7  # an absolute one needs nothing
    rows = whatif(profile, LinearPlatform(), base, [parse_edit("splits=+2")])
    assert rows[-1].resolved == "splits = 22"


def test_whatif_shows_dataflow_beside_time() -> None:
    edits = [
        parse_edit("io.sort.mb 100 -> 20"),
        parse_edit("reduces 20 -> 240"),
        parse_edit("compress map output"),
    ]
    rows = whatif(toy_profile(), LinearPlatform(), BASE, edits)
    assert [r.label for r in rows] == [
        "baseline",
        "io.sort.mb=20",
        "reduces=240",
        "compress_map_output=true",
        "all edits",
    ]
    by = {r.label: r.prediction for r in rows}
    base = by["baseline"].dataflow
    # a smaller sort buffer: more spills and merge passes, more time
    assert by["io.sort.mb=20"].dataflow["spills"] > base["spills"]
    assert by["io.sort.mb=20"].dataflow["merge_passes"] > base["merge_passes"]
    assert by["io.sort.mb=20"].seconds > by["baseline"].seconds
    # more reduces: less to shuffle per reduce, more reduce waves (32 slots)
    assert by["reduces=240"].dataflow["shuffle_bytes_per_reduce"] < base["shuffle_bytes_per_reduce"]
    assert by["reduces=240"].dataflow["reduce_waves"] == 8
    # compression halves the bytes on the wire (assumed ratio, said so)
    assert by["compress_map_output=true"].dataflow["shuffle_bytes_per_reduce"] == pytest.approx(
        base["shuffle_bytes_per_reduce"] * 0.5
    )
    assert any("compression ratio" in a for a in by["compress_map_output=true"].assumptions)
    table = whatif_table(rows)
    figures = [row["figure"] for row in table]
    assert figures[0] == "seconds"
    assert {"spills", "merge_passes", "shuffle_files", "map_s"} <= set(figures)
    assert all(set(row) == {"figure", *by} for row in table)


def test_relative_edits_show_what_they_come_to() -> None:
    edits = [parse_edit("reduces=-1"), parse_edit("4 more nodes"), parse_edit("slowstart=+0.1"), parse_edit("io.sort.mb=50")]
    rows = whatif(toy_profile(), LinearPlatform(), BASE, edits, model="bounds")
    assert [r.label for r in rows] == [
        "baseline", "reduces=-1", "nodes=+4", "slowstart=+0.1", "io.sort.mb=50", "all edits",
    ]
    table = whatif_table(rows)
    assert table[0]["figure"] == "seconds"  # the relative edits come last
    assert table[-1] == {
        "figure": "relative edits", "baseline": "", "reduces=-1": "reduces = 19", "nodes=+4": "nodes = 20",
        "slowstart=+0.1": "slowstart = 0.15", "io.sort.mb=50": "",
        "all edits": "reduces = 19, nodes = 20, slowstart = 0.15",
    }
    absolute = whatif_table(whatif(toy_profile(), LinearPlatform(), BASE, edits[3:], model="bounds"))
    assert "relative edits" not in [row["figure"] for row in absolute]
    # two edits of one field compose, and the all-edits row says so (it read "nodes = 20, nodes = 18":
    # each on the baseline, though the prediction used 22)
    twice = whatif(toy_profile(), LinearPlatform(), BASE, [parse_edit("nodes=+4"), parse_edit("2 more nodes")],
                   model="bounds")  # fmt: skip
    assert twice[-1].resolved == "nodes = 20, nodes = 22"
    same = whatif(toy_profile(), LinearPlatform(), BASE, [parse_edit("nodes=22")], model="bounds")
    assert twice[-1].prediction.seconds == same[-1].prediction.seconds


def test_more_nodes_with_bounds_model() -> None:
    rows = whatif(toy_profile(), LinearPlatform(), BASE, [parse_edit("16 more nodes")], model="bounds")
    assert rows[-1].prediction.seconds < rows[0].prediction.seconds
    assert rows[-1].prediction.dataflow["map_waves"] < rows[0].prediction.dataflow["map_waves"]


def test_sweep_prices_every_configuration() -> None:
    configs = [
        [Edit("io.sort.mb", str(mb)), Edit("reduces", str(r))] for mb in (50, 100, 200) for r in (10, 40)
    ]
    out = sweep(toy_profile(), LinearPlatform(), BASE, configs)
    assert len(out) == 6
    assert all(p.model == "herodotou" for p in out)
    assert len({round(p.seconds, 6) for p in out}) > 1


def test_format_figure() -> None:
    assert format_figure("shuffle_bytes_per_reduce", 3 * GB) == "3.0G"
    assert format_figure("seconds", 1234.5) == "1234"
    assert format_figure("spills", None) == ""
