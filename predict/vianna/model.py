"""The hierarchical MapReduce model of Vianna et al. 2013 (Fig. 2b): precedence tree + approximate MVA.

Lower level: a closed queuing network with, per node, ``c`` CPUs, ``d`` disks
and one fiber channel, and one network shared by all nodes (section 4.1); a
task spreads its CPU (disk) demand evenly over its node's CPUs (disks).
Upper level: the precedence tree of the job's average timeline (section 4.2).
The same network simulated task by task, the paper's reference (section 5.1),
is :func:`predict.vianna.qnsim.simulate_network`.

The solver iterates (Fig. 2b): (1) every task's response time starts as the
sum of its demands (footnote 4); (2) the timeline and the precedence tree are
built from the current response times, and give the job response time
(section 4.3) and the intra-job overlaps ``alpha_ij``; (3) the inter-job
overlaps are ``beta_ij = R_j / R_job`` (a task of another job is running a
fraction R_j / R_job of the time); (4) the approximate MVA of eqs. 1, 5 and 6
gives new task response times; until no response time moves by more than
``epsilon = 1e-4`` (section 5.1), relative.

Outputs: the mean job response time, the throughput ``X = N / R_job`` (the
closed network has no think time), per-device utilizations ``U_k = X D_k``
(utilization law: Little's law at the server), per-device queue lengths
``Q_k = X sum_i R_ik`` (Little's law) and per-task-kind mean response times.

What cannot be reproduced together.  The paper finds its fork/join model
conservative and within 15 % of its simulation of this network (section
5.2.1, Fig. 7, n = 4), and reports Table 4 for the real setup (n = 3, m =
150).  Simulating the network on that real setup with Table 2's demands
(:func:`~predict.vianna.qnsim.simulate_network`, 200 replications) gives
577.8, 690.1, 507.6 and 632.2 s for (pm, ps) = (1, 1), (1, 5), (4, 1), (4, 5):
Table 4's fork/join column is +27 %, -4 %, -28 % and -44 % from it.  Table 4
follows the measured column, not the network, so a tree that lands within
10 % of Table 4 cannot also be conservative within 15 % of the simulated
network (tests/test_vianna_qnsim.py pins the gap).  phaseline's readings
follow Table 4; against the simulated network (Fig. 7's four scenarios) the
tree is 41-44 % low at m = 4, and between +25 % (pm = ps = 1) and -50 %
(pm = ps = 4) at m = 256.  The per-task
formulation also parts from the class one at (4, 5): 399.9 against 319.9 s,
because one of its three reduces, whose shuffle mix is more remote, ends the
last phase 9 % later and so is a second fork/join branch (k = 2).

Readings where the paper leaves room (each also stated in the tests; with
them the tree's estimate reproduces Table 4's fork/join column within 10 %
for three of the four cases and lands 10.2 % low on the fourth, (pm, ps) =
(4, 5), whose Table 2 demands the bottleneck bound puts at 518 s):

* P_A estimate, fork/join (section 4.3, item 2): "we consider the execution of
  a parallel phase as a fork-join block": ``H_k`` is applied once per
  parallel phase, at the phase's root P_A, with k the number of *different*
  branches -- threads that did identical work (same mean within
  :data:`SYMMETRY_RTOL`, tasks cut by synchronization points in the same
  places) are one branch, so Fig. 6(a)'s ``P_A(M1, M2^1)`` keeps k = 2 (one
  task ends at the synchronization point, the other is cut by it) while the
  symmetric map threads of a wave are one.  P_A nodes inside a phase give the
  largest mean of their children.  Applying ``H_k`` at every P_A node with k
  the thread count compounds the factor and overshoots Table 4 by 18-170 %.
* Tripathi (item 1) is applied at every P_A node, as Liang & Tripathi do
  (section 2.3: each internal node's distribution is fitted from its
  children's).  Folding an n-ary P_A pairwise, refitting at each binary node,
  changes Table 4's values by < 0.2 %, so the n-ary form is kept.  With the
  ps = 4 rows of Table 2 this estimate rises with ps at pm = 1 where the
  paper's falls (tests/test_vianna_paper.py says by how much and why).
* The end of the map stage (the last map finishes while reduces still run)
  ends a parallel phase, besides the blocked-reduce events of section 4.2.2.
* ``alpha_ij`` (section 2.3) is normalised by the job response time by
  default (:attr:`Overlap.JOB`); :attr:`Overlap.TASK` normalises by task i's
  own response time.
* The response time is never reported below the bottleneck bound ``N D_max``
  (Lazowska et al. 1984, ch. 5), so utilizations stay <= 1.  The paper has
  no such bound: its job response time is the tree's root estimate (section
  4.3), kept as :attr:`Solution.tree_response_s` and compared with Table 4.
  With :attr:`Overlap.JOB` on large clusters (thousands of overlapping
  tasks) the aMVA sees little contention and the bound is what is reported;
  the benchmark prints both.
* Demands are per (sub-)task (Table 2; section 4.1): a shuffle-sort moves one
  map's output for one reduce.  Table 2's ps = 4 shuffle-sort rows are ~4.9x
  the ps = 1 rows on disk, fiber and network for the same shuffled data, i.e.
  ~5 map outputs; Table 4 is reproduced with them taken per shuffle-sort, as
  the paper's estimates imply it did, but for predictions give per-map-output
  demands (those rows / 5).
* Section 4.3's average of the minimum for the shuffle start
  (:func:`~predict.vianna.estimates.mean_min_exponential`) is not applied to
  the timeline: pulling the first map of a lock-step wave forward splits the
  wave's thread group, which the class formulation keeps whole (open item).
"""

