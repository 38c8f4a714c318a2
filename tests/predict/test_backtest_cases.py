"""The backtest's cases and what it skips: a bad job, cluster runs, labels, map and slot counts, no cases."""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ingest.pipeline import ingest_paths
from phaseline.cli import main
from phaseline.store import Store
from predict.backtest import BacktestRow, backtest
from predict.backtest_runs import Run
from predict.backtest_scores import NOTHING_TO_BACKTEST, error_table
from predict.core import Cluster
from predict.simulate import SimJob, StageDist, simulate_once
from tests.predict.doubles import MB, LinearPlatform, _platform_file, _row
from tests.predict.sim_traces import write_sim_run

#: The cluster the runs are simulated on.
SIM = Cluster(1, 2, 2)
SIM_ARGS = ("--nodes", "1", "--map-slots-per-node", "2", "--reduce-slots-per-node", "2")
MODELS = ("bounds", "critical_path")


def _sim_store(tmp_path: Path, specs: Sequence[tuple[str, int, float, bool]]) -> Store:
    """One simulated run (a .jhist, ingested) per ``(job name, maps, bytes per map, counted)``, all
    with one reduce; ``counted=False``: the maps count no input records, so the run cannot be profiled."""
    paths = []
    for seq, (name, maps, per_map, counted) in enumerate(specs, start=1):
        job = SimJob(
            map_means_ms=(2000.0 * per_map / MB,) * maps,
            map_cv=0.1,
            n_reduces=1,
            first_shuffle=StageDist(400.0, 0.1),
            shuffle=StageDist(1500.0, 0.1),
            reduce=StageDist(1000.0, 0.1),
            nodes=SIM.nodes,
            map_slots_per_node=SIM.map_slots_per_node,
            reduce_slots_per_node=SIM.reduce_slots_per_node,
        )
        run = simulate_once(job, np.random.default_rng(seq), record=True)
        paths.append(write_sim_run(run, tmp_path / "traces" / str(seq), seq=seq, name=name, maps=maps, reduces=1,
                                   map_bytes=per_map, map_records=int(per_map // 100),
                                   reduce_records=int(maps * per_map // 100), counted=counted))  # fmt: skip
    store = Store(tmp_path / "store")
    ingest_paths(paths, store)
    return store


def test_a_job_that_cannot_be_profiled_is_skipped_not_the_backtest(tmp_path: Path) -> None:
    # 'aaa' sorts first and its maps count no input records: its ProfileError had ended the whole backtest
    store = _sim_store(tmp_path, [("aaa uncounted", 2, MB, False), ("aaa uncounted", 4, MB, False),
                                  ("sim sort", 2, MB, True), ("sim sort", 4, MB, True)])  # fmt: skip
    skipped: list[str] = []
    rows = backtest(store.connect(), LinearPlatform(), models=MODELS, cluster=SIM, skipped=skipped)
    assert {r.job for r in rows} == {"sim sort"}
    assert {r.model for r in rows} == set(MODELS)
    (note,) = [n for n in skipped if n.startswith("aaa uncounted")]
    assert "cannot be profiled" in note
    assert "no successful map reports its input bytes and records" in note


def test_runs_from_a_cluster_need_its_size(tmp_path: Path) -> None:
    # Runs from a real cluster had been predicted on 1 node x 1 map slot x 1 reduce slot, silently.
    store = _sim_store(tmp_path, [("sim sort", 2, MB, True), ("sim sort", 8, MB, True)])
    con = store.connect()
    skipped: list[str] = []
    assert backtest(con, LinearPlatform(), models=MODELS, skipped=skipped) == []
    (note,) = skipped
    assert note.startswith("sim sort: 2 of its 2 runs ran on a cluster, not the LocalJobRunner (e.g. job_")
    assert "--nodes N --map-slots-per-node M --reduce-slots-per-node R" in note
    # given, the cluster is what the models price: 8 maps on 2 slots take longer than on 16
    small = {r.model: r.predicted_s for r in backtest(con, LinearPlatform(), models=MODELS, cluster=SIM)}
    big = {
        r.model: r.predicted_s
        for r in backtest(con, LinearPlatform(), models=MODELS, cluster=Cluster(8, 2, 2))
    }
    assert set(small) == set(big) == set(MODELS)
    assert all(big[m] < small[m] for m in MODELS)


def test_backtest_cli_takes_the_cluster_as_predict_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import predict.backtest as backtest_mod

    store = _sim_store(tmp_path, [("sim sort", 2, MB, True), ("sim sort", 8, MB, True)])
    platform = _platform_file(tmp_path)
    given: list[Cluster | None] = []

    def fake(con: object, model: object, *, cluster: Cluster | None = None, **_: object) -> list[BacktestRow]:
        given.append(cluster)
        return [_row("c", (1.0,), (1.0,))]

    monkeypatch.setattr(backtest_mod, "backtest", fake)
    base = ["backtest", "--store", str(store.root), "--platform", str(platform), "--format", "json"]
    for args, cluster in (
        (["--nodes", "20", "--map-slots-per-node", "4", "--reduce-slots-per-node", "3"], Cluster(20, 4, 3)),
        (["--nodes", "20"], Cluster(20, 2, 2)),  # the others at predict's defaults
        (
            ["--map-slots-per-node", "3", "--cpus-per-node", "8", "--disks-per-node", "2"],
            Cluster(1, 3, 2, 8, 2),
        ),
        ([], None),
    ):
        res = CliRunner().invoke(main, [*base, *args])
        assert res.exit_code == 0, res.output
        assert given[-1] == cluster
    res = CliRunner().invoke(main, [*base, "--nodes", "0"])
    assert res.exit_code == 2
    # the real backtest on runs from a cluster, without its size: why on stderr, and nothing backtested
    monkeypatch.undo()
    res = CliRunner().invoke(main, base)
    assert res.exit_code == 1
    assert "skipped: sim sort: 2 of its 2 runs ran on a cluster, not the LocalJobRunner" in res.stderr
    assert NOTHING_TO_BACKTEST in res.stderr
    res = CliRunner().invoke(main, [*base, *SIM_ARGS])
    assert res.exit_code == 0, res.output
    assert {r["case"] for r in json.loads(res.stdout)} == {"input=8.0MiB maps=8 reduces=1"}


def test_two_cases_never_share_a_label(tmp_path: Path) -> None:
    # 0.96 and 1.04 MiB are two cases (8 % apart) that both printed as input=1.0MiB: one table line,
    # one case in the noise floor
    store = _sim_store(tmp_path, [("sim grep", 4, 0.125 * MB, True), ("sim grep", 4, 0.24 * MB, True),
                                  ("sim grep", 4, 0.26 * MB, True), ("sim grep", 4, 0.5 * MB, True)])  # fmt: skip
    rows = backtest(store.connect(), LinearPlatform(), models=MODELS, cluster=SIM)
    labels = sorted({r.case for r in rows})
    assert labels == [
        "input=0.96MiB maps=4 reduces=1",
        "input=1.04MiB maps=4 reduces=1",
        "input=2.0MiB maps=4 reduces=1",  # no other case reads 2.0MiB: kept short
    ]
    assert len(error_table(rows)) == 3
    assert len({r.case_key for r in rows}) == 3
    assert all(len(r.case_job_ids) == 1 for r in rows)


def test_labels_of_the_local_suites_sizes_stay_in_mib() -> None:
    from predict.backtest_runs import case_labels

    def run(mib: float, maps: int, reduces: int) -> list[Run]:
        return [Run(f"job_local{mib}_{reduces}", "wc", maps, reduces, mib * MB * 1.008, 1000.0, 1, 1, True)]

    cases = [run(4, 1, 1), run(4, 1, 2), run(8, 2, 1), run(16, 4, 1), run(16, 4, 2)]
    assert case_labels(cases) == [
        "input=4.0MiB maps=1 reduces=1", "input=4.0MiB maps=1 reduces=2", "input=8.1MiB maps=2 reduces=1",
        "input=16.1MiB maps=4 reduces=1", "input=16.1MiB maps=4 reduces=2",
    ]  # fmt: skip
    # inputs of a kB 3 % apart need more decimals, as many as tell them apart; of a few bytes, bytes
    kb = [[replace(r, input_bytes=b) for r in run(1, 1, 1)] for b in (1000.0, 1030.0, 1061.0, 2 * MB)]
    assert case_labels(kb) == ["input=0.00095MiB maps=1 reduces=1", "input=0.00098MiB maps=1 reduces=1",
                           "input=0.00101MiB maps=1 reduces=1", "input=2.0MiB maps=1 reduces=1"]  # fmt: skip
    few = [[replace(r, input_bytes=b) for r in run(1, 1, 1)] for b in (10.0, 11.0)]
    assert case_labels(few) == ["input=10B maps=1 reduces=1", "input=11B maps=1 reduces=1"]


def test_runs_cut_into_other_map_counts_are_other_cases(tmp_path: Path) -> None:
    # 2 MiB in 4 maps and in 8 maps: one case before (measured as the median of both, labelled maps=4)
    store = _sim_store(tmp_path, [("sim split", 2, 0.5 * MB, True), ("sim split", 4, 0.5 * MB, True),
                                  ("sim split", 8, 0.25 * MB, True)])  # fmt: skip
    rows = backtest(store.connect(), LinearPlatform(), models=MODELS, cluster=SIM)
    assert sorted({r.case for r in rows}) == [
        "input=2.0MiB maps=4 reduces=1",
        "input=2.0MiB maps=8 reduces=1",
    ]
    assert all(r.runs == 1 for r in rows)


@pytest.mark.parametrize("args", [[], ["--format", "json"], ["--format", "csv"], ["--summary"],
                                  ["--summary", "--format", "json"]])  # fmt: skip
def test_an_empty_backtest_is_the_same_error_in_every_format(tmp_path: Path, args: list[str]) -> None:
    # one case of one job: nothing to backtest; JSON had printed [] and --summary an empty table, exit 0
    store = _sim_store(tmp_path, [("sim sort", 2, MB, True)])
    platform = _platform_file(tmp_path)
    res = CliRunner().invoke(
        main, ["backtest", "--store", str(store.root), "--platform", str(platform), *args]
    )
    assert res.exit_code == 1, res.output
    assert f"Error: {NOTHING_TO_BACKTEST}" in res.stderr
    assert res.stdout == ""


def test_measured_and_profile_runs_keep_their_medians(tmp_path: Path) -> None:
    # the case's measured time stays statistics.median of its runs (what the floor draws as np.median)
    store = _sim_store(
        tmp_path, [("sim sort", 2, MB, True), ("sim sort", 4, MB, True), ("sim sort", 4, MB, True)]
    )
    rows = backtest(store.connect(), LinearPlatform(), models=("bounds",), cluster=SIM)
    (row,) = rows
    assert row.runs == 2
    assert math.isclose(row.measured_s, statistics.median(row.measured_runs_s))
    assert json.loads(json.dumps(row.to_dict()))["case_job_ids"] == list(row.case_job_ids)


def test_each_slot_count_is_profiled_on_its_own_and_across() -> None:
    # A job run at 8 and 24 MiB on one map slot and on two: every case from the one-slot 8 MiB
    # profile (a what-if across slot counts), and the two-slot 24 MiB case once more from the
    # two-slot 8 MiB run, as a user profiles the cluster they predict for.
    from predict.backtest import _profiled_groups
    from predict.backtest_runs import case_labels, group_cases

    def run(job: str, mib: int, slots: int) -> Run:
        return Run(job, "j", mib // 2, 1, mib * 2.0**20, 1000.0 * mib, slots, 1, True)

    runs = [run("a", 8, 1), run("b", 24, 1), run("c", 8, 2), run("d", 24, 2), run("e", 24, 2)]
    cases = group_cases(runs)
    groups = _profiled_groups(cases, case_labels(cases))
    profiled = [
        (p[0].job_id, sorted(r.job_id for case, _ in predicted for r in case)) for p, predicted in groups
    ]
    assert profiled == [("a", ["b", "c", "d", "e"]), ("c", ["d", "e"])]


def test_rows_say_whether_the_profile_ran_on_the_cases_slots() -> None:
    same = _row("24MiB", (1.0,), (1.0,), profile_slots=2, case_slots=2)
    other = replace(same, profile_slots=1, profile_job="p1")
    assert (same.slots, other.slots, replace(same, case_slots=None).slots) == (
        "same slots",
        "other slots",
        None,
    )
    assert BacktestRow.from_dict(other.to_dict()) == other
    assert same.case_key != other.case_key  # one case, two profiles: two rows the floor tells apart
