"""Vianna et al. 2013 reproduced: Fig. 5/6 precedence tree, Table 4, Figure 7's shape, formulations agree.

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

import csv
import dataclasses
import itertools
from pathlib import Path

import pytest

from predict.vianna.estimates import harmonic
from predict.vianna.layout import Formulation, Workload
from predict.vianna.model import Demands, Estimate, Overlap, Solution, evaluate_tree, read_demands, solve
from predict.vianna.tree import (
    Leaf,
    MapGroup,
    ParallelAnd,
    ReduceGroup,
    Serial,
    Timeline,
    build_timeline,
    build_tree,
    render,
)

DATA = Path(__file__).parents[1] / "data"

#: Table 4, "Fork-join-based model" and "Tripathi-based model" columns, seconds, by (pm, ps).
TABLE4_FORKJOIN = {(1, 1): 732.56, (1, 5): 659.13, (4, 1): 365.51, (4, 5): 356.20}
TABLE4_TRIPATHI = {(1, 1): 798.56, (1, 5): 701.75, (4, 1): 620.01, (4, 5): 597.81}
#: The issue's acceptance band around the paper's fork/join column.
TABLE4_RTOL = 0.10
#: Per-task and class formulations of the same job agree within this, relative (job response time).
FORMULATION_RTOL = 0.05
#: ... and per task kind (the class mean averages local and remote shuffles' network demand).
TASK_KIND_RTOL = 0.10


def table2(pm: int, ps: int) -> Demands:
    """Table 2's demands for (pm, ps); ps = 5 reads the ps = 4 rows (see the module docstring)."""
    row_ps = 4 if ps == 5 else ps
    rows: dict[str, dict[str, float]] = {}
    with (DATA / "vianna_table2.csv").open() as fh:
        for rec in csv.DictReader(fh):
            if int(rec["pm"]) == pm and int(rec["ps"]) == row_ps:
                rows[rec["task"]] = {dev: float(rec[dev]) for dev in ("cpu", "fiber", "disk", "network")}
    return Demands(rows["map"], rows["shuffle_sort"], rows["merge"])


def real_setup(pm: int, ps: int) -> Workload:
    """Table 3, real setup: n = 3, c = 4, d = 1, m = 150, r = 3, pr = 1."""
    return Workload(nodes=3, cpus=4, disks=1, maps=150, reduces=3, pm=pm, pr=1, ps=ps)


# ---------------------------------------------------------------- Fig. 5 / Fig. 6
# Fig. 5's timeline (m = 4, r = 1, n = 1, pm = 2, pr = 1, ps = 1), durations chosen to
# give the order the text describes:
#
#   map thread 1 |--M1--|----M3-----|
#   map thread 2 |---M2----|----M4------|
#   reduce          .   |R1|  |--R2--|R3|   |R4|----RM----|
#   time         0      4   6        9.5 11 12 13.5       20
#   sync points         ^   ^               ^
#
# M1 finishes first (R1 starts, M3 takes thread 1); R1 ends before M2, so the
# reduce blocks and M2's end is a synchronization point; R3 follows R2 at once
# (M3 ended at 9); the reduce blocks again until M4 ends (R4, then the merge).
FIG5_MEANS = [4.0, 6.0, 5.0, 6.0, 1.5, 3.5, 1.5, 1.5, 6.5]
FIG5_LABELS = ["M1", "M2", "M3", "M4", "R1", "R2", "R3", "R4", "RM"]


def fig5_timeline() -> Timeline:
    return build_timeline(
        FIG5_MEANS,
        [MapGroup(1, (0, 2)), MapGroup(1, (1, 3))],
        [ReduceGroup(1, {0: 4, 1: 5, 2: 6, 3: 7}, 8, 4)],
        ps=1,
    )


def test_fig5_timeline_synchronization_points() -> None:
    assert fig5_timeline().sync_points == (0.0, 4.0, 6.0, 12.0, 20.0)


def test_fig6d_precedence_tree() -> None:
    # Fig. 6(d): phase 1 = PA(M1, M2^1); phase 2 = PA(PA(M3^1, M2^2), R1) (maps left, reduce right);
    # phase 3 = PA(PA(M3^2, M4), S(R2, R3)); the last phase = S(R4, RM); phases chained by S nodes.
    tree = build_tree(fig5_timeline())
    assert render(tree, FIG5_LABELS) == (
        "S(PA(M1, M2^1), S(PA(PA(M3^1, M2^2), R1), S(PA(PA(M3^2, M4), S(R2, R3)), S(R4, RM))))"
    )


