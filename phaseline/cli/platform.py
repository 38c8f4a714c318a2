"""``phaseline bench``, ``phaseline fit`` and ``phaseline platform``: the platform model's commands.

Zhang et al. 2013: plan and run the microbenchmarks (section 3), fit the
platform model (section 4), report its accuracy (section 6, Table 1), and
evaluate it.  Thin: options in, library calls, results out.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from phaseline.cli.engine import cluster_shape, engine_options
from phaseline.cli.output import (
    POSITIVE_NUMBER,
    SIZE,
    emit,
    format_option,
    handle_errors,
    only_with,
    open_store,
    store_option,
)
from phaseline.errors import PlatformModelError
from phaseline.store import default_store_path

if TYPE_CHECKING:
    from platform_model.model import PlatformModel


def _floats(text: str | None, what: str, *, positive: bool = False) -> tuple[float, ...] | None:
    """An option's comma-separated numbers; a value that is none (or, ``positive``, one that is not
    above 0) is a usage error naming the option."""
    if text is None:
        return None
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise click.BadParameter(f"must be comma-separated numbers, got {text!r}", param_hint=what) from None
    if not values:
        raise click.BadParameter("is empty", param_hint=what)
    bad = [v for v in values if not math.isfinite(v)]  # the range is the plan's to check (Benchmark)
    if bad:
        raise click.BadParameter(f"must be finite numbers, got {', '.join(map(str, bad))}", param_hint=what)
    if positive and (bad := [v for v in values if v <= 0]):
        raise click.BadParameter(f"must be above 0, got {', '.join(f'{v:g}' for v in bad)}", param_hint=what)
    return values


def _plain_table(rows: Sequence[Mapping[str, object]]) -> str:
    """Rows as an aligned plain-text table (copy-pasteable, any terminal width)."""
    if not rows:
        return "(no rows)"
    cols = list(rows[0])
    cells = [[("" if r[c] is None else str(r[c])) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    return "\n".join(lines)


@click.group()
def bench() -> None:
    """Plan, script and run the platform microbenchmarks (Zhang 2013, sec. 3)."""


@bench.command("plan", context_settings={"show_default": True})
@click.option("--scale", type=POSITIVE_NUMBER, default=1.0, help="Shrink data sizes, sort buffer and reduce memory (1: the paper's plan).")
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Plan file (JSON) to write.")
@click.option("--inputs-mb", default=None, help="Grid M_inp values before scaling, comma separated [default: 2,4,8,16,32,64].")
@click.option("--selectivities", default=None, help="Grid M_sel values, comma separated [default: 0.2,0.6,1.0,1.4,1.8].")
@click.option("--grid-maps", type=click.IntRange(min=1), default=None, help="Map tasks per grid benchmark [default: 40 x sqrt(scale)].")
@click.option("--grid-reduces", type=click.IntRange(min=1), default=None, help="Reduce tasks per grid benchmark [default: 40 x sqrt(scale), like the maps' default].")
@click.option("--shuffle-points", type=click.IntRange(min=2), default=None, help="Thin the shuffle range N_map=20..160 to this many points.")
@click.option("--shuffle-maps", default=None, help="The shuffle range's N_map values, comma separated [default: 20,30,...,160].")
@click.option("--reduce-memory-mb", type=click.IntRange(min=1), default=None, help="Reduce-side memory [default: 700 x scale].")
@click.option(
    "--task-scale",
    type=click.FloatRange(min=0.0, min_open=True, max=1.0),
    default=None,
    help="Split --scale between fewer tasks (x this) and more data per task: longer, measurable phases on one machine.",
)
@click.option("--warmup-mb", type=click.FloatRange(min=0.0), default=None, help="Warm-up job before each run (local engine) [default: 8].")
@click.option("--jfr/--no-jfr", "jfr", default=False, show_default=True,
              help="Record JFR stack samples of each run (for `hotspots`; the benchmark job times its own read, collect "
              "and write, so the split needs none, and the sampler's cost lands in the runs it measures).")
@handle_errors
def plan_cmd(
    scale: float,
    out: Path,
    inputs_mb: str | None,
    selectivities: str | None,
    grid_maps: int | None,
    grid_reduces: int | None,
    shuffle_points: int | None,
    shuffle_maps: str | None,
    reduce_memory_mb: int | None,
    task_scale: float | None,
    warmup_mb: float | None,
    jfr: bool,
) -> None:
    """Write the benchmark plan MB_i = (M_inp, M_sel, N_map, N_red) as JSON."""
    from platform_model.bench import (
        DEFAULT_WARMUP_MB,
        PAPER_INPUTS_MB,
        PAPER_SELECTIVITIES,
        PAPER_SHUFFLE_MAPS,
        PlanValueError,
        make_plan,
    )

    maps = _floats(shuffle_maps, "--shuffle-maps", positive=True)
    if maps and any(m != int(m) for m in maps):
        raise click.BadParameter(f"must be whole numbers of map tasks, got {shuffle_maps!r}", param_hint="--shuffle-maps")
    try:
        plan = make_plan(
            scale,
            inputs_mb=_floats(inputs_mb, "--inputs-mb", positive=True) or PAPER_INPUTS_MB,
            selectivities=_floats(selectivities, "--selectivities") or PAPER_SELECTIVITIES,
            grid_maps=grid_maps,
            grid_reduces=grid_reduces,
            shuffle_points=shuffle_points,
            shuffle_maps=tuple(int(m) for m in maps) if maps else PAPER_SHUFFLE_MAPS,
            reduce_memory_mb=reduce_memory_mb,
            task_scale=task_scale,
            jfr=jfr,
            warmup_mb=DEFAULT_WARMUP_MB if warmup_mb is None else warmup_mb,
        )
    except PlanValueError as exc:  # a value the options gave: a usage error (exit 2)
        raise click.UsageError(str(exc)) from None
    plan.save(out)
    t = plan.thresholds()
    lo, hi = plan.shuffle_range_bytes()
    mib = float(1 << 20)
    click.echo(
        f"{out}: {len(plan.benchmarks)} benchmarks (scale {scale:g}); shuffle range {lo / mib:.1f}-{hi / mib:.1f} MiB "
        f"per reduce task; break from the config {plan.shuffle_break_bytes() / mib:.1f} MiB "
        f"(reduce memory {plan.reduce_memory_mb} MiB, sort factor {t.sort_factor})"
    )


@bench.command("run")
@engine_options
@click.option("--plan", "plan_path", required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path), help="Plan file.")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path), help="Directory of the runs (resumable).")
@click.option("--no-ingest", is_flag=True, help="Do not ingest the runs into the store.")
@store_option
@handle_errors
def run_cmd(engine: str, nodes: int, containers_per_node: int, container_mb: int, plan_path: Path, out: Path,
            no_ingest: bool, store_dir: Path | None) -> None:  # fmt: skip
    """Run a plan for real on the local Hadoop engine or a mini YARN cluster, then ingest the runs (re-run to resume).

    With --engine yarn one cluster runs every benchmark, without the plan's warm-up and JFR.
    """
    from platform_model.bench import BenchPlan, run_plan

    shape = cluster_shape(engine, nodes, containers_per_node, container_mb)
    plan = BenchPlan.load(plan_path)
    store = None if no_ingest else open_store(store_dir, create=True).root
    results = run_plan(plan, out, store=store, progress=True, engine=engine, shape=shape)
    failed = [r for r in results if r.status == "failed"]
    done = sum(r.status != "failed" for r in results)
    where = f"; ingested into {store}" if store is not None else ""
    click.echo(f"{done}/{len(results)} benchmarks finished in {out}{where}")
    if failed:
        for r in failed:
            click.echo(f"failed: {r.name}: {r.error}", err=True)
        raise click.ClickException(f"{len(failed)} benchmark(s) failed; re-run the same command to retry them")


@bench.command("script")
@click.option("--plan", "plan_path", required=True, type=click.Path(dir_okay=False, exists=True, path_type=Path), help="Plan file.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Script file [default: stdout].")
@click.option("--hdfs-root", default="/tmp/phaseline-bench", show_default=True, help="HDFS directory for inputs and outputs.")
@handle_errors
def script_cmd(plan_path: Path, out: Path | None, hdfs_root: str) -> None:
    """Write a bash script that runs a plan on a real cluster with `hadoop jar` and fetches its history and logs."""
    from platform_model.bench import BenchPlan, write_script

    text = write_script(BenchPlan.load(plan_path), hdfs_root=hdfs_root)
    if out is None:
        click.echo(text, nl=False)
    else:
        out.write_text(text)
        out.chmod(0o755)
        click.echo(f"wrote {out}")


@click.command("fit")
@store_option
@click.option("--out", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Model file (JSON) to write.")
@click.option("--from-csv", "csv_path", type=click.Path(dir_okay=False, exists=True, path_type=Path), default=None,
              help="Fit a CSV phase,data_bytes,dur_ms[,run_id] instead of the store.")
@click.option("--norm", type=click.Choice(["huber", "tukey"]), default="tukey", show_default=True,
              help="Robust norm: Tukey's biweight gives slow stragglers no weight; Huber's T bounds it.")
@click.option("--criterion", type=click.Choice(["bic", "f"]), default="bic", show_default=True, help="Two-segment test criterion.")
@click.option("--no-split", is_flag=True, help="One line per phase (skip the two-segment test).")
@click.option("--plot", "plot_dir", type=click.Path(file_okay=False, path_type=Path), default=None, help="Write Figure-3-like plots here.")
@click.option("--plot-format", type=click.Choice(["png", "svg"]), default="png", show_default=True, help="Plot file format.")
@click.option("--report", is_flag=True, help="Print the Table-1 accuracy report (in sample, held-out runs, and the noise ceiling: "
              "the most any model of the data could reach on these runs).")
@click.option("--folds", type=click.IntRange(min=2), default=5, show_default=True, help="Cross-validation folds (by run).")
@click.option("--setting", "settings", multiple=True, metavar="KEY=VALUE", help="A Hadoop setting the model holds for (repeatable).")
@click.option("--cluster", "cluster_name", default=None, help="A name for the cluster the measurements come from.")
@click.option("--job-name", "job_name", default=None, metavar="NAME",
              help="Fit only the store's jobs of this name [default: the microbenchmark's, phaseline-bench, where the "
              "store has any; else every job].")
@click.option("--all-jobs", is_flag=True, help="Fit every job in the store, microbenchmarks or not.")
@click.option("--skip-unfittable", is_flag=True,
              help="Leave a phase with too few points, or points at one data size only, unfitted (a warning says why) "
              "instead of refusing: predictions price it from each job's profiled span.")
@handle_errors
def fit_cmd(
    store_dir: Path | None,
    out: Path,
    csv_path: Path | None,
    norm: str,
    criterion: str,
    no_split: bool,
    plot_dir: Path | None,
    plot_format: str,
    report: bool,
    folds: int,
    settings: tuple[str, ...],
    cluster_name: str | None,
    job_name: str | None,
    all_jobs: bool,
    skip_unfittable: bool,
) -> None:
    """Fit the platform model from the store or a CSV: robust lines per generic phase (Zhang 2013, sec. 4).

    From a store, the microbenchmark runs (jobs named phaseline-bench, as `bench
    run` and `bench script` name them) where it has any: other jobs in the same
    store (traces ingested beside them) are left out and counted on stderr.
    Prints the fitted lines (and with --report the accuracy report).  A phase with
    no data is left unfitted, and a phase fitted on incomplete runs is fitted:
    both are warnings on stderr.  A phase with some data but too few points for
    a line is an error that says how many more benchmark runs it needs (a
    model without it would price that phase from each job's profile instead:
    run those runs, or take that model with --skip-unfittable).
    """
    only_with("plot_format", "with --plot", plot_dir is not None)
    only_with("folds", "with --report", report)
    given = click.get_current_context().get_parameter_source("store_dir")
    if csv_path is not None and given is click.core.ParameterSource.COMMANDLINE:  # PHASELINE_STORE may be set
        raise click.UsageError("--from-csv and --store are alternatives: fit one or the other")
    from platform_model.accuracy import accuracy_report, render_markdown
    from platform_model.fit import Norm
    from platform_model.model import fit_platform
    from platform_model.profile import profile_from_csv
    from platform_model.segments import Criterion
    from platform_model.store_fit import JobChoice, fit_from_store, fit_notes, handover_note

    extra = _key_values(settings)
    if all_jobs and job_name is not None:
        raise click.UsageError("--job-name and --all-jobs are alternatives")
    if csv_path is not None and (all_jobs or job_name is not None):
        raise click.UsageError("--job-name and --all-jobs choose the store's jobs; a CSV has none")
    options: dict[str, Any] = {
        "norm": Norm(norm), "criterion": Criterion(criterion), "split": not no_split, "settings": extra,
        "cluster": {"name": cluster_name} if cluster_name else None, "skip_unfittable": skip_unfittable,
    }  # fmt: skip
    if csv_path is not None:
        profile = profile_from_csv(csv_path)
        model = fit_platform(profile, **options)
    else:  # profile_from_store says what to run when there is no store
        def say(choice: JobChoice) -> None:
            if choice.left_out:
                click.echo(f"fit: {choice.kept} job(s) named {choice.job_name!r}; the store's {choice.left_out} "
                           "other job(s) left out (--all-jobs fits every job)", err=True)  # fmt: skip

        fitted = fit_from_store(
            store_dir or default_store_path(), job_name=job_name, all_jobs=all_jobs, on_choice=say, **options
        )
        model, profile = fitted.model, fitted.profile
    model.save(out)
    click.echo(f"platform model ({norm} norm) -> {out}", err=True)
    click.echo(_plain_table(_line_rows(model)))
    if (handover := handover_note(model)) is not None:
        click.echo(handover, err=True)
    for note in fit_notes(model, profile):
        click.echo(f"warning: {note}", err=True)
    if plot_dir is not None:
        from platform_model.plots import plot_platform

        paths = plot_platform(model, profile, plot_dir, fmt=plot_format)
        click.echo(f"plots: {', '.join(str(p) for p in paths)}", err=True)
    if report:
        rep = accuracy_report(model, profile, folds=folds, norm=Norm(norm), criterion=Criterion(criterion),
                              split=not no_split)
        click.echo(render_markdown(rep, model))


def _key_values(settings: tuple[str, ...]) -> dict[str, str]:
    """``--setting KEY=VALUE`` options as a mapping."""
    extra: dict[str, str] = {}
    for item in settings:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise PlatformModelError(f"--setting expects KEY=VALUE, got {item!r}")
        extra[key.strip()] = value.strip()
    return extra


def _line_rows(model: PlatformModel) -> list[dict[str, Any]]:
    """The fitted lines, one row per phase segment (milliseconds per MiB, breaks in MiB)."""
    rows = []
    mib = float(1 << 20)
    for name, m in model.phases.items():
        for i, s in enumerate(m.segments):
            rows.append({
                "phase": name if i == 0 else "",
                "segment": ("<= break" if i == 0 else "> break") if m.break_bytes is not None else "all",
                "n": s.n,
                "A_ms": round(s.intercept_ms, 3),
                "A_se": round(s.intercept_se, 3),
                "B_ms_per_MiB": round(s.slope_ms_per_byte * mib, 4),
                "B_se": round(s.slope_se * mib, 4),
                "scale_ms": round(s.scale_ms, 3),
                "converged": s.converged,
                "iters": s.iterations,
                "flag": "slope<0 refit at 0" if s.nonneg_refit else "",
                "break_MiB": None if m.break_bytes is None or i else round(m.break_bytes / mib, 2),
                "config_break_MiB": None if m.config_break_bytes is None or i else round(m.config_break_bytes / mib, 2),
            })
    return rows


@click.group()
def platform() -> None:
    """Use a fitted platform model."""


@platform.command("eval")
@click.argument("model_path", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--phase", required=True, help="Generic phase: read, collect, spill, merge, shuffle, write.")
@click.option("--bytes", "data_bytes", required=True, type=SIZE, help="Data the phase processes (5000000, 512M, 1G).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help='Output; json prints one object, {"dur_ms": ...}.')
@handle_errors
def eval_cmd(model_path: Path, phase: str, data_bytes: int, fmt: str) -> None:
    """Print the model's duration (ms) of PHASE processing --bytes of data (eq. 1)."""
    from platform_model.model import PlatformModel

    model = PlatformModel.load(model_path)
    phase = phase.strip().lower()  # as the model and fit --from-csv take it (READ is read)
    if phase not in model.phases:  # a usage error (exit status 2): say what the model has
        why = f" ({model.unfitted[phase]})" if phase in model.unfitted else ""
        raise click.BadParameter(f"the model has no submodel {phase!r}{why}; it has: {', '.join(model.phases)}",
                                 param_hint="--phase")  # fmt: skip
    try:
        dur = model.duration_ms(phase, data_bytes)
    except PlatformModelError as exc:  # a hand-edited line that overflows: name the file
        raise PlatformModelError(f"{model_path}: {exc}") from None
    if fmt == "json":
        click.echo(json.dumps({"dur_ms": dur if math.isfinite(dur) else None}))
    else:
        click.echo(f"{dur:.3f} ms")


@platform.command("show")
@click.argument("model_path", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@format_option
@handle_errors
def show_cmd(model_path: Path, fmt: str) -> None:
    """List a model's submodels: phase, segments, parameters, fitted range."""
    from platform_model.model import PlatformModel

    model = PlatformModel.load(model_path)
    rows = []
    for name, m in model.phases.items():
        for i, s in enumerate(m.segments):
            rows.append({
                "phase": name, "segment": i + 1, "intercept_ms": s.intercept_ms,
                "slope_ms_per_byte": s.slope_ms_per_byte, "scale_ms": s.scale_ms, "n": s.n,
                "data_min_bytes": s.data_min_bytes, "data_max_bytes": s.data_max_bytes,  # the segment's own
                "break_bytes": m.break_bytes, "nonneg_refit": s.nonneg_refit,
            })
    emit(rows, fmt, title=str(model_path))
