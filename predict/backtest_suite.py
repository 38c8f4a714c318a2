"""The local backtest suite, run: real runs of its Java MapReduce applications, then the backtest.

What the suite runs (its applications, held-out set, sizes, repeats and order) is
:mod:`predict.suite`'s; the applications (``predict/apps/*.java``) are compiled with
:func:`phaseline.java.compile_java` (:func:`app_jar`) and run through the engine's user-jar path.

Steps, each resumable (a finished run directory is reused):

1. the platform model: a scaled microbenchmark plan
   (:func:`platform_model.bench.make_plan`) run on this machine, ingested,
   fitted (:func:`platform_model.model.fit_platform`);
2. every application at every input size and reduce count, ``repeats``
   times, round by round in a shuffled order (:func:`predict.suite.run_order`), with the
   plan's sort buffer, sort factor and reduce memory (the platform model was
   measured with them) and :attr:`~predict.suite.Suite.warmup_mb` of warm-up
   in the same JVM first (the benchmark job, then, with :attr:`~predict.suite.Suite.warmup_app`,
   the application itself), ingested into the suite's store;
3. :func:`predict.backtest.backtest` over that store: the profile from the
   smallest run, every other case predicted by every model, the case measured
   as the median of its runs.  :func:`summarize_groups` splits the summary by the suite's
   held-out and tuning sets, extent and shape.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from phaseline.errors import EngineError, recording_warnings
from phaseline.hadoop_names import LOCAL_ENGINE, YARN_ENGINE
from predict.backtest import BacktestRow, backtest
from predict.backtest_scores import Calibrating, ModelSummary, job_out_calibration, summarize
from predict.calibration import Calibration, calibrate
from predict.core import Cluster
from predict.suite import Suite, app_set, app_shape, run_order

if TYPE_CHECKING:
    from platform_model.engine.yarn import ClusterShape

__all__ = ["GROUPINGS", "SuiteResult", "app_jar", "loopback_cluster", "run_suite", "summarize_groups",
           "tuning_calibration"]

_APP_DIR = Path(__file__).resolve().parent / "apps"


#: What a backtest's summary can be split by (issue 37: held-out apart from tuning, interpolation
#: apart from extrapolation, per application shape; and a profile on the case's own map slots apart
#: from one across slot counts), and how each names a row's group.
GROUPINGS: dict[str, Callable[[BacktestRow], str | None]] = {
    "set": lambda row: app_set(row.job),
    "extent": lambda row: row.extent,
    "shape": lambda row: app_shape(row.job) or row.job,
    "slots": lambda row: row.slots,
}


def tuning_calibration(rows: Sequence[BacktestRow]) -> Calibration | None:
    """Every model's calibrated interval (:mod:`predict.calibration`) from the suite's tuning applications'
    rows alone, so that the held-out rows score it honestly; None without tuning rows."""
    tuning = [r.to_dict() for r in rows if app_set(r.job) == "tuning"]
    return calibrate(tuning, source=f"{len(tuning)} rows of the suite's tuning applications") if tuning else None


def summarize_groups(
    rows: Sequence[BacktestRow],
    by: Sequence[str],
    calibration: Calibrating | None = None,
    loao: Calibrating | None = None,
) -> list[tuple[str, ModelSummary]]:
    """Every model's summary over all rows (group ``"all"``), then within each group of each grouping
    in ``by`` (:data:`GROUPINGS`), each with its own noise floor (:func:`predict.backtest_scores.noise_floor`)
    and, with ``calibration``, its calibrated intervals' coverage (in sample for the calibration's own rows);
    with ``loao``, also that of each row calibrated on every other application (:func:`summarize`).

    Groups come in a fixed order: held-out before tuning, then by name.
    """
    out = [("all", s) for s in summarize(rows, calibration, loao)]
    for grouping in by:
        name_of = GROUPINGS[grouping]
        groups: dict[str, list[BacktestRow]] = {}
        for row in rows:
            group = name_of(row)
            if group is not None:
                groups.setdefault(group, []).append(row)
        for group in sorted(groups, key=lambda g: (g != "held-out", g)):
            out.extend((f"{grouping}={group}", s) for s in summarize(groups[group], calibration, loao))
    return out


@dataclass(frozen=True, slots=True)
class SuiteResult:
    """The backtest rows, their per-model summary, and where everything was written."""

    rows: tuple[BacktestRow, ...]
    summary: tuple[ModelSummary, ...]
    out_dir: Path
    skipped: tuple[str, ...] = ()

    def to_json(self) -> dict[str, object]:
        calibration = tuning_calibration(self.rows)
        groups = summarize_groups(self.rows, tuple(GROUPINGS), calibration, job_out_calibration(self.rows))
        return {
            "summary": [s.to_dict() for s in self.summary],
            "calibration": None if calibration is None else calibration.to_dict(),
            "groups": [{"group": g, **s.to_dict()} for g, s in groups],
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
        made_on = PlatformModel.load(path).cluster.get("engine", {"name": LOCAL_ENGINE})
        if made_on.get("name") == "local":
            made_on = {"name": LOCAL_ENGINE}
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
    with recording_warnings() as said:
        # A phase the small plans leave at one data size (JFR split too few short tasks)
        # is priced from each job's own profiled span instead of stopping the suite.
        model = fit_bench_runs(out / "platform-store", job_name=None, cluster={"engine": engine_record(shape)}).model
    for text in said.texts:
        say(f"platform fit: {text}")
    model.save(path)
    return path


def run_suite(
    suite: Suite,
    out_dir: str | Path,
    *,
    progress: Progress | None = None,
    engine: str = LOCAL_ENGINE,
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
    if engine != LOCAL_ENGINE:
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
            fixed = f"-m{suite.maps}" if suite.maps is not None else ""  # a fixed map count: other runs
            run_dir = out / "runs" / f"{app.name}-{size:g}mb-r{reduces}{fixed}{par}-{rep}"
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
                    maps=suite.maps_of(size),
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
    one), the same containers for maps and reduces, as YARN has no map or reduce slots.  Its CPUs
    are this machine's (``os.cpu_count()``): more task containers than cores share them, which the
    models that price CPU contention (Vianna's queuing network) then see."""
    import os

    return Cluster(1, shape.task_containers, shape.task_containers, cpus_per_node=os.cpu_count(), engine=YARN_ENGINE)


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path)