def test_fig6a_forkjoin_estimate() -> None:
    # Section 4.3: the P_A of Fig. 6(a) is H_2 x max(M1, M2^1).
    tree = build_tree(fig5_timeline())
    assert isinstance(tree, Serial)
    phase1 = tree.children[0]
    assert isinstance(phase1, ParallelAnd)
    assert phase1.phase
    assert evaluate_tree(phase1, Estimate.FORKJOIN).mean == pytest.approx(harmonic(2) * 4.0)
    assert evaluate_tree(Leaf(0, 4.0), Estimate.TRIPATHI).mean == 4.0


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


# ---------------------------------------------------------------- Figure 7 and the formulations
FIG7_MAPS = (4, 8, 16, 32, 64, 128, 256)


def fig7(pm: int, ps: int, maps: int) -> Workload:
    """Table 3, simulation: n = 4, c = 4, d = 1, r = 4, pr = 1."""
    return Workload(nodes=4, cpus=4, disks=1, maps=maps, reduces=4, pm=pm, pr=1, ps=ps)


@pytest.mark.parametrize("estimate", list(Estimate))
def test_fig7a_shape_grows_with_maps(estimate: Estimate) -> None:
    # Fig. 7(a) (pm = ps = 1): the response time grows with m, linearly once the map stage dominates.
    times = [solve(table2(1, 1), fig7(1, 1, m), estimate=estimate).response_time_s for m in FIG7_MAPS]
    assert all(b > a for a, b in itertools.pairwise(times))
    slope_hi = (times[-1] - times[-2]) / (FIG7_MAPS[-1] - FIG7_MAPS[-2])
    slope_mid = (times[-2] - times[-3]) / (FIG7_MAPS[-2] - FIG7_MAPS[-3])
    assert slope_hi == pytest.approx(slope_mid, rel=0.25)


def test_fig7_map_parallelism_helps_for_many_maps() -> None:
    # Fig. 7(a) vs (c): with pm = 4 the map stage runs four times wider.
    for m in (64, 128, 256):
        assert (
            solve(table2(4, 1), fig7(4, 1, m)).response_time_s
            < solve(table2(1, 1), fig7(1, 1, m)).response_time_s
        )


def test_fig7b_shuffle_parallelism_helps_without_map_parallelism() -> None:
    # Fig. 7(a) vs (b): with pm = 1, ps = 4 lowers the response time (by up to 8.2 % in the paper's simulation).
    for m in FIG7_MAPS:
        assert (
            solve(table2(1, 4), fig7(1, 4, m)).response_time_s
            < solve(table2(1, 1), fig7(1, 1, m)).response_time_s
        )


@pytest.mark.parametrize(("pm", "ps", "maps"), [(1, 1, 16), (1, 1, 32), (4, 1, 32), (1, 4, 16), (4, 4, 16)])
def test_per_task_and_class_formulations_agree(pm: int, ps: int, maps: int) -> None:
    work = fig7(pm, ps, maps)
    per_task = solve(table2(pm, ps), work, formulation=Formulation.PER_TASK)
    by_class = solve(table2(pm, ps), work, formulation=Formulation.CLASS)
    assert per_task.layout.size == work.tasks
    assert by_class.layout.size < per_task.layout.size
    assert by_class.response_time_s == pytest.approx(per_task.response_time_s, rel=FORMULATION_RTOL)
    for kind, r in per_task.task_response_s.items():
        assert by_class.task_response_s[kind] == pytest.approx(r, rel=TASK_KIND_RTOL)


@pytest.mark.parametrize(
    ("pm", "ps", "maps", "slowstart"),
    [
        (1, 1, 16, 1.0),
        (4, 1, 32, 1.0),
        (1, 4, 16, 1.0),
        (1, 4, 16, 0.75),
        pytest.param(
            1,
            4,
            16,
            0.5,
            marks=pytest.mark.xfail(
                strict=True,
                reason="measured 2026-11-27: fork/join per task 225.5 s, by class 130.1 s (Tripathi: 253.2 s "
                "both); the phases agree but the last: the reduces start at map 8 with 8 tokens each, and "
                "after the last map each reduce's remaining shuffle-sorts and merge (its own mix of local "
                "and remote fetches) are a branch of their own per task, 89.9 s and 3 x 93.4 s cut "
                "differently: k = 4, H_4 x 93.4 = 182.7 s, where the class formulation's symmetric reduces "
                "are one branch (86.8 s); the step of the 'symmetric threads are one branch' reading, as "
                "in Table 4's (4, 5)",
            ),
        ),
    ],
)
def test_per_task_and_class_formulations_agree_with_a_slow_start(
    pm: int, ps: int, maps: int, slowstart: float
) -> None:
    """Hadoop's reduce slow-start (LocalJobRunner: 1.0, after the last map) on Fig. 7's cluster."""
    work = dataclasses.replace(fig7(pm, ps, maps), slowstart=slowstart)
    per_task = solve(table2(pm, ps), work, formulation=Formulation.PER_TASK)
    by_class = solve(table2(pm, ps), work, formulation=Formulation.CLASS)
    assert by_class.tree_response_s == pytest.approx(per_task.tree_response_s, rel=FORMULATION_RTOL)


