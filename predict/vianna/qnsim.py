"""The queuing network itself, simulated: the reference Vianna et al. 2013 validate their model against.

Section 5.1: "an event-driven queuing network simulator that reproduces the
dynamics of the execution of a job in terms of contention for resources and
synchronization constraints ... each device as a queuing center ... task
residence times at each center are exponentially distributed with averages
given by the measured service demands".  Where :mod:`predict.vianna.model`
approximates (mean residence times by aMVA, synchronization by the precedence
tree), this replays individual tasks:

* Centers: per node ``c`` CPUs and ``d`` disks (one FCFS queue each, served by
  any free unit), one fiber channel; one network for the cluster.  A visit
  holds one unit for its whole service, where the analytical model spreads a
  task's demand evenly over the node's units: alone, both take the demand.
* A task visits its centers in turn (CPU, fiber, disk, network), ``visits``
  times over, each visit an exponential service time of mean ``D_k /
  visits`` (the model's "tasks cycle back through the network many times";
  ``visits = 1`` is the paper's sentence read literally).
* Maps: ``pm`` threads per node take the next map when they free up (the
  master assigns a task to an idle thread, section 3).  Reduce ``rho`` runs on
  node ``rho mod n`` in slot order (``pr`` per node).  Each reduce keeps the
  finished maps' outputs in a queue; its ``ps`` shuffle threads take them in
  the order the maps finished, one shuffle-sort each, on the reduce's node,
  with network demand only when the map ran on another node (section 4.1).
  After its ``m`` shuffle-sorts the reduce's merge runs; the job ends with the
  last merge.

:func:`simulate_network` returns the mean job response time over seeded
replications with its confidence interval, the quantity of the paper's
Figure 7.
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from phaseline.errors import PredictionError
from predict.vianna.layout import TaskKind, Workload
from predict.vianna.model import DEVICES, Demands

__all__ = ["QNSimResult", "simulate_network"]

#: Center visits one call may simulate (about 10 minutes at ~3.5e5 visits/s): beyond, it is refused.
MAX_VISITS = 2e8
#: The order in which a task visits its centers within one cycle.
_VISIT_ORDER = ("cpu", "fiber", "disk", "network")
assert set(_VISIT_ORDER) == set(DEVICES)


@dataclass(frozen=True, slots=True)
class QNSimResult:
    """Job response times of the replications (seconds) and their summary."""

    response_times_s: np.ndarray
    confidence: float

    @property
    def mean_s(self) -> float:
        return float(self.response_times_s.mean())

    @property
    def half_width_s(self) -> float:
        """Half-width of the normal confidence interval of the mean."""
        from scipy import stats

        n = len(self.response_times_s)
        z = float(stats.norm.ppf((1 + self.confidence) / 2))
        return z * float(self.response_times_s.std(ddof=1)) / math.sqrt(n)


class _Center:
    """An FCFS queue served by ``servers`` identical units."""

    __slots__ = ("busy", "queue", "servers")

    def __init__(self, servers: int) -> None:
        self.servers = servers
        self.busy = 0
        self.queue: deque[Callable[[float], None]] = deque()  # visits waiting for a unit


class _Replay:
    """One replication: the event loop and the job's synchronization."""

    def __init__(self, demands: Demands, work: Workload, visits: int, rng: np.random.Generator) -> None:
        self.work = work
        self.visits = visits
        self.rng = rng
        self.events: list[tuple[float, int, Callable[[float], None]]] = []
        self.seq = 0
        n = work.nodes
        self.centers = {
            "cpu": [_Center(work.cpus) for _ in range(n)],
            "disk": [_Center(work.disks) for _ in range(n)],
            "fiber": [_Center(1) for _ in range(n)],
        }
        self.network = _Center(1)
        self.rows = {kind: demands.row(kind) for kind in TaskKind}
        self.local_network_to = demands.local_network_to
        # maps
        self.next_map = 0
        self.map_node: list[int] = [-1] * work.maps
        # reduces: map outputs waiting, shuffle threads free, shuffle-sorts done, started
        self.outputs: list[deque[int]] = [deque() for _ in range(work.reduces)]
        self.free_threads = [0] * work.reduces
        self.shuffled = [0] * work.reduces
        self.started = [False] * work.reduces
        self.maps_finished = 0  # the first reduces start when it reaches work.start_after_maps (slow-start)
        self.merges_left = work.reduces
        self.end = 0.0

    # ---------------------------------------------------------------- the event loop
    def at(self, time: float, action: Callable[[float], None]) -> None:
        self.seq += 1
        heapq.heappush(self.events, (time, self.seq, action))

    def run(self) -> float:
        w = self.work
        for node in range(w.nodes):
            for _ in range(min(w.pm, w.maps)):  # threads past the maps take none (pm = 10^11 had looped on)
                self._next_map(node, 0.0)
        if w.start_after_maps == 0:
            self._start_first_reduces(0.0)
        while self.events:
            time, _, action = heapq.heappop(self.events)
            action(time)
        if self.merges_left:
            raise PredictionError("the simulated job did not finish (a reduce never got all map outputs)")
        return self.end

    # ---------------------------------------------------------------- a task through its centers
    def _task(
        self, kind: TaskKind, node: int, remote: bool, start: float, done: Callable[[float], None]
    ) -> None:
        row = self.rows[kind]
        if not remote and (moved := self.local_network_to) is not None and row.get("network"):  # as solve does
            row = {**row, moved: row.get(moved, 0.0) + row["network"]}
        stops: list[tuple[_Center, float]] = []
        for device in _VISIT_ORDER:
            demand = row.get(device, 0.0)
            if demand <= 0 or (device == "network" and not remote):
                continue
            center = self.network if device == "network" else self.centers[device][node]
            stops.append((center, demand / self.visits))
        path = stops * self.visits
        if not path:
            self.at(start, done)
            return
        self._visit(path, 0, start, done)

    def _visit(
        self, path: list[tuple[_Center, float]], i: int, time: float, done: Callable[[float], None]
    ) -> None:
        center, mean = path[i]

        def served(t: float) -> None:
            center.busy -= 1
            if center.queue:
                center.queue.popleft()(t)
            if i + 1 < len(path):
                self._visit(path, i + 1, t, done)
            else:
                done(t)

        def begin(t: float) -> None:
            center.busy += 1
            self.at(t + self.rng.exponential(mean), served)

        if center.busy < center.servers:
            begin(time)
        else:
            center.queue.append(begin)

    # ---------------------------------------------------------------- maps
    def _next_map(self, node: int, time: float) -> None:
        if self.next_map >= self.work.maps:
            return
        i = self.next_map
        self.next_map += 1
        self.map_node[i] = node

        def finished(t: float) -> None:
            self.maps_finished += 1
            if self.maps_finished == self.work.start_after_maps:
                self._start_first_reduces(t)
            for rho in range(self.work.reduces):
                self.outputs[rho].append(i)
                self._shuffle(rho, t)
            self._next_map(node, t)

        self._task(TaskKind.MAP, node, False, time, finished)

    # ---------------------------------------------------------------- reduces
    def _reduce_node(self, rho: int) -> int:
        return rho % self.work.nodes

    def _start_first_reduces(self, time: float) -> None:
        """The first wave of reduces: at the start (the paper), or once the slow-start share of maps is done."""
        for slot in range(min(self.work.reduces, self.work.nodes * self.work.pr)):
            self._start_reduce(slot, time)

    def _start_reduce(self, rho: int, time: float) -> None:
        self.started[rho] = True
        self.free_threads[rho] = self.work.ps
        for _ in range(min(self.work.ps, self.work.maps)):  # one shuffle-sort per map: the rest stay idle
            self._shuffle(rho, time)

    def _shuffle(self, rho: int, time: float) -> None:
        if not self.started[rho] or not self.free_threads[rho] or not self.outputs[rho]:
            return
        i = self.outputs[rho].popleft()
        self.free_threads[rho] -= 1
        node = self._reduce_node(rho)

        def finished(t: float) -> None:
            self.free_threads[rho] += 1
            self.shuffled[rho] += 1
            if self.shuffled[rho] == self.work.maps:
                self._task(TaskKind.MERGE, node, False, t, lambda t2: self._merged(rho, t2))
            else:
                self._shuffle(rho, t)

        self._task(TaskKind.SHUFFLE_SORT, node, self.map_node[i] != node, time, finished)

    def _merged(self, rho: int, time: float) -> None:
        self.merges_left -= 1
        self.end = max(self.end, time)
        later = rho + self.work.nodes * self.work.pr  # the next reduce on this slot
        if later < self.work.reduces:
            self._start_reduce(later, time)


