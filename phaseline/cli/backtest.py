"""``phaseline backtest``: how far off is every model on runs the store has measured."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from phaseline.cli.engine import ENGINES, cluster_shape
from phaseline.cli.output import emit, format_option, handle_errors, open_store, read_store_option
from phaseline.cli.predict import CLUSTER_PARAMS, cluster_from, cluster_options
from predict.suite import FULL, QUICK, Suite, local_suite

if TYPE_CHECKING:
    import duckdb

    from phaseline.store import PartitionFilter, Store
    from platform_model.engine.yarn import ClusterShape
    from platform_model.model import PlatformModel
    from predict.backtest import BacktestRow
    from predict.core import Cluster


def _sizes(value: str | None) -> tuple[float, ...] | None:
    """``--sizes 16,32,64``: positive MiB, in the order given (None: the suite's own)."""
    if value is None:
        return None
    try:
        sizes = tuple(float(part) for part in value.split(","))
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of MiB (e.g. 16,32,64)") from None
    if not all(0 < s < float("inf") for s in sizes):
        raise click.BadParameter(f"{value!r}: every size must be a positive number of MiB")
    return sizes


def _bench_platform(store: Store, con: duckdb.DuckDBPyConnection) -> PlatformModel:
    """The platform model fitted from the store's microbenchmark runs (as `phaseline fit` would from them alone)."""
    from phaseline.errors import InsufficientDataError
    from platform_model.store_fit import fit_bench_runs

    try:
        fitted = fit_bench_runs(store.root, con=con)
    except InsufficientDataError as exc:
        raise click.UsageError(
            f"no --platform given and {exc}: pass --platform FILE (`phaseline fit`), or run `phaseline bench run` "
            "into this store"
        ) from None
    click.echo(
        f"platform model: fitted from the store's {fitted.choice.kept} microbenchmark run(s) "
        f"({fitted.choice.job_name}); their own cases, if backtested, are in-sample",
        err=True,
    )
    for phase, reason in fitted.model.unfitted.items():
        click.echo(f"platform model: {phase} {reason}; priced from each job's profiled span", err=True)
    return fitted.model


def _mib(sizes: tuple[float, ...]) -> str:
    return ",".join(f"{s:g}" for s in sizes)


_JSON_COLUMNS = ("job", "case", "model", "predicted_s", "measured_s", "error", "low_s", "high_s", "covered")

@click.command("backtest")
@read_store_option
@click.option(
    "--platform",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Platform model JSON (`phaseline fit`) [default: fitted from the store's microbenchmark runs].",
)
@click.option(
    "--suite",
    type=click.Choice(["local"]),
    help=f"Run the local suite for real first ({len(FULL.apps)} Java apps on the engine), then backtest it.",
)
@click.option(
    "--quick",
    is_flag=True,
    help=f"With --suite: the reduced suite CI runs ({len(QUICK.apps)} apps, {len(QUICK.sizes_mb)} sizes).",
)
@click.option(
    "--sizes",
    "sizes",
    callback=lambda _ctx, _param, value: _sizes(value),
    metavar="MIB,...",
    help=f"With --suite: the applications' input sizes in MiB [default: the suite's, {_mib(FULL.sizes_mb)} "
    f"(--quick: {_mib(QUICK.sizes_mb)})].",
)
@click.option(
    "--apps",
    "apps",
    callback=lambda _ctx, _param, value: None if value is None else tuple(p.strip() for p in value.split(",")),
    metavar="NAME,...",
    help="With --suite: only these applications (e.g. the held-out ones on another engine) "
    "[default: every one of the suite's].",
)
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    help=f"With --suite: runs per case, each case measured as their median [default: the suite's, {FULL.repeats} "
    f"(--quick: {QUICK.repeats})]; more runs lower the noise floor the summary reports.",
)
@click.option(
    "--maps",
    type=click.IntRange(min=1),
    help="With --suite: every run with this many maps whatever its size, so that the splits grow with the "
    "input (`engine run`'s default is 4) [default: one map per 2 MiB, the splits as profiled].",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=Path("phaseline-backtest"),
    show_default=True,
    help="With --suite: directory for the runs, the suite's store and backtest.json (resumable).",
)
@cluster_options
@click.option("--engine", type=click.Choice(ENGINES), default=ENGINES[0], show_default=True,
              help="With --suite: where the runs run; yarn: a mini YARN cluster of --nodes (default 2 there) x "
                   "--containers-per-node.")
@click.option("--containers-per-node", type=click.IntRange(min=1), default=2, show_default=True,
              help="With --suite --engine yarn: containers per NodeManager.")
@click.option("--container-mb", type=click.IntRange(min=1), default=512, show_default=True,
              help="With --suite --engine yarn: memory of a container.")
@click.option("--summary", is_flag=True, help="Print per-model median/worst error and coverage instead, and the coverage of every model's "
              "interval calibrated on other rows (`predict --calibration`): for the local suite's runs on its "
              "tuning applications (and, as loao_calibrated_coverage, on every other application), for other jobs "
              "on every other job's rows (leave one job out).")
@click.option(
    "--by",
    "by",
    type=click.Choice(["set", "extent", "shape", "slots"]),
    multiple=True,
    default=("set", "extent", "slots"),
    show_default=True,
    help="With --summary: also each group's summary, with its own noise floor: set (held-out / tuning "
    "applications of the suite), extent (interpolation / extrapolation past the profiled size), shape, "
    "slots (profiled on the case's own map slots / on other ones).",
)
@click.option(
    "--side-by-side",
    "side_by_side",
    multiple=True,
    metavar="ENGINE=FILE",
    help="Instead: two or more engines' backtests (each a suite's backtest.json, e.g. local-hadoop=A/backtest.json "
    "yarn=B/backtest.json, the option once per engine) scored side by side over the cases all ran, per model, "
    "held-out set first.",
)
@format_option
@handle_errors
def backtest_cmd(
    store_dir: Path | None,
    where: PartitionFilter,
    platform: Path | None,
    suite: str | None,
    quick: bool,
    sizes: tuple[float, ...] | None,
    apps: tuple[str, ...] | None,
    repeats: int | None,
    maps: int | None,
    out_dir: Path,
    engine: str,
    containers_per_node: int,
    container_mb: int,
    summary: bool,
    by: tuple[str, ...],
    side_by_side: tuple[str, ...],
    fmt: str,
    **cluster: int | None,
) -> None:
    """Predict every measured run from the profile of the job's smallest run; print the errors.

    Jobs with runs at several input sizes, map counts or reduce counts are
    backtested: each case (same size, maps and reduces) is measured as the
    median of its runs, predicted by every model; error = (predicted -
    measured) / measured (Zhang et al. 2013, Figures 4 and 5).  measured_s is
    ARIA's completion time: first task attempt start to last attempt finish
    (job setup and commit aside, so a little under `jobs`' duration_s).  Runs
    named alike that differ in map selectivity are warned of: other data
    under one name.

    LocalJobRunner runs are predicted on their one node and slots.  Runs from
    a real cluster need its size (--nodes, --map-slots-per-node,
    --reduce-slots-per-node, as `phaseline predict` has them): with any of
    them every run is predicted on that cluster, the options not given at
    their defaults; without, such runs are skipped, and said to be.  What cannot be backtested (no input size, a
    run that cannot be profiled, a model that cannot predict a case) is listed
    on stderr as `skipped: ...`; nothing left to backtest is an error in every
    output format.
    """
    from predict.backtest_scores import require_rows

    if side_by_side:
        _render_engines(side_by_side, fmt)
        return
    ctx = click.get_current_context()
    # the cluster options given (any: every run is predicted on that cluster, the others at their defaults)
    cluster_given = [
        p.opts[0] for p in ctx.command.params
        if p.name in CLUSTER_PARAMS and ctx.get_parameter_source(p.name) is not click.core.ParameterSource.DEFAULT
    ]  # fmt: skip
    if suite is not None:
        yarn_nodes = cluster["nodes"] if "--nodes" in cluster_given else 2
        cluster_given = [opt for opt in cluster_given if not (engine == "yarn" and opt == "--nodes")]
        _refuse_with_suite(ctx, platform, out_dir, cluster_given)
        chosen = local_suite(quick=quick, sizes_mb=sizes, repeats=repeats, apps=apps, maps=maps)
        shape = cluster_shape(engine, int(yarn_nodes or 2), containers_per_node, container_mb)
        rows, skipped = _suite_rows(chosen, out_dir, engine, shape)
    else:
        out_given = ctx.get_parameter_source("out_dir") is click.core.ParameterSource.COMMANDLINE
        given = [name for name, v in (("--quick", quick), ("--sizes", sizes), ("--apps", apps), ("--repeats", repeats),
                                      ("--maps", maps), ("--out", out_given)) if v]  # fmt: skip
        if given:
            raise click.UsageError(f"{given[0]} goes with --suite local")
        rows, skipped = _store_rows(store_dir, where, platform, cluster_from(cluster) if cluster_given else None)
    for note in skipped:
        click.echo(f"skipped: {note}", err=True)
    require_rows(rows)  # the same error whatever the format: an empty JSON list had exited 0
    _render(rows, summary, by, fmt)


def _refuse_with_suite(ctx: click.Context, platform: Path | None, out_dir: Path, cluster_given: list[str]) -> None:
    """The options that go without --suite: the suite keeps its own store, platform model and cluster."""
    given_store = ctx.get_parameter_source("store_dir")
    if given_store is click.core.ParameterSource.COMMANDLINE:  # PHASELINE_STORE may be set: not an error
        raise click.UsageError(f"--store goes without --suite: the suite keeps its runs' store under --out ({out_dir})")
    if ctx.params.get("where"):
        raise click.UsageError(f"--partition goes without --suite: the suite keeps its runs' store under --out ({out_dir})")
    if platform is not None:  # the suite fits its own from the microbenchmark runs it makes
        raise click.UsageError(
            "--platform goes without --suite: the suite fits its platform model from its own "
            f"microbenchmark runs (under --out, {out_dir}); backtest a store with --store and --platform"
        )
    if cluster_given:
        raise click.UsageError(
            f"{cluster_given[0]} goes without --suite: the suite runs on the LocalJobRunner, one node "
            "with its own slots, or on a YARN cluster of --nodes x --containers-per-node"
        )


def _suite_rows(
    chosen: Suite, out_dir: Path, engine: str, shape: ClusterShape | None
) -> tuple[list[BacktestRow], list[str]]:
    """Run the ``chosen`` suite (resumable under ``out_dir``) and backtest it: its rows and what it skipped."""
    from predict.backtest_suite import run_suite

    result = run_suite(chosen, out_dir, progress=lambda msg: click.echo(msg, err=True), engine=engine,
                       shape=shape)  # fmt: skip
    return list(result.rows), list(result.skipped)


def _store_rows(
    store_dir: Path | None, where: PartitionFilter, platform: Path | None, cluster: Cluster | None
) -> tuple[list[BacktestRow], list[str]]:
    """Backtest the runs a store holds: its rows and what it skipped."""
    from platform_model.model import PlatformModel
    from predict.backtest import backtest

    skipped: list[str] = []
    store = open_store(store_dir, where=where)
    con = store.connect()
    model = PlatformModel.load(platform) if platform is not None else _bench_platform(store, con)
    return backtest(con, model, cluster=cluster, skipped=skipped), skipped


def _render(rows: list[BacktestRow], summary: bool, by: tuple[str, ...], fmt: str) -> None:
    """The rows as an error table, their JSON contract, or (``summary``) every group's summary."""
    from predict.backtest_scores import error_table, job_out_calibration
    from predict.backtest_suite import summarize_groups, tuning_calibration

    if summary:  # every model's calibrated interval scored on rows it was not calibrated on
        tuning = tuning_calibration(rows)  # a suite's: beside it, every application calibrated on the others
        loao = job_out_calibration(rows)
        pairs = summarize_groups(rows, by, tuning or loao, loao if tuning is not None else None)
        summaries = [{"group": group, **s.to_dict()} for group, s in pairs]
        if fmt == "table":  # shares as percentages; JSON and CSV keep the numbers
            summaries = [
                {k: f"{v:.1%}" if isinstance(v, float) else ("–" if v is None else v) for k, v in s.items()}
                for s in summaries
            ]
        emit(summaries, fmt, title="backtest summary (errors, coverage and spreads as shares)")
    elif fmt == "json":
        emit([{k: r.to_dict()[k] for k in _JSON_COLUMNS} for r in rows], fmt)
    else:
        table = error_table(rows)
        if fmt == "table":  # errors as signed percentages; CSV keeps the shares
            table = [{k: (("n/a" if v is None else f"{v:+.1%}") if k.endswith("_err") else v) for k, v in line.items()}
                     for line in table]  # fmt: skip
        emit(table, fmt, title="backtest: predicted vs measured (median of runs)")


def _render_engines(pairs: tuple[str, ...], fmt: str) -> None:
    """``--side-by-side ENGINE=FILE ...``: each engine's per-model summary over the cases all ran."""
    from predict.backtest_engines import load_rows, side_by_side

    engines = {}
    for pair in pairs:
        engine, sep, path = pair.partition("=")
        if not sep or not engine or not path:
            raise click.BadParameter(f"{pair!r} is not ENGINE=FILE (e.g. yarn=phaseline-backtest/backtest.json)",
                                     param_hint="--side-by-side")  # fmt: skip
        engines[engine] = load_rows(Path(path))
    rows = [s.to_dict() for s in side_by_side(engines)]
    if fmt == "table":  # shares as percentages; JSON and CSV keep the numbers
        rows = [{k: f"{v:.1%}" if isinstance(v, float) else ("–" if v is None else v) for k, v in r.items()}
                for r in rows]  # fmt: skip
    emit(rows, fmt, title="backtest side by side: each engine over the cases all ran (shares)")
