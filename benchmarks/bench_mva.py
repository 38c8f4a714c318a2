"""Solve time of the Vianna et al. 2013 model for m x r = 150 x 3, 1,000 x 100 and 10,000 x 1,000.

Demands are Table 2's (pm = 1, ps = 1) rows, with the shuffle-sort demands
scaled by 3 / r (a shuffle-sort moves one map's output for one of r reduces;
the paper had r = 3) and the merge by (m / 150) (3 / r) (a reduce merges its
share of all map output).  ``tree s`` is the precedence tree's estimate,
``bound s`` the bottleneck bound N D_max (the paper's single network center
binds for the large clusters).  The last line times the same 150 x 3 job
simulated task by task (:mod:`predict.vianna.qnsim`, the paper's section 5.1
reference), the analytical model's peer.  Run: ``python benchmarks/bench_mva.py``.
"""

from __future__ import annotations

import time

from predict.vianna.layout import Formulation, Workload
from predict.vianna.model import Demands, Estimate, solve
from predict.vianna.qnsim import simulate_network

SIM_REPLICATIONS = 100

TABLE2_MAP = {"cpu": 5.0764, "fiber": 0.0677, "disk": 3.1844, "network": 0.0}
TABLE2_SHUFFLE = {"cpu": 0.5217, "fiber": 0.0087, "disk": 0.4082, "network": 0.1850}
TABLE2_MERGE = {"cpu": 37.4983, "fiber": 1.2583, "disk": 59.2157, "network": 0.0}

CASES = (
    ("150 x 3", Workload(nodes=3, cpus=4, disks=1, maps=150, reduces=3, pm=1, pr=1, ps=1)),
    ("1,000 x 100", Workload(nodes=50, cpus=8, disks=2, maps=1000, reduces=100, pm=4, pr=2, ps=5)),
    ("10,000 x 1,000", Workload(nodes=200, cpus=16, disks=4, maps=10_000, reduces=1000, pm=8, pr=5, ps=5)),
)


def demands_for(work: Workload) -> Demands:
    s = 3.0 / work.reduces
    g = (work.maps / 150.0) * s
    return Demands(
        TABLE2_MAP,
        {k: v * s for k, v in TABLE2_SHUFFLE.items()},
        {k: v * g for k, v in TABLE2_MERGE.items()},
    )


def main() -> None:
    print(
        f"{'m x r':>16} {'formulation':>12} {'estimate':>9} {'classes':>8} {'C=m+r(m+1)':>12} "
        f"{'phases':>7} {'iter':>5} {'R_job s':>10} {'tree s':>10} {'bound s':>10} {'solve s':>8}"
    )
    for name, work in CASES:
        forms = [Formulation.CLASS] + ([Formulation.PER_TASK] if work.tasks <= 1000 else [])
        for form in forms:
            for est in Estimate:
                t0 = time.perf_counter()
                sol = solve(demands_for(work), work, estimate=est, formulation=form)
                dt = time.perf_counter() - t0
                print(
                    f"{name:>16} {form.value:>12} {est.value:>9} {sol.layout.size:>8} {work.tasks:>12} "
                    f"{sol.phases:>7} {sol.iterations:>5} {sol.response_time_s:>10.1f} {sol.tree_response_s:>10.1f} "
                    f"{sol.bottleneck_s:>10.1f} {dt:>8.2f}"
                )
    name, work = CASES[0]
    t0 = time.perf_counter()
    sim = simulate_network(demands_for(work), work, replications=SIM_REPLICATIONS, seed=1)
    dt = time.perf_counter() - t0
    print(
        f"queuing network simulated ({name}, {SIM_REPLICATIONS} replications): {dt:.2f} s, "
        f"R_job {sim.mean_s:.1f} +- {sim.half_width_s:.1f} s"
    )


if __name__ == "__main__":
    main()