def simulate_network(
    demands: Demands,
    work: Workload,
    *,
    replications: int = 200,
    visits: int = 1,
    seed: int = 0,
    confidence: float = 0.95,
) -> QNSimResult:
    """Simulate one job (MPL 1) ``replications`` times; the same seed gives the same result.

    Parameters
    ----------
    demands
        Mean service demands per task kind and device (Table 2), seconds.
    work
        Nodes, CPUs, disks, maps, reduces and threads (Table 1); ``jobs`` must be 1.
    replications
        Independent replays (the paper averages 5,000).
    visits
        Cycles through the centers per task, each of ``1 / visits`` of the demand.
    seed
        Seed of the replications' random streams.
    confidence
        Confidence of :attr:`QNSimResult.half_width_s`.
    """
    if work.jobs != 1:
        raise PredictionError("the queuing network simulator runs one job at a time (MPL 1)")
    if work.network_per_node:
        raise PredictionError("the queuing network simulator has the paper's one shared network, not one per node")
    if work.reduces < 1:
        raise PredictionError("the simulated job needs at least one reduce")
    if replications < 2 or visits < 1 or not 0 < confidence < 1:
        raise PredictionError("need >= 2 replications, >= 1 visit and a confidence within (0, 1)")
    tasks = work.maps + work.reduces * (work.maps + 1)
    planned = tasks * len(_VISIT_ORDER) * visits * replications
    if planned > MAX_VISITS:
        raise PredictionError(
            f"simulating {tasks:,} tasks x {replications} replications x {visits} visit(s) is about "
            f"{planned:.1e} center visits (limit {MAX_VISITS:.0e}, ~10 minutes): use fewer replications or "
            "the analytical model (its class formulation answers such jobs in seconds)"
        )
    root = np.random.SeedSequence(seed)
    times = np.array(
        [_Replay(demands, work, visits, np.random.default_rng(s)).run() for s in root.spawn(replications)]
    )
    return QNSimResult(times, confidence)
