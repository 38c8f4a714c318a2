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
:func:`platform_model.segments.config_thresholds`) stays inside the shuffle
range.  With ``task_scale`` the shrinking is split between the number of tasks
and the data per task, so that each task's phases stay long enough to measure
on the local engine.  Local runs of a plan warm their JVM up first and record
a JFR recording (the task-log ingest splits the map's read/collect and the
reduce's write out of their combined log spans by its stack samples).  :func:`write_script` turns a plan into a shell script for a real
cluster; :func:`run_plan` runs it on the local engine, resumably, and ingests
the runs.
"""

from __future__ import annotations

import contextlib
import enum
import json
import math
import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from phaseline.errors import EngineError, PlatformModelError
from platform_model.bench_script import engine_sources as engine_sources
from platform_model.bench_script import write_script as write_script
from platform_model.engine.yarn import ClusterShape
from platform_model.segments import ShuffleThresholds, config_thresholds

PLAN_FORMAT = "phaseline-bench-plan"
PLAN_VERSION = 1
STATE_FILE = "bench-state.json"

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
#: What a benchmark may ask for: M_inp in (0, MAX_INPUT_MB], M_sel in [0, MAX_SELECTIVITY],
#: N_map and N_red in [1, MAX_TASKS] (checked wherever one is made).
MAX_INPUT_MB = 1e9
MAX_SELECTIVITY = 1e3
MAX_TASKS = 10_000_000
_MIB = 1 << 20


class BenchKind(enum.StrEnum):
    """Which part of the paper's benchmark set a benchmark belongs to."""

    GRID = "grid"
    SHUFFLE = "shuffle"


_BENCH_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,199}")


class PlanValueError(PlatformModelError):
    """A plan's size, count or scale out of its bounds: from `bench plan`'s options, a usage error."""


@dataclass(frozen=True, slots=True)
class Benchmark:
    """One microbenchmark MB_i = (M_inp, M_sel, N_map, N_red) (Zhang et al. 2013, section 3)."""

    name: str
    kind: BenchKind
    input_mb_per_map: float
    selectivity: float
    maps: int
    reduces: int
    seed: int

    def __post_init__(self) -> None:
        # the one check of a benchmark's sizes, however it is made (make_plan, a loaded plan); first,
        # since make_plan names a benchmark by its sizes ('grid-inp2mb-sel1e+09')
        if not (0 < self.input_mb_per_map <= MAX_INPUT_MB and 0 <= self.selectivity <= MAX_SELECTIVITY
                and 1 <= self.maps <= MAX_TASKS and 1 <= self.reduces <= MAX_TASKS):  # also NaN  # fmt: skip
            raise PlanValueError(
                f"benchmark {self.name}: M_inp {self.input_mb_per_map:g} MB per map, M_sel {self.selectivity:g}, "
                f"N_map {self.maps}, N_red {self.reduces}: need 0 < M_inp <= {MAX_INPUT_MB:,.0f} MB, "
                f"0 <= M_sel <= {MAX_SELECTIVITY:,.0f}, 1 <= N_map, N_red <= {MAX_TASKS:,}"
            )
        # a name is a directory of its own (bench run's runs/<name>, bench script's $HDFS_ROOT/<name>,
        # which the script deletes): one plain path component, never '..' or a hidden name
        if not isinstance(self.name, str) or _BENCH_NAME.fullmatch(self.name) is None:
            raise PlatformModelError(
                f"benchmark name {self.name!r}: use letters, digits, '.', '_' and '-', not starting with '.' "
                "(it names the benchmark's directory)"
            )

    @property
    def total_input_mb(self) -> float:
        """M_inp x N_map."""
        return self.input_mb_per_map * self.maps

    @property
    def shuffle_bytes_per_reduce(self) -> float:
        """Intermediate data per reduce task, eq. 2: M_inp x M_sel x N_map / N_red."""
        if self.reduces == 0:
            return 0.0
        return self.input_mb_per_map * _MIB * self.selectivity * self.maps / self.reduces


