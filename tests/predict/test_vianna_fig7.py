"""Vianna et al. 2013's Figure 7 solved: the response time's shape, and per-task and class formulations agreeing."""

from __future__ import annotations

import dataclasses
import itertools

import pytest

from predict.vianna.layout import Formulation, Workload
from predict.vianna.model import Estimate, solve
from tests.predict.doubles import real_setup, table2

#: Per-task and class formulations of the same job agree within this, relative (job response time).
FORMULATION_RTOL = 0.05
#: ... and per task kind (the class mean averages local and remote shuffles' network demand).
TASK_KIND_RTOL = 0.10


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
