"""``phaseline predict`` and ``phaseline whatif``: completion times for a new dataset, side by side."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from phaseline.cli.engine import ENGINES
from phaseline.cli.output import POSITIVE_NUMBER, POSITIVE_SIZE, emit, format_option, handle_errors
from phaseline.errors import PhaselineError, ProfileError
from platform_model.model import PlatformModel
from predict import core
from predict.calibration import COVERAGE, calibration_line, load_calibration
from predict.core import Cluster, PhaseDurationModel
from predict.edits import Edit, Scenario, apply_edits, parse_edit
from predict.settings import setting_field
from predict.side_by_side import predict_side_by_side, shared_assumptions
from predict.whatif import format_figure, whatif, whatif_table
from profiles.merge_runs import merge_profiles, shared_run
from profiles.profile import JobProfile, evidence_line

F = TypeVar("F", bound=Callable[..., Any])


def _scenario_options(func: F) -> F:
    """Options shared by predict and whatif: profile(s), platform, input, cluster, settings."""
    options = [
        click.option(
            "--profile",
            "profiles",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            multiple=True,
            required=True,
            help="Job profile JSON (`phaseline profile`); several runs' profiles are merged.",
        ),
        click.option(
            "--platform",
            type=click.Path(exists=True, dir_okay=False, path_type=Path),
            required=True,
            help="Platform model JSON (`phaseline fit`).",
        ),
        click.option(
            "--input-bytes", type=POSITIVE_SIZE, help="New input size (50G, 512M) [default: the profiled run's]."
        ),
        click.option(
            "--input-records", type=POSITIVE_NUMBER,
            help="New input records [default: by the profiled width]."
        ),
        click.option(
            "--splits", type=click.IntRange(min=1), help="Number of input splits (map tasks) [default: from split size]."
        ),
        click.option(
            "--split-bytes", type=POSITIVE_SIZE, help="Split (block) size [default: the job's config or profile]."
        ),
        click.option("--reduces", type=click.IntRange(min=0), help="Reduce tasks [default: the profiled run's]."),
        click.option(
            "--engine", "target_engine", type=click.Choice(ENGINES), default=None,
            help="The engine of the cluster predicted for [default: not said]; a platform model measured on "
                 "another engine or cluster shape is warned of.",
        ),
    ]
    func = cluster_options(func)
    for option in reversed(options):
        func = option(func)
    return func


#: The parameters of :func:`cluster_options`, in :class:`~predict.core.Cluster`'s order.
CLUSTER_PARAMS = ("nodes", "map_slots_per_node", "reduce_slots_per_node", "cpus_per_node", "disks_per_node")


def cluster_options(func: F) -> F:
    """The cluster's options (predict, whatif, backtest): nodes, slots, CPUs and disks per node."""
    options = [
        click.option("--nodes", type=click.IntRange(min=1), default=1, show_default=True, help="Worker nodes."),
        click.option(
            "--map-slots-per-node", type=click.IntRange(min=1), default=2, show_default=True, help="Map slots per node."
        ),
        click.option(
            "--reduce-slots-per-node", type=click.IntRange(min=1), default=2, show_default=True,
            help="Reduce slots per node."
        ),
        click.option(
            "--cpus-per-node", type=click.IntRange(min=1),
            help="CPUs per node: Vianna's queueing network, and on YARN the simulation's replay, share them; the "
            "other models slow the maps where more run at once on a node than it has cores (the profile's own "
            "sharing taken out).",
        ),
        click.option("--disks-per-node", type=click.IntRange(min=1), help="Disks per node (models that use it)."),
    ]
    for option in reversed(options):
        func = option(func)
    return func


def cluster_from(kw: dict[str, Any]) -> Cluster:
    """The :class:`~predict.core.Cluster` of :func:`cluster_options`' values."""
    return Cluster(*(kw[name] for name in CLUSTER_PARAMS))