def _check_scales(scale: float, task_scale: float | None, warmup_mb: float) -> None:
    """The plan's scale factors and warm-up, checked once for make_plan and for a loaded plan."""
    if not (math.isfinite(scale) and scale > 0):
        raise PlanValueError(f"scale must be a positive number, got {scale}")
    if task_scale is not None and not (math.isfinite(task_scale) and 0 < task_scale <= 1):
        raise PlanValueError(f"task_scale must be in (0, 1], got {task_scale}")
    if not (math.isfinite(warmup_mb) and warmup_mb >= 0):
        raise PlanValueError(f"warmup_mb must be >= 0, got {warmup_mb}")


def _whole(doc: Mapping[str, Any], key: str, default: int | None = None) -> int:
    """A plan's count or size: a whole number (2.7 maps had silently become 2)."""
    value = doc.get(key, default) if default is not None else doc[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not float(value).is_integer():
        raise PlatformModelError(f"{key} must be a whole number, got {value!r}")
    return int(value)


@dataclass(frozen=True, slots=True)
class BenchPlan:
    """A set of microbenchmarks and the Hadoop settings they all run with.

    ``jfr`` and ``warmup_mb`` say how the local engine runs each benchmark
    (:class:`~platform_model.engine.runner.EngineJob`): with a JFR recording, and
    after a throwaway warm-up job of that many MiB in the same JVM (0: none).
    ``task_scale`` records how :func:`make_plan` split ``scale`` (None: not split).
    """

    benchmarks: tuple[Benchmark, ...]
    scale: float
    io_sort_mb: int
    sort_factor: int
    reduce_memory_mb: int
    hadoop_conf: Mapping[str, str] = field(default_factory=dict)
    map_parallelism: int = 1
    reduce_parallelism: int = 1
    jfr: bool = False
    warmup_mb: float = 0.0
    task_scale: float | None = None
    version: int = PLAN_VERSION

    def __post_init__(self) -> None:
        object.__setattr__(self, "hadoop_conf", MappingProxyType(dict(self.hadoop_conf)))
        if not self.benchmarks:  # ('0/0 benchmarks finished; ingested into' a store it never made)
            raise PlatformModelError("the plan holds no benchmarks (write one with `phaseline bench plan`)")
        names = [b.name for b in self.benchmarks]
        if len(set(names)) != len(names):
            twice = sorted({n for n in names if names.count(n) > 1})
            raise PlanValueError(f"benchmark names must be unique: {', '.join(twice)} given twice")
        _check_scales(self.scale, self.task_scale, self.warmup_mb)
        for what, value, least in (
            ("io_sort_mb", self.io_sort_mb, 1), ("sort_factor", self.sort_factor, 2),
            ("reduce_memory_mb", self.reduce_memory_mb, 1), ("map_parallelism", self.map_parallelism, 1),
            ("reduce_parallelism", self.reduce_parallelism, 1),
        ):  # fmt: skip
            if value < least:
                raise PlanValueError(f"{what} must be at least {least}, got {value}")
        if config_thresholds(self.settings()) is None:
            raise PlatformModelError(
                "hadoop_conf: a shuffle setting (mapreduce.reduce.shuffle.*.percent, mapreduce.task.io.sort.factor, "
                f"the reduce memory) is not one number: {dict(self.hadoop_conf)}"
            )

    def settings(self) -> dict[str, str]:
        """The Hadoop configuration of every benchmark (what the model will hold for)."""
        return {
            "mapreduce.task.io.sort.mb": str(self.io_sort_mb),
            "mapreduce.task.io.sort.factor": str(self.sort_factor),
            "mapreduce.reduce.memory.totalbytes": str(self.reduce_memory_mb * _MIB),
            **dict(self.hadoop_conf),
        }

    def thresholds(self) -> ShuffleThresholds:
        """The shuffle thresholds the plan's configuration implies (section 2)."""
        t = config_thresholds(self.settings())
        if t is None:  # pragma: no cover - __post_init__ refuses such settings
            raise PlatformModelError("the plan's shuffle settings are not numbers")
        return t

    def shuffle_break_bytes(self) -> float:
        """The shuffle break the configuration implies for the shuffle range's map outputs.

        Map outputs past the single-shuffle limit each land on disk, so the
        break falls at ``sort_factor`` of them (:meth:`ShuffleThresholds.break_for_map_output`);
        a plan without a shuffle range gets the configuration's own break.
        """
        t = self.thresholds()
        shuffles = [b for b in self.benchmarks if b.kind is BenchKind.SHUFFLE]
        if not shuffles:
            return t.break_bytes
        b = shuffles[0]  # make_plan gives the range one M_inp, M_sel and N_red
        return t.break_for_map_output(b.input_mb_per_map * _MIB * b.selectivity / b.reduces)

    def shuffle_range_bytes(self) -> tuple[float, float]:
        """Smallest and largest intermediate data per reduce task of the shuffle range."""
        values = [b.shuffle_bytes_per_reduce for b in self.benchmarks if b.kind is BenchKind.SHUFFLE]
        return (min(values), max(values)) if values else (0.0, 0.0)

    def to_json(self) -> dict[str, Any]:
        """The plan as JSON (with the computed thresholds, for the reader)."""
        t = self.thresholds()
        lo, hi = self.shuffle_range_bytes()
        return {
            "format": PLAN_FORMAT,
            "version": self.version,
            "paper": "Zhang, Cherkasova, Loo (ICPE 2013), section 3",
            "scale": self.scale,
            "io_sort_mb": self.io_sort_mb,
            "sort_factor": self.sort_factor,
            "reduce_memory_mb": self.reduce_memory_mb,
            "map_parallelism": self.map_parallelism,
            "reduce_parallelism": self.reduce_parallelism,
            "jfr": self.jfr,
            "warmup_mb": self.warmup_mb,
            "task_scale": self.task_scale,
            "hadoop_conf": dict(self.hadoop_conf),
            "thresholds": asdict(t),
            "shuffle_range_bytes": [lo, hi],
            "benchmarks": [
                {
                    "name": b.name,
                    "kind": b.kind.value,
                    "input_mb_per_map": b.input_mb_per_map,
                    "selectivity": b.selectivity,
                    "maps": b.maps,
                    "reduces": b.reduces,
                    "seed": b.seed,
                    "shuffle_bytes_per_reduce": b.shuffle_bytes_per_reduce,
                }
                for b in self.benchmarks
            ],
        }

    def save(self, path: str | Path) -> Path:
        """Write the plan as JSON."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return path

    @classmethod
    def load(cls, path: str | Path) -> BenchPlan:
        """Read and validate a plan written by :meth:`save`."""
        path = Path(path)
        try:
            doc = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise PlatformModelError(f"{path}: cannot read a benchmark plan: {exc}") from exc
        if not isinstance(doc, dict) or doc.get("format") != PLAN_FORMAT:
            raise PlatformModelError(f"{path}: not a {PLAN_FORMAT} file (write one with `phaseline bench plan`)")
        if doc.get("version") != PLAN_VERSION:
            raise PlatformModelError(f"{path}: plan version {doc.get('version')!r} is not supported")
        try:
            conf = doc.get("hadoop_conf", {})
            if not isinstance(conf, dict):
                raise PlatformModelError(f"hadoop_conf must be an object of settings, got {conf!r}")
            benches = tuple(
                Benchmark(str(b["name"]), BenchKind(b["kind"]), float(b["input_mb_per_map"]),
                          float(b["selectivity"]), _whole(b, "maps"), _whole(b, "reduces"), _whole(b, "seed"))
                for b in doc["benchmarks"]
            )
            plan = cls(
                benchmarks=benches,
                scale=float(doc["scale"]),
                io_sort_mb=_whole(doc, "io_sort_mb"),
                sort_factor=_whole(doc, "sort_factor"),
                reduce_memory_mb=_whole(doc, "reduce_memory_mb"),
                hadoop_conf={str(k): str(v) for k, v in conf.items()},
                map_parallelism=_whole(doc, "map_parallelism", 1),
                reduce_parallelism=_whole(doc, "reduce_parallelism", 1),
                jfr=bool(doc.get("jfr", False)),
                warmup_mb=float(doc.get("warmup_mb", 0.0)),
                task_scale=None if doc.get("task_scale") is None else float(doc["task_scale"]),
            )
        except PlatformModelError as exc:
            raise PlatformModelError(f"{path}: {exc}") from None
        except (KeyError, TypeError, ValueError) as exc:
            raise PlatformModelError(f"{path}: invalid benchmark plan: {exc!r}") from exc
        return plan


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
    _check_scales(scale, task_scale, warmup_mb)
    data_scale = scale if task_scale is None else scale / task_scale
    if task_scale is not None:
        tasks = max(2, round(PAPER_GRID_TASKS * task_scale))
        shuffle_maps = sorted({max(1, round(n * task_scale)) for n in shuffle_maps})
    else:
        tasks = PAPER_GRID_TASKS if scale >= 1 else max(2, round(PAPER_GRID_TASKS * math.sqrt(scale)))
    g_maps = grid_maps if grid_maps is not None else tasks
    g_reds = grid_reduces if grid_reduces is not None else tasks
    benches: list[Benchmark] = []
    seed = 1
    for inp in inputs_mb:
        for sel in selectivities:
            m_inp = inp * data_scale
            benches.append(Benchmark(f"grid-inp{_fmt(m_inp)}mb-sel{_fmt(sel)}", BenchKind.GRID,
                                     m_inp, float(sel), g_maps, g_reds, seed))
            seed += 1
    sh_inp = PAPER_SHUFFLE_INPUT_MB * data_scale
    for n_map in _thin(list(shuffle_maps), shuffle_points):
        benches.append(Benchmark(f"shuffle-maps{n_map:03d}", BenchKind.SHUFFLE, sh_inp,
                                 PAPER_SHUFFLE_SELECTIVITY, int(n_map), PAPER_SHUFFLE_REDUCES, seed))
        seed += 1
    plan = BenchPlan(
        benchmarks=tuple(benches),
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
    lo, hi = plan.shuffle_range_bytes()
    if hi > 0 and require_break:
        brk = plan.shuffle_break_bytes()
        if not lo < brk < hi:
            where = "at the edge of" if brk in (lo, hi) else "outside"
            raise PlatformModelError(
                f"the shuffle break computed from the plan's configuration ({brk / _MIB:.1f} MiB per reduce "
                f"task) lies {where} its shuffle range [{lo / _MIB:.1f}, {hi / _MIB:.1f}] MiB: the two-segment "
                "fit needs shuffle benchmarks on both sides of it; choose another --scale or --task-scale, or "
                "more shuffle points"
            )
    return plan


def _fmt(value: float) -> str:
    """A plan value in a benchmark name: up to 10 decimals, no exponent (``%g`` wrote
    ``1e+06``, a character names refuse, and cut 0.1234561 and 0.1234562 alike).

    >>> _fmt(1e6), _fmt(0.1234561), _fmt(16 * 0.1), _fmt(0.2)
    ('1000000', '0p1234561', '1p6', '0p2')
    """
    return np.format_float_positional(value, precision=10, trim="-").replace(".", "p")


# -- running the plan on the local engine ---------------------------------------------------


@dataclass(frozen=True, slots=True)
class BenchResult:
    """One benchmark's outcome in a plan run."""

    name: str
    status: str  # "done" | "skipped" (finished before) | "failed"
    run_dir: str
    job_id: str | None
    wall_ms: int | None
    error: str | None = None


ProgressFn = Callable[[Benchmark, BenchResult], None]


def _load_state(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {"format": "phaseline-bench-state", "version": 1, "runs": {}}
    try:
        doc = json.loads(path.read_text())
    except ValueError as exc:
        raise PlatformModelError(f"{path}: unreadable state file ({exc}); delete it to start over") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("runs"), dict):
        raise PlatformModelError(f"{path}: not a benchmark state file; delete it to start over")
    bad = [name for name, run in doc["runs"].items() if not isinstance(run, dict)]
    if bad:
        raise PlatformModelError(f"{path}: run {bad[0]!r} is no record of a run; delete the file to start over")
    return doc


def _save_state(path: Path, state: Mapping[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(state, indent=1) + "\n")
    os.replace(tmp, path)


#: What makes a benchmark's run, in a plan's JSON (:meth:`BenchPlan.to_json`) and in its benchmark's.
_RUN_PLAN_KEYS = ("io_sort_mb", "sort_factor", "reduce_memory_mb", "map_parallelism", "reduce_parallelism", "jfr",
                  "warmup_mb", "hadoop_conf")  # fmt: skip
_RUN_BENCH_KEYS = ("input_mb_per_map", "selectivity", "maps", "reduces", "seed")


def _fingerprints(plan_doc: Any) -> dict[str, str]:
    """Per benchmark name, what makes its run (its data, tasks and seed, the plan's engine settings),
    from a plan's JSON: the new plan's, or the one a state file recorded (empty if unreadable)."""
    if not isinstance(plan_doc, dict) or not isinstance(plan_doc.get("benchmarks"), list):
        return {}
    common = {k: plan_doc.get(k) for k in _RUN_PLAN_KEYS}
    return {str(b.get("name")): json.dumps(common | {k: b.get(k) for k in _RUN_BENCH_KEYS}, sort_keys=True)
            for b in plan_doc["benchmarks"] if isinstance(b, dict)}  # fmt: skip


def run_plan(
    plan: BenchPlan,
    out: str | Path,
    *,
    store: str | Path | None = None,
    on_result: ProgressFn | None = None,
    on_start: Callable[[Benchmark], None] | None = None,
    timeout_s: float = 900.0,
    progress: bool = False,
    engine: str = "local-hadoop",
    shape: ClusterShape | None = None,
) -> tuple[BenchResult, ...]:
    """Run every benchmark of ``plan`` on the local engine or YARN; resumable; ingest into ``store``.

    Each benchmark runs in ``OUT/<name>``; ``OUT/bench-state.json`` records the
    finished ones (written atomically after each), so a re-run after an
    interruption skips them and redoes a half-written run directory.  A
    finished run is skipped only if it was made with the same job (the
    benchmark's data, tasks and seed, the plan's settings: :func:`_fingerprints`);
    another plan in the same OUT redoes it (names do not say maps, reduces or
    settings, and a stale run had been skipped and ingested as the new plan's).
    A benchmark that fails
    is recorded and the others still run.

    With ``progress`` a rich progress bar (on stderr) shows the benchmark
    running, how many are done, and the elapsed and remaining time.

    With ``engine="yarn"`` one mini YARN cluster of ``shape`` is started (only if a
    benchmark is left to run) and runs them all, without the plan's warm-up and JFR
    (each task has a fresh container JVM); a run made on another engine or shape is redone.

    Returns
    -------
    tuple of BenchResult
        One per benchmark, in plan order.
    """
    if progress:
        return _run_with_progress(plan, out, store=store, timeout_s=timeout_s, engine=engine, shape=shape)
    from platform_model.engine.runner import EngineJob
    from platform_model.engine.session import RunFn, engine_session
    from platform_model.engine.yarn import engine_record

    tag = "" if engine == "local-hadoop" else json.dumps(engine_record(shape), sort_keys=True)
    sessions = contextlib.ExitStack()
    runner: RunFn | None = None

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    state_path = out / STATE_FILE
    state = _load_state(state_path)
    before = _fingerprints(state.get("plan"))  # (a state written before runs kept their own)
    state["plan"] = plan.to_json()
    now = _fingerprints(state["plan"])
    results: list[BenchResult] = []
    with sessions:
        for b in plan.benchmarks:
            run_dir = out / b.name
            done = state["runs"].get(b.name)
            made = now[b.name] + tag
            same = done is not None and done.get("fingerprint", before.get(b.name)) == made
            if done and same and done.get("status") == "done" and (run_dir / "run.json").exists():
                res = BenchResult(b.name, "skipped", str(run_dir), done.get("job_id"), done.get("wall_ms"))
            else:
                if on_start is not None:
                    on_start(b)
                shutil.rmtree(run_dir, ignore_errors=True)  # a half-written run from an interruption
                job = EngineJob(
                    input_mb=b.total_input_mb, selectivity=b.selectivity, maps=b.maps, reduces=b.reduces,
                    map_parallelism=plan.map_parallelism, reduce_parallelism=plan.reduce_parallelism,
                    io_sort_mb=plan.io_sort_mb, sort_factor=plan.sort_factor, reduce_memory_mb=plan.reduce_memory_mb,
                    hadoop_conf=dict(plan.hadoop_conf), seed=b.seed, jfr=plan.jfr, warmup_mb=plan.warmup_mb,
                )
                if runner is None:  # the engine starts for the first run left (a YARN cluster once; its failure ends the plan)
                    runner = sessions.enter_context(engine_session(engine, shape))
                try:
                    run = runner(job, run_dir, timeout_s=timeout_s)
                    res = BenchResult(b.name, "done", str(run_dir), run.job_id, run.wall_ms)
                except EngineError as exc:
                    res = BenchResult(b.name, "failed", str(run_dir), None, None, str(exc).splitlines()[0])
                state["runs"][b.name] = {"status": res.status, "job_id": res.job_id, "wall_ms": res.wall_ms,
                                         "run_dir": res.run_dir, "error": res.error, "fingerprint": made}
                _save_state(state_path, state)
            results.append(res)
            if on_result is not None:
                on_result(b, res)
    if store is not None:
        _ingest(results, store)
    return tuple(results)


def _ingest(results: Sequence[BenchResult], store: str | Path) -> None:
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store

    dirs = [Path(r.run_dir) for r in results if r.status in ("done", "skipped")]
    if dirs:
        ingest_paths(dirs, Store(Path(store)))


def _run_with_progress(
    plan: BenchPlan, out: str | Path, *, store: str | Path | None, timeout_s: float, engine: str,
    shape: ClusterShape | None,
) -> tuple[BenchResult, ...]:
    from rich import progress as rp
    from rich.console import Console

    console = Console(stderr=True)
    columns = (rp.TextColumn("{task.description}"), rp.BarColumn(), rp.MofNCompleteColumn(),
               rp.TimeElapsedColumn(), rp.TimeRemainingColumn())
    with rp.Progress(*columns, console=console, transient=False) as bar:
        task = bar.add_task("benchmarks", total=len(plan.benchmarks))

        def started(b: Benchmark) -> None:
            bar.update(task, description=f"running {b.name}")

        def finished(b: Benchmark, r: BenchResult) -> None:
            if r.status == "failed":
                console.print(f"[red]{b.name} failed:[/red] {r.error}")
            bar.update(task, advance=1, description=f"{r.status} {b.name}")

        results = run_plan(plan, out, store=None, on_result=finished, on_start=started, timeout_s=timeout_s,
                           engine=engine, shape=shape)  # fmt: skip
        if store is not None:
            bar.update(task, description="ingesting the runs")
            _ingest(results, store)
        bar.update(task, description="benchmarks")
    return results