from __future__ import annotations

import csv
import enum
import io
import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from phaseline.errors import ConvergenceWarning, PredictionError
from predict.vianna.estimates import Moments, forkjoin_max, tripathi_max
from predict.vianna.layout import Formulation, JobLayout, TaskKind, Workload, build_layout
from predict.vianna.mva import overlap_amva
from predict.vianna.tree import Leaf, Node, Serial, Timeline, build_timeline, build_tree, serial_parts

__all__ = [
    "DEVICES",
    "EPSILON",
    "Demands",
    "Estimate",
    "Overlap",
    "Solution",
    "branch_count",
    "evaluate_tree",
    "overlap_weights",
    "read_demands",
    "solve",
]

#: Convergence threshold of the outer iteration (Vianna et al. 2013, section 5.1).
EPSILON = 1e-4
#: Outer iterations before giving up with a ConvergenceWarning.
MAX_ITERATIONS = 200
#: Outer iterations after which response-time updates are averaged (step 1/2, 1/3, ...).
DAMP_AFTER = 20
#: Jobs whose layout has more task classes than this are refused: the aMVA keeps C x C overlap
#: matrices (O(C^2 K) a sweep).  Measured at 2,001 classes: 10 s, 0.5 GB; at 3,001: 22 s, 1 GB.
#: The class formulation reaches it only for jobs of hundreds of waves (2,000 maps on 2 slots).
CLASS_LIMIT = 2_500
#: Branches whose means agree within this (relative) count as one fork/join branch.
SYMMETRY_RTOL = 0.01
#: Device types, in the order of the demand matrices.
DEVICES: tuple[str, ...] = ("cpu", "disk", "fiber", "network")


class Overlap(enum.StrEnum):
    """How the intra-job overlap ``alpha_ij`` of eq. 6 is normalised.

    ``TASK``: the fraction of task i's execution during which j runs (the
    chance j is active when i is; Liang & Tripathi's conditional reading).
    ``JOB``: the fraction of the job's response time during which both run
    (the chance they are active together at a random instant of the job).
    ``JOB`` reproduces Table 4 (and the measured column better); ``TASK``
    charges concurrent tasks the full contention of their overlap.
    """

    JOB = "job"
    TASK = "task"


