"""The microbenchmarks of Zhang et al. 2013, section 3: plan them, script them, run them.

Each microbenchmark is ``MB_i = (M_inp, M_sel, N_map, N_red)``: input per map
task, map selectivity, number of map and of reduce tasks.  The paper's set:

* a grid ``M_inp`` in {2, 4, 8, 16, 32, 64} MB x ``M_sel`` in {0.2, 0.6, 1.0, 1.4, 1.8},
  40 map and 40 reduce tasks each (read, collect, spill, merge, write);
* a shuffle range ``N_map`` in {20, 30, ..., 160} with ``M_inp`` = 64 MB,
  ``M_sel`` = 5.0, ``N_red`` = 5: 1.3 to 10 GB of intermediate data per reduce
  task (eq. 2), across the 3.2 GB break of the shuffle phase.

:func:`make_plan` builds that plan, or a scaled copy for a small machine: data
sizes, the map sort buffer and the reduce-side memory shrink by ``scale``, so
the shuffle break (computed from the configuration the plan sets, see
:func:`platform_model.shuffle_thresholds.config_thresholds`) stays inside the shuffle
range.  With ``task_scale`` the shrinking is split between the number of tasks
and the data per task, so that each task's phases stay long enough to measure
on the local engine.  Local runs of a plan warm their JVM up first and record
a JFR recording (the task-log ingest splits the map's read/collect and the
reduce's write out of their combined log spans by its stack samples).  :func:`write_script` turns a plan into a shell script for a real
cluster; :func:`run_plan` runs it on the local engine, resumably, and ingests
the runs.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from phaseline.errors import PlatformModelError
from platform_model.bench_plan import BenchKind, Benchmark, BenchPlan, PlanValueError, check_scales
from platform_model.bench_run import run_plan
from platform_model.bench_script import write_script

# The plan, its run and its script, for the CLI's `bench` commands (one import for the three).
__all__ = ["BenchKind", "BenchPlan", "Benchmark", "PlanValueError", "make_plan", "run_plan", "write_script"]

_MIB = 1 << 20

#: The paper's grid (section 3).
PAPER_INPUTS_MB = (2.0, 4.0, 8.0, 16.0, 32.0, 64.0)
PAPER_SELECTIVITIES = (0.2, 0.6, 1.0, 1.4, 1.8)
PAPER_GRID_TASKS = 40
PAPER_SHUFFLE_MAPS = tuple(range(20, 161, 10))
PAPER_SHUFFLE_INPUT_MB = 64.0
PAPER_SHUFFLE_SELECTIVITY = 5.0
PAPER_SHUFFLE_REDUCES = 5
#: The paper's reduce JVM (section 2: 700 MB per slot) and Hadoop's default sort buffer.
PAPER_REDUCE_MEMORY_MB = 700
PAPER_IO_SORT_MB = 100
PAPER_SORT_FACTOR = 10
#: Warm-up job of every local run (MiB): 4 maps of 2 MiB run Hadoop's collect, sort,
#: spill, merge, shuffle and write code until the JIT has compiled it, so that the
#: measured job's first task is not 2-5 times slower than the others.
DEFAULT_WARMUP_MB = 8.0

def _thin(values: Sequence[int], points: int | None) -> tuple[int, ...]:
    """``points`` values spread evenly over ``values`` (its ends kept)."""
    if points is None or points >= len(values):
        return tuple(values)
    if points < 2:
        raise PlatformModelError("a shuffle range needs at least 2 points")
    idx = sorted({round(i * (len(values) - 1) / (points - 1)) for i in range(points)})
    return tuple(values[i] for i in idx)


def make_plan(
    scale: float = 1.0,
    *,
    inputs_mb: Sequence[float] = PAPER_INPUTS_MB,
    selectivities: Sequence[float] = PAPER_SELECTIVITIES,
    grid_maps: int | None = None,
    grid_reduces: int | None = None,
    shuffle_maps: Sequence[int] = PAPER_SHUFFLE_MAPS,
    shuffle_points: int | None = None,
    map_parallelism: int = 1,
    reduce_parallelism: int = 1,
    hadoop_conf: Mapping[str, str] | None = None,
    reduce_memory_mb: int | None = None,
    require_break: bool = True,
    task_scale: float | None = None,
    jfr: bool = False,
    warmup_mb: float = DEFAULT_WARMUP_MB,
) -> BenchPlan:
    """The paper's benchmark plan, scaled by ``scale`` (1.0: the paper's, for a real cluster).

    Scaling keeps the plan's shape: every ``M_inp`` (grid and shuffle range),
    ``mapreduce.task.io.sort.mb`` (100 MB) and the reduce-side memory (the
    paper's 700 MB reduce JVM) are multiplied by ``scale``, so the ratio of map
    output to sort buffer, and the position of the shuffle break (sort factor x
    in-memory merge size) inside the shuffle range, stay the paper's, up to the
    rounding of the two settings to whole MiB (Hadoop takes whole MiB; at least
    1): below a scale of about 0.01 that moves them (a 0.2 MiB sort buffer is 1
    MiB) and the break with them.  The plan's break is computed from the
    rounded settings, the ones its runs use (``bench plan`` prints it).  The grid's
    task counts shrink with ``sqrt(scale)`` (at least 2) unless given; the
    shuffle range keeps its ``N_map`` values (they set the data per reduce
    task), optionally thinned to ``shuffle_points`` of them.  ``reduce_memory_mb``
    overrides the scaled reduce memory; ``require_break=False`` accepts a plan whose
    shuffle range does not cross the break (a quick smoke plan).

    ``task_scale`` (``t``, in (0, 1]) splits the shrinking between tasks and data
    for the local engine, where a task of 0.1 MB has phases of a few milliseconds
    that no log or sampler measures to 15 %: the task counts shrink by ``t`` (grid
    ``N_map`` and ``N_red`` 40 x t unless given, at least 2; the shuffle range's
    ``N_map`` values, taken as the paper's, x t, rounded, duplicates dropped) and
    the data per task, ``M_inp`` and the sort buffer, by ``scale / t``; the reduce
    memory still shrinks by ``scale``, with the total intermediate data per reduce
    task.  The spills per map task and the grid's shape stay the paper's; so does
    the break, computed from the configuration (with few large map outputs each is
    shuffled to disk, and the break falls at ``sort_factor`` of them, Zhang et al.
    2013, section 2).  ``jfr`` and ``warmup_mb`` go into the plan for local runs;
    ``jfr`` is off by default: the benchmark job times its own read, collect and
    write (``PhaseNanos``), which split its spans without a profiler, and on this
    2-core machine JFR's sampler costs the runs it measures.

    Raises
    ------
    PlatformModelError
        ``scale`` is not positive, or the shuffle break computed from the plan's
        configuration falls outside its shuffle range.
    """
    check_scales(scale, task_scale, warmup_mb)
    data_scale, tasks, shuffle_maps = _split_scale(scale, task_scale, shuffle_maps)
    g_maps = grid_maps if grid_maps is not None else tasks
    g_reds = grid_reduces if grid_reduces is not None else tasks
    benches = _paper_benchmarks(inputs_mb, selectivities, g_maps, g_reds, shuffle_maps, shuffle_points, data_scale)
    plan = BenchPlan(
        benchmarks=benches,
        scale=float(scale),
        io_sort_mb=max(1, round(PAPER_IO_SORT_MB * data_scale)),
        sort_factor=PAPER_SORT_FACTOR,
        reduce_memory_mb=reduce_memory_mb or max(1, round(PAPER_REDUCE_MEMORY_MB * scale)),
        hadoop_conf=dict(hadoop_conf or {}),
        map_parallelism=map_parallelism,
        reduce_parallelism=reduce_parallelism,
        jfr=jfr,
        warmup_mb=float(warmup_mb),
        task_scale=task_scale,
    )
    if require_break:
        _check_break(plan)
    return plan


def _split_scale(
    scale: float, task_scale: float | None, shuffle_maps: Sequence[int]
) -> tuple[float, int, Sequence[int]]:
    """How ``scale`` shrinks the plan: the data scale, the grid's task count, the shuffle range's ``N_map``.

    Without ``task_scale`` the data shrinks by ``scale`` and the grid's tasks by ``sqrt(scale)``;
    with it the tasks shrink by ``task_scale`` and the data by ``scale / task_scale``.
    """
    if task_scale is not None:
        tasks = max(2, round(PAPER_GRID_TASKS * task_scale))
        return scale / task_scale, tasks, sorted({max(1, round(n * task_scale)) for n in shuffle_maps})
    tasks = PAPER_GRID_TASKS if scale >= 1 else max(2, round(PAPER_GRID_TASKS * math.sqrt(scale)))
    return scale, tasks, shuffle_maps


def _paper_benchmarks(
    inputs_mb: Sequence[float], selectivities: Sequence[float], grid_maps: int, grid_reduces: int,
    shuffle_maps: Sequence[int], shuffle_points: int | None, data_scale: float,
) -> tuple[Benchmark, ...]:  # fmt: skip
    """The grid (every ``M_inp`` x ``M_sel``) then the shuffle range (one benchmark per ``N_map``,
    thinned to ``shuffle_points``), ``M_inp`` scaled by ``data_scale``, seeded 1, 2, ... in that order."""
    benches: list[Benchmark] = []
    seed = 1
    for inp in inputs_mb:
        for sel in selectivities:
            m_inp = inp * data_scale
            benches.append(Benchmark(f"grid-inp{_fmt(m_inp)}mb-sel{_fmt(sel)}", BenchKind.GRID,
                                     m_inp, float(sel), grid_maps, grid_reduces, seed))
            seed += 1
    sh_inp = PAPER_SHUFFLE_INPUT_MB * data_scale
    for n_map in _thin(list(shuffle_maps), shuffle_points):
        benches.append(Benchmark(f"shuffle-maps{n_map:03d}", BenchKind.SHUFFLE, sh_inp,
                                 PAPER_SHUFFLE_SELECTIVITY, int(n_map), PAPER_SHUFFLE_REDUCES, seed))
        seed += 1
    return tuple(benches)


def _check_break(plan: BenchPlan) -> None:
    """Refuse a plan whose shuffle range does not cross the break its configuration implies."""
    lo, hi = plan.shuffle_range_bytes()
    if hi <= 0:
        return
    brk = plan.shuffle_break_bytes()
    if not lo < brk < hi:
        where = "at the edge of" if brk in (lo, hi) else "outside"
        raise PlatformModelError(
            f"the shuffle break computed from the plan's configuration ({brk / _MIB:.1f} MiB per reduce "
            f"task) lies {where} its shuffle range [{lo / _MIB:.1f}, {hi / _MIB:.1f}] MiB: the two-segment "
            "fit needs shuffle benchmarks on both sides of it; choose another --scale or --task-scale, or "
            "more shuffle points"
        )


def _fmt(value: float) -> str:
    """A plan value in a benchmark name: up to 10 decimals, no exponent (``%g`` wrote
    ``1e+06``, a character names refuse, and cut 0.1234561 and 0.1234562 alike).

    >>> _fmt(1e6), _fmt(0.1234561), _fmt(16 * 0.1), _fmt(0.2)
    ('1000000', '0p1234561', '1p6', '0p2')
    """
    return np.format_float_positional(value, precision=10, trim="-").replace(".", "p")
