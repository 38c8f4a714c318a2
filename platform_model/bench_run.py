"""Running a benchmark plan on the local engine or a mini YARN cluster, resumably (:func:`run_plan`),
and ingesting the runs.

``OUT/bench-state.json`` (:data:`STATE_FILE`) records the finished runs and what made each
(:func:`_fingerprints`), so a re-run after an interruption skips them.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from phaseline.errors import EngineError, PlatformModelError
from phaseline.hadoop_names import LOCAL_ENGINE
from platform_model.bench_plan import Benchmark, BenchPlan
from platform_model.engine.yarn import ClusterShape

if TYPE_CHECKING:
    from platform_model.engine.session import RunFn

STATE_FILE = "bench-state.json"


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
    engine: str = LOCAL_ENGINE,
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
    from platform_model.engine.session import engine_session
    from platform_model.engine.yarn import engine_record

    tag = "" if engine == LOCAL_ENGINE else json.dumps(engine_record(shape), sort_keys=True)
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
                if runner is None:  # the engine starts for the first run left (a YARN cluster once; its failure ends the plan)
                    runner = sessions.enter_context(engine_session(engine, shape))
                res = _run_one(runner, plan, b, run_dir, timeout_s)
                state["runs"][b.name] = {"status": res.status, "job_id": res.job_id, "wall_ms": res.wall_ms,
                                         "run_dir": res.run_dir, "error": res.error, "fingerprint": made}
                _save_state(state_path, state)
            results.append(res)
            if on_result is not None:
                on_result(b, res)
    if store is not None:
        _ingest(results, store)
    return tuple(results)


def _run_one(runner: RunFn, plan: BenchPlan, b: Benchmark, run_dir: Path, timeout_s: float) -> BenchResult:
    """Run benchmark ``b`` of ``plan`` into ``run_dir``: done, or failed with the engine's first line."""
    from platform_model.engine.job import EngineJob

    job = EngineJob(
        input_mb=b.total_input_mb, selectivity=b.selectivity, maps=b.maps, reduces=b.reduces,
        map_parallelism=plan.map_parallelism, reduce_parallelism=plan.reduce_parallelism,
        io_sort_mb=plan.io_sort_mb, sort_factor=plan.sort_factor, reduce_memory_mb=plan.reduce_memory_mb,
        hadoop_conf=dict(plan.hadoop_conf), seed=b.seed, jfr=plan.jfr, warmup_mb=plan.warmup_mb,
    )
    try:
        run = runner(job, run_dir, timeout_s=timeout_s)
        return BenchResult(b.name, "done", str(run_dir), run.job_id, run.wall_ms)
    except EngineError as exc:
        return BenchResult(b.name, "failed", str(run_dir), None, None, str(exc).splitlines()[0])


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