class Estimate(enum.StrEnum):
    """How a P_A node's response time is estimated (section 4.3)."""

    FORKJOIN = "forkjoin"
    TRIPATHI = "tripathi"


@dataclass(frozen=True, slots=True)
class Demands:
    """Mean service demands (seconds) of one task of each kind on each device type (Table 2).

    ``network`` is the demand of a shuffle-sort whose map ran on another node.
    A local one has none (the paper); with ``local_network_to`` naming a device,
    a local shuffle-sort puts that demand on the device instead (a prediction
    whose shuffle time was measured as a whole, on one node: the same fetch
    costs its local copy there).  Only shuffle-sorts use the network (section
    4.1): a ``network`` entry in ``map`` or ``merge`` is priced nowhere
    (:func:`read_demands` refuses one).
    """

    map: Mapping[str, float]
    shuffle_sort: Mapping[str, float]
    merge: Mapping[str, float]
    local_network_to: str | None = None

    def __post_init__(self) -> None:
        for kind in TaskKind:
            row = self.row(kind)
            unknown = set(row) - set(DEVICES)
            if unknown:
                raise PredictionError(
                    f"unknown devices {sorted(unknown)} for {kind}; known: {', '.join(DEVICES)}"
                )
            bad = {k: v for k, v in row.items() if not (math.isfinite(v) and v >= 0)}
            if bad:
                raise PredictionError(f"{kind} demands must be finite and >= 0, got {bad}")
        if self.local_network_to is not None and self.local_network_to not in DEVICES[:-1]:
            raise PredictionError(
                f"local_network_to must be one of {', '.join(DEVICES[:-1])}, got {self.local_network_to!r}"
            )

    def row(self, kind: TaskKind) -> Mapping[str, float]:
        return {TaskKind.MAP: self.map, TaskKind.SHUFFLE_SORT: self.shuffle_sort, TaskKind.MERGE: self.merge}[
            kind
        ]

    def vector(self, kind: TaskKind) -> npt.NDArray[np.float64]:
        row = self.row(kind)
        return np.array([float(row.get(dev, 0.0)) for dev in DEVICES])


#: A task's demand on one device beyond this (31 years) is no measurement; past it the solution overflows.
MAX_DEMAND_S = 1e9