def _list_models(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    try:
        for name in core.models():
            doc = core.describe(name).splitlines()
            click.echo(f"{name}\t{doc[0].replace('``', '') if doc else ''}")  # the docstring's RST quoting
    except PhaselineError as exc:
        raise click.ClickException(str(exc)) from exc
    ctx.exit()


def _load_platform(path: Path) -> PhaseDurationModel:
    """Load a platform model written by ``phaseline fit`` (Zhang et al. 2013, section 4)."""
    return PlatformModel.load(path)


def _scenario(profile: JobProfile, kw: dict[str, Any]) -> Scenario:
    cluster = dataclasses.replace(cluster_from(kw), engine=kw["target_engine"])
    return Scenario.for_profile(
        profile,
        cluster,
        input_bytes=kw["input_bytes"],
        input_records=kw["input_records"],
        splits=kw["splits"],
        split_bytes=kw["split_bytes"],
        reduces=kw["reduces"],
    )


def _load_profiles(paths: Sequence[Path]) -> JobProfile:
    """The profiles at ``paths``, merged; a run in two of them (one file given twice, or a copy of
    it) is refused by name, as :func:`merge_profiles` would refuse it, counted twice."""
    loaded = [JobProfile.load(p) for p in paths]
    if (shared := shared_run(loaded)) is not None:
        job, first, second = shared
        where = "given twice" if paths[second] == paths[first] else f"in {paths[first]} too"
        raise ProfileError(
            f"{paths[second]}: run {job} is {where}; merged, it would count twice (give each run's profile once)"
        )
    return merge_profiles(loaded)


def _refuse_two_split_rules(scenario: Scenario, edits: Sequence[Edit], kw: dict[str, Any]) -> None:
    """A usage error when the scenario has a split count (--splits, or --set splits=N) and a split size
    was given too (--split-bytes, or --set split_bytes=/dfs.blocksize=/...): the count decides the splits,
    so the size would be ignored."""
    sized = [e.label for e in edits if setting_field(e.key) == "split_bytes"]
    if kw["split_bytes"] is not None:
        sized.insert(0, "--split-bytes")
    if scenario.dataset.splits is not None and sized:
        raise click.UsageError(
            f"give the split count (--splits, or --set splits=N) or the split size ({sized[0]}), not both "
            "(the one sets the other)"
        )


def _inputs(kw: dict[str, Any]) -> tuple[JobProfile, PhaseDurationModel, Scenario]:
    if kw["splits"] is not None and kw["split_bytes"] is not None:  # one sets the other: which one wins?
        raise click.UsageError("give --splits or --split-bytes, not both (the one sets the other)")
    profile = _load_profiles(kw["profiles"])
    return profile, _load_platform(kw["platform"]), _scenario(profile, kw)


def _model_names(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> tuple[str, ...]:
    """``--model a,b`` as ``--model a --model b``; a name no model has is a usage error (exit status 2)."""
    names = tuple(dict.fromkeys(n.strip() for value in values for n in value.split(",") if n.strip()))  # once each
    known = core.models()
    unknown = [n for n in names if n != "all" and n not in known]
    if unknown:
        raise click.BadParameter(f"no model {', '.join(map(repr, unknown))}; the models: all, {', '.join(known)}")
    return names


def _one_model_name(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """One registered model's name; another is a usage error (exit status 2), as ``predict --model``'s."""
    if value not in core.models():
        raise click.BadParameter(f"no model {value!r}; the models: {', '.join(core.models())}")
    return value


@click.command()
@_scenario_options
@click.option("--set", "sets", multiple=True, metavar="KEY=VALUE",
              help="A Hadoop setting (io.sort.mb=256); a value with a leading + or - is relative (reduces=+2).")
@click.option(
    "--model",
    "model_names",
    multiple=True,
    callback=_model_names,
    metavar="all|NAME[,NAME...]",
    help="Models to run (repeatable, or comma separated) [default: all]; --list-models lists them.",
)
@click.option(
    "--list-models",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_list_models,
    help="List the registered models and exit.",
)
@click.option(
    "--calibration",
    "calibration_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A backtest of this cluster (a suite's backtest.json, or `phaseline backtest --format json`): "
    f"each model's interval widened by its backtested errors to cover a like application with probability "
    f"{COVERAGE:.0%}, or what the backtest's applications allow (calibrated_low_s, calibrated_high_s, "
    "calibrated_promise), beside its backtested error (median, worst).",
)
@format_option
@handle_errors
def predict(
    sets: tuple[str, ...], model_names: tuple[str, ...], calibration_file: Path | None, fmt: str, **kw: Any
) -> None:
    """Predict a profiled job's completion time on a new input and cluster, with every model side by side.

    The completion time is ARIA's: first task attempt start to last attempt
    finish, as the profile's makespans are measured; the job's submission and
    setup before its first task (in `phaseline jobs`' duration_s) are not in
    it.  The local engine is one node with its map and reduce parallelism as slots.
    With --calibration, every model also gets an interval from its errors in a
    backtest (split conformal prediction, Lei et al. 2018).
    """
    profile, platform, scenario = _inputs(kw)
    edits = [parse_edit(s) for s in sets]
    scenario = apply_edits(scenario, edits, profile)
    _refuse_two_split_rules(scenario, edits, kw)  # --set may give what --splits/--split-bytes would
    calibration = None if calibration_file is None else load_calibration(calibration_file)
    rows = predict_side_by_side(model_names, profile, platform, scenario, calibration)
    if fmt == "json":
        emit(rows, fmt)
        return
    columns = ("model", "seconds", "low_s", "high_s") + (() if calibration is None else CALIBRATED)
    table = [
        {k: (round(r[k], 3) if isinstance(r[k], float) else r[k]) for k in columns}
        | ({} if calibration is None else {"backtested": _backtested(r)})
        | {"note": r["error"] or ""}
        for r in rows
    ]
    emit(
        table, fmt, title=f"{profile.source.job_name or profile.source.job_ids[0]}: predicted completion time"
    )
    if fmt == "table":
        click.echo(f"  seconds: {COMPLETION_TIME}")
        click.echo(f"  profile: {evidence_line(profile)}")
        if calibration is not None:
            click.echo(f"  calibrated: {calibration_line(calibration)}")
        elif any(r["low_s"] is not None for r in rows):
            click.echo(f"  intervals: {UNCALIBRATED}")
        for who, note in shared_assumptions(rows):
            click.echo(f"  {who}: {note}")


#: The columns --calibration adds (:func:`predict.side_by_side.predict_side_by_side`'s keys).
CALIBRATED = ("calibrated_low_s", "calibrated_high_s")


def _backtested(row: dict[str, Any]) -> str:
    """A model's backtested error as the table shows it: median (worst) over its cases."""
    if row.get("backtest_cases") is None:
        return "not in the backtest"
    return f"{row['backtest_median_error']:.1%} (worst {row['backtest_worst_error']:.1%}), {row['backtest_cases']} cases"


#: What low_s/high_s are without --calibration, said under the table.
UNCALIBRATED = (
    "low_s-high_s hold the profiled runs' spread, not the model's own errors; --calibration BACKTEST (a backtest "
    "of this cluster) widens every model's by its backtested errors"
)

#: What a predicted time spans, said under the table (the profile's makespans span the same).
COMPLETION_TIME = (
    "first task start to last task finish (ARIA's completion time; `phaseline jobs` counts from submission)"
)


@click.command("whatif")
@_scenario_options
@click.option(
    "--set",
    "sets",
    multiple=True,
    required=True,
    metavar="EDIT",
    help="A change: KEY=VALUE (io.sort.mb=256, reduces=240, nodes=+4), 'compress map output', 'N more nodes'.",
)
@click.option("--model", "model_name", default="herodotou", show_default=True, callback=_one_model_name,
              help="Model that prices them.")
@format_option
@handle_errors
def whatif_cmd(sets: tuple[str, ...], model_name: str, fmt: str, **kw: Any) -> None:
    """Answer configuration questions: time and dataflow (spills, merge passes, shuffle files) per scenario."""
    profile, platform, scenario = _inputs(kw)
    rows = whatif(profile, platform, scenario, [parse_edit(s) for s in sets], model=model_name)
    table = whatif_table(rows)
    if fmt == "table":
        table = [
            {k: v if k == "figure" else format_figure(str(r["figure"]), v) for k, v in r.items()}
            for r in table
        ]
    emit(table, fmt, title=f"what if ({model_name})")


__all__ = ["predict", "whatif_cmd"]
