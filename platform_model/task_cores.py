"""The cores a node's tasks got: measured from the platform's benchmark runs on a YARN cluster.

The models price CPU sharing by processor sharing (:mod:`predict.contention`; Kleinrock 1967, the
CPU centre of Vianna et al. 2013): ``n`` CPU-bound tasks on ``P`` cores each run ``max(1, n / P)``
times slower than alone.  ``P`` is what the tasks get, not what the node has: on the project's mini
YARN cluster the ResourceManager, the NodeManagers, the history server and the ApplicationMaster
run on the same two cores as the task containers.  There a benchmark run's first three maps took
5-9 s and its fourth, which ran nearly alone, 1.7-6 s, where two cores shared by three maps make
1.5x, not 3x (benchmarks/BACKTEST.md, "The cores a node's tasks got, measured").

:func:`fit_task_cores` measures ``P`` from the platform's own runs as the cluster's other
properties are (its phases, its slot handover): each map's duration ``d`` against the attempts
``c`` on its host while it ran (``attempt_concurrency.sql``), ``log d = log D_run + log max(1, c / P)``
by least squares over whole cores ``P``, as a queueing centre's servers are (each run its own
``D_run``, the map alone; runs whose maps all ran at one concurrency say nothing of ``P``).  On the
platform of 2026-12-02 05:00 UTC (10 usable runs, 40 maps) the squares are 0.63 at one core and 0.76
at two; a continuous ``P`` has its least at 1.46-1.50, where the data hardly tell one from two.
The simulation's replay of a run on the cluster the platform was measured on shares that many
cores a node among its maps, where fewer than the CPUs given (:func:`predict.measured_on.task_cores`;
benchmarks/BACKTEST.md, "Processor sharing in the simulation's replay": tried for every model that
prices CPU sharing, Vianna's CPU centre of one server priced the maps' and the reduces' work alike and
did worse, so the other models keep the node's CPUs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import duckdb
import numpy as np
import pandas as pd

from profiles import queries as q

__all__ = ["MIN_SPREAD", "TASK_CORES", "TaskCores", "fit_task_cores", "measured_task_cores"]

#: The platform model's ``cluster`` key of the measurement.
TASK_CORES = "task_cores"
#: A run whose maps' concurrency spans less than this (attempts) ran at one concurrency: it says
#: nothing of the cores.
MIN_SPREAD = 0.3


@dataclass(frozen=True, slots=True)
class TaskCores:
    """The measured cores (whole, at least 1) and the runs and maps they were measured on."""

    cores: int
    runs: int
    maps: int

    def to_json(self) -> dict[str, int]:
        return {"cores": self.cores, "runs": self.runs, "maps": self.maps}


def _sse(cores: float, runs: Sequence[tuple[np.ndarray, np.ndarray]]) -> float:
    total = 0.0
    for log_d, conc in runs:
        resid = log_d - np.log(np.maximum(1.0, conc / cores))
        total += float(((resid - resid.mean()) ** 2).sum())
    return total


#: One run's maps: their durations (ms) and concurrencies, as lists or arrays.
_RunMaps = tuple[Sequence[float] | np.ndarray, Sequence[float] | np.ndarray]


def fit_task_cores(runs: Sequence[_RunMaps]) -> TaskCores | None:
    """``P`` from the runs' (map durations ms, concurrencies), or ``None`` where no run's maps ran at
    different concurrencies (module docstring).

    >>> runs = [([6000.0, 6000.0, 6000.0, 2000.0], [3.0, 3.0, 3.0, 1.0])]
    >>> fit_task_cores(runs).cores  # three at once, three times as long: one core between them
    1
    """
    usable = []
    for durations, concurrency in runs:
        d, c = np.asarray(durations, dtype=float), np.asarray(concurrency, dtype=float)
        keep = np.isfinite(d) & np.isfinite(c) & (d > 0) & (c > 0)
        d, c = d[keep], c[keep]
        if len(d) >= 2 and float(c.max() - c.min()) >= MIN_SPREAD:
            usable.append((np.log(d), c))
    if not usable:
        return None
    peak = max(float(c.max()) for _, c in usable)
    # whole cores, each by its least squares (below the least concurrency every P fits alike: a task gets
    # at least a core, as far as the maps can tell)
    cores = min(range(1, max(1, math.ceil(peak)) + 1), key=lambda p: _sse(float(p), usable))
    return TaskCores(cores, len(usable), sum(len(d) for d, _ in usable))


def measured_task_cores(con: duckdb.DuckDBPyConnection, job_ids: Sequence[str]) -> TaskCores | None:
    """:func:`fit_task_cores` over the successful maps of ``job_ids`` in the store."""
    runs = []
    for job_id in job_ids:
        df = q.attempt_concurrency(con, job_id)
        maps = df[(df["task_type"] == "MAP") & (df["status"] == "SUCCEEDED")]
        durations = pd.to_numeric(maps["finish_ms"] - maps["start_ms"], errors="coerce")
        concurrency = pd.to_numeric(maps["concurrency"], errors="coerce")
        runs.append((durations.to_numpy(dtype=float), concurrency.to_numpy(dtype=float)))
    return fit_task_cores(runs)