def read_demands(path: str | Path, *, map_only: bool = False) -> Demands:
    """Read a demand table like Vianna et al. 2013, Table 2: CSV ``task,<device>,...``, seconds.

    One row per task kind (``map``, ``shuffle_sort``, ``merge``); device
    columns among :data:`DEVICES`; a missing device column means zero demand.
    For a ``map_only`` job (no reduces) the ``map`` row is enough.

    A network demand on the ``map`` or ``merge`` row is refused: the model
    puts network demand on shuffle-sorts only, and only when their map ran on
    another node (section 4.1; section 5.1: "the network is used only by the
    shuffle-sort tasks"; Table 2's map and merge rows are 0), so such a demand
    was read and then priced nowhere, the answer the same as with 0.

    The file is UTF-8, with or without a byte order mark (as spreadsheets save
    CSV).  A demand is an ASCII decimal number (``0.5``, ``12``, ``1e-3``): a
    cell that Python's ``float`` alone would take but no spreadsheet writes
    (``1_0``, full-width or other non-ASCII digits, ``nan``, ``inf``) is
    refused, as are negative demands and demands past :data:`MAX_DEMAND_S`.
    """
    import re  # the demand cells' pattern: ASCII digits only (\d is any Unicode digit without re.ASCII)

    number = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
    where = Path(path)
    try:
        text = where.read_text(encoding="utf-8-sig")
    except OSError as exc:
        raise PredictionError(f"{where}: cannot read the demand table ({exc.strerror})") from exc
    except UnicodeDecodeError as exc:
        raise PredictionError(f"{where}: not a demand table (not UTF-8 text at byte {exc.start})") from None
    # csv over the text itself (not its lines): a quoted cell may hold a line break, and
    # reader.line_num is then the file's line, blank lines included
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        fields = [f.strip() for f in (reader.fieldnames or [])]
    except csv.Error as exc:
        raise PredictionError(f"{where}:{reader.reader.line_num}: not a well-formed CSV ({exc})") from None
    if not fields or fields[0] != "task":
        raise PredictionError(
            f"{where}:1: the header must start with 'task', then device columns ({', '.join(DEVICES)})"
        )
    unknown = [f for f in fields[1:] if f not in DEVICES]
    if unknown:
        raise PredictionError(f"{where}:1: unknown device columns {unknown}; use {', '.join(DEVICES)}")
    twice = sorted({f for f in fields if fields.count(f) > 1})
    if twice:
        raise PredictionError(f"{where}:1: columns {twice} appear twice")
    rows: dict[str, dict[str, float]] = {}
    try:
        for raw in reader:
            line = reader.line_num
            if None in raw:  # DictReader's key for cells beyond the header
                raise PredictionError(f"{where}:{line}: more cells than the header's {len(fields)} columns")
            if any(v is None for v in raw.values()):  # DictReader's value for cells the row does not reach
                raise PredictionError(
                    f"{where}:{line}: fewer cells than the header's {len(fields)} columns (an empty cell is 0 s)"
                )
            row = {(k or "").strip(): (v or "").strip() for k, v in raw.items()}
            task = row.get("task", "")
            if task not in {str(k) for k in TaskKind}:
                raise PredictionError(f"{where}:{line}: task {task!r} is not one of map, shuffle_sort, merge")
            if task in rows:
                raise PredictionError(f"{where}:{line}: task {task!r} appears twice")
            cells = {dev: row.get(dev, "") for dev in fields[1:]}
            odd = {dev: cell for dev, cell in cells.items() if cell and number.fullmatch(cell) is None}
            if odd:
                raise PredictionError(
                    f"{where}:{line}: demands must be numbers of seconds, in ASCII decimal digits (e.g. 0.25 or "
                    f"1e-3), got {odd}"
                )
            rows[task] = {dev: float(cell) if cell else 0.0 for dev, cell in cells.items()}
            bad = {dev: v for dev, v in rows[task].items() if not (math.isfinite(v) and 0 <= v <= MAX_DEMAND_S)}
            if bad:
                raise PredictionError(
                    f"{where}:{line}: {task} demands must be finite, >= 0 and <= {MAX_DEMAND_S:.0e} seconds, got {bad}"
                )
            if task != TaskKind.SHUFFLE_SORT and rows[task].get("network", 0.0) > 0:
                raise PredictionError(
                    f"{where}:{line}: {task} has a network demand ({rows[task]['network']:g} s), but only "
                    "shuffle-sorts use the network (Vianna et al. 2013, section 4.1; Table 2 gives maps and "
                    "merges none): leave it 0, or charge the transfer to the shuffle_sort row"
                )
    except csv.Error as exc:  # a cell past the csv module's size limit (DictReader's own line_num lags: its reader's)
        raise PredictionError(f"{where}:{reader.reader.line_num}: not a well-formed CSV ({exc})") from None
    if map_only:
        rows.setdefault(str(TaskKind.SHUFFLE_SORT), {})
        rows.setdefault(str(TaskKind.MERGE), {})
    missing = [str(k) for k in TaskKind if str(k) not in rows]
    if missing:
        raise PredictionError(f"{where}: no row for {', '.join(missing)}; give one row per task kind")
    return Demands(rows["map"], rows["shuffle_sort"], rows["merge"])


