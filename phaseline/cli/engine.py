"""``phaseline engine run``: one MapReduce job, for real, on Hadoop's LocalJobRunner or a mini YARN cluster."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from phaseline.cli.output import POSITIVE_NUMBER, emit, format_option, handle_errors, number_at_least

if TYPE_CHECKING:
    from platform_model.engine.runner import EngineRun


def _parse_defines(defines: tuple[str, ...]) -> dict[str, str]:
    conf: dict[str, str] = {}
    for item in defines:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"expects KEY=VALUE, got {item!r}", param_hint="-D")
        conf[key.strip()] = value
    return conf


F = TypeVar("F", bound=Callable[..., Any])
ENGINES = ("local-hadoop", "yarn")  # platform_model.engine.session.ENGINES (not imported: CLI start-up)


def engine_options(func: F) -> F:
    """``--engine``, ``--nodes``, ``--containers-per-node``, ``--container-mb`` (the YARN cluster's shape)."""
    options = [
        click.option("--engine", type=click.Choice(ENGINES), default=ENGINES[0], show_default=True,
                     help="local-hadoop: LocalJobRunner, one JVM; yarn: a mini YARN cluster on this machine, "
                          "each task in its own container (`phaseline engine install-yarn` first)."),
        click.option("--nodes", type=click.IntRange(min=1), default=2, show_default=True,
                     help="With --engine yarn: NodeManagers."),
        click.option("--containers-per-node", type=click.IntRange(min=1), default=2, show_default=True,
                     help="With --engine yarn: containers (slots) per NodeManager."),
        click.option("--container-mb", type=click.IntRange(min=1), default=512, show_default=True,
                     help="With --engine yarn: memory of a container (task JVM heap: 0.8 of it)."),
    ]  # fmt: skip
    for option in reversed(options):
        func = option(func)
    return func


def cluster_shape(engine: str, nodes: int, containers_per_node: int, container_mb: int) -> Any:
    """The YARN cluster's shape for ``--engine yarn`` (None for the local engine); a usage error if given alone."""
    ctx = click.get_current_context()
    if engine != "yarn":
        names = [p.name for p in ctx.command.params if p.name in ("nodes", "containers_per_node", "container_mb")]
        if ctx.command.name == "backtest":
            names.remove("nodes")  # backtest's --nodes is also the cluster a store's runs are predicted on
        given = [f"--{n.replace('_', '-')}" for n in names
                 if ctx.get_parameter_source(n) is click.core.ParameterSource.COMMANDLINE]  # fmt: skip
        if given:
            raise click.UsageError(f"{given[0]} goes with --engine yarn")
        return None
    from platform_model.engine.yarn import ClusterShape

    return ClusterShape(nodes, containers_per_node, container_mb)


@click.group()
def engine() -> None:
    """Run MapReduce jobs on the local Hadoop engine or a mini YARN cluster (needs phaseline[engine], a JDK 17)."""


@engine.command("install-yarn")
@click.option("--force", is_flag=True, help="Fetch again even if installed.")
@handle_errors
def install_yarn_cmd(force: bool) -> None:
    """Fetch the mini YARN cluster's jars with Maven (hadoop-minicluster at the client jars' Hadoop version).

    They go to ~/.cache/phaseline/yarn-<version>/jars (PHASELINE_CACHE moves it); `mvn` must be on PATH.
    """
    from platform_model.engine.yarn_jars import install_yarn

    jars = install_yarn(force=force)
    click.echo(f"{jars}: {len(list(jars.glob('*.jar')))} jars")


@engine.command("run", context_settings={"show_default": True})
@click.option(
    "--out",
    "out",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Run directory to create (must not exist or be empty).",
)
@click.option(
    "--input-mb",
    type=POSITIVE_NUMBER,
    default=8.0,
    help="Total input, MiB of 100-byte TeraGen-like records.",
)
@click.option(
    "--selectivity",
    type=number_at_least(0.0),
    default=1.0,
    help="Map selectivity M_sel: output records per input record.",
)
@click.option("--maps", type=click.IntRange(min=1), default=4, help="Map tasks (one input file each).")
@click.option("--reduces", type=click.IntRange(min=0), default=1, help="Reduce tasks.")
@click.option(
    "--map-parallelism",
    type=click.IntRange(min=1),
    default=1,
    help="Maps run at once (mapreduce.local.map.tasks.maximum).",
)
@click.option(
    "--reduce-parallelism",
    type=click.IntRange(min=1),
    default=1,
    help="Reduces run at once (mapreduce.local.reduce.tasks.maximum).",
)
@click.option(
    "--io-sort-mb",
    type=click.IntRange(min=1),
    default=None,
    help="Map-side sort buffer, MiB (mapreduce.task.io.sort.mb).",
)
@click.option(
    "--sort-factor",
    type=click.IntRange(min=2),
    default=None,
    help="Streams merged at once (mapreduce.task.io.sort.factor).",
)
@click.option(
    "--reduce-memory-mb",
    type=click.IntRange(min=1),
    default=None,
    help="Reduce-side memory, MiB (mapreduce.reduce.memory.totalbytes).",
)
@click.option(
    "-D",
    "defines",
    multiple=True,
    metavar="KEY=VALUE",
    help="Any Hadoop setting, e.g. -D mapreduce.reduce.shuffle.input.buffer.percent=0.2 (repeatable).",
)
@click.option(
    "--seed", type=int, default=0, help="Seed of the input generator and the fractional selectivity."
)
@click.option("--jfr", is_flag=True, help="Record a JDK Flight Recorder recording (recording.jfr).")
@click.option("--keep-data", is_flag=True, help="Keep input, output, staging and temp dirs.")
@click.option(
    "--warmup-mb",
    type=number_at_least(0.0),
    default=0.0,
    show_default=True,
    help="First run a throwaway job of this size in the same JVM (warm JIT), kept out of the run.",
)
@click.option(
    "--warmup-app",
    is_flag=True,
    help="With --jar and --warmup-mb: the warm-up also runs your driver once on the warm-up input.",
)
@click.option(
    "--jar",
    type=click.Path(dir_okay=False, exists=True, path_type=Path),
    default=None,
    help="Run your own job from this jar (with --class).",
)
@click.option("--class", "main_class", default=None, help="Driver class of --jar (its main() or Tool).")
@click.option(
    "--input",
    "input_path",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="With --jar: use this input instead of generated records.",
)
@click.option(
    "--timeout", "timeout_s", type=number_at_least(1.0), default=900.0, help="Seconds before giving up."
)
@engine_options
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@format_option
@handle_errors
def run(
    out: Path,
    input_mb: float,
    selectivity: float,
    maps: int,
    reduces: int,
    map_parallelism: int,
    reduce_parallelism: int,
    io_sort_mb: int | None,
    sort_factor: int | None,
    reduce_memory_mb: int | None,
    defines: tuple[str, ...],
    seed: int,
    jfr: bool,
    keep_data: bool,
    warmup_mb: float,
    warmup_app: bool,
    jar: Path | None,
    main_class: str | None,
    input_path: Path | None,
    timeout_s: float,
    engine: str,
    nodes: int,
    containers_per_node: int,
    container_mb: int,
    args: tuple[str, ...],
    fmt: str,
) -> None:
    """Run one job for real and write its run directory (conf, logs, counters, JFR).

    Without --jar this is phaseline's microbenchmark (Zhang et al. 2013, sec. 3):
    seeded 100-byte records, a map emitting them at --selectivity, an identity
    reduce.  With --jar JAR --class MAIN your driver runs instead, with the
    arguments after `--` ({input} and {output} are replaced by the run's input
    and output directories; default: `{input} {output}`).  LocalJobRunner starts
    reduces only after every map has finished.  With --engine yarn the job runs on a
    mini YARN cluster of --nodes x --containers-per-node containers, and the run
    directory holds the .jhist and _conf.xml from its history server and the
    `yarn logs` output of the application (logs/<application_id>.log).
    """
    from platform_model.engine import EngineJob, run_engine

    shape = cluster_shape(engine, nodes, containers_per_node, container_mb)
    _check_run_options(shape is not None, jfr, warmup_mb, warmup_app, jar is not None, bool(args), input_path)
    job = EngineJob(
        input_mb=input_mb,
        selectivity=selectivity,
        maps=maps,
        reduces=reduces,
        map_parallelism=map_parallelism,
        reduce_parallelism=reduce_parallelism,
        io_sort_mb=io_sort_mb,
        sort_factor=sort_factor,
        reduce_memory_mb=reduce_memory_mb,
        hadoop_conf=_parse_defines(defines),
        jfr=jfr,
        seed=seed,
        jar=jar,
        main_class=main_class,
        args=args,
        keep_data=keep_data,
        input_path=input_path,
        warmup_mb=warmup_mb,
        warmup_app=warmup_app,
    )
    if shape is None:
        result = run_engine(job, out, timeout_s=timeout_s)
    else:
        from platform_model.engine.yarn import run_on_yarn

        result = run_on_yarn(job, out, shape, timeout_s=timeout_s)
    _render_run(result, fmt)


def _check_run_options(
    on_yarn: bool, jfr: bool, warmup_mb: float, warmup_app: bool, user_jar: bool, args: bool, input_path: Path | None
) -> None:
    """The usage errors of ``engine run``: options that go only with the LocalJobRunner or a user's job."""
    if on_yarn and (jfr or warmup_mb > 0):
        raise click.UsageError("--jfr and --warmup-mb go with --engine local-hadoop (one JVM for every task)")
    if args and not user_jar:
        raise click.UsageError("arguments after -- are for a user's job (--jar JAR --class MAIN)")
    if input_path is not None and not user_jar:
        raise click.UsageError("--input is for a user's job (--jar JAR --class MAIN); the microbenchmark "
                               "generates its input")  # fmt: skip
    if warmup_app and (not user_jar or warmup_mb <= 0):
        raise click.UsageError("--warmup-app needs a user's job (--jar JAR --class MAIN) and --warmup-mb > 0")


def _render_run(result: EngineRun, fmt: str) -> None:
    """The run's directory, job, status, times and main task counters, as one row."""
    from phaseline.hadoop_names import TASK_COUNTER_GROUP

    counters = result.counters.get(TASK_COUNTER_GROUP, {})
    emit(
        [
            {
                "run_dir": str(result.run_dir),
                "job_id": result.job_id,
                "status": result.status,
                "wall_ms": result.wall_ms,
                "job_ms": result.job_ms,
                "map_input_records": counters.get("MAP_INPUT_RECORDS"),
                "map_output_records": counters.get("MAP_OUTPUT_RECORDS"),
                "spilled_records": counters.get("SPILLED_RECORDS"),
                "reduce_output_records": counters.get("REDUCE_OUTPUT_RECORDS"),
            }
        ],
        fmt,
        title="engine run",
    )


@engine.command("jar")
@handle_errors
def jar_path() -> None:
    """Print the path of the microbenchmark's jar, for `hadoop jar` on a real cluster.

    \b
    hadoop jar JAR phaseline.engine.TeraRecordGen IN_DIR RECORDS FILES SEED
    hadoop jar JAR phaseline.engine.PhaselineBench -D phaseline.bench.selectivity=1.4 \\
        -D mapreduce.job.reduces=5 -D mapreduce.input.fileinputformat.split.minsize=BYTES IN_DIR OUT_DIR
    """
    from platform_model.engine.runner import engine_jar

    click.echo(str(engine_jar()))
