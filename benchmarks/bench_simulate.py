"""Speed of the simulator, the critical path and the .jhist writer (prints figures).

Not a test.  Run ``python benchmarks/bench_simulate.py`` (``--help`` for options).

Figures (issue 9):

1. simulator events per second on one large replication (anchor: SimMR
   replays over 1 million events per second, Verma et al. 2011);
2. the same slot-scheduling loop with simpy processes, for the choice of a
   heap-based loop (``predict/simulate.py`` docstring);
3. the critical path (graph + longest path) of a 100,000-task job;
4. the ``.jhist`` writer on a simulated 100,000-task run (MB/s).

The machine is shared: figures are CPU seconds (``time.process_time``), the best
of ``--repeat`` runs; the load average is printed with them.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Generator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from predict.critical_path import JobShape, critical_path, job_graph
from predict.jhist_writer import write_jhist
from predict.simulate import SimJob, StageDist, simulate_once

T = TypeVar("T")

#: SimMR's replay speed (Verma et al. 2011), the anchor for figure 1.
SIMMR_EVENTS_PER_S = 1_000_000
#: The critical path of a 100,000-task job should take seconds, not minutes.
CRITICAL_PATH_TARGET_S = 10.0


def _best(fn: Callable[[], T], repeat: int) -> tuple[float, T]:
    """Best CPU time (``time.process_time``: on a shared machine, wall time mostly measures the queue)."""
    times, outs = [], []
    for _ in range(max(1, repeat)):
        t0 = time.process_time()
        outs.append(fn())
        times.append(time.process_time() - t0)
    return min(times), outs[-1]


def _job(maps: int, reduces: int) -> SimJob:
    return SimJob(
        map_means_ms=(20_000.0,) * maps,
        map_cv=0.3,
        n_reduces=reduces,
        first_shuffle=StageDist(5_000.0, 0.2),
        shuffle=StageDist(30_000.0, 0.3),
        reduce=StageDist(40_000.0, 0.3),
        nodes=100,
        map_slots_per_node=8,
        reduce_slots_per_node=4,
        failure_rate=0.01,
    )


def _simpy_events(tasks: int, slots: int) -> float | None:
    """Events/s of the same greedy slot loop written with simpy processes and a Resource (None: no simpy)."""
    try:
        import simpy
    except ImportError:
        return None

    env = simpy.Environment()
    res = simpy.Resource(env, slots)
    rng = random.Random(0)

    def task(env: simpy.Environment) -> Generator[Any, Any, None]:
        with res.request() as req:
            yield req
            yield env.timeout(rng.random())

    for _ in range(tasks):
        env.process(task(env))
    t0 = time.process_time()
    env.run()
    return tasks / (time.process_time() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--maps", type=int, default=100_000)
    ap.add_argument("--reduces", type=int, default=1_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    job = _job(args.maps, args.reduces)
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; times are CPU seconds")

    secs, run = _best(lambda: simulate_once(job, np.random.default_rng(1)), args.repeat)
    events = run.events
    rate = events / secs
    print(
        f"1. simulator: {args.maps:,} maps + {args.reduces:,} reduces on 800 slots: "
        f"{events:,} events in {secs:.3f} s = {rate:,.0f} events/s "
        f"({rate / SIMMR_EVENTS_PER_S:.2f}x SimMR's 1M events/s)"
    )

    simpy_rate = _simpy_events(min(args.maps, 20_000), 800)
    if simpy_rate is None:
        print("2. simpy is not installed: no comparison")
    else:
        print(
            f"2. simpy, same slot loop ({min(args.maps, 20_000):,} tasks): {simpy_rate:,.0f} events/s "
            f"(heap loop is {rate / simpy_rate:.0f}x faster)"
        )

    shape = JobShape(
        map_ms=tuple(20_000.0 + (i % 7) * 500 for i in range(args.maps)),
        first_shuffle_ms=5_000.0,
        shuffle_ms=30_000.0,
        reduce_ms=(40_000.0,) * args.reduces,
        map_slots=800,
        reduce_slots=400,
    )
    cp_secs, path = _best(lambda: critical_path(job_graph(shape)), args.repeat)
    n = args.maps + args.reduces
    print(
        f"3. critical path of a {n:,}-task job: {cp_secs:.2f} s "
        f"({len(path.nodes):,} nodes on the path, length {path.length_ms / 1000:,.0f} s)"
    )

    rec = simulate_once(job, np.random.default_rng(2), record=True)
    with tempfile.TemporaryDirectory() as tmp:
        w_secs, out = _best(
            lambda: write_jhist(rec, Path(tmp), n_maps=args.maps, n_reduces=args.reduces), args.repeat
        )
        size = out.stat().st_size
    print(
        f"4. .jhist writer: {len(rec.attempts):,} attempts, {size / 2**20:.1f} MiB in {w_secs:.2f} s "
        f"= {size / 2**20 / w_secs:.1f} MiB/s"
    )
    return 0 if cp_secs <= CRITICAL_PATH_TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