@dataclass(frozen=True, slots=True)
class Solution:
    """A solved model.

    ``task_response_s`` is the mean response time of one task of each kind;
    ``utilization``/``queue_length`` are per server of each device type,
    averaged over the cluster's servers of that type.  ``tree_response_s`` is
    the precedence tree's estimate and ``bottleneck_s`` the asymptotic bound
    ``N * D_max`` (the busiest server's demand per job times the MPL; Lazowska
    et al. 1984, ch. 5); ``response_time_s`` is the larger of the two, so the
    utilizations never exceed 1.
    """

    response_time_s: float
    throughput_per_s: float
    utilization: Mapping[str, float]
    queue_length: Mapping[str, float]
    task_response_s: Mapping[str, float]
    class_response_s: npt.NDArray[np.float64]
    layout: JobLayout
    timeline: Timeline
    tree: Node
    estimate: Estimate
    formulation: Formulation
    iterations: int
    converged: bool
    phases: int
    tree_response_s: float
    bottleneck_s: float


def _pieces(node: Node) -> tuple[bool, ...]:
    """Whether each leaf under ``node`` (in order) is a piece of a task cut by a synchronization point."""
    flags: list[bool] = []
    stack: list[Node] = [node]
    while stack:  # depth first, left to right, without a generator per level
        n = stack.pop()
        if isinstance(n, Leaf):
            flags.append(n.parts > 1)
        elif isinstance(n, Serial):
            stack.extend(reversed(n.children))
        else:
            stack.extend(c for c, _ in reversed(n.children))
    return tuple(flags)


def branch_count(children: list[tuple[Node, Moments]]) -> list[Moments]:
    """The fork/join branches of a phase: children that did identical work merged into one.

    Identical work: the same cut pieces (whole tasks or pieces of tasks cut by
    a synchronization point, in the same places) and means within
    :data:`SYMMETRY_RTOL`.  A thread whose task ends at the synchronization
    point and one whose task is cut by it are two branches (Fig. 6(a):
    ``P_A(M1, M2^1)`` has k = 2).  Returns one (the longest) per branch.
    """
    groups: list[tuple[tuple[bool, ...], Moments]] = []
    for node, moments in sorted(children, key=lambda nm: nm[1].mean):
        pieces = _pieces(node)
        for g, (gp, gm) in enumerate(groups):
            if gp == pieces and moments.mean - gm.mean <= SYMMETRY_RTOL * max(moments.mean, 1e-300):
                groups[g] = (gp, moments)
                break
        else:
            groups.append((pieces, moments))
    return [m for _, m in groups]


def evaluate_tree(node: Node, estimate: Estimate) -> Moments:
    """Mean and variance of a precedence tree's response time (section 4.3).

    Leaves are exponential with their duration as mean.  S sums.  P_A nodes:
    Tripathi's maximum at every node; fork/join once per parallel phase, at
    the phase's root P_A: ``H_k`` times its branches' largest mean, k the
    number of *different* branches (threads doing identical work are one
    branch), while P_A nodes inside the phase give their largest child mean
    (see the module docstring).
    """

    # Tripathi's integral depends on the children's moments only, and a tree of many waves
    # repeats the same P_A over and over (2,286 nodes, 79 distinct, at 50 GiB on 64 nodes).
    maxima: dict[tuple[tuple[Moments, int], ...], Moments] = {}

    def walk(n: Node, in_phase: bool) -> Moments:
        if isinstance(n, Leaf):
            return Moments.exponential(n.duration)
        if isinstance(n, Serial):
            # serial() of the parts, leaves (exponential: variance mean^2) read in place: most of a
            # tree is chains of leaves, and a Moments per leaf was half the walk (fsum is exact in any order)
            means: list[float] = []
            variances: list[float] = []
            for c in serial_parts(n):
                if isinstance(c, Leaf):
                    means.append(c.duration)
                    variances.append(c.duration * c.duration)
                else:
                    m = walk(c, in_phase)
                    means.append(m.mean)
                    variances.append(m.var)
            return Moments(math.fsum(means), math.fsum(variances))
        kids = [(walk(c, in_phase or n.phase), k) for c, k in n.children]
        if estimate is Estimate.TRIPATHI:
            key = tuple(kids)
            found = maxima.get(key)
            if found is None:
                found = maxima[key] = tripathi_max(kids)
            return found
        if n.phase or not in_phase:
            branches = branch_count([(c, m) for (c, _), (m, _) in zip(n.children, kids, strict=True)])
            return forkjoin_max([(m, 1) for m in branches])
        return max(kids, key=lambda mk: mk[0].mean)[0]

    return walk(node, False)


