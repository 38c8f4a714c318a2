"""Vianna et al. 2013's Table 4 reproduced from Table 2's demands on Table 3's real setup.

Readings of the paper chosen here (also in :mod:`predict.vianna.model`):

* Table 4 is compared with the precedence tree's estimate
  (``Solution.tree_response_s``): the paper's job response time is the
  estimate at the tree's root (section 4.3, "the average job response time is
  derived by performing a depth-first traversal in the precedence tree"), with
  no bottleneck bound.  What phaseline reports (``response_time_s``) is
  ``max(tree, N D_max)``, so that utilizations stay <= 1; the two differ only
  for (pm, ps) = (4, 5), see below.
* Table 4's ps = 5 runs: Table 2 has demands for ps = 1 and ps = 4 only; the
  ps = 5 runs use the ps = 4 rows (same pm), the only measured rows with
  parallel shuffles, and ps = 5 threads in the timeline.  Each of a reduce's m
  shuffle-sorts (section 4.1: "each reduce is composed by m shuffle-sort
  sub-tasks") gets the whole row, because that is what the paper's model must
  have been fed: at pm = 4 its estimates fall from ps = 1 to ps = 5 by about
  the merge-demand difference alone (365.51 -> 356.20 s against merge demands
  107.7 -> 98.9 s), so its shuffle stage stayed as long as at ps = 1, which
  section 5.2.1 explains ("only 2.61 %") by "an increase in resource
  contention (mainly in disk, the bottleneck)".  Physically the row is ~5 map outputs (Table 2's
  ps = 4 row is 4.9x the ps = 1 row on disk, fiber and network while the same
  data is shuffled; section 5.1's 10^8 x 100-byte file over a 1 Gbps network
  puts one map output for one reduce at 0.178 s against the ps = 1 row's
  0.185 s): taken per shuffle-sort, the (4, 5) rows put 518 s of work on each
  node's single disk, above the 325.58 s the run was measured at, so the
  paper's 356.20 s itself breaks the utilization law under its inputs
  (:func:`test_table2_ps4_rows_carry_about_five_map_outputs`).
* The fork/join estimate applies H_k once per parallel phase (its root P_A),
  k counting different branches (threads doing identical work are one).
* The end of the map stage ends a parallel phase.
* The intra-job overlap alpha_ij is normalised by the job's response time
  (:attr:`Overlap.JOB`); see :mod:`predict.vianna.model`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from predict.vianna.model import Demands, Estimate, Overlap, Solution, read_demands, solve
from tests.predict.doubles import TABLE4_FORKJOIN, TABLE4_TRIPATHI, real_setup, table2

#: The issue's acceptance band around the paper's fork/join column.
TABLE4_RTOL = 0.10


def test_read_table2_csv_as_cli_file(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        "task,cpu,fiber,disk,network\nmap,5.0764,0.0677,3.1844,0\n"
        "shuffle_sort,0.5217,0.0087,0.4082,0.1850\nmerge,37.4983,1.2583,59.2157,0\n"
    )
    assert read_demands(path) == table2(1, 1)


# ---------------------------------------------------------------- Table 4
#: Section 5.1: the sorted file (10^8 registers of 100 bytes), m = 150 maps, r = 3 reduces, a 1 Gbps network.
SORT_BYTES = 100_000_000 * 100
NETWORK_BYTES_PER_S = 1e9 / 8
#: Table 4, measured column, (pm, ps) = (4, 5), seconds.
TABLE4_MEASURED_PM4_PS5 = 325.58


@pytest.fixture(scope="module")
def table4() -> dict[tuple[int, int, Estimate], Solution]:
    return {
        (pm, ps, est): solve(table2(pm, ps), real_setup(pm, ps), estimate=est)
        for pm, ps in TABLE4_FORKJOIN
        for est in Estimate
    }


@pytest.mark.parametrize(("pm", "ps"), [(1, 1), (1, 5), (4, 1)])
def test_table4_forkjoin_within_10_percent(
    pm: int, ps: int, table4: dict[tuple[int, int, Estimate], Solution]
) -> None:
    # The paper's model is the tree's estimate (module docstring); measured 2026-11-21:
    # 722.2 / 714.6 / 347.9 s against 732.56 / 659.13 / 365.51 s (-1.4 %, +8.4 %, -4.8 %).
    sol = table4[(pm, ps, Estimate.FORKJOIN)]
    assert sol.tree_response_s == pytest.approx(TABLE4_FORKJOIN[(pm, ps)], rel=TABLE4_RTOL)
    # here the bottleneck bound does not bind: phaseline reports the tree's estimate itself
    assert sol.bottleneck_s < sol.tree_response_s
    assert sol.response_time_s == sol.tree_response_s


@pytest.mark.xfail(
    strict=True,
    reason="measured 2026-11-21: the tree gives 319.9 s, -10.2 % from 356.20 s, with the ps = 4 rows per "
    "shuffle-sort (the paper's input): the 5 concurrent shuffle-sorts of a reduce (2.0 s of disk each) get "
    "5.37 s against 5.20 s of demand, as alpha_ij normalised by the job (Overlap.JOB, which the other three "
    "cases need) charges little contention, so the shuffle stage shrinks to ~30 x 5.4 s while the paper's "
    "model kept it as long as at ps = 1; per map output (rows / 5) it is 264.2 s (bounded 278.4 s, -22 %)",
)
def test_table4_forkjoin_pm4_ps5_within_10_percent(table4: dict[tuple[int, int, Estimate], Solution]) -> None:
    assert table4[(4, 5, Estimate.FORKJOIN)].tree_response_s == pytest.approx(
        TABLE4_FORKJOIN[(4, 5)], rel=TABLE4_RTOL
    )


def test_table4_pm4_ps5_is_bound_by_the_disk(table4: dict[tuple[int, int, Estimate], Solution]) -> None:
    # Per node and job: 50 maps x 3.1844 + 150 shuffle-sorts x 2.0000 + 1 merge x 59.2160 = 518.4 s of disk.
    # phaseline reports the bound (utilization law); the paper's model, and our tree, report less.
    sol = table4[(4, 5, Estimate.FORKJOIN)]
    assert sol.bottleneck_s == pytest.approx(50 * 3.1844 + 150 * 2.0 + 59.2160, rel=1e-9)
    assert sol.tree_response_s < sol.bottleneck_s
    assert sol.response_time_s == pytest.approx(sol.bottleneck_s)
    assert sol.utilization["disk"] == pytest.approx(1.0)
    assert sol.bottleneck_s > TABLE4_FORKJOIN[(4, 5)] * (1 + TABLE4_RTOL)


def test_table2_ps4_rows_carry_about_five_map_outputs() -> None:
    # Section 5.1: one map's output for one reduce is 10^10 / 150 / 3 bytes, 0.178 s on the 1 Gbps network;
    # Table 2's ps = 1 row says 0.185 s.  The ps = 4 rows are ~4.9x that on every data-moving device,
    # i.e. ps = 5 map outputs (Table 3: the real runs used ps = 5), not one.
    one_output_s = SORT_BYTES / 150 / 3 / NETWORK_BYTES_PER_S
    for pm in (1, 4):
        single, batch = table2(pm, 1).shuffle_sort, table2(pm, 4).shuffle_sort
        assert single["network"] == pytest.approx(one_output_s, rel=0.05)
        for dev in ("disk", "fiber", "network"):
            assert 4.8 < batch[dev] / single[dev] < 5.0
    # Hence read per shuffle-sort, the (4, 5) rows exceed what the measured run could have done on one
    # disk, while read per map output (rows / 5) they fit under it.
    demands = table2(4, 5)
    per_output = Demands(demands.map, {k: v / 5 for k, v in demands.shuffle_sort.items()}, demands.merge)
    assert solve(demands, real_setup(4, 5)).bottleneck_s > TABLE4_MEASURED_PM4_PS5
    assert solve(per_output, real_setup(4, 5)).bottleneck_s < TABLE4_MEASURED_PM4_PS5


def test_table4_tripathi_trend(table4: dict[tuple[int, int, Estimate], Solution]) -> None:
    # Table 4's Tripathi column lies above the fork/join column, and falls with map parallelism.
    def tree(pm: int, ps: int, est: Estimate) -> float:
        return table4[(pm, ps, est)].tree_response_s

    for pm, ps in TABLE4_TRIPATHI:
        assert tree(pm, ps, Estimate.TRIPATHI) > tree(pm, ps, Estimate.FORKJOIN)
    for ps in (1, 5):
        assert tree(4, ps, Estimate.TRIPATHI) < tree(1, ps, Estimate.TRIPATHI)
        assert tree(4, ps, Estimate.FORKJOIN) < tree(1, ps, Estimate.FORKJOIN)


@pytest.mark.parametrize(
    "pm",
    [
        pytest.param(
            1,
            marks=pytest.mark.xfail(
                strict=True,
                reason="measured 2026-11-21: 957.8 s (ps = 1) -> 1168.2 s (ps = 5): with the ps = 4 rows each "
                "shuffle-sort is 5.6 s, so each of the 50 map-wave phases holds 9 parallel exponential "
                "shuffle-sorts (3 reduces x 3 lanes), whose Tripathi maximum (~H_9 x 5.6 = 15.9 s) passes the "
                "3 maps' (~H_3 x 8.4 = 15.4 s): 20.3 s per phase against 15.5 s at ps = 1; refitting pairwise (binary P_A nodes) moves it < 0.2 %; "
                "per map output (rows / 5) it falls (923.4 s) but pm = 4 then rises (456.7 -> 520.4 s)",
            ),
        ),
        4,
    ],
)
def test_table4_tripathi_falls_with_shuffle_parallelism(
    pm: int, table4: dict[tuple[int, int, Estimate], Solution]
) -> None:
    # Table 4: 798.56 -> 701.75 s (pm = 1) and 620.01 -> 597.81 s (pm = 4) from ps = 1 to ps = 5.
    assert (
        table4[(pm, 5, Estimate.TRIPATHI)].tree_response_s
        < table4[(pm, 1, Estimate.TRIPATHI)].tree_response_s
    )


def test_table4_overlap_reading_matters(table4: dict[tuple[int, int, Estimate], Solution]) -> None:
    # With alpha_ij normalised by the task (Overlap.TASK) four maps share a disk at full weight:
    # the map response grows (8.5 -> 16.5 s) and the estimate leaves the paper's band.
    task = solve(table2(4, 1), real_setup(4, 1), overlap=Overlap.TASK)
    job = solve(table2(4, 1), real_setup(4, 1), overlap=Overlap.JOB)
    assert task.task_response_s["map"] > 1.5 * job.task_response_s["map"]
    assert task.response_time_s > table4[(4, 1, Estimate.FORKJOIN)].response_time_s
