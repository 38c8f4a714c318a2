"""``phaseline mva``: solve the Vianna et al. 2013 queuing model from measured service demands."""

from __future__ import annotations

import enum
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from phaseline.cli.output import handle_errors
from predict.vianna.layout import Formulation, Workload, busy_nodes
from predict.vianna.model import Estimate, Overlap, read_demands, solve
from predict.vianna.qnsim import MAX_VISITS, simulate_network

# Bounds past which an option is a usage error.  --nodes, --pm, --pr and --ps have none: nodes, threads
# and shuffle lanes past one per task hold no task and are left idle (10^11 nodes had asked for arrays
# that long).  The timeline walks the shuffle-sorts of every map (300,000 maps on as many nodes: 49 s),
# so --maps and --reduces stop at a million; --cpus, --disks and --jobs multiply the servers and the
# load as floats (10^400 of them was an OverflowError), and stop at a million too.  --simulate past
# the simulator's visit budget could never run (10^400 replications overflowed its refusal), and numpy's
# seeds are >= 0 (-1 was a ValueError).
#: Most map (reduce) tasks of one job.
MAX_TASKS = 1_000_000
#: Most CPUs (disks) per node, and concurrent jobs.
MAX_SERVERS = 1_000_000

F = TypeVar("F", bound=Callable[..., Any])


def _choice_option(flag: str, default: enum.Enum, help_text: str) -> Callable[[F], F]:
    """An option choosing one value of ``default``'s enum, ``default`` unless given."""
    return click.option(
        flag,
        type=click.Choice([member.value for member in type(default)]),
        default=default.value,
        show_default=True,
        help=help_text,
    )


@click.command("mva")
@click.option(
    "--demands",
    "demands_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="CSV 'task,<device>,...' with rows map, shuffle_sort, merge (seconds), like Table 2.",
)
@click.option("--nodes", type=click.IntRange(min=1), required=True, help="Nodes n (past one per task, idle).")
@click.option("--cpus", type=click.IntRange(min=1, max=MAX_SERVERS), required=True, help="CPUs per node c.")
@click.option("--disks", type=click.IntRange(min=1, max=MAX_SERVERS), required=True, help="Disks per node d.")
@click.option("--maps", type=click.IntRange(min=1, max=MAX_TASKS), required=True, help="Map tasks m.")
@click.option("--reduces", type=click.IntRange(min=0, max=MAX_TASKS), required=True, help="Reduce tasks r (0: map-only).")
@click.option("--pm", type=click.IntRange(min=1), required=True, help="Map threads per node.")
@click.option("--pr", type=click.IntRange(min=1), required=True, help="Reduce threads per node.")
@click.option("--ps", type=click.IntRange(min=1), required=True, help="Parallel shuffle-sorts per reduce (past --maps, idle).")
@click.option(
    "--jobs", type=click.IntRange(min=1, max=MAX_SERVERS), default=1, show_default=True, help="Concurrent jobs (MPL N)."
)
@click.option(
    "--slowstart",
    type=click.FloatRange(min=0.0, max=1.0),
    help="Share of the maps done before the reduces start (Hadoop's mapreduce.job.reduce.slowstart."
    "completedmaps; LocalJobRunner: 1) [default: the paper's rule, a reduce's first shuffle-sort at the "
    "first map's end].",
)
@_choice_option(
    "--estimate",
    Estimate.FORKJOIN,
    "P_A estimate: fork/join (H_k x max, k distinct branches: identical tasks side by side are one "
    "branch, the reading that reproduces the paper's Table 4; --simulate shows their spread) or Tripathi "
    "(Erlang/hyperexponential maximum).",
)
@_choice_option("--formulation", Formulation.CLASS, "Symmetric tasks as classes (fast) or one class per task (the paper's).")
@_choice_option(
    "--overlap", Overlap.JOB, "Intra-job overlap alpha_ij per job response time (reproduces the paper) or per task."
)
@click.option(
    "--simulate",
    "replications",
    type=click.IntRange(min=2, max=int(MAX_VISITS)),
    help="Also simulate the same queuing network task by task, this many replications "
    "(the paper's section 5.1 reference; one job).",
)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of --simulate.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@handle_errors
def mva(
    demands_path: Path,
    nodes: int,
    cpus: int,
    disks: int,
    maps: int,
    reduces: int,
    pm: int,
    pr: int,
    ps: int,
    jobs: int,
    slowstart: float | None,
    estimate: str,
    formulation: str,
    overlap: str,
    replications: int | None,
    seed: int,
    fmt: str,
) -> None:
    """Mean job response time, throughput and utilizations (Vianna et al. 2013: precedence tree + aMVA).

    JSON output is one array holding one object (as every --format json does):
    response_time_s, throughput_per_s, utilization (an object: per device
    type), queue_length, task_response_s, iterations, converged, busy_nodes
    (the nodes that hold a task, max(--maps, --reduces) at most: the model is
    solved on them, the others idle, and utilizations are theirs).
    """
    if replications is not None and jobs > 1:
        raise click.UsageError("--simulate runs one job at a time: leave out --jobs, or --simulate")
    if replications is not None and reduces == 0:
        raise click.UsageError("--simulate simulates a job with reduces: give --reduces 1 or more, or leave out --simulate")
    busy = busy_nodes(nodes, maps, reduces)  # the others idle (--nodes 10^11 had been a MemoryError)
    work = Workload(busy, cpus, disks, maps, reduces, pm, pr, ps, jobs, slowstart=slowstart)
    demands = read_demands(demands_path, map_only=reduces == 0)
    sol = solve(
        demands, work, estimate=Estimate(estimate), formulation=Formulation(formulation), overlap=Overlap(overlap)
    )
    simulated = simulate_network(demands, work, replications=replications, seed=seed) if replications else None
    out = {
        "response_time_s": sol.response_time_s,
        "throughput_per_s": sol.throughput_per_s,
        "utilization": dict(sol.utilization),
        "queue_length": dict(sol.queue_length),
        "task_response_s": dict(sol.task_response_s),
        "estimate": sol.estimate.value,
        "formulation": sol.formulation.value,
        "bottleneck_s": sol.bottleneck_s,
        "phases": sol.phases,
        "iterations": sol.iterations,
        "converged": sol.converged,
        "busy_nodes": busy,
    }
    if simulated is not None:
        out["simulated_response_time_s"] = simulated.mean_s
        out["simulated_half_width_s"] = simulated.half_width_s
    if fmt == "json":
        click.echo(json.dumps([out], indent=1))
        return
    click.echo(f"response_time_s   {sol.response_time_s:.3f}")
    click.echo(f"throughput_per_s  {sol.throughput_per_s:.6g}")
    for dev, u in sol.utilization.items():
        click.echo(f"utilization.{dev:<8} {u:.4f}")
    for kind, r in sol.task_response_s.items():
        click.echo(f"task_response_s.{kind:<12} {r:.3f}")
    click.echo(f"phases {sol.phases}, iterations {sol.iterations}, converged {sol.converged}")
    if busy < nodes:
        click.echo(
            f"solved on the {busy:,} node(s) that hold a task; the other {nodes - busy:,} are idle "
            "(utilizations are the busy nodes')"
        )
    if simulated is not None:
        click.echo(
            f"simulated_response_time_s {simulated.mean_s:.3f} +- {simulated.half_width_s:.3f} "
            f"(95 %, {replications} replications)"
        )