def _integral_tables(
    starts: npt.NDArray[np.float64], ends: npt.NDArray[np.float64], weight: npt.NDArray[np.float64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Breakpoints and cumulative integral of a sum of weighted boxes [start, end]."""
    times = np.concatenate([starts, ends])
    slope = np.concatenate([weight, -weight])
    order = np.argsort(times, kind="stable")
    times, slope = times[order], slope[order]
    level = np.cumsum(slope)  # running count just after each breakpoint
    area = np.concatenate([[0.0], np.cumsum(level[:-1] * np.diff(times))])
    return times, area


def overlap_weights(
    layout: JobLayout, timeline: Timeline
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """Class-j tasks of the same job running beside a class-i task, each weighted by its overlap.

    Returns ``(anywhere, same_node)``:
    ``anywhere[i, j] = (1 / n_i) sum_{a in i} sum_{b in j, b != a} |a cap b| / |a|`` -- the
    intra-job overlap factor ``alpha_ij`` of Liang & Tripathi summed over the
    class-j tasks (for the shared network) -- and ``same_node``, the same sum
    over the class-j tasks on the class-i task's node (for CPUs, disks and
    fiber).  Co-location comes from the threads' node shares, so lock-step
    tasks on one reduce thread are on one node while those of different
    reduces are not.  Computed with cumulative integrals of the number of
    running tasks per (class, thread group): O(classes x instances).
    """
    inst = timeline.instances
    size = layout.size
    owners = sorted({i.owner for i in inst})
    owner_index = {o: k for k, o in enumerate(owners)}
    profile = np.vstack([layout.owner_nodes[o] for o in owners])
    together = profile @ profile.T  # chance that tasks of two thread groups share a node
    cls = np.array([i.cls for i in inst])
    own = np.array([owner_index[i.owner] for i in inst])
    cnt = np.array([float(i.count) for i in inst])
    s = np.array([i.start for i in inst])
    e = np.array([i.end for i in inst])
    length = e - s
    live = length > 0
    anywhere = np.zeros((size, size))
    same_node = np.zeros((size, size))
    scale = np.where(live, cnt / np.where(live, length, 1.0), 0.0)
    # the live tasks of each (class, thread group), in timeline order: one stable sort, not a mask each
    live_at = np.flatnonzero(live)
    key = cls[live_at] * len(owners) + own[live_at]
    by_key = np.argsort(key, kind="stable")
    order = live_at[by_key]
    keys, first = np.unique(key[by_key], return_index=True)
    bounds = np.append(first, order.size)
    for g, pair in enumerate(keys.tolist()):
        j, o = divmod(pair, len(owners))
        sel = order[bounds[g] : bounds[g + 1]]
        times, area = _integral_tables(s[sel], e[sel], cnt[sel])
        # Only tasks that meet [times[0], times[-1]] get a share: for the others both ends read
        # the same end of the table and add exactly 0 (the order of the others' sums is kept).
        near = np.flatnonzero((e >= times[0]) & (s <= times[-1]))
        covered = scale[near] * (np.interp(e[near], times, area) - np.interp(s[near], times, area))
        np.add.at(anywhere[:, j], cls[near], covered)
        np.add.at(same_node[:, j], cls[near], covered * together[own[near], o])
    per_task = np.zeros(size)
    np.add.at(per_task, cls[live], cnt[live])
    out = []
    for weights in (anywhere, same_node):
        weights -= np.diag(per_task)  # a task does not run beside itself
        weights /= layout.counts[:, None]
        out.append(np.maximum(weights, 0.0))
    return out[0], out[1]


def _colocation(layout: JobLayout) -> npt.NDArray[np.float64]:
    """Class-j tasks of another job on a class-i task's node (jobs are placed alike)."""
    pn = layout.per_node
    return np.asarray((pn @ pn.T) / layout.counts[:, None])


def _too_many_classes(work: Workload, waves: int, classes: str, reduce_waves: int = 0) -> PredictionError:
    reduces = f" and {reduce_waves:,} reduce waves ({work.pr} reduce slot(s) a node)" if reduce_waves else ""
    return PredictionError(
        f"the job runs {waves:,} map waves on {work.nodes} node(s) of {work.pm} map slot(s){reduces}, which makes "
        f"{classes} task classes (limit {CLASS_LIMIT:,}, the aMVA is quadratic in them); give the cluster's real "
        "size (nodes, slots), or read the other models"
    )


@dataclass(slots=True)
class _Walked:
    """A timeline, its tree and (once asked) its overlap weights; none is changed once made."""

    timeline: Timeline
    tree: Node
    _weights: tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]] | None = None

    def weights(self, layout: JobLayout) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        if self._weights is None:
            self._weights = overlap_weights(layout, self.timeline)
        return self._weights


