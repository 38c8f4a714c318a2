"""The local backtest suite: real runs of twelve small Java MapReduce applications, then the backtest.

Applications (``predict/apps/*.java``, compiled with
:func:`phaseline.java.compile_java` and run through the engine's user-jar path),
each a distinct shape (:attr:`App.shape`): word count with a combiner, sort,
grep, an inverted index, a map-only filter, a CPU-heavy map, a group-by that
shuffles every record, top N, a skewed key, a reduce-side join of two
inputs, many small splits, a large fixed per-task set-up and distinct.  The
engine generates their input (TeraGen-like 100-byte text records, one file =
one split per ``MB_PER_MAP`` MiB).

**Tuning and held-out applications** (:data:`HELD_OUT`).  The split was
committed before any model was changed for the applications added with it
(issue 37): models are tuned on the tuning set only, and the held-out set is
scored once per change, to report, never to choose a constant.  Its
applications are the skewed key, the reduce-side join, many small splits,
the fixed per-task set-up and distinct.

Steps, each resumable (a finished run directory is reused):

1. the platform model: a scaled microbenchmark plan
   (:func:`platform_model.bench.make_plan`) run on this machine, ingested,
   fitted (:func:`platform_model.model.fit_platform`);
2. every application at every input size and reduce count, ``repeats``
   times, round by round in a shuffled order (:func:`run_order`), with the
   plan's sort buffer, sort factor and reduce memory (the platform model was
   measured with them) and :attr:`Suite.warmup_mb` of warm-up
   in the same JVM first (the benchmark job, then, with :attr:`Suite.warmup_app`,
   the application itself), ingested into the suite's store;
3. :func:`predict.backtest.backtest` over that store: the profile from the
   smallest run, every other case predicted by every model, the case measured
   as the median of its runs.

:data:`FULL` is the suite whose results ``benchmarks/BACKTEST.json`` keeps;
:data:`QUICK` (two applications, two sizes, one run each) is what CI runs.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import random
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from phaseline.errors import EngineError, PhaselineWarning
from predict.backtest import BacktestRow, ModelSummary, backtest, summarize
from predict.core import Cluster

if TYPE_CHECKING:
    from platform_model.engine.yarn import ClusterShape

__all__ = [
    "APPS", "FULL", "GROUPINGS", "HELD_OUT", "QUICK", "App", "Suite", "SuiteResult", "app_jar", "app_set",
    "app_shape", "cases", "loopback_cluster", "run_order", "run_suite", "summarize_groups",
]  # fmt: skip

#: Input MiB per map task (one generated file, one split).
MB_PER_MAP = 2.0
_APP_DIR = Path(__file__).resolve().parent / "apps"


@dataclass(frozen=True, slots=True)
class App:
    """One application: its short name, driver class, shape, and the reduce counts it runs with.

    ``reduces`` replaces the suite's reduce counts where given (a map-only job
    has 0; a skewed key needs two reduces to be skewed).
    """

    name: str
    main_class: str
    shape: str = ""
    reduces: tuple[int, ...] | None = None

    @property
    def job_name(self) -> str:
        """The job name its driver gives the job (``phaseline app <name>``)."""
        return f"phaseline app {self.name}"


APPS: tuple[App, ...] = (
    App("wordcount", "phaseline.apps.WordCount", "combiner-heavy aggregation"),
    App("sort", "phaseline.apps.Sort", "full-shuffle sort", reduces=(2,)),
    App("grep", "phaseline.apps.Grep", "low-selectivity scan"),
    App("invertedindex", "phaseline.apps.InvertedIndex", "text index, wide values"),
    App("maponly", "phaseline.apps.MapOnlyFilter", "map-only filter", reduces=(0,)),
    App("cpumap", "phaseline.apps.CpuHeavyMap", "CPU-heavy map", reduces=(1,)),
    App("groupby", "phaseline.apps.GroupBy", "CPU-heavy group-by, every record shuffled", reduces=(2,)),
    App("topn", "phaseline.apps.TopN", "top N, map output independent of input", reduces=(1,)),
    App("skewkey", "phaseline.apps.SkewedKey", "skewed key: one reduce gets most data", reduces=(2,)),
    App("join", "phaseline.apps.ReduceSideJoin", "reduce-side join of two inputs", reduces=(2,)),
    App("manysplits", "phaseline.apps.ManySmallSplits", "many small splits", reduces=(1,)),
    App("fixedsetup", "phaseline.apps.FixedSetup", "large fixed per-task set-up", reduces=(1,)),
    App("distinct", "phaseline.apps.Distinct", "distinct with a combiner", reduces=(1,)),
)

#: The held-out applications: committed before the models were changed for the applications
#: added with them; never scored to choose anything (see the module docstring).
HELD_OUT: frozenset[str] = frozenset({"skewkey", "join", "manysplits", "fixedsetup", "distinct"})


def app_set(job_name: str) -> str:
    """``"held-out"``, ``"tuning"`` or ``"other"`` (a job that is none of the suite's applications)."""
    for app in APPS:
        if app.job_name == job_name:
            return "held-out" if app.name in HELD_OUT else "tuning"
    return "other"


def app_shape(job_name: str) -> str | None:
    """The suite application's shape for a job name, ``None`` for other jobs."""
    return next((app.shape for app in APPS if app.job_name == job_name), None)


#: What a backtest's summary can be split by (issue 37: held-out apart from tuning, interpolation
#: apart from extrapolation, per application shape), and how each names a row's group.
GROUPINGS: dict[str, Callable[[BacktestRow], str | None]] = {
    "set": lambda row: app_set(row.job),
    "extent": lambda row: row.extent,
    "shape": lambda row: app_shape(row.job) or row.job,
}


def summarize_groups(rows: Sequence[BacktestRow], by: Sequence[str]) -> list[tuple[str, ModelSummary]]:
    """Every model's summary over all rows (group ``"all"``), then within each group of each grouping
    in ``by`` (:data:`GROUPINGS`), each with its own noise floor (:func:`predict.backtest.noise_floor`).

    Groups come in a fixed order: held-out before tuning, then by name.
    """
    out = [("all", s) for s in summarize(rows)]
    for grouping in by:
        name_of = GROUPINGS[grouping]
        groups: dict[str, list[BacktestRow]] = {}
        for row in rows:
            group = name_of(row)
            if group is not None:
                groups.setdefault(group, []).append(row)
        for group in sorted(groups, key=lambda g: (g != "held-out", g)):
            out.extend((f"{grouping}={group}", s) for s in summarize(groups[group]))
    return out


@dataclass(frozen=True, slots=True)
class Suite:
    """Which runs the suite makes, and the microbenchmark plan for the platform model."""

    apps: tuple[App, ...]
    sizes_mb: tuple[float, ...]
    reduces: tuple[int, ...]
    repeats: int
    plan_scale: float
    plan_inputs_mb: tuple[float, ...]
    plan_selectivities: tuple[float, ...]
    plan_grid_maps: int
    plan_grid_reduces: int
    plan_shuffle_maps: tuple[int, ...]
    #: LocalJobRunner's map slots (``mapreduce.local.map.tasks.maximum``): each case runs at each.
    map_parallelism: tuple[int, ...] = (1,)
    #: MiB of a throwaway warm-up job run first in each application run's JVM
    #: (:attr:`platform_model.engine.runner.EngineJob.warmup_mb`; 0: none), so that
    #: the measured job's first tasks do not pay for a cold JVM.  The plan's
    #: microbenchmarks use :func:`platform_model.bench.make_plan`'s own warm-up.
    warmup_mb: float = 8.0
    #: The warm-up also runs the application's own driver once on the warm-up input
    #: (:attr:`platform_model.engine.runner.EngineJob.warmup_app`): its map and
    #: reduce code is compiled before the measured run, as Hadoop's already is.
    warmup_app: bool = True


#: The full suite: every application, profiled at its smallest size and predicted at 3x and 8x
#: (issue 37: "up to 8x extrapolation"), at one and two map slots, three runs a case.  Sizes of
#: 8-64 MiB: below 8 MiB (4 maps of 2 MiB) a two-slot run has a single wave, and the profile
#: cannot tell a first-wave cost from a per-task one.  A 2 MiB warm-up (8 MiB in earlier suites):
#: with 8 MiB, a run of the measured 3 s job took 27 s on this machine.  Earlier suites (four applications at 16,
#: 32 and 64 MiB, 1 and 2 reduces, five runs a case) are in benchmarks/BACKTEST.md.
FULL = Suite(
    apps=APPS,
    sizes_mb=(8.0, 24.0, 64.0),
    reduces=(1,),
    repeats=3,
    plan_scale=1 / 16,
    plan_inputs_mb=(4.0, 16.0, 64.0),
    plan_selectivities=(0.2, 1.0, 1.8),
    plan_grid_maps=4,
    plan_grid_reduces=2,
    plan_shuffle_maps=(2, 4, 8, 16),
    map_parallelism=(1, 2),
    warmup_mb=2.0,
)
QUICK = Suite(
    apps=(APPS[0], APPS[2]),
    sizes_mb=(2.0, 4.0),
    reduces=(1,),
    repeats=1,
    plan_scale=1 / 16,
    plan_inputs_mb=(8.0, 32.0),
    plan_selectivities=(1.0,),
    plan_grid_maps=2,
    plan_grid_reduces=1,
    plan_shuffle_maps=(2, 4),
)


@dataclass(frozen=True, slots=True)
class SuiteResult:
    """The backtest rows, their per-model summary, and where everything was written."""

    rows: tuple[BacktestRow, ...]
    summary: tuple[ModelSummary, ...]
    out_dir: Path
    skipped: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        return {
            "summary": [s.to_dict() for s in self.summary],
            "groups": [{"group": g, **s.to_dict()} for g, s in summarize_groups(self.rows, tuple(GROUPINGS))],
            "rows": [r.to_dict() for r in self.rows],
            "skipped": list(self.skipped),
        }


Progress = Callable[[str], None]


def app_jar() -> Path:
    """The applications' jar (``predict/apps/*.java``, compiled on first use)."""
    from phaseline.java import compile_java

    classes = compile_java("phaseline-apps", sorted(_APP_DIR.glob("*.java")), make_jar=True)
    return classes.parent / "phaseline-apps.jar"


def _platform(suite: Suite, out: Path, say: Progress, engine: str, shape: ClusterShape | None) -> Path:
    """Run (or reuse) the scaled microbenchmark plan and fit the platform model; returns its JSON path."""
    from platform_model.bench import make_plan, run_plan
    from platform_model.engine.yarn import engine_record
    from platform_model.model import PlatformModel
    from platform_model.store_fit import fit_bench_runs

    path = out / "platform.json"
    if path.exists():
        made_on = PlatformModel.load(path).cluster.get("engine", {"name": "local-hadoop"})
        if made_on.get("name") == "local":
            made_on = {"name": "local-hadoop"}
        if made_on != engine_record(shape):  # resuming another engine's suite would mix them
            raise EngineError(f"{path} was measured on {made_on}, not {engine_record(shape)}: give another --out")
        return path
    plan = make_plan(
        suite.plan_scale,
        inputs_mb=suite.plan_inputs_mb,
        selectivities=suite.plan_selectivities,
        grid_maps=suite.plan_grid_maps,
        grid_reduces=suite.plan_grid_reduces,
        shuffle_maps=suite.plan_shuffle_maps,
        require_break=False,
    )
    plan.save(out / "plan.json")
    say(f"platform: {len(plan.benchmarks)} microbenchmark runs (scale {suite.plan_scale:g})")
    results = run_plan(
        plan,
        out / "platform-runs",
        store=out / "platform-store",
        on_start=lambda b: say(f"  bench {b.name}"),
        engine=engine,
        shape=shape,
    )
    failed = [r for r in results if r.status == "failed"]
    if failed:
        raise EngineError(
            f"{len(failed)} microbenchmark run(s) failed, e.g. {failed[0].name}: {failed[0].error}"
        )
    # A handful of noisy local runs may leave a robust fit unconverged: report it, keep the model.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PhaselineWarning)
        # A phase the small plans leave at one data size (JFR split too few short tasks)
        # is priced from each job's own profiled span instead of stopping the suite.
        model = fit_bench_runs(out / "platform-store", job_name=None, cluster={"engine": engine_record(shape)}).model
    for w in caught:
        say(f"platform fit: {w.message}")
    model.save(path)
    return path


Case = tuple[App, float, int, int]  # (application, size MiB, reduces, map slots)


def cases(suite: Suite) -> list[Case]:
    """Every case of the suite: each application at each size, reduce count and map parallelism."""
    return [
        (app, size, reduces, slots)
        for app in suite.apps
        for size in suite.sizes_mb
        for reduces in (app.reduces if app.reduces is not None else suite.reduces)
        for slots in suite.map_parallelism
    ]


def run_order(suite: Suite) -> list[tuple[App, float, int, int, int]]:
    """The suite's runs ``(app, size MiB, reduces, map slots, repeat)`` in the order they are made.

    Round by round: every case's first run (in a shuffled order), then every
    case's second run, and so on, never a case's repeats back to back.  The
    machine's speed drifts over minutes (other tenants, temperature); runs of
    one case made together share one moment's speed, so a slow moment biased a
    whole case, and the median of its repeats could not remove it.  Spread
    over the suite, each case's median sees the suite's average conditions,
    as the profile run and the platform model do (interleaved, randomised
    order: the usual cure for drift in benchmark design).  The shuffle is
    seeded by the round, so a resumed suite makes the same runs.
    """
    every = cases(suite)
    order: list[tuple[App, float, int, int, int]] = []
    for rep in range(suite.repeats):
        this_round = list(every)
        random.Random(rep).shuffle(this_round)
        if order and len(this_round) > 1 and this_round[0] == order[-1][:4]:
            this_round.append(this_round.pop(0))  # not the last round's case again
        order.extend((*case, rep) for case in this_round)
    return order


def run_suite(
    suite: Suite,
    out_dir: str | Path,
    *,
    progress: Progress | None = None,
    engine: str = "local-hadoop",
    shape: ClusterShape | None = None,
) -> SuiteResult:
    """Run the suite for real in ``out_dir`` (resumable) and backtest it; results in ``out_dir/backtest.json``.

    With ``engine="yarn"`` the microbenchmarks and the applications run on mini YARN clusters of
    ``shape`` (one for the plan, one for the applications), without the local engine's warm-up.
    """
    from ingest.pipeline import ingest_paths
    from phaseline.store import Store
    from platform_model.bench import BenchPlan
    from platform_model.engine.runner import EngineJob
    from platform_model.engine.session import RunFn, engine_session
    from platform_model.model import PlatformModel

    say = progress or (lambda _msg: None)
    if engine != "local-hadoop":
        # a cluster's slots are its shape's containers: LocalJobRunner's map parallelism means nothing there
        suite = dataclasses.replace(suite, map_parallelism=(1,))
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    platform_path = _platform(suite, out, say, engine, shape)
    plan = BenchPlan.load(out / "plan.json")
    jar = app_jar()
    run_dirs: list[Path] = []
    sessions = contextlib.ExitStack()
    runner: RunFn | None = None
    with sessions:
        for app, size, reduces, slots, rep in run_order(suite):
            par = f"-p{slots}" if slots != 1 else ""  # one slot: the directory name of earlier suites
            run_dir = out / "runs" / f"{app.name}-{size:g}mb-r{reduces}{par}-{rep}"
            run_dirs.append(run_dir)
            if (run_dir / "run.json").exists():
                continue
            say(f"run {run_dir.name}")
            if run_dir.exists():
                _rmtree(run_dir)
            if runner is None:  # started for the first run left: one YARN cluster serves the rest
                runner = sessions.enter_context(engine_session(engine, shape))
            runner(
                EngineJob(
                    input_mb=size,
                    selectivity=1.0,
                    maps=max(1, math.ceil(size / MB_PER_MAP)),
                    reduces=reduces,
                    map_parallelism=slots,
                    io_sort_mb=plan.io_sort_mb,
                    sort_factor=plan.sort_factor,
                    reduce_memory_mb=plan.reduce_memory_mb,
                    seed=rep,
                    jar=jar,
                    main_class=app.main_class,
                    args=("{input}", "{output}", str(reduces)),
                    warmup_mb=suite.warmup_mb,
                    warmup_app=suite.warmup_app and suite.warmup_mb > 0,
                ),
                run_dir,
            )
    store = Store(out / "store")
    ingest_paths(run_dirs, store)
    skipped: list[str] = []
    # runs on YARN are predicted on the cluster's task containers (the LocalJobRunner's on their own one node)
    cluster = None if shape is None else loopback_cluster(shape)
    rows = backtest(store.connect(), PlatformModel.load(platform_path), cluster=cluster, skipped=skipped)
    result = SuiteResult(tuple(rows), tuple(summarize(rows)), out, tuple(skipped))
    (out / "backtest.json").write_text(json.dumps(result.to_json(), indent=1) + "\n")
    return result


def loopback_cluster(shape: ClusterShape) -> Cluster:
    """The cluster a mini YARN cluster's jobs are predicted on: one node (its NodeManagers share this
    machine's CPUs and disk, on loopback) whose slots are the containers left to the job's tasks
    (:attr:`~platform_model.engine.yarn.ClusterShape.task_containers`: the ApplicationMaster holds
    one), the same containers for maps and reduces, as YARN has no map or reduce slots."""
    return Cluster(1, shape.task_containers, shape.task_containers, engine="yarn")


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path)