@pytest.mark.parametrize(
    ("pm", "ps"),
    [
        (1, 1),
        (1, 5),
        (4, 1),
        pytest.param(
            4,
            5,
            marks=pytest.mark.xfail(
                strict=True,
                reason="measured 2026-11-22: the per-task tree gives 399.9 s, the class tree 319.9 s: per task, "
                "one of the 3 reduces (its shuffle mix more remote) ends the last phase 9 % after the others "
                "(220.4 against 202.5 s), so the phase has k = 2 fork/join branches (H_2 = 1.5) where the "
                "class formulation's symmetric reduces are one; the 'symmetric threads are one branch' "
                "reading (predict.vianna.model) has a step there, even at a 5 % symmetry tolerance",
            ),
        ),
    ],
)
def test_per_task_and_class_trees_agree_on_table4(pm: int, ps: int) -> None:
    """Table 3's real setup (m = 150, r = 3: 603 per-task classes), the precedence tree's own estimate."""
    per_task = solve(table2(pm, ps), real_setup(pm, ps), formulation=Formulation.PER_TASK)
    by_class = solve(table2(pm, ps), real_setup(pm, ps), formulation=Formulation.CLASS)
    assert by_class.tree_response_s == pytest.approx(per_task.tree_response_s, rel=FORMULATION_RTOL)


def test_multiple_jobs_share_the_cluster() -> None:
    # MPL N > 1 (eq. 6's inter-job term): each job slows down, the cluster gets more done.
    one = solve(table2(1, 1), real_setup(1, 1))
    two = solve(table2(1, 1), Workload(3, 4, 1, 150, 3, 1, 1, 1, jobs=2))
    assert two.response_time_s > one.response_time_s
    assert two.throughput_per_s > one.throughput_per_s
    assert two.utilization["disk"] > one.utilization["disk"]


@pytest.mark.parametrize("reduces", [0, 1])
def test_a_partial_last_map_wave_is_one_more_wave_not_a_second_branch(reduces: int) -> None:
    # 255 maps on 4 map threads: 3 threads run 64 maps, 1 runs 63.  The 64-map chains begin with the
    # 63-map chain: S(PA(63 maps x 4 threads), PA(1 map x 3 threads)), 64 waves.  As two fork/join
    # branches the 4 threads came to H_2 = 1.5 x 64 waves, slower than 3 threads' 85 waves.
    def tree(pm: int) -> Solution:
        return solve(table2(1, 1), Workload(nodes=1, cpus=8, disks=1, maps=255, reduces=reduces, pm=pm, pr=1, ps=1))

    three, four = tree(3), tree(4)
    if reduces == 0:
        assert three.tree_response_s == pytest.approx(85 * three.task_response_s["map"], rel=0.01)
        assert four.tree_response_s == pytest.approx(64 * four.task_response_s["map"], rel=0.01)
    assert four.tree_response_s < three.tree_response_s


def test_a_partial_last_reduce_wave_is_one_more_wave_not_a_second_branch() -> None:
    # 100 reduces on 22 slots (11 nodes x pr = 2): 12 slots run 5 waves, 10 run 4.  The 5-wave chains
    # begin with the 4-wave one: S(PA(4 waves x 22 slots), PA(wave 5 x 12 slots)).  As two fork/join
    # branches they came to 783.5 s, against 599.4 s on 20 slots running 5 full waves (found by an
    # audit: `phaseline mva` got slower with an 11th node).
    def solved(nodes: int) -> Solution:
        return solve(table2(1, 1), Workload(nodes=nodes, cpus=4, disks=1, maps=1, reduces=100, pm=2, pr=2, ps=5))

    times = [solved(n).response_time_s for n in range(9, 14)]
    assert all(b <= a * (1 + 1e-9) for a, b in itertools.pairwise(times)), times
    # 5 waves on 20 slots or on 22 (a partial fifth) take as long: the fifth wave is one more wave
    assert times[2] == pytest.approx(times[1], rel=0.01)