#: The first walk of the last job solved, by (workload, formulation, task means): every estimate
#: starts from the same means (the demands' sums), so a second estimate's solve of the job (the
#: registry's vianna_tripathi after vianna) finds its first timeline and tree walked.
_FIRST_WALK: dict[tuple[Workload, Formulation, bytes], _Walked] = {}


def _walk(means: npt.NDArray[np.float64], layout: JobLayout, work: Workload) -> _Walked:
    """The timeline of ``means`` and its precedence tree."""
    timeline = build_timeline(
        means.tolist(), layout.map_groups, layout.reduce_groups, work.ps, map_stage_sync=True,
        start_after_maps=work.start_after_maps,
    )
    return _Walked(timeline, build_tree(timeline))


def _first_walk(means: npt.NDArray[np.float64], layout: JobLayout, work: Workload, formulation: Formulation) -> _Walked:
    key = (work, formulation, means.tobytes())
    found = _FIRST_WALK.get(key)
    if found is None:
        _FIRST_WALK.clear()
        found = _FIRST_WALK[key] = _walk(means, layout, work)
    return found


def solve(
    demands: Demands,
    work: Workload,
    *,
    estimate: Estimate = Estimate.FORKJOIN,
    formulation: Formulation = Formulation.CLASS,
    overlap: Overlap = Overlap.JOB,
    epsilon: float = EPSILON,
) -> Solution:
    """Solve the model of Vianna et al. 2013 (Fig. 2b) for one job class at MPL ``work.jobs``.

    Raises
    ------
    PredictionError
        The job's layout has more than :data:`CLASS_LIMIT` task classes, or the
        inputs are inconsistent.
    """
    if formulation is Formulation.PER_TASK and work.tasks > CLASS_LIMIT:
        raise PredictionError(
            f"the per-task formulation has {work.tasks} classes (limit {CLASS_LIMIT}); use the class formulation"
        )
    waves = -(-work.maps // (work.nodes * work.pm))
    reduce_waves = -(-work.reduces // (work.nodes * work.pr))
    if formulation is Formulation.CLASS and waves + reduce_waves > CLASS_LIMIT:  # a class per wave, at least
        raise _too_many_classes(work, waves, f"over {waves + reduce_waves:,}", reduce_waves)
    layout = build_layout(work, formulation)
    if layout.size > CLASS_LIMIT:
        raise _too_many_classes(work, waves, f"{layout.size:,}")
    widths = np.array([work.cpus, work.disks, 1.0, 1.0])
    total = np.vstack([demands.vector(k) for k in layout.kinds])
    if demands.local_network_to is not None:  # a class's local share of the network demand, served locally
        total[:, DEVICES.index(demands.local_network_to)] += total[:, 3] * (1.0 - layout.remote)
    total[:, 3] *= layout.remote
    per_server = total / widths
    with_self = _colocation(layout)
    n_jobs = work.jobs
    node_local = np.array([True, True, True, work.network_per_node])  # per device: a node's own server(s)
    means = total.sum(axis=1)  # footnote 4
    if not np.any(means > 0):  # (a map-only job's map row of zeros had come out as 0 s and 0 jobs/s)
        raise PredictionError(
            "every task's service demand is 0 s: the job has no phase of positive, finite length to solve"
        )
    residence = per_server.copy()
    converged = False
    iterations = 0
    for iterations in range(1, MAX_ITERATIONS + 1):
        walked = _first_walk(means, layout, work, formulation) if iterations == 1 else _walk(means, layout, work)
        job = evaluate_tree(walked.tree, estimate).mean
        over, over_local = walked.weights(layout)
        if overlap is Overlap.JOB and job > 0:
            over, over_local = over * (means[:, None] / job), over_local * (means[:, None] / job)
        beta = means / job if job > 0 else np.zeros_like(means)  # inter-job overlap of one task
        w = np.empty((len(DEVICES), layout.size, layout.size))
        for k in range(len(DEVICES)):
            intra = over_local if node_local[k] else over
            inter = (with_self if node_local[k] else np.broadcast_to(layout.counts, over.shape)) * beta[
                None, :
            ]
            w[k] = intra + (n_jobs - 1) * inter
        sol = overlap_amva(per_server, widths, w, start=residence)
        residence = sol.residence
        # the tree is discrete: when it keeps flipping between shapes, average the updates
        step = 1.0 if iterations <= DAMP_AFTER else 1.0 / (iterations - DAMP_AFTER + 1)
        new = means + step * (sol.response - means)
        change = np.max(np.abs(new - means) / np.where(means > 0, means, 1.0))
        means = new
        if change < epsilon:
            converged = True
            break
    if not converged:
        warnings.warn(
            f"Vianna model: task response times still moved by {change:.2e} after {MAX_ITERATIONS} iterations",
            ConvergenceWarning,
            stacklevel=2,
        )
    walked = _walk(means, layout, work)
    timeline, tree = walked.timeline, walked.tree
    tree_job = evaluate_tree(tree, estimate).mean
    per_node = (layout.per_node.T @ per_server)[:, node_local]  # per node, the load on each of its devices
    bottleneck = n_jobs * float(np.max(per_node, initial=0.0))
    if not work.network_per_node:
        bottleneck = max(bottleneck, n_jobs * float(layout.counts @ total[:, 3]))
    job = max(tree_job, bottleneck)
    x = n_jobs / job if job > 0 else 0.0
    network_servers = work.nodes if work.network_per_node else 1
    servers = np.array([work.nodes * work.cpus, work.nodes * work.disks, work.nodes, network_servers], dtype=float)
    job_demand = layout.counts @ total  # per device type, all servers
    job_residence = layout.counts @ (residence * widths)
    kinds = np.array([str(k) for k in layout.kinds])
    task_response = {}
    for kind in TaskKind:
        sel = kinds == str(kind)
        if np.any(sel):
            task_response[str(kind)] = float(np.average(means[sel], weights=layout.counts[sel]))
    return Solution(
        response_time_s=job,
        throughput_per_s=x,
        utilization={dev: float(x * job_demand[k] / servers[k]) for k, dev in enumerate(DEVICES)},
        queue_length={dev: float(x * job_residence[k] / servers[k]) for k, dev in enumerate(DEVICES)},
        task_response_s=task_response,
        class_response_s=means,
        layout=layout,
        timeline=timeline,
        tree=tree,
        estimate=estimate,
        formulation=formulation,
        iterations=iterations,
        converged=converged,
        phases=len(timeline.sync_points) - 1,
        tree_response_s=tree_job,
        bottleneck_s=bottleneck,
    )
